#!/usr/bin/env python3
"""End-to-end suites for Gantry's admin features against a real control plane.

    admin_test.py record GANTRY    pending pods on fake nodes (one tainted) plus DRA objects;
                                   `gantry record` writes .pb and .yaml snapshots holding every
                                   kind (and no env value, command line or unread annotation);
                                   `gantry simulate` on both gives the same placements;
                                   then live Gantry schedules the same state and its bindings
                                   must equal the offline placements
    admin_test.py explain GANTRY   live Gantry with its gRPC admin service: `gantry explain --server`
                                   says why pods are pending (DRA: too few devices; taint; a gang
                                   that does not fit in any rack), `gantry whatif --server` places a
                                   gang that fits and one that does not, and nothing in the cluster
                                   changes; bad requests get NOT_FOUND / INVALID_ARGUMENT

GANTRY is the gantry binary.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gantry_e2e import log, run  # noqa: E402

NS = "adm"
SCHED = "gantry-scheduler"


class Proc:
    """A child process whose output is collected (for live Gantry)."""

    def __init__(self, args):
        self.lines = []
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def dump(self, n=60):
        return "\n".join(self.lines[-n:])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.thread.join(timeout=5)
        return self.proc.returncode


def gantry_cmd(gantry, *args, check=True):
    r = subprocess.run([gantry, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    log(f"$ gantry {' '.join(args)} -> {r.returncode}\n{r.stdout.rstrip()}")
    if check and r.returncode != 0:
        raise AssertionError(f"gantry {' '.join(args)} exited {r.returncode}")
    return r


SECRET_ENV = "ghp_e2eS3cr3tTokenValue0123456789"
SECRET_COMMAND = "/opt/e2e/run-with-password.sh"
SECRET_ANNOTATION = "owner-alice-e2e@example.com"


def build_cluster(c):
    """Nodes of very different sizes (so scores never tie), a tainted node, DRA objects."""
    c.create_namespace(NS)
    c.create_node("small", cpu="2", memory="8Gi")
    c.create_node("medium", cpu="8", memory="32Gi")
    c.create_node("large", cpu="32", memory="128Gi", labels={"example.com/rack": "r1"})
    c.post("/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "tainted", "labels": {"kubernetes.io/hostname": "tainted"}},
        "spec": {"taints": [{"key": "dedicated", "value": "infer", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                   "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}})
    c.post("/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    c.post("/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "large-gpus"},
        "spec": {"driver": "gpu.example.com", "nodeName": "large",
                 "pool": {"name": "large", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "H100"}}}]}})
    # Pending pods, created in name order (the queue's arrival order equals the list order).
    for i in range(6):
        c.create_pod(NS, f"p{i}", scheduler_name=SCHED, cpu=["1", "500m", "2", "1500m", "3", "250m"][i],
                     memory="1Gi")
    c.create_pod(NS, "p6-tolerant", scheduler_name=SCHED, cpu="4", memory="2Gi",
                 extra_spec={"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "infer",
                                              "effect": "NoSchedule"}],
                             "nodeSelector": {"kubernetes.io/hostname": "tainted"}})
    c.create_pod(NS, "p7-too-big", scheduler_name=SCHED, cpu="100", memory="1Gi")
    c.create_pod(NS, "other-scheduler", scheduler_name="default-scheduler")
    # Env values, command lines and unread annotations never reach a snapshot (left to
    # kube-scheduler, so the placements above are unchanged).
    c.post(f"/api/v1/namespaces/{NS}/pods", {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "with-secrets", "annotations": {"example.com/owner": SECRET_ANNOTATION}},
        "spec": {"schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                 "command": [SECRET_COMMAND], "args": ["--password=hunter2"],
                                 "env": [{"name": "TOKEN", "value": SECRET_ENV}],
                                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}})


def simulate(gantry, cluster, workdir, tag):
    report = os.path.join(workdir, f"report-{tag}.json")
    gantry_cmd(gantry, "simulate", "--cluster", cluster, "--seed", "1", "--report", report)
    with open(report) as f:
        return json.load(f)


def test_record(cp, gantry):
    c = cp.client
    build_cluster(c)
    work = tempfile.mkdtemp(prefix="gantry-admin-e2e-")
    pb = os.path.join(work, "cluster.pb")
    yaml = os.path.join(work, "cluster.yaml")
    out = gantry_cmd(gantry, "record", "--kubeconfig", cp.kubeconfig, "-o", pb).stdout
    for want in ("v1 Node", "v1 Pod", "resource.k8s.io/v1 DeviceClass", "resource.k8s.io/v1 ResourceSlice",
                 "v1 Namespace"):
        assert want in out, f"record output lacks {want}"
    gantry_cmd(gantry, "record", "--kubeconfig", cp.kubeconfig, "-o", yaml)
    with open(yaml) as f:
        text = f.read()
    assert "managedFields" not in text, "managedFields must be dropped"
    assert "name: with-secrets" in text, text[:2000]
    with open(pb, "rb") as f:
        pb_bytes = f.read()
    for secret in (SECRET_ENV, SECRET_COMMAND, SECRET_ANNOTATION, "hunter2"):
        assert secret not in text, f"the YAML snapshot holds {secret}"
        assert secret.encode() not in pb_bytes, f"the .pb snapshot holds {secret}"
    assert "name: p6-tolerant" in text and "kind: ResourceSlice" in text, text[:2000]
    bad = gantry_cmd(gantry, "record", "--kubeconfig", cp.kubeconfig, "-o", os.path.join(work, "x.txt"),
                     check=False)
    assert bad.returncode == 2 and "unknown snapshot format" in bad.stdout, bad.stdout

    offline = simulate(gantry, pb, work, "pb")
    offline_yaml = simulate(gantry, yaml, work, "yaml")
    assert offline["placements"] == offline_yaml["placements"], (offline["placements"], offline_yaml["placements"])
    placements = offline["placements"]
    log(f"offline placements: {placements}")
    assert placements.get(f"{NS}/p6-tolerant") == "tainted", placements
    assert f"{NS}/p7-too-big" not in placements
    assert f"{NS}/other-scheduler" not in placements
    assert len(placements) == 7, placements

    # Live Gantry on the same state: its bindings must match the replay.
    live = Proc([gantry, "--kubeconfig", cp.kubeconfig, "--leader-elect=false", "--secure-port=0"])
    try:
        def bound():
            pods = c.get(f"/api/v1/namespaces/{NS}/pods")["items"]
            got = {f"{NS}/{p['metadata']['name']}": p["spec"].get("nodeName") for p in pods}
            return got if all(got.get(k) for k in placements) else None
        got = c.wait("live bindings", bound, timeout=60)
    except BaseException:
        log(live.dump())
        raise
    finally:
        live.stop()
    live_placements = {k: v for k, v in got.items() if v}
    assert live_placements == placements, f"live {live_placements} != offline {placements}"
    log(f"live bindings equal the offline replay for {len(placements)} pods")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_pending(c):
    """Three pods pending for three reasons, and room for what-if."""
    c.create_namespace(NS)
    c.create_node("cpu-a", cpu="4", memory="16Gi", labels={"example.com/rack": "r1"})
    c.create_node("cpu-b", cpu="4", memory="16Gi", labels={"example.com/rack": "r2"})
    c.post("/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-node", "labels": {"kubernetes.io/hostname": "gpu-node", "example.com/rack": "r3"}},
        "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                   "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}})
    c.post("/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    c.post("/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpu-node-gpus"},
        "spec": {"driver": "gpu.example.com", "nodeName": "gpu-node",
                 "pool": {"name": "gpu-node", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "H100"}}}]}})
    # DRA: two GPUs wanted, the cluster has one (and the pod tolerates the taint).
    c.post(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "two-gpus"},
        "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
            "deviceClassName": "gpu.example.com", "count": 2}}]}}})
    tolerate = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    c.create_pod(NS, "dra-pod", scheduler_name=SCHED, cpu="100m", memory="64Mi",
                 extra_spec={"tolerations": tolerate, "resourceClaims": [{"name": "gpus", "resourceClaimName": "two-gpus"}]})
    # Taint: only the tainted node has room for 6 CPUs.
    c.create_pod(NS, "taint-pod", scheduler_name=SCHED, cpu="6", memory="1Gi")
    # Gang: three members of 3 CPUs that must share one rack (each rack holds one).
    c.post(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups", {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "gang"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}},
                 "schedulingConstraints": {"topology": [{"key": "example.com/rack"}]}}})
    for i in range(3):
        c.create_pod(NS, f"gang-{i}", scheduler_name=SCHED, cpu="3", memory="1Gi",
                     extra_spec={"schedulingGroup": {"podGroupName": "gang"}})


def whatif_gang(name, members, cpu):
    docs = [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name, "namespace": NS},
             "spec": {"schedulingPolicy": {"gang": {"minCount": members}}}}]
    for i in range(members):
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{name}-{i}", "namespace": NS},
                     "spec": {"schedulerName": SCHED, "schedulingGroup": {"podGroupName": name},
                              "containers": [{"name": "c", "image": "x",
                                              "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}})
    return "\n---\n".join(json.dumps(d) for d in docs) + "\n"


def cluster_state(c):
    """What what-if must not change: the pods and where they run, claim allocations, PodGroups."""
    pods = {p["metadata"]["name"]: p["spec"].get("nodeName")
            for p in c.get(f"/api/v1/namespaces/{NS}/pods")["items"]}
    claims = {o["metadata"]["name"]: (json.dumps(o.get("status", {}).get("allocation"), sort_keys=True),
                                      len(o.get("status", {}).get("reservedFor", [])))
              for o in c.get(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims")["items"]}
    groups = sorted(o["metadata"]["name"]
                    for o in c.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups")["items"])
    return {"pods": pods, "claims": claims, "podgroups": groups}


def explain_json(gantry, addr, *target):
    r = gantry_cmd(gantry, "explain", *target, "-n", NS, "--server", addr, "--json")
    return json.loads(r.stdout)


def test_explain(cp, gantry):
    c = cp.client
    build_pending(c)
    port = free_port()
    addr = f"127.0.0.1:{port}"
    live = Proc([gantry, "--kubeconfig", cp.kubeconfig, "--leader-elect=false", "--secure-port=0",
                 f"--admin-address={addr}"])
    work = tempfile.mkdtemp(prefix="gantry-admin-e2e-")
    try:
        def failed(name):
            p = c.get(f"/api/v1/namespaces/{NS}/pods/{name}")
            conds = [x for x in p["status"].get("conditions", []) if x["type"] == "PodScheduled"]
            return conds and conds[0]["status"] == "False"
        for name in ("dra-pod", "taint-pod", "gang-0", "gang-1", "gang-2"):
            c.wait(f"{name} unschedulable", lambda n=name: failed(n), timeout=60)

        # DRA: DynamicResources says how many devices match, per request.
        dra = explain_json(gantry, addr, "dra-pod")
        assert dra["recorded"] is True, dra
        groups = dra["last_attempt"]["filtered"]
        dyn = [g for g in groups if g["plugin"] == "DynamicResources"]
        assert any("2 devices wanted, 1 free match" in g["reason"] and g["nodes"] == ["gpu-node"] for g in dyn), groups
        assert dra["devices"]["requests"][0]["count"] == "2", dra["devices"]
        # Taint: the tainted node is filtered by TaintToleration, the others by NodeResourcesFit.
        taint = explain_json(gantry, addr, "pod/taint-pod")
        by_plugin = {g["plugin"]: g for g in taint["last_attempt"]["filtered"]}
        assert by_plugin["TaintToleration"]["nodes"] == ["gpu-node"], by_plugin
        assert by_plugin["NodeResourcesFit"]["node_count"] == 2, by_plugin
        text = gantry_cmd(gantry, "explain", "taint-pod", "-n", NS, "--server", addr).stdout
        assert "Nodes filtered out" in text and "TaintToleration" in text, text
        # Gang: every rack was tried and holds one member; the quorum is three.
        gang = explain_json(gantry, addr, "podgroup/gang")
        g = gang["group"]
        assert g["recorded"] and not g.get("scheduled", False), g
        assert g["min_count"] == 3, g
        assert len(g["domains"]) >= 1 and all(d.get("placed", 0) <= 1 for d in g["domains"]), g["domains"]
        assert len(g["members"]) == 3, g
        text = gantry_cmd(gantry, "explain", "podgroup/gang", "-n", NS, "--server", addr).stdout
        assert "Domains tried" in text, text

        # Errors get clear status codes.
        r = gantry_cmd(gantry, "explain", "nope", "-n", NS, "--server", addr, check=False)
        assert r.returncode == 1 and "NOT_FOUND" in r.stdout, r.stdout
        r = gantry_cmd(gantry, "explain", "Bad_Name", "-n", NS, "--server", addr, check=False)
        assert r.returncode == 2 and "INVALID_ARGUMENT" in r.stdout, r.stdout

        # What-if: a gang that fits, one that does not; nothing in the cluster changes.
        before = cluster_state(c)
        fits = os.path.join(work, "fits.yaml")
        with open(fits, "w") as f:
            f.write(whatif_gang("wi-fits", 2, "1"))
        res = json.loads(gantry_cmd(gantry, "whatif", "-f", fits, "--server", addr, "--json").stdout)
        assert res["groups"][0]["scheduled"] is True and res["scheduled"] == 2, res
        assert all(p.get("node") for p in res["placements"]), res
        big = os.path.join(work, "big.yaml")
        with open(big, "w") as f:
            f.write(whatif_gang("wi-big", 3, "4"))
        res = json.loads(gantry_cmd(gantry, "whatif", "-f", big, "--server", addr, "--json").stdout)
        assert not res["groups"][0].get("scheduled", False) and res.get("scheduled", 0) == 0, res
        assert "minCount 3" in res["groups"][0]["message"], res
        text = gantry_cmd(gantry, "whatif", "-f", big, "--server", addr).stdout
        assert "do not" in text, text
        bad = os.path.join(work, "bad.yaml")
        with open(bad, "w") as f:
            f.write("apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: adm}\nspec:\n  priority: high\n")
        r = gantry_cmd(gantry, "whatif", "-f", bad, "--server", addr, check=False)
        assert r.returncode == 2 and "INVALID_ARGUMENT" in r.stdout and "bad.yaml:5:" in r.stdout, r.stdout
        time.sleep(1)
        after = cluster_state(c)
        assert after == before, f"what-if changed the cluster: {before} -> {after}"
        pods = {p["metadata"]["name"] for p in c.get(f"/api/v1/namespaces/{NS}/pods")["items"]}
        assert not any(n.startswith("wi-") for n in pods), pods
        log("explain and what-if answered from the live scheduler; the cluster is unchanged")
    except BaseException:
        log(live.dump())
        raise
    finally:
        rc = live.stop()
    assert rc == 0, f"gantry exited {rc}\n{live.dump()}"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("record", "explain"):
        sys.exit(__doc__)
    gantry = os.path.abspath(sys.argv[2])
    suite = sys.argv[1]
    if suite == "record":
        run(lambda cp: test_record(cp, gantry), components=["etcd", "kube-apiserver"])
    elif suite == "explain":
        run(lambda cp: test_explain(cp, gantry), components=["etcd", "kube-apiserver"])


if __name__ == "__main__":
    main()
