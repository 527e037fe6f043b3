#include "plugins/node_affinity/node_affinity.h"

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "plugins/helper/plugin_test_util.h"
#include "simdjson.h"
#include "test/testing/objects.h"

namespace gantry::plugins::node_affinity {
namespace {

using gantry::testing::MakeNodeInfo;
using gantry::testing::ParseNode;
using gantry::testing::PodInfoFromYaml;

NodeAffinityArgs ParseArgs(std::string_view json, std::string* error = nullptr) {
  static simdjson::dom::parser parser;  // tests are single-threaded
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS);
  api::Decoder d(kArgsKind);
  NodeAffinityArgs args = NodeAffinityArgs::Decode(d, v);
  if (error != nullptr) *error = d.ok() ? "" : d.error()->ToString();
  return args;
}

std::string Node(std::string_view name, std::string_view labels) {
  return gantry::StrCat("metadata: {name: ", name, ", labels: {", labels, "}}");
}

// Rows follow upstream's TestNodeAffinity (Filter path).
TEST(NodeAffinity, Filter) {
  struct Case {
    const char* name;
    std::string pod_spec;  // YAML of spec
    std::string node_name;
    std::string node_labels;
    std::string args;
    framework::Code code;
    std::string reason;
  } cases[] = {
      {"no selector", "{}", "n1", "", "null", framework::Code::kSuccess, ""},
      {"missing labels", "{nodeSelector: {foo: bar}}", "n1", "", "null",
       framework::Code::kUnschedulableAndUnresolvable, std::string(kErrReasonPod)},
      {"same labels", "{nodeSelector: {foo: bar}}", "n1", "foo: bar", "null", framework::Code::kSuccess, ""},
      {"node labels are superset", "{nodeSelector: {foo: bar}}", "n1", "foo: bar, baz: blah", "null",
       framework::Code::kSuccess, ""},
      {"node labels are subset", "{nodeSelector: {foo: bar, baz: blah}}", "n1", "foo: bar", "null",
       framework::Code::kUnschedulableAndUnresolvable, std::string(kErrReasonPod)},
      {"matchExpressions In matches",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: foo, operator: In, values: [bar, value2]}]}]}}}}",
       "n1", "foo: bar", "null", framework::Code::kSuccess, ""},
      {"matchExpressions Gt matches",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kernel-version, operator: Gt, values: ['0204']}]}]}}}}",
       "n1", "kernel-version: '0206'", "null", framework::Code::kSuccess, ""},
      {"matchExpressions NotIn matches",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: mem-type, operator: NotIn, values: [DDR, DDR2]}]}]}}}}",
       "n1", "mem-type: DDR3", "null", framework::Code::kSuccess, ""},
      {"matchExpressions Exists matches",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: GPU, operator: Exists}]}]}}}}",
       "n1", "GPU: NVIDIA-GRID-K1", "null", framework::Code::kSuccess, ""},
      {"matchExpressions In does not match",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: foo, operator: In, values: [value1, value2]}]}]}}}}",
       "n1", "foo: bar", "null", framework::Code::kUnschedulableAndUnresolvable, std::string(kErrReasonPod)},
      {"empty MatchExpressions matches nothing",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: []}]}}}}",
       "n1", "foo: bar", "null", framework::Code::kUnschedulableAndUnresolvable, std::string(kErrReasonPod)},
      {"nodeSelector and affinity both must match",
       "{nodeSelector: {foo: bar}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: foo, operator: Exists}]}]}}}}",
       "n1", "foo: baz", "null", framework::Code::kUnschedulableAndUnresolvable, std::string(kErrReasonPod)},
      {"ORed terms: second term matches",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: foo, operator: In, values: [x]}]}, {matchExpressions: [{key: diffkey, operator: In, values: [wrong, value2]}]}]}}}}",
       "n1", "diffkey: value2", "null", framework::Code::kSuccess, ""},
      {"matchFields In matches",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}]}}}}",
       "node1", "", "null", framework::Code::kSuccess, ""},
      {"two terms: matchFields does not match but matchExpressions does",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}, {matchExpressions: [{key: foo, operator: In, values: [bar]}]}]}}}}",
       "node2", "foo: bar", "null", framework::Code::kSuccess, ""},
      {"one term: matchFields matches but matchExpressions does not",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node1]}], matchExpressions: [{key: foo, operator: In, values: [bar]}]}]}}}}",
       "node1", "foo: baz", "null", framework::Code::kUnschedulableAndUnresolvable, std::string(kErrReasonPod)},
      {"conflicting matchFields requirements",
       "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node1]}, {key: metadata.name, operator: In, values: [node2]}]}]}}}}",
       "node1", "", "null", framework::Code::kUnschedulableAndUnresolvable, std::string(kErrReasonConflict)},
      {"matches added affinity and pod's node affinity",
       "{nodeSelector: {foo: bar}}", "n1", "zone: foo, foo: bar",
       R"({"addedAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["foo"]}]}]}}})",
       framework::Code::kSuccess, ""},
      {"matches added affinity but not pod's node affinity",
       "{nodeSelector: {foo: bar}}", "n1", "zone: foo",
       R"({"addedAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["foo"]}]}]}}})",
       framework::Code::kUnschedulableAndUnresolvable, std::string(kErrReasonPod)},
      {"doesn't match added affinity", "{}", "n1", "zone: bar",
       R"({"addedAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["foo"]}]}]}}})",
       framework::Code::kUnschedulableAndUnresolvable, std::string(kErrReasonEnforced)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string err;
    NodeAffinity pl(ParseArgs(c.args, &err));
    ASSERT_EQ(err, "");
    auto pod = PodInfoFromYaml(gantry::StrCat("metadata: {name: p}\nspec: ", c.pod_spec));
    auto node = MakeNodeInfo(ParseNode(Node(c.node_name, c.node_labels)));
    framework::Status st = testing::RunFilter(pl, *pod, *node);
    EXPECT_EQ(st.code(), c.code);
    EXPECT_EQ(st.Message(), c.reason);
  }
}

TEST(NodeAffinity, PreFilterResult) {
  struct Case {
    const char* name;
    std::string terms;
    std::optional<std::vector<std::string>> want;
  } cases[] = {
      {"one name", "[{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}]",
       std::vector<std::string>{"node1"}},
      {"two terms of names", "[{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}, {matchFields: [{key: metadata.name, operator: In, values: [node2]}]}]",
       std::vector<std::string>{"node1", "node2"}},
      {"intersection within a term", "[{matchFields: [{key: metadata.name, operator: In, values: [node1, node2]}, {key: metadata.name, operator: In, values: [node2, node3]}]}]",
       std::vector<std::string>{"node2"}},
      {"a term without a name pin", "[{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}, {matchExpressions: [{key: foo, operator: Exists}]}]",
       std::nullopt},
      {"NotIn does not narrow", "[{matchFields: [{key: metadata.name, operator: NotIn, values: [node1]}]}]", std::nullopt},
  };
  NodeAffinity pl(NodeAffinityArgs{});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto pod = PodInfoFromYaml(gantry::StrCat(
        "metadata: {name: p}\nspec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ",
        c.terms, "}}}}"));
    framework::CycleState state;
    framework::PreFilterResult result;
    ASSERT_TRUE(pl.PreFilter(state, *pod, {}, &result).IsSuccess());
    if (!c.want) {
      EXPECT_FALSE(result.node_names.has_value());
      continue;
    }
    ASSERT_TRUE(result.node_names.has_value());
    std::vector<std::string> got(result.node_names->begin(), result.node_names->end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, *c.want);
  }
}

TEST(NodeAffinity, PreFilterSkipsWithoutConstraints) {
  NodeAffinity pl(NodeAffinityArgs{});
  auto pod = PodInfoFromYaml("metadata: {name: p}");
  framework::CycleState state;
  framework::PreFilterResult result;
  EXPECT_TRUE(pl.PreFilter(state, *pod, {}, &result).IsSkip());
}

// Rows follow upstream's TestNodeAffinityPriority.
TEST(NodeAffinity, Score) {
  const std::string affinity1 =
      "{affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 2, preference: {matchExpressions: [{key: foo, operator: In, values: [bar]}]}}]}}}";
  const std::string affinity2 =
      "{affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: ["
      "{weight: 2, preference: {matchExpressions: [{key: foo, operator: In, values: [bar]}]}},"
      "{weight: 4, preference: {matchExpressions: [{key: key, operator: In, values: [value]}]}},"
      "{weight: 5, preference: {matchExpressions: [{key: foo, operator: In, values: [bar]}, {key: key, operator: In, values: [value]}, {key: az, operator: In, values: [az1]}]}}]}}}";
  const std::string label1 = "foo: bar", label2 = "key: value", label4 = "abc: az11, def: az22",
                    label5 = "foo: bar, key: value, az: az1";
  struct Case {
    const char* name;
    std::string pod_spec;
    std::vector<std::string> labels;
    std::string args;
    std::vector<int64_t> want;
  } cases[] = {
      {"all nodes are same priority as NodeAffinity is nil", "{}", {label1, label2, label4}, "null", {0, 0, 0}},
      {"no node matches preferred scheduling requirements", affinity1, {label4, label2, label4}, "null", {0, 0, 0}},
      {"only node1 matches the preferred scheduling requirements of pod", affinity1, {label1, label4, label2},
       "null", {100, 0, 0}},
      {"all nodes match with different priorities", affinity2, {label1, label5, label2}, "null", {18, 100, 36}},
      {"added affinity", "{}", {label1, label2},
       R"({"addedAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"preference":{"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}}]}})",
       {100, 0}},
      {"added affinity and pod has default affinity", affinity1, {label1, label2, label5},
       R"({"addedAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":3,"preference":{"matchExpressions":[{"key":"key","operator":"In","values":["value"]}]}}]}})",
       {40, 60, 100}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string err;
    NodeAffinity pl(ParseArgs(c.args, &err));
    ASSERT_EQ(err, "");
    auto pod = PodInfoFromYaml(gantry::StrCat("metadata: {name: p}\nspec: ", c.pod_spec));
    std::vector<std::unique_ptr<framework::NodeInfo>> owned;
    std::vector<const framework::NodeInfo*> nodes;
    for (size_t i = 0; i < c.labels.size(); ++i) {
      owned.push_back(MakeNodeInfo(ParseNode(Node(gantry::StrCat("n", i), c.labels[i]))));
      nodes.push_back(owned.back().get());
    }
    framework::Status st;
    EXPECT_EQ(testing::RunScore(pl, *pod, nodes, &st), c.want);
    EXPECT_TRUE(st.IsSuccess()) << st.Message();
  }
}

TEST(NodeAffinity, Args) {
  std::string err;
  NodeAffinityArgs a = ParseArgs("null", &err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(a.ToJson(), nlohmann::json::object());
  ParseArgs(R"({"addedAffinity":{"bogus":1}})", &err);
  EXPECT_EQ(err, "NodeAffinityArgs: addedAffinity.bogus: unknown field \"bogus\"");
  ParseArgs(R"({"foo":1})", &err);
  EXPECT_EQ(err, "NodeAffinityArgs: foo: unknown field \"foo\"");
  ParseArgs(R"({"addedAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Bad"}]}]}}})",
            &err);
  EXPECT_NE(err.find("addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"),
            std::string::npos)
      << err;
  ParseArgs(R"({"addedAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":0,"preference":{}}]}})", &err);
  EXPECT_NE(err.find("preferredDuringSchedulingIgnoredDuringExecution[0].weight"), std::string::npos) << err;
  a = ParseArgs(R"({"addedAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":3,"preference":{"matchExpressions":[{"key":"k","operator":"Exists"}]}}]}})",
                &err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(a.ToJson()["addedAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"], 3);
}

TEST(NodeAffinity, NodeHint) {
  NodeAffinity pl(NodeAffinityArgs{});
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  api::Pod pod = gantry::testing::ParsePod("metadata: {name: p}\nspec: {nodeSelector: {foo: bar}}");
  api::Node match = ParseNode(Node("n", "foo: bar"));
  api::Node miss = ParseNode(Node("n", "foo: baz"));
  EXPECT_EQ(events[0].hint(pod, events[0].event, nullptr, &match), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[0].hint(pod, events[0].event, nullptr, &miss), framework::QueueingHint::kSkip);
  EXPECT_EQ(events[0].hint(pod, events[0].event, &miss, &match), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[0].hint(pod, events[0].event, &match, &match), framework::QueueingHint::kSkip);
}

}  // namespace
}  // namespace gantry::plugins::node_affinity
