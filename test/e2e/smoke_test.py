#!/usr/bin/env python3
"""End-to-end smoke tests against a real v1.37.2 control plane.

    smoke_test.py api                 Node + Pod objects, discovery of resource.k8s.io/v1 and
                                      scheduling.k8s.io/v1beta1, RBAC is enforced
    smoke_test.py upstream-scheduler  upstream kube-scheduler v1.37.2 binds a default-scheduler pod
                                      and leaves a pod for another scheduler alone
"""

import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gantry_e2e import ApiError, log, run  # noqa: E402


def check_discovery(c):
    groups = {g["name"]: g for g in c.get("/apis")["groups"]}
    for group, version in (("resource.k8s.io", "v1"), ("scheduling.k8s.io", "v1beta1")):
        assert group in groups, f"group {group} not served"
        served = [v["version"] for v in groups[group]["versions"]]
        assert version in served, f"{group}/{version} not served (served: {served})"
        log(f"discovery: {group} serves {served}")
    res = {r["name"] for r in c.get("/apis/resource.k8s.io/v1")["resources"]}
    for r in ("resourceslices", "resourceclaims", "resourceclaimtemplates", "deviceclasses"):
        assert r in res, f"resource.k8s.io/v1 lacks {r}: {sorted(res)}"
    res = {r["name"] for r in c.get("/apis/scheduling.k8s.io/v1beta1")["resources"]}
    for r in ("workloads", "podgroups", "podgroups/status"):
        assert r in res, f"scheduling.k8s.io/v1beta1 lacks {r}: {sorted(res)}"


def test_api(cp):
    c = cp.client
    check_discovery(c)

    node = c.create_node("fake-node-1")
    assert node["metadata"]["name"] == "fake-node-1"
    got = c.get("/api/v1/nodes/fake-node-1")
    assert got["status"]["allocatable"]["cpu"] == "4", got["status"]
    taints = got["spec"].get("taints") or []
    assert not taints, f"fake node must not be tainted (TaintNodesByCondition off): {taints}"

    c.create_namespace("smoke")
    # Pod admission may race the namespace's creation for a moment: retry briefly.
    c.wait("pod creation", lambda: c.create_pod("smoke", "p1", scheduler_name="gantry-scheduler"))
    pod = c.get("/api/v1/namespaces/smoke/pods/p1")
    assert pod["spec"]["schedulerName"] == "gantry-scheduler"
    assert not pod["spec"].get("nodeName"), "nobody should have bound p1"

    # A PodGroup (v1beta1) is accepted, and a pod can reference it.
    c.post("/apis/scheduling.k8s.io/v1beta1/namespaces/smoke/podgroups", {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "g1"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    })
    c.create_pod("smoke", "g1-0", scheduler_name="gantry-scheduler",
                 extra_spec={"schedulingGroup": {"podGroupName": "g1"}})
    pod = c.get("/api/v1/namespaces/smoke/pods/g1-0")
    assert pod["spec"].get("schedulingGroup", {}).get("podGroupName") == "g1", pod["spec"]

    # Binding through pods/binding works (what a scheduler does).
    c.post("/api/v1/namespaces/smoke/pods/p1/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "fake-node-1"}})
    assert c.get("/api/v1/namespaces/smoke/pods/p1")["spec"]["nodeName"] == "fake-node-1"

    # RBAC is on: the kube-scheduler identity may not create namespaces.
    sched = cp.client_for("kube-scheduler")
    try:
        sched.create_namespace("forbidden")
        raise AssertionError("system:kube-scheduler could create a namespace: RBAC is not enforced")
    except ApiError as e:
        assert e.status == 403, e
    sched.get("/api/v1/nodes")  # ...but may list nodes

    # ServiceAccount tokens (TokenRequest, signed with the generated key) authenticate; with no
    # RoleBinding the account is authenticated but forbidden.
    sa = cp.token_client(c.service_account_token("smoke", "e2e-sa"))
    try:
        sa.get("/api/v1/nodes")
        raise AssertionError("an unbound ServiceAccount could list nodes")
    except ApiError as e:
        assert e.status == 403, e  # 401 would mean the token was not accepted
    assert sa.get("/version")["gitVersion"] == "v1.37.2"

    # kube-controller-manager's ResourceClaim controller creates claims from templates.
    c.post("/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}})
    c.post("/apis/resource.k8s.io/v1/namespaces/smoke/resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}})
    c.create_pod("smoke", "dra-pod", scheduler_name="gantry-scheduler", extra_spec={
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]})

    def claim_created():
        st = c.get("/api/v1/namespaces/smoke/pods/dra-pod")["status"].get("resourceClaimStatuses")
        return st and st[0].get("resourceClaimName")
    claim = c.wait("ResourceClaim from template", claim_created, timeout=30)
    rc = c.get(f"/apis/resource.k8s.io/v1/namespaces/smoke/resourceclaims/{claim}")
    owner = rc["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "Pod" and owner["name"] == "dra-pod", rc["metadata"]
    assert not rc.get("status", {}).get("allocation"), "nobody should have allocated the claim"
    log(f"ResourceClaim {claim} created from template by kube-controller-manager")

    # Bound pods on kubelet-less nodes must be deleted with grace 0.
    c.delete("/api/v1/namespaces/smoke/pods/p1", grace_seconds=0)
    c.wait("p1 deleted", lambda: _gone(c, "/api/v1/namespaces/smoke/pods/p1"))

    # The namespace controller finalizes namespace deletion (tests clean up this way); the
    # garbage collector removes the claim owned by the deleted pod.
    t0 = time.monotonic()
    c.delete("/api/v1/namespaces/smoke")
    c.wait("namespace smoke deleted", lambda: _gone(c, "/api/v1/namespaces/smoke"), timeout=60)
    log(f"namespace deleted in {time.monotonic() - t0:.1f}s")


def _gone(c, path):
    try:
        c.get(path)
        return False
    except ApiError as e:
        return e.status == 404


def test_upstream_scheduler(cp):
    c = cp.client
    for i in range(3):
        c.create_node(f"node-{i}", cpu="8", memory="16Gi")
    c.create_namespace("smoke")
    t0 = time.monotonic()
    c.wait("pod creation", lambda: c.create_pod("smoke", "upstream-pod"))
    c.create_pod("smoke", "other-pod", scheduler_name="gantry-scheduler")

    def bound():
        p = c.get("/api/v1/namespaces/smoke/pods/upstream-pod")
        return p["spec"].get("nodeName")
    node = c.wait("kube-scheduler to bind upstream-pod", bound, timeout=60)
    log(f"upstream kube-scheduler bound upstream-pod to {node} "
        f"{time.monotonic() - t0:.2f}s after creation")
    p = c.get("/api/v1/namespaces/smoke/pods/upstream-pod")
    conds = {x["type"]: x["status"] for x in p["status"].get("conditions", [])}
    assert conds.get("PodScheduled") == "True", p["status"]

    # The Scheduled event is written by default-scheduler (events.k8s.io/v1).
    def scheduled_event():
        evs = c.get("/apis/events.k8s.io/v1/namespaces/smoke/events")["items"]
        return [e for e in evs if e.get("reason") == "Scheduled"
                and e["regarding"]["name"] == "upstream-pod"]
    ev = c.wait("Scheduled event", scheduled_event, timeout=20)[0]
    assert ev.get("reportingController") == "default-scheduler", ev

    time.sleep(1)
    other = c.get("/api/v1/namespaces/smoke/pods/other-pod")
    assert not other["spec"].get("nodeName"), "kube-scheduler must not bind gantry-scheduler pods"


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "api"
    if which == "api":
        run(test_api, components=["etcd", "kube-apiserver", "kube-controller-manager"])
    elif which == "upstream-scheduler":
        run(test_upstream_scheduler, components=["etcd", "kube-apiserver", "kube-scheduler"])
    else:
        sys.exit(f"unknown test {which}")
