#!/usr/bin/env python3
"""Writes the DRA allocator scenario files in cases/ (one YAML per case).

The case names follow upstream's allocator test table (allocatortesting,
lexicographical tests) plus Gantry's own (prefix gantry-). Fixtures mirror
upstream's: drivers driver-a/driver-b, pools pool-1.., devices device-1..,
classes class-a/class-b selecting by driver, nodes node-1/node-2 with a
region label. The expected outcomes are those of upstream's allocator tests;
the files are the source of truth,
this script only saves typing. Run: python3 gen_cases.py
"""
import os
import yaml

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
CASES = {}


def node(name, region):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"region": region}}}


NODES = [node("node-1", "west"), node("node-2", "east")]


def dclass(name, driver="driver-a", selectors=(), config=None):
    sels = [{"cel": {"expression": f'device.driver == "{driver}"'}}] + [
        {"cel": {"expression": s}} for s in selectors]
    spec = {"selectors": sels}
    if config:
        spec["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name}, "spec": spec}


CLASS_A = dclass("class-a")
CLASS_B = dclass("class-b", "driver-b")


def dev(name, attrs=None, capacity=None, **extra):
    d = {"name": name}
    a = {"numa": {"int": 1}, "driverVersion": {"version": "1.0.0"},
         "stringAttribute": {"string": "stringAttributeValue"}, "boolAttribute": {"bool": True}}
    if attrs is not None:
        a = attrs
    if a:
        d["attributes"] = a
    if capacity:
        d["capacity"] = capacity
    d.update(extra)
    return d


def rslice(name, pool="pool-1", node_name="node-1", devices=(), driver="driver-a", gen=1, count=1,
           **extra):
    spec = {"driver": driver, "pool": {"name": pool, "generation": gen, "resourceSliceCount": count}}
    if node_name is not None:
        spec["nodeName"] = node_name
    spec.update(extra)
    if devices:
        spec["devices"] = list(devices)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name}, "spec": spec}


def exact(cls="class-a", count=None, mode=None, selectors=(), admin=None, tolerations=None,
          capacity=None):
    e = {"deviceClassName": cls}
    if mode:
        e["allocationMode"] = mode
    if count is not None:
        e["count"] = count
    if selectors:
        e["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if admin is not None:
        e["adminAccess"] = admin
    if tolerations:
        e["tolerations"] = tolerations
    if capacity:
        e["capacity"] = {"requests": capacity}
    return e


def req(name="req-0", **kw):
    return {"name": name, "exactly": exact(**kw)}


def fa(name, subs):
    return {"name": name, "firstAvailable": subs}


def sub(name, **kw):
    s = {"name": name}
    s.update(exact(**kw))
    return s


def claim(name, requests, constraints=None, config=None, allocation=None, ns="default"):
    spec = {"devices": {"requests": requests}}
    if constraints:
        spec["devices"]["constraints"] = constraints
    if config:
        spec["devices"]["config"] = config
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": name, "namespace": ns, "uid": "uid-" + name}, "spec": spec}
    if allocation:
        c["status"] = {"allocation": {"devices": {"results": allocation}}}
    return c


def res(device, request="req-0", pool="pool-1", driver="driver-a", **extra):
    r = {"request": request, "driver": driver, "pool": pool, "device": device}
    r.update(extra)
    return r


def case(name, objects, expect, node_name="node-1", claims=None, features=None, in_flight=None,
         nodes=True):
    t = {"apiVersion": "gantry.dev/v1alpha1", "kind": "AllocatorTest", "node": node_name,
         "expect": expect}
    if claims is not None:
        t["claims"] = claims
    if features:
        t["features"] = features
    if in_flight:
        t["inFlight"] = in_flight
    docs = [t] + (NODES if nodes else []) + list(objects)
    assert name not in CASES, name
    CASES[name] = docs


def ok(**claims):
    return {"results": {k.replace("_", "-"): v for k, v in claims.items()}}


UNSAT = {"unsatisfiable": True}


def err(s):
    return {"error": s}


D1, D2, D3 = dev("device-1"), dev("device-2"), dev("device-3")
S1 = rslice("slice-1", devices=[D1])
S12 = rslice("slice-1", devices=[D1, D2])

# ---- Basics -------------------------------------------------------------------
case("empty", [], ok(), claims=[])
case("simple", [CLASS_A, S1, claim("claim-0", [req()])], ok(claim_0=[res("device-1")]))
case("other-node", [CLASS_A, rslice("slice-1", node_name="node-2", devices=[D1]),
                    rslice("slice-2", pool="pool-2", devices=[D2]), claim("claim-0", [req()])],
     ok(claim_0=[res("device-2", pool="pool-2")]))
small = dev("device-1", {"size": {"int": 1}}, None)
large = dev("device-2", {"size": {"int": 2}}, None)
SIZE_SMALL = 'device.attributes["driver-a"].size == 1'
SIZE_ANY = 'device.attributes["driver-a"].size >= 1'
case("small-and-large", [CLASS_A, rslice("slice-1", devices=[small, large]),
                         claim("claim-0", [req("req-0", selectors=[SIZE_SMALL]),
                                           req("req-1", selectors=[SIZE_ANY])])],
     ok(claim_0=[res("device-1"), res("device-2", request="req-1")]))
case("small-and-large-backtrack-requests",
     [CLASS_A, rslice("slice-1", devices=[small, large]),
      claim("claim-0", [req("req-0", selectors=[SIZE_ANY]), req("req-1", selectors=[SIZE_SMALL])])],
     ok(claim_0=[res("device-2"), res("device-1", request="req-1")]))
case("small-and-large-backtrack-claims",
     [CLASS_A, rslice("slice-1", devices=[small, large]),
      claim("claim-0", [req("req-0", selectors=[SIZE_ANY])]),
      claim("claim-1", [req("req-0", selectors=[SIZE_SMALL])])],
     ok(claim_0=[res("device-2")], claim_1=[res("device-1")]))
case("devices-split-across-different-slices",
     [CLASS_A, rslice("slice-1", devices=[D1], count=2), rslice("slice-2", devices=[D2], count=2),
      claim("claim-0", [req(count=2)])],
     ok(claim_0=[res("device-1"), res("device-2")]))
case("obsolete-slice",
     [CLASS_A, rslice("slice-1", devices=[D1], gen=1), rslice("slice-2", devices=[D2], gen=2),
      claim("claim-0", [req()])],
     ok(claim_0=[res("device-2")]))
case("duplicate-slice",
     [CLASS_A, rslice("slice-1", devices=[D1], count=2), rslice("slice-2", devices=[D1], count=2),
      claim("claim-0", [req()])],
     err("invalid resource pools were encountered"))
case("no-slices", [CLASS_A, claim("claim-0", [req()])], UNSAT)
case("not-enough-suitable-devices", [CLASS_A, S1, claim("claim-0", [req(count=2)])], UNSAT)
case("no-classes", [S1, claim("claim-0", [req()])], err("could not retrieve device class class-a"))
case("unknown-class", [CLASS_A, S1, claim("claim-0", [req(cls="unknown-class")])],
     err("could not retrieve device class unknown-class"))
case("empty-class", [CLASS_A, S1, claim("claim-0", [req(cls="")])], err("deviceClassName"))
case("no-claims-to-allocate", [CLASS_A, S1], ok(), claims=[])

# ---- All ------------------------------------------------------------------------
ALL = {"mode": "All"}
case("all-devices-single", [CLASS_A, S1, claim("claim-0", [req(**ALL)])], ok(claim_0=[res("device-1")]))
case("all-devices-many", [CLASS_A, S12, claim("claim-0", [req(**ALL)])],
     ok(claim_0=[res("device-1"), res("device-2")]))
case("all-devices-of-the-incomplete-pool",
     [CLASS_A, rslice("slice-1", devices=[D1], count=2), claim("claim-0", [req(**ALL)])],
     err("is currently being updated"))
case("all-devices-plus-another",
     [CLASS_A, CLASS_B, S1, rslice("slice-b", driver="driver-b", devices=[D1]),
      claim("claim-0", [req(**ALL)]), claim("claim-1", [req(cls="class-b")])],
     ok(claim_0=[res("device-1")], claim_1=[res("device-1", driver="driver-b")]))
case("all-devices-plus-another-reversed",
     [CLASS_A, CLASS_B, S1, rslice("slice-b", driver="driver-b", devices=[D1]),
      claim("claim-1", [req(cls="class-b")]), claim("claim-0", [req(**ALL)])],
     ok(claim_0=[res("device-1")], claim_1=[res("device-1", driver="driver-b")]))
case("all-devices-many-plus-another",
     [CLASS_A, CLASS_B, S12, rslice("slice-b", driver="driver-b", devices=[D1]),
      claim("claim-0", [req(**ALL)]), claim("claim-1", [req(cls="class-b")])],
     ok(claim_0=[res("device-1"), res("device-2")], claim_1=[res("device-1", driver="driver-b")]))
case("all-devices-many-plus-another-reversed",
     [CLASS_A, CLASS_B, S12, rslice("slice-b", driver="driver-b", devices=[D1]),
      claim("claim-1", [req(cls="class-b")]), claim("claim-0", [req(**ALL)])],
     ok(claim_0=[res("device-1"), res("device-2")], claim_1=[res("device-1", driver="driver-b")]))
case("all-devices-no-solution",
     [CLASS_A, S12, claim("claim-0", [req(**ALL)]), claim("claim-1", [req()])], UNSAT)
case("all-devices-no-solution-reversed",
     [CLASS_A, S12, claim("claim-1", [req()]), claim("claim-0", [req(**ALL)])], UNSAT)
case("all-devices-slice-without-devices",
     [CLASS_A, rslice("slice-1"), claim("claim-0", [req(**ALL)])], UNSAT)
case("all-devices-no-slices", [CLASS_A, claim("claim-0", [req(**ALL)])], UNSAT)
ALLOC_D1 = claim("other", [req()], allocation=[res("device-1")])
case("all-devices-some-allocated", [CLASS_A, S12, ALLOC_D1, claim("claim-0", [req(**ALL)])], UNSAT)
case("all-devices-some-allocated-admin-access",
     [CLASS_A, S12, ALLOC_D1, claim("claim-0", [req(admin=True, **ALL)])],
     ok(claim_0=[res("device-1", adminAccess=True), res("device-2", adminAccess=True)]))
case("all-devices-some-allocating-admin-access",
     [CLASS_A, S12, claim("claim-1", [req(admin=True)]), claim("claim-0", [req(**ALL)])], UNSAT)
case("count-devices-some-allocated-admin-access",
     [CLASS_A, S12, ALLOC_D1, claim("claim-0", [req(admin=True, count=2)])],
     ok(claim_0=[res("device-1", adminAccess=True), res("device-2", adminAccess=True)]))
case("separate-claims-share-device-admin-access",
     [CLASS_A, S1, claim("claim-0", [req(admin=True)]), claim("claim-1", [req(admin=True)])],
     ok(claim_0=[res("device-1", adminAccess=True)], claim_1=[res("device-1", adminAccess=True)]))
case("admin-access-claims-device-allocating-for-non-admin-access",
     [CLASS_A, S1, claim("claim-0", [req()]), claim("claim-1", [req(admin=True)])],
     ok(claim_0=[res("device-1")], claim_1=[res("device-1", adminAccess=True)]))
PL_ALL = [fa("req-0", [sub("subreq-0", **ALL), sub("subreq-1", cls="class-b")])]
SB = rslice("slice-b", pool="pool-b", driver="driver-b", devices=[D1])
PL_RES = ok(claim_0=[res("device-1", request="req-0/subreq-1", pool="pool-b", driver="driver-b")])
case("all-devices-slice-without-devices-prioritized-list",
     [CLASS_A, CLASS_B, rslice("slice-1"), SB, claim("claim-0", PL_ALL)], PL_RES)
case("all-devices-no-slices-prioritized-list", [CLASS_A, CLASS_B, SB, claim("claim-0", PL_ALL)], PL_RES)
case("all-devices-some-allocated-prioritized-list",
     [CLASS_A, CLASS_B, S12, SB, ALLOC_D1, claim("claim-0", PL_ALL)], PL_RES)

# ---- Topology -------------------------------------------------------------------------
WEST = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["west"]}]}]}
EAST = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["east"]}]}]}
case("network-attached-device",
     [CLASS_A, rslice("slice-1", node_name=None, nodeSelector=WEST, devices=[D1]), claim("claim-0", [req()])],
     dict(ok(claim_0=[res("device-1")]), nodeSelector={"claim-0": "region In [west]"}))
case("unsuccessful-allocation-network-attached-device",
     [CLASS_A, rslice("slice-1", node_name=None, nodeSelector=EAST, devices=[D1]), claim("claim-0", [req()])],
     UNSAT)
case("many-network-attached-devices",
     [CLASS_A,
      rslice("slice-1", node_name=None, nodeSelector=WEST, devices=[D1]),
      rslice("slice-2", pool="pool-2", node_name=None,
             nodeSelector={"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                                   "values": ["node-1"]}]}]}, devices=[D1]),
      rslice("slice-3", pool="pool-3", node_name=None, allNodes=True, devices=[D1]),
      claim("claim-0", [req(count=3)])],
     dict(ok(claim_0=[res("device-1"), res("device-1", pool="pool-2"), res("device-1", pool="pool-3")]),
          nodeSelector={"claim-0": "metadata.name In [node-1]; region In [west]"}))
case("local-and-network-attached-devices",
     [CLASS_A, rslice("slice-1", node_name=None, nodeSelector=WEST, devices=[D1]),
      rslice("slice-2", pool="pool-2", devices=[D1]), claim("claim-0", [req(count=2)])],
     dict(ok(claim_0=[res("device-1"), res("device-1", pool="pool-2")]),
          nodeSelector={"claim-0": "metadata.name In [node-1]"}))
case("several-different-drivers",
     [CLASS_A, CLASS_B, S1, rslice("slice-b", driver="driver-b", devices=[D1]),
      claim("claim-0", [req(), req("req-1", cls="class-b")])],
     ok(claim_0=[res("device-1"), res("device-1", request="req-1", driver="driver-b")]))
case("already-allocated-devices", [CLASS_A, S1, ALLOC_D1, claim("claim-0", [req()])], UNSAT)

# ---- Admin access and constraints ---------------------------------------------------------
case("admin-access-disabled", [CLASS_A, S1, claim("claim-0", [req(admin=True)])],
     err("admin access is requested, but the feature is disabled"), features={"adminAccess": False})
case("admin-access-enabled", [CLASS_A, S1, ALLOC_D1, claim("claim-0", [req(admin=True)])],
     ok(claim_0=[res("device-1", adminAccess=True)]))


def constraint(attr, requests=None, distinct=False):
    c = {"distinctAttribute" if distinct else "matchAttribute": attr}
    if requests:
        c["requests"] = requests
    return c


D2_SAME = dev("device-2")
case("with-constraint",
     [CLASS_A, rslice("slice-1", devices=[D1, D2_SAME]),
      claim("claim-0", [req(count=2)], constraints=[constraint("driver-a/numa"), constraint("driver-a/driverVersion"),
                                                    constraint("driver-a/stringAttribute"),
                                                    constraint("driver-a/boolAttribute")])],
     ok(claim_0=[res("device-1"), res("device-2")]))
case("with-constraint-non-existent-attribute",
     [CLASS_A, S12, claim("claim-0", [req(count=2)], constraints=[constraint("driver-a/missing")])], UNSAT)


def other_attr(key, value):
    a = {"numa": {"int": 1}, "driverVersion": {"version": "1.0.0"},
         "stringAttribute": {"string": "stringAttributeValue"}, "boolAttribute": {"bool": True}}
    a[key] = value
    return dev("device-2", a)


for kind, key, val in [("int", "numa", {"int": 2}), ("string", "stringAttribute", {"string": "other"}),
                       ("bool", "boolAttribute", {"bool": False}), ("version", "driverVersion", {"version": "1.1.0"})]:
    case(f"with-constraint-not-matching-{kind}-attribute",
         [CLASS_A, rslice("slice-1", devices=[D1, other_attr(key, val)]),
          claim("claim-0", [req(count=2)], constraints=[constraint(f"driver-a/{key}")])], UNSAT)
case("with-constraint-not-matching-int-attribute-all-devices",
     [CLASS_A, rslice("slice-1", devices=[D1, other_attr("numa", {"int": 2})]),
      claim("claim-0", [req(**ALL)], constraints=[constraint("driver-a/numa")])],
     err("because a claim constraint would not be satisfied"))
case("with-constraint-for-request",
     [CLASS_A, rslice("slice-1", devices=[dev("device-1", {"numa": {"int": 1}}), dev("device-2", {"numa": {"int": 2}})]),
      claim("claim-0", [req("req-0"), req("req-1")], constraints=[constraint("driver-a/numa", ["req-0"])])],
     ok(claim_0=[res("device-1"), res("device-2", request="req-1")]))
case("with-constraint-for-request-retry",
     [CLASS_A, rslice("slice-1", devices=[dev("device-1", {"numa": {"int": 1}}), dev("device-2", {"numa": {"int": 2}}),
                                          dev("device-3", {"numa": {"int": 2}})]),
      claim("claim-0", [req("req-0"), req("req-1")], constraints=[constraint("driver-a/numa")])],
     ok(claim_0=[res("device-2"), res("device-3", request="req-1")]))

# ---- Config and malformed input -----------------------------------------------------------
CFG = [{"opaque": {"driver": "driver-a", "parameters": {"kind": "ClassConfig"}}}]
case("with-class-device-config",
     [dclass("class-a", config=CFG), S1, claim("claim-0", [req()])],
     dict(ok(claim_0=[res("device-1")]), config={"claim-0": [{"source": "FromClass", "requests": []}]}))
case("claim-with-device-config",
     [CLASS_A, S1, claim("claim-0", [req()], config=[{"requests": ["req-0"],
                                                      "opaque": {"driver": "driver-a", "parameters": {"k": 1}}}])],
     dict(ok(claim_0=[res("device-1")]), config={"claim-0": [{"source": "FromClaim", "requests": []}]}))
case("unknown-selector",
     [CLASS_A, S1, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "claim-0", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {
                        "deviceClassName": "class-a", "selectors": [{"other": {}}]}}]}}}],
     err("selectors[0]"))
case("unknown-allocation-mode",
     [CLASS_A, S1, claim("claim-0", [req(mode="Unknown")])], err("allocationMode"))
case("unknown-constraint",
     [CLASS_A, S1, claim("claim-0", [req()], constraints=[{"requests": ["req-0"]}])], err("constraints[0]"))
case("unknown-device",
     [CLASS_A, S12, claim("other", [req()], allocation=[res("device-9")]), claim("claim-0", [req()])],
     ok(claim_0=[res("device-1")]))
case("invalid-CEL-one-device",
     [CLASS_A, S1, claim("claim-0", [req(selectors=["noSuchVar"])])], err("undeclared reference"))
case("invalid-CEL-one-device-class",
     [dclass("class-a", selectors=["noSuchVar"]), S1, claim("claim-0", [req()])], err("undeclared reference"))
case("invalid-CEL-all-devices",
     [CLASS_A, S1, claim("claim-0", [req(selectors=["noSuchVar"], **ALL)])], err("undeclared reference"))
case("too-many-devices-single-request",
     [CLASS_A, S1, claim("claim-0", [req(count=500)])], err("count"))
case("too-many-devices-total",
     [CLASS_A, S1, claim("claim-0", [req("req-%d" % i, count=16) for i in range(3)])],
     err("exceeds the claim limit of 32"))
MANY = rslice("slice-1", devices=[dev("device-%d" % i, {}) for i in range(1, 33)])
case("many-devices-okay",
     [CLASS_A, MANY, claim("claim-0", [req(count=32)])],
     ok(claim_0=[res("device-%d" % i) for i in range(1, 33)]))
case("all-devices-invalid-CEL",
     [CLASS_A, S12, claim("claim-0", [req(selectors=["noSuchVar"], **ALL)])], err("undeclared reference"))

# ---- Prioritized list -----------------------------------------------------------------------
LARGE_SEL = 'device.attributes["driver-a"].size == 2'
case("prioritized-list-first-unavailable",
     [CLASS_A, rslice("slice-1", devices=[small]),
      claim("claim-0", [fa("req-0", [sub("subreq-0", selectors=[LARGE_SEL]), sub("subreq-1")])])],
     ok(claim_0=[res("device-1", request="req-0/subreq-1")]))
case("prioritized-list-non-available",
     [CLASS_A, rslice("slice-1", devices=[small]),
      claim("claim-0", [fa("req-0", [sub("subreq-0", selectors=[LARGE_SEL]), sub("subreq-1", count=2)])])],
     UNSAT)
case("prioritized-list-device-config",
     [CLASS_A, rslice("slice-1", devices=[small]),
      claim("claim-0", [fa("req-0", [sub("subreq-0", selectors=[LARGE_SEL]), sub("subreq-1")])],
            config=[{"requests": ["req-0/subreq-1"], "opaque": {"driver": "driver-a", "parameters": {"k": 1}}}])],
     dict(ok(claim_0=[res("device-1", request="req-0/subreq-1")]),
          config={"claim-0": [{"source": "FromClaim", "requests": []}]}))
case("prioritized-list-class-config",
     [dclass("class-a", config=CFG), rslice("slice-1", devices=[small]),
      claim("claim-0", [fa("req-0", [sub("subreq-0", selectors=[LARGE_SEL]), sub("subreq-1")])])],
     dict(ok(claim_0=[res("device-1", request="req-0/subreq-1")]),
          config={"claim-0": [{"source": "FromClass", "requests": []}]}))
case("prioritized-list-subrequests-with-expressions",
     [CLASS_A, rslice("slice-1", devices=[small, large]),
      claim("claim-0", [fa("req-0", [sub("subreq-0", selectors=[LARGE_SEL], count=2),
                                     sub("subreq-1", selectors=[SIZE_SMALL])])])],
     ok(claim_0=[res("device-1", request="req-0/subreq-1")]))
NUMA = lambda n, v: dev(n, {"numa": {"int": v}})
case("prioritized-list-subrequests-with-constraints-ref-parent-request",
     [CLASS_A, CLASS_B, rslice("slice-1", devices=[NUMA("device-1", 1), NUMA("device-2", 2)]),
      rslice("slice-b", driver="driver-b", devices=[dev("device-1", {"driver-a/numa": {"int": 2}})]),
      claim("claim-0", [fa("req-0", [sub("subreq-0", count=2), sub("subreq-1")]), req("req-1", cls="class-b")],
            constraints=[constraint("driver-a/numa", ["req-0", "req-1"])])],
     ok(claim_0=[res("device-2", request="req-0/subreq-1"), res("device-1", request="req-1", driver="driver-b")]))
case("prioritized-list-subrequests-with-constraints-ref-sub-request",
     [CLASS_A, CLASS_B, rslice("slice-1", devices=[NUMA("device-1", 1), NUMA("device-2", 2)]),
      rslice("slice-b", driver="driver-b", devices=[dev("device-1", {"driver-a/numa": {"int": 2}})]),
      claim("claim-0", [fa("req-0", [sub("subreq-0", count=2), sub("subreq-1")]), req("req-1", cls="class-b")],
            constraints=[constraint("driver-a/numa", ["req-0/subreq-1", "req-1"])])],
     ok(claim_0=[res("device-1", request="req-0/subreq-0"), res("device-2", request="req-0/subreq-0"),
                 res("device-1", request="req-1", driver="driver-b")]))
case("prioritized-list-subrequests-with-allocation-mode-all",
     [CLASS_A, rslice("slice-1", devices=[small, large]), ALLOC_D1,
      claim("claim-0", [fa("req-0", [sub("subreq-0", **ALL), sub("subreq-1")])])],
     ok(claim_0=[res("device-2", request="req-0/subreq-1")]))
case("prioritized-list-allocation-mode-all-multiple-requests",
     [CLASS_A, S12, claim("claim-0", [fa("req-0", [sub("subreq-0", **ALL), sub("subreq-1")]),
                                      fa("req-1", [sub("subreq-0", **ALL), sub("subreq-1")])])],
     ok(claim_0=[res("device-1", request="req-0/subreq-1"), res("device-2", request="req-1/subreq-1")]))
case("prioritized-list-disabled",
     [CLASS_A, S1, claim("claim-0", [fa("req-0", [sub("subreq-0")])])],
     err("DRAPrioritizedList feature is disabled"), features={"prioritizedList": False})
case("prioritized-list-multi-request",
     [CLASS_A, rslice("slice-1", devices=[small, large]),
      claim("claim-0", [req("req-1", selectors=[LARGE_SEL]),
                        fa("req-0", [sub("subreq-0", selectors=[LARGE_SEL]), sub("subreq-1", selectors=[SIZE_SMALL])])])],
     ok(claim_0=[res("device-2", request="req-1"), res("device-1", request="req-0/subreq-1")]))
case("prioritized-list-with-backtracking",
     [CLASS_A, rslice("slice-1", devices=[small, large]),
      claim("claim-0", [fa("req-0", [sub("subreq-0", selectors=[SIZE_ANY]), sub("subreq-1", selectors=[SIZE_SMALL])]),
                        req("req-1", selectors=[SIZE_SMALL])])],
     ok(claim_0=[res("device-2", request="req-0/subreq-0"), res("device-1", request="req-1")]))
case("prioritized-list-too-many-in-first-subrequest",
     [CLASS_A, S1, claim("claim-0", [fa("req-0", [sub("subreq-0", count=33), sub("subreq-1")])])],
     err("count"))
case("prioritized-list-allocation-mode-all",
     [CLASS_A, S12, claim("claim-0", [fa("req-0", [sub("subreq-0", **ALL), sub("subreq-1")])])],
     ok(claim_0=[res("device-1", request="req-0/subreq-0"), res("device-2", request="req-0/subreq-0")]))
MANY_SLICE = rslice("slice-1", devices=[dev("device-%d" % i, {}) for i in range(1, 41)])
case("prioritized-list-max-allocation-limit-request",
     [CLASS_A, MANY_SLICE,
      claim("claim-0", [fa("req-0", [sub("subreq-0", count=30)]), fa("req-1", [sub("subreq-0", count=3), sub("subreq-1", count=2)])])],
     dict(ok(claim_0=[res("device-%d" % i, request="req-0/subreq-0") for i in range(1, 31)]
             + [res("device-31", request="req-1/subreq-1"), res("device-32", request="req-1/subreq-1")]),
          maxSteps=200))
case("prioritized-list-max-allocation-allocation-mode-all",
     [CLASS_A, MANY_SLICE,
      claim("claim-0", [fa("req-0", [sub("subreq-0", **ALL), sub("subreq-1", count=2)])])],
     dict(ok(claim_0=[res("device-1", request="req-0/subreq-1"), res("device-2", request="req-0/subreq-1")]),
          maxSteps=100))

# ---- Partitionable devices --------------------------------------------------------------------
COUNTERS = [{"name": "counter-set-1", "counters": {"memory": {"value": "8Gi"}}}]


def part(name, mem, cset="counter-set-1", counter="memory", attrs=None):
    return dev(name, attrs if attrs is not None else {}, None,
               consumesCounters=[{"counterSet": cset, "counters": {counter: {"value": mem}}}])


def cslice(counters=COUNTERS, pool="pool-1", count=2, name="slice-counters", node_name="node-1", **extra):
    return rslice(name, pool=pool, node_name=node_name, count=count, sharedCounters=counters, **extra)


case("partitionable-devices-single-device",
     [CLASS_A, cslice(), rslice("slice-1", count=2, devices=[part("device-1", "4Gi")]), claim("claim-0", [req()])],
     ok(claim_0=[res("device-1")]))
case("partitionable-devices-prioritized-list",
     [CLASS_A, cslice(), rslice("slice-1", count=2, devices=[part("device-1", "10Gi"), part("device-2", "6Gi")]),
      claim("claim-0", [fa("req-0", [sub("subreq-0", selectors=['device.capacity["driver-a"].?memory.orValue(quantity("0")).compareTo(quantity("10Gi")) >= 0']), sub("subreq-1")])])],
     ok(claim_0=[res("device-2", request="req-0/subreq-1")]))
case("partitionable-devices-multiple-devices",
     [CLASS_A, cslice(), rslice("slice-1", count=2, devices=[part("device-1", "4Gi"), part("device-2", "4Gi"),
                                                             part("device-3", "4Gi")]),
      claim("claim-0", [req(count=2)])],
     ok(claim_0=[res("device-1"), res("device-2")]))
TWO_SETS = [{"name": "counter-set-1", "counters": {"memory": {"value": "8Gi"}}},
            {"name": "counter-set-2", "counters": {"memory": {"value": "8Gi"}}}]
case("partitionable-devices-multiple-capacity-pools",
     [CLASS_A, cslice(TWO_SETS), rslice("slice-1", count=2, devices=[part("device-1", "8Gi"), part("device-2", "8Gi"),
                                                                    part("device-3", "8Gi", "counter-set-2")]),
      claim("claim-0", [req(count=2)])],
     ok(claim_0=[res("device-1"), res("device-3")]))
MULTI_COUNTERS = [{"name": "counter-set-1", "counters": {"memory": {"value": "8Gi"}, "cores": {"value": "4"}}}]
case("partitionable-devices-multiple-counters",
     [CLASS_A, cslice(MULTI_COUNTERS),
      rslice("slice-1", count=2, devices=[
          dev("device-1", {}, None, consumesCounters=[{"counterSet": "counter-set-1", "counters": {"memory": {"value": "2Gi"}, "cores": {"value": "3"}}}]),
          dev("device-2", {}, None, consumesCounters=[{"counterSet": "counter-set-1", "counters": {"memory": {"value": "2Gi"}, "cores": {"value": "2"}}}]),
          dev("device-3", {}, None, consumesCounters=[{"counterSet": "counter-set-1", "counters": {"memory": {"value": "2Gi"}, "cores": {"value": "1"}}}])]),
      claim("claim-0", [req(count=2)])],
     ok(claim_0=[res("device-1"), res("device-3")]))
case("partitionable-devices-multiple-pools",
     [CLASS_A, cslice(), rslice("slice-1", count=2, devices=[part("device-1", "4Gi"), part("device-2", "6Gi"),
                                                             part("device-3", "4Gi")]),
      cslice(pool="pool-2", name="slice-counters-2"),
      rslice("slice-2", pool="pool-2", count=2, devices=[part("device-1", "4Gi")]),
      claim("other", [req()], allocation=[res("device-1")]),
      claim("claim-0", [req(count=2)])],
     ok(claim_0=[res("device-3"), res("device-1", pool="pool-2")]))
case("partitionable-devices-unused-counters-in-counter-set",
     [CLASS_A, cslice(MULTI_COUNTERS), rslice("slice-1", count=2, devices=[part("device-1", "4Gi")]),
      claim("claim-0", [req()])],
     ok(claim_0=[res("device-1")]))
case("partitionable-devices-no-capacity-available",
     [CLASS_A, cslice(), rslice("slice-1", count=2, devices=[part("device-1", "8Gi"), part("device-2", "4Gi")]),
      claim("other", [req()], allocation=[res("device-1")]), claim("claim-0", [req()])],
     UNSAT)
case("partitionable-devices-overallocated-capacity-pool",
     [CLASS_A, cslice(), rslice("slice-1", count=2, devices=[part("device-1", "6Gi"), part("device-2", "6Gi")]),
      claim("claim-0", [req(count=2)])],
     UNSAT)
case("partitionable-devices-disabled-device-consumes-counters",
     [CLASS_A, cslice(), rslice("slice-1", count=2, devices=[part("device-1", "4Gi")]), claim("claim-0", [req()])],
     UNSAT, features={"partitionableDevices": False})
case("partitionable-devices-disabled-other-device-do-not-consume-counters",
     [CLASS_A, rslice("slice-1", devices=[dev("device-1", {})]), claim("claim-0", [req()])],
     ok(claim_0=[res("device-1")]), features={"partitionableDevices": False})
case("partitionable-devices-disabled-per-device-node-selection",
     [CLASS_A, rslice("slice-1", node_name=None, perDeviceNodeSelection=True,
                      devices=[dev("device-1", {}, None, nodeName="node-1")]), claim("claim-0", [req()])],
     UNSAT, features={"partitionableDevices": False})
case("partitionable-devices-per-device-node-selection-nodename",
     [CLASS_A, rslice("slice-1", node_name=None, perDeviceNodeSelection=True,
                      devices=[dev("device-1", {}, None, nodeName="node-2"), dev("device-2", {}, None, nodeName="node-1")]),
      claim("claim-0", [req()])],
     dict(ok(claim_0=[res("device-2")]), nodeSelector={"claim-0": "metadata.name In [node-1]"}))
case("partitionable-devices-per-device-node-selection-node-selector",
     [CLASS_A, rslice("slice-1", node_name=None, perDeviceNodeSelection=True,
                      devices=[dev("device-1", {}, None, nodeSelector=EAST), dev("device-2", {}, None, nodeSelector=WEST)]),
      claim("claim-0", [req()])],
     dict(ok(claim_0=[res("device-2")]), nodeSelector={"claim-0": "region In [west]"}))
case("partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
     [CLASS_A, rslice("slice-1", node_name=None, perDeviceNodeSelection=True,
                      devices=[dev("device-1", {}, None, nodeSelector=WEST), dev("device-2", {}, None, allNodes=True),
                               dev("device-3", {}, None, nodeSelector=EAST)]),
      claim("claim-0", [req(count=2)])],
     dict(ok(claim_0=[res("device-1"), res("device-2")]), nodeSelector={"claim-0": "region In [west]"}))
case("partitionable-devices-with-attribute-selector",
     [CLASS_A, cslice(), rslice("slice-1", count=2, devices=[part("device-1", "4Gi", attrs={"size": {"int": 2}}),
                                                             part("device-2", "4Gi", attrs={"size": {"int": 1}})]),
      claim("claim-0", [req(selectors=[SIZE_SMALL])])],
     ok(claim_0=[res("device-2")]))

# ---- Taints ------------------------------------------------------------------------------------
T1 = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
T2 = {"key": "taint-key-2", "value": "taint-value-2", "effect": "NoExecute"}
TOL1 = {"key": "taint-key", "operator": "Equal", "value": "taint-value", "effect": "NoSchedule"}
TOL2 = {"key": "taint-key-2", "operator": "Exists"}
TD1 = dev("device-1", {}, None, taints=[T1])
TD2 = dev("device-2", {}, None, taints=[T2])
TD12 = dev("device-1", {}, None, taints=[T1, T2])
case("tainted-two-devices", [CLASS_A, rslice("slice-1", devices=[TD1, TD2]), claim("claim-0", [req()])], UNSAT)
case("tainted-one-device-two-taints", [CLASS_A, rslice("slice-1", devices=[TD12]), claim("claim-0", [req()])], UNSAT)
case("tainted-two-devices-tolerated",
     [CLASS_A, rslice("slice-1", devices=[TD1, TD2]), claim("claim-0", [req(tolerations=[TOL2])])],
     ok(claim_0=[res("device-2")]))
case("tainted-one-device-two-taints-both-tolerated",
     [CLASS_A, rslice("slice-1", devices=[TD12]), claim("claim-0", [req(tolerations=[TOL1, TOL2])])],
     ok(claim_0=[res("device-1")]))
case("tainted-disabled", [CLASS_A, rslice("slice-1", devices=[TD1, TD2]), claim("claim-0", [req()])],
     ok(claim_0=[res("device-1")]), features={"deviceTaints": False})
case("tainted-prioritized-list",
     [CLASS_A, rslice("slice-1", devices=[TD1, TD2]),
      claim("claim-0", [fa("req-0", [sub("subreq-0"), sub("subreq-1", tolerations=[TOL2])])])],
     ok(claim_0=[res("device-2", request="req-0/subreq-1")]))
case("tainted-prioritized-list-disabled",
     [CLASS_A, rslice("slice-1", devices=[TD1, TD2]),
      claim("claim-0", [fa("req-0", [sub("subreq-0"), sub("subreq-1", tolerations=[TOL2])])])],
     ok(claim_0=[res("device-1", request="req-0/subreq-0")]), features={"deviceTaints": False})
case("tainted-admin-access", [CLASS_A, rslice("slice-1", devices=[TD1, TD2]), claim("claim-0", [req(admin=True)])], UNSAT)
case("tainted-admin-access-disabled", [CLASS_A, rslice("slice-1", devices=[TD1, TD2]), claim("claim-0", [req(admin=True)])],
     ok(claim_0=[res("device-1", adminAccess=True)]), features={"deviceTaints": False})
case("tainted-all-devices-single", [CLASS_A, rslice("slice-1", devices=[TD1]), claim("claim-0", [req(**ALL)])], UNSAT)
case("tainted-all-devices-single-disabled", [CLASS_A, rslice("slice-1", devices=[TD1]), claim("claim-0", [req(**ALL)])],
     ok(claim_0=[res("device-1")]), features={"deviceTaints": False})

# ---- Other -----------------------------------------------------------------------------------
case("max-number-devices",
     [CLASS_A, MANY, claim("claim-0", [req(count=33)])], err("count"))
# Upstream's interrupt/{off,timeout,deadline,cancel} test context cancellation;
# Gantry's equivalent is the deadline/step budget: a no-solution search is bounded.
case("interrupt-off", [CLASS_A, S12, claim("claim-0", [req(count=2)])], ok(claim_0=[res("device-1"), res("device-2")]))

# ---- Lexicographical ordering (lexicographical_testing.go) ---------------------------------------
case("lexicographical-sorting-pools",
     [CLASS_A, rslice("slice-3", pool="pool-3", devices=[D1]), rslice("slice-1", pool="pool-1", devices=[D1]),
      rslice("slice-2", pool="pool-2", devices=[D1]), claim("claim-0", [req()])],
     ok(claim_0=[res("device-1", pool="pool-1")]))
case("lexicographical-sorting-slices",
     [CLASS_A, rslice("slice-3", devices=[D3], count=3), rslice("slice-1", devices=[D1], count=3),
      rslice("slice-2", devices=[D2], count=3), claim("claim-0", [req()])],
     ok(claim_0=[res("device-1")]))
BC = dev("device-1", {}, None, bindingConditions=["ready"], bindingFailureConditions=["failed"])
case("lexicographical-sorting-pools-with-binding-conditions",
     [CLASS_A, rslice("slice-1", pool="pool-1", devices=[BC]), rslice("slice-2", pool="pool-2", devices=[D1]),
      claim("claim-0", [req()])],
     ok(claim_0=[res("device-1", pool="pool-2")]))
case("lexicographical-sorting-slices-with-binding-conditions",
     [CLASS_A, rslice("slice-1", devices=[dev("device-1", {}, None, bindingConditions=["ready"], bindingFailureConditions=["failed"])], count=2),
      rslice("slice-2", devices=[D2], count=2), claim("claim-0", [req()])],
     ok(claim_0=[res("device-1")]))

# ---- Gantry's own ----------------------------------------------------------------------------
case("gantry-consumable-capacity-range",
     [CLASS_A, rslice("slice-1", devices=[dev("device-1", {}, {"bandwidth": {"value": "10Gi", "requestPolicy": {
         "default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}}}, allowMultipleAllocations=True)]),
      claim("claim-0", [req(capacity={"bandwidth": "2500Mi"})]), claim("claim-1", [req(capacity={"bandwidth": "2500Mi"})])],
     ok(claim_0=[res("device-1", shareID=True, consumedCapacity={"bandwidth": "3Gi"})],
        claim_1=[res("device-1", shareID=True, consumedCapacity={"bandwidth": "3Gi"})]))
case("gantry-consumable-capacity-exhausted",
     [CLASS_A, rslice("slice-1", devices=[dev("device-1", {}, {"bandwidth": {"value": "4Gi", "requestPolicy": {
         "default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}}}, allowMultipleAllocations=True)]),
      claim("claim-0", [req(capacity={"bandwidth": "2500Mi"})]), claim("claim-1", [req(capacity={"bandwidth": "2500Mi"})])],
     UNSAT)
case("gantry-consumable-capacity-valid-values",
     [CLASS_A, rslice("slice-1", devices=[dev("device-1", {}, {"memory": {"value": "8Gi", "requestPolicy": {
         "default": "2Gi", "validValues": ["2Gi", "4Gi", "8Gi"]}}}, allowMultipleAllocations=True)]),
      claim("claim-0", [req(capacity={"memory": "3Gi"})]), claim("claim-1", [req()])],
     ok(claim_0=[res("device-1", shareID=True, consumedCapacity={"memory": "4Gi"})],
        claim_1=[res("device-1", shareID=True, consumedCapacity={"memory": "2Gi"})]))
case("gantry-consumable-capacity-non-shared-filter",
     [CLASS_A, rslice("slice-1", devices=[dev("device-1", {}, {"memory": {"value": "4Gi"}}),
                                          dev("device-2", {}, {"memory": {"value": "16Gi"}})]),
      claim("claim-0", [req(capacity={"memory": "8Gi"})])],
     ok(claim_0=[res("device-2")]))
# Shared devices that consume counters hold them once, while any allocation
# shares them (whatever capacity it consumed), and are then no partition's.
SHARED_COUNTERS = [{"name": "counter-set-1", "counters": {"memory": {"value": "8Gi"}}}]
KIND = lambda k: 'device.attributes["driver-a"].kind == "%s"' % k


def shared_dev(name, kind, capacity=None):
    return dev(name, {"kind": {"string": kind}}, capacity, allowMultipleAllocations=True,
               consumesCounters=[{"counterSet": "counter-set-1", "counters": {"memory": {"value": "8Gi"}}}])


SHARED_POOL = [cslice(SHARED_COUNTERS),
               rslice("slice-1", count=2, devices=[
                   shared_dev("device-1", "shared", {"bandwidth": {"value": "4Gi"}}),
                   shared_dev("device-2", "nocap"),
                   part("device-3", "8Gi", attrs={"kind": {"string": "part"}})])]
case("gantry-shared-device-holds-counters",
     [CLASS_A] + SHARED_POOL + [
         claim("other", [req()], allocation=[res("device-1", shareID="a1", consumedCapacity={"bandwidth": "1Gi"})]),
         claim("claim-0", [req(selectors=[KIND("part")])])],
     UNSAT)
case("gantry-shared-device-zero-capacity-holds-counters",
     [CLASS_A] + SHARED_POOL + [
         claim("other", [req()], allocation=[res("device-1", shareID="a1", consumedCapacity={"bandwidth": "0"})]),
         claim("claim-0", [req(selectors=[KIND("part")])])],
     UNSAT)
case("gantry-shared-device-no-capacity-holds-counters",
     [CLASS_A] + SHARED_POOL + [
         claim("other", [req()], allocation=[res("device-2", shareID="a1")]),
         claim("claim-0", [req(selectors=[KIND("part")])])],
     UNSAT)
case("gantry-shared-device-shared-again",
     [CLASS_A] + SHARED_POOL + [
         claim("other", [req()], allocation=[res("device-2", shareID="a1")]),
         claim("claim-0", [req(selectors=[KIND("nocap")])])],
     ok(claim_0=[res("device-2", shareID=True)]))
case("gantry-shared-device-counters-taken",
     [CLASS_A] + SHARED_POOL + [
         claim("other", [req()], allocation=[res("device-3")]),
         claim("claim-0", [req(selectors=[KIND("nocap")])])],
     UNSAT)
case("gantry-shared-device-not-exclusive-while-shared",
     [CLASS_A] + SHARED_POOL + [
         claim("other", [req()], allocation=[res("device-2", shareID="a1")]),
         claim("claim-0", [req(selectors=[KIND("nocap")])])],
     UNSAT, features={"consumableCapacity": False})
case("gantry-distinct-attribute",
     [CLASS_A, rslice("slice-1", devices=[NUMA("device-1", 1), NUMA("device-2", 1), NUMA("device-3", 2)]),
      claim("claim-0", [req(count=2)], constraints=[constraint("driver-a/numa", distinct=True)])],
     ok(claim_0=[res("device-1"), res("device-3")]))
case("gantry-distinct-attribute-no-solution",
     [CLASS_A, rslice("slice-1", devices=[NUMA("device-1", 1), NUMA("device-2", 1)]),
      claim("claim-0", [req(count=2)], constraints=[constraint("driver-a/numa", distinct=True)])],
     UNSAT)
LIST = lambda n, vals: dev(n, {"numaNodes": {"ints": vals}})
case("gantry-match-list-attribute",
     [CLASS_A, rslice("slice-1", devices=[LIST("device-1", [0, 1]), LIST("device-2", [2, 3]), LIST("device-3", [1, 2])]),
      claim("claim-0", [req(count=2)], constraints=[constraint("driver-a/numaNodes")])],
     ok(claim_0=[res("device-1"), res("device-3")]))
case("gantry-distinct-list-attribute",
     [CLASS_A, rslice("slice-1", devices=[LIST("device-1", [0, 1]), LIST("device-2", [1, 2]), LIST("device-3", [2, 3])]),
      claim("claim-0", [req(count=2)], constraints=[constraint("driver-a/numaNodes", distinct=True)])],
     ok(claim_0=[res("device-1"), res("device-3")]))
case("gantry-device-taint-rule",
     [CLASS_A, S12, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "rule-1"},
                     "spec": {"deviceSelector": {"driver": "driver-a", "pool": "pool-1", "device": "device-1"},
                              "taint": {"key": "maintenance", "effect": "NoSchedule"}}},
      claim("claim-0", [req()])],
     ok(claim_0=[res("device-2")]))
case("gantry-in-flight-allocation",
     [CLASS_A, S12, claim("claim-0", [req()])], ok(claim_0=[res("device-2")]),
     in_flight=[{"driver": "driver-a", "pool": "pool-1", "device": "device-1"}])
case("gantry-incomplete-pool-skipped",
     [CLASS_A, rslice("slice-1", devices=[D1], count=2), rslice("slice-2", pool="pool-2", devices=[D1]),
      claim("claim-0", [req()])],
     ok(claim_0=[res("device-1", pool="pool-2")]))
# Worst case: 16 of 32 devices share a pcieRoot, 17 wanted: bounded by pruning.
ROOTS = rslice("slice-1", devices=[dev("device-%d" % i, {"resource.kubernetes.io/pcieRoot": {"string": "pci%d" % (i % 2)}})
                                   for i in range(32)])
case("gantry-no-solution-bounded",
     [CLASS_A, ROOTS, claim("claim-0", [req(count=17)], constraints=[constraint("resource.kubernetes.io/pcieRoot")])],
     dict(UNSAT, maxSteps=5000))
case("gantry-n-minus-one-free",
     [CLASS_A, MANY, claim("other", [req()], allocation=[res("device-1")]), claim("claim-0", [req(count=32)])],
     dict(UNSAT, maxSteps=0))
case("gantry-binding-conditions-disabled",
     [CLASS_A, rslice("slice-1", devices=[dev("device-1", {}, None, bindingConditions=["ready"], bindingFailureConditions=["failed"])]), claim("claim-0", [req()])],
     UNSAT, features={"bindingConditions": False})


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".yaml"):
            os.remove(os.path.join(OUT, f))
    for name, docs in CASES.items():
        with open(os.path.join(OUT, name + ".yaml"), "w") as fh:
            fh.write(f"# DRA allocator scenario {name} (generated by ../gen_cases.py; edit there).\n")
            yaml.safe_dump_all(docs, fh, sort_keys=False, default_flow_style=None, width=120)
    print(len(CASES), "cases")


if __name__ == "__main__":
    main()
