// The Pod as the scheduler sees it: identity, placement constraints and the
// effective resource requests, decoded once from the API object and then
// immutable. Containers are not kept; their requests are folded into
// `requests` by upstream's formula (see ComputeEffectiveRequests). Only the
// per-container requests that extended resources backed by DRA need are kept
// (`extended_requests`).
#ifndef GANTRY_SRC_API_POD_H_
#define GANTRY_SRC_API_POD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "src/api/decode.h"
#include "src/api/meta.h"
#include "src/api/resources.h"
#include "src/api/selectors.h"

namespace gantry::api {

// Containers (and, separately, init containers) read from one pod.
inline constexpr size_t kMaxContainers = 1024;

enum class PreemptionPolicy : uint8_t { kPreemptLowerPriority, kNever };
enum class PodPhase : uint8_t { kPending, kRunning, kSucceeded, kFailed, kUnknown };
std::string_view PodPhaseName(PodPhase p);

struct HostPort {
  Symbol host_ip;   // empty means 0.0.0.0
  Symbol protocol;  // TCP (default), UDP or SCTP
  int32_t port = 0;
  bool operator==(const HostPort&) const = default;
};

struct PodAffinityTerm {
  // Absent selector matches no pods (upstream semantics).
  std::optional<LabelSelector> label_selector;
  std::vector<Symbol> namespaces;
  std::optional<LabelSelector> namespace_selector;
  Symbol topology_key;
  std::vector<Symbol> match_label_keys;
  std::vector<Symbol> mismatch_label_keys;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
};

struct Affinity {
  std::optional<NodeSelector> node_required;
  std::vector<PreferredSchedulingTerm> node_preferred;
  std::vector<PodAffinityTerm> pod_affinity_required;
  std::vector<WeightedPodAffinityTerm> pod_affinity_preferred;
  std::vector<PodAffinityTerm> pod_anti_affinity_required;
  std::vector<WeightedPodAffinityTerm> pod_anti_affinity_preferred;

  bool HasPodAffinity() const {
    return !pod_affinity_required.empty() || !pod_affinity_preferred.empty() ||
           !pod_anti_affinity_required.empty() || !pod_anti_affinity_preferred.empty();
  }
};

enum class UnsatisfiableAction : uint8_t { kDoNotSchedule, kScheduleAnyway };
enum class InclusionPolicy : uint8_t { kHonor, kIgnore };

struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  Symbol topology_key;
  UnsatisfiableAction when_unsatisfiable = UnsatisfiableAction::kDoNotSchedule;
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  InclusionPolicy node_affinity_policy = InclusionPolicy::kHonor;
  InclusionPolicy node_taints_policy = InclusionPolicy::kIgnore;
  std::vector<Symbol> match_label_keys;
};

struct PodResourceClaim {
  Symbol name;
  std::string resource_claim_name;  // exactly one of these two is set
  std::string resource_claim_template_name;
};

struct PodResourceClaimStatus {
  Symbol name;
  std::string resource_claim_name;  // empty: no claim needed
};

// One container's non-zero request for a resource that DRA may serve: a
// domain-qualified extended resource (example.com/gpu) or a DeviceClass's
// implicit name (deviceclass.resource.kubernetes.io/<class>). The scheduler's
// claim for such resources names its requests after these
// ("container-<container_index>-request-<request_index>").
struct ContainerExtendedRequest {
  int32_t container_index = 0;  // in initContainers followed by containers
  int32_t request_index = 0;    // position among all the container's request names, sorted
  // A non-sidecar init container: it runs before the long-lived containers
  // and may reuse the devices requested for them.
  bool init_only = false;
  std::string container_name;
  Symbol resource;
  int64_t value = 0;
};

struct PodCondition {
  Symbol type;
  Symbol status;
  Symbol reason;
};

struct Pod {
  ObjectMeta meta;

  // spec
  Symbol scheduler_name;  // defaulted to "default-scheduler" when absent
  Symbol node_name;
  std::optional<int32_t> priority;
  Symbol priority_class_name;
  std::optional<PreemptionPolicy> preemption_policy;
  ResourceList requests;  // effective pod requests incl. overhead
  bool has_pod_level_resources = false;
  std::vector<HostPort> host_ports;
  std::vector<Symbol> images;
  Labels node_selector;
  std::shared_ptr<const Affinity> affinity;  // null when the pod has none
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::vector<Symbol> scheduling_gates;
  std::vector<PodResourceClaim> resource_claims;
  // Requests that DRA may serve, in container order (initContainers first)
  // and by resource name within a container; empty for most pods.
  std::vector<ContainerExtendedRequest> extended_requests;
  Symbol pod_group_name;               // spec.schedulingGroup.podGroupName
  std::vector<std::string> pvc_names;  // persistentVolumeClaim volumes
  // Generic ephemeral volumes (volumes[].ephemeral) by volume name; the
  // PersistentVolumeClaim of each is EphemeralClaimName(volume).
  std::vector<std::string> ephemeral_volume_names;
  int64_t termination_grace_period_seconds = 30;

  // status
  PodPhase phase = PodPhase::kPending;
  Symbol nominated_node_name;
  std::vector<PodCondition> conditions;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;
  // status.extendedResourceClaimStatus.resourceClaimName: the claim the
  // scheduler created for the pod's extended resources backed by DRA.
  std::string extended_resource_claim_name;
  int64_t start_micros = 0;

  // Set when a bound pod (spec.nodeName set) could not be decoded whole: the
  // first decode error, naming the pod and the field. Such a pod still
  // counts on its node: it carries its identity, node, scheduler name,
  // priority, phase, host ports and the container requests that could be
  // read (a request whose value cannot be read is left out); the rest of the
  // spec is empty. Pending pods that fail to decode are errors instead.
  std::string decode_error;

  bool Undecodable() const { return !decode_error.empty(); }
  bool IsTerminal() const { return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed; }
  bool IsBound() const { return !node_name.empty(); }
  bool IsGated() const { return !scheduling_gates.empty(); }
  // Whether the pod uses ResourceClaims: its own (spec.resourceClaims) or the
  // claim for its extended resources backed by DRA.
  bool UsesClaims() const {
    return !resource_claims.empty() || !extended_resource_claim_name.empty();
  }
  // The PersistentVolumeClaims the pod's volumes name: persistentVolumeClaim
  // volumes, then the claim "<pod>-<volume>" of each generic ephemeral volume.
  std::vector<std::string> VolumeClaimNames() const {
    std::vector<std::string> out = pvc_names;
    for (const std::string& v : ephemeral_volume_names) out.push_back(meta.name + "-" + v);
    return out;
  }
};

// Container requests as read from the spec (before folding), exposed for tests.
struct ContainerResources {
  ResourceList requests;
  bool restartable_sidecar = false;  // init container with restartPolicy: Always
  std::string name;
};

// Upstream's PodRequests: max(sum(containers) + sum(sidecars), max over init
// containers of (request + sidecars started before it)) + overhead.
ResourceList ComputeEffectiveRequests(const std::vector<ContainerResources>& containers,
                                      const std::vector<ContainerResources>& init_containers,
                                      const ResourceList& overhead);

// Decodes a v1 Pod. Errors name the pod and the field path.
//
// Decoding is tolerant where scheduling does not look: unknown fields are
// ignored, and so are values of fields it does not interpret (a regular
// container's restartPolicy; an init container's restartPolicy other than
// Always, which makes it a sidecar; an unknown status.phase reads as
// Unknown). A bound pod with a field that cannot be decoded is returned as
// an undecodable pod (see Pod::decode_error) instead of an error, so that
// it keeps counting on its node.
absl::StatusOr<Pod> DecodePod(JsonValue root);
// Same, reusing the caller's decoder (keeps the structured error).
Pod DecodePod(Decoder& d, JsonValue root);
// Decodes a PodTemplateSpec ({metadata, spec}) of a workload controller:
// the pod has no name or namespace yet (the controller gives them).
Pod DecodePodTemplate(Decoder& d, JsonValue root);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_POD_H_
