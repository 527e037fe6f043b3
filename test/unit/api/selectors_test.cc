// Label selectors, node selector terms and taint/toleration matching with
// upstream semantics (apimachinery labels, component-helpers nodeaffinity,
// core/v1 helper ToleratesTaint).
#include "src/api/selectors.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/unit/api/test_json.h"

namespace gantry::api {
namespace {

using ::gantry::api::testing_util::DecodeStatus;
using ::gantry::api::testing_util::Json;
using ::gantry::api::testing_util::MakeLabels;
using ::testing::HasSubstr;

LabelSelector ParseLabelSelector(std::string_view text) {
  Json json(text);
  Decoder d("Test");
  LabelSelector sel = DecodeLabelSelector(d, json.root());
  EXPECT_TRUE(d.ok()) << d.Finish(json.root());
  return sel;
}

NodeSelector ParseNodeSelector(std::string_view text) {
  Json json(text);
  Decoder d("Test");
  NodeSelector sel = DecodeNodeSelector(d, json.root());
  EXPECT_TRUE(d.ok()) << d.Finish(json.root());
  return sel;
}

struct LabelCase {
  const char* name;
  const char* selector;
  Labels labels;
  bool want;
};

std::vector<LabelCase> LabelCases() {
  Labels web = MakeLabels({{"app", "web"}, {"tier", "frontend"}, {"env", "prod"}});
  Labels db = MakeLabels({{"app", "db"}, {"tier", "backend"}});
  Labels none;
  return {
      {"empty selector matches everything", "{}", web, true},
      {"empty selector matches no labels", "{}", none, true},
      {"null fields are empty", R"({"matchLabels": null, "matchExpressions": null})", web, true},
      {"matchLabels hit", R"({"matchLabels": {"app": "web"}})", web, true},
      {"matchLabels miss", R"({"matchLabels": {"app": "web"}})", db, false},
      {"matchLabels missing key", R"({"matchLabels": {"app": "web"}})", none, false},
      {"matchLabels all must match", R"({"matchLabels": {"app": "web", "env": "dev"}})", web, false},
      {"matchLabels empty value", R"({"matchLabels": {"app": ""}})", MakeLabels({{"app", ""}}), true},
      {"In hit", R"({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["backend", "frontend"]}]})",
       web, true},
      {"In miss", R"({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["cache"]}]})", web,
       false},
      {"In missing key", R"({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]})", web,
       false},
      {"NotIn excludes", R"({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["frontend"]}]})",
       web, false},
      {"NotIn other value", R"({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]})",
       web, true},
      {"NotIn matches a missing key", R"({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]})",
       web, true},
      {"Exists", R"({"matchExpressions": [{"key": "env", "operator": "Exists"}]})", web, true},
      {"Exists missing", R"({"matchExpressions": [{"key": "env", "operator": "Exists"}]})", db, false},
      {"DoesNotExist", R"({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]})", db, true},
      {"DoesNotExist present", R"({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]})", web,
       false},
      {"labels and expressions are ANDed",
       R"({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]})",
       web, false},
      {"several expressions ANDed",
       R"({"matchExpressions": [{"key": "app", "operator": "Exists"}, {"key": "env", "operator": "DoesNotExist"}]})",
       db, true},
      {"many values use binary search",
       R"({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a","b","c","d","e","f","g","h","i","web","z"]}]})",
       web, true},
      {"many values miss",
       R"({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a","b","c","d","e","f","g","h","i","x","z"]}]})",
       web, false},
  };
}

TEST(LabelSelectorTest, Matches) {
  for (const LabelCase& c : LabelCases()) {
    LabelSelector sel = ParseLabelSelector(c.selector);
    EXPECT_EQ(sel.Matches(c.labels), c.want) << c.name;
  }
}

TEST(LabelSelectorTest, EmptyFlag) {
  EXPECT_TRUE(ParseLabelSelector("{}").Empty());
  EXPECT_FALSE(ParseLabelSelector(R"({"matchLabels": {"a": "b"}})").Empty());
}

struct ErrorCase {
  const char* json;
  const char* want;  // substring of the error
};

TEST(LabelSelectorTest, DecodeErrors) {
  const ErrorCase cases[] = {
      {R"({"matchExpressions": [{"key": "a", "operator": "In"}]})",
       "matchExpressions[0].values: Required value"},
      {R"({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]})",
       "matchExpressions[0].values: Required value"},
      {R"({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})",
       "matchExpressions[0].values: Forbidden"},
      {R"({"matchExpressions": [{"key": "a", "operator": "DoesNotExist", "values": ["x"]}]})",
       "matchExpressions[0].values: Forbidden"},
      // Gt/Lt exist only in node selectors.
      {R"({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})",
       "matchExpressions[0].operator: Unsupported value: \"Gt\""},
      {R"({"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]})",
       "matchExpressions[0].operator: Unsupported value: \"in\""},
      {R"({"matchExpressions": {"key": "a"}})", "matchExpressions: expected an array, got object"},
      {R"({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]})",
       "matchExpressions[0].values: expected an array, got string"},
      {R"({"matchExpressions": [{"key": "a", "operator": "In", "values": [1]}]})",
       "matchExpressions[0].values[0]: expected a string, got number"},
      {R"({"matchLabels": {"app": 3}})", "matchLabels.app: expected a string, got number"},
      {R"({"matchLabels": {"app.kubernetes.io/name": true}})",
       "matchLabels[\"app.kubernetes.io/name\"]: expected a string, got boolean"},
      {R"({"matchLabels": ["a"]})", "matchLabels: expected an object, got array"},
      {R"("app=web")", "expected an object, got string"},
  };
  for (const ErrorCase& c : cases) {
    absl::Status st = DecodeStatus("Test", c.json, [](Decoder& d, JsonValue v) { DecodeLabelSelector(d, v); });
    EXPECT_FALSE(st.ok()) << c.json;
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.want)) << c.json;
  }
}

struct NodeCase {
  const char* name;
  const char* selector;  // a v1.NodeSelector
  Labels labels;
  const char* node_name;
  bool want;
};

std::vector<NodeCase> NodeCases() {
  Labels gpu = MakeLabels({{"gpu-count", "8"},
                           {"topology.kubernetes.io/zone", "zone-a"},
                           {"kubernetes.io/hostname", "node-1"},
                           {"weird", "abc"}});
  return {
      {"no terms matches nothing", R"({"nodeSelectorTerms": []})", gpu, "node-1", false},
      {"empty term matches nothing", R"({"nodeSelectorTerms": [{}]})", gpu, "node-1", false},
      {"term with empty lists matches nothing",
       R"({"nodeSelectorTerms": [{"matchExpressions": [], "matchFields": []}]})", gpu, "node-1", false},
      {"empty term does not block other terms",
       R"({"nodeSelectorTerms": [{}, {"matchExpressions": [{"key": "gpu-count", "operator": "Exists"}]}]})", gpu,
       "node-1", true},
      {"In", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a", "zone-b"]}]}]})",
       gpu, "node-1", true},
      {"NotIn", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["zone-a"]}]}]})",
       gpu, "node-1", false},
      {"Gt true", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu-count", "operator": "Gt", "values": ["4"]}]}]})",
       gpu, "node-1", true},
      {"Gt equal is false", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu-count", "operator": "Gt", "values": ["8"]}]}]})",
       gpu, "node-1", false},
      {"Lt true", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu-count", "operator": "Lt", "values": ["16"]}]}]})",
       gpu, "node-1", true},
      {"Lt false", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu-count", "operator": "Lt", "values": ["4"]}]}]})",
       gpu, "node-1", false},
      {"Gt negative bound", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu-count", "operator": "Gt", "values": ["-1"]}]}]})",
       gpu, "node-1", true},
      {"Gt on a non-integer label is false", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "weird", "operator": "Gt", "values": ["1"]}]}]})",
       gpu, "node-1", false},
      {"Lt on a missing label is false", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "cores", "operator": "Lt", "values": ["100"]}]}]})",
       gpu, "node-1", false},
      {"matchFields name In", R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]})",
       gpu, "node-1", true},
      {"matchFields name In other", R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}]})",
       gpu, "node-1", false},
      {"matchFields name NotIn", R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-2"]}]}]})",
       gpu, "node-1", true},
      {"fields and expressions ANDed within a term",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu-count", "operator": "Exists"}], "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}]})",
       gpu, "node-1", false},
      {"terms ORed",
       R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}, {"matchExpressions": [{"key": "gpu-count", "operator": "Gt", "values": ["7"]}]}]})",
       gpu, "node-1", true},
      {"expressions ANDed within a term",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu-count", "operator": "Gt", "values": ["7"]}, {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-b"]}]}]})",
       gpu, "node-1", false},
      {"DoesNotExist", R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": "DoesNotExist"}]}]})",
       gpu, "node-1", true},
  };
}

TEST(NodeSelectorTest, Matches) {
  for (const NodeCase& c : NodeCases()) {
    NodeSelector sel = ParseNodeSelector(c.selector);
    EXPECT_EQ(sel.Matches(c.labels, c.node_name), c.want) << c.name;
  }
}

TEST(NodeSelectorTest, DecodedRequirementShape) {
  NodeSelector sel = ParseNodeSelector(
      R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["42"]},
                                                        {"key": "z", "operator": "In", "values": ["b", "a"]}]}]})");
  ASSERT_EQ(sel.terms.size(), 1u);
  ASSERT_EQ(sel.terms[0].match_expressions.size(), 2u);
  const Requirement& gt = sel.terms[0].match_expressions[0];
  EXPECT_EQ(gt.op, SelectorOp::kGt);
  EXPECT_EQ(gt.int_value, 42);
  EXPECT_EQ(SelectorOpName(gt.op), "Gt");
  const Requirement& in = sel.terms[0].match_expressions[1];
  ASSERT_EQ(in.values.size(), 2u);
  EXPECT_EQ(in.values[0].view(), "a");  // sorted
  EXPECT_EQ(in.values[1].view(), "b");
}

TEST(NodeSelectorTest, DecodeErrors) {
  const ErrorCase cases[] = {
      {R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["x"]}]}]})",
       "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: \"x\": must be an integer"},
      {R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Lt", "values": ["1", "2"]}]}]})",
       "nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified single value"},
      {R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Gt"}]}]})",
       "nodeSelectorTerms[0].matchExpressions[0].values: Required value"},
      {R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1.5"]}]}]})",
       "must be an integer"},
      {R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["a"]}]}]})",
       "nodeSelectorTerms[0].matchFields: Invalid value: \"metadata.labels\""},
      {R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Between", "values": ["1"]}]}]})",
       "nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: \"Between\""},
      {R"({"nodeSelectorTerms": {}})", "nodeSelectorTerms: expected an array, got object"},
      {R"({"nodeSelectorTerms": [[]]})", "nodeSelectorTerms[0]: expected an object, got array"},
      {R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": 1, "operator": "Exists"}]}]})",
       "nodeSelectorTerms[0].matchExpressions[0].key: expected a string, got number"},
  };
  for (const ErrorCase& c : cases) {
    absl::Status st = DecodeStatus("Test", c.json, [](Decoder& d, JsonValue v) { DecodeNodeSelector(d, v); });
    EXPECT_FALSE(st.ok()) << c.json;
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.want)) << c.json;
  }
}

Taint ParseTaint(std::string_view text) {
  Json json(text);
  Decoder d("Test");
  Taint t = DecodeTaint(d, json.root());
  EXPECT_TRUE(d.ok()) << d.Finish(json.root());
  return t;
}

Toleration ParseToleration(std::string_view text) {
  Json json(text);
  Decoder d("Test");
  Toleration t = DecodeToleration(d, json.root());
  EXPECT_TRUE(d.ok()) << d.Finish(json.root());
  return t;
}

struct TolerationCase {
  const char* name;
  const char* toleration;
  const char* taint;
  bool want;
};

const TolerationCase kTolerationCases[] = {
    {"equal key value effect", R"({"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"})",
     R"({"key": "gpu", "value": "true", "effect": "NoSchedule"})", true},
    {"operator defaults to Equal", R"({"key": "gpu", "value": "true", "effect": "NoSchedule"})",
     R"({"key": "gpu", "value": "true", "effect": "NoSchedule"})", true},
    {"value differs", R"({"key": "gpu", "operator": "Equal", "value": "false", "effect": "NoSchedule"})",
     R"({"key": "gpu", "value": "true", "effect": "NoSchedule"})", false},
    {"empty value equals empty value", R"({"key": "dedicated", "effect": "NoSchedule"})",
     R"({"key": "dedicated", "effect": "NoSchedule"})", true},
    {"empty value does not equal a value", R"({"key": "dedicated", "effect": "NoSchedule"})",
     R"({"key": "dedicated", "value": "x", "effect": "NoSchedule"})", false},
    {"key differs", R"({"key": "gpu", "operator": "Exists"})", R"({"key": "cpu", "effect": "NoSchedule"})", false},
    {"exists ignores value", R"({"key": "gpu", "operator": "Exists", "effect": "NoSchedule"})",
     R"({"key": "gpu", "value": "anything", "effect": "NoSchedule"})", true},
    {"empty effect matches every effect (NoExecute)", R"({"key": "gpu", "operator": "Exists"})",
     R"({"key": "gpu", "effect": "NoExecute"})", true},
    {"empty effect matches every effect (PreferNoSchedule)", R"({"key": "gpu", "operator": "Equal", "value": "v"})",
     R"({"key": "gpu", "value": "v", "effect": "PreferNoSchedule"})", true},
    {"effect mismatch", R"({"key": "gpu", "operator": "Exists", "effect": "NoExecute"})",
     R"({"key": "gpu", "effect": "NoSchedule"})", false},
    {"effect mismatch PreferNoSchedule", R"({"key": "gpu", "operator": "Exists", "effect": "PreferNoSchedule"})",
     R"({"key": "gpu", "effect": "NoSchedule"})", false},
    {"empty key + Exists tolerates everything", R"({"operator": "Exists"})",
     R"({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"})", true},
    {"empty key + Exists tolerates any key and value", R"({"operator": "Exists"})",
     R"({"key": "a", "value": "b", "effect": "NoSchedule"})", true},
    {"empty key + Exists still checks effect", R"({"operator": "Exists", "effect": "NoSchedule"})",
     R"({"key": "a", "effect": "NoExecute"})", false},
    {"empty key + Exists with matching effect", R"({"operator": "Exists", "effect": "NoExecute"})",
     R"({"key": "a", "effect": "NoExecute"})", true},
    {"tolerationSeconds does not affect matching",
     R"({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})",
     R"({"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"})", true},
};

class TolerationTest : public testing::TestWithParam<TolerationCase> {};

TEST_P(TolerationTest, Tolerates) {
  const TolerationCase& c = GetParam();
  Toleration tol = ParseToleration(c.toleration);
  Taint taint = ParseTaint(c.taint);
  EXPECT_EQ(tol.Tolerates(taint), c.want) << c.name;
  EXPECT_EQ(TaintTolerated(taint, {tol}), c.want) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Table, TolerationTest, testing::ValuesIn(kTolerationCases));

TEST(TolerationTest, AnyOfListTolerates) {
  Taint taint = ParseTaint(R"({"key": "gpu", "value": "h100", "effect": "NoSchedule"})");
  std::vector<Toleration> none;
  EXPECT_FALSE(TaintTolerated(taint, none));
  std::vector<Toleration> list = {ParseToleration(R"({"key": "cpu", "operator": "Exists"})"),
                                  ParseToleration(R"({"key": "gpu", "value": "a100"})")};
  EXPECT_FALSE(TaintTolerated(taint, list));
  list.push_back(ParseToleration(R"({"key": "gpu", "value": "h100", "effect": "NoSchedule"})"));
  EXPECT_TRUE(TaintTolerated(taint, list));
}

TEST(TolerationTest, DecodedFields) {
  Toleration t = ParseToleration(
      R"({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60})");
  EXPECT_EQ(t.key.view(), "k");
  EXPECT_EQ(t.op, TolerationOp::kExists);
  EXPECT_EQ(t.effect, TaintEffect::kNoExecute);
  ASSERT_TRUE(t.toleration_seconds.has_value());
  EXPECT_EQ(*t.toleration_seconds, 60);
  EXPECT_FALSE(ParseToleration(R"({"operator": "Exists"})").toleration_seconds.has_value());

  Taint taint = ParseTaint(R"({"key": "k", "value": "v", "effect": "NoSchedule", "timeAdded": "2024-01-02T03:04:05Z"})");
  EXPECT_EQ(taint.effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(TaintEffectName(taint.effect), "NoSchedule");
  EXPECT_EQ(taint.time_added_micros, 1704164645LL * 1000000);
}

TEST(TolerationTest, DecodeErrors) {
  const ErrorCase cases[] = {
      {R"({"value": "x"})", "operator: Invalid value: operator must be Exists when `key` is empty"},
      {R"({"key": "k", "operator": "Exists", "value": "x"})",
       "operator: Invalid value: value must be empty when `operator` is 'Exists'"},
      {R"({"key": "k", "operator": "Gte"})", "operator: Unsupported value: \"Gte\""},
      {R"({"key": "k", "effect": "NoRun"})", "effect: Unsupported value: \"NoRun\""},
      {R"({"key": "k", "tolerationSeconds": "60"})", "tolerationSeconds: expected an integer, got string"},
      {R"({"key": "k", "tolerationSeconds": 1.5})", "tolerationSeconds: expected an integer"},
      {R"({"key": ["k"]})", "key: expected a string, got array"},
  };
  for (const ErrorCase& c : cases) {
    absl::Status st = DecodeStatus("Test", c.json, [](Decoder& d, JsonValue v) { DecodeToleration(d, v); });
    EXPECT_FALSE(st.ok()) << c.json;
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.want)) << c.json;
  }
}

TEST(TaintTest, DecodeErrors) {
  const ErrorCase cases[] = {
      {R"({"effect": "NoSchedule"})", "key: Required value"},
      {R"({"key": "k"})", "effect: Required value"},
      {R"({"key": "k", "effect": ""})", "effect: Unsupported value: \"\""},
      {R"({"key": "k", "effect": "Evict"})", "effect: Unsupported value: \"Evict\""},
      {R"({"key": "k", "effect": "NoSchedule", "timeAdded": "yesterday"})",
       "timeAdded: Invalid value: \"yesterday\": not an RFC 3339 timestamp"},
      {R"({"key": "k", "effect": 1})", "effect: expected a string, got number"},
  };
  for (const ErrorCase& c : cases) {
    absl::Status st = DecodeStatus("Test", c.json, [](Decoder& d, JsonValue v) { DecodeTaint(d, v); });
    EXPECT_FALSE(st.ok()) << c.json;
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.want)) << c.json;
  }
}

}  // namespace
}  // namespace gantry::api
