#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (test/fuzz/corpus/<target>/).

Seeds are small objects taken from the repository's test data plus a few
hand-written ones for kinds the test data lacks. Run from the repository
root; existing seed files are replaced. Needs python3-yaml.
"""
import glob
import json
import os
import struct
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "fuzz", "corpus")
MAX_SEED = 3000  # bytes; larger documents are skipped

# Kind order of gantry::api::Kind (object_fuzz: first byte = index - 1).
KINDS = ["Pod", "Node", "Namespace", "PriorityClass", "PodDisruptionBudget", "DeviceClass",
         "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule", "Workload",
         "PodGroup", "CompositePodGroup", "CoschedulingPodGroup"]

HANDWRITTEN = [
    {"apiVersion": "v1", "kind": "Namespace",
     "metadata": {"name": "team-a", "labels": {"tier": "gpu"}}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
     "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never",
     "globalDefault": False},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
     "metadata": {"name": "gpu", "namespace": "default"},
     "spec": {"spec": {"devices": {"requests": [
         {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}]}}}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "r"},
     "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "p", "device": "d"},
              "taint": {"key": "k", "value": "v", "effect": "NoSchedule"}}},
    {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
     "metadata": {"name": "job", "namespace": "default"},
     "spec": {"podGroupTemplates": [
         {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}}}]}},
    {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
     "metadata": {"name": "pg", "namespace": "default"},
     "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "job",
                                                   "podGroupTemplateName": "workers"}},
              "schedulingPolicy": {"gang": {"minCount": 2}}}},
    {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
     "metadata": {"name": "tree", "namespace": "default"},
     "spec": {"workloadRef": {"workloadName": "job", "compositePodGroupTemplateName": "t"},
              "schedulingPolicy": {"minCount": 1}}},
    {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
     "metadata": {"name": "cos", "namespace": "default"},
     "spec": {"minMember": 3, "minResources": {"cpu": "3", "nvidia.com/gpu": "8"},
              "scheduleTimeoutSeconds": 60},
     "status": {"phase": "Scheduling", "running": 1}},
]


def kind_of(obj):
    if obj.get("apiVersion", "").startswith("scheduling.x-k8s.io/") and obj.get("kind") == "PodGroup":
        return "CoschedulingPodGroup"
    return obj.get("kind")


def load_objects():
    files = sorted(glob.glob(os.path.join(ROOT, "bench", "snapshots", "*.yaml")))
    files += sorted(glob.glob(os.path.join(ROOT, "test", "sim", "*", "*.yaml")))
    files += sorted(glob.glob(os.path.join(ROOT, "test", "conformance", "dra", "cases", "*.yaml")))[:40]
    files += [os.path.join(ROOT, "deploy", "poddisruptionbudget.yaml")]
    objs = []
    for f in files:
        with open(f) as fh:
            for doc in yaml.safe_load_all(fh):
                if isinstance(doc, dict) and kind_of(doc) in KINDS:
                    objs.append(doc)
    return objs + HANDWRITTEN


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as fh:
        fh.write(data if isinstance(data, bytes) else data.encode())


def clear(target):
    for f in glob.glob(os.path.join(OUT, target, "*")):
        os.remove(f)


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def main():
    objs = load_objects()
    per_kind = {}
    for t in ["object_fuzz", "watch_fuzz", "snapshot_fuzz", "yaml_fuzz", "selector_fuzz",
              "status_fuzz", "quantity_fuzz", "kubeconfig_fuzz", "config_fuzz"]:
        clear(t)

    # object_fuzz: up to 3 distinct small objects per kind.
    for o in objs:
        k = kind_of(o)
        text = json.dumps(o, separators=(",", ":"))
        if len(text) > MAX_SEED or per_kind.get(k, 0) >= 3:
            continue
        per_kind[k] = per_kind.get(k, 0) + 1
        write("object_fuzz", "%s_%d" % (k, per_kind[k]), bytes([KINDS.index(k)]) + text.encode())
        if per_kind[k] == 1:
            write("yaml_fuzz", k, yaml.safe_dump(o, sort_keys=False))

    # watch_fuzz: a stream per informer (0 Pod, 1 Node, 2 ResourceSlice, 3 ResourceClaim, 4 PodGroup).
    for sel, k in enumerate(["Pod", "Node", "ResourceSlice", "ResourceClaim", "PodGroup"]):
        mine = [o for o in objs if kind_of(o) == k and len(json.dumps(o)) < 1500][:2]
        lines = [json.dumps({"type": "LIST", "object": {"items": mine[:1]}})]
        lines += [json.dumps({"type": "ADDED", "object": o}) for o in mine]
        lines += [json.dumps({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}})]
        lines += [json.dumps({"type": "DELETED", "object": mine[-1]})] if mine else []
        write("watch_fuzz", k, bytes([sel]) + ("\n".join(lines) + "\r\n").encode())

    # snapshot_fuzz: JSON List and YAML stream of a few mixed objects (1 json, 2 yaml).
    small = [o for o in objs if len(json.dumps(o)) < 800]
    mix = []
    seen = set()
    for o in small:
        if kind_of(o) not in seen:
            seen.add(kind_of(o))
            mix.append(o)
    write("snapshot_fuzz", "list.json",
          b"\x01" + json.dumps({"apiVersion": "v1", "kind": "List", "items": mix[:6]}).encode())
    write("snapshot_fuzz", "stream.yaml", b"\x02" + yaml.safe_dump_all(mix[6:12]).encode())

    # selector_fuzz.
    write("selector_fuzz", "all", json.dumps({
        "labelSelector": {"matchLabels": {"app": "web"},
                          "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]},
                                               {"key": "gpu", "operator": "Exists"}]},
        "nodeSelector": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["z1"]},
                                  {"key": "gpus", "operator": "Gt", "values": ["3"]}],
             "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
        "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                        {"operator": "Exists", "tolerationSeconds": 30}],
        "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
        "labels": {"app": "web", "tier": "a", "gpu": "", "gpus": "8", "zone": "z2"},
        "name": "node-1"}))

    # status_fuzz: protobuf Status (first byte odd = protobuf content type) and JSON Status.
    status = field(3, b'pods "x" not found') + field(4, b"NotFound")
    unknown = field(1, field(1, b"v1") + field(2, b"Status")) + field(2, status)
    write("status_fuzz", "proto", b"\x07" + b"k8s\x00" + unknown)
    write("status_fuzz", "json", b"\x06" + json.dumps(
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "conflict",
         "reason": "Conflict", "code": 409}).encode())

    # quantity_fuzz.
    for i, q in enumerate(["100m", "1.5Gi", "8", "2e3", "0.000001", "-12Ki", "1E", "123456789012345678",
                           ".5", "+3.25M", "7n", "1e-3"]):
        write("quantity_fuzz", "q%02d" % i, q)

    # kubeconfig_fuzz.
    write("kubeconfig_fuzz", "token", yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443/",
                                                "certificate-authority-data": "Zm9vCg==",
                                                "tls-server-name": "kube"}}],
        "users": [{"name": "u", "user": {"token": "abc"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}},
                     {"name": "other", "context": {"cluster": "k", "user": "e"}}]}))
    write("kubeconfig_fuzz", "exec", yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443",
                                                "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {
            "client-certificate-data": "Y2VydA==", "client-key-data": "a2V5",
            "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "get-token",
                     "args": ["--x"], "env": [{"name": "A", "value": "b"}],
                     "interactiveMode": "Never", "provideClusterInfo": True}}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "n"}}]}))

    # config_fuzz: the repository's KubeSchedulerConfiguration files, as they are.
    configs = sorted(glob.glob(os.path.join(ROOT, "test", "unit", "config", "testdata", "*.yaml")))
    configs.append(os.path.join(ROOT, "deploy", "config.yaml"))
    for path in configs:
        with open(path, "rb") as f:
            data = f.read()
        if len(data) <= MAX_SEED:
            write("config_fuzz", os.path.splitext(os.path.basename(path))[0], data)


if __name__ == "__main__":
    sys.exit(main())
