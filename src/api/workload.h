// Gang-scheduling objects: scheduling.k8s.io/v1beta1 Workload and PodGroup,
// v1alpha3 CompositePodGroup (multi-level gangs), and the scheduler-plugins
// Coscheduling PodGroup (scheduling.x-k8s.io/v1alpha1).
//
// The PodGroup decoder also accepts the 1.36 (v1alpha2) back-reference
// `spec.podGroupTemplateRef.workload{workloadName, podGroupTemplateName}`,
// mapped onto `workload_ref`. All structs are immutable after decoding.
#ifndef GANTRY_SRC_API_WORKLOAD_H_
#define GANTRY_SRC_API_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "src/api/decode.h"
#include "src/api/meta.h"
#include "src/api/policy.h"
#include "src/api/pod.h"
#include "src/api/resources.h"

namespace gantry::api {

// Limits from scheduling/v1beta1 validation.
inline constexpr size_t kWorkloadMaxPodGroupTemplates = 8;
inline constexpr size_t kWorkloadMaxTreeDepth = 4;
inline constexpr size_t kMaxPodGroupResourceClaims = 4;
inline constexpr size_t kMaxTopologyConstraints = 1;
inline constexpr int64_t kMaxUserPriority = 1000000000;

// schedulingPolicy: exactly one of `basic: {}` or `gang: {...}`.
enum class GroupPolicyKind : uint8_t { kBasic, kGang };

// PodGroup(Template).schedulingPolicy. `min_count` is 1 for basic groups
// (the gang plugin treats them as minCount 1), >= 1 for gangs.
struct PodGroupSchedulingPolicy {
  GroupPolicyKind kind = GroupPolicyKind::kBasic;
  int32_t min_count = 1;
  bool IsGang() const { return kind == GroupPolicyKind::kGang; }
};

// CompositePodGroup(Template).schedulingPolicy: gang counts ready children.
struct CompositeSchedulingPolicy {
  GroupPolicyKind kind = GroupPolicyKind::kBasic;
  int32_t min_group_count = 1;
  bool IsGang() const { return kind == GroupPolicyKind::kGang; }
};

// schedulingConstraints.topology[]: at most one entry; `key` is a node label key.
struct TopologyConstraint {
  Symbol key;
};
struct SchedulingConstraints {
  std::vector<TopologyConstraint> topology;
  bool empty() const { return topology.empty(); }
};

// disruptionMode: `single: {}` (default) or `all: {}`.
enum class DisruptionMode : uint8_t { kSingle, kAll };
std::string_view DisruptionModeName(DisruptionMode m);

// PodGroup(Template).resourceClaims[]: exactly one of the two names is set.
struct PodGroupResourceClaim {
  Symbol name;
  std::string resource_claim_name;
  std::string resource_claim_template_name;
};

// Fields PodGroupTemplate and PodGroupSpec share.
struct PodGroupPolicyFields {
  PodGroupSchedulingPolicy scheduling_policy;
  SchedulingConstraints scheduling_constraints;
  std::vector<PodGroupResourceClaim> resource_claims;
  DisruptionMode disruption_mode = DisruptionMode::kSingle;
  Symbol priority_class_name;
  std::optional<int32_t> priority;
  std::optional<PreemptionPolicy> preemption_policy;
};

struct PodGroupTemplate : PodGroupPolicyFields {
  Symbol name;
};

struct CompositePodGroupTemplate {
  Symbol name;
  CompositeSchedulingPolicy scheduling_policy;
  SchedulingConstraints scheduling_constraints;
  DisruptionMode disruption_mode = DisruptionMode::kSingle;
  Symbol priority_class_name;
  std::optional<int32_t> priority;
  std::optional<PreemptionPolicy> preemption_policy;
  std::vector<PodGroupTemplate> pod_group_templates;
  std::vector<CompositePodGroupTemplate> composite_pod_group_templates;
};

struct TypedLocalObjectReference {
  Symbol api_group;
  Symbol kind;
  std::string name;
};

// scheduling.k8s.io/v1beta1 Workload (namespaced, spec only).
struct Workload {
  ObjectMeta meta;
  struct Spec {
    std::optional<TypedLocalObjectReference> controller_ref;
    // Exactly one of the two lists is non-empty.
    std::vector<PodGroupTemplate> pod_group_templates;
    std::vector<CompositePodGroupTemplate> composite_pod_group_templates;
  } spec;

  // The template named `name` among the top-level pod group templates, or null.
  const PodGroupTemplate* FindPodGroupTemplate(std::string_view name) const;
};
Workload DecodeWorkload(Decoder& d, JsonValue root);
absl::StatusOr<Workload> DecodeWorkload(JsonValue root);

// spec.workloadRef (v1beta1) or spec.podGroupTemplateRef.workload (v1alpha2).
struct WorkloadReference {
  Symbol workload_name;
  Symbol template_name;
};

// podgroup.status.resourceClaimStatuses[].
struct PodGroupResourceClaimStatus {
  Symbol name;
  std::string resource_claim_name;
};

// scheduling.k8s.io/v1beta1 PodGroup (namespaced).
struct PodGroup {
  ObjectMeta meta;
  struct Spec : PodGroupPolicyFields {
    // Name of the parent CompositePodGroup; empty at a root.
    std::string parent_composite_pod_group_name;
    std::optional<WorkloadReference> workload_ref;
  } spec;
  struct Status {
    std::vector<Condition> conditions;
    std::vector<PodGroupResourceClaimStatus> resource_claim_statuses;
  } status;
};
PodGroup DecodePodGroup(Decoder& d, JsonValue root);
absl::StatusOr<PodGroup> DecodePodGroup(JsonValue root);

// scheduling.k8s.io/v1alpha3 CompositePodGroup (namespaced).
struct CompositePodGroup {
  ObjectMeta meta;
  struct Spec {
    std::string parent_composite_pod_group_name;
    WorkloadReference workload_ref;  // required
    CompositeSchedulingPolicy scheduling_policy;
    SchedulingConstraints scheduling_constraints;
    DisruptionMode disruption_mode = DisruptionMode::kSingle;
    Symbol priority_class_name;
    std::optional<int32_t> priority;
    std::optional<PreemptionPolicy> preemption_policy;
  } spec;
  struct Status {
    std::vector<Condition> conditions;
  } status;
};
CompositePodGroup DecodeCompositePodGroup(Decoder& d, JsonValue root);
absl::StatusOr<CompositePodGroup> DecodeCompositePodGroup(JsonValue root);

// Pods join a Coscheduling PodGroup through this label.
inline constexpr std::string_view kCoschedulingPodGroupLabel = "scheduling.x-k8s.io/pod-group";

enum class CoschedulingPhase : uint8_t {
  kNone, kPending, kRunning, kScheduling, kUnknown, kFinished, kFailed
};
std::string_view CoschedulingPhaseName(CoschedulingPhase p);

// scheduler-plugins scheduling.x-k8s.io/v1alpha1 PodGroup.
struct CoschedulingPodGroup {
  ObjectMeta meta;
  struct Spec {
    int32_t min_member = 0;
    ResourceList min_resources;  // scheduler units (millicores, bytes, ...)
    std::optional<int32_t> schedule_timeout_seconds;
  } spec;
  struct Status {
    CoschedulingPhase phase = CoschedulingPhase::kNone;
    std::string occupied_by;
    int32_t running = 0;
    int32_t succeeded = 0;
    int32_t failed = 0;
    int64_t schedule_start_micros = 0;
  } status;
};
CoschedulingPodGroup DecodeCoschedulingPodGroup(Decoder& d, JsonValue root);
absl::StatusOr<CoschedulingPodGroup> DecodeCoschedulingPodGroup(JsonValue root);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_WORKLOAD_H_
