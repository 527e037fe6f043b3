#!/usr/bin/env python3
"""End-to-end suites for Gantry's admin features against a real control plane.

    admin_test.py record GANTRY    pending pods on fake nodes (one tainted) plus DRA objects;
                                   `gantry record` writes .pb and .yaml snapshots holding every
                                   kind; `gantry simulate` on both gives the same placements;
                                   then live Gantry schedules the same state and its bindings
                                   must equal the offline placements

GANTRY is the gantry binary.
"""

import json
import os
import signal
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


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("record",):
        sys.exit(__doc__)
    gantry = os.path.abspath(sys.argv[2])
    suite = sys.argv[1]
    if suite == "record":
        run(lambda cp: test_record(cp, gantry), components=["etcd", "kube-apiserver"])


if __name__ == "__main__":
    main()
