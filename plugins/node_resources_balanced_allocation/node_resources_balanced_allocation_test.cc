#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "plugins/helper/plugin_test_util.h"
#include "simdjson.h"
#include "test/testing/objects.h"

namespace gantry::plugins::node_resources_balanced_allocation {
namespace {

using gantry::testing::MakeNodeInfo;
using gantry::testing::MakePodInfo;
using gantry::testing::ParseNode;
using gantry::testing::ParsePod;

NodeResourcesBalancedAllocationArgs ParseArgs(std::string_view json, std::string* error = nullptr) {
  static simdjson::dom::parser parser;
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS);
  api::Decoder d(kArgsKind);
  auto args = NodeResourcesBalancedAllocationArgs::Decode(d, v);
  if (error != nullptr) *error = d.ok() ? "" : d.error()->ToString();
  return args;
}

api::Pod Pod(std::string_view name, std::string_view requests) {
  return ParsePod(gantry::StrCat("metadata: {name: ", name, ", uid: ", name,
                                 "}\nspec: {containers: [{name: c, resources: {requests: {", requests, "}}}]}"));
}

api::Node Node(std::string_view name, std::string_view allocatable) {
  return ParseNode(gantry::StrCat("metadata: {name: ", name, "}\nstatus: {allocatable: {", allocatable, "}}"));
}

// Rows computed with upstream's formula; the first matches upstream's
// "nothing scheduled, resources requested, differently sized nodes".
TEST(NodeResourcesBalancedAllocation, Score) {
  struct Case {
    const char* name;
    std::string args;
    std::string pod;
    std::vector<std::string> nodes;
    std::vector<std::vector<std::string>> existing;
    std::vector<int64_t> want;
  } cases[] = {
      {"nothing scheduled, resources requested, differently sized nodes", "null", "cpu: 3000m, memory: 5000",
       {"cpu: 4000m, memory: 10000, pods: 110", "cpu: 6000m, memory: 10000, pods: 110"}, {{}, {}}, {87, 100}},
      // cpu 9000/10000 = .9, memory 10000/20000 = .5 -> std .2 -> 80 (actual requests, no defaults).
      {"resources requested, pods scheduled with resources", "null", "cpu: 3000m, memory: 5000",
       {"cpu: 10000m, memory: 20000, pods: 110"}, {{"cpu: 3000m", "cpu: 3000m, memory: 5000"}}, {80}},
      // fractions .75, .5, .25 -> std 0.2041 -> 79.
      {"three resources",
       R"({"resources":[{"name":"cpu","weight":1},{"name":"memory","weight":1},{"name":"example.com/gpu","weight":1}]})",
       "cpu: 3000m, memory: 5000, example.com/gpu: 1", {"cpu: 4000m, memory: 10000, pods: 110, example.com/gpu: 4"},
       {{}}, {79}},
      // Fractions above 1 are capped: cpu 1.0, memory .5 -> 75.
      {"requested above capacity", "null", "cpu: 5000m, memory: 5000", {"cpu: 4000m, memory: 10000, pods: 110"},
       {{}}, {75}},
      {"best-effort pod skips scoring", "null", "", {"cpu: 4000m, memory: 10000, pods: 110"}, {{}}, {0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string err;
    NodeResourcesBalancedAllocation pl(ParseArgs(c.args, &err));
    ASSERT_EQ(err, "");
    auto pod = MakePodInfo(c.pod.empty() ? ParsePod("metadata: {name: p}\nspec: {containers: [{name: c}]}")
                                         : Pod("p", c.pod));
    std::vector<std::unique_ptr<framework::NodeInfo>> owned;
    std::vector<const framework::NodeInfo*> nodes;
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      std::vector<api::Pod> existing;
      for (size_t j = 0; j < c.existing[i].size(); ++j) {
        existing.push_back(Pod(gantry::StrCat("e", i, "-", j), c.existing[i][j]));
      }
      owned.push_back(MakeNodeInfo(Node(gantry::StrCat("n", i), c.nodes[i]), existing));
      nodes.push_back(owned.back().get());
    }
    framework::Status st;
    EXPECT_EQ(testing::RunScore(pl, *pod, nodes, &st), c.want);
    EXPECT_TRUE(st.IsSuccess()) << st.Message();
  }
}

TEST(NodeResourcesBalancedAllocation, BestEffortPreScoreSkips) {
  NodeResourcesBalancedAllocation pl(ParseArgs("null"));
  auto pod = MakePodInfo(ParsePod("metadata: {name: p}\nspec: {containers: [{name: c}]}"));
  framework::CycleState state;
  EXPECT_TRUE(pl.PreScore(state, *pod, {}).IsSkip());
}

TEST(NodeResourcesBalancedAllocationArgs, DefaultsAndErrors) {
  std::string err;
  auto a = ParseArgs("null", &err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(a.ToJson(), nlohmann::json::parse(R"({"resources":[{"name":"cpu","weight":1},{"name":"memory","weight":1}]})"));
  a = ParseArgs(R"({"resources":[{"name":"cpu"},{"name":"nvidia.com/gpu","weight":0}]})", &err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(a.ToJson(), nlohmann::json::parse(R"({"resources":[{"name":"cpu","weight":1},{"name":"nvidia.com/gpu","weight":1}]})"));
  ParseArgs(R"({"resources":[{"name":"cpu","weight":2}]})", &err);
  EXPECT_EQ(err, "NodeResourcesBalancedAllocationArgs: resources[0].weight: Invalid value: 2: must be 1");
  ParseArgs(R"({"resources":[{"name":"cpu"},{"name":"cpu"}]})", &err);
  EXPECT_EQ(err, "NodeResourcesBalancedAllocationArgs: resources[1].name: Duplicate value: \"cpu\"");
  ParseArgs(R"({"resource":[]})", &err);
  EXPECT_EQ(err, "NodeResourcesBalancedAllocationArgs: resource: unknown field \"resource\"");
}

}  // namespace
}  // namespace gantry::plugins::node_resources_balanced_allocation
