#include "plugins/node_resources_fit/node_resources_fit.h"

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "plugins/helper/plugin_test_util.h"
#include "simdjson.h"
#include "src/state/dra_state.h"
#include "test/testing/objects.h"

namespace gantry::plugins::node_resources_fit {
namespace {

using gantry::testing::MakeNodeInfo;
using gantry::testing::MakePodInfo;
using gantry::testing::ParseNode;
using gantry::testing::ParsePod;

NodeResourcesFitArgs ParseArgs(std::string_view json, std::string* error = nullptr) {
  static simdjson::dom::parser parser;
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS);
  api::Decoder d(kArgsKind);
  NodeResourcesFitArgs args = NodeResourcesFitArgs::Decode(d, v);
  if (error != nullptr) *error = d.ok() ? "" : d.error()->ToString();
  return args;
}

// A pod with one container requesting `requests` (YAML map body).
api::Pod Pod(std::string_view name, std::string_view requests) {
  return ParsePod(gantry::StrCat("metadata: {name: ", name, ", uid: ", name,
                                 "}\nspec: {containers: [{name: c, resources: {requests: {", requests, "}}}]}"));
}

api::Node Node(std::string_view name, std::string_view allocatable) {
  return ParseNode(gantry::StrCat("metadata: {name: ", name, "}\nstatus: {allocatable: {", allocatable, "}}"));
}

// Upstream's TestEnoughRequests node: makeAllocatableResources(10, 20, 32, 5, 20, 5).
constexpr std::string_view kEnoughNode =
    "cpu: 10m, memory: 20, pods: 32, example.com/aaa: 5, ephemeral-storage: 20, hugepages-2Mi: 5";

// Rows follow upstream's TestEnoughRequests (init containers folded into the
// effective request, as the decoder does).
TEST(NodeResourcesFit, Filter) {
  using C = framework::Code;
  struct Case {
    const char* name;
    std::string pod;
    std::string existing;  // requests of one pod already on the node ("" = none)
    std::string args;
    C code;
    std::vector<std::string> reasons;
  } cases[] = {
      {"no resources requested always fits", "", "cpu: 10m, memory: 20", "null", C::kSuccess, {}},
      {"too many resources fails", "cpu: 1m, memory: 1", "cpu: 10m, memory: 20", "null", C::kUnschedulable,
       {"Insufficient cpu", "Insufficient memory"}},
      {"too many resources fails due to init container cpu", "cpu: 3m, memory: 1", "cpu: 8m, memory: 19", "null",
       C::kUnschedulable, {"Insufficient cpu"}},
      {"too many resources fails due to init container memory", "cpu: 1m, memory: 3", "cpu: 9m, memory: 19",
       "null", C::kUnschedulable, {"Insufficient memory"}},
      {"init container fits because it's the max, not sum", "cpu: 1m, memory: 1", "cpu: 9m, memory: 19", "null",
       C::kSuccess, {}},
      {"both resources fit", "cpu: 1m, memory: 1", "cpu: 5m, memory: 5", "null", C::kSuccess, {}},
      {"one resource memory fits", "cpu: 2m, memory: 1", "cpu: 9m, memory: 5", "null", C::kUnschedulable,
       {"Insufficient cpu"}},
      {"one resource cpu fits", "cpu: 1m, memory: 2", "cpu: 5m, memory: 19", "null", C::kUnschedulable,
       {"Insufficient memory"}},
      {"equal edge case", "cpu: 5m, memory: 1", "cpu: 5m, memory: 19", "null", C::kSuccess, {}},
      {"extended resource fits", "example.com/aaa: 1", "", "null", C::kSuccess, {}},
      {"extended resource capacity enforced", "example.com/aaa: 10", "", "null", C::kUnschedulableAndUnresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced", "example.com/aaa: 1", "example.com/aaa: 5", "null",
       C::kUnschedulable, {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for unknown resource", "example.com/bbb: 1", "", "null",
       C::kUnschedulableAndUnresolvable, {"Insufficient example.com/bbb"}},
      {"kubernetes.io resource capacity enforced", "kubernetes.io/something: 10", "", "null",
       C::kUnschedulableAndUnresolvable, {"Insufficient kubernetes.io/something"}},
      {"hugepages resource capacity enforced", "hugepages-2Mi: 10", "", "null", C::kUnschedulableAndUnresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"hugepages resource allocatable enforced", "hugepages-2Mi: 3", "hugepages-2Mi: 3", "null", C::kUnschedulable,
       {"Insufficient hugepages-2Mi"}},
      {"skip checking ignored extended resource", "example.com/bbb: 2", "",
       R"({"ignoredResources":["example.com/bbb"]})", C::kSuccess, {}},
      {"skip checking ignored extended resource via resource groups", "example.com/bbb: 2", "",
       R"({"ignoredResourceGroups":["example.com"]})", C::kSuccess, {}},
      {"ignoring does not apply to non-extended resources", "kubernetes.io/something: 10", "",
       R"({"ignoredResourceGroups":["kubernetes.io"]})", C::kUnschedulableAndUnresolvable,
       {"Insufficient kubernetes.io/something"}},
      {"ephemeral storage", "ephemeral-storage: 25", "", "null", C::kUnschedulableAndUnresolvable,
       {"Insufficient ephemeral-storage"}},
      {"request larger than the node's whole allocatable", "cpu: 11m", "", "null", C::kUnschedulableAndUnresolvable,
       {"Insufficient cpu"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string err;
    NodeResourcesFit pl(ParseArgs(c.args, &err));
    ASSERT_EQ(err, "");
    std::vector<api::Pod> existing;
    if (!c.existing.empty()) existing.push_back(Pod("existing", c.existing));
    auto node = MakeNodeInfo(Node("n", kEnoughNode), existing);
    auto pod = MakePodInfo(c.pod.empty() ? gantry::testing::SimplePod("p", 0, 0) : Pod("p", c.pod));
    framework::Status st = testing::RunFilter(pl, *pod, *node);
    EXPECT_EQ(st.code(), c.code) << st.Message();
    EXPECT_EQ(st.reasons(), c.reasons);
  }
}

// Upstream's TestPredicateWithPodNumber rows: the pods count is enforced.
TEST(NodeResourcesFit, TooManyPods) {
  NodeResourcesFit pl(ParseArgs("null"));
  auto node = MakeNodeInfo(Node("n", "cpu: 10m, memory: 20, pods: 1"), {Pod("existing", "cpu: 1m")});
  auto pod = MakePodInfo(Pod("p", "cpu: 10m, memory: 1"));
  framework::Status st = testing::RunFilter(pl, *pod, *node);
  EXPECT_EQ(st.code(), framework::Code::kUnschedulable);
  EXPECT_EQ(st.reasons(), (std::vector<std::string>{"Too many pods", "Insufficient cpu"}));
  auto empty = MakePodInfo(gantry::testing::SimplePod("q", 0, 0));
  st = testing::RunFilter(pl, *empty, *node);
  EXPECT_EQ(st.reasons(), (std::vector<std::string>{"Too many pods"}));
}

TEST(NodeResourcesFit, FilterWithoutPreFilterIsError) {
  NodeResourcesFit pl(ParseArgs("null"));
  auto node = MakeNodeInfo(Node("n", kEnoughNode));
  auto pod = MakePodInfo(Pod("p", "cpu: 1m"));
  framework::CycleState state;
  framework::Status st = pl.Filter(state, *pod, *node);
  EXPECT_EQ(st.code(), framework::Code::kError);
  EXPECT_EQ(st.Message(), "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
}

// Scores computed with upstream's formulas; the first rows match upstream's
// "differently sized machines" cases of least/most_allocated_test.go and
// requested_to_capacity_ratio_test.go.
TEST(NodeResourcesFit, Score) {
  struct Case {
    const char* name;
    std::string args;
    std::string pod;
    std::vector<std::string> nodes;
    std::vector<std::vector<std::string>> existing;
    std::vector<int64_t> want;
  } cases[] = {
      {"LeastAllocated: differently sized machines", "null", "cpu: 3000m, memory: 5000",
       {"cpu: 4000m, memory: 10000, pods: 110", "cpu: 6000m, memory: 10000, pods: 110"}, {{}, {}}, {37, 50}},
      {"LeastAllocated: with existing pods", "null", "cpu: 3000m, memory: 5000",
       {"cpu: 10000m, memory: 20000, pods: 110"}, {{"cpu: 3000m, memory: 5000", "cpu: 3000m, memory: 5000"}},
       {17}},
      {"LeastAllocated: extended resource scored only where offered",
       R"({"scoringStrategy":{"type":"LeastAllocated","resources":[{"name":"cpu","weight":1},{"name":"memory","weight":1},{"name":"example.com/gpu","weight":1}]}})",
       "cpu: 3000m, memory: 5000, example.com/gpu: 1",
       {"cpu: 4000m, memory: 10000, pods: 110, example.com/gpu: 4", "cpu: 6000m, memory: 10000, pods: 110"},
       {{}, {}}, {50, 50}},
      {"LeastAllocated: request above capacity scores 0 for that resource", "null", "cpu: 5000m, memory: 5000",
       {"cpu: 4000m, memory: 10000, pods: 110"}, {{}}, {25}},
      {"MostAllocated: differently sized machines",
       R"({"scoringStrategy":{"type":"MostAllocated","resources":[{"name":"cpu","weight":1},{"name":"memory","weight":1}]}})",
       "cpu: 3000m, memory: 5000",
       {"cpu: 4000m, memory: 10000, pods: 110", "cpu: 6000m, memory: 10000, pods: 110"}, {{}, {}}, {62, 50}},
      {"MostAllocated: weighted",
       R"({"scoringStrategy":{"type":"MostAllocated","resources":[{"name":"cpu","weight":2},{"name":"memory","weight":1}]}})",
       "cpu: 3000m, memory: 5000",
       {"cpu: 4000m, memory: 10000, pods: 110", "cpu: 6000m, memory: 10000, pods: 110"}, {{}, {}}, {66, 50}},
      {"MostAllocated: requested above capacity is capped", R"({"scoringStrategy":{"type":"MostAllocated"}})",
       "cpu: 5000m, memory: 5000", {"cpu: 4000m, memory: 10000, pods: 110"}, {{}}, {75}},
      {"RequestedToCapacityRatio: bin packing shape",
       R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[{"utilization":0,"score":0},{"utilization":100,"score":10}]}}})",
       "cpu: 3000m, memory: 5000",
       {"cpu: 4000m, memory: 10000, pods: 110", "cpu: 6000m, memory: 10000, pods: 110"}, {{}, {}}, {63, 50}},
      {"RequestedToCapacityRatio: spreading shape",
       R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[{"utilization":0,"score":10},{"utilization":100,"score":0}]}}})",
       "cpu: 3000m, memory: 5000",
       {"cpu: 4000m, memory: 10000, pods: 110", "cpu: 6000m, memory: 10000, pods: 110"}, {{}, {}}, {38, 50}},
      {"RequestedToCapacityRatio: zero resource scores drop out of the weights",
       R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[{"utilization":0,"score":0},{"utilization":100,"score":10}]}}})",
       "cpu: 4000m, memory: 1", {"cpu: 4000m, memory: 1000000000000, pods: 110"}, {{}}, {100}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string err;
    NodeResourcesFit pl(ParseArgs(c.args, &err));
    ASSERT_EQ(err, "");
    auto pod = MakePodInfo(Pod("p", c.pod));
    std::vector<std::unique_ptr<framework::NodeInfo>> owned;
    std::vector<const framework::NodeInfo*> nodes;
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      std::vector<api::Pod> existing;
      for (size_t j = 0; j < c.existing[i].size(); ++j) existing.push_back(Pod(gantry::StrCat("e", i, "-", j), c.existing[i][j]));
      owned.push_back(MakeNodeInfo(Node(gantry::StrCat("n", i), c.nodes[i]), existing));
      nodes.push_back(owned.back().get());
    }
    framework::Status st;
    EXPECT_EQ(testing::RunScore(pl, *pod, nodes, &st), c.want);
    EXPECT_TRUE(st.IsSuccess()) << st.Message();
  }
}

TEST(NodeResourcesFit, ScoreUsesNonZeroDefaults) {
  // A pod without requests counts as 100m / 200Mi for scoring.
  NodeResourcesFit pl(ParseArgs("null"));
  auto pod = MakePodInfo(ParsePod("metadata: {name: p}\nspec: {containers: [{name: c}]}"));
  auto node = MakeNodeInfo(Node("n", "cpu: 1000m, memory: 2000Mi, pods: 110"));
  // cpu (1000-100)*100/1000 = 90; memory (2000-200)*100/2000 = 90.
  EXPECT_EQ(testing::RunScore(pl, *pod, {node.get()}), std::vector<int64_t>{90});
}

TEST(NodeResourcesFitArgs, DefaultsAndJson) {
  std::string err;
  NodeResourcesFitArgs a = ParseArgs("null", &err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(a.ToJson(), nlohmann::json::parse(
                            R"({"scoringStrategy":{"type":"LeastAllocated","resources":[{"name":"cpu","weight":1},{"name":"memory","weight":1}]}})"));
  a = ParseArgs(R"({"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"NodeResourcesFitArgs",
                    "scoringStrategy":{"type":"MostAllocated","resources":[{"name":"cpu","weight":0},{"name":"nvidia.com/gpu","weight":3}]},
                    "ignoredResources":["example.com/a"]})",
                &err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(a.ToJson(), nlohmann::json::parse(
                            R"({"scoringStrategy":{"type":"MostAllocated","resources":[{"name":"cpu","weight":1},{"name":"nvidia.com/gpu","weight":3}]},"ignoredResources":["example.com/a"]})"));
  a = ParseArgs(R"({"scoringStrategy":{"type":"LeastAllocated","resources":[]}})", &err);
  EXPECT_EQ(a.scoring_strategy.resources, helper::DefaultResourceSpecs());
  EXPECT_TRUE(a.Validate().ok());
}

TEST(NodeResourcesFitArgs, Errors) {
  struct Case {
    const char* json;
    const char* want;
  } cases[] = {
      {R"({"scoringStrategy":{"type":"Bogus"}})",
       "NodeResourcesFitArgs: scoringStrategy.type: Unsupported value: \"Bogus\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
      {R"({"scoringStrategy":{"type":"LeastAllocated","resources":[{"name":"cpu","weight":101}]}})",
       "NodeResourcesFitArgs: scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"},
      {R"({"scoringStrategy":{"type":"LeastAllocated","resources":[{"name":"cpu","weight":-1}]}})",
       "NodeResourcesFitArgs: scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of cpu not in valid range (0, 100]"},
      {R"({"scoringStrategy":{"type":"RequestedToCapacityRatio"}})",
       "NodeResourcesFitArgs: scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified"},
      {R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[{"utilization":50,"score":1},{"utilization":10,"score":2}]}}})",
       "NodeResourcesFitArgs: scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order"},
      {R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[{"utilization":0,"score":11}]}}})",
       "NodeResourcesFitArgs: scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]"},
      {R"({"scoringStrategy":{"type":"RequestedToCapacityRatio","requestedToCapacityRatio":{"shape":[{"utilization":101,"score":1}]}}})",
       "NodeResourcesFitArgs: scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"},
      {R"({"ignoredResourceGroups":["example.com/aaa"]})",
       "NodeResourcesFitArgs: ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource group name can't contain '/'"},
      {R"({"ignoredResources":["-bad"]})",
       "NodeResourcesFitArgs: ignoredResources[0]: Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"},
      {R"({"scoringStrategy":{"type":"LeastAllocated","bogus":1}})",
       "NodeResourcesFitArgs: scoringStrategy.bogus: unknown field \"bogus\""},
      {R"({"ignoredResources":"cpu"})", "NodeResourcesFitArgs: ignoredResources: expected an array, got string"},
      {R"({"scoringStrategy":{"resources":[]}})",
       "NodeResourcesFitArgs: scoringStrategy.type: Unsupported value: \"\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    std::string err;
    ParseArgs(c.json, &err);
    EXPECT_EQ(err, c.want);
  }
}

TEST(NodeResourcesFit, Hints) {
  NodeResourcesFit pl(ParseArgs("null"));
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  api::Pod pod = Pod("p", "cpu: 2000m");
  api::Pod bound = Pod("b", "cpu: 1m");
  bound.node_name = api::Symbol::Intern("n");
  api::Pod pending = Pod("q", "cpu: 1m");
  EXPECT_EQ(events[0].hint(pod, events[0].event, &bound, nullptr), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[0].hint(pod, events[0].event, &pending, nullptr), framework::QueueingHint::kSkip);
  api::Node small = Node("n", "cpu: 1000m, memory: 1Gi, pods: 10");
  api::Node big = Node("n", "cpu: 4000m, memory: 1Gi, pods: 10");
  api::Node big_more_mem = Node("n", "cpu: 4000m, memory: 2Gi, pods: 10");
  EXPECT_EQ(events[1].hint(pod, events[1].event, nullptr, &small), framework::QueueingHint::kSkip);
  EXPECT_EQ(events[1].hint(pod, events[1].event, nullptr, &big), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[1].hint(pod, events[1].event, &small, &big), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[1].hint(pod, events[1].event, &big, &big_more_mem), framework::QueueingHint::kSkip);
}

std::shared_ptr<const api::DeviceClass> Class(std::string_view json) {
  static simdjson::dom::parser parser;
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS);
  absl::StatusOr<api::DeviceClass> c = api::DecodeDeviceClass(v);
  EXPECT_TRUE(c.ok()) << c.status();
  return std::make_shared<const api::DeviceClass>(*c);
}

// Extended resources a DeviceClass serves are left to DynamicResources on
// nodes that have no allocatable of them (no device plugin there).
// DRA state in which DeviceClass "gpu" serves example.com/gpu, and a handle on it.
struct GpuClassHandle {
  GpuClassHandle() {
    dra.UpsertClass(
        Class(R"({"metadata":{"name":"gpu"},"spec":{"extendedResourceName":"example.com/gpu"}})"));
    handle.SetDra(&dra);
  }
  state::DraState dra;
  gantry::testing::FakeHandle handle;
};

TEST(NodeResourcesFit, ExtendedResourcesBackedByDra) {
  using C = framework::Code;
  GpuClassHandle h;
  NodeResourcesFit with_dra(ParseArgs("null"), &h.handle);
  NodeResourcesFit without_dra(ParseArgs("null"));
  struct Case {
    const char* name;
    NodeResourcesFit* plugin;
    std::string pod;
    std::string node;
    C code;
    std::vector<std::string> reasons;
  } cases[] = {
      {"DRA serves it where no device plugin does",
       &with_dra,
       "cpu: 1m, example.com/gpu: 2",
       "cpu: 10m, memory: 20, pods: 32",
       C::kSuccess,
       {}},
      {"implicit class name",
       &with_dra,
       "cpu: 1m, deviceclass.resource.kubernetes.io/gpu: 2",
       "cpu: 10m, memory: 20, pods: 32",
       C::kSuccess,
       {}},
      {"device plugin capacity is checked as usual",
       &with_dra,
       "cpu: 1m, example.com/gpu: 2",
       "cpu: 10m, memory: 20, pods: 32, example.com/gpu: 1",
       C::kUnschedulableAndUnresolvable,
       {"Insufficient example.com/gpu"}},
      {"a resource no class serves needs capacity",
       &with_dra,
       "cpu: 1m, example.com/nic: 1",
       "cpu: 10m, memory: 20, pods: 32",
       C::kUnschedulableAndUnresolvable,
       {"Insufficient example.com/nic"}},
      {"an unknown implicit name needs capacity",
       &with_dra,
       "cpu: 1m, deviceclass.resource.kubernetes.io/tpu: 1",
       "cpu: 10m, memory: 20, pods: 32",
       C::kUnschedulableAndUnresolvable,
       {"Insufficient deviceclass.resource.kubernetes.io/tpu"}},
      {"without DRA state every extended resource needs capacity",
       &without_dra,
       "cpu: 1m, example.com/gpu: 2",
       "cpu: 10m, memory: 20, pods: 32",
       C::kUnschedulableAndUnresolvable,
       {"Insufficient example.com/gpu"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto node = MakeNodeInfo(Node("n", c.node));
    auto pod = MakePodInfo(Pod("p", c.pod));
    framework::Status st = testing::RunFilter(*c.plugin, *pod, *node);
    EXPECT_EQ(st.code(), c.code) << st.Message();
    EXPECT_EQ(st.reasons(), c.reasons);
  }
}

TEST(NodeResourcesFit, HintsForExtendedResourcesBackedByDra) {
  GpuClassHandle h;
  NodeResourcesFit pl(ParseArgs("null"), &h.handle);
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 3u);
  api::Pod pod = Pod("p", "cpu: 1m, example.com/gpu: 2");
  // A node without the resource fits (DRA serves it there); growing
  // anything the pod asks for on such a node may help.
  api::Node plain = Node("n", "cpu: 10m, memory: 20, pods: 32");
  api::Node plain_more_cpu = Node("n", "cpu: 20m, memory: 20, pods: 32");
  EXPECT_EQ(events[1].hint(pod, events[1].event, nullptr, &plain), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[1].hint(pod, events[1].event, &plain, &plain_more_cpu),
            framework::QueueingHint::kQueue);
  // With too little device-plugin capacity the node does not fit.
  api::Node one = Node("n", "cpu: 10m, memory: 20, pods: 32, example.com/gpu: 1");
  EXPECT_EQ(events[1].hint(pod, events[1].event, nullptr, &one), framework::QueueingHint::kSkip);

  ASSERT_EQ(events[2].event.resource, framework::EventResource::kDeviceClass);
  struct Case {
    const char* name;
    std::string pod_requests;
    std::string old_class;  // "" = added
    std::string new_class;
    framework::QueueingHint want;
  } cases[] = {
      {"added class serves the explicit name", "example.com/gpu: 1", "",
       R"({"metadata":{"name":"a"},"spec":{"extendedResourceName":"example.com/gpu"}})",
       framework::QueueingHint::kQueue},
      {"added class serves the implicit name", "deviceclass.resource.kubernetes.io/a: 1", "",
       R"({"metadata":{"name":"a"}})", framework::QueueingHint::kQueue},
      {"added class serves something else", "example.com/gpu: 1", "",
       R"({"metadata":{"name":"a"}})", framework::QueueingHint::kSkip},
      {"updated class now serves the name", "example.com/gpu: 1", R"({"metadata":{"name":"a"}})",
       R"({"metadata":{"name":"a"},"spec":{"extendedResourceName":"example.com/gpu"}})",
       framework::QueueingHint::kQueue},
      {"update without a name change", "deviceclass.resource.kubernetes.io/a: 1",
       R"({"metadata":{"name":"a"}})", R"({"metadata":{"name":"a"}})",
       framework::QueueingHint::kSkip},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    api::Pod p = Pod("p", c.pod_requests);
    std::shared_ptr<const api::DeviceClass> before =
        c.old_class.empty() ? nullptr : Class(c.old_class);
    std::shared_ptr<const api::DeviceClass> after = Class(c.new_class);
    EXPECT_EQ(events[2].hint(p, events[2].event, before.get(), after.get()), c.want);
  }
}

}  // namespace
}  // namespace gantry::plugins::node_resources_fit
