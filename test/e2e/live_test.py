#!/usr/bin/env python3
"""End-to-end suites for Gantry's live mode (src/client) against a real control plane.

    live_test.py scheduling RUNNER         pods for gantry-scheduler are bound, default-scheduler
                                           pods are untouched, an unschedulable pod gets
                                           PodScheduled=False + a FailedScheduling event in
                                           upstream's format, the Lease is held
    live_test.py apiserver-restart RUNNER  the API server restarts mid-run; pods created before,
                                           during the outage's aftermath and after are all bound

RUNNER is the gantry-live-e2e binary (client::RunLiveScheduler in-process).
"""

import glob
import os
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gantry_e2e import ApiError, log, run  # noqa: E402

NS = "live"


class Gantry:
    """The live scheduler as a child process; collects its output."""

    def __init__(self, runner, kubeconfig, extra=()):
        self.lines = []
        self.proc = subprocess.Popen([runner, "--kubeconfig", kubeconfig, *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_line(self, text, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in l for l in self.lines):
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"gantry exited ({self.proc.returncode}) before '{text}':\n" + self.dump())
            time.sleep(0.1)
        raise TimeoutError(f"gantry did not print '{text}' in {timeout}s:\n" + self.dump())

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


def pod(c, name):
    return c.get(f"/api/v1/namespaces/{NS}/pods/{name}")


def node_of(c, name):
    return pod(c, name)["spec"].get("nodeName")


def setup(cp, nodes=2):
    c = cp.client
    for i in range(nodes):
        c.create_node(f"live-node-{i}", cpu="4", memory="8Gi")
    c.create_namespace(NS)
    # Pod admission may race the namespace's default ServiceAccount for a moment.
    c.wait("first pod creation", lambda: c.create_pod(NS, "warmup", scheduler_name="gantry-scheduler"))
    return c


def test_scheduling(cp, runner):
    c = setup(cp)
    g = Gantry(runner, cp.kubeconfig)
    try:
        g.wait_line("READY")
        g.wait_line("LEADER true")
        for i in range(5):
            c.create_pod(NS, f"p{i}", scheduler_name="gantry-scheduler")
        c.create_pod(NS, "default-pod")  # default-scheduler: not ours
        c.create_pod(NS, "huge", scheduler_name="gantry-scheduler", cpu="100")
        for name in ["warmup"] + [f"p{i}" for i in range(5)]:
            n = c.wait(f"{name} bound", lambda name=name: node_of(c, name), timeout=30)
            assert n.startswith("live-node-"), n
        log("6 gantry-scheduler pods bound")

        def unschedulable():
            for cond in pod(c, "huge")["status"].get("conditions") or []:
                if cond["type"] == "PodScheduled" and cond["status"] == "False":
                    return cond
            return None
        cond = c.wait("huge PodScheduled=False", unschedulable, timeout=30)
        assert cond["reason"] == "Unschedulable", cond
        assert cond["message"].startswith("0/2 nodes are available: 2 Insufficient cpu."), cond["message"]
        log(f"PodScheduled=False: {cond['message']}")

        def event(reason, name):
            evs = c.get(f"/apis/events.k8s.io/v1/namespaces/{NS}/events")["items"]
            for e in evs:
                if e.get("reason") == reason and e["regarding"]["name"] == name:
                    return e
            return None
        ev = c.wait("FailedScheduling event", lambda: event("FailedScheduling", "huge"), timeout=30)
        assert ev["type"] == "Warning" and ev["action"] == "Scheduling", ev
        assert ev["reportingController"] == "gantry-scheduler", ev
        assert ev["reportingInstance"].startswith("gantry-scheduler-"), ev
        assert ev["note"].startswith("0/2 nodes are available: 2 Insufficient cpu."), ev["note"]
        ev = c.wait("Scheduled event", lambda: event("Scheduled", "p0"), timeout=30)
        assert ev["note"] == f"Successfully assigned {NS}/p0 to {node_of(c, 'p0')}", ev["note"]
        assert ev["action"] == "Binding" and ev["type"] == "Normal", ev

        # Untouched default-scheduler pod (no upstream scheduler runs here).
        time.sleep(2)
        p = pod(c, "default-pod")
        assert not p["spec"].get("nodeName"), p["spec"]
        assert not any(x["type"] == "PodScheduled" for x in p["status"].get("conditions") or []), p["status"]

        lease = c.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gantry-scheduler")
        holder = lease["spec"]["holderIdentity"]
        assert "_" in holder, holder
        log(f"lease held by {holder}")

        # A node added later makes room: the unschedulable pod is retried and bound.
        c.create_node("live-node-big", cpu="128", memory="64Gi")
        n = c.wait("huge bound after a node was added", lambda: node_of(c, "huge"), timeout=60)
        assert n == "live-node-big", n
        log("huge bound after the cluster grew")
    except BaseException:
        log("gantry output:\n" + g.dump())
        raise
    finally:
        rc = g.stop()
    assert rc == 0, f"gantry exited with {rc}:\n{g.dump()}"
    lease = c.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gantry-scheduler")
    assert not lease["spec"].get("holderIdentity"), f"lease not released on SIGTERM: {lease['spec']}"


def restart_apiserver(cp):
    pidfiles = glob.glob(os.path.join(cp.dir, "**", "kube-apiserver.pid"), recursive=True)
    assert pidfiles, f"no kube-apiserver.pid under {cp.dir}"
    with open(pidfiles[0]) as f:
        pid = int(f.read().strip())
    log(f"stopping kube-apiserver ({pid})")
    # SIGTERM starts a graceful shutdown that keeps watches open for up to a minute; after
    # a few seconds kill it outright, like a crash.
    os.kill(pid, signal.SIGTERM)
    for i in range(400):
        if not os.path.exists(f"/proc/{pid}"):
            break
        if i == 100:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}"), "kube-apiserver did not stop"
    time.sleep(2)
    log("starting kube-apiserver again")
    cp._sh("up")


def test_apiserver_restart(cp, runner):
    c = setup(cp)
    g = Gantry(runner, cp.kubeconfig, extra=["--no-leader-elect"])
    try:
        g.wait_line("LEADER true")
        for i in range(3):
            c.create_pod(NS, f"before-{i}", scheduler_name="gantry-scheduler")
        for i in range(3):
            c.wait(f"before-{i} bound", lambda i=i: node_of(c, f"before-{i}"), timeout=30)
        restart_apiserver(cp)
        c.wait("API server back", lambda: c.get("/readyz") is not None, timeout=60)
        for i in range(5):
            c.wait(f"create after-{i}", lambda i=i: c.create_pod(NS, f"after-{i}", scheduler_name="gantry-scheduler"))
        for i in range(5):
            c.wait(f"after-{i} bound", lambda i=i: node_of(c, f"after-{i}"), timeout=60)
        log("all pods bound across the API server restart")
        assert g.proc.poll() is None, "gantry exited during the restart"
    except BaseException:
        log("gantry output:\n" + g.dump())
        raise
    finally:
        rc = g.stop()
    assert rc == 0, f"gantry exited with {rc}"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    which, runner = sys.argv[1], sys.argv[2]
    tests = {"scheduling": test_scheduling, "apiserver-restart": test_apiserver_restart}
    run(lambda cp: tests[which](cp, runner))
