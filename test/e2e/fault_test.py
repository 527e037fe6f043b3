#!/usr/bin/env python3
"""Fault suite: the real `gantry` binary (deployed as deploy/ deploys it) schedules a mixed workload
against a real control plane while faults are injected, then invariants are counted from the API
server's audit log and from the API. Gantry reaches the API server only through FaultProxy
(fault_proxy.py), a TLS-terminating proxy that can stall, freeze, throttle or reset chosen requests.

    fault_test.py SCENARIO GANTRY [--results DIR]   one scenario (own control plane); exits 1 when
                                                     an invariant is non-zero; writes DIR/SCENARIO.json
    fault_test.py table [--results DIR]              prints the table of the rows in DIR and writes
                                                     it to DIR/fault-table.md (a report: the
                                                     scenario tests are the ones that fail)

Scenarios: see SCENARIOS below and docs/reliability.md ("Fault suite").
"""

import base64
import calendar
import json
import os
import signal
import sys
import threading
import time
import urllib.request
from collections import Counter, defaultdict

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gantry_test as gt  # noqa: E402
from fault_proxy import FaultProxy, match_continue, match_path, match_watch  # noqa: E402
from gantry_e2e import ApiError, log, require_binaries, run  # noqa: E402

NS = "fault"
SCHEDULER = gt.SCHEDULER
SA_USER = gt.SA_USER
LEASE_NAME = "gantry-scheduler"
LEASE_PATH = f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{LEASE_NAME}"
DRIVER = "gpu.example.com"
UPSTREAM_USER = "system:kube-scheduler"
LEASE_S, RENEW_S, RETRY_S = 6, 4, 1
INVARIANTS = ("lost", "unbound", "bound_twice", "gangs_below_quorum", "devices_twice",
              "nodes_overcommitted", "writes_without_lease", "claims_reserved_wrong")

AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
    "rules": [
        # Lease writes with their body: holderIdentity and acquireTime of every acquisition.
        {"level": "Request", "users": [SA_USER], "verbs": ["create", "update"],
         "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
        {"level": "Metadata", "users": [SA_USER, UPSTREAM_USER],
         "verbs": ["create", "update", "patch", "delete"]},
        {"level": "Metadata", "verbs": ["create"], "resources": [{"group": "", "resources": ["pods/binding"]}]},
        {"level": "None"},
    ],
}


def ts(s):
    """RFC 3339 (micro)time in UTC -> epoch seconds."""
    s = s.rstrip("Z")
    frac = 0.0
    if "." in s:
        s, f = s.split(".")
        frac = float("0." + f)
    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%S")) + frac


def quantity(q):
    """A Kubernetes quantity (the forms this suite uses) -> float."""
    q = str(q)
    for suffix, mult in (("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30), ("Ti", 2**40), ("m", 1e-3),
                         ("k", 1e3), ("M", 1e6), ("G", 1e9)):
        if q.endswith(suffix):
            return float(q[:-len(suffix)]) * mult
    return float(q)


# --- the cluster and the workload ------------------------------------------------------------

class Workload:
    """Nodes with GPUs (DRA ResourceSlices), PriorityClasses, a ResourceClaimTemplate; pods of three
    kinds: plain (alternating priorities), with a claim from the template, gang members (PodGroups
    with minCount = size). Sized so that everything fits: after the fault every pod must bind."""

    def __init__(self, c, nodes=6, gpus=4, node_cpu="6"):
        self.c = c
        self.pods = []  # names this suite created with schedulerName gantry-scheduler
        self.upstream_pods = []  # names for default-scheduler
        self.groups = {}  # name -> minCount
        self.created = 0
        self.nodes = [f"n-{i}" for i in range(nodes)]
        for n in self.nodes:
            c.create_node(n, cpu=node_cpu, memory="64Gi")
        c.create_namespace(NS)
        c.wait("namespace usable", lambda: c.get(f"/api/v1/namespaces/{NS}/pods") is not None)
        for name, value in (("low", 100), ("high", 1000)):
            c.post("/apis/scheduling.k8s.io/v1/priorityclasses", {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": f"fault-{name}"}, "value": value})
        c.post("/apis/resource.k8s.io/v1/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}})
        for n in self.nodes:
            c.post("/apis/resource.k8s.io/v1/resourceslices", {
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpus"},
                "spec": {"driver": DRIVER, "nodeName": n, "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": f"gpu-{i}"} for i in range(gpus)]}})
        c.post(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaimtemplates", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}})

    def _pod(self, name, cpu="200m", scheduler=SCHEDULER, extra=None):
        self.c.wait(f"create pod {name}", lambda: self._try_create(name, cpu, scheduler, extra), timeout=60,
                    interval=0.5)
        (self.pods if scheduler == SCHEDULER else self.upstream_pods).append(name)
        self.created += 1

    def _try_create(self, name, cpu, scheduler, extra):
        try:
            return self.c.create_pod(NS, name, scheduler_name=scheduler, cpu=cpu, memory="128Mi", extra_spec=extra)
        except ApiError as e:
            if e.status == 409:
                return True  # created by an earlier attempt whose answer was lost
            raise
        except OSError:
            return None  # API server down (apiserver-kill): retry

    def plain(self, prefix, n):
        for i in range(n):
            self._pod(f"{prefix}-{i}", extra={"priorityClassName": "fault-high" if i % 3 == 0 else "fault-low"})

    def dra(self, prefix, n, scheduler=SCHEDULER, template="one-gpu"):
        for i in range(n):
            self._pod(f"{prefix}-{i}", scheduler=scheduler, extra={
                "priorityClassName": "fault-high" if i % 2 else "fault-low",
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}]})

    def device_pool(self, driver, node, devices, template=None):
        """A DeviceClass for `driver`, its slice on `node` with `devices` devices (attribute idx = i),
        and optionally a one-device ResourceClaimTemplate named `template`."""
        c = self.c
        c.post("/apis/resource.k8s.io/v1/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": driver},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{driver}'"}}]}})
        c.post("/apis/resource.k8s.io/v1/resourceslices", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{driver}"},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": f"{node}-{driver}", "generation": 1,
                                                                  "resourceSliceCount": 1},
                     "devices": [{"name": f"dev-{i}", "attributes": {"idx": {"int": i}}}
                                 for i in range(devices)]}})
        if template:
            c.post(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaimtemplates", {
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": template},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": driver}}]}}}})

    def gang(self, name, size):
        self.c.wait(f"create podgroup {name}", lambda: self._try_group(name, size), timeout=60, interval=0.5)
        self.groups[name] = size
        for i in range(size):
            self._pod(f"{name}-{i}", cpu="500m", extra={"schedulingGroup": {"podGroupName": name},
                                                       "priorityClassName": "fault-high"})

    def _try_group(self, name, size):
        try:
            return self.c.post(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups", {
                "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
                "spec": {"schedulingPolicy": {"gang": {"minCount": size}}}})
        except ApiError as e:
            if e.status == 409:
                return True
            raise
        except OSError:
            return None

    def mixed(self, tag, plain=14, dra=5, gangs=1, gang_size=4):
        """One wave of the standard mix."""
        self.plain(f"{tag}-p", plain)
        self.dra(f"{tag}-d", dra)
        for g in range(gangs):
            self.gang(f"{tag}-g{g}", gang_size)

    def all_pods(self):
        return self.pods + self.upstream_pods


class Monitor:
    """Polls claims and pods while the scenario runs: devices in two allocations, nodes whose bound
    pods request more than allocatable (each counted once per device / node)."""

    def __init__(self, c, interval=1.0):
        self.c = c
        self.interval = interval
        self.devices_twice = {}  # device -> claim names
        self.overcommitted = {}  # node -> what
        self.polls = 0
        self.stop = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop.wait(self.interval):
            try:
                self.poll()
            except (ApiError, OSError):
                pass  # API server down for a moment

    def poll(self):
        claims = self.c.get(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims")["items"]
        pods = self.c.get("/api/v1/pods")["items"]
        nodes = self.c.get("/api/v1/nodes")["items"]
        self.check(claims, pods, nodes)
        self.polls += 1

    def check(self, claims, pods, nodes):
        owners = defaultdict(set)
        for rc in claims:
            alloc = (rc.get("status") or {}).get("allocation")
            for r in ((alloc or {}).get("devices") or {}).get("results") or []:
                owners[(r["driver"], r["pool"], r["device"])].add(rc["metadata"]["name"])
        for dev, names in owners.items():
            if len(names) > 1 and dev not in self.devices_twice:
                self.devices_twice[dev] = sorted(names)
                log(f"INVARIANT devices_twice: {'/'.join(dev)} allocated to {sorted(names)}")
        used = defaultdict(lambda: Counter())
        for p in pods:
            node = p["spec"].get("nodeName")
            if not node or p["status"].get("phase") in ("Succeeded", "Failed"):
                continue
            used[node]["pods"] += 1
            for ct in p["spec"]["containers"]:
                for k, v in ((ct.get("resources") or {}).get("requests") or {}).items():
                    used[node][k] += quantity(v)
        for n in nodes:
            name = n["metadata"]["name"]
            alloc = n["status"].get("allocatable") or {}
            over = [f"{k} {used[name][k]:g} > {quantity(alloc[k]):g}" for k in ("cpu", "memory", "pods")
                    if k in alloc and used[name][k] > quantity(alloc[k]) + 1e-9]
            if over and name not in self.overcommitted:
                self.overcommitted[name] = over
                log(f"INVARIANT nodes_overcommitted: {name}: {', '.join(over)}")

    def close(self):
        self.stop.set()
        self.t.join(timeout=10)


# --- Gantry replicas behind the proxy --------------------------------------------------------

class Fleet:
    """Gantry replicas, each through its own proxy listener (tag = replica name + incarnation, which
    the proxy appends to the User-Agent: the audit log tells replicas apart). A replica that exits
    is started again after a second, as the Deployment's kubelet would (restarts are counted)."""

    def __init__(self, cp, binary, proxy, leader_elect, lease=None):
        self.cp, self.binary, self.proxy = cp, binary, proxy
        gt.apply_deploy_rbac(cp.client)
        self.token = cp.client.service_account_token(gt.SA_NS, gt.SA_NAME)
        le = {"leaderElect": leader_elect}
        if leader_elect:
            le.update(lease or {"leaseDuration": f"{LEASE_S}s", "renewDeadline": f"{RENEW_S}s",
                                "retryPeriod": f"{RETRY_S}s"})
        self.lease = le
        self.procs = {}  # replica name -> GantryProcess (current incarnation)
        self.tags = {}  # replica name -> current tag
        self.incarnation = Counter()
        self.exits = []  # (tag, exit code)
        self.paused = set()
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.t = threading.Thread(target=self._supervise, daemon=True)
        self.t.start()

    def start(self, name):
        self.incarnation[name] += 1
        tag = f"{name}{self.incarnation[name]}"
        port = self.proxy.listen(tag)
        kc = self.cp.write_kubeconfig(os.path.join(self.cp.dir, f"{tag}.kubeconfig"), self.token,
                                      server=f"https://127.0.0.1:{port}")
        cfg = gt.gantry_config(self.cp, kc, name=f"{tag}.yaml", lease=self.lease)
        with open(cfg) as f:
            text = f.read()
        # deploy/'s client limits (50/100) would stretch the suite; a large cluster raises them too.
        text = text.replace("qps: 50", "qps: 500").replace("burst: 100", "burst: 1000")
        with open(cfg, "w") as f:
            f.write(text)
        g = gt.start_gantry(self.cp, self.binary, cfg, name=tag)
        with self.lock:
            self.procs[name], self.tags[name] = g, tag
        return g

    def _supervise(self):
        while not self.stopping.wait(0.5):
            with self.lock:
                dead = [(n, g) for n, g in self.procs.items() if not g.alive()]
            for n, g in dead:
                if self.stopping.is_set():
                    return
                self.exits.append((self.tags[n], g.proc.returncode))
                log(f"{self.tags[n]} exited with {g.proc.returncode}; last lines:\n" + "\n".join(g.lines[-8:]))
                time.sleep(1)
                if not self.stopping.is_set():
                    self.start(n)

    def leader(self):
        """(replica name, GantryProcess) of the current leader, or (None, None)."""
        with self.lock:
            items = list(self.procs.items())
        for n, g in items:
            if n not in self.paused and g.alive() and g.is_leader(LEASE_NAME):
                return n, g
        return None, None

    def wait_leader(self, timeout=60):
        return self.cp.client.wait("a gantry leader", lambda: self.leader()[0], timeout=timeout)

    def all_procs(self):
        with self.lock:
            return list(self.procs.values())

    def stop(self):
        self.stopping.set()
        self.t.join(timeout=5)
        for g in self.all_procs():
            if g.proc.poll() is None:
                try:
                    os.kill(g.proc.pid, signal.SIGCONT)
                except OSError:
                    pass
            t = time.monotonic()
            rc = g.stop(timeout=20)
            took = time.monotonic() - t
            if took > 5:
                log(f"{g.name} took {took:.1f}s to stop on SIGTERM (exit {rc}); last lines:\n" + "\n".join(g.lines[-6:]))


# --- invariants ------------------------------------------------------------------------------

def count_invariants(cp, wl, monitor, fleet):
    c = cp.client
    res = {}
    events = cp.audit_events()
    pods = {p["metadata"]["name"]: p for p in c.get(f"/api/v1/namespaces/{NS}/pods")["items"]}
    claims = c.get(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims")["items"]
    monitor.check(claims, list(pods.values()), c.get("/api/v1/nodes")["items"])

    deleted_by_gantry = {e["objectRef"]["name"] for e in events
                         if e.get("user", {}).get("username") == SA_USER and e["verb"] == "delete"
                         and e.get("objectRef", {}).get("resource") == "pods"
                         and e.get("responseStatus", {}).get("code", 500) < 300}
    lost, unbound = [], []
    for n in wl.all_pods():
        p = pods.get(n)
        if p is None:
            if n not in deleted_by_gantry:
                lost.append(f"{n}: gone")
            continue
        if p["spec"].get("nodeName"):
            continue
        cond = gt.condition(p, "PodScheduled")
        if not cond or cond.get("status") != "False" or not cond.get("reason"):
            lost.append(f"{n}: unbound, PodScheduled={cond}")
        else:
            unbound.append(f"{n}: {cond['reason']}: {cond.get('message', '')[:160]}")
    res["lost"], res["unbound"] = lost, unbound

    binds = Counter()
    for e in events:
        ref = e.get("objectRef", {})
        if (e["verb"] == "create" and ref.get("subresource") == "binding" and ref.get("namespace") == NS
                and e.get("responseStatus", {}).get("code") == 201):
            binds[ref["name"]] += 1
    res["bound_twice"] = [f"{n}: {k} successful Bindings" for n, k in binds.items() if k > 1]

    res["gangs_below_quorum"] = []
    for g, m in wl.groups.items():
        b = sum(1 for i in range(m) if (pods.get(f"{g}-{i}") or {}).get("spec", {}).get("nodeName"))
        if 0 < b < m:
            res["gangs_below_quorum"].append(f"{g}: {b}/{m} bound")
    def allocators(claim):  # who wrote the claim's status (user agent), for the report
        return sorted({e.get("userAgent", "?").split(" ")[0].split("/")[0] + (
            " " + e["userAgent"].rsplit("fault-proxy/", 1)[1] if "fault-proxy/" in e.get("userAgent", "") else "")
            for e in events if e.get("objectRef", {}).get("resource") == "resourceclaims"
            and e["objectRef"].get("subresource") == "status" and e["objectRef"].get("name") == claim
            and e["verb"] in ("update", "patch") and e.get("responseStatus", {}).get("code", 500) < 300})
    res["devices_twice"] = [f"{'/'.join(d)}: " + ", ".join(f"{n} (status written by {allocators(n)})" for n in names)
                            for d, names in monitor.devices_twice.items()]
    res["nodes_overcommitted"] = [f"{n}: {', '.join(w)}" for n, w in monitor.overcommitted.items()]
    res["writes_without_lease"] = writes_without_lease(events) if fleet.lease["leaderElect"] else []

    wrong = []
    by_uid = {p["metadata"]["uid"]: p for p in pods.values()}
    for rc in claims:
        name = rc["metadata"]["name"]
        st = rc.get("status") or {}
        reserved = {r["uid"] for r in st.get("reservedFor") or [] if r.get("resource") == "pods"}
        consumers = set()
        for p in pods.values():
            if not p["spec"].get("nodeName"):
                continue
            names = {s.get("resourceClaimName") for s in p["status"].get("resourceClaimStatuses") or []}
            names |= {r.get("resourceClaimName") for r in p["spec"].get("resourceClaims") or []}
            if name in names:
                consumers.add(p["metadata"]["uid"])
        if consumers - reserved:
            wrong.append(f"{name}: bound consumers not in reservedFor: "
                         f"{sorted(by_uid[u]['metadata']['name'] for u in consumers - reserved)}")
        elif reserved - consumers:
            wrong.append(f"{name}: reservedFor pods not bound to it: "
                         f"{sorted((by_uid.get(u) or {}).get('metadata', {}).get('name', u) for u in reserved - consumers)}")
        elif (reserved or consumers) and not st.get("allocation"):
            wrong.append(f"{name}: reserved/consumed but not allocated")
    res["claims_reserved_wrong"] = wrong
    return res


def writes_without_lease(events):
    """Writes (accepted, not to the Lease) by a replica while the Lease named another holder: the
    holder at time t is the one of the last acquisition whose acquireTime <= t."""
    def tag_of(e):
        ua = e.get("userAgent", "")
        return ua.rsplit("fault-proxy/", 1)[1].strip() if "fault-proxy/" in ua else None

    acquisitions, holder_tag, prev = [], {}, None
    lease_writes = sorted((e for e in events if e.get("objectRef", {}).get("resource") == "leases"
                           and e.get("objectRef", {}).get("name") == LEASE_NAME
                           and e.get("responseStatus", {}).get("code") in (200, 201)),
                          key=lambda e: e["stageTimestamp"])
    for e in lease_writes:
        spec = (e.get("requestObject") or {}).get("spec") or {}
        h = spec.get("holderIdentity") or ""
        if h:
            holder_tag.setdefault(h, tag_of(e))
        if h != prev:
            t = ts(spec["acquireTime"]) if h and spec.get("acquireTime") else ts(e["requestReceivedTimestamp"])
            acquisitions.append((t, h))
            log(f"lease: {h or '(released)'} ({holder_tag.get(h)}) from {spec.get('acquireTime') or e['requestReceivedTimestamp']}")
            prev = h
    bad = []
    for e in events:
        ref = e.get("objectRef", {})
        if (e.get("user", {}).get("username") != SA_USER or ref.get("resource") == "leases"
                or e["verb"] not in ("create", "update", "patch", "delete")
                or e.get("responseStatus", {}).get("code", 500) >= 300):
            continue
        t, tag = ts(e["requestReceivedTimestamp"]), tag_of(e)
        holder = None
        for at, h in acquisitions:
            if at <= t:
                holder = h
        if holder and holder_tag.get(holder) != tag:
            what = ref.get("resource", "") + ("/" + ref["subresource"] if ref.get("subresource") else "")
            bad.append(f"{e['requestReceivedTimestamp']} {tag} {e['verb']} {what} {ref.get('name')} "
                       f"(holder {holder_tag.get(holder)})")
    return bad


# --- scenarios -------------------------------------------------------------------------------

class Scenario:
    def __init__(self, cp, binary, replicas=1, leader_elect=False, nodes=6, gpus=4):
        self.cp, self.c = cp, cp.client
        self.t0 = time.monotonic()
        self.wl = Workload(cp.client, nodes=nodes, gpus=gpus)
        port = int(cp.cluster_env()["APISERVER_PORT"])
        self.proxy = FaultProxy(cp.dir, "127.0.0.1", port, cp.ca)
        self.fleet = Fleet(cp, binary, self.proxy, leader_elect)
        self.faults = []
        self.monitor = Monitor(cp.client)
        for i in range(replicas):
            self.fleet.start("ab"[i])
        for g in self.fleet.all_procs():
            g.wait_ready()
        if leader_elect:
            self.fleet.wait_leader()

    def fault(self, what):
        log(f"FAULT: {what}")
        self.faults.append(what)

    def settle(self, timeout=45):
        """Waits until every pod of the workload is bound (or the timeout)."""
        c = self.c

        def all_bound():
            items = c.get(f"/api/v1/namespaces/{NS}/pods")["items"]
            bound = {p["metadata"]["name"] for p in items if p["spec"].get("nodeName")}
            return all(n in bound for n in self.wl.all_pods())
        try:
            c.wait("every pod bound", all_bound, timeout=timeout, interval=1)
        except TimeoutError:
            log("not every pod bound in time")
        time.sleep(2)  # let reservations and the last writes land

    def finish(self, name):
        self.monitor.close()
        res = count_invariants(self.cp, self.wl, self.monitor, self.fleet)
        self.fleet.stop()
        self.proxy.close()
        row = {"scenario": name, "pods": len(self.wl.all_pods()), "faults": "; ".join(self.faults),
               "proxy": dict(self.proxy.counts), "restarts": len(self.fleet.exits),
               "seconds": round(time.monotonic() - self.t0, 1), "polls": self.monitor.polls}
        for k in INVARIANTS:
            row[k] = len(res[k])
            for line in res[k][:25]:
                log(f"INVARIANT {k}: {line}")
        row["passed"] = all(row[k] == 0 for k in INVARIANTS)
        log(f"row: {json.dumps(row)}")
        return row


def creator(fn):
    """Runs fn in a thread; returns a join function that re-raises its failure."""
    err = []

    def body():
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in join
            err.append(e)
    t = threading.Thread(target=body, daemon=True)
    t.start()

    def join(timeout=300):
        t.join(timeout)
        if err:
            raise err[0]
    return join


def s_watch_blackhole(cp, binary):
    s = Scenario(cp, binary)
    s.wl.mixed("w0")
    join = creator(lambda: [s.wl.mixed(f"w{i}") for i in range(1, 4)])
    time.sleep(1.5)  # in the middle of the burst
    start = time.monotonic()
    n = s.proxy.blackhole(match_watch("/api/v1/pods"), seconds=45)
    s.fault(f"pods watch blackholed 45 s ({n} open stream(s))")
    join()
    time.sleep(max(0, 46 - (time.monotonic() - start)))  # the blackhole runs out
    s.settle()
    return s


def s_watch_freeze(cp, binary):
    s = Scenario(cp, binary)
    s.wl.mixed("w0")
    time.sleep(2)
    n = s.proxy.freeze(match_watch("/apis/resource.k8s.io/v1/resourceclaims"))
    s.fault(f"resourceclaims watch frozen without FIN ({n} stream(s))")
    for i in range(1, 4):
        s.wl.mixed(f"w{i}")
    # Gantry restarts a watch that delivered neither an event nor a bookmark for two bookmark
    # intervals (130 s, docs/client.md); the claims created meanwhile arrive with the new watch.
    s.settle(timeout=200)
    return s


def kill_apiserver(s):
    pid = s.cp.component_pid("kube-apiserver")
    assert pid, "kube-apiserver not running"
    os.kill(pid, signal.SIGKILL)
    while os.path.exists(f"/proc/{pid}"):
        time.sleep(0.05)
    s.fault(f"kube-apiserver SIGKILLed (pid {pid})")
    time.sleep(2)
    t = time.monotonic()
    s.cp._sh("up")
    log(f"kube-apiserver back after {time.monotonic() - t:.1f}s")


def s_apiserver_kill(cp, binary):
    s = Scenario(cp, binary, replicas=2, leader_elect=True)
    s.wl.mixed("w0")
    join = creator(lambda: [s.wl.mixed(f"w{i}") for i in range(1, 4)])
    time.sleep(1)
    kill_apiserver(s)
    time.sleep(5)
    kill_apiserver(s)
    join()
    s.settle(timeout=60)
    return s


def etcd_post(cp, path, body):
    url = f"http://127.0.0.1:{cp.cluster_env()['ETCD_PORT']}{path}"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def compact_etcd(s):
    """Advances the revision (one write) and compacts etcd at the current revision."""
    s.c.post(f"/api/v1/namespaces/{NS}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                                     "metadata": {"generateName": "bump-"}})
    rev = int(etcd_post(s.cp, "/v3/kv/range", {"key": base64.b64encode(b"/registry/").decode(),
                                                "limit": 1})["header"]["revision"])
    etcd_post(s.cp, "/v3/kv/compaction", {"revision": rev, "physical": True})
    s.fault(f"etcd compacted at revision {rev}")


def s_compaction(cp, binary):
    # More nodes than one LIST page (Gantry lists with limit=500 and has no knob for it).
    c = cp.client
    for i in range(510):
        c.create_node(f"filler-{i:03d}", cpu="2", memory="4Gi", pods="10")
    return CompactionScenario(cp, binary)


class CompactionScenario(Scenario):
    def __init__(self, cp, binary):
        # Gantry is started by hand below: the first LIST page of nodes is held until etcd compacted.
        self.cp, self.c = cp, cp.client
        self.t0 = time.monotonic()
        self.wl = Workload(cp.client)
        port = int(cp.cluster_env()["APISERVER_PORT"])
        self.proxy = FaultProxy(cp.dir, "127.0.0.1", port, cp.ca)
        self.fleet = Fleet(cp, binary, self.proxy, leader_elect=False)
        self.faults = []
        self.monitor = Monitor(cp.client)
        self.wl.mixed("w0", dra=4)
        for round_ in range(2):
            rule = self.proxy.hold(match_continue("/api/v1/nodes"))
            if round_ == 0:
                g = self.fleet.start("a")
            else:
                g = self.fleet.procs["a"]
                g.kill()  # the supervisor starts it again: a fresh list
                self.fault("gantry SIGKILLed to force a fresh LIST")
            assert rule.kw["seen"].wait(60), "no continue request for nodes seen"
            compact_etcd(self)

            def answered():
                return sum(v for k, v in self.proxy.counts.items() if k.startswith("continue_"))
            before, gone = answered(), self.proxy.counts["continue_410"]
            rule.kw["gate"].set()
            self.c.wait("the held page answered", lambda: answered() > before, timeout=30)
            self.fault(f"the held continue token answered {'410' if self.proxy.counts['continue_410'] > gone else '200'}")
            self.c.wait("gantry ready", lambda: self.fleet.procs["a"].ready(), timeout=90)
            self.wl.mixed(f"w{2 * round_ + 1}")
            self.wl.mixed(f"w{2 * round_ + 2}")
        self.settle()


def paced(wl, waves, every):
    """Creates waves 1..waves of the mix, one every `every` seconds, in a thread."""
    def body():
        for i in range(1, waves + 1):
            t = time.monotonic()
            wl.mixed(f"w{i}", dra=3)
            time.sleep(max(0, every - (time.monotonic() - t)))
    return creator(body)


def s_leader_pause(cp, binary):
    s = Scenario(cp, binary, replicas=2, leader_elect=True)
    s.wl.mixed("w0", dra=3)
    # Pods keep coming before and during the pause, and a wave right after it: the woken leader
    # still believes it leads until its next renewal fails, while the new leader schedules too.
    join = paced(s.wl, waves=3, every=2.5)
    time.sleep(1)
    name, g = s.fleet.leader()
    assert g, "no leader"
    tag = s.fleet.tags[name]
    stopped = time.monotonic()
    os.kill(g.proc.pid, signal.SIGSTOP)
    s.fleet.paused.add(name)
    time.sleep(LEASE_S + 3)
    os.kill(g.proc.pid, signal.SIGCONT)
    s.fault(f"leader {tag} SIGSTOPped for {time.monotonic() - stopped:.1f} s (leaseDuration {LEASE_S} s)")
    s.wl.mixed("wake", dra=3)
    s.fleet.paused.discard(name)
    join()
    s.c.wait(f"{tag} gives up the lease", lambda: s.fleet.tags[name] != tag or not g.is_leader(LEASE_NAME),
             timeout=RENEW_S + 10)
    s.settle()
    return s


def s_lease_throttled(cp, binary):
    s = Scenario(cp, binary, replicas=2, leader_elect=True)
    s.wl.mixed("w0", dra=3)
    join = paced(s.wl, waves=4, every=4)
    time.sleep(1)
    name, g = s.fleet.leader()
    tag = s.fleet.tags[name]
    rule = s.proxy.throttle(match_path(LEASE_PATH), seconds=20, retry_after=3, tag=tag)
    time.sleep(20)
    s.fault(f"429 + Retry-After: 3 on {tag}'s lease requests for 20 s ({rule.hits} answered)")
    join()
    s.c.wait(f"{tag} not leading", lambda: s.fleet.tags[name] != tag or not g.is_leader(LEASE_NAME),
             timeout=RENEW_S + 10)
    s.settle()
    return s


def s_binding_denied(cp, binary):
    s = Scenario(cp, binary)
    c = s.c
    victim = "w1-g0-1"
    c.post("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "deny-binding"},
        "spec": {"failurePolicy": "Fail",
                 "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                         "operations": ["CREATE"], "resources": ["pods/binding"]}]},
                 "validations": [{"expression": f"object.metadata.name != '{victim}'",
                                  "message": "fault suite: binding denied"}]}})
    c.post("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "deny-binding"},
        "spec": {"policyName": "deny-binding", "validationActions": ["Deny"],
                 "matchResources": {"namespaceSelector": {}}}})
    time.sleep(2)  # the policy reaches the admission plugin's informer
    denied_from = time.monotonic()
    s.fault(f"ValidatingAdmissionPolicy denies the Binding of {victim} for 20 s")
    s.wl.mixed("w0")
    s.wl.mixed("w1")
    join = creator(lambda: [s.wl.mixed(f"w{i}") for i in range(2, 4)])
    time.sleep(max(0, 20 - (time.monotonic() - denied_from)))
    c.delete("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/deny-binding")
    c.delete("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/deny-binding")
    join()
    s.settle()
    denied = sum(1 for e in cp.audit_events() if e["verb"] == "create"
                 and e.get("objectRef", {}).get("subresource") == "binding"
                 and e["objectRef"].get("name") == victim and e.get("responseStatus", {}).get("code") != 201)
    s.fault(f"{denied} Binding(s) of {victim} denied")
    assert denied > 0, "the policy denied nothing: the scenario did not exercise the fault"
    # While the victim's Binding was denied its gang stood at 3 of 4: the PodGroup said so (a
    # Warning event and the condition) and, once the victim bound, the condition turned False.
    group = victim.rsplit("-", 1)[0]
    pg = c.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups/{group}")
    cond = next((x for x in (pg.get("status") or {}).get("conditions") or []
                 if x.get("type") == "gantry.dev/BoundBelowQuorum"), None)
    events = [e for e in c.get(f"/apis/events.k8s.io/v1/namespaces/{NS}/events")["items"]
              if e.get("reason") == "BoundBelowQuorum" and e["regarding"].get("name") == group]
    s.fault(f"PodGroup {group}: {len(events)} BoundBelowQuorum event(s), condition "
            f"{cond and cond.get('status')}/{cond and cond.get('reason')}")
    assert events, f"no BoundBelowQuorum event on PodGroup {group}"
    assert cond and cond.get("status") == "False" and cond.get("reason") == "QuorumReached", \
        f"PodGroup {group} condition after the gang completed: {cond}"
    return s


def s_shared_claim(cp, binary):
    """Both schedulers race for the same claims. Two schedulers cannot see each other's in-flight
    allocations, so each one's private claims use devices of their own (Gantry: gpu.example.com,
    kube-scheduler: up.example.com) and each shared claim names one device of shared.example.com:
    the only contention is two schedulers writing one claim, which the conditional claim writes
    settle (one allocation; both pods in reservedFor, none lost)."""
    s = Scenario(cp, binary)
    c = s.c
    shared_driver, up_driver = "shared.example.com", "up.example.com"
    s.wl.device_pool(shared_driver, s.wl.nodes[0], 6)
    s.wl.device_pool(up_driver, s.wl.nodes[-1], 6, template="up-one")
    for i in range(6):
        c.post(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": f"shared-{i}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": shared_driver,
                "selectors": [{"cel": {"expression": f"device.attributes['{shared_driver}'].idx == {i}"}}]}}]}}})
    s.fault("6 ResourceClaims each shared by a gantry-scheduler pod and a default-scheduler pod")
    for i in range(6):
        for who, sched in (("g", SCHEDULER), ("u", None)):
            s.wl._pod(f"sh-{who}-{i}", scheduler=sched or "default-scheduler",
                      extra={"resourceClaims": [{"name": "gpu", "resourceClaimName": f"shared-{i}"}]})
        if i == 2:
            s.wl.dra("up-d", 6, scheduler="default-scheduler", template="up-one")  # upstream's own claims
    s.wl.mixed("w0", dra=4)
    s.wl.mixed("w1", dra=4)
    s.wl.mixed("w2", dra=0)
    s.settle(timeout=60)
    return s


def s_stale_claim_events(cp, binary):
    s = Scenario(cp, binary)
    c = s.c
    stop = threading.Event()
    patches = Counter()

    def toucher():
        i = 0
        while not stop.is_set():
            try:
                for rc in c.get(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims")["items"]:
                    i += 1
                    c.patch_merge(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{rc['metadata']['name']}",
                                  {"metadata": {"labels": {"fault-touch": str(i)}}})
                    patches["ok"] += 1
            except (ApiError, OSError):
                patches["failed"] += 1
            time.sleep(0.05)
    join_t = creator(toucher)
    for i in range(4):
        s.wl.mixed(f"w{i}", dra=5 if i < 3 else 3)
    s.settle()
    stop.set()
    join_t()
    s.fault(f"{patches['ok']} label patches on claims while they were allocated")
    return s


SCENARIOS = {
    "watch-blackhole": (s_watch_blackhole, {}),
    "watch-freeze": (s_watch_freeze, {}),
    "apiserver-kill": (s_apiserver_kill, {}),
    "compaction": (s_compaction, {"gates": ["ListFromCacheSnapshot=false"]}),
    "leader-pause": (s_leader_pause, {}),
    "lease-throttled": (s_lease_throttled, {}),
    "binding-denied": (s_binding_denied, {}),
    "shared-claim": (s_shared_claim, {"components": ["etcd", "kube-apiserver", "kube-controller-manager",
                                                     "kube-scheduler"]}),
    "stale-claim-events": (s_stale_claim_events, {}),
}


def default_gates():
    """controlplane.sh's default feature-gate list."""
    import re
    with open(os.path.join(gt.HERE, "controlplane.sh")) as f:
        return "".join(re.findall(r'^DEFAULT_GATES\+?="([^"]*)"', f.read(), re.M))


def table(rows):
    cols = ["scenario", "pods", "faults"] + list(INVARIANTS) + ["result"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join([r["scenario"], str(r["pods"]), r["faults"]] +
                                       [str(r[k]) for k in INVARIANTS] +
                                       [{True: "pass", False: "FAIL", None: "-"}[r["passed"]]]) + " |")
    return "\n".join(lines)


def main():
    args = sys.argv[1:]
    results = None
    if "--results" in args:
        i = args.index("--results")
        results = args[i + 1]
        del args[i:i + 2]
    results = results or os.environ.get("GANTRY_FAULT_RESULTS") or os.path.join(os.getcwd(), "fault-results")
    if args == ["table"]:
        require_binaries()  # SKIP like the scenarios when there is no control plane
        rows = []
        for name in SCENARIOS:
            p = os.path.join(results, name + ".json")
            if os.path.exists(p):
                with open(p) as f:
                    rows.append(json.load(f))
            else:
                rows.append({"scenario": name, "pods": "-", "faults": "(not run, or did not run to the end)",
                             "passed": None, **{k: "-" for k in INVARIANTS}})
        out = table(rows)
        print(out)
        with open(os.path.join(results, "fault-table.md"), "w") as f:
            f.write(out + "\n")
        sys.exit(0)
    if len(args) != 2 or args[0] not in SCENARIOS:
        sys.exit(__doc__)
    name, binary = args
    fn, kw = SCENARIOS[name]
    kw = dict(kw)
    gates = kw.pop("gates", None)
    if gates:
        # With ListFromCacheSnapshot (on by default in 1.37) the API server answers continue
        # tokens from the watch cache's snapshots, which etcd compaction does not expire.
        os.environ["GANTRY_FEATURE_GATES"] = ",".join([default_gates()] + gates)
    os.makedirs(results, exist_ok=True)
    out = os.path.join(results, name + ".json")
    if os.path.exists(out):
        os.remove(out)
    # kube-controller-manager creates the claims from templates: its default 20 QPS would pace them.
    os.environ.setdefault("GANTRY_KCM_EXTRA_ARGS", "--kube-api-qps=500 --kube-api-burst=1000")

    def test(cp):
        s = None
        try:
            s = fn(cp, binary)
            row = s.finish(name)
        except BaseException:
            if s is not None:
                for g in s.fleet.all_procs():
                    log(g.dump(40))
                s.fleet.stop()
                s.proxy.close()
            raise
        with open(out, "w") as f:
            json.dump(row, f)
        print(table([row]), flush=True)
        bad = [k for k in INVARIANTS if row[k]]
        assert not bad, f"{name}: non-zero invariants: {', '.join(f'{k}={row[k]}' for k in bad)}"
    run(test, audit_policy=AUDIT_POLICY, **kw)


if __name__ == "__main__":
    main()
