#include "src/api/policy.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace gantry::api {
namespace {

using ::testing::HasSubstr;

// Parses `json`; the element lives as long as `parser`.
JsonValue Parse(simdjson::dom::parser& parser, const std::string& json) {
  auto result = parser.parse(simdjson::padded_string(json));
  EXPECT_EQ(result.error(), simdjson::SUCCESS) << json;
  return result.value_unsafe();
}

TEST(NamespaceTest, DecodesLabels) {
  simdjson::dom::parser p;
  auto ns = DecodeNamespace(Parse(p, R"({"apiVersion":"v1","kind":"Namespace",
    "metadata":{"name":"team-a","labels":{"resource.kubernetes.io/admin-access":"true","a":"b"}}})"));
  ASSERT_TRUE(ns.ok()) << ns.status();
  EXPECT_EQ(ns->meta.name, "team-a");
  EXPECT_EQ(FindLabel(ns->meta.labels, "resource.kubernetes.io/admin-access")->view(), "true");
}

TEST(PriorityClassTest, DecodesFieldsAndDefaults) {
  simdjson::dom::parser p;
  auto pc = DecodePriorityClass(Parse(p, R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",
    "metadata":{"name":"system-cluster-critical"},"value":2000000000,"globalDefault":true})"));
  ASSERT_TRUE(pc.ok()) << pc.status();
  EXPECT_EQ(pc->value, 2000000000);
  EXPECT_TRUE(pc->global_default);
  EXPECT_EQ(pc->preemption_policy, PreemptionPolicy::kPreemptLowerPriority);

  auto never = DecodePriorityClass(Parse(p, R"({"metadata":{"name":"batch"},"value":-5,
    "preemptionPolicy":"Never"})"));
  ASSERT_TRUE(never.ok()) << never.status();
  EXPECT_EQ(never->value, -5);
  EXPECT_EQ(never->preemption_policy, PreemptionPolicy::kNever);
}

TEST(PodDisruptionBudgetTest, DecodesSpecAndStatus) {
  simdjson::dom::parser p;
  auto pdb = DecodePodDisruptionBudget(Parse(p, R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
    "metadata":{"name":"web","namespace":"default"},
    "spec":{"selector":{"matchLabels":{"app":"web"}},"maxUnavailable":"25%",
            "unhealthyPodEvictionPolicy":"AlwaysAllow"},
    "status":{"observedGeneration":3,"disruptionsAllowed":1,"currentHealthy":4,"desiredHealthy":3,
              "expectedPods":4,"disruptedPods":{"web-2":"2026-01-02T03:04:05Z","web-1":"2026-01-02T03:04:00Z"},
              "conditions":[{"type":"DisruptionAllowed","status":"True","reason":"SufficientPods",
                             "lastTransitionTime":"2026-01-02T03:04:05Z"}]}})"));
  ASSERT_TRUE(pdb.ok()) << pdb.status();
  ASSERT_TRUE(pdb->spec.selector.has_value());
  EXPECT_EQ(pdb->spec.selector->requirements.size(), 1u);
  EXPECT_FALSE(pdb->spec.min_available.has_value());
  ASSERT_TRUE(pdb->spec.max_unavailable.has_value());
  EXPECT_TRUE(pdb->spec.max_unavailable->is_string);
  EXPECT_EQ(*pdb->spec.max_unavailable->Scaled(8, true), 2);
  EXPECT_EQ(pdb->spec.unhealthy_pod_eviction_policy, UnhealthyPodEvictionPolicy::kAlwaysAllow);
  EXPECT_EQ(pdb->status.observed_generation, 3);
  EXPECT_EQ(pdb->status.disruptions_allowed, 1);
  EXPECT_EQ(pdb->status.current_healthy, 4);
  EXPECT_EQ(pdb->status.desired_healthy, 3);
  EXPECT_EQ(pdb->status.expected_pods, 4);
  ASSERT_EQ(pdb->status.disrupted_pods.size(), 2u);
  EXPECT_EQ(pdb->status.disrupted_pods[0].first, "web-1");
  const Condition* c = FindCondition(pdb->status.conditions, "DisruptionAllowed");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, ConditionStatus::kTrue);
  EXPECT_EQ(c->reason.view(), "SufficientPods");
}

TEST(PodDisruptionBudgetTest, IntMinAvailableAndNullSelector) {
  simdjson::dom::parser p;
  auto pdb = DecodePodDisruptionBudget(Parse(p, R"({"metadata":{"name":"db","namespace":"x"},
    "spec":{"minAvailable":2}})"));
  ASSERT_TRUE(pdb.ok()) << pdb.status();
  EXPECT_FALSE(pdb->spec.selector.has_value());
  ASSERT_TRUE(pdb->spec.min_available.has_value());
  EXPECT_FALSE(pdb->spec.min_available->is_string);
  EXPECT_EQ(pdb->spec.min_available->int_value, 2);
}

struct ErrorCase {
  std::string name;
  std::string json;
  std::string want;  // substring of the status message
};
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class PolicyErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(PolicyErrorTest, ReportsKindObjectAndPath) {
  const ErrorCase& c = GetParam();
  simdjson::dom::parser p;
  JsonValue root = Parse(p, c.json);
  std::string_view kind;
  if (root["kind"].get_string().get(kind) != simdjson::SUCCESS) kind = "";
  absl::Status status;
  if (kind == "Namespace") {
    status = DecodeNamespace(root).status();
  } else if (kind == "PriorityClass") {
    status = DecodePriorityClass(root).status();
  } else {
    status = DecodePodDisruptionBudget(root).status();
  }
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(c.want));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, PolicyErrorTest,
    ::testing::Values(
        ErrorCase{"NamespaceNoName", R"({"kind":"Namespace","metadata":{}})",
                  "Namespace: metadata.name: Required value"},
        ErrorCase{"NamespaceLabelsWrongType",
                  R"({"kind":"Namespace","metadata":{"name":"a","labels":{"x":1}}})",
                  "Namespace a: metadata.labels.x: expected a string, got number"},
        ErrorCase{"PriorityValueString",
                  R"({"kind":"PriorityClass","metadata":{"name":"hi"},"value":"10"})",
                  "PriorityClass hi: value: expected an integer, got string"},
        ErrorCase{"PriorityValueOverflow",
                  R"({"kind":"PriorityClass","metadata":{"name":"hi"},"value":3000000000})",
                  "PriorityClass hi: value: Invalid value: 3000000000: must be between"},
        ErrorCase{"PriorityBadPolicy",
                  R"({"kind":"PriorityClass","metadata":{"name":"hi"},"value":1,"preemptionPolicy":"Sometimes"})",
                  "PriorityClass hi: preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"Never\", \"PreemptLowerPriority\""},
        ErrorCase{"PriorityGlobalDefaultType",
                  R"({"kind":"PriorityClass","metadata":{"name":"hi"},"globalDefault":"yes"})",
                  "PriorityClass hi: globalDefault: expected a boolean, got string"},
        ErrorCase{"PdbBoth",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"spec":{"minAvailable":1,"maxUnavailable":1}})",
                  "PodDisruptionBudget ns/w: spec: Invalid value: minAvailable and maxUnavailable cannot be both set"},
        ErrorCase{"PdbNegative",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"spec":{"minAvailable":-1}})",
                  "PodDisruptionBudget ns/w: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"},
        ErrorCase{"PdbBadPercent",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"spec":{"maxUnavailable":"ten"}})",
                  "PodDisruptionBudget ns/w: spec.maxUnavailable: Invalid value: \"ten\": a valid percent string"},
        ErrorCase{"PdbOver100",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"spec":{"maxUnavailable":"150%"}})",
                  "spec.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%"},
        ErrorCase{"PdbBadEvictionPolicy",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"spec":{"unhealthyPodEvictionPolicy":"Never"}})",
                  "spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\""},
        ErrorCase{"PdbSelectorOp",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}}})",
                  "spec.selector.matchExpressions[0].operator: Unsupported value: \"Gt\""},
        ErrorCase{"PdbStatusType",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"status":{"currentHealthy":"3"}})",
                  "PodDisruptionBudget ns/w: status.currentHealthy: expected an integer, got string"},
        ErrorCase{"PdbConditionStatus",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"status":{"conditions":[{"type":"DisruptionAllowed","status":"Yes"}]}})",
                  "status.conditions[0].status: Unsupported value: \"Yes\": supported values: \"False\", \"True\", \"Unknown\""},
        ErrorCase{"PdbConditionMissingType",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"status":{"conditions":[{"status":"True"}]}})",
                  "status.conditions[0].type: Required value"},
        ErrorCase{"PdbConditionDuplicate",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"status":{"conditions":[{"type":"A","status":"True"},{"type":"A","status":"False"}]}})",
                  "status.conditions[1].type: Duplicate value: \"A\""},
        ErrorCase{"PdbDisruptedPodsTime",
                  R"({"kind":"PodDisruptionBudget","metadata":{"name":"w","namespace":"ns"},"status":{"disruptedPods":{"p":"yesterday"}}})",
                  "status.disruptedPods.p: Invalid value: \"yesterday\": not an RFC 3339 timestamp"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

TEST(NameValidationTest, Helpers) {
  EXPECT_TRUE(IsDnsLabel("gpu-0"));
  EXPECT_FALSE(IsDnsLabel("-gpu"));
  EXPECT_FALSE(IsDnsLabel("GPU"));
  EXPECT_FALSE(IsDnsLabel(std::string(64, 'a')));
  EXPECT_TRUE(IsDnsSubdomain("gpu.example.com"));
  EXPECT_FALSE(IsDnsSubdomain("gpu..example.com"));
  EXPECT_TRUE(IsCIdentifier("pcieRoot"));
  EXPECT_TRUE(IsCIdentifier("_x1"));
  EXPECT_FALSE(IsCIdentifier("1x"));
  EXPECT_FALSE(IsCIdentifier("a-b"));
}

}  // namespace
}  // namespace gantry::api
