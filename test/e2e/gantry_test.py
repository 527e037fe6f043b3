#!/usr/bin/env python3
"""End-to-end suites that run the real `gantry` binary against a real control plane, deployed the
way deploy/ deploys it: the ServiceAccount and RBAC objects of deploy/ are applied to the cluster
(the API server authorizes with RBAC), Gantry authenticates with a token of that ServiceAccount
(TokenRequest API) and runs with deploy/config.yaml. The API server's audit log records every
request Gantry makes; each suite ends by checking that none was refused (least privilege is
enough) and that every pod was bound by exactly one Binding.

    gantry_test.py scheduling GANTRY         binds gantry-scheduler pods, leaves default-scheduler
                                             pods alone, reports an unschedulable pod (condition +
                                             event in upstream's format), retries it when a node is
                                             added; Lease held and released on SIGTERM; /metrics
    gantry_test.py failover GANTRY           two replicas: SIGKILL the leader, the standby takes
                                             over within the lease duration, then a graceful hand
                                             back; every pod bound exactly once
    gantry_test.py dra GANTRY                claims from a ResourceClaimTemplate (created by
                                             kube-controller-manager) are allocated and reserved,
                                             pods bound to the node with the devices; a device is
                                             reused once its claim is released
    gantry_test.py gang GANTRY               a scheduling.k8s.io/v1beta1 PodGroup binds
                                             all-or-nothing
    gantry_test.py preemption GANTRY         a high-priority pod preempts a low-priority one
    gantry_test.py preemption-podgroup GANTRY  a pod preempts a disruptionMode `all` PodGroup whole;
                                             the PodGroup gets DisruptionTarget and keeps
                                             PodGroupInitiallyScheduled
    gantry_test.py apiserver-restart GANTRY  kube-apiserver restarts mid-run; no pod is lost

GANTRY is the gantry binary (build/bin/gantry).
"""

import copy
import glob
import os
import signal
import sys
import threading
import time
from collections import Counter

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gantry_e2e import ApiError, GantryProcess, log, run  # noqa: E402

try:
    import yaml  # python3-yaml (scripts/install-deps.sh): deploy/ is YAML
except ImportError:  # pragma: no cover - reported as a failure below
    yaml = None

HERE = os.path.dirname(os.path.abspath(__file__))
DEPLOY = os.path.join(HERE, "..", "..", "deploy")
NS = "e2e"
SCHEDULER = "gantry-scheduler"
SA_NS, SA_NAME = "kube-system", "gantry-scheduler"
SA_USER = f"system:serviceaccount:{SA_NS}:{SA_NAME}"
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{SA_NS}/leases/gantry-scheduler"

# Every request of Gantry's ServiceAccount (pods/status patches with their body, to see
# nominatedNodeName and DisruptionTarget), and every Binding whoever sends it.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Request", "users": [SA_USER], "verbs": ["patch", "update"],
         "resources": [{"group": "", "resources": ["pods/status"]}]},
        {"level": "Metadata", "users": [SA_USER]},
        {"level": "Metadata", "verbs": ["create"], "resources": [{"group": "", "resources": ["pods/binding"]}]},
        {"level": "None"},
    ],
}


# --- deploy/ on the cluster ------------------------------------------------------------------

def _collection_path(obj, namespace):
    kind, api = obj["kind"], obj["apiVersion"]
    plural = {"ServiceAccount": "serviceaccounts", "ClusterRole": "clusterroles",
              "ClusterRoleBinding": "clusterrolebindings", "Role": "roles", "RoleBinding": "rolebindings"}
    if kind not in plural:
        raise AssertionError(f"apply: unexpected {kind} {obj['metadata'].get('name')} in deploy/")
    prefix = "/api/v1" if api == "v1" else f"/apis/{api}"
    if kind.startswith("Cluster"):
        return f"{prefix}/{plural[kind]}"
    ns = obj["metadata"].get("namespace") or namespace
    return f"{prefix}/namespaces/{ns}/{plural[kind]}"


def apply_deploy_rbac(c):
    """Creates deploy/serviceaccount.yaml and deploy/rbac.yaml (namespace kube-system, as the
    kustomization sets it)."""
    if yaml is None:
        raise AssertionError("python3-yaml is needed to read deploy/ (scripts/install-deps.sh installs it)")
    kinds = []
    for name in ("serviceaccount.yaml", "rbac.yaml"):
        with open(os.path.join(DEPLOY, name)) as f:
            for obj in yaml.safe_load_all(f):
                if obj:
                    c.post(_collection_path(obj, SA_NS), obj)
                    kinds.append(f"{obj['kind']}/{obj['metadata']['name']}")
    log(f"applied from deploy/: {', '.join(kinds)}")


def gantry_config(cp, kubeconfig, name="gantry.yaml", lease=None):
    """deploy/config.yaml with clientConnection.kubeconfig set (and optionally shorter lease
    timings); returns the path of the written file."""
    with open(os.path.join(DEPLOY, "config.yaml")) as f:
        cfg = yaml.safe_load(f)
    cfg["clientConnection"]["kubeconfig"] = kubeconfig
    if lease:
        cfg["leaderElection"].update(lease)
    path = os.path.join(cp.dir, name)
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f)
    return path


def deployed_gantry_config(cp, lease=None):
    """Applies deploy/'s RBAC, mints a ServiceAccount token and returns a config file for it."""
    apply_deploy_rbac(cp.client)
    token = cp.client.service_account_token(SA_NS, SA_NAME)
    kubeconfig = cp.write_kubeconfig(os.path.join(cp.dir, "gantry-sa.kubeconfig"), token)
    return gantry_config(cp, kubeconfig, lease=lease)


def check_least_privilege(cp, expect=()):
    """Every request of Gantry's ServiceAccount succeeded (no 401/403: the ClusterRole and Role
    of deploy/ are enough), and each (verb, resource) in `expect` was used successfully."""
    events = [e for e in cp.audit_events() if e.get("user", {}).get("username") == SA_USER]
    assert events, "no audit events for Gantry's ServiceAccount: is the audit log on?"
    refused = [e for e in events if e.get("responseStatus", {}).get("code") in (401, 403)]
    assert not refused, "requests refused to Gantry's ServiceAccount:\n" + "\n".join(
        f"  {e['verb']} {e['requestURI']} -> {e['responseStatus']}" for e in refused[:20])
    used = Counter()
    for e in events:
        ref = e.get("objectRef", {})
        res = ref.get("resource", "") + ("/" + ref["subresource"] if ref.get("subresource") else "")
        group = ref.get("apiGroup") or "core"
        used[(e["verb"], f"{group}:{res}")] += 1
    summary = ", ".join(f"{v} {r} x{n}" for (v, r), n in sorted(used.items()))
    log(f"{len(events)} requests as {SA_USER}, none refused: {summary}")
    for want in expect:
        assert want in used, f"expected Gantry to call {want[0]} {want[1]}; calls: {summary}"


def bindings(cp):
    """Counter pod name -> Binding creations (any response) in namespace NS, and the failures."""
    count, failed = Counter(), []
    for e in cp.audit_events():
        ref = e.get("objectRef", {})
        if e["verb"] == "create" and ref.get("subresource") == "binding" and ref.get("namespace") == NS:
            count[ref["name"]] += 1
            if e.get("responseStatus", {}).get("code") != 201:
                failed.append((ref["name"], e.get("responseStatus")))
    return count, failed


def check_bound_once(cp, pods):
    count, failed = bindings(cp)
    assert not failed, f"Binding requests that failed: {failed}"
    wrong = {p: count[p] for p in pods if count[p] != 1}
    assert not wrong, f"pods not bound by exactly one Binding: {wrong}"
    extra = set(count) - set(pods)
    assert not extra, f"unexpected Bindings for {sorted(extra)}"
    log(f"{len(pods)} pods, each bound by exactly one Binding")


# --- small helpers ---------------------------------------------------------------------------

def pod(c, name):
    return c.get(f"/api/v1/namespaces/{NS}/pods/{name}")


def node_of(c, name):
    return pod(c, name)["spec"].get("nodeName")


def gone(c, path):
    try:
        c.get(path)
        return False
    except ApiError as e:
        return e.status == 404


def condition(p, ctype):
    for cond in p.get("status", {}).get("conditions") or []:
        if cond["type"] == ctype:
            return cond
    return None


def unschedulable(c, name):
    cond = condition(pod(c, name), "PodScheduled")
    return cond if cond and cond["status"] == "False" else None


def event(c, reason, name):
    for e in c.get(f"/apis/events.k8s.io/v1/namespaces/{NS}/events")["items"]:
        if e.get("reason") == reason and e["regarding"]["name"] == name:
            return e
    return None


def setup(cp, nodes=2, cpu="4", memory="8Gi", prefix="node"):
    c = cp.client
    for i in range(nodes):
        c.create_node(f"{prefix}-{i}", cpu=cpu, memory=memory)
    c.create_namespace(NS)
    # Pod admission may race the namespace's creation for a moment.
    c.wait("namespace usable", lambda: c.get(f"/api/v1/namespaces/{NS}/pods") is not None)
    return c


def priority_classes(c):
    """PriorityClasses e2e-low (100) and e2e-high (1000)."""
    for name, value in (("low", 100), ("high", 1000)):
        c.post("/apis/scheduling.k8s.io/v1/priorityclasses", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"e2e-{name}"},
            "value": value})


def create_pod(c, name, **kw):
    kw.setdefault("scheduler_name", SCHEDULER)
    return c.wait(f"create pod {name}", lambda: c.create_pod(NS, name, **kw), timeout=20)


def start_gantry(cp, binary, config, name="gantry"):
    """GANTRY_E2E_V sets gantry's -v (default 2); the output also goes to <cp.dir>/logs/NAME.log."""
    return GantryProcess(binary, ["--config", config, "-v=" + os.environ.get("GANTRY_E2E_V", "2")], name=name,
                         log_path=os.path.join(cp.dir, "logs", f"{name}.log"))


def dump_pods(c):
    try:
        for p in c.get(f"/api/v1/namespaces/{NS}/pods")["items"]:
            cond = condition(p, "PodScheduled") or {}
            log(f"pod {p['metadata']['name']}: node={p['spec'].get('nodeName')} "
                f"nominated={p['status'].get('nominatedNodeName')} PodScheduled={cond.get('status')} "
                f"{cond.get('reason', '')}: {cond.get('message', '')}")
    except Exception as e:  # noqa: BLE001 - diagnostics only
        log(f"listing pods: {e}")


def guarded(gantries, body, c=None):
    """Runs body(); on failure prints the pods of NS and the output of every Gantry process."""
    try:
        body()
    except BaseException:
        if c is not None:
            dump_pods(c)
        for g in gantries:
            if g.alive():
                try:
                    queue = [l for l in g.metrics().splitlines()
                             if l.startswith(("scheduler_queue_incoming_pods_total", "scheduler_pending_pods",
                                              "scheduler_schedule_attempts_total", "scheduler_unschedulable_pods"))]
                    log(f"{g.name} queue metrics:\n" + "\n".join(queue))
                except AssertionError as e:
                    log(f"{g.name} /metrics: {e}")
            log(g.dump())
        raise


# --- suites ----------------------------------------------------------------------------------

def test_scheduling(cp, binary):
    c = setup(cp)
    cfg = deployed_gantry_config(cp)
    g = start_gantry(cp, binary, cfg)

    def body():
        g.wait_ready()
        c.wait("gantry leads", g.is_leader, timeout=30)
        names = [f"p{i}" for i in range(5)]
        for n in names:
            create_pod(c, n)
        create_pod(c, "default-pod", scheduler_name=None)  # default-scheduler: not ours
        create_pod(c, "huge", cpu="100")
        # A generic ephemeral volume is a PersistentVolumeClaim (kube-controller-manager creates
        # "<pod>-<volume>"): without VolumeBinding the pod must never be bound blindly.
        create_pod(c, "scratch", extra_spec={"volumes": [{"name": "cache", "ephemeral": {"volumeClaimTemplate": {
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]})
        for n in names:
            assert c.wait(f"{n} bound", lambda n=n: node_of(c, n), timeout=30).startswith("node-")
            bound = condition(pod(c, n), "PodScheduled")
            assert bound and bound["status"] == "True", bound
        log(f"{len(names)} gantry-scheduler pods bound")

        cond = c.wait("huge PodScheduled=False", lambda: unschedulable(c, "huge"), timeout=30)
        assert cond["reason"] == "Unschedulable", cond
        assert cond["message"].startswith("0/2 nodes are available: 2 Insufficient cpu."), cond["message"]
        ev = c.wait("FailedScheduling event", lambda: event(c, "FailedScheduling", "huge"), timeout=30)
        assert ev["type"] == "Warning" and ev["action"] == "Scheduling", ev
        assert ev["reportingController"] == SCHEDULER, ev
        assert ev["reportingInstance"].startswith(SCHEDULER + "-"), ev
        assert ev["note"].startswith("0/2 nodes are available: 2 Insufficient cpu."), ev["note"]
        ev = c.wait("Scheduled event", lambda: event(c, "Scheduled", "p0"), timeout=30)
        assert ev["note"] == f"Successfully assigned {NS}/p0 to {node_of(c, 'p0')}", ev["note"]
        assert ev["action"] == "Binding" and ev["type"] == "Normal", ev
        log(f"unschedulable pod reported: {cond['message']}")
        cond = c.wait("scratch PodScheduled=False", lambda: unschedulable(c, "scratch"), timeout=30)
        assert cond["message"].startswith(
            "0/2 nodes are available: pod has PersistentVolumeClaim volumes (scratch-cache) and volume "
            "binding is not supported by this build of Gantry (VolumeBinding is not built in)"), cond["message"]
        log(f"pod with a generic ephemeral volume held: {cond['message']}")

        # The default-scheduler pod is untouched (no upstream scheduler runs here).
        p = pod(c, "default-pod")
        assert not p["spec"].get("nodeName"), p["spec"]
        assert condition(p, "PodScheduled") is None, p["status"]

        holder = c.get(LEASE)["spec"]["holderIdentity"]
        assert "_" in holder, holder

        # A node added later makes room: the unschedulable pod is retried and bound.
        c.create_node("node-big", cpu="128", memory="64Gi")
        assert c.wait("huge bound after a node was added", lambda: node_of(c, "huge"), timeout=60) == "node-big"
        log("huge bound after the cluster grew")

        # The cache gauges: three nodes; every binding confirmed by the watch.
        c.wait("scheduler_cache_size{type=nodes} = 3",
               lambda: g.metric("scheduler_cache_size", type="nodes") == 3, timeout=30)
        c.wait("no assumed pod left", lambda: g.metric("scheduler_cache_size", type="assumed_pods") == 0,
               timeout=30)
        assert (g.metric("scheduler_cache_size", type="pods") or 0) >= 6
        assert g.metric("gantry_status_patch_queue_length") is not None
        assert (g.metric("gantry_cache_size", type="interned_symbols") or 0) > 0

        m = g.metric("scheduler_schedule_attempts_total", result="scheduled", profile=SCHEDULER)
        assert m is not None and m >= 6, m
        assert (g.metric("scheduler_schedule_attempts_total", result="unschedulable", profile=SCHEDULER) or 0) >= 1
        assert g.metric("leader_election_master_status", name="gantry-scheduler") == 1
        assert (g.metric("scheduler_pod_scheduling_attempts_count") or 0) >= 6
        assert (g.metric("scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") or 0) >= 5
        assert (g.metric("scheduler_framework_extension_point_duration_seconds_count",
                         extension_point="Bind", status="Success", profile=SCHEDULER) or 0) >= 6
        assert (g.metric("scheduler_framework_extension_point_duration_seconds_count",
                         extension_point="PostFilter", status="Unschedulable", profile=SCHEDULER) or 0) >= 1
        assert not pod(c, "default-pod")["spec"].get("nodeName")
        assert not pod(c, "scratch")["spec"].get("nodeName"), "a pod with an ephemeral volume was bound"

    guarded([g], body, c)
    rc = g.stop()
    assert rc == 0, f"gantry exited with {rc}:\n{g.dump()}"
    assert not c.get(LEASE)["spec"].get("holderIdentity"), "Lease not released on SIGTERM"
    check_bound_once(cp, [f"p{i}" for i in range(5)] + ["huge"])
    check_least_privilege(cp, expect=[
        ("create", "core:pods/binding"), ("patch", "core:pods/status"),
        ("create", "events.k8s.io:events"), ("create", "coordination.k8s.io:leases"),
        ("update", "coordination.k8s.io:leases"), ("watch", "core:pods")])


def test_failover(cp, binary):
    lease_s, renew_s, retry_s = 6, 4, 1
    c = setup(cp, nodes=3, cpu="64", memory="256Gi")
    cfg = deployed_gantry_config(cp, lease={
        "leaseDuration": f"{lease_s}s", "renewDeadline": f"{renew_s}s", "retryPeriod": f"{retry_s}s"})
    a = start_gantry(cp, binary, cfg, name="replica-a")
    procs = [a]
    created = []
    stop_creating = threading.Event()

    def creator():  # a steady stream of pods through every phase
        i = 0
        while not stop_creating.is_set():
            name = f"p{i:03d}"
            create_pod(c, name)
            created.append(name)
            i += 1
            time.sleep(0.25)

    t = threading.Thread(target=creator, daemon=True)

    def wait_all_bound(timeout=60):
        for n in list(created):
            c.wait(f"{n} bound", lambda n=n: node_of(c, n), timeout=timeout)

    def body():
        a.wait_ready()
        c.wait("replica-a leads", a.is_leader, timeout=30)
        b = start_gantry(cp, binary, cfg, name="replica-b")
        procs.append(b)
        b.wait_ready()
        time.sleep(2 * retry_s)
        assert not b.is_leader(), "two leaders"
        holder_a = c.get(LEASE)["spec"]["holderIdentity"]
        t.start()
        time.sleep(3)
        wait_all_bound()
        log(f"{len(created)} pods bound by replica-a ({holder_a}); SIGKILL replica-a")

        killed = time.monotonic()
        a.kill()
        c.wait("replica-b leads", b.is_leader, timeout=lease_s + 4 * retry_s + 10, interval=0.1)
        takeover = time.monotonic() - killed
        holder_b = c.get(LEASE)["spec"]["holderIdentity"]
        assert holder_b != holder_a, holder_b
        log(f"replica-b ({holder_b}) took over {takeover:.1f}s after the leader died "
            f"(leaseDuration {lease_s}s, retryPeriod {retry_s}s)")
        # The standby may wait one leaseDuration after the last renewal it saw, plus one
        # retryPeriod (with jitter) before it looks again; allow 3 s for a loaded machine.
        assert takeover <= lease_s + 1.2 * retry_s + 3, f"takeover took {takeover:.1f}s"
        time.sleep(2)
        wait_all_bound()
        log(f"{len(created)} pods bound after the takeover")

        # A restarted replica joins as a standby; a graceful stop of the leader releases the
        # Lease, so the standby takes over within about one retryPeriod.
        a2 = start_gantry(cp, binary, cfg, name="replica-a2")
        procs.append(a2)
        a2.wait_ready()
        time.sleep(2 * retry_s)
        assert b.is_leader() and not a2.is_leader(), "leadership changed without a reason"
        stopped = time.monotonic()
        rc = b.stop()
        assert rc == 0, f"replica-b exited with {rc}"
        c.wait("replica-a2 leads", a2.is_leader, timeout=lease_s + 10, interval=0.1)
        handover = time.monotonic() - stopped
        log(f"graceful hand-over to replica-a2 in {handover:.1f}s")
        assert handover <= 1.2 * retry_s + 3, f"hand-over took {handover:.1f}s: Lease not released?"
        time.sleep(2)
        stop_creating.set()
        t.join(timeout=30)
        wait_all_bound()
        log(f"{len(created)} pods bound in all")

    guarded(procs, body, c)
    stop_creating.set()
    for g in procs:
        g.stop()
    check_bound_once(cp, created)
    sched = Counter(e["regarding"]["name"] for e in c.get(f"/apis/events.k8s.io/v1/namespaces/{NS}/events")["items"]
                    if e.get("reason") == "Scheduled")
    twice = {n: k for n, k in sched.items() if k != 1}
    assert not twice, f"pods with more than one Scheduled event: {twice}"
    check_least_privilege(cp, expect=[("create", "core:pods/binding"), ("update", "coordination.k8s.io:leases")])


DRIVER = "gpu.example.com"


def dra_objects(c, node, gpus):
    c.post("/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}})
    c.post("/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
        "spec": {"driver": DRIVER, "nodeName": node,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"gpu-{i}",
                              "attributes": {"model": {"string": "a100"}, "index": {"int": i}},
                              "capacity": {"memory": {"value": "80Gi"}}} for i in range(gpus)]}})
    c.post(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": DRIVER,
            "selectors": [{"cel": {"expression": f"device.attributes['{DRIVER}'].model == 'a100' && "
                                                 f"device.capacity['{DRIVER}'].memory.compareTo(quantity('40Gi')) >= 0"}}],
        }}]}}}})


def claim_of(c, name):
    st = pod(c, name)["status"].get("resourceClaimStatuses") or []
    if not st or not st[0].get("resourceClaimName"):
        return None
    return c.get(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{st[0]['resourceClaimName']}")


def test_dra(cp, binary):
    c = setup(cp, nodes=2, prefix="cpu-node")
    c.create_node("gpu-node", cpu="16", memory="64Gi")
    dra_objects(c, "gpu-node", gpus=2)
    cfg = deployed_gantry_config(cp)
    g = start_gantry(cp, binary, cfg)

    def body():
        g.wait_ready()
        claims = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}
        for i in range(3):
            create_pod(c, f"dra-{i}", extra_spec=copy.deepcopy(claims))
        pods = [f"dra-{i}" for i in range(3)]

        def two_bound_one_waiting():
            bound = [n for n in pods if node_of(c, n)]
            waiting = [n for n in pods if n not in bound and unschedulable(c, n)]
            return (bound, waiting[0]) if len(bound) == 2 and len(waiting) == 1 else None
        # The queue order among equal pods is not fixed: any two get the two GPUs.
        bound, waiter = c.wait("two pods bound, one waiting", two_bound_one_waiting, timeout=45)
        devices = {}
        for n in bound:
            assert node_of(c, n) == "gpu-node", n
            rc = claim_of(c, n)
            p = pod(c, n)
            alloc = rc["status"]["allocation"]
            results = alloc["devices"]["results"]
            assert len(results) == 1 and results[0]["driver"] == DRIVER and results[0]["pool"] == "gpu-node", alloc
            assert results[0]["request"] == "gpu", results
            terms = alloc["nodeSelector"]["nodeSelectorTerms"]
            assert any(f.get("values") == ["gpu-node"] for t in terms for f in t.get("matchFields", [])), terms
            reserved = rc["status"]["reservedFor"]
            assert reserved == [{"resource": "pods", "name": n, "uid": p["metadata"]["uid"]}], reserved
            assert "resource.kubernetes.io/delete-protection" in rc["metadata"].get("finalizers", []), rc["metadata"]
            owner = rc["metadata"]["ownerReferences"][0]
            assert owner["kind"] == "Pod" and owner["name"] == n, owner
            devices[n] = results[0]["device"]
        assert sorted(devices.values()) == ["gpu-0", "gpu-1"], devices
        log(f"claims allocated and reserved: {devices}")

        # Both devices are taken: the third pod waits...
        assert not claim_of(c, waiter).get("status", {}).get("allocation"), "the waiting pod's claim is allocated"
        log(f"{waiter} waits: {unschedulable(c, waiter)['message']}")
        # ...until a claim is released: the pod is deleted, kube-controller-manager removes the
        # reservation, the allocation and the finalizer, and deletes the generated claim.
        victim = bound[0]
        freed = devices[victim]
        old_claim = claim_of(c, victim)["metadata"]["name"]
        c.delete(f"/api/v1/namespaces/{NS}/pods/{victim}", grace_seconds=0)
        c.wait(f"claim of {victim} deleted",
               lambda: gone(c, f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{old_claim}"), timeout=60)
        assert c.wait(f"{waiter} bound", lambda: node_of(c, waiter), timeout=60) == "gpu-node"
        got = claim_of(c, waiter)["status"]["allocation"]["devices"]["results"][0]["device"]
        assert got == freed, (got, freed)
        log(f"{waiter} bound with the released {got}")
        assert (g.metric("gantry_dra_allocation_duration_seconds_count") or 0) >= 3
        assert (g.metric("gantry_cel_evaluations_total") or 0) >= 2  # the class and the template's selectors
        # The DRA cache gauges: the old claim is gone from the cache, two claims remain allocated and
        # confirmed (none assumed, none in flight).
        c.wait("gantry_cache_size{type=resourceclaims} = 2",
               lambda: g.metric("gantry_cache_size", type="resourceclaims") == 2, timeout=30)
        c.wait("no assumed claim left",
               lambda: g.metric("gantry_cache_size", type="assumed_resourceclaims") == 0, timeout=30)
        assert g.metric("gantry_cache_size", type="in_flight_allocations") == 0
        assert (g.metric("gantry_cache_size", type="resourceslices") or 0) >= 1

    guarded([g], body, c)
    assert g.stop() == 0
    check_bound_once(cp, ["dra-0", "dra-1", "dra-2"])
    check_least_privilege(cp, expect=[("patch", "resource.k8s.io:resourceclaims"),
                                      ("patch", "resource.k8s.io:resourceclaims/status")])


def dra_class_slices_template(c, nodes, gpus, extended_resource=None):
    spec = {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}
    if extended_resource:
        spec["extendedResourceName"] = extended_resource
    c.post("/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER}, "spec": spec})
    for node in nodes:
        c.post("/apis/resource.k8s.io/v1/resourceslices", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(gpus)]}})
    c.post(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}})


def test_dra_podgroup(cp, binary):
    """PodGroup-level claims (DRAWorkloadResourceClaims): kube-controller-manager creates one claim per
    PodGroup; Gantry allocates it once, reserves it for the PodGroup and keeps every member where the
    devices are (node-local GPUs: one node)."""
    c = setup(cp, nodes=0)
    for i in range(2):
        c.create_node(f"gpu-node-{i}", cpu="16", memory="64Gi")
    dra_class_slices_template(c, ["gpu-node-0", "gpu-node-1"], gpus=2)
    cfg = deployed_gantry_config(cp)
    g = start_gantry(cp, binary, cfg)
    members = [f"train-{i}" for i in range(3)]

    def body():
        g.wait_ready()
        pg = c.post(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups", {
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "train"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 3}},
                     "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "one-gpu"}]}})
        assert pg["spec"].get("resourceClaims"), f"the API server dropped spec.resourceClaims: {pg['spec']}"
        for n in members:
            create_pod(c, n, cpu="1", extra_spec={
                "schedulingGroup": {"podGroupName": "train"},
                "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "one-gpu"}]})
        nodes = {c.wait(f"{n} bound", lambda n=n: node_of(c, n), timeout=60) for n in members}
        assert len(nodes) == 1, f"members spread over {nodes}; the shared GPU is node-local"
        names = set()
        for n in members:
            rc = claim_of(c, n)
            assert rc, f"{n} has no claim in status.resourceClaimStatuses"
            names.add(rc["metadata"]["name"])
        assert len(names) == 1, f"one claim for the group, got {names}"
        rc = claim_of(c, members[0])
        owner = rc["metadata"]["ownerReferences"][0]
        assert owner["kind"] == "PodGroup" and owner["name"] == "train", owner
        results = rc["status"]["allocation"]["devices"]["results"]
        assert len(results) == 1 and results[0]["pool"] == next(iter(nodes)), results
        reserved = rc["status"]["reservedFor"]
        assert reserved == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "train",
                             "uid": pg["metadata"]["uid"]}], reserved
        assert "resource.kubernetes.io/delete-protection" in rc["metadata"].get("finalizers", []), rc["metadata"]
        log(f"group claim {rc['metadata']['name']} on {results[0]['pool']}/{results[0]['device']}, "
            f"reserved for the PodGroup; members on {nodes}")

    guarded([g], body, c)
    assert g.stop() == 0
    check_bound_once(cp, members)


def test_dra_extended(cp, binary):
    """Extended resources backed by DRA: a pod asking for example.com/gpu on a node without device-plugin
    capacity of it gets devices through the DeviceClass whose extendedResourceName it is; Gantry creates the
    claim in PreBind and records it in the pod's status, as kube-scheduler does. A node with device-plugin
    capacity serves the resource without a claim."""
    c = setup(cp, nodes=0)
    c.create_node("gpu-node", cpu="16", memory="64Gi")
    c.post("/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "plugin-node", "labels": {"kubernetes.io/hostname": "plugin-node"}},
        "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110", "example.com/gpu": "1"},
                   "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110", "example.com/gpu": "1"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                   "message": "fake node (no kubelet)"}]}})
    dra_class_slices_template(c, ["gpu-node"], gpus=2, extended_resource="example.com/gpu")
    cls = c.get(f"/apis/resource.k8s.io/v1/deviceclasses/{DRIVER}")
    assert cls["spec"].get("extendedResourceName") == "example.com/gpu", \
        f"the API server dropped spec.extendedResourceName (gate DRAExtendedResource off?): {cls['spec']}"
    cfg = deployed_gantry_config(cp)
    g = start_gantry(cp, binary, cfg)

    def ext_pod(name, gpus):
        create_pod(c, name, extra_spec={"containers": [{
            "name": "main", "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": "100m", "example.com/gpu": str(gpus)},
                          "limits": {"example.com/gpu": str(gpus)}}}]})

    def extended_claim(name):
        st = pod(c, name)["status"].get("extendedResourceClaimStatus")
        return c.get(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{st['resourceClaimName']}") \
            if st else None

    def body():
        g.wait_ready()
        # Two GPUs: only the DRA node has that many.
        ext_pod("ext-0", 2)
        assert c.wait("ext-0 bound", lambda: node_of(c, "ext-0"), timeout=60) == "gpu-node"
        st = pod(c, "ext-0")["status"]["extendedResourceClaimStatus"]
        name = st["resourceClaimName"]
        assert name.startswith("ext-0-extended-resources-"), st
        assert st["requestMappings"] == [{"containerName": "main", "resourceName": "example.com/gpu",
                                          "requestName": "container-0-request-1"}], st
        rc = extended_claim("ext-0")
        meta = rc["metadata"]
        assert meta["annotations"].get("resource.kubernetes.io/extended-resource-claim") == "true", meta
        owner = meta["ownerReferences"][0]
        assert owner["kind"] == "Pod" and owner["name"] == "ext-0" and owner.get("controller"), owner
        assert "resource.kubernetes.io/delete-protection" in meta.get("finalizers", []), meta
        req = rc["spec"]["devices"]["requests"]
        assert req == [{"name": "container-0-request-1", "exactly": {
            "deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": 2}}], req
        results = rc["status"]["allocation"]["devices"]["results"]
        assert sorted(r["device"] for r in results) == ["gpu-0", "gpu-1"], results
        assert all(r["request"] == "container-0-request-1" and r["pool"] == "gpu-node" for r in results), results
        assert rc["status"]["reservedFor"] == [{"resource": "pods", "name": "ext-0",
                                                "uid": pod(c, "ext-0")["metadata"]["uid"]}], rc["status"]
        log(f"ext-0 got {name} with {[r['device'] for r in results]}")
        # One GPU: the DRA node's devices are taken, the device plugin serves it without a claim.
        ext_pod("ext-1", 1)
        assert c.wait("ext-1 bound", lambda: node_of(c, "ext-1"), timeout=60) == "plugin-node"
        assert "extendedResourceClaimStatus" not in pod(c, "ext-1")["status"], pod(c, "ext-1")["status"]
        # Nothing left anywhere: the next pod waits, with both reasons.
        ext_pod("ext-2", 1)
        msg = c.wait("ext-2 unschedulable", lambda: unschedulable(c, "ext-2"), timeout=45)["message"]
        assert "0/2 nodes are available" in msg and "Insufficient example.com/gpu" in msg, msg
        assert "container-0-request-1" in msg, msg
        log(f"ext-2 waits: {msg}")
        # ext-0 goes: kube-controller-manager releases and deletes its claim; ext-2 gets a GPU.
        c.delete(f"/api/v1/namespaces/{NS}/pods/ext-0", grace_seconds=0)
        c.wait(f"claim {name} deleted",
               lambda: gone(c, f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{name}"), timeout=60)
        assert c.wait("ext-2 bound", lambda: node_of(c, "ext-2"), timeout=60) == "gpu-node"
        rc2 = c.wait("ext-2 claim", lambda: extended_claim("ext-2"), timeout=20)
        assert len(rc2["status"]["allocation"]["devices"]["results"]) == 1, rc2["status"]
        log(f"ext-2 bound with {rc2['metadata']['name']}")

    guarded([g], body, c)
    assert g.stop() == 0
    check_bound_once(cp, ["ext-0", "ext-1", "ext-2"])
    check_least_privilege(cp, expect=[("create", "resource.k8s.io:resourceclaims"),
                                      ("patch", "resource.k8s.io:resourceclaims/status"),
                                      ("patch", "core:pods/status")])


def test_gang(cp, binary):
    c = setup(cp, nodes=2, cpu="4")
    cfg = deployed_gantry_config(cp)
    g = start_gantry(cp, binary, cfg)

    def group(name, min_count):
        c.post(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups", {
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}})

    def member(gname, i, cpu):
        create_pod(c, f"{gname}-{i}", cpu=cpu, extra_spec={"schedulingGroup": {"podGroupName": gname}})

    def body():
        g.wait_ready()
        # Three members of 3 CPUs, two 4-CPU nodes: only two fit, so none may be bound.
        group("big", 3)
        for i in range(3):
            member("big", i, "3")
        # A group that fits binds completely.
        group("small", 2)
        for i in range(2):
            member("small", i, "500m")
        for i in range(2):
            c.wait(f"small-{i} bound", lambda i=i: node_of(c, f"small-{i}"), timeout=45)
        for i in range(3):
            c.wait(f"big-{i} unschedulable", lambda i=i: unschedulable(c, f"big-{i}"), timeout=45)
        msg = unschedulable(c, "big-0")["message"]
        log(f"gang big waits: {msg}")
        assert "big" in msg, msg
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # and stays unbound
            assert not any(node_of(c, f"big-{i}") for i in range(3)), "part of the gang was bound"
            time.sleep(0.5)
        # Room for the third member: the whole gang binds, on three different nodes.
        c.create_node("node-2", cpu="4", memory="8Gi")
        nodes = {c.wait(f"big-{i} bound", lambda i=i: node_of(c, f"big-{i}"), timeout=60) for i in range(3)}
        assert len(nodes) == 3, nodes
        log(f"gang big bound on {sorted(nodes)}")
        assert (g.metric("gantry_gang_placement_duration_seconds_count") or 0) >= 2
        # Every member ends PodScheduled=True: a failure status queued before the group was
        # bound must not overwrite it (small-0 failed once while small-1 did not exist yet).
        time.sleep(1)
        for n in [f"big-{i}" for i in range(3)] + [f"small-{i}" for i in range(2)]:
            cond = condition(pod(c, n), "PodScheduled")
            assert cond and cond["status"] == "True", f"{n}: {cond}"

    guarded([g], body, c)
    assert g.stop() == 0
    check_bound_once(cp, [f"big-{i}" for i in range(3)] + [f"small-{i}" for i in range(2)])
    check_least_privilege(cp, expect=[("watch", "scheduling.k8s.io:podgroups")])


def test_preemption(cp, binary):
    c = setup(cp, nodes=1, cpu="4")
    priority_classes(c)
    cfg = deployed_gantry_config(cp)
    g = start_gantry(cp, binary, cfg)

    def body():
        g.wait_ready()
        for i in range(2):
            create_pod(c, f"low-{i}", cpu="2", extra_spec={"priorityClassName": "e2e-low"})
        for i in range(2):
            c.wait(f"low-{i} bound", lambda i=i: node_of(c, f"low-{i}"), timeout=30)
        uids = {f"low-{i}": pod(c, f"low-{i}")["metadata"]["uid"] for i in range(2)}
        # 2 CPUs free up by evicting one of the two low-priority pods.
        create_pod(c, "high", cpu="2", extra_spec={"priorityClassName": "e2e-high"})
        assert c.wait("high bound", lambda: node_of(c, "high"), timeout=60) == "node-0"
        victims = [n for n in uids if gone(c, f"/api/v1/namespaces/{NS}/pods/{n}")]
        assert len(victims) == 1, f"expected exactly one victim, gone: {victims}"
        victim = victims[0]
        log(f"high bound after preempting {victim}")

        patches = [e for e in cp.audit_events()
                   if e.get("user", {}).get("username") == SA_USER and e.get("objectRef", {}).get("subresource") == "status"]
        nominated = [e for e in patches if e["objectRef"]["name"] == "high" and
                     (e.get("requestObject") or {}).get("status", {}).get("nominatedNodeName") == "node-0"]
        assert nominated, "no pods/status write set nominatedNodeName=node-0 on the preemptor"
        disrupted = [e for e in patches if e["objectRef"]["name"] == victim and any(
            cnd.get("type") == "DisruptionTarget" and cnd.get("reason") == "PreemptionByScheduler"
            for cnd in (e.get("requestObject") or {}).get("status", {}).get("conditions") or [])]
        assert disrupted, f"no DisruptionTarget condition written on {victim}"
        deletes = [e for e in cp.audit_events() if e.get("user", {}).get("username") == SA_USER and
                   e["verb"] == "delete" and e.get("objectRef", {}).get("resource") == "pods"]
        assert [e["objectRef"]["name"] for e in deletes] == [victim], deletes
        ev = c.wait("Preempted event", lambda: event(c, "Preempted", victim), timeout=30)
        assert ev["note"] == f"Preempted by pod {pod(c, 'high')['metadata']['uid']} on node node-0", ev["note"]
        assert (g.metric("scheduler_preemption_attempts_total") or 0) >= 1
        assert g.metric("scheduler_preemption_victims_count") == 1

    guarded([g], body, c)
    assert g.stop() == 0
    check_bound_once(cp, ["low-0", "low-1", "high"])
    check_least_privilege(cp, expect=[("delete", "core:pods"), ("patch", "core:pods/status")])


def test_preemption_podgroup(cp, binary):
    c = setup(cp, nodes=1, cpu="4")
    priority_classes(c)
    cfg = deployed_gantry_config(cp)
    g = start_gantry(cp, binary, cfg)
    pg_path = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups/victims"

    def body():
        g.wait_ready()
        # A low-priority gang evicted whole or not at all: two 1-CPU members on the 4-CPU node.
        c.post(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups", {
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "victims"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "priorityClassName": "e2e-low",
                     "disruptionMode": {"all": {}}}})
        for i in range(2):
            create_pod(c, f"victims-{i}", cpu="1", extra_spec={"schedulingGroup": {"podGroupName": "victims"},
                                                                "priorityClassName": "e2e-low"})
        for i in range(2):
            c.wait(f"victims-{i} bound", lambda i=i: node_of(c, f"victims-{i}"), timeout=45)
        c.wait("PodGroupInitiallyScheduled=True", lambda: (condition(c.get(pg_path), "PodGroupInitiallyScheduled")
                                                            or {}).get("status") == "True", timeout=30)
        # A 3-CPU pod fits only when one member goes, so the whole group goes.
        create_pod(c, "high", cpu="3", extra_spec={"priorityClassName": "e2e-high"})
        assert c.wait("high bound", lambda: node_of(c, "high"), timeout=60) == "node-0"
        for i in range(2):
            assert gone(c, f"/api/v1/namespaces/{NS}/pods/victims-{i}"), f"victims-{i} was not evicted"
        pg = c.get(pg_path)
        dt = condition(pg, "DisruptionTarget")
        assert dt and dt["status"] == "True" and dt["reason"] == "PreemptionByScheduler", pg.get("status")
        assert dt["message"] == "gantry-scheduler: preempting to accommodate a higher priority pod", dt
        # Each condition has its own field manager: writing DisruptionTarget kept the scheduling condition.
        sched = condition(pg, "PodGroupInitiallyScheduled")
        assert sched and sched["status"] == "True", pg.get("status")
        log(f"PodGroup victims: {pg['status']['conditions']}")
        assert g.metric("scheduler_preemption_victims_count") == 1  # one preemption...
        assert g.metric("scheduler_preemption_victims_sum") == 2  # ...of two victims

    guarded([g], body, c)
    assert g.stop() == 0
    check_bound_once(cp, ["victims-0", "victims-1", "high"])
    check_least_privilege(cp, expect=[("delete", "core:pods"), ("patch", "scheduling.k8s.io:podgroups/status")])


def restart_apiserver(cp):
    pidfiles = glob.glob(os.path.join(cp.dir, "**", "kube-apiserver.pid"), recursive=True)
    assert pidfiles, f"no kube-apiserver.pid under {cp.dir}"
    with open(pidfiles[0]) as f:
        pid = int(f.read().strip())
    log(f"stopping kube-apiserver ({pid})")
    # SIGTERM starts a graceful shutdown that keeps watches open for up to a minute; after a few
    # seconds kill it outright, like a crash.
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


def test_apiserver_restart(cp, binary):
    c = setup(cp)
    # Without leader election: an outage longer than renewDeadline would (rightly) end the
    # leader's term and the process.
    cfg = deployed_gantry_config(cp, lease={"leaderElect": False})
    g = start_gantry(cp, binary, cfg)
    names = []

    def body():
        g.wait_ready()
        for i in range(3):
            names.append(f"before-{i}")
            create_pod(c, names[-1])
        for n in names:
            c.wait(f"{n} bound", lambda n=n: node_of(c, n), timeout=30)
        restart_apiserver(cp)
        c.wait("API server back", lambda: c.get("/readyz") is not None, timeout=60)
        for i in range(5):
            names.append(f"after-{i}")
            create_pod(c, names[-1])
        for n in names:
            c.wait(f"{n} bound", lambda n=n: node_of(c, n), timeout=60)
        log("all pods bound across the API server restart")
        assert g.alive(), "gantry exited during the restart"

    guarded([g], body, c)
    assert g.stop() == 0
    check_bound_once(cp, names)


TESTS = {
    "scheduling": test_scheduling,
    "failover": test_failover,
    "dra": test_dra,
    "dra-podgroup": test_dra_podgroup,
    "dra-extended": test_dra_extended,
    "gang": test_gang,
    "preemption": test_preemption,
    "preemption-podgroup": test_preemption_podgroup,
    "apiserver-restart": test_apiserver_restart,
}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in TESTS:
        sys.exit(__doc__)
    which, gantry = sys.argv[1], sys.argv[2]
    run(lambda cp: TESTS[which](cp, gantry), audit_policy=AUDIT_POLICY)
