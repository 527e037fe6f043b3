// Everything the scheduler writes to the world. Live, it is implemented by
// src/client (API server); offline, by src/sim (in-memory). Plugins and the
// scheduler never talk to the API server directly (design §2).
//
// Thread safety: implementations must accept calls from the binding
// pipeline's worker threads concurrently with the scheduling loop.
#ifndef GANTRY_CLUSTER_WRITER_H_
#define GANTRY_CLUSTER_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/api/dra.h"
#include "src/api/pod.h"

namespace gantry::framework {

// One Kubernetes event (events.k8s.io/v1) about an object.
struct EventRecord {
  // "Pod" (v1), "PodGroup" (scheduling.k8s.io/v1beta1), "CompositePodGroup"
  // (scheduling.k8s.io/v1alpha3).
  std::string regarding_kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string type;    // "Normal" | "Warning"
  std::string reason;  // "Scheduled", "FailedScheduling", "Preempted"
  std::string action;  // "Binding", "Scheduling", "Preempting"
  std::string note;
  std::string reporting_controller;  // the profile's schedulerName
};

// The PodScheduled condition written on failure.
struct PodScheduledCondition {
  std::string status;   // "False"
  std::string reason;   // "Unschedulable" | "SchedulerError"
  std::string message;  // full FitError message
};

// The PodGroup a status write is about.
struct PodGroupRef {
  // "scheduling.k8s.io" (native v1beta1 PodGroup, v1alpha3 CompositePodGroup)
  // or "scheduling.x-k8s.io" (scheduler-plugins Coscheduling v1alpha1 PodGroup).
  std::string api_group;
  std::string kind;  // "PodGroup" | "CompositePodGroup"
  std::string namespace_;
  std::string name;
  std::string uid;         // "" when unknown (no UID precondition)
  int64_t generation = 0;  // metadata.generation seen; 0 when unknown
};

// A PodGroup condition: PodGroupInitiallyScheduled (Composite... on a composite;
// True is terminal: never False after True for a group), or DisruptionTarget
// (True, reason PreemptionByScheduler) on a group preemption evicts whole.
// Gantry's own PodGroup condition: True while some members of a gang are
// bound but fewer than minCount (members failed to bind and are retried),
// False (reason QuorumReached) once a later binding completes the gang.
inline constexpr std::string_view kPodGroupBoundBelowQuorum = "gantry.dev/BoundBelowQuorum";

struct PodGroupCondition {
  std::string type;     // "[Composite]PodGroupInitiallyScheduled" | "DisruptionTarget"
  std::string status;   // "True" | "False"
  std::string reason;   // "Scheduled" | "Unschedulable" | "SchedulerError" | PreemptionByScheduler
  std::string message;  // how many members fit where | who preempted the group
};

// pod.status.extendedResourceClaimStatus: the claim the scheduler created
// for the pod's extended resources backed by DRA, and which of its requests
// serves each container's resource.
struct ExtendedResourceClaimStatus {
  struct RequestMapping {
    std::string container_name;
    std::string resource_name;  // e.g. "example.com/gpu"
    std::string request_name;   // "container-<i>-request-<j>"
  };
  std::string resource_claim_name;
  std::vector<RequestMapping> request_mappings;
};

class ClusterWriter {
 public:
  virtual ~ClusterWriter() = default;

  // POST pods/binding. AlreadyExists when the pod is already bound elsewhere
  // (HTTP 409): the caller forgets the pod and does not retry. NotFound when
  // the pod is gone.
  virtual absl::Status BindPod(const api::Pod& pod, std::string_view node) = 0;

  // Patches status.conditions[PodScheduled] and, when `nominated_node` is
  // set, status.nominatedNodeName ("" clears it).
  virtual absl::Status UpdatePodScheduledCondition(const api::Pod& pod,
                                                   const PodScheduledCondition& condition,
                                                   const std::string* nominated_node) = 0;

  // Deletes a preemption victim (UID precondition), after marking it with
  // the DisruptionTarget condition.
  virtual absl::Status DeletePodForPreemption(const api::Pod& victim, const api::Pod& preemptor,
                                              std::string_view node) = 0;

  // Best effort; failures are logged and counted by the implementation.
  virtual void RecordEvent(const EventRecord& event) = 0;

  // ---- PodGroup status (podgroups/status) ----------------------------------
  // Writes one condition. Native groups get status.conditions[type] (with
  // observedGeneration, a transition time; writing one type never removes another);
  // Coscheduling groups have no conditions: the scheduling condition maps
  // onto status.phase ("Scheduling" while False; True and DisruptionTarget write
  // nothing, the scheduler-plugins controller moves it to Running). Best
  // effort like UpdatePodScheduledCondition: implementations may write
  // asynchronously and log their own failures.
  virtual absl::Status UpdatePodGroupCondition(const PodGroupRef& group,
                                               const PodGroupCondition& condition) = 0;
  // The PodGroup or CompositePodGroup "namespace/name" was deleted: drop what
  // the writer remembers of it (condition transition times). A group created
  // again under the name starts afresh. Default: nothing is remembered.
  virtual void ForgetPodGroup(std::string_view key) { (void)key; }

  // ---- Dynamic Resource Allocation (resourceclaims, resourceclaims/status) --
  // A writer without DRA support answers Unimplemented; the DynamicResources
  // plugin turns that into an Error.
  //
  // Each write is conditional on `claim`'s resourceVersion (the version the
  // scheduler saw) and UID. On a Conflict the writer re-reads the claim and
  // re-applies the same change on the newer version (entries other writers
  // added to reservedFor are kept), unless the newer version makes the change
  // invalid (allocated differently, deallocated, or in use): then it fails.
  // On success each returns the claim's resourceVersion after the write, ""
  // when the writer cannot tell (the caller assumes the claim with it).

  // Adds `finalizer` (resource.kubernetes.io/delete-protection) to the claim's
  // metadata if it is missing.
  virtual absl::StatusOr<std::string> AddResourceClaimFinalizer(const api::ResourceClaim& claim,
                                                                std::string_view finalizer) = 0;

  // Writes status.allocation (with allocationTimestamp) and status.reservedFor
  // of `claim` (PreBind, Unreserve). `reserved_for` is the list wanted on top
  // of `claim`'s: the consumers it adds or drops relative to `claim` are what
  // is re-applied after a Conflict.
  virtual absl::StatusOr<std::string> UpdateResourceClaimStatus(
      const api::ResourceClaim& claim, const api::AllocationResult& allocation,
      const std::vector<api::ResourceClaimConsumerReference>& reserved_for) = 0;

  // Clears status.allocation, status.reservedFor and status.devices of
  // `claim` (PostFilter deallocation of a claim that cannot be used). Fails
  // when a newer version is reserved for a consumer `claim` did not have.
  virtual absl::StatusOr<std::string> DeallocateResourceClaim(const api::ResourceClaim& claim) = 0;

  // ---- Extended resources backed by DRA -------------------------------------
  // Creates `claim` (metadata.generateName `generate_name`, name and UID
  // empty; ownerReferences, annotations, finalizers and ExactCount requests
  // are sent) and returns it as created: with the name and UID the server
  // generated.
  virtual absl::StatusOr<api::ResourceClaim> CreateResourceClaim(
      const api::ResourceClaim& claim, std::string_view generate_name) = 0;

  // Deletes a claim the scheduler created: removes the delete-protection
  // finalizer, then deletes it (UID precondition). OK when it is already gone.
  virtual absl::Status DeleteResourceClaim(const api::ResourceClaim& claim) = 0;

  // Writes pod.status.extendedResourceClaimStatus (UID precondition).
  virtual absl::Status UpdatePodExtendedResourceClaimStatus(
      const api::Pod& pod, const ExtendedResourceClaimStatus& status) = 0;
};

}  // namespace gantry::framework

#endif  // GANTRY_CLUSTER_WRITER_H_
