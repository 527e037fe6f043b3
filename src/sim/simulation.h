// Offline scheduling: the real Scheduler driven by a snapshot instead of
// reflectors, an in-memory cluster writer instead of the API server, and a
// virtual clock (design §1: one engine, different I/O).
#ifndef GANTRY_SRC_SIM_SIMULATION_H_
#define GANTRY_SRC_SIM_SIMULATION_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gantry/clock.h"
#include "gantry/cluster_writer.h"
#include "nlohmann/json.hpp"
#include "src/api/objects.h"
#include "src/scheduler/scheduler.h"

namespace gantry::sim {

// Records what the scheduler writes; bindings become pod updates that the
// driver feeds back, as the API server's watch would.
class InMemoryWriter final : public framework::ClusterWriter {
 public:
  absl::Status BindPod(const api::Pod& pod, std::string_view node) override;
  absl::Status UpdatePodScheduledCondition(const api::Pod& pod,
                                           const framework::PodScheduledCondition& condition,
                                           const std::string* nominated_node) override;
  absl::Status DeletePodForPreemption(const api::Pod& victim, const api::Pod& preemptor,
                                      std::string_view node) override;
  void RecordEvent(const framework::EventRecord& event) override;
  // DRA: claim writes become claim updates the driver feeds back.
  absl::StatusOr<std::string> AddResourceClaimFinalizer(const api::ResourceClaim& claim,
                                                        std::string_view finalizer) override;
  absl::StatusOr<std::string> UpdateResourceClaimStatus(
      const api::ResourceClaim& claim, const api::AllocationResult& allocation,
      const std::vector<api::ResourceClaimConsumerReference>& reserved_for) override;
  absl::StatusOr<std::string> DeallocateResourceClaim(const api::ResourceClaim& claim) override;
  // Extended resources backed by DRA: a created claim gets the API server's
  // name form (`generate_name`, cut to 58 characters, plus 5 characters that
  // spell a counter, so names are unique and runs deterministic) and UID
  // "sim-claim-<ns>/<name>";
  // creations and deletions are fed back as claim events, and the pod status
  // is kept per pod UID until the pod's binding is fed back.
  absl::StatusOr<api::ResourceClaim> CreateResourceClaim(const api::ResourceClaim& claim,
                                                         std::string_view generate_name) override;
  absl::Status DeleteResourceClaim(const api::ResourceClaim& claim) override;
  absl::Status UpdatePodExtendedResourceClaimStatus(
      const api::Pod& pod, const framework::ExtendedResourceClaimStatus& status) override;
  std::vector<std::shared_ptr<const api::ResourceClaim>> TakeClaimDeletions();
  // The status written for the pod with `uid`, nullopt when none.
  std::optional<framework::ExtendedResourceClaimStatus> ExtendedResourceClaimStatusOf(
      const std::string& uid) const;
  // PodGroup conditions: per "Kind ns/name", the latest scheduling condition
  // plus a count of its writes, and DisruptionTarget once preempted.
  absl::Status UpdatePodGroupCondition(const framework::PodGroupRef& group,
                                       const framework::PodGroupCondition& condition) override;
  struct GroupCondition {
    framework::PodGroupRef group;
    framework::PodGroupCondition condition;  // *InitiallyScheduled; type "" when never written
    int64_t writes = 0;  // how many times the scheduling condition was written
    std::optional<framework::PodGroupCondition> disruption_target;
    int64_t disruption_writes = 0;
    std::optional<framework::PodGroupCondition> below_quorum;  // gantry.dev/BoundBelowQuorum
  };
  // "Kind ns/name" (Kind is "PodGroup", "CompositePodGroup" or
  // "PodGroup.scheduling.x-k8s.io") -> latest condition.
  std::map<std::string, GroupCondition> GroupConditions() const;
  struct ClaimUpdate {
    std::shared_ptr<const api::ResourceClaim> old_claim;
    std::shared_ptr<const api::ResourceClaim> claim;
  };
  std::vector<ClaimUpdate> TakeClaimUpdates();

  // Preemption: victims deleted by the scheduler; the driver marks them
  // terminating and deletes them after their grace period in virtual time.
  struct Eviction {
    std::shared_ptr<const api::Pod> victim;  // as the scheduler saw it (bound)
    std::string node;
    std::string preemptor;  // "ns/name"
  };
  std::vector<Eviction> TakeEvictions();

  struct Binding {
    std::shared_ptr<const api::Pod> pod;  // the pod as it was (unbound)
    std::string node;
  };
  // Bindings since the last call, in order.
  std::vector<Binding> TakeBindings();
  int64_t events_recorded() const;
  // Events regarding objects other than pods (PodGroups), in order.
  std::vector<framework::EventRecord> GroupEvents() const;

  // Fault injection (tests; what-if of API failures): called before every
  // binding with ("bind", "ns/pod") and every claim status write with
  // ("claim-status", "ns/claim"); a non-OK answer fails that write.
  using FaultHook = std::function<absl::Status(std::string_view op, const std::string& key)>;
  void SetFaultHook(FaultHook hook);

 private:
  mutable std::mutex mu_;
  std::vector<Binding> pending_;
  std::vector<ClaimUpdate> claim_updates_;
  std::vector<std::shared_ptr<const api::ResourceClaim>> claim_deletions_;
  absl::flat_hash_map<std::string, framework::ExtendedResourceClaimStatus>
      extended_statuses_;  // pod uid
  uint64_t created_claims_ = 0;
  std::vector<Eviction> evictions_;
  absl::flat_hash_map<std::string, std::vector<std::string>> claim_finalizers_;  // claim uid
  absl::flat_hash_map<std::string, std::string> bound_;  // uid -> node
  std::map<std::string, GroupCondition> group_conditions_;
  int64_t events_ = 0;
  std::vector<framework::EventRecord> group_events_;
  FaultHook fault_hook_;
};

struct SimulationResult {
  int64_t attempts = 0;
  int64_t scheduled = 0;
  int64_t unschedulable = 0;  // pods still pending at the end
  double loop_seconds = 0;    // wall time of the scheduling loop only
  double virtual_seconds = 0;
  std::map<std::string, std::string> placements;  // "ns/name" -> node
  std::map<std::string, std::string> failures;    // "ns/name" -> last message
  std::vector<int64_t> attempt_micros;            // per attempt, for percentiles
  // DRA: "ns/claim" -> allocated devices at the end of the run.
  struct AllocatedDevice {
    std::string request, driver, pool, device;
  };
  std::map<std::string, std::vector<AllocatedDevice>> allocations;
  // Extended resources backed by DRA: "ns/pod" -> the pod's
  // status.extendedResourceClaimStatus as the scheduler wrote it (bound pods).
  std::map<std::string, framework::ExtendedResourceClaimStatus> extended_resource_claims;
  // PodGroups: "ns/name" -> outcome of the last group cycle.
  struct GroupResult {
    bool scheduled = false;
    int32_t placed = 0;
    std::string domain;
    std::string message;
  };
  std::map<std::string, GroupResult> podgroups;
  // PodGroup status written by the scheduler: "Kind ns/name" -> condition.
  std::map<std::string, InMemoryWriter::GroupCondition> group_conditions;
  int64_t completed = 0;     // pods that finished (run-duration annotation)
  // Preemption victims, in eviction order ("ns/name" of victim and preemptor).
  struct EvictionRecord {
    std::string pod, node, preemptor;
  };
  std::vector<EvictionRecord> evictions;
  double cpu_seconds = 0;    // process CPU time during the loop
  // Wall time (microseconds since the loop started) of every successful
  // scheduling attempt, in order: the basis of per-second throughput samples.
  std::vector<int64_t> scheduled_wall_micros;
  // "ns/name" of the pod of each entry of scheduled_wall_micros (same order),
  // so that a benchmark can count only the pods it measures.
  std::vector<std::string> scheduled_keys;
};

// A snapshot of a running simulation, for progress displays.
struct SimulationProgress {
  int64_t pending_total = 0;  // pending pods fed at the start
  int64_t scheduled = 0;      // successful attempts so far
  int64_t attempts = 0;
  double loop_seconds = 0;    // wall time since the loop started
  bool done = false;          // last call, after the loop
};
// Called from the scheduling loop about every `kProgressIntervalMillis` of
// wall time and once at the end (done = true). Must be cheap.
using ProgressFn = std::function<void(const SimulationProgress&)>;
inline constexpr int64_t kProgressIntervalMillis = 100;

// Pods carrying this annotation (seconds, decimal) finish that long after
// they are bound, in virtual time, and free their resources.
inline constexpr std::string_view kRunDurationAnnotation = "gantry.dev/run-duration-seconds";

// Simulated DRA drivers for binding conditions: PreBind waits in virtual
// time, and a device whose result carries bindingConditions gets them set
// True in claim.status.devices `delay` after the allocation (default 0),
// where the delay comes from the annotation below on the device's
// ResourceSlice (seconds, decimal). With the outcome annotation "failure" the
// first binding of each of the slice's devices fails instead (the first
// bindingFailureCondition is set True) and later bindings succeed, as a flaky
// attach would.
inline constexpr std::string_view kBindingDelayAnnotation = "gantry.dev/binding-delay-seconds";
inline constexpr std::string_view kBindingOutcomeAnnotation = "gantry.dev/binding-outcome";

class AttemptRecorder;

// Feeds `objects` into `scheduler` (namespaces, priority classes, nodes,
// bound pods, then pending pods) and schedules until the queue is empty or
// nothing can change any more. Pods without a UID get "sim-<ns>/<name>".
// DRA objects are fed too, and the simulator acts as the ResourceClaim
// controller: a pod claim from a ResourceClaimTemplate becomes a claim
// "<pod>-<claim>-<5 chars>" (suffix derived from `seed` and the pod) owned
// by the pod, recorded in pod.status.resourceClaimStatuses. A pod claim that
// matches one of its PodGroup's spec.resourceClaims exactly gets the group's
// claim instead, created once per PodGroup ("<group>-<claim>-<5 chars>",
// owned by the PodGroup, annotated resource.kubernetes.io/podgroup-claim-name)
// and recorded in every member's status. PodGroups without a UID get
// "sim-podgroup-<ns>/<name>".
// `progress` (optional) is called as described at ProgressFn.
SimulationResult RunSimulation(const api::ObjectSet& objects, scheduler::Scheduler& scheduler,
                               InMemoryWriter& writer, FakeClock& clock, uint64_t seed = 1,
                               const ProgressFn& progress = nullptr);
// The same, but moves the pods out of `objects` into the scheduler (leaving
// objects.pods empty) instead of copying them, so that a snapshot's pods are
// held once: for snapshots that are mostly pods this halves the peak memory.
SimulationResult RunSimulation(api::ObjectSet&& objects, scheduler::Scheduler& scheduler,
                               InMemoryWriter& writer, FakeClock& clock, uint64_t seed = 1,
                               const ProgressFn& progress = nullptr);

// The claim the ResourceClaim controller would create for `pod`'s claim
// `claim_name` from `tmpl` (name suffix derived from `seed`).
api::ResourceClaim InstantiateClaim(const api::Pod& pod, api::Symbol claim_name,
                                    const api::ResourceClaimTemplate& tmpl, uint64_t seed);

// On a claim the ResourceClaim controller made from a PodGroup's template:
// the PodGroup's spec.resourceClaims[].name (KEP-5729).
inline constexpr std::string_view kPodGroupClaimNameAnnotation =
    "resource.kubernetes.io/podgroup-claim-name";

// The claim the ResourceClaim controller would create once for `group`'s
// claim `claim_name` from `tmpl`, shared by the group's members.
api::ResourceClaim InstantiateGroupClaim(const api::PodGroup& group, api::Symbol claim_name,
                                         const api::ResourceClaimTemplate& tmpl, uint64_t seed);

// What the utilisation report needs from a snapshot, taken before the run
// (which may consume the pods): per resource the requests of the bound pods
// and the nodes' allocatable, and the requests of each pending pod by key.
struct UtilisationBase {
  std::map<std::string, std::pair<int64_t, int64_t>> totals;  // name -> (requested, allocatable)
  absl::flat_hash_map<std::string, api::ResourceList> pending;
};
UtilisationBase TakeUtilisationBase(const api::ObjectSet& objects);

// Utilisation of the cluster after the run: resource -> {requested, allocatable}.
nlohmann::json UtilisationJson(const UtilisationBase& base, const SimulationResult& result);
nlohmann::json UtilisationJson(const api::ObjectSet& objects, const SimulationResult& result);
nlohmann::json ResultJson(const SimulationResult& result);

}  // namespace gantry::sim

#endif  // GANTRY_SRC_SIM_SIMULATION_H_
