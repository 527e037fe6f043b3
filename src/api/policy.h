// Cluster policy objects the scheduler reads but never writes: Namespace
// (labels, for namespace selectors and DRA admin access), PriorityClass
// (priority resolution and preemption policy) and policy/v1
// PodDisruptionBudget (victim selection during preemption). Also defines
// metav1.Condition, shared by every status that carries conditions.
//
// All structs are immutable after decoding. Decoders ignore unknown fields
// and report the first invalid value as `Kind ns/name: field.path: message`.
#ifndef GANTRY_SRC_API_POLICY_H_
#define GANTRY_SRC_API_POLICY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "src/api/decode.h"
#include "src/api/meta.h"
#include "src/api/pod.h"  // PreemptionPolicy
#include "src/api/selectors.h"

namespace gantry::api {

// metav1.ConditionStatus.
enum class ConditionStatus : uint8_t { kUnknown, kTrue, kFalse };
std::string_view ConditionStatusName(ConditionStatus s);

// metav1.Condition. `type` and `status` are required.
struct Condition {
  Symbol type;
  ConditionStatus status = ConditionStatus::kUnknown;
  Symbol reason;
  std::string message;
  int64_t observed_generation = 0;
  int64_t last_transition_micros = 0;
};
Condition DecodeCondition(Decoder& d, JsonValue v);
// A list of conditions; types must be unique (list-map keyed by type).
std::vector<Condition> DecodeConditions(Decoder& d, JsonValue v);
// The condition of `type`, or null.
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);

// Decodes "PreemptLowerPriority" | "Never"; null or absent is left to the caller.
PreemptionPolicy DecodePreemptionPolicy(Decoder& d, JsonValue v);

// core/v1 Namespace: only identity and labels matter to the scheduler.
struct Namespace {
  ObjectMeta meta;
};
Namespace DecodeNamespace(Decoder& d, JsonValue root);
absl::StatusOr<Namespace> DecodeNamespace(JsonValue root);

// scheduling.k8s.io/v1 PriorityClass (cluster-scoped; fields at top level).
struct PriorityClass {
  ObjectMeta meta;
  int32_t value = 0;
  bool global_default = false;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
};
PriorityClass DecodePriorityClass(Decoder& d, JsonValue root);
absl::StatusOr<PriorityClass> DecodePriorityClass(JsonValue root);

enum class UnhealthyPodEvictionPolicy : uint8_t { kIfHealthyBudget, kAlwaysAllow };

// policy/v1 PodDisruptionBudget.
struct PodDisruptionBudget {
  ObjectMeta meta;
  struct Spec {
    // Null selector (absent) selects no pods; an empty one selects all pods
    // of the namespace (policy/v1 semantics).
    std::optional<LabelSelector> selector;
    // At most one of the two is set. Percentages are kept as strings ("50%").
    std::optional<IntOrString> min_available;
    std::optional<IntOrString> max_unavailable;
    UnhealthyPodEvictionPolicy unhealthy_pod_eviction_policy =
        UnhealthyPodEvictionPolicy::kIfHealthyBudget;
  } spec;
  struct Status {
    int64_t observed_generation = 0;
    // Pod name -> time (micros) the eviction was requested, sorted by name.
    std::vector<std::pair<std::string, int64_t>> disrupted_pods;
    int32_t disruptions_allowed = 0;
    int32_t current_healthy = 0;
    int32_t desired_healthy = 0;
    int32_t expected_pods = 0;
    std::vector<Condition> conditions;
  } status;
};
PodDisruptionBudget DecodePodDisruptionBudget(Decoder& d, JsonValue root);
absl::StatusOr<PodDisruptionBudget> DecodePodDisruptionBudget(JsonValue root);

// ---- Helpers shared by the decoders of policy, dra and workload objects ----

// Runs `decode(d, root)` with a fresh Decoder for `kind` and returns the
// object, or the first error as InvalidArgument naming the object.
template <typename T>
absl::StatusOr<T> DecodeTopLevel(std::string_view kind, JsonValue root,
                                 T (*decode)(Decoder&, JsonValue)) {
  Decoder d(kind);
  T out = decode(d, root);
  if (!d.ok()) return d.Finish(root);
  return out;
}

// RFC 1123 DNS label (<= 63, [a-z0-9-], alphanumeric at both ends).
bool IsDnsLabel(std::string_view s);
// RFC 1123 DNS subdomain (<= 253, dot-separated DNS labels).
bool IsDnsSubdomain(std::string_view s);
// A C identifier: [A-Za-z_][A-Za-z0-9_]*.
bool IsCIdentifier(std::string_view s);

// Fails with upstream's "Too many: N: must have at most M items" when `n > max`.
void CheckMaxItems(Decoder& d, size_t n, size_t max);
// Fails with "Required value" at `field` (relative to the current path;
// dots separate nested keys, e.g. "metadata.name").
void RequireField(Decoder& d, bool present, std::string_view field);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_POLICY_H_
