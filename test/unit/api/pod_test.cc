// Pod decoding: every field the scheduler reads, the effective-request
// formula (upstream component-helpers PodRequests), and error messages that
// name the object and the field path.
#include "src/api/pod.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/unit/api/test_json.h"

namespace gantry::api {
namespace {

using ::gantry::api::testing_util::Json;
using ::testing::HasSubstr;

Symbol S(std::string_view s) { return Symbol::Intern(s); }

absl::StatusOr<Pod> Decode(std::string_view text) {
  Json json(text);
  return DecodePod(json.root());
}

Pod MustDecode(std::string_view text) {
  auto pod = Decode(text);
  EXPECT_TRUE(pod.ok()) << pod.status();
  return pod.ok() ? *std::move(pod) : Pod();
}

constexpr const char* kRealisticPod = R"json({
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "name": "trainer-0",
    "namespace": "research",
    "uid": "0b5c6a2e-1111-2222-3333-444455556666",
    "resourceVersion": "12345",
    "generation": 2,
    "labels": {"job": "llama-ft", "app.kubernetes.io/name": "trainer"},
    "annotations": {
      "kubectl.kubernetes.io/last-applied-configuration": "{\"huge\": true}",
      "example.com/note": "hello"
    },
    "ownerReferences": [
      {"apiVersion": "batch/v1", "kind": "Job", "name": "llama-ft", "uid": "u-1", "controller": true}
    ],
    "finalizers": ["example.com/cleanup"],
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "deletionTimestamp": "2024-05-01T10:05:00.5Z"
  },
  "spec": {
    "schedulerName": "gantry-scheduler",
    "priority": 1000,
    "priorityClassName": "high",
    "preemptionPolicy": "Never",
    "terminationGracePeriodSeconds": 60,
    "nodeSelector": {"nvidia.com/gpu.product": "H100", "kubernetes.io/os": "linux"},
    "schedulingGates": [{"name": "example.com/quota"}],
    "schedulingGroup": {"podGroupName": "llama-ft-gang"},
    "resourceClaims": [
      {"name": "gpus", "resourceClaimTemplateName": "eight-gpus"},
      {"name": "shared", "resourceClaimName": "shared-nic"}
    ],
    "volumes": [
      {"name": "data", "persistentVolumeClaim": {"claimName": "dataset"}},
      {"name": "scratch", "emptyDir": {}},
      {"ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}, "name": "cache"}
    ],
    "affinity": {
      "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
          "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-0", "zone-1"]}]}]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 50, "preference": {"matchExpressions": [
            {"key": "example.com/rack", "operator": "In", "values": ["rack-0-0"]}]}}]
      },
      "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 100, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"job": "llama-ft"}},
            "topologyKey": "example.com/rack",
            "matchLabelKeys": ["pod-template-hash"]}}]
      },
      "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["noisy"]}]},
           "namespaces": ["batch"],
           "namespaceSelector": {},
           "topologyKey": "kubernetes.io/hostname"}]
      }
    },
    "tolerations": [
      {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    ],
    "topologySpreadConstraints": [
      {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
       "labelSelector": {"matchLabels": {"job": "llama-ft"}}, "minDomains": 2,
       "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor", "matchLabelKeys": ["pod-template-hash"]},
      {"maxSkew": 3, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}
    ],
    "initContainers": [
      {"name": "fetch", "image": "busybox:1.36", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
      {"name": "proxy", "image": "envoy:1.30", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}
    ],
    "containers": [
      {"name": "trainer", "image": "registry.example.com/trainer:2.0",
       "ports": [{"containerPort": 8080, "hostPort": 8080}, {"containerPort": 9090},
                 {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}],
       "resources": {"requests": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"},
                     "limits": {"nvidia.com/gpu": "8", "ephemeral-storage": "10Gi"}}},
      {"name": "sidecar-log", "image": "fluent-bit:3",
       "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
    ]
  },
  "status": {
    "phase": "Pending",
    "nominatedNodeName": "gpu-3",
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    "resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "trainer-0-gpus-x7k2"}],
    "startTime": "2024-05-01T10:00:01Z"
  }
})json";

TEST(PodDecodeTest, RealisticPod) {
  Pod pod = MustDecode(kRealisticPod);
  const ResourceNames& rn = ResourceNames::Get();

  EXPECT_EQ(pod.meta.name, "trainer-0");
  EXPECT_EQ(pod.meta.namespace_.view(), "research");
  EXPECT_EQ(pod.meta.Key(), "research/trainer-0");
  EXPECT_EQ(pod.meta.uid, "0b5c6a2e-1111-2222-3333-444455556666");
  EXPECT_EQ(pod.meta.resource_version, "12345");
  EXPECT_EQ(pod.meta.generation, 2);
  ASSERT_EQ(pod.meta.labels.size(), 2u);
  EXPECT_EQ(pod.meta.labels[0].first.view(), "app.kubernetes.io/name");  // sorted
  EXPECT_EQ(FindLabel(pod.meta.labels, "job")->view(), "llama-ft");
  EXPECT_EQ(pod.meta.FindAnnotation("kubectl.kubernetes.io/last-applied-configuration"), nullptr);
  ASSERT_NE(pod.meta.FindAnnotation("example.com/note"), nullptr);
  EXPECT_EQ(*pod.meta.FindAnnotation("example.com/note"), "hello");
  ASSERT_NE(pod.meta.ControllerRef(), nullptr);
  EXPECT_EQ(pod.meta.ControllerRef()->kind.view(), "Job");
  EXPECT_EQ(pod.meta.ControllerRef()->name, "llama-ft");
  EXPECT_EQ(pod.meta.finalizers, std::vector<std::string>{"example.com/cleanup"});
  EXPECT_EQ(pod.meta.creation_micros, 1714557600LL * 1000000);
  ASSERT_TRUE(pod.meta.deletion_micros.has_value());
  EXPECT_EQ(*pod.meta.deletion_micros, 1714557900LL * 1000000 + 500000);

  EXPECT_EQ(pod.scheduler_name.view(), "gantry-scheduler");
  EXPECT_TRUE(pod.node_name.empty());
  EXPECT_FALSE(pod.IsBound());
  EXPECT_EQ(pod.priority, 1000);
  EXPECT_EQ(pod.priority_class_name.view(), "high");
  EXPECT_EQ(pod.preemption_policy, PreemptionPolicy::kNever);
  EXPECT_EQ(pod.termination_grace_period_seconds, 60);
  ASSERT_EQ(pod.node_selector.size(), 2u);
  EXPECT_EQ(pod.node_selector[0].first.view(), "kubernetes.io/os");
  EXPECT_TRUE(pod.IsGated());
  EXPECT_EQ(pod.scheduling_gates[0].view(), "example.com/quota");
  EXPECT_EQ(pod.pod_group_name.view(), "llama-ft-gang");
  ASSERT_EQ(pod.resource_claims.size(), 2u);
  EXPECT_EQ(pod.resource_claims[0].name.view(), "gpus");
  EXPECT_EQ(pod.resource_claims[0].resource_claim_template_name, "eight-gpus");
  EXPECT_EQ(pod.resource_claims[1].resource_claim_name, "shared-nic");
  EXPECT_EQ(pod.pvc_names, std::vector<std::string>{"dataset"});
  EXPECT_EQ(pod.ephemeral_volume_names, std::vector<std::string>{"cache"});
  EXPECT_EQ(pod.VolumeClaimNames(),
            (std::vector<std::string>{"dataset", pod.meta.name + "-cache"}));

  // Images of init and regular containers.
  EXPECT_EQ(pod.images.size(), 4u);

  // Affinity.
  ASSERT_NE(pod.affinity, nullptr);
  ASSERT_TRUE(pod.affinity->node_required.has_value());
  EXPECT_TRUE(pod.affinity->node_required->Matches(
      testing_util::MakeLabels({{"topology.kubernetes.io/zone", "zone-1"}}), "n"));
  ASSERT_EQ(pod.affinity->node_preferred.size(), 1u);
  EXPECT_EQ(pod.affinity->node_preferred[0].weight, 50);
  ASSERT_EQ(pod.affinity->pod_affinity_preferred.size(), 1u);
  EXPECT_EQ(pod.affinity->pod_affinity_preferred[0].weight, 100);
  EXPECT_EQ(pod.affinity->pod_affinity_preferred[0].term.topology_key.view(), "example.com/rack");
  EXPECT_EQ(pod.affinity->pod_affinity_preferred[0].term.match_label_keys.size(), 1u);
  ASSERT_EQ(pod.affinity->pod_anti_affinity_required.size(), 1u);
  const PodAffinityTerm& anti = pod.affinity->pod_anti_affinity_required[0];
  EXPECT_EQ(anti.topology_key.view(), "kubernetes.io/hostname");
  ASSERT_TRUE(anti.label_selector.has_value());
  EXPECT_TRUE(anti.label_selector->Matches(testing_util::MakeLabels({{"app", "noisy"}})));
  ASSERT_TRUE(anti.namespace_selector.has_value());
  EXPECT_TRUE(anti.namespace_selector->Empty());
  EXPECT_EQ(anti.namespaces.size(), 1u);
  EXPECT_TRUE(pod.affinity->HasPodAffinity());

  // Tolerations.
  ASSERT_EQ(pod.tolerations.size(), 2u);
  EXPECT_EQ(pod.tolerations[1].toleration_seconds, 300);

  // Spread constraints.
  ASSERT_EQ(pod.topology_spread_constraints.size(), 2u);
  const TopologySpreadConstraint& zone = pod.topology_spread_constraints[0];
  EXPECT_EQ(zone.max_skew, 1);
  EXPECT_EQ(zone.topology_key.view(), "topology.kubernetes.io/zone");
  EXPECT_EQ(zone.when_unsatisfiable, UnsatisfiableAction::kDoNotSchedule);
  EXPECT_EQ(zone.min_domains, 2);
  EXPECT_EQ(zone.node_affinity_policy, InclusionPolicy::kIgnore);
  EXPECT_EQ(zone.node_taints_policy, InclusionPolicy::kHonor);
  EXPECT_EQ(zone.match_label_keys.size(), 1u);
  ASSERT_TRUE(zone.label_selector.has_value());
  const TopologySpreadConstraint& host = pod.topology_spread_constraints[1];
  EXPECT_EQ(host.max_skew, 3);
  EXPECT_EQ(host.when_unsatisfiable, UnsatisfiableAction::kScheduleAnyway);
  EXPECT_FALSE(host.min_domains.has_value());
  EXPECT_EQ(host.node_affinity_policy, InclusionPolicy::kHonor);  // defaults
  EXPECT_EQ(host.node_taints_policy, InclusionPolicy::kIgnore);
  EXPECT_FALSE(host.label_selector.has_value());

  // Host ports: containerPort without hostPort is not a host port.
  ASSERT_EQ(pod.host_ports.size(), 2u);
  EXPECT_EQ(pod.host_ports[0].port, 8080);
  EXPECT_EQ(pod.host_ports[0].protocol.view(), "TCP");
  EXPECT_TRUE(pod.host_ports[0].host_ip.empty());
  EXPECT_EQ(pod.host_ports[1].port, 53);
  EXPECT_EQ(pod.host_ports[1].protocol.view(), "UDP");
  EXPECT_EQ(pod.host_ports[1].host_ip.view(), "10.0.0.1");

  // Effective requests: containers 32.1 CPU + sidecar 0.5 = 32.6 CPU, which
  // exceeds the init peak (2 CPU + nothing started before it).
  EXPECT_EQ(pod.requests.Get(rn.cpu), 32600);
  EXPECT_EQ(pod.requests.Get(rn.memory), (256LL << 30) + (64LL << 20) + (256LL << 20));
  EXPECT_EQ(pod.requests.Get(S("nvidia.com/gpu")), 8);
  EXPECT_EQ(pod.requests.Get(rn.ephemeral_storage), 10LL << 30);  // from limits
  EXPECT_FALSE(pod.has_pod_level_resources);

  // Status.
  EXPECT_EQ(pod.phase, PodPhase::kPending);
  EXPECT_EQ(PodPhaseName(pod.phase), "Pending");
  EXPECT_EQ(pod.nominated_node_name.view(), "gpu-3");
  ASSERT_EQ(pod.conditions.size(), 1u);
  EXPECT_EQ(pod.conditions[0].reason.view(), "Unschedulable");
  ASSERT_EQ(pod.resource_claim_statuses.size(), 1u);
  EXPECT_EQ(pod.resource_claim_statuses[0].resource_claim_name, "trainer-0-gpus-x7k2");
  EXPECT_EQ(pod.start_micros, 1714557601LL * 1000000);
  EXPECT_FALSE(pod.IsTerminal());
}

TEST(PodDecodeTest, MinimalPodDefaults) {
  Pod pod = MustDecode(R"({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})");
  EXPECT_EQ(pod.meta.namespace_.view(), "default");
  EXPECT_EQ(pod.scheduler_name.view(), "default-scheduler");
  EXPECT_FALSE(pod.priority.has_value());
  EXPECT_FALSE(pod.preemption_policy.has_value());
  EXPECT_EQ(pod.affinity, nullptr);
  EXPECT_TRUE(pod.requests.empty());
  EXPECT_EQ(pod.termination_grace_period_seconds, 30);
  EXPECT_EQ(pod.phase, PodPhase::kPending);
  EXPECT_FALSE(pod.IsGated());
}

TEST(PodDecodeTest, NullsAreEmpty) {
  Pod pod = MustDecode(R"({"metadata": {"name": "p", "labels": null, "namespace": null},
      "spec": {"containers": null, "nodeSelector": null, "affinity": null, "tolerations": null,
               "priority": null, "nodeName": null},
      "status": null})");
  EXPECT_TRUE(pod.meta.labels.empty());
  EXPECT_FALSE(pod.priority.has_value());
  EXPECT_EQ(pod.affinity, nullptr);
}

TEST(PodDecodeTest, UnknownFieldsAreIgnored) {
  Pod pod = MustDecode(R"({"metadata": {"name": "p", "managedFields": [{"x": 1}]},
      "spec": {"dnsPolicy": "ClusterFirst", "someFutureField": {"a": [1, 2, 3]},
               "containers": [{"name": "c", "futureKnob": true, "resources": {"claims": [{"name": "x"}]}}]},
      "status": {"podIPs": [{"ip": "10.0.0.1"}]}, "extra": 42})");
  EXPECT_EQ(pod.meta.name, "p");
}

TEST(PodDecodeTest, BoundAndTerminal) {
  Pod bound = MustDecode(
      R"({"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}})");
  EXPECT_TRUE(bound.IsBound());
  EXPECT_EQ(bound.node_name.view(), "n1");
  EXPECT_EQ(bound.phase, PodPhase::kRunning);
  for (const char* phase : {"Succeeded", "Failed"}) {
    Pod done = MustDecode(std::string(R"({"metadata": {"name": "p"}, "status": {"phase": ")") +
                          phase + "\"}}");
    EXPECT_TRUE(done.IsTerminal()) << phase;
  }
  EXPECT_EQ(MustDecode(R"({"metadata": {"name": "p"}, "status": {"phase": "Unknown"}})").phase,
            PodPhase::kUnknown);
}

TEST(PodDecodeTest, NumericQuantitiesKeepEveryDigit) {
  // JSON numbers are quantities too; precision must not be lost on the way.
  Pod pod = MustDecode(R"({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c",
      "resources": {"requests": {"cpu": 0.25, "memory": 1234567.5, "example.com/foo": 3,
                                 "example.com/bar": 1e3, "example.com/big": 12345678901234}}}]}})");
  const ResourceNames& rn = ResourceNames::Get();
  EXPECT_EQ(pod.requests.Get(rn.cpu), 250);
  EXPECT_EQ(pod.requests.Get(rn.memory), 1234568);  // rounded up
  EXPECT_EQ(pod.requests.Get(S("example.com/foo")), 3);
  EXPECT_EQ(pod.requests.Get(S("example.com/bar")), 1000);
  EXPECT_EQ(pod.requests.Get(S("example.com/big")), 12345678901234);
}

// --- Effective requests ----------------------------------------------------

ResourceList RL(std::initializer_list<std::pair<std::string_view, int64_t>> kv) {
  ResourceList out;
  for (const auto& [k, v] : kv) out.Set(S(k), v);
  return out;
}

ContainerResources C(std::initializer_list<std::pair<std::string_view, int64_t>> kv,
                     bool sidecar = false) {
  return ContainerResources{RL(kv), sidecar, ""};
}

struct RequestsCase {
  const char* name;
  std::vector<ContainerResources> containers;
  std::vector<ContainerResources> init;
  ResourceList overhead;
  ResourceList want;
};

TEST(EffectiveRequestsTest, UpstreamFormula) {
  const RequestsCase cases[] = {
      {"no containers", {}, {}, {}, {}},
      {"containers sum",
       {C({{"cpu", 100}, {"memory", 10}}), C({{"cpu", 200}})},
       {},
       {},
       RL({{"cpu", 300}, {"memory", 10}})},
      {"init smaller than containers",
       {C({{"cpu", 1000}})},
       {C({{"cpu", 500}})},
       {},
       RL({{"cpu", 1000}})},
      {"init larger than containers",
       {C({{"cpu", 1000}})},
       {C({{"cpu", 3000}, {"memory", 5}})},
       {},
       RL({{"cpu", 3000}, {"memory", 5}})},
      {"max per resource, not per container",
       {C({{"cpu", 1000}, {"memory", 100}})},
       {C({{"cpu", 3000}, {"memory", 1}})},
       {},
       RL({{"cpu", 3000}, {"memory", 100}})},
      {"regular init containers take the max, not the sum",
       {C({{"cpu", 100}})},
       {C({{"cpu", 2000}}), C({{"cpu", 2000}})},
       {},
       RL({{"cpu", 2000}})},
      {"sidecar adds to containers",
       {C({{"cpu", 1000}})},
       {C({{"cpu", 500}}, true)},
       {},
       RL({{"cpu", 1500}})},
      // KEP-753 example: init1 1, sidecar 2, init2 5, container 1:
      // init2 runs next to the sidecar (5+2=7) > containers+sidecar (3).
      {"init after sidecar counts the sidecar",
       {C({{"cpu", 1000}})},
       {C({{"cpu", 1000}}), C({{"cpu", 2000}}, true), C({{"cpu", 5000}})},
       {},
       RL({{"cpu", 7000}})},
      {"init before sidecar does not count it",
       {C({{"cpu", 1000}})},
       {C({{"cpu", 5000}}), C({{"cpu", 2000}}, true)},
       {},
       RL({{"cpu", 5000}})},
      {"sidecars accumulate",
       {C({{"cpu", 100}})},
       {C({{"cpu", 1000}}, true), C({{"cpu", 1000}}, true), C({{"cpu", 500}})},
       {},
       RL({{"cpu", 2500}})},
      {"sidecar footprint includes earlier sidecars",
       {},
       {C({{"memory", 10}}, true), C({{"memory", 20}}, true)},
       {},
       RL({{"memory", 30}})},
      {"overhead added on top",
       {C({{"cpu", 1000}})},
       {C({{"cpu", 2000}})},
       RL({{"cpu", 250}, {"memory", 64}}),
       RL({{"cpu", 2250}, {"memory", 64}})},
      {"extended resources",
       {C({{"nvidia.com/gpu", 2}}), C({{"nvidia.com/gpu", 1}})},
       {C({{"nvidia.com/gpu", 4}})},
       {},
       RL({{"nvidia.com/gpu", 4}})},
  };
  for (const RequestsCase& c : cases) {
    ResourceList got = ComputeEffectiveRequests(c.containers, c.init, c.overhead);
    EXPECT_TRUE(got == c.want) << c.name;
    for (const ResourceAmount& r : c.want.items()) {
      EXPECT_EQ(got.Get(r.name), r.value) << c.name << " " << r.name;
    }
  }
}

TEST(EffectiveRequestsTest, ThroughDecode) {
  const ResourceNames& rn = ResourceNames::Get();
  struct Case {
    const char* name;
    const char* spec;
    int64_t cpu;
    int64_t memory;
  };
  const Case cases[] = {
      {"limits default missing requests",
       R"({"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]})",
       2000, 1LL << 30},
      {"explicit request beats limit",
       R"({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}}}]})",
       1000, 1LL << 30},
      {"sidecar and init through the decoder",
       R"({"initContainers": [{"name": "i1", "resources": {"requests": {"cpu": "1"}}},
                              {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "2"}}},
                              {"name": "i2", "resources": {"requests": {"cpu": "5"}}}],
           "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]})",
       7000, 0},
      {"overhead",
       R"({"overhead": {"cpu": "250m", "memory": "120Mi"},
           "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]})",
       1250, (1LL << 30) + (120LL << 20)},
      {"pod-level requests replace the container sum, overhead still added",
       R"({"resources": {"requests": {"cpu": "4", "memory": "8Gi"}}, "overhead": {"cpu": "100m"},
           "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                          {"name": "d", "resources": {"requests": {"cpu": "1"}}}]})",
       4100, 8LL << 30},
      {"pod-level requests for one resource only",
       R"({"resources": {"requests": {"memory": "2Gi"}},
           "containers": [{"name": "c", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}]})",
       3000, 2LL << 30},
      {"cpu rounds up to millicores",
       R"({"containers": [{"name": "c", "resources": {"requests": {"cpu": "100u", "memory": "1.5"}}}]})",
       1, 2},
  };
  for (const Case& c : cases) {
    Pod pod = MustDecode(std::string(R"({"metadata": {"name": "p"}, "spec": )") + c.spec + "}");
    EXPECT_EQ(pod.requests.Get(rn.cpu), c.cpu) << c.name;
    EXPECT_EQ(pod.requests.Get(rn.memory), c.memory) << c.name;
  }
  EXPECT_TRUE(
      MustDecode(
          R"({"metadata": {"name": "p"}, "spec": {"resources": {"requests": {"cpu": "1"}}}})")
          .has_pod_level_resources);
}

// Extended resources backed by DRA: the per-container requests DynamicResources
// names its claim's requests after (container index over initContainers +
// containers, position among the container's sorted request names).
TEST(PodDecodeTest, ExtendedRequestsPerContainer) {
  struct Want {
    int32_t container, request;
    bool init_only;
    std::string container_name, resource;
    int64_t value;
  };
  struct Case {
    const char* name;
    const char* spec;
    std::vector<Want> want;
  };
  const Case cases[] = {
      {"none without extended resources",
       R"({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]})",
       {}},
      {"sorted position counts every request name",
       R"({"containers": [{"name": "main", "resources": {"requests": {"cpu": "1", "memory": "1Gi",
           "example.com/gpu": "2", "a.example.com/nic": "1"}}}]})",
       {{0, 0, false, "main", "a.example.com/nic", 1},
        {0, 2, false, "main", "example.com/gpu", 2}}},
      {"implicit DeviceClass names count, kubernetes.io names and zeros do not",
       R"({"containers": [{"name": "c", "resources": {"requests": {
           "deviceclass.resource.kubernetes.io/gpu": "1", "kubernetes.io/other": "3", "example.com/zero": "0"}}}]})",
       {{0, 0, false, "c", "deviceclass.resource.kubernetes.io/gpu", 1}}},
      {"limits default the request",
       R"({"containers": [{"name": "c", "resources": {"limits": {"example.com/gpu": "4"}}}]})",
       {{0, 0, false, "c", "example.com/gpu", 4}}},
      {"init containers first; sidecars are long-lived",
       R"({"initContainers": [{"name": "setup", "resources": {"requests": {"example.com/gpu": "1"}}},
                              {"name": "side", "restartPolicy": "Always",
                               "resources": {"requests": {"cpu": "1", "example.com/gpu": "1"}}}],
           "containers": [{"name": "a"}, {"name": "b", "resources": {"requests": {"example.com/gpu": "3"}}}]})",
       {{0, 0, true, "setup", "example.com/gpu", 1},
        {1, 1, false, "side", "example.com/gpu", 1},
        {3, 0, false, "b", "example.com/gpu", 3}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Pod pod = MustDecode(std::string(R"({"metadata": {"name": "p"}, "spec": )") + c.spec + "}");
    ASSERT_EQ(pod.extended_requests.size(), c.want.size());
    for (size_t i = 0; i < c.want.size(); ++i) {
      const ContainerExtendedRequest& got = pod.extended_requests[i];
      EXPECT_EQ(got.container_index, c.want[i].container) << i;
      EXPECT_EQ(got.request_index, c.want[i].request) << i;
      EXPECT_EQ(got.init_only, c.want[i].init_only) << i;
      EXPECT_EQ(got.container_name, c.want[i].container_name) << i;
      EXPECT_EQ(got.resource.view(), c.want[i].resource) << i;
      EXPECT_EQ(got.value, c.want[i].value) << i;
    }
  }
  Pod bound = MustDecode(R"({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]},
      "status": {"extendedResourceClaimStatus": {"resourceClaimName": "p-extended-resources-x7k2q",
                 "requestMappings": [{"containerName": "c", "resourceName": "example.com/gpu",
                                      "requestName": "container-0-request-0"}]}}})");
  EXPECT_EQ(bound.extended_resource_claim_name, "p-extended-resources-x7k2q");
  EXPECT_TRUE(bound.UsesClaims());
}

// --- Errors ------------------------------------------------------------------

struct ErrorCase {
  const char* spec_or_pod;  // a spec object, or a whole pod when it starts with "!"
  const char* want;         // exact error message
};

TEST(PodDecodeTest, ErrorsNameObjectAndFieldPath) {
  const ErrorCase cases[] = {
      {R"({"priority": "high"})", "Pod ml/p: spec.priority: expected an integer, got string"},
      {R"({"priority": 1.5})",
       "Pod ml/p: spec.priority: expected an integer, got a number that is not a 64-bit integer"},
      {R"({"priority": 3000000000})",
       "Pod ml/p: spec.priority: Invalid value: 3000000000: must be between -2147483648 and "
       "2147483647, inclusive"},
      {R"({"schedulerName": 7})", "Pod ml/p: spec.schedulerName: expected a string, got number"},
      {R"({"preemptionPolicy": "Sometimes"})",
       "Pod ml/p: spec.preemptionPolicy: Unsupported value: \"Sometimes\": supported values: "
       "\"Never\", \"PreemptLowerPriority\""},
      {R"({"containers": {"name": "c"}})",
       "Pod ml/p: spec.containers: expected an array, got object"},
      {R"({"containers": [{"name": "a"}, {"name": "b", "resources": {"requests": {"cpu": "abc"}}}]})",
       "Pod ml/p: spec.containers[1].resources.requests.cpu: Invalid value: \"abc\": quantities "
       "must match the regular "
       "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {R"({"containers": [{"name": "a", "resources": {"limits": {"memory": "1Gb"}}}]})",
       "Pod ml/p: spec.containers[0].resources.limits.memory: Invalid value: \"1Gb\": quantities "
       "must match the regular "
       "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {R"({"containers": [{"name": "a", "resources": {"requests": {"nvidia.com/gpu": "1x"}}}]})",
       "Pod ml/p: spec.containers[0].resources.requests[\"nvidia.com/gpu\"]: Invalid value: "
       "\"1x\": quantities must "
       "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {R"({"containers": [{"name": "a", "resources": {"requests": {"cpu": "-1"}}}]})",
       "Pod ml/p: spec.containers[0].resources.requests.cpu: Invalid value: must be greater than "
       "or equal to 0"},
      {R"({"containers": [{"name": "a", "resources": {"requests": {"cpu": true}}}]})",
       "Pod ml/p: spec.containers[0].resources.requests.cpu: expected a quantity string, got "
       "boolean"},
      {R"({"containers": [{"name": "a", "resources": {"requests": {"memory": "9Ei"}}}]})",
       "Pod ml/p: spec.containers[0].resources.requests.memory: Invalid value: \"9Ei\": quantity "
       "is too large: its "
       "value does not fit in 64 bits"},
      {R"({"containers": [{"name": "a", "resources": {"requests": ["cpu"]}}]})",
       "Pod ml/p: spec.containers[0].resources.requests: expected an object, got array"},
      {R"({"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 70000}]}]})",
       "Pod ml/p: spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 0 "
       "and 65535, inclusive"},
      {R"({"containers": [{"name": "c", "ports": [{"hostPort": "80"}]}]})",
       "Pod ml/p: spec.containers[0].ports[0].hostPort: expected an integer, got string"},
      {R"({"overhead": {"cpu": "lots"}})",
       "Pod ml/p: spec.overhead.cpu: Invalid value: \"lots\": quantities must match the regular "
       "expression "
       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {R"({"resources": {"requests": {"memory": "1.2.3Gi"}}})",
       "Pod ml/p: spec.resources.requests.memory: Invalid value: \"1.2.3Gi\": quantities must "
       "match the regular "
       "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {R"({"nodeSelector": {"disk": 1}})",
       "Pod ml/p: spec.nodeSelector.disk: expected a string, got number"},
      {R"({"nodeSelector": ["a"]})", "Pod ml/p: spec.nodeSelector: expected an object, got array"},
      {R"({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
            [{"matchExpressions": [{"key": "k", "operator": "Near", "values": ["x"]}]}]}}}})",
       "Pod ml/p: "
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0]."
       "matchExpressions[0].operator: Unsupported value: \"Near\": supported values: \"In\", "
       "\"NotIn\", \"Exists\", "
       "\"DoesNotExist\", \"Gt\", \"Lt\""},
      {R"({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0,
            "preference": {}}]}}})",
       "Pod ml/p: "
       "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
       "Invalid "
       "value: 0: must be between 1 and 100, inclusive"},
      {R"({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {}}]}}})",
       "Pod ml/p: "
       "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
       "topologyKey: "
       "Required value: can not be empty"},
      {R"({"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 101,
            "podAffinityTerm": {"topologyKey": "k"}}]}}})",
       "Pod ml/p: "
       "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
       "Invalid "
       "value: 101: must be between 1 and 100, inclusive"},
      {R"({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "k",
            "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}}]}}})",
       "Pod ml/p: "
       "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector."
       "matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
       "'NotIn'"},
      {R"({"tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b", "effect": "Sometimes"}]})",
       "Pod ml/p: spec.tolerations[1].effect: Unsupported value: \"Sometimes\": supported values: "
       "\"NoSchedule\", "
       "\"PreferNoSchedule\", \"NoExecute\""},
      {R"({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}]})",
       "Pod ml/p: spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be between 1 "
       "and 2147483647, "
       "inclusive"},
      {R"({"topologySpreadConstraints": [{"topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}]})",
       "Pod ml/p: spec.topologySpreadConstraints[0].maxSkew: Required value"},
      {R"({"topologySpreadConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]})",
       "Pod ml/p: spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty"},
      {R"({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "Maybe"}]})",
       "Pod ml/p: spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "
       "\"Maybe\": supported "
       "values: \"DoNotSchedule\", \"ScheduleAnyway\""},
      {R"({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "ScheduleAnyway",
            "minDomains": 2}]})",
       "Pod ml/p: spec.topologySpreadConstraints[0].minDomains: Invalid value: can only use "
       "minDomains if "
       "whenUnsatisfiable=DoNotSchedule"},
      {R"({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "k", "nodeAffinityPolicy": "Maybe"}]})",
       "Pod ml/p: spec.topologySpreadConstraints[0].nodeAffinityPolicy: Unsupported value: "
       "\"Maybe\": supported "
       "values: \"Honor\", \"Ignore\""},
      {R"({"schedulingGates": [{"name": "a"}, {}]})",
       "Pod ml/p: spec.schedulingGates[1].name: Required value"},
      {R"({"resourceClaims": [{"name": "g", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}]})",
       "Pod ml/p: spec.resourceClaims[0]: Invalid value: must specify one of: `resourceClaimName`, "
       "`resourceClaimTemplateName`"},
      {R"({"resourceClaims": [{"name": "g"}]})",
       "Pod ml/p: spec.resourceClaims[0]: Invalid value: must specify one of: `resourceClaimName`, "
       "`resourceClaimTemplateName`"},
      {R"({"resourceClaims": [{"resourceClaimName": "a"}]})",
       "Pod ml/p: spec.resourceClaims[0].name: Required value"},
      {R"({"schedulingGroup": {"podGroupName": 5}})",
       "Pod ml/p: spec.schedulingGroup.podGroupName: expected a string, got number"},
      {R"({"terminationGracePeriodSeconds": -1})",
       "Pod ml/p: spec.terminationGracePeriodSeconds: Invalid value: -1: must be between 0 and "
       "9223372036854775807, "
       "inclusive"},
      {R"({"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": ["x"]}}]})",
       "Pod ml/p: spec.volumes[0].persistentVolumeClaim.claimName: expected a string, got array"},
      {R"({"volumes": [{"name": "a", "emptyDir": {}}, {"ephemeral": {"volumeClaimTemplate": {}}}]})",
       "Pod ml/p: spec.volumes[1].name: Required value"},
      {R"("spec")", "Pod ml/p: spec: expected an object, got string"},
      // Whole-pod cases.
      {R"(!{"metadata": {"name": "p", "namespace": "ml"}, "status": {"startTime": "noon"}})",
       "Pod ml/p: status.startTime: Invalid value: \"noon\": not an RFC 3339 timestamp"},
      {R"(!{"metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2024-13-01T00:00:00Z"}})",
       "Pod ml/p: metadata.creationTimestamp: Invalid value: \"2024-13-01T00:00:00Z\": not an RFC "
       "3339 timestamp"},
      {R"(!{"metadata": {"name": "p", "namespace": "ml", "labels": {"a": ["b"]}}})",
       "Pod ml/p: metadata.labels.a: expected a string, got array"},
      {R"(!{"metadata": {"name": "p", "namespace": "ml", "ownerReferences": [{"controller": "yes"}]}})",
       "Pod ml/p: metadata.ownerReferences[0].controller: expected a boolean, got string"},
      {R"(!{"metadata": {"name": "p", "namespace": "ml", "generation": "2"}})",
       "Pod ml/p: metadata.generation: expected an integer, got string"},
      {R"(!{"metadata": {"namespace": "ml"}})", "Pod ml/: metadata: name: Required value"},
      {R"(!{"metadata": {"generateName": "web-", "namespace": "ml"}, "spec": {"priority": "x"}})",
       "Pod ml/web-: spec.priority: expected an integer, got string"},
      {R"(![])", "Pod: expected an object, got array"},
      {R"(!{"metadata": "p"})", "Pod: metadata: expected an object, got string"},
  };
  for (const ErrorCase& c : cases) {
    std::string text =
        c.spec_or_pod[0] == '!'
            ? std::string(c.spec_or_pod + 1)
            : std::string(R"({"metadata": {"name": "p", "namespace": "ml"}, "spec": )") +
                  c.spec_or_pod + "}";
    auto pod = Decode(text);
    ASSERT_FALSE(pod.ok()) << text;
    EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(pod.status().message()), c.want) << text;
  }
}

TEST(PodDecodeTest, StructuredErrorKeepsPath) {
  Json json(R"({"metadata": {"name": "p", "namespace": "ml"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "x"}}}]}})");
  Decoder d("Pod");
  DecodePod(d, json.root());
  auto err = d.TakeError(json.root());
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->kind, "Pod");
  EXPECT_EQ(err->object, "ml/p");
  EXPECT_EQ(FormatFieldPath(err->path), "spec.containers[0].resources.requests.cpu");
  ASSERT_EQ(err->path.size(), 6u);
  EXPECT_EQ(std::get<size_t>(err->path[2]), 0u);
  EXPECT_TRUE(d.ok());  // the error was taken
}

// --- Tolerant decoding ---------------------------------------------------------

// A pod of a newer API level: values Gantry does not interpret are ignored,
// and a bound pod that cannot be decoded whole still counts on its node.
struct TolerantCase {
  const char* name;
  const char* spec;    // spec members, nodeName excluded
  const char* status;  // status members
  bool bound;
  // Expected outcome: ok and whole, ok but undecodable, or an error.
  enum { kWhole, kUndecodable, kError } want;
  int64_t cpu_milli;  // effective cpu request when decoded
  const char* error;  // substring of the error (or decode_error)
};

TEST(PodTolerantDecodeTest, Table) {
  const TolerantCase cases[] = {
      {"regular container with restartPolicy Always",
       R"("containers": [{"name": "c", "restartPolicy": "Always",
           "resources": {"requests": {"cpu": "1"}}}])",
       "", false, TolerantCase::kWhole, 1000, ""},
      {"regular container with restartPolicy Always, bound",
       R"("containers": [{"name": "c", "restartPolicy": "Always",
           "resources": {"requests": {"cpu": "1"}}}])",
       "", true, TolerantCase::kWhole, 1000, ""},
      {"restartPolicyRules and other unknown container fields", R"("containers": [{"name": "c",
           "restartPolicy": "Never", "restartPolicyRules": [{"action": "Restart", "exitCodes": {"operator": "In",
           "values": [42]}}], "futureField": {"x": [1, 2]}, "resources": {"requests": {"cpu": "2"}}}])",
       "", false, TolerantCase::kWhole, 2000, ""},
      {"sidecar init container", R"("initContainers": [{"name": "s", "restartPolicy": "Always",
           "resources": {"requests": {"cpu": "1"}}}], "containers": [{"name": "c",
           "resources": {"requests": {"cpu": "2"}}}])",
       "", false, TolerantCase::kWhole, 3000, ""},
      {"init container with a restartPolicy other than Always", R"("initContainers": [{"name": "i",
           "restartPolicy": "OnFailure", "resources": {"requests": {"cpu": "5"}}}], "containers": [{"name": "c",
           "resources": {"requests": {"cpu": "2"}}}])",
       "", false, TolerantCase::kWhole, 5000, ""},
      {"unknown spec and status fields", R"("futureSpec": true, "containers": [{"name": "c",
           "resources": {"requests": {"cpu": "1"}}}])",
       R"("futureStatus": {"a": 1})", false, TolerantCase::kWhole, 1000, ""},
      {"unknown phase", R"("containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}])",
       R"("phase": "Hibernating")", true, TolerantCase::kWhole, 1000, ""},
      // Fields scheduling interprets: pending pods are errors, bound ones undecodable.
      {"unknown preemptionPolicy, pending",
       R"("preemptionPolicy": "Sometimes", "containers": [{"name": "c",
           "resources": {"requests": {"cpu": "1"}}}])",
       "", false, TolerantCase::kError, 0,
       "spec.preemptionPolicy: Unsupported value: \"Sometimes\""},
      {"unknown preemptionPolicy, bound",
       R"("preemptionPolicy": "Sometimes", "containers": [{"name": "c",
           "resources": {"requests": {"cpu": "1"}}}])",
       "", true, TolerantCase::kUndecodable, 1000,
       "spec.preemptionPolicy: Unsupported value: \"Sometimes\""},
      {"unknown toleration operator, bound", R"("tolerations": [{"key": "k", "operator": "Around"}],
           "containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m"}}}])",
       "", true, TolerantCase::kUndecodable, 1500, "spec.tolerations[0].operator"},
      {"malformed affinity, bound",
       R"("affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
           [{"labelSelector": {}}]}}, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}])",
       "", true, TolerantCase::kUndecodable, 1000, "topologyKey: Required value"},
      {"one unreadable request, bound: the rest counts", R"("containers": [{"name": "a",
           "resources": {"requests": {"cpu": "lots", "memory": "1Gi"}}}, {"name": "b",
           "resources": {"requests": {"cpu": "250m"}}}])",
       "", true, TolerantCase::kUndecodable, 250, "spec.containers[0].resources.requests.cpu"},
      {"one unreadable request, pending", R"("containers": [{"name": "a",
           "resources": {"requests": {"cpu": "lots"}}}])",
       "", false, TolerantCase::kError, 0, "spec.containers[0].resources.requests.cpu"},
      {"limits default requests when salvaged",
       R"("priority": "high", "initContainers": [{"name": "s",
           "restartPolicy": "Always", "resources": {"limits": {"cpu": "1"}}, "ports": "none"}],
           "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}])",
       "", true, TolerantCase::kUndecodable, 3000, "spec.priority: expected an integer"},
  };
  for (const TolerantCase& c : cases) {
    std::string spec = c.spec;
    if (c.bound) spec = std::string(R"("nodeName": "gpu-1", )") + spec;
    const std::string text =
        std::string(R"({"metadata": {"name": "p", "namespace": "ml", "uid": "u1"}, "spec": {)") +
        spec + R"(}, "status": {)" + c.status + "}}";
    auto pod = Decode(text);
    if (c.want == TolerantCase::kError) {
      ASSERT_FALSE(pod.ok()) << c.name;
      EXPECT_THAT(std::string(pod.status().message()), HasSubstr(c.error)) << c.name;
      continue;
    }
    ASSERT_TRUE(pod.ok()) << c.name << ": " << pod.status();
    EXPECT_EQ(pod->Undecodable(), c.want == TolerantCase::kUndecodable) << c.name;
    EXPECT_THAT(pod->decode_error, HasSubstr(c.error)) << c.name;
    if (c.want == TolerantCase::kUndecodable) {
      EXPECT_THAT(pod->decode_error, HasSubstr("Pod ml/p: ")) << c.name;
    }
    EXPECT_EQ(pod->requests.Get(S("cpu")), c.cpu_milli) << c.name;
    EXPECT_EQ(pod->IsBound(), c.bound) << c.name;
    EXPECT_EQ(pod->meta.Key(), "ml/p") << c.name;
    EXPECT_EQ(pod->meta.uid, "u1") << c.name;
  }
}

// What an undecodable bound pod keeps: identity, node, scheduler, phase,
// host ports and the requests of the containers that could be read.
TEST(PodTolerantDecodeTest, UndecodableBoundPodKeepsWhatSchedulingNeeds) {
  Pod pod = MustDecode(
      R"({"metadata": {"name": "w", "namespace": "ml", "uid": "u2", "resourceVersion": "7",
      "labels": {"app": "web"}},
    "spec": {"nodeName": "n1", "schedulerName": "gantry-scheduler", "priority": 100,
      "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Eventually"}],
      "overhead": {"memory": "10Mi"},
      "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}],
        "resources": {"requests": {"cpu": "1", "memory": "1Gi", "example.com/gpu": "2"}}}]},
    "status": {"phase": "Running"}})");
  ASSERT_TRUE(pod.Undecodable());
  EXPECT_THAT(pod.decode_error, HasSubstr("spec.topologySpreadConstraints[0].whenUnsatisfiable"));
  EXPECT_EQ(pod.node_name, S("n1"));
  EXPECT_EQ(pod.scheduler_name, S("gantry-scheduler"));
  EXPECT_EQ(pod.priority, 100);
  EXPECT_EQ(pod.phase, PodPhase::kRunning);
  EXPECT_EQ(pod.meta.resource_version, "7");
  EXPECT_EQ(pod.meta.labels.size(), 1u);
  EXPECT_EQ(pod.requests.Get(S("cpu")), 1000);
  EXPECT_EQ(pod.requests.Get(S("memory")), (1LL << 30) + 10 * (1LL << 20));
  EXPECT_EQ(pod.requests.Get(S("example.com/gpu")), 2);
  ASSERT_EQ(pod.host_ports.size(), 1u);
  EXPECT_EQ(pod.host_ports[0].port, 8080);
  EXPECT_TRUE(pod.topology_spread_constraints.empty());
}

// A bound pod whose nodeName itself is unreadable, or which has no name,
// cannot be kept anywhere: still an error.
TEST(PodTolerantDecodeTest, WithoutNodeOrNameStillAnError) {
  EXPECT_FALSE(Decode(R"({"metadata": {"name": "p"}, "spec": {"nodeName": 5}})").ok());
  EXPECT_FALSE(
      Decode(R"({"metadata": {"namespace": "ml"}, "spec": {"nodeName": "n", "priority": "x"}})")
          .ok());
}

}  // namespace
}  // namespace gantry::api
