#!/usr/bin/env python3
"""Runs kube-scheduler's own e2e scheduling tests (e2e.test of Kubernetes v1.37.2) against one
scheduler on a fresh loopback control plane, with kwok playing the kubelet of every node.

    run.py run --scheduler upstream|gantry --out DIR [--gantry-bin PATH] [--nodes N]
               [--focus REGEX]      (one regular expression instead of focus.txt: debugging)
    run.py list --out DIR           the tests the focus and skip list select (no cluster needed)

report.py compares two `run` result dirs; run.sh does both runs and the report.

`run` does, in order:
  1. starts etcd + kube-apiserver + kube-controller-manager (test/e2e/controlplane.sh through
     test/e2e/gantry_e2e.py's ControlPlane, in a temp dir on free ports), plus upstream
     kube-scheduler v1.37.2 when --scheduler=upstream; kube-controller-manager runs the
     controllers these tests need (workload, quota, volume binding; not node-lifecycle);
  2. starts kwok (config: kwok.yaml + kwok's released default stages from the module cache, with
     kwok-pod-delete.yaml instead of the default pod-delete stage);
  3. creates --nodes fake Nodes (4 CPUs, 16 GiB, 110 pods, two zones) and waits for kwok to
     make them Ready;
  4. for --scheduler=gantry: creates deploy/'s ServiceAccount and RBAC, copies the gantry
     binary to a temp dir and starts it with gantry-config.yaml (profile `default-scheduler`)
     and a token of that ServiceAccount;
  5. runs e2e.test with the focus of focus.txt and the skips of skip.txt, writing
     DIR/report.json (Ginkgo JSON), DIR/junit.xml, DIR/e2e.log; then DIR/summary.json;
  6. copies the component logs to DIR/logs and tears everything down.

Exit code: 0 when the suite ran (whatever the test results; see summary.json), 1 when it could
not run (cluster, kwok or scheduler failed to start), 3 when binaries are missing.

Binaries: e2e.test and kwok from $GANTRY_UPSTREAM_E2E_BIN or
$GANTRY_CACHE/upstream-e2e/current/bin (test/upstream-e2e/build.sh); control plane as the other
e2e suites find it.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "test", "e2e"))
import gantry_e2e  # noqa: E402  (the repo's e2e harness)
from gantry_e2e import ControlPlane, GantryProcess, cache_dir, log  # noqa: E402
import gantry_test  # noqa: E402  (applies deploy/'s ServiceAccount and RBAC, as the e2e suites do)

K8S_VERSION = "v1.37.2"
KWOK_VERSION = "v0.8.0"
# kwok's released default stages (what kwokctl installs), read from the module cache at run time,
# except pod/fast/pod-delete.yaml: kwok-pod-delete.yaml replaces it (preStop hooks delay deletion).
KWOK_STAGES = ("node/fast/node-initialize.yaml",
               "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
               "pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml")

# kube-controller-manager: the run's default controllers plus what the selected tests rely on
# (ReplicaSets / ReplicationControllers / Deployments, ResourceQuota status, PV/PVC binding and
# protection, generic ephemeral volumes, DaemonSets, Jobs, PodDisruptionBudgets, Services'
# EndpointSlices, pod GC of pods on deleted nodes, NoExecute taint eviction). Deliberately not
# node-lifecycle-controller (kwok keeps nodes healthy; nothing else should taint them).
KCM_CONTROLLERS = ",".join([
    "resourceclaim-controller", "garbage-collector-controller", "namespace-controller",
    "serviceaccount-controller", "root-ca-certificate-publisher-controller",
    "clusterrole-aggregation-controller", "podgroup-protection-controller",
    "replicaset-controller", "replicationcontroller-controller", "deployment-controller",
    "daemonset-controller", "job-controller", "disruption-controller",
    "resourcequota-controller", "persistentvolume-binder-controller",
    "persistentvolume-protection-controller", "persistentvolumeclaim-protection-controller",
    "ephemeral-volume-controller", "endpointslice-controller", "endpoints-controller",
    "pod-garbage-collector-controller", "taint-eviction-controller", "ttl-controller",
])


def machine():
    """nproc, memory, CPU model and load: the numbers depend on the machine."""
    info = {"cpus": os.cpu_count(), "load_at_start": os.getloadavg()[0]}
    try:
        with open("/proc/meminfo") as f:
            info["mem_gib"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
        with open("/proc/cpuinfo") as f:
            info["cpu_model"] = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return info


def upstream_e2e_bin():
    return os.environ.get("GANTRY_UPSTREAM_E2E_BIN") or os.path.join(
        cache_dir(), "upstream-e2e", "current", "bin")


def gomodcache():
    return os.environ.get("GOMODCACHE") or os.path.join(cache_dir(), "gomod")


def read_focus():
    """focus.txt: one regular expression per line (# comments); joined with |."""
    pats = []
    with open(os.path.join(HERE, "focus.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                pats.append(line)
    return pats


def read_skips():
    """skip.txt: `<regex> | <reason>` per line (# comments). Every entry must have a reason."""
    out = []
    with open(os.path.join(HERE, "skip.txt")) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            pat, sep, reason = s.partition(" | ")
            if not sep or not pat.strip() or not reason.strip():
                sys.exit(f"skip.txt:{n}: expected '<regex> | <reason>', got: {s}")
            re.compile(pat.strip())
            out.append((pat.strip(), reason.strip()))
    return out


def feature_gates():
    """The control plane's gate list (controlplane.sh DEFAULT_GATES, or GANTRY_FEATURE_GATES):
    the schedulers get the same gates as the API server, as controlplane.sh gives kube-scheduler."""
    if os.environ.get("GANTRY_FEATURE_GATES"):
        return os.environ["GANTRY_FEATURE_GATES"]
    text = open(os.path.join(REPO, "test", "e2e", "controlplane.sh")).read()
    parts = re.findall(r'^DEFAULT_GATES\+?="([^"]*)"', text, re.M)
    return "".join(parts)


def e2e_args(kubeconfig, out, focus, skips, extra=()):
    return [
        f"--kubeconfig={kubeconfig}",
        "--provider=skeleton",
        f"--report-dir={out}",
        "--ginkgo.focus=" + "|".join(f"(?:{p})" for p in focus),
        "--ginkgo.skip=" + "|".join(f"(?:{p})" for p in skips),
        f"--ginkgo.json-report={os.path.join(out, 'report.json')}",
        f"--ginkgo.junit-report={os.path.join(out, 'junit.xml')}",
        "--ginkgo.timeout=4h",
        "--ginkgo.no-color",
        "--ginkgo.v",
        "--e2e-output-dir=" + out,
        "--allowed-not-ready-nodes=0",
        "--minStartupPods=0",
        "--disable-log-dump",
        *extra,
    ]


def create_nodes(client, n):
    """Plain Node objects (no status conditions: kwok's node-initialize stage makes them Ready)."""
    names = []
    for i in range(n):
        name = f"kwok-node-{i}"
        zone = "zone-a" if i % 2 == 0 else "zone-b"
        res = {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}
        client.post("/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", "topology.kubernetes.io/zone": zone,
                "topology.kubernetes.io/region": "region-1", "type": "kwok"}},
            "status": {"capacity": res, "allocatable": res},
        })
        names.append(name)

    def all_ready():
        items = client.get("/api/v1/nodes")["items"]
        ready = [x["metadata"]["name"] for x in items
                 if any(c["type"] == "Ready" and c["status"] == "True"
                        for c in x.get("status", {}).get("conditions", []))]
        return len(ready) >= n
    client.wait("kwok to make the nodes Ready", all_ready, timeout=60, interval=0.5)
    return names


class Kwok:
    def __init__(self, binary, kubeconfig, workdir, log_path):
        stages_dir = os.path.join(gomodcache(), f"sigs.k8s.io/kwok@{KWOK_VERSION}", "kustomize", "stage")
        docs = [open(os.path.join(HERE, "kwok.yaml")).read()]
        for s in KWOK_STAGES:
            p = os.path.join(stages_dir, s)
            if not os.path.exists(p):
                raise SystemExit(f"kwok stage {p} missing (run test/upstream-e2e/build.sh)")
            docs.append(open(p).read())
        docs.append(open(os.path.join(HERE, "kwok-pod-delete.yaml")).read())
        self.config = os.path.join(workdir, "kwok-config.yaml")
        with open(self.config, "w") as f:
            f.write("\n---\n".join(d.strip() + "\n" for d in docs))
        self.log = open(log_path, "a")
        # HOME points at the work dir so kwok does not pick up ~/.kwok/kwok.yaml.
        env = dict(os.environ, HOME=workdir)
        self.proc = subprocess.Popen(
            [binary, f"--kubeconfig={kubeconfig}", f"--config={self.config}", "--manage-all-nodes=true"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def summarize(report_path, skips):
    """Counts from a Ginkgo JSON report: the specs that matched the focus are either `listed`
    (matched a skip.txt entry: never run), or ran (passed / failed) or skipped themselves at
    run time (e2eskipper: e.g. a missing prerequisite)."""
    with open(report_path) as f:
        suites = json.load(f)
    skip_res = [(re.compile(p), p) for p, _ in skips]
    focus_re = re.compile("|".join(f"(?:{p})" for p in read_focus()))
    tests = {}
    for suite in suites:
        for sr in suite.get("SpecReports") or []:
            if sr.get("LeafNodeType") != "It":
                continue
            name = " ".join([t for t in sr.get("ContainerHierarchyTexts") or []] + [sr.get("LeafNodeText", "")])
            labels = []
            for ls in sr.get("ContainerHierarchyLabels") or []:
                labels += ls or []
            labels += sr.get("LeafNodeLabels") or []
            full = name + "".join(f" [{l}]" for l in labels if f"[{l}]" not in name)
            if not focus_re.search(full):
                continue
            state = sr.get("State")
            failure = sr.get("Failure") or {}
            msg = (failure.get("Message") or "").strip()
            if state == "skipped" and not msg:
                listed = next((p for r, p in skip_res if r.search(full)), None)
                status = "listed" if listed else "filtered"
            elif state == "skipped":
                status = "skipped"
            elif state == "passed":
                status = "passed"
            else:
                status = "failed"
            tests[full] = {"status": status, "state": state,
                           "seconds": round((sr.get("RunTime") or 0) / 1e9, 1),
                           "message": msg[:2000],
                           "location": (failure.get("Location") or {}).get("FileName", "") + ":" +
                                       str((failure.get("Location") or {}).get("LineNumber", ""))}
    counts = {k: sum(1 for t in tests.values() if t["status"] == k)
              for k in ("passed", "failed", "skipped", "listed", "filtered")}
    counts["ran"] = counts["passed"] + counts["failed"]
    return {"counts": counts, "tests": tests}


def cmd_list(args):
    """Dry run: which tests focus.txt + skip.txt select, without a cluster."""
    ebin = os.path.join(upstream_e2e_bin(), "e2e.test")
    os.makedirs(args.out, exist_ok=True)
    skips = read_skips()
    cmd = [ebin, *e2e_args("/dev/null", args.out, read_focus(), [p for p, _ in skips]),
           "--ginkgo.dry-run"]
    with open(os.path.join(args.out, "dry-run.log"), "w") as lf:
        rc = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT).returncode
    summ = summarize(os.path.join(args.out, "report.json"), skips)
    for name, t in sorted(summ["tests"].items()):
        print(f"{'RUN ' if t['status'] == 'passed' else 'SKIP'} {name}")
    print(json.dumps(summ["counts"]), file=sys.stderr)
    return rc


def cmd_run(args):
    ebin_dir = upstream_e2e_bin()
    e2e_test, kwok_bin = os.path.join(ebin_dir, "e2e.test"), os.path.join(ebin_dir, "kwok")
    for b in (e2e_test, kwok_bin):
        if not os.access(b, os.X_OK):
            log(f"missing {b}: run test/upstream-e2e/build.sh")
            return 3
    out = os.path.abspath(args.out)
    # A result dir is reused: drop what an earlier run left (only the files this script writes).
    shutil.rmtree(os.path.join(out, "logs"), ignore_errors=True)
    for name in ("report.json", "junit.xml", "e2e.log", "summary.json", "command.txt"):
        if os.path.exists(os.path.join(out, name)):
            os.remove(os.path.join(out, name))
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    skips = read_skips()
    focus = [args.focus] if args.focus else read_focus()
    gates = feature_gates()
    components = ["etcd", "kube-apiserver", "kube-controller-manager"]
    if args.scheduler == "upstream":
        components.append("kube-scheduler")
    os.environ["GANTRY_KCM_CONTROLLERS"] = KCM_CONTROLLERS
    os.environ["GANTRY_FEATURE_GATES"] = gates
    work = tempfile.mkdtemp(prefix=f"gantry-upstream-e2e-{args.scheduler}-")
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True).stdout.strip()
    meta = {"scheduler": args.scheduler, "repo_head": head, "machine": machine(), "k8s": K8S_VERSION, "kwok": KWOK_VERSION,
            "nodes": args.nodes, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "feature_gates": gates, "kcm_controllers": KCM_CONTROLLERS}
    kwok = gantry = None
    t0 = time.monotonic()
    rc = 0
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(f"killed by signal {signum}"))
    try:
        with ControlPlane(components=components, keep_on_failure=False) as cp:
            try:
                kwok = Kwok(kwok_bin, cp.kubeconfig, work, os.path.join(out, "logs", "kwok.log"))
                nodes = create_nodes(cp.client, args.nodes)
                log(f"{len(nodes)} kwok nodes Ready")
                if args.scheduler == "gantry":
                    gbin = os.path.join(work, "gantry")
                    shutil.copy2(args.gantry_bin, gbin)
                    with open(gbin, "rb") as f:
                        meta["gantry_sha256"] = hashlib.sha256(f.read()).hexdigest()
                    meta["gantry_mtime"] = time.strftime(
                        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(args.gantry_bin)))
                    meta["gantry_version"] = subprocess.run(
                        [gbin, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        text=True).stdout.strip()
                    # Gantry runs as deploy/ deploys it: ServiceAccount kube-system/gantry-scheduler
                    # with deploy/rbac.yaml's ClusterRole (it reads a few more kinds than
                    # kube-scheduler's bootstrap role allows, e.g. PriorityClasses).
                    gantry_test.apply_deploy_rbac(cp.client)
                    token = cp.client.service_account_token(
                        gantry_test.SA_NS, gantry_test.SA_NAME, seconds=12 * 3600)
                    kcfg = cp.write_kubeconfig(os.path.join(cp.dir, "gantry-sa.kubeconfig"), token)
                    cfg_text = open(os.path.join(HERE, "gantry-config.yaml")).read().replace(
                        "@KUBECONFIG@", kcfg)
                    cfg = os.path.join(work, "gantry-config.yaml")
                    with open(cfg, "w") as f:
                        f.write(cfg_text)
                    gantry = GantryProcess(gbin, ["--config", cfg, f"--feature-gates={gates}",
                                                  f"--admin-address=127.0.0.1:{gantry_e2e.free_port()}", f"-v={args.gantry_v}"],
                                           log_path=os.path.join(out, "logs", "gantry.log"))
                    gantry.wait_ready()
                    log("gantry ready")
                meta["setup_seconds"] = round(time.monotonic() - t0, 1)
                cmd = [e2e_test, *e2e_args(cp.kubeconfig, out, focus, [p for p, _ in skips])]
                with open(os.path.join(out, "command.txt"), "w") as f:
                    f.write(" ".join(cmd) + "\n")
                log(f"running e2e.test ({args.scheduler}); output: {out}/e2e.log")
                t1 = time.monotonic()
                with open(os.path.join(out, "e2e.log"), "w") as lf:
                    e2e_rc = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=work).returncode
                meta["e2e_seconds"] = round(time.monotonic() - t1, 1)
                meta["e2e_exit_code"] = e2e_rc
                if not kwok.alive():
                    log("WARNING: kwok exited during the run")
                    meta["kwok_died"] = True
                if gantry is not None and not gantry.alive():
                    log(f"WARNING: gantry exited during the run ({gantry.proc.returncode})")
                    meta["gantry_died"] = gantry.proc.returncode
            finally:
                if gantry is not None:
                    meta["gantry_exit_code"] = gantry.stop()
                if kwok is not None:
                    kwok.stop()
                logs = os.path.join(cp.dir, "logs")
                for name in os.listdir(logs) if os.path.isdir(logs) else []:
                    shutil.copy2(os.path.join(logs, name), os.path.join(out, "logs", name))
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - the run could not happen; say why
        log(f"run failed: {e!r}")
        meta["error"] = repr(e)
        rc = 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta["total_seconds"] = round(time.monotonic() - t0, 1)
    report = os.path.join(out, "report.json")
    if os.path.exists(report):
        summ = summarize(report, skips)
        meta.update(summ)
        log(f"{args.scheduler}: {json.dumps(summ['counts'])} in {meta['total_seconds']}s")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--scheduler", choices=("upstream", "gantry"), required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--gantry-bin", default=os.path.join(REPO, "build", "bin", "gantry"))
    r.add_argument("--gantry-v", type=int, default=2)
    r.add_argument("--nodes", type=int, default=4)
    r.add_argument("--focus", help="one regular expression instead of focus.txt (debugging)")
    l = sub.add_parser("list")
    l.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.cmd == "run":
        return cmd_run(args)
    return cmd_list(args)


if __name__ == "__main__":
    sys.exit(main())
