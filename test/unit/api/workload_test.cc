#include "src/api/workload.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace gantry::api {
namespace {

using ::testing::HasSubstr;

JsonValue Parse(simdjson::dom::parser& parser, const std::string& json) {
  auto result = parser.parse(simdjson::padded_string(json));
  EXPECT_EQ(result.error(), simdjson::SUCCESS) << json;
  return result.value_unsafe();
}

TEST(WorkloadTest, DecodesReferenceExample) {
  simdjson::dom::parser p;
  auto w = DecodeWorkload(Parse(p, R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"Workload",
    "metadata":{"name":"training-job-workload","namespace":"some-ns"},
    "spec":{"controllerRef":{"apiGroup":"batch","kind":"Job","name":"training-job"},
      "podGroupTemplates":[{"name":"workers","schedulingPolicy":{"gang":{"minCount":4}},
        "priorityClassName":"high-priority","disruptionMode":{"all":{}},
        "schedulingConstraints":{"topology":[{"key":"topology.kubernetes.io/zone"}]},
        "resourceClaims":[{"name":"pg-claim","resourceClaimTemplateName":"my-claim-template"}],
        "priority":1000,"preemptionPolicy":"Never"},
        {"name":"driver","schedulingPolicy":{"basic":{}}}]}})"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->meta.Key(), "some-ns/training-job-workload");
  ASSERT_TRUE(w->spec.controller_ref.has_value());
  EXPECT_EQ(w->spec.controller_ref->kind.view(), "Job");
  ASSERT_EQ(w->spec.pod_group_templates.size(), 2u);
  const PodGroupTemplate* workers = w->FindPodGroupTemplate("workers");
  ASSERT_NE(workers, nullptr);
  EXPECT_TRUE(workers->scheduling_policy.IsGang());
  EXPECT_EQ(workers->scheduling_policy.min_count, 4);
  EXPECT_EQ(workers->disruption_mode, DisruptionMode::kAll);
  EXPECT_EQ(workers->priority_class_name.view(), "high-priority");
  EXPECT_EQ(workers->priority, 1000);
  EXPECT_EQ(workers->preemption_policy, PreemptionPolicy::kNever);
  ASSERT_EQ(workers->scheduling_constraints.topology.size(), 1u);
  EXPECT_EQ(workers->scheduling_constraints.topology[0].key.view(), "topology.kubernetes.io/zone");
  ASSERT_EQ(workers->resource_claims.size(), 1u);
  EXPECT_EQ(workers->resource_claims[0].resource_claim_template_name, "my-claim-template");
  const PodGroupTemplate* driver = w->FindPodGroupTemplate("driver");
  ASSERT_NE(driver, nullptr);
  EXPECT_FALSE(driver->scheduling_policy.IsGang());
  EXPECT_EQ(driver->scheduling_policy.min_count, 1);
  EXPECT_EQ(driver->disruption_mode, DisruptionMode::kSingle);
  EXPECT_FALSE(driver->priority.has_value());
  EXPECT_EQ(w->FindPodGroupTemplate("nope"), nullptr);
}

TEST(WorkloadTest, DecodesCompositeTree) {
  simdjson::dom::parser p;
  auto w = DecodeWorkload(Parse(p, R"({"metadata":{"name":"multi","namespace":"job-ns"},
    "spec":{"compositePodGroupTemplates":[{"name":"root",
      "schedulingPolicy":{"gang":{"minGroupCount":2}},
      "schedulingConstraints":{"topology":[{"key":"topology.kubernetes.io/zone"}]},
      "podGroupTemplates":[{"name":"workers","schedulingPolicy":{"gang":{"minCount":8}}}]}]}})"));
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->spec.composite_pod_group_templates.size(), 1u);
  const CompositePodGroupTemplate& root = w->spec.composite_pod_group_templates[0];
  EXPECT_EQ(root.scheduling_policy.min_group_count, 2);
  ASSERT_EQ(root.pod_group_templates.size(), 1u);
  EXPECT_EQ(root.pod_group_templates[0].scheduling_policy.min_count, 8);
}

TEST(PodGroupTest, DecodesV1beta1) {
  simdjson::dom::parser p;
  auto pg = DecodePodGroup(Parse(p, R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup",
    "metadata":{"name":"tas-workload-workers","namespace":"job-ns","uid":"u-1"},
    "spec":{"parentCompositePodGroupName":"tas-workload-root",
      "workloadRef":{"workloadName":"multi-level-tas-workload","templateName":"workers"},
      "schedulingPolicy":{"gang":{"minCount":8}},
      "schedulingConstraints":{"topology":[{"key":"topology.example.com/rack"}]},
      "disruptionMode":{"single":{}},"priority":100,"preemptionPolicy":"PreemptLowerPriority"},
    "status":{"conditions":[{"type":"PodGroupInitiallyScheduled","status":"False","reason":"Unschedulable",
      "message":"0/3 nodes","observedGeneration":2,"lastTransitionTime":"2026-05-01T00:00:00Z"}],
      "resourceClaimStatuses":[{"name":"pg-claim","resourceClaimName":"tas-workload-workers-pg-claim-x"}]}})"));
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->spec.parent_composite_pod_group_name, "tas-workload-root");
  ASSERT_TRUE(pg->spec.workload_ref.has_value());
  EXPECT_EQ(pg->spec.workload_ref->workload_name.view(), "multi-level-tas-workload");
  EXPECT_EQ(pg->spec.workload_ref->template_name.view(), "workers");
  EXPECT_EQ(pg->spec.scheduling_policy.min_count, 8);
  EXPECT_EQ(pg->spec.scheduling_constraints.topology[0].key.view(), "topology.example.com/rack");
  EXPECT_EQ(pg->spec.priority, 100);
  EXPECT_EQ(pg->spec.preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  const Condition* c = FindCondition(pg->status.conditions, "PodGroupInitiallyScheduled");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, ConditionStatus::kFalse);
  EXPECT_EQ(c->reason.view(), "Unschedulable");
  EXPECT_EQ(c->observed_generation, 2);
  ASSERT_EQ(pg->status.resource_claim_statuses.size(), 1u);
  EXPECT_EQ(pg->status.resource_claim_statuses[0].resource_claim_name,
            "tas-workload-workers-pg-claim-x");
}

TEST(PodGroupTest, DecodesV1alpha2TemplateRef) {
  simdjson::dom::parser p;
  auto pg = DecodePodGroup(Parse(p, R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup",
    "metadata":{"name":"g","namespace":"n"},
    "spec":{"podGroupTemplateRef":{"workload":{"workloadName":"w","podGroupTemplateName":"t"}},
            "schedulingPolicy":{"basic":{}}}})"));
  ASSERT_TRUE(pg.ok()) << pg.status();
  ASSERT_TRUE(pg->spec.workload_ref.has_value());
  EXPECT_EQ(pg->spec.workload_ref->workload_name.view(), "w");
  EXPECT_EQ(pg->spec.workload_ref->template_name.view(), "t");
  EXPECT_FALSE(pg->spec.scheduling_policy.IsGang());
}

TEST(CompositePodGroupTest, DecodesReferenceExample) {
  simdjson::dom::parser p;
  auto cpg = DecodeCompositePodGroup(Parse(p, R"({"apiVersion":"scheduling.k8s.io/v1alpha3",
    "kind":"CompositePodGroup","metadata":{"name":"tas-workload-root","namespace":"job-ns"},
    "spec":{"workloadRef":{"workloadName":"multi-level-tas-workload","templateName":"root"},
      "schedulingPolicy":{"gang":{"minGroupCount":2}},
      "schedulingConstraints":{"topology":[{"key":"topology.kubernetes.io/zone"}]},
      "disruptionMode":{"all":{}},"priorityClassName":"high","priority":7},
    "status":{"conditions":[{"type":"CompositePodGroupInitiallyScheduled","status":"True","reason":"Scheduled"}]}})"));
  ASSERT_TRUE(cpg.ok()) << cpg.status();
  EXPECT_TRUE(cpg->spec.scheduling_policy.IsGang());
  EXPECT_EQ(cpg->spec.scheduling_policy.min_group_count, 2);
  EXPECT_EQ(cpg->spec.workload_ref.template_name.view(), "root");
  EXPECT_EQ(cpg->spec.disruption_mode, DisruptionMode::kAll);
  EXPECT_EQ(cpg->spec.priority, 7);
  EXPECT_TRUE(cpg->spec.parent_composite_pod_group_name.empty());
  EXPECT_EQ(cpg->status.conditions.size(), 1u);
}

TEST(CoschedulingPodGroupTest, DecodesSpecAndStatus) {
  simdjson::dom::parser p;
  auto pg = DecodeCoschedulingPodGroup(Parse(p, R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1",
    "kind":"PodGroup","metadata":{"name":"nginx","namespace":"default"},
    "spec":{"minMember":3,"minResources":{"cpu":"3","memory":"1Gi"},"scheduleTimeoutSeconds":10},
    "status":{"phase":"Scheduling","occupiedBy":"default/rs","running":1,"succeeded":0,"failed":0,
              "scheduleStartTime":"2026-01-01T00:00:00Z"}})"));
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->spec.min_member, 3);
  EXPECT_EQ(pg->spec.min_resources.Get(ResourceNames::Get().cpu), 3000);
  EXPECT_EQ(pg->spec.min_resources.Get(ResourceNames::Get().memory), int64_t{1} << 30);
  EXPECT_EQ(pg->spec.schedule_timeout_seconds, 10);
  EXPECT_EQ(pg->status.phase, CoschedulingPhase::kScheduling);
  EXPECT_EQ(CoschedulingPhaseName(pg->status.phase), "Scheduling");
  EXPECT_EQ(pg->status.running, 1);
  EXPECT_EQ(pg->status.occupied_by, "default/rs");
  EXPECT_GT(pg->status.schedule_start_micros, 0);
}

TEST(CoschedulingPodGroupTest, EveryPhase) {
  for (CoschedulingPhase phase :
       {CoschedulingPhase::kPending, CoschedulingPhase::kRunning, CoschedulingPhase::kScheduling,
        CoschedulingPhase::kUnknown, CoschedulingPhase::kFinished, CoschedulingPhase::kFailed}) {
    simdjson::dom::parser p;
    std::string json = std::string(R"({"metadata":{"name":"a","namespace":"b"},"status":{"phase":")") +
                       std::string(CoschedulingPhaseName(phase)) + "\"}}";
    auto pg = DecodeCoschedulingPodGroup(Parse(p, json));
    ASSERT_TRUE(pg.ok()) << pg.status();
    EXPECT_EQ(pg->status.phase, phase);
  }
}

struct ErrorCase {
  std::string name;
  std::string kind;  // decoder to use
  std::string json;
  std::string want;
};
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class WorkloadErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(WorkloadErrorTest, ReportsKindObjectAndPath) {
  const ErrorCase& c = GetParam();
  simdjson::dom::parser p;
  JsonValue root = Parse(p, c.json);
  absl::Status status;
  if (c.kind == "Workload") {
    status = DecodeWorkload(root).status();
  } else if (c.kind == "PodGroup") {
    status = DecodePodGroup(root).status();
  } else if (c.kind == "CompositePodGroup") {
    status = DecodeCompositePodGroup(root).status();
  } else {
    status = DecodeCoschedulingPodGroup(root).status();
  }
  ASSERT_FALSE(status.ok()) << c.json;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(c.want));
}

#define WL_META R"("metadata":{"name":"w","namespace":"ns"})"

INSTANTIATE_TEST_SUITE_P(
    Errors, WorkloadErrorTest,
    ::testing::Values(
        ErrorCase{"WorkloadNoTemplates", "Workload", "{" WL_META R"(,"spec":{}})",
                  "Workload ns/w: spec: Required value: must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`"},
        ErrorCase{"WorkloadBothTemplateKinds", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}}}],
                    "compositePodGroupTemplates":[{"name":"b","schedulingPolicy":{"basic":{}},"podGroupTemplates":[{"name":"c","schedulingPolicy":{"basic":{}}}]}]}})",
                  "Workload ns/w: spec: Invalid value: must specify exactly one of"},
        ErrorCase{"TemplateMissingPolicy", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a"}]}})",
                  "Workload ns/w: spec.podGroupTemplates[0].schedulingPolicy: Required value"},
        ErrorCase{"TemplateBadName", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"Bad_Name","schedulingPolicy":{"basic":{}}}]}})",
                  "spec.podGroupTemplates[0].name: Invalid value: \"Bad_Name\": must be a valid DNS label"},
        ErrorCase{"TemplateDuplicateName", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}}},{"name":"a","schedulingPolicy":{"basic":{}}}]}})",
                  "spec.podGroupTemplates[1].name: Duplicate value: \"a\""},
        ErrorCase{"TooManyTemplates", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a1","schedulingPolicy":{"basic":{}}},{"name":"a2","schedulingPolicy":{"basic":{}}},{"name":"a3","schedulingPolicy":{"basic":{}}},{"name":"a4","schedulingPolicy":{"basic":{}}},{"name":"a5","schedulingPolicy":{"basic":{}}},{"name":"a6","schedulingPolicy":{"basic":{}}},{"name":"a7","schedulingPolicy":{"basic":{}}},{"name":"a8","schedulingPolicy":{"basic":{}}},{"name":"a9","schedulingPolicy":{"basic":{}}}]}})",
                  "Workload ns/w: spec.podGroupTemplates: Too many: 9: must have at most 8 items"},
        ErrorCase{"PolicyBoth", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{},"gang":{"minCount":2}}}]}})",
                  "spec.podGroupTemplates[0].schedulingPolicy: Invalid value: must specify exactly one of: `basic`, `gang`"},
        ErrorCase{"PolicyNeither", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{}}]}})",
                  "spec.podGroupTemplates[0].schedulingPolicy: Required value: must specify one of: `basic`, `gang`"},
        ErrorCase{"GangMinCountZero", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"gang":{"minCount":0}}}]}})",
                  "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid value: 0: must be between 1 and 2147483647"},
        ErrorCase{"GangMinCountMissing", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"gang":{}}}]}})",
                  "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value"},
        ErrorCase{"GangMinCountType", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"gang":{"minCount":"4"}}}]}})",
                  "schedulingPolicy.gang.minCount: expected an integer, got string"},
        ErrorCase{"TwoTopologyKeys", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}},"schedulingConstraints":{"topology":[{"key":"a"},{"key":"b"}]}}]}})",
                  "spec.podGroupTemplates[0].schedulingConstraints.topology: Too many: 2: must have at most 1 items"},
        ErrorCase{"TopologyNoKey", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}},"schedulingConstraints":{"topology":[{}]}}]}})",
                  "schedulingConstraints.topology[0].key: Required value"},
        ErrorCase{"DisruptionBoth", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}},"disruptionMode":{"single":{},"all":{}}}]}})",
                  "spec.podGroupTemplates[0].disruptionMode: Invalid value: must specify exactly one of: `single`, `all`"},
        ErrorCase{"PriorityTooHigh", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}},"priority":2000000000}]}})",
                  "spec.podGroupTemplates[0].priority: Invalid value: 2000000000: must be between -2147483648 and 1000000000"},
        ErrorCase{"BadPreemptionPolicy", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}},"preemptionPolicy":"Always"}]}})",
                  "spec.podGroupTemplates[0].preemptionPolicy: Unsupported value: \"Always\""},
        ErrorCase{"ClaimBothNames", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}},"resourceClaims":[{"name":"c","resourceClaimName":"x","resourceClaimTemplateName":"y"}]}]}})",
                  "spec.podGroupTemplates[0].resourceClaims[0]: Invalid value: must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`"},
        ErrorCase{"TooManyClaims", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}},"resourceClaims":[{"name":"c1","resourceClaimName":"x"},{"name":"c2","resourceClaimName":"x"},{"name":"c3","resourceClaimName":"x"},{"name":"c4","resourceClaimName":"x"},{"name":"c5","resourceClaimName":"x"}]}]}})",
                  "spec.podGroupTemplates[0].resourceClaims: Too many: 5: must have at most 4 items"},
        ErrorCase{"ClaimDuplicateName", "Workload",
                  "{" WL_META R"(,"spec":{"podGroupTemplates":[{"name":"a","schedulingPolicy":{"basic":{}},"resourceClaims":[{"name":"c","resourceClaimName":"x"},{"name":"c","resourceClaimName":"y"}]}]}})",
                  "spec.podGroupTemplates[0].resourceClaims[1].name: Duplicate value: \"c\""},
        ErrorCase{"CompositeTooDeep", "Workload",
                  "{" WL_META R"(,"spec":{"compositePodGroupTemplates":[{"name":"l1","schedulingPolicy":{"basic":{}},"compositePodGroupTemplates":[{"name":"l2","schedulingPolicy":{"basic":{}},"compositePodGroupTemplates":[{"name":"l3","schedulingPolicy":{"basic":{}},"compositePodGroupTemplates":[{"name":"l4","schedulingPolicy":{"basic":{}},"podGroupTemplates":[{"name":"leaf","schedulingPolicy":{"basic":{}}}]}]}]}]}]}})",
                  "compositePodGroupTemplates[0].compositePodGroupTemplates[0].compositePodGroupTemplates[0].compositePodGroupTemplates[0].podGroupTemplates: Invalid value: the pod group tree must be at most 4 levels deep"},
        ErrorCase{"CompositeNoChildren", "Workload",
                  "{" WL_META R"(,"spec":{"compositePodGroupTemplates":[{"name":"r","schedulingPolicy":{"gang":{"minGroupCount":1}}}]}})",
                  "spec.compositePodGroupTemplates[0]: Invalid value: must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`"},
        ErrorCase{"PodGroupNoSpec", "PodGroup", "{" WL_META "}", "PodGroup ns/w: spec: Required value"},
        ErrorCase{"PodGroupNoPolicy", "PodGroup", "{" WL_META R"(,"spec":{"priorityClassName":"x"}})",
                  "PodGroup ns/w: spec.schedulingPolicy: Required value"},
        ErrorCase{"PodGroupParentWithoutRef", "PodGroup",
                  "{" WL_META R"(,"spec":{"parentCompositePodGroupName":"root","schedulingPolicy":{"basic":{}}}})",
                  "PodGroup ns/w: spec.workloadRef: Required value: must be set when `parentCompositePodGroupName` is set"},
        ErrorCase{"PodGroupRefMissingTemplate", "PodGroup",
                  "{" WL_META R"(,"spec":{"workloadRef":{"workloadName":"x"},"schedulingPolicy":{"basic":{}}}})",
                  "PodGroup ns/w: spec.workloadRef.templateName: Required value"},
        ErrorCase{"PodGroupAlpha2RefMissing", "PodGroup",
                  "{" WL_META R"(,"spec":{"podGroupTemplateRef":{"workload":{"workloadName":"x"}},"schedulingPolicy":{"basic":{}}}})",
                  "PodGroup ns/w: spec.podGroupTemplateRef.workload.podGroupTemplateName: Required value"},
        ErrorCase{"PodGroupBadParent", "PodGroup",
                  "{" WL_META R"(,"spec":{"parentCompositePodGroupName":"Root!","schedulingPolicy":{"basic":{}}}})",
                  "PodGroup ns/w: spec.parentCompositePodGroupName: Invalid value: \"Root!\": must be a valid DNS subdomain"},
        ErrorCase{"PodGroupSpecWrongType", "PodGroup", "{" WL_META R"(,"spec":[]})",
                  "PodGroup ns/w: spec: expected an object, got array"},
        ErrorCase{"PodGroupConditionStatus", "PodGroup",
                  "{" WL_META R"(,"spec":{"schedulingPolicy":{"basic":{}}},"status":{"conditions":[{"type":"X","status":"maybe"}]}})",
                  "PodGroup ns/w: status.conditions[0].status: Unsupported value: \"maybe\""},
        ErrorCase{"CompositeNoRef", "CompositePodGroup",
                  "{" WL_META R"(,"spec":{"schedulingPolicy":{"basic":{}}}})",
                  "CompositePodGroup ns/w: spec.workloadRef: Required value"},
        ErrorCase{"CompositeMinGroupCount", "CompositePodGroup",
                  "{" WL_META R"(,"spec":{"workloadRef":{"workloadName":"w","templateName":"t"},"schedulingPolicy":{"gang":{"minGroupCount":0}}}})",
                  "CompositePodGroup ns/w: spec.schedulingPolicy.gang.minGroupCount: Invalid value: 0"},
        ErrorCase{"CompositeNoPolicy", "CompositePodGroup",
                  "{" WL_META R"(,"spec":{"workloadRef":{"workloadName":"w","templateName":"t"}}})",
                  "CompositePodGroup ns/w: spec.schedulingPolicy: Required value"},
        ErrorCase{"CoschedMinMemberType", "Cosched", "{" WL_META R"(,"spec":{"minMember":"3"}})",
                  "PodGroup.scheduling.x-k8s.io ns/w: spec.minMember: expected an integer, got string"},
        ErrorCase{"CoschedMinMemberNegative", "Cosched", "{" WL_META R"(,"spec":{"minMember":-1}})",
                  "PodGroup.scheduling.x-k8s.io ns/w: spec.minMember: Invalid value: -1"},
        ErrorCase{"CoschedBadQuantity", "Cosched", "{" WL_META R"(,"spec":{"minResources":{"cpu":"lots"}}})",
                  "PodGroup.scheduling.x-k8s.io ns/w: spec.minResources.cpu: Invalid value: \"lots\""},
        ErrorCase{"CoschedBadPhase", "Cosched", "{" WL_META R"(,"status":{"phase":"Done"}})",
                  "PodGroup.scheduling.x-k8s.io ns/w: status.phase: Unsupported value: \"Done\""}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

}  // namespace
}  // namespace gantry::api
