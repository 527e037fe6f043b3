// framework::ClusterWriter over the API server.
//
//  BindPod                      POST pods/binding (sync; 409 -> AlreadyExists)
//  UpdatePodScheduledCondition  PATCH pods/status, strategic merge (async, retried
//                               on 5xx/transport errors)
//  DeletePodForPreemption       PATCH DisruptionTarget condition, DELETE with a
//                               UID precondition, Preempted event (sync)
//  UpdatePodGroupCondition      native PodGroup / CompositePodGroup: server-side
//                               apply of status.conditions[type] on /status
//                               (fieldManager gantry-scheduler, or
//                               gantry-scheduler-preemption for DisruptionTarget;
//                               force; other conditions untouched). Coscheduling PodGroup:
//                               merge patch status.phase=Scheduling while False.
//                               Async, retried like pods/status.
//  RecordEvent                  events.k8s.io/v1 Event; isomorphic repeats are
//                               folded into series.count (async: event_workers
//                               threads, each owning the events of a share of
//                               the objects, in order; one bounded queue of
//                               event_queue_capacity over all of them: events
//                               are dropped, and counted, when it is full)
//
// Status patches have a worker of their own, so a burst of events never
// delays them. The scheduling loop only pays for enqueueing asynchronous
// writes.
#ifndef GANTRY_SRC_CLIENT_API_WRITER_H_
#define GANTRY_SRC_CLIENT_API_WRITER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gantry/cluster_writer.h"
#include "src/api/dra.h"
#include "src/client/http.h"

namespace gantry::client {

struct WriterOptions {
  std::string hostname;  // reportingInstance = reportingController + "-" + hostname
  // Events queued and not yet being written, over all event workers; an event
  // recorded while this many wait is dropped (WriterStats::events_dropped).
  size_t event_queue_capacity = 10'000;
  // Threads writing events, each with a connection of its own at a time. The
  // events of one object (and so every isomorphic series) go to one worker,
  // in the order they were recorded. At least 1.
  int event_workers = 32;
  int64_t series_window_micros = 6 * 60 * 1'000'000LL;  // fold repeats seen within this window
  int status_patch_retries = 5;
  // Pods whose PodScheduled patch waits to be sent; a patch for another pod
  // beyond this many is dropped (WriterStats::status_patches_dropped: the
  // pod's next attempt writes its condition again).
  size_t status_patch_queue_capacity = 20'000;
  // PodGroup conditions whose lastTransitionTime is remembered; beyond this
  // many the ones older than an hour are forgotten (all, if that is not enough).
  size_t group_transition_capacity = 100'000;
  // After an ambiguous binding answer, how often (and how far apart) the pod
  // is read back to learn whether it was bound.
  int bind_readback_attempts = 3;
  int64_t bind_readback_interval_millis = 500;
};

struct WriterStats {
  int64_t bindings = 0;
  int64_t binding_conflicts = 0;
  // Bindings whose answer was lost (transport error, timeout, 5xx, 409) but
  // that the pod read back shows were made, and those the read back could not
  // settle (the binding is reported failed).
  int64_t bindings_confirmed_by_read = 0;
  int64_t bindings_unresolved = 0;
  int64_t status_patches = 0;
  int64_t status_patch_failures = 0;
  int64_t status_patches_superseded = 0;  // skipped: the pod was bound after the patch was queued
  int64_t status_patches_dropped = 0;     // the queue was full (status_patch_queue_capacity)
  int64_t group_transitions_pruned = 0;   // remembered transition times forgotten (capacity)
  int64_t events_created = 0;
  int64_t events_folded = 0;
  int64_t events_dropped = 0;  // the queue was full
  int64_t event_failures = 0;  // the API server refused the event or was unreachable
  int64_t events_queued = 0;   // waiting now (a gauge, not a count)
  int64_t status_patches_queued = 0;  // waiting now (a gauge)
  int64_t group_transitions = 0;  // PodGroup condition transition times remembered now (a gauge)
  int64_t deletions = 0;
};

class ApiClusterWriter final : public framework::ClusterWriter {
 public:
  // `events_client` may be the same client as `client`.
  ApiClusterWriter(HttpClient& client, HttpClient& events_client, WriterOptions options);
  ~ApiClusterWriter() override;

  absl::Status BindPod(const api::Pod& pod, std::string_view node) override;
  absl::Status UpdatePodScheduledCondition(const api::Pod& pod,
                                           const framework::PodScheduledCondition& condition,
                                           const std::string* nominated_node) override;
  absl::Status DeletePodForPreemption(const api::Pod& victim, const api::Pod& preemptor,
                                      std::string_view node) override;
  void RecordEvent(const framework::EventRecord& event) override;
  // resource.k8s.io/v1 claims (sync; UID and resourceVersion preconditions
  // in every patch; on a Conflict the claim is read again and the change
  // re-applied, up to kClaimConflictRetries attempts in all).
  static constexpr int kClaimConflictRetries = 5;
  absl::StatusOr<std::string> AddResourceClaimFinalizer(const api::ResourceClaim& claim,
                                                        std::string_view finalizer) override;
  absl::StatusOr<std::string> UpdateResourceClaimStatus(
      const api::ResourceClaim& claim, const api::AllocationResult& allocation,
      const std::vector<api::ResourceClaimConsumerReference>& reserved_for) override;
  absl::StatusOr<std::string> DeallocateResourceClaim(const api::ResourceClaim& claim) override;
  // Conflicts met by claim writes (each one re-read the claim).
  int64_t ClaimConflicts() const { return claim_conflicts_.load(std::memory_order_relaxed); }
  // Extended resources backed by DRA: POST resourceclaims (ClaimCreateBody),
  // the finalizer removal and DELETE of such a claim, and a merge patch of
  // pods/status (ExtendedResourceClaimStatusPatch). Synchronous.
  absl::StatusOr<api::ResourceClaim> CreateResourceClaim(const api::ResourceClaim& claim,
                                                         std::string_view generate_name) override;
  absl::Status DeleteResourceClaim(const api::ResourceClaim& claim) override;
  absl::Status UpdatePodExtendedResourceClaimStatus(
      const api::Pod& pod, const framework::ExtendedResourceClaimStatus& status) override;
  void ForgetPodGroup(std::string_view key) override;
  absl::Status UpdatePodGroupCondition(const framework::PodGroupRef& group,
                                       const framework::PodGroupCondition& condition) override;

  // Waits until every asynchronous write (status patches and events) queued
  // so far was sent, or the timeout passes (returns false then).
  bool Flush(int64_t timeout_millis);
  WriterStats Stats() const;

  // Wire formats (exposed for tests).
  static std::string BindingBody(const api::Pod& pod, std::string_view node);
  static std::string PodScheduledPatch(const api::Pod& pod,
                                       const framework::PodScheduledCondition& condition,
                                       const std::string* nominated_node, int64_t now_micros);
  static std::string ClaimStatusPatch(
      const api::ResourceClaim& claim, const api::AllocationResult& allocation,
      const std::vector<api::ResourceClaimConsumerReference>& reserved_for);
  // metadata {generateName, namespace, ownerReferences, annotations,
  // labels, finalizers}, spec.devices.requests (ExactCount requests only).
  static std::string ClaimCreateBody(const api::ResourceClaim& claim,
                                     std::string_view generate_name);
  static std::string ExtendedResourceClaimStatusPatch(
      const api::Pod& pod, const framework::ExtendedResourceClaimStatus& status);
  // The request UpdatePodGroupCondition sends, or nullopt when nothing is
  // written (a Coscheduling group's True or DisruptionTarget). Native groups
  // are applied server-side with field manager gantry-scheduler (the
  // scheduling condition) or gantry-scheduler-preemption (DisruptionTarget).
  // `transition_micros` is the
  // condition's lastTransitionTime.
  static std::optional<HttpRequest> PodGroupConditionRequest(
      const framework::PodGroupRef& group, const framework::PodGroupCondition& condition,
      int64_t transition_micros);
  // The event worker (of `workers`) that writes the events of `event`'s object.
  static size_t EventWorkerFor(const framework::EventRecord& event, size_t workers);
  static std::string FormatMicroTime(int64_t unix_micros);  // 2006-01-02T15:04:05.000000Z
  static std::string FormatTime(int64_t unix_micros);       // 2006-01-02T15:04:05Z

 private:
  // Sends request(base) until it succeeds, starting with base = `claim`; on a
  // 409 reads the claim again and asks reapply(fresh): an error ends the
  // write, false means the fresh version already holds the change (its
  // resourceVersion is returned), true retries with base = fresh.
  absl::StatusOr<std::string> ConditionalClaimWrite(
      const api::ResourceClaim& claim, std::string_view what,
      const std::function<HttpRequest(const api::ResourceClaim&)>& request,
      const std::function<absl::StatusOr<bool>(const api::ResourceClaim&)>& reapply);
  absl::StatusOr<api::ResourceClaim> ReadClaim(const api::ResourceClaim& claim,
                                               std::string_view what);
  // spec.nodeName of `pod` as the API server has it now ("" when unbound,
  // deleted or replaced by a pod of another UID); an error when it cannot be read.
  absl::StatusOr<std::string> BoundNode(const api::Pod& pod, std::string_view what);

  struct Series {
    std::string name;
    std::string namespace_;
    int32_t count = 1;
    int64_t last_micros = 0;
  };
  // The events of one worker: its queue, its thread and the series it
  // started (only its thread touches `series`).
  struct EventShard {
    std::mutex mu;
    std::condition_variable cv;
    std::condition_variable idle_cv;
    std::deque<std::pair<framework::EventRecord, int64_t>> queue;  // event, when recorded
    bool busy = false;
    absl::flat_hash_map<std::string, Series> series;
    std::thread thread;
  };
  // Queues a status patch; false (counted) when status_patch_queue_capacity
  // patches wait already.
  bool Enqueue(std::function<void()> task);
  // Sends one status patch with retries (5xx/429/transport, up to
  // status_patch_retries); 404 means the object is gone. Counts the outcome
  // in stats_ and logs "updating <what> of <key>" on failure.
  void SendStatusPatch(const HttpRequest& req, std::string_view what, const std::string& key,
                       std::string_view verb);
  void Worker();
  void EventWorker(EventShard& shard);
  void WriteEvent(EventShard& shard, const framework::EventRecord& event, int64_t now_micros);
  absl::Status CreateEvent(const framework::EventRecord& event, int64_t now_micros,
                           std::string* name, std::string* ns);

  HttpClient& client_;
  HttpClient& events_client_;
  std::atomic<int64_t> claim_conflicts_{0};
  WriterOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> tasks_;  // status patches
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;
  std::atomic<bool> stop_flag_{false};

  std::vector<std::unique_ptr<EventShard>> event_shards_;
  std::atomic<int64_t> events_queued_{0};  // over all shards, for the capacity check
  mutable std::mutex group_mu_;
  // Per group "namespace/name": "apiGroup/Kind conditionType" -> (last status
  // written, its transition time). Entries go when the group is deleted
  // (ForgetPodGroup) or, past group_transition_capacity groups, by age.
  struct GroupTransition {
    std::string status;
    int64_t since = 0;
  };
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, GroupTransition>>
      group_transitions_;

  // A PodScheduled patch queued before the pod was bound is stale by the time
  // it runs (it would put PodScheduled=False on a bound pod): per pod UID, the
  // number of queued status patches and the sequence number of the last
  // binding sent while some were queued. Guarded by mu_.
  struct PendingStatus {
    int queued = 0;
    uint64_t bound_seq = 0;
  };
  uint64_t write_seq_ = 0;
  absl::flat_hash_map<std::string, PendingStatus> pending_status_;

  mutable std::mutex stats_mu_;
  WriterStats stats_;
};

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_API_WRITER_H_
