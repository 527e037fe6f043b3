#!/usr/bin/env python3
"""Side-by-side benchmark: upstream kube-scheduler v1.37.2 vs Gantry on one real control plane.

    compare_upstream.py --gantry BUILD/bin/gantry [--quick] [--workloads A,B] [--repeat N]
                        [--json OUT.json] [--schedulers upstream,gantry] [--gantry-arg ARG]...
                        [--gantry-wrapper CMD] [--keep-logs DIR]
                        [--apiserver-profile DIR [--apiserver-profile-seconds S]]

--schedulers gantry runs one side only (no ratios; for iterating), --gantry-arg passes a flag
to gantry (e.g. --gantry-arg=--binding-workers=16 for an A/B), --gantry-wrapper runs gantry
under a profiler ('heaptrack -o /tmp/h'; CPU and RSS are then the wrapper's), --keep-logs
keeps each run's scheduler log (the control plane's directory is removed after the run).
--apiserver-profile DIR starts kube-apiserver with --profiling=true and, at each run's first
bind, fetches a CPU profile of S seconds (default 15) from its /debug/pprof/profile into
DIR/<workload>-<scheduler>-<n>.pprof (read it with `go tool pprof -top FILE`).
Each run records the 1-minute load average every 5 s while it waits for the binds
(load_during_run: min / max / mean; the table's "load" column is the mean).

For each workload and each repetition, each scheduler runs once, in alternation (upstream first
on odd repetitions, Gantry first on even ones), every run on a FRESH control plane (etcd v3.7.3,
kube-apiserver and kube-controller-manager v1.37.2 from test/e2e/controlplane.sh):

 1. create the workload's objects (scheduler_perf templates: nodes as plain Node objects,
    ResourceSlices, DeviceClass, ResourceClaimTemplate, PodGroups, pre-bound init pods, and
    all measured pods, pending, naming the scheduler under test), and wait until
    kube-controller-manager has created every ResourceClaim from its template;
 2. start the scheduler (same KubeSchedulerConfiguration for both: clientConnection QPS/burst
    5000/5000, no leader election, the same plugin set; only the profile's schedulerName
    differs) and time every bind from a watch on bound pods (fieldSelector spec.nodeName!=);
 3. when all measured pods are bound, read the scheduler's CPU time (utime+stime from
    /proc/<pid>/stat) and peak RSS (VmHWM), plus the API server's and etcd's CPU;
 4. wait until the number of Events in the measured namespace held still for 3 s (polled every
    second with limit=1, at most 60 s after the last bind: both schedulers write events
    asynchronously), read the API server's CPU again (apiserver_cpu_seconds_incl_events), count
    the Events by reason, then stop the scheduler. Gantry's own writer counts (created / folded /
    dropped / failed, from the line it logs at shutdown) are reported as gantry_writer.

Throughput: pods/s from first to last bind, and scheduler_perf-style 1-second samples
(Average, Perc50/90/95/99). All measured pods exist before the scheduler starts ("all at
once"), so neither scheduler waits for this (Python) driver to create pods.

Workloads (full / --quick sizes):
  SchedulingBasic  misc/SchedulingBasic 5000Nodes_10000Pods: 5000 nodes (4 CPU, 32Gi, 110 pods),
                   1000 init pods pre-bound, 10000 measured pods of 100m/500Mi  (quick: 100/100/500)
  DRA              dra/SchedulingWithResourceClaimTemplate: 500 nodes with a ResourceSlice of
                   8 devices each (the scheduler_perf test-driver device), DeviceClass test-class,
                   one ResourceClaimTemplate (1 device); 4000 pods = every device (quick: 16 nodes,
                   128 pods)
  GangTopology     podgroup/tas/TopologyAwareScheduling templates: 5000 nodes, racks of 100
                   (topology.kubernetes.io/rack), scheduling.k8s.io/v1beta1 PodGroups with gang
                   minCount 4 and a rack topology constraint; 100 gangs = 400 pods (upstream's
                   cost per gang makes scheduler_perf's 1500 gangs take hours here; --size
                   gangs=1500 runs them) (quick: 100 nodes in racks of 10, 30 gangs)

--size KEY=VALUE (repeatable) overrides a size of every selected workload that has KEY
(nodes, init_pods, pods, devices, rack_size, gangs, gang_size).

Exit status: 0 when both schedulers bound every measured pod in every run and the report is
well-formed; 1 otherwise; 77 (skip) without control-plane binaries (see test/e2e/gantry_e2e.py).
"""

import argparse
import datetime
import http.client
import json
import os
import platform
import queue
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "test", "e2e"))
import gantry_e2e  # noqa: E402
from gantry_e2e import ControlPlane, log  # noqa: E402

UPSTREAM = "upstream"
GANTRY = "gantry"
SCHEDULER_NAMES = {UPSTREAM: "default-scheduler", GANTRY: "gantry-scheduler"}
QPS = 5000
BURST = 5000
CLK_TCK = os.sysconf("SC_CLK_TCK")
REPORT_VERSION = 2

# The plugin set both schedulers run, with upstream's default weights (v1.37.2
# pkg/scheduler/apis/config/v1/default_plugins.go). Left out on both sides: the four volume
# plugins (Gantry has none; no pod here has a volume) and NodeDeclaredFeatures (upstream-only;
# no node declares features). Gang scheduling and topology placement are plugins upstream
# (GangScheduling, TopologyPlacementGenerator, PodGroupPodsCount) and built into Gantry's
# group cycle, so only the upstream profile names them.
COMMON_PLUGINS = [
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeName", 0), ("NodeUnschedulable", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2),
    ("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1),
    ("DefaultBinder", 0),
]
UPSTREAM_ONLY_PLUGINS = [("GangScheduling", 0), ("TopologyPlacementGenerator", 0), ("PodGroupPodsCount", 1)]

SIZES = {
    "SchedulingBasic": {"full": {"nodes": 5000, "init_pods": 1000, "pods": 10000},
                        "quick": {"nodes": 100, "init_pods": 100, "pods": 500}},
    "DRA": {"full": {"nodes": 500, "devices": 8, "pods": 4000},
            "quick": {"nodes": 16, "devices": 8, "pods": 128}},
    # scheduler_perf's performance sizes have 750-2250 gangs; upstream v1.37.2 evaluates every rack
    # placement for every gang (~1.2 CPU-seconds per gang with 1500 pending), which would take hours on
    # a shared 2-core machine, so the default full size keeps the 5000 nodes and runs 100 gangs.
    # --size gangs=1500 restores TopologyAwareScheduling/5000Nodes_1500Gangs_6000Pods.
    "GangTopology": {"full": {"nodes": 5000, "rack_size": 100, "gangs": 100, "gang_size": 4},
                     "quick": {"nodes": 100, "rack_size": 10, "gangs": 30, "gang_size": 4}},
}
TARGETS = {"SchedulingBasic": 3.0, "DRA": 10.0, "GangTopology": 3.0}
NS = "bench"


# --- a small concurrent client (keep-alive connections, one per thread) -------------------------
class FastClient:
    """JSON over HTTPS with persistent connections; admin client certificate of the control plane."""

    def __init__(self, cp, timeout=60):
        u = urllib.parse.urlparse(cp.server)
        self.host, self.port = u.hostname, u.port
        pki = os.path.join(cp.dir, "pki")
        self.ctx = ssl.create_default_context(cafile=cp.ca)
        self.ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.timeout = timeout
        self.local = threading.local()

    def _conn(self):
        c = getattr(self.local, "conn", None)
        if c is None:
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=self.timeout)
            self.local.conn = c
        return c

    def request(self, method, path, body=None, content_type="application/json"):
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in range(5):
            c = self._conn()
            try:
                c.request(method, path, body=data, headers=headers)
                resp = c.getresponse()
                raw = resp.read()
            except (http.client.HTTPException, OSError):
                c.close()
                self.local.conn = None
                if attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))
                continue
            if resp.status >= 500 or resp.status == 429:
                time.sleep(0.2 * (attempt + 1))
                continue
            if resp.status >= 300:
                raise gantry_e2e.ApiError(resp.status, raw.decode(errors="replace"), method, path)
            return json.loads(raw) if raw else None
        raise gantry_e2e.ApiError(resp.status, raw.decode(errors="replace"), method, path)

    def get_raw(self, path, timeout):
        """One GET on a connection of its own; returns the body (bytes)."""
        c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)
        try:
            c.request("GET", path)
            resp = c.getresponse()
            raw = resp.read()
            if resp.status != 200:
                raise gantry_e2e.ApiError(resp.status, raw.decode(errors="replace"), "GET", path)
            return raw
        finally:
            c.close()

    def create_all(self, path_and_bodies, threads=8, what="objects"):
        """POSTs every (path, body); raises the first error. Returns seconds taken."""
        t0 = time.monotonic()
        q = queue.Queue()
        for item in path_and_bodies:
            q.put(item)
        errors = []

        def worker():
            while not errors:
                try:
                    path, body = q.get_nowait()
                except queue.Empty:
                    return
                try:
                    self.request("POST", path, body)
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(e)

        ts = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errors:
            raise RuntimeError(f"creating {what}: {errors[0]}")
        return time.monotonic() - t0

    def list_all(self, path, limit=1000):
        items, cont = [], None
        while True:
            q = {"limit": str(limit)}
            if cont:
                q["continue"] = cont
            out = self.request("GET", path + "?" + urllib.parse.urlencode(q))
            items.extend(out.get("items") or [])
            cont = (out.get("metadata") or {}).get("continue")
            if not cont:
                return items, out["metadata"]["resourceVersion"]


# --- scheduler_perf templates --------------------------------------------------------------------
def node(name, labels=None):
    lab = {"kubernetes.io/hostname": name}
    lab.update(labels or {})
    cap = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return ("/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab}, "spec": {},
        "status": {"capacity": cap, "allocatable": dict(cap), "phase": "Running",
                   "conditions": [{"type": "Ready", "status": "True"}]}})


def default_pod(ns, name, scheduler, node_name=None):
    """templates/pod-default.yaml: pause, requests = limits = 100m / 500Mi, containerPort 80."""
    res = {"cpu": "100m", "memory": "500Mi"}
    spec = {"schedulerName": scheduler, "containers": [{
        "name": "pause", "image": "registry.k8s.io/pause:3.10.2", "ports": [{"containerPort": 80}],
        "resources": {"requests": res, "limits": dict(res)}}]}
    if node_name:
        spec["nodeName"] = node_name
    return (f"/api/v1/namespaces/{ns}/pods",
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def dra_slice(i, devices, pci_roots=2):
    """dra/templates/resourceslice-basic-devices.yaml with `devices` devices."""
    devs = []
    for d in range(devices):
        root = d % pci_roots
        devs.append({"name": f"basic-device-{d}", "attributes": {
            "driver": {"string": "xe"}, "driverVersion": {"version": "1.2.3"},
            "resource.k8s.io/pciRoot": {"string": str(root)},
            "family": {"string": "Arc Pro B-Series"}, "health": {"string": "Healthy"},
            "model": {"string": "B60"}, "pciAddress": {"string": f"0000:0{d}:00.0"},
            "pciId": {"string": "0xe211"}, "pciRoot": {"string": f"0{root}"},
            "resource.kubernetes.io/pciBusID": {"string": f"0000:0{d}:00.0"},
            "resource.kubernetes.io/pciRoot": {"string": f"pci0000:0{root}"},
            "sriov": {"bool": True}, "type": {"string": "gpu"}},
            "capacity": {"memory": {"value": "24480Mi"}, "millicores": {"value": "1k"}}})
    return ("/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": f"resourceslice-{i}"},
        "spec": {"pool": {"name": f"resourceslice-{i}", "generation": 1, "resourceSliceCount": 1},
                 "driver": "test-driver.cdi.k8s.io", "nodeName": f"scheduler-perf-dra-{i}",
                 "devices": devs}})


def dra_pod(ns, name, scheduler):
    """dra/templates/pod-with-claim-template.yaml."""
    return (f"/api/v1/namespaces/{ns}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"schedulerName": scheduler,
                 "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.1",
                                 "resources": {"claims": [{"name": "resource"}]}}],
                 "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}]}})


def podgroup(ns, i, min_count):
    """podgroup/tas/templates/podgroup.yaml."""
    return (f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups", {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": f"gang-{i}"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}},
                 "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]}}})


def gang_pod(ns, i, gang_size, scheduler):
    """podgroup/tas/templates/gang-pod.yaml."""
    return (f"/api/v1/namespaces/{ns}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"test-tas-scheduling-{i}"},
        "spec": {"schedulerName": scheduler, "schedulingGroup": {"podGroupName": f"gang-{i // gang_size}"},
                 "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.1",
                                 "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]}})


def namespace(name):
    return ("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def setup_workload(fc, workload, size, scheduler):
    """Creates the workload's objects; returns the number of measured pods (all in NS)."""
    fc.create_all([namespace(NS), namespace("init")], what="namespaces")
    if workload == "SchedulingBasic":
        n = size["nodes"]
        fc.create_all([node(f"scheduler-perf-{i}") for i in range(n)], what="nodes")
        fc.create_all([default_pod("init", f"init-pod-{i}", scheduler, f"scheduler-perf-{i % n}")
                       for i in range(size["init_pods"])], what="init pods")
        fc.create_all([default_pod(NS, f"pod-{i}", scheduler) for i in range(size["pods"])], what="pods")
        return size["pods"]
    if workload == "DRA":
        n = size["nodes"]
        fc.create_all([node(f"scheduler-perf-dra-{i}", {"node-with-dra": "true"}) for i in range(n)], what="nodes")
        fc.create_all([dra_slice(i, size["devices"]) for i in range(n)], what="resourceslices")
        fc.create_all([("/apis/resource.k8s.io/v1/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "test-driver.cdi.k8s.io"'}}]}}),
            (f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaimtemplates", {
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "test-claim-template"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]}}}})],
            what="DeviceClass and ResourceClaimTemplate")
        fc.create_all([dra_pod(NS, f"test-dra-{i}", scheduler) for i in range(size["pods"])], what="pods")
        wait_for_claims(fc, size["pods"])
        return size["pods"]
    if workload == "GangTopology":
        n, rack = size["nodes"], size["rack_size"]
        fc.create_all([node(f"node-{i}", {"topology.kubernetes.io/zone": f"zone-{i // rack}",
                                          "topology.kubernetes.io/rack": f"rack-{i // rack}"})
                       for i in range(n)], what="nodes")
        g, k = size["gangs"], size["gang_size"]
        fc.create_all([podgroup(NS, i, k) for i in range(g)], what="podgroups")
        fc.create_all([gang_pod(NS, i, k, scheduler) for i in range(g * k)], what="pods")
        return g * k
    raise ValueError(f"unknown workload {workload!r}")


def wait_for_claims(fc, pods, timeout=900):
    """kube-controller-manager's resourceclaim controller creates a claim per pod and records it
    in pod.status.resourceClaimStatuses; the scheduler needs both."""
    deadline = time.monotonic() + timeout
    while True:
        items, _ = fc.list_all(f"/api/v1/namespaces/{NS}/pods")
        ready = sum(1 for p in items if (p.get("status") or {}).get("resourceClaimStatuses"))
        claims, _ = fc.list_all(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims")
        if ready >= pods and len(claims) >= pods:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"kube-controller-manager created {len(claims)}/{pods} ResourceClaims "
                               f"({ready} pods with resourceClaimStatuses) in {timeout}s")
        time.sleep(1)


# --- measurement ---------------------------------------------------------------------------------
def proc_cpu_seconds(pid):
    """utime + stime of a process (and its reaped children) from /proc/<pid>/stat, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state); utime=14, stime=15 -> indexes 11, 12
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_hwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def component_pid(cp, name):
    try:
        with open(os.path.join(cp.dir, "run", name + ".pid")) as f:
            pid = int(f.read().strip())
        return pid if os.path.exists(f"/proc/{pid}") else None
    except (OSError, ValueError):
        return None


def apiserver_feature_gates(cp):
    """The --feature-gates the harness gave kube-apiserver, so the scheduler runs with the same."""
    pid = component_pid(cp, "kube-apiserver")
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        for arg in f.read().decode().split("\0"):
            if arg.startswith("--feature-gates="):
                return arg.split("=", 1)[1]
    return ""


def event_total(fc):
    """How many Events NS holds, from one cheap list (limit=1: remainingItemCount + 1)."""
    out = fc.request("GET", f"/apis/events.k8s.io/v1/namespaces/{NS}/events?limit=1")
    items = out.get("items") or []
    return len(items) + int((out.get("metadata") or {}).get("remainingItemCount") or 0)


def wait_for_events(fc, settle_deadline, interval=1.0, still=3):
    """Waits until the number of Events in NS held still for `still` polls in a row (or until
    settle_deadline, time.monotonic()). Returns the seconds waited."""
    t0 = time.monotonic()
    last, stable = None, 0
    while True:
        total = event_total(fc)
        stable = stable + 1 if total == last else 0
        last = total
        if stable >= still or time.monotonic() >= settle_deadline:
            return round(time.monotonic() - t0, 1)
        time.sleep(interval)


def count_events(fc):
    """Events in NS by reason; a folded series counts as the occurrences it stands for."""
    items, _ = fc.list_all(f"/apis/events.k8s.io/v1/namespaces/{NS}/events", limit=5000)
    counts = {}
    for e in items:
        reason = e.get("reason") or ""
        counts[reason] = counts.get(reason, 0) + max(1, int((e.get("series") or {}).get("count") or 1))
    return dict(sorted(counts.items()))


WRITER_LINE = re.compile(r"writer: (\d+) bindings .*?, (\d+) events created, (\d+) folded into series, "
                         r"(\d+) dropped .*?, (\d+) failed")


def gantry_writer_stats(logpath):
    """Gantry's own event counts from the line it logs at shutdown, or None."""
    try:
        with open(logpath, errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    m = None
    for m in WRITER_LINE.finditer(text):
        pass
    if not m:
        return None
    keys = ("bindings", "events_created", "events_folded", "events_dropped", "event_failures")
    return dict(zip(keys, (int(g) for g in m.groups())))


class ApiserverProfiler:
    """Fetches one CPU profile from kube-apiserver's /debug/pprof/profile on a thread."""

    def __init__(self, fc, path, seconds):
        self.fc, self.path, self.seconds = fc, path, seconds
        self.error = None
        self.thread = None

    def start(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            raw = self.fc.get_raw(f"/debug/pprof/profile?seconds={self.seconds}", timeout=self.seconds + 60)
            with open(self.path, "wb") as f:
                f.write(raw)
        except Exception as e:  # noqa: BLE001 - reported in the run's result
            self.error = str(e)

    def join(self):
        if self.thread:
            self.thread.join(self.seconds + 90)


class BindWatcher(threading.Thread):
    """Watches bound pods of NS (fieldSelector spec.nodeName!=) and records when each one was
    first seen bound (time.monotonic())."""

    def __init__(self, fc, expected, on_first=None):
        super().__init__(daemon=True)
        self.fc, self.expected, self.on_first = fc, expected, on_first
        self.times = {}
        self.nodes = {}
        self.done = threading.Event()
        self.error = None
        items, self.rv = fc.list_all(f"/api/v1/namespaces/{NS}/pods")
        for p in items:
            if p["spec"].get("nodeName"):
                raise RuntimeError(f"pod {p['metadata']['name']} already bound before the scheduler started")
        self.conn = None

    def run(self):
        try:
            while not self.done.is_set():
                self._watch_once()
        except Exception as e:  # noqa: BLE001 - surfaced by the caller
            if not self.done.is_set():
                self.error = e
                self.done.set()

    def _watch_once(self):
        q = urllib.parse.urlencode({"watch": "1", "fieldSelector": "spec.nodeName!=", "resourceVersion": self.rv,
                                    "allowWatchBookmarks": "true", "timeoutSeconds": "3600"})
        self.conn = http.client.HTTPSConnection(self.fc.host, self.fc.port, context=self.fc.ctx, timeout=None)
        self.conn.request("GET", f"/api/v1/namespaces/{NS}/pods?{q}", headers={"Accept": "application/json"})
        resp = self.conn.getresponse()
        if resp.status != 200:
            raise RuntimeError(f"watch: HTTP {resp.status}: {resp.read()[:300]!r}")
        while not self.done.is_set():
            line = resp.readline()
            if not line:
                return  # server closed the watch: re-watch from the last resourceVersion
            now = time.monotonic()
            ev = json.loads(line)
            obj = ev.get("object") or {}
            if ev.get("type") == "ERROR":
                raise RuntimeError(f"watch error: {obj}")
            self.rv = obj.get("metadata", {}).get("resourceVersion", self.rv)
            if ev.get("type") not in ("ADDED", "MODIFIED"):
                continue
            name = obj["metadata"]["name"]
            node_name = obj["spec"].get("nodeName")
            if node_name and name not in self.times:
                if not self.times and self.on_first:
                    self.on_first()
                self.times[name] = now
                self.nodes[name] = node_name
                if len(self.times) >= self.expected:
                    self.done.set()

    def stop(self):
        self.done.set()
        try:
            if self.conn and self.conn.sock:
                self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def throughput(times):
    """pods/s from first to last bind, and scheduler_perf-style 1-second samples starting at the
    first bind (`samples`: binds per second; statistics over the whole seconds plus the last,
    partial second as a rate when it lasted at least 0.5 s)."""
    ts = sorted(times)
    out = {"bound": len(ts)}
    if len(ts) < 2:
        out.update(first_to_last_seconds=0.0, pods_per_second=None, samples=[])
        return out
    span = ts[-1] - ts[0]
    out["first_to_last_seconds"] = round(span, 3)
    out["pods_per_second"] = round((len(ts) - 1) / span, 1) if span > 0 else None
    nbuckets = int(span) + 1
    buckets = [0] * nbuckets
    for t in ts:
        buckets[min(int(t - ts[0]), nbuckets - 1)] += 1
    out["samples"] = buckets
    # Whole seconds as they are; the last, partial second as a rate if it lasted >= 0.5 s.
    rates = [float(b) for b in buckets[:-1]]
    tail = span - (nbuckets - 1)
    if tail >= 0.5 or not rates:
        rates.append(buckets[-1] / max(tail, 1e-3) if rates else float(buckets[-1]))
    s = sorted(rates)

    def perc(p):
        return round(s[min(len(s) - 1, max(0, int(round(p / 100.0 * len(s) + 0.5)) - 1))], 1)
    out["sample_stats"] = {"Average": round(sum(rates) / len(rates), 1), "Perc50": perc(50), "Perc90": perc(90),
                           "Perc95": perc(95), "Perc99": perc(99)}
    return out


def write_config(path, scheduler, kubeconfig):
    plugins = COMMON_PLUGINS + (UPSTREAM_ONLY_PLUGINS if scheduler == UPSTREAM else [])
    lines = [
        "apiVersion: kubescheduler.config.k8s.io/v1",
        "kind: KubeSchedulerConfiguration",
        "clientConnection:",
        f"  kubeconfig: {kubeconfig}",
        f"  qps: {QPS}",
        f"  burst: {BURST}",
        "leaderElection:",
        "  leaderElect: false",
        "profiles:",
        f"- schedulerName: {SCHEDULER_NAMES[scheduler]}",
        "  plugins:",
        "    multiPoint:",
        "      disabled:",
        "      - name: '*'",
        "      enabled:",
    ]
    for name, weight in plugins:
        lines.append(f"      - name: {name}" + (f"\n        weight: {weight}" if weight else ""))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scheduler_command(scheduler, cp, cfg, gantry_cmd, gates):
    """gantry_cmd: ([wrapper..., binary], [extra args])."""
    kc = cp.kubeconfig
    if scheduler == UPSTREAM:
        return [os.path.join(cp.bin, "kube-scheduler"), f"--config={cfg}", f"--feature-gates={gates}",
                "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
                f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
                "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics", "--v=1"]
    prefix, extra = gantry_cmd
    return prefix + [f"--config={cfg}", f"--feature-gates={gates}", "--bind-address=127.0.0.1",
                     f"--secure-port={free_port()}", "--v=1"] + extra


def numbered_path(directory, stem, ext):
    os.makedirs(directory, exist_ok=True)
    n = 1
    while os.path.exists(os.path.join(directory, f"{stem}-{n}{ext}")):
        n += 1
    return os.path.join(directory, f"{stem}-{n}{ext}")


def run_one(workload, size, scheduler, gantry_cmd, timeout, keep_logs=None, profile=None):
    """One scheduler on one fresh control plane; returns the run's result dict.
    profile: (directory, seconds) for an API server CPU profile from the first bind, or None."""
    result = {"workload": workload, "scheduler": scheduler, "scheduler_name": SCHEDULER_NAMES[scheduler],
              "size": size, "ok": False}
    cp = ControlPlane(components=("etcd", "kube-apiserver", "kube-controller-manager"))
    if profile:
        cp.env["GANTRY_APISERVER_PROFILING"] = "true"
    # scheduler_perf's resourceclaim controller uses the test client (QPS 5000); kcm's default 20
    # would make claim creation the bottleneck of the setup.
    cp.env["GANTRY_KCM_EXTRA_ARGS"] = f"--kube-api-qps={QPS} --kube-api-burst={BURST}"
    with cp:
        fc = FastClient(cp)
        t0 = time.monotonic()
        measured = setup_workload(fc, workload, size, SCHEDULER_NAMES[scheduler])
        result["setup_seconds"] = round(time.monotonic() - t0, 1)
        result["measured_pods"] = measured
        log(f"{workload}/{scheduler}: {measured} pending pods and their objects created in "
            f"{result['setup_seconds']}s")
        # Both schedulers use the admin identity (system:masters): Gantry lists PriorityClasses
        # and ResourceClaimTemplates, which the bootstrap role system:kube-scheduler does not
        # allow (deploy/rbac.yaml grants them), and the benchmark compares scheduling, not RBAC.
        cfg = write_config(os.path.join(cp.dir, f"{scheduler}.yaml"), scheduler, cp.kubeconfig)
        cmd = scheduler_command(scheduler, cp, cfg, gantry_cmd, apiserver_feature_gates(cp))
        logpath = os.path.join(cp.dir, "logs", f"{scheduler}-scheduler.log")
        api_pid, etcd_pid = component_pid(cp, "kube-apiserver"), component_pid(cp, "etcd")
        api_cpu0, etcd_cpu0 = proc_cpu_seconds(api_pid), proc_cpu_seconds(etcd_pid)
        first = {}
        profiler = None
        if profile:
            profiler = ApiserverProfiler(fc, numbered_path(profile[0], f"{workload}-{scheduler}", ".pprof"),
                                         profile[1])

        with open(logpath, "w") as logf:
            proc = None

            def on_first_bind():
                first["t"] = time.monotonic()
                try:
                    first["cpu"] = proc_cpu_seconds(proc.pid)
                except OSError:
                    pass
                if profiler:
                    profiler.start()

            watcher = BindWatcher(fc, measured, on_first_bind)
            watcher.start()
            start = time.monotonic()
            proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            try:
                deadline = start + timeout
                loads, next_load = [os.getloadavg()[0]], start + 5
                while not watcher.done.wait(0.2):
                    if time.monotonic() >= next_load:  # 1-minute load average every 5 s
                        loads.append(os.getloadavg()[0])
                        next_load += 5
                    if proc.poll() is not None:
                        raise RuntimeError(f"{scheduler} exited with {proc.returncode} (log: {logpath})")
                    if time.monotonic() > deadline:
                        break
                end = time.monotonic()
                if proc.poll() is None:
                    cpu = proc_cpu_seconds(proc.pid)
                    hwm = proc_hwm_mib(proc.pid)
                else:
                    cpu, hwm = None, None
                api_cpu, etcd_cpu = proc_cpu_seconds(api_pid) - api_cpu0, proc_cpu_seconds(etcd_pid) - etcd_cpu0
                if watcher.done.is_set() and not watcher.error and proc.poll() is None:
                    result["events_settle_seconds"] = wait_for_events(fc, end + 60)
                    # The API server's CPU until the events settled (the driver's polls are cheap).
                    result["apiserver_cpu_seconds_incl_events"] = round(proc_cpu_seconds(api_pid) - api_cpu0, 2)
                    result["events"] = count_events(fc)
            finally:
                watcher.stop()
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(timeout=20)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
        if scheduler == GANTRY:
            result["gantry_writer"] = gantry_writer_stats(logpath)
        if profiler:
            profiler.join()
            result["apiserver_profile"] = profiler.path if not profiler.error else None
            if profiler.error:
                result["apiserver_profile_error"] = profiler.error
        if keep_logs:
            kept = numbered_path(keep_logs, f"{workload}-{scheduler}", ".log")
            shutil.copyfile(logpath, kept)
            result["log"] = kept
        if watcher.error:
            raise watcher.error
        tp = throughput(list(watcher.times.values()))
        result.update(tp)
        result["sample_average"] = (tp.get("sample_stats") or {}).get("Average")
        result["start_to_first_bind_seconds"] = round(first["t"] - start, 2) if "t" in first else None
        result["start_to_last_bind_seconds"] = round(max(watcher.times.values()) - start, 2) if watcher.times else None
        result["cpu_seconds"] = round(cpu, 2) if cpu is not None else None
        result["cpu_seconds_binding"] = (round(cpu - first["cpu"], 2)
                                         if cpu is not None and "cpu" in first else None)
        result["cpu_seconds_per_1000_pods"] = (round(1000.0 * cpu / measured, 3) if cpu is not None else None)
        result["peak_rss_mib"] = round(hwm, 1) if hwm is not None else None
        result["load_during_run"] = {"min": round(min(loads), 2), "max": round(max(loads), 2),
                                     "mean": round(sum(loads) / len(loads), 2), "samples": len(loads)}
        result["apiserver_cpu_seconds"] = round(api_cpu, 2)
        result["etcd_cpu_seconds"] = round(etcd_cpu, 2)
        result["events_scheduled"] = (result.get("events") or {}).get("Scheduled")
        result["ok"] = tp["bound"] == measured
        if workload == "GangTopology" and result["ok"]:
            result["topology_violations"] = gang_topology_violations(fc, watcher.nodes, size)
            result["ok"] = result["topology_violations"] == 0
        if not result["ok"]:
            log(f"{workload}/{scheduler}: bound {tp['bound']}/{measured} in {timeout}s; last log lines:")
            with open(logpath, errors="replace") as f:
                sys.stdout.write("".join(f.readlines()[-30:]))
        log(f"{workload}/{scheduler}: {tp['bound']}/{measured} bound, {tp.get('pods_per_second')} pods/s, "
            f"CPU {result['cpu_seconds']} s, peak RSS {result['peak_rss_mib']} MiB, "
            f"events {result.get('events')} (settled {result.get('events_settle_seconds')} s after the last bind)")
    return result


def gang_topology_violations(fc, pod_nodes, size):
    """Gangs whose members landed in more than one rack (the PodGroups ask for one rack)."""
    rack_of = lambda n: int(n.rsplit("-", 1)[1]) // size["rack_size"]  # noqa: E731 - node-<i>
    racks = {}
    for pod, n in pod_nodes.items():
        racks.setdefault(int(pod.rsplit("-", 1)[1]) // size["gang_size"], set()).add(rack_of(n))
    return sum(1 for r in racks.values() if len(r) > 1)


# --- report --------------------------------------------------------------------------------------
def machine_info():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu_model": model, "kernel": platform.release(),
            "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)}


def summarize(runs):
    """Per workload: the median of each scheduler's runs, and gantry/upstream ratios."""
    out = {}
    for w in sorted({r["workload"] for r in runs}):
        entry = {}
        for s in (UPSTREAM, GANTRY):
            rs = [r for r in runs if r["workload"] == w and r["scheduler"] == s]
            if not rs:
                continue

            def med(key):
                vals = sorted(r[key] for r in rs if r.get(key) is not None)
                return vals[len(vals) // 2] if vals else None
            entry[s] = {"runs": len(rs), "pods_per_second": med("pods_per_second"),
                        "sample_average": med("sample_average"),
                        "cpu_seconds": med("cpu_seconds"), "cpu_seconds_per_1000_pods": med("cpu_seconds_per_1000_pods"),
                        "peak_rss_mib": med("peak_rss_mib"), "apiserver_cpu_seconds": med("apiserver_cpu_seconds"),
                        "events_scheduled": med("events_scheduled")}
        if UPSTREAM in entry and GANTRY in entry:
            u, g = entry[UPSTREAM], entry[GANTRY]
            ratio = lambda a, b: round(a / b, 2) if a and b else None  # noqa: E731
            entry["ratios"] = {"throughput": ratio(g["pods_per_second"], u["pods_per_second"]),
                               "cpu": ratio(g["cpu_seconds"], u["cpu_seconds"]),
                               "peak_rss": ratio(g["peak_rss_mib"], u["peak_rss_mib"]),
                               "throughput_target": TARGETS.get(w)}
        out[w] = entry
    return out


def validate_report(report):
    """Raises AssertionError unless the report has every field the docs promise."""
    assert report["version"] == REPORT_VERSION
    for key in ("date", "machine", "load_before", "load_after", "mode", "runs", "summary"):
        assert key in report, key
    assert report["runs"], "no runs"
    for r in report["runs"]:
        for key in ("workload", "scheduler", "measured_pods", "bound", "pods_per_second", "samples",
                    "sample_stats", "cpu_seconds", "peak_rss_mib", "first_to_last_seconds", "ok", "events",
                    "events_scheduled"):
            assert key in r, f"run {r.get('workload')}/{r.get('scheduler')} lacks {key}"
        assert isinstance(r["samples"], list) and sum(r["samples"]) == r["bound"], r["samples"]
        assert isinstance(r["events"], dict), r["events"]
    for w, e in report["summary"].items():
        expected = set(report["schedulers"])
        assert expected <= set(e), f"summary of {w} incomplete"
        assert "ratios" in e or len(expected) < 2, f"summary of {w} has no ratios"


def print_table(report):
    print()
    print(f"{'workload':<16} {'scheduler':<9} {'pods':>6} {'pods/s':>8} {'avg 1s':>8} {'p50 1s':>7} "
          f"{'CPU s':>7} {'CPU/1k':>7} {'RSS MiB':>8} {'apisrv CPU':>10} {'1st bind':>8} {'load':>6} "
          f"{'Scheduled ev':>12} {'other events':<24}")
    for r in report["runs"]:
        st = r.get("sample_stats") or {}
        print(f"{r['workload']:<16} {r['scheduler']:<9} {r['bound']:>6} {str(r['pods_per_second']):>8} "
              f"{str(st.get('Average')):>8} {str(st.get('Perc50')):>7} {str(r['cpu_seconds']):>7} "
              f"{str(r['cpu_seconds_per_1000_pods']):>7} {str(r['peak_rss_mib']):>8} "
              f"{str(r['apiserver_cpu_seconds']):>10} {str(r['start_to_first_bind_seconds']):>8} "
              f"{str((r.get('load_during_run') or {}).get('mean')):>6} {str(r.get('events_scheduled')):>12} "
              f"{','.join(f'{k}={v}' for k, v in (r.get('events') or {}).items() if k != 'Scheduled') or '-':<24}")
    print()
    for w, e in report["summary"].items():
        if "ratios" in e:
            ra = e["ratios"]
            print(f"{w}: Gantry/upstream throughput {ra['throughput']}x (target >= {ra['throughput_target']}x), "
                  f"CPU {ra['cpu']}x, peak RSS {ra['peak_rss']}x")


def write_json(path, report):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gantry", required=True, help="the gantry binary (build/bin/gantry)")
    ap.add_argument("--quick", action="store_true", help="small sizes (CI smoke test)")
    ap.add_argument("--workloads", default=",".join(SIZES), help="comma separated subset of " + ",".join(SIZES))
    ap.add_argument("--repeat", type=int, default=1, help="runs per scheduler and workload (alternating order)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per run to bind everything")
    ap.add_argument("--json", help="write the report here (rewritten after every run)")
    ap.add_argument("--size", action="append", default=[], metavar="KEY=VALUE",
                    help="override a size (nodes, init_pods, pods, devices, rack_size, gangs, gang_size)")
    ap.add_argument("--schedulers", default=f"{UPSTREAM},{GANTRY}",
                    help=f"comma separated subset of {UPSTREAM},{GANTRY} (one alone: no ratios)")
    ap.add_argument("--gantry-arg", action="append", default=[], metavar="ARG",
                    help="an extra command-line argument for gantry (repeatable)")
    ap.add_argument("--keep-logs", metavar="DIR",
                    help="copy each run's scheduler log to DIR/<workload>-<scheduler>-<n>.log")
    ap.add_argument("--apiserver-profile", metavar="DIR",
                    help="run kube-apiserver with --profiling=true and save a CPU profile of each run, taken "
                         "from the first bind, to DIR/<workload>-<scheduler>-<n>.pprof")
    ap.add_argument("--apiserver-profile-seconds", type=int, default=15, metavar="S",
                    help="length of each --apiserver-profile profile (default 15)")
    ap.add_argument("--gantry-wrapper", default="",
                    help="a command gantry runs under, e.g. 'heaptrack -o /tmp/h' (CPU and RSS are then "
                         "the wrapper's)")
    args = ap.parse_args()

    gantry_e2e.require_binaries()  # exits 77 (skip) without control-plane binaries
    if not os.access(args.gantry, os.X_OK):
        sys.exit(f"--gantry {args.gantry}: not an executable")
    workloads = [w for w in args.workloads.split(",") if w]
    for w in workloads:
        if w not in SIZES:
            sys.exit(f"--workloads: unknown workload {w!r} (known: {', '.join(SIZES)})")
    schedulers = [s for s in args.schedulers.split(",") if s]
    if not schedulers or any(s not in SCHEDULER_NAMES for s in schedulers):
        sys.exit(f"--schedulers {args.schedulers!r}: want a subset of {UPSTREAM},{GANTRY}")
    mode = "quick" if args.quick else "full"
    sizes = {w: dict(SIZES[w][mode]) for w in workloads}
    for kv in args.size:
        key, sep, value = kv.partition("=")
        if not sep or not value.isdigit() or int(value) <= 0:
            sys.exit(f"--size {kv!r}: want KEY=POSITIVE_INTEGER")
        hit = [w for w in workloads if key in sizes[w]]
        if not hit:
            sys.exit(f"--size {kv!r}: no selected workload has a size {key!r}")
        for w in hit:
            sizes[w][key] = int(value)
    timeout = args.timeout or (120 if args.quick else 1800)
    gantry_cmd = args.gantry_wrapper.split() + [args.gantry], args.gantry_arg
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(f"killed by signal {signum}"))

    report = {"version": REPORT_VERSION, "mode": mode,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "machine": machine_info(), "load_before": os.getloadavg(), "qps": QPS, "burst": BURST,
              "schedulers": schedulers, "gantry_args": args.gantry_arg,
              "gantry": os.path.abspath(args.gantry), "control_plane_bin": gantry_e2e.binary_dir(),
              "runs": []}
    failed = False
    for w in workloads:
        for rep in range(args.repeat):
            order = [UPSTREAM, GANTRY] if rep % 2 == 0 else [GANTRY, UPSTREAM]
            for s in [s for s in order if s in schedulers]:
                try:
                    profile = (args.apiserver_profile, args.apiserver_profile_seconds) if args.apiserver_profile else None
                    r = run_one(w, sizes[w], s, gantry_cmd, timeout, args.keep_logs, profile)
                except Exception as e:  # noqa: BLE001 - one failed run fails the benchmark
                    log(f"{w}/{s}: FAILED: {e}")
                    r = {"workload": w, "scheduler": s, "ok": False, "error": str(e)}
                r["load_after_run"] = os.getloadavg()
                report["runs"].append(r)
                failed |= not r["ok"]
                if args.json:  # keep what was measured even if a later run is interrupted
                    write_json(args.json, report)
    report["load_after"] = os.getloadavg()
    report["summary"] = summarize([r for r in report["runs"] if r["ok"]])
    if args.json:
        write_json(args.json, report)
        log(f"report written to {args.json}")
    if not failed:
        try:
            validate_report(report)
        except AssertionError as e:
            log(f"malformed report: {e}")
            failed = True
        print_table(report)
    log("FAILED" if failed else "PASSED")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
