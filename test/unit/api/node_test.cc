// Node decoding: labels, taints, allocatable/capacity, conditions, images,
// and error messages naming the node and the field path.
#include "src/api/node.h"

#include <string>

#include "gtest/gtest.h"
#include "test/unit/api/test_json.h"

namespace gantry::api {
namespace {

using ::gantry::api::testing_util::Json;

absl::StatusOr<Node> Decode(std::string_view text) {
  Json json(text);
  return DecodeNode(json.root());
}

constexpr const char* kGpuNode = R"json({
  "apiVersion": "v1",
  "kind": "Node",
  "metadata": {
    "name": "gpu-z0-r1-n3",
    "uid": "n-uid",
    "labels": {
      "kubernetes.io/hostname": "gpu-z0-r1-n3",
      "topology.kubernetes.io/zone": "zone-0",
      "example.com/rack": "rack-0-1",
      "nvidia.com/gpu.product": "H100"
    },
    "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
    "creationTimestamp": "2024-01-01T00:00:00Z"
  },
  "spec": {
    "podCIDR": "10.244.3.0/24",
    "unschedulable": true,
    "taints": [
      {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2024-01-02T00:00:00Z"}
    ]
  },
  "status": {
    "capacity": {"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8", "ephemeral-storage": "2Ti",
                 "hugepages-2Mi": "0"},
    "allocatable": {"cpu": "95500m", "memory": "1008Gi", "pods": "110", "nvidia.com/gpu": "8",
                    "ephemeral-storage": "1.8Ti", "hugepages-2Mi": "0"},
    "conditions": [
      {"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": "2024-01-02T00:00:00Z"},
      {"type": "MemoryPressure", "status": "False"}
    ],
    "images": [
      {"names": ["registry.example.com/trainer@sha256:abc", "registry.example.com/trainer:2.0"], "sizeBytes": 5000000000},
      {"names": ["busybox:1.36"], "sizeBytes": 4300000}
    ],
    "nodeInfo": {"kubeletVersion": "v1.34.0"}
  }
})json";

TEST(NodeDecodeTest, GpuNode) {
  auto node = Decode(kGpuNode);
  ASSERT_TRUE(node.ok()) << node.status();
  const ResourceNames& rn = ResourceNames::Get();
  EXPECT_EQ(node->meta.name, "gpu-z0-r1-n3");
  EXPECT_TRUE(node->meta.namespace_.empty());
  EXPECT_EQ(node->meta.Key(), "gpu-z0-r1-n3");
  EXPECT_EQ(node->meta.labels.size(), 4u);
  EXPECT_EQ(FindLabel(node->meta.labels, "example.com/rack")->view(), "rack-0-1");
  EXPECT_FALSE(FindLabel(node->meta.labels, "missing").has_value());
  EXPECT_TRUE(node->unschedulable);

  ASSERT_EQ(node->taints.size(), 2u);
  EXPECT_EQ(node->taints[0].key.view(), "nvidia.com/gpu");
  EXPECT_EQ(node->taints[0].value.view(), "present");
  EXPECT_EQ(node->taints[0].effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(node->taints[1].time_added_micros, 1704153600LL * 1000000);

  EXPECT_EQ(node->allocatable.Get(rn.cpu), 95500);
  EXPECT_EQ(node->allocatable.Get(rn.memory), 1008LL << 30);
  EXPECT_EQ(node->allocatable.Get(rn.pods), 110);
  EXPECT_EQ(node->allocatable.Get(Symbol::Intern("nvidia.com/gpu")), 8);
  // 1.8Ti is not a whole number of bytes: rounded up.
  EXPECT_EQ(node->allocatable.Get(rn.ephemeral_storage), 1979120929997);
  EXPECT_EQ(node->capacity.Get(rn.cpu), 96000);
  EXPECT_EQ(node->capacity.Get(rn.memory), 1LL << 40);

  ASSERT_EQ(node->conditions.size(), 2u);
  EXPECT_EQ(node->conditions[0].type.view(), "Ready");
  EXPECT_EQ(node->conditions[0].status.view(), "True");

  ASSERT_EQ(node->images.size(), 2u);
  EXPECT_EQ(node->images[0].names.size(), 2u);
  EXPECT_EQ(node->images[0].size_bytes, 5000000000);
}

TEST(NodeDecodeTest, CapacityUsedWhenAllocatableAbsent) {
  auto node = Decode(R"({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}})");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->allocatable.Get(ResourceNames::Get().cpu), 4000);
  EXPECT_EQ(node->allocatable.Get(ResourceNames::Get().memory), 32LL << 30);
  EXPECT_TRUE(node->allocatable == node->capacity);
}

TEST(NodeDecodeTest, ExplicitEmptyAllocatableIsKept) {
  auto node = Decode(R"({"metadata": {"name": "n"}, "status": {"allocatable": {}, "capacity": {"cpu": "4"}}})");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->allocatable.Get(ResourceNames::Get().cpu), 0);
}

TEST(NodeDecodeTest, MinimalNode) {
  auto node = Decode(R"({"metadata": {"name": "n"}})");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_FALSE(node->unschedulable);
  EXPECT_TRUE(node->taints.empty());
  EXPECT_TRUE(node->allocatable.empty());
}

TEST(NodeDecodeTest, ErrorsNameNodeAndFieldPath) {
  struct Case {
    const char* json;
    const char* want;
  };
  const Case cases[] = {
      {R"({"metadata": {"name": "n1"}, "spec": {"unschedulable": "yes"}})",
       "Node n1: spec.unschedulable: expected a boolean, got string"},
      {R"({"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b"}]}})",
       "Node n1: spec.taints[1].effect: Required value"},
      {R"({"metadata": {"name": "n1"}, "spec": {"taints": [{"effect": "NoSchedule"}]}})",
       "Node n1: spec.taints[0].key: Required value"},
      {R"({"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "a", "effect": "Drain"}]}})",
       "Node n1: spec.taints[0].effect: Unsupported value: \"Drain\": supported values: \"NoSchedule\", "
       "\"PreferNoSchedule\", \"NoExecute\""},
      {R"({"metadata": {"name": "n1"}, "spec": {"taints": {"key": "a"}}})",
       "Node n1: spec.taints: expected an array, got object"},
      {R"({"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "four"}}})",
       "Node n1: status.allocatable.cpu: Invalid value: \"four\": quantities must match the regular expression "
       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {R"({"metadata": {"name": "n1"}, "status": {"capacity": {"nvidia.com/gpu": "8x"}}})",
       "Node n1: status.capacity[\"nvidia.com/gpu\"]: Invalid value: \"8x\": quantities must match the regular "
       "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {R"({"metadata": {"name": "n1"}, "status": {"allocatable": {"memory": "-1Gi"}}})",
       "Node n1: status.allocatable.memory: Invalid value: must be greater than or equal to 0"},
      {R"({"metadata": {"name": "n1"}, "status": {"allocatable": {"pods": "110Ki", "memory": "1e40"}}})",
       "Node n1: status.allocatable.memory: Invalid value: \"1e40\": quantity is too large: its value does not fit "
       "in 64 bits"},
      {R"({"metadata": {"name": "n1"}, "status": {"conditions": [{"type": 1}]}})",
       "Node n1: status.conditions[0].type: expected a string, got number"},
      {R"({"metadata": {"name": "n1"}, "status": {"images": [{"names": ["a"], "sizeBytes": "big"}]}})",
       "Node n1: status.images[0].sizeBytes: expected an integer, got string"},
      {R"({"metadata": {"name": "n1", "labels": {"zone": null, "rack": 7}}})",
       "Node n1: metadata.labels.rack: expected a string, got number"},
      {R"({"metadata": {}})", "Node: metadata: name: Required value"},
      {R"({"metadata": {"name": "n1"}, "status": []})", "Node n1: status: expected an object, got array"},
      {R"(42)", "Node: expected an object, got number"},
  };
  for (const Case& c : cases) {
    auto node = Decode(c.json);
    ASSERT_FALSE(node.ok()) << c.json;
    EXPECT_EQ(std::string(node.status().message()), c.want) << c.json;
  }
}

}  // namespace
}  // namespace gantry::api
