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
//                               folded into series.count (async, bounded queue:
//                               events are dropped, and counted, when it is full)
//
// The scheduling loop only pays for enqueueing asynchronous writes.
#ifndef GANTRY_SRC_CLIENT_API_WRITER_H_
#define GANTRY_SRC_CLIENT_API_WRITER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "gantry/cluster_writer.h"
#include "src/api/dra.h"
#include "src/client/http.h"

namespace gantry::client {

struct WriterOptions {
  std::string hostname;  // reportingInstance = reportingController + "-" + hostname
  size_t event_queue_capacity = 1000;
  int64_t series_window_micros = 6 * 60 * 1'000'000LL;  // fold repeats seen within this window
  int status_patch_retries = 5;
};

struct WriterStats {
  int64_t bindings = 0;
  int64_t binding_conflicts = 0;
  int64_t status_patches = 0;
  int64_t status_patch_failures = 0;
  int64_t status_patches_superseded = 0;  // skipped: the pod was bound after the patch was queued
  int64_t events_created = 0;
  int64_t events_folded = 0;
  int64_t events_dropped = 0;
  int64_t event_failures = 0;
  int64_t deletions = 0;
};

class ApiClusterWriter final : public framework::ClusterWriter {
 public:
  // `events_client` may be the same client as `client`.
  ApiClusterWriter(HttpClient& client, HttpClient& events_client, WriterOptions options);
  ~ApiClusterWriter() override;

  absl::Status BindPod(const api::Pod& pod, std::string_view node) override;
  absl::Status UpdatePodScheduledCondition(const api::Pod& pod, const framework::PodScheduledCondition& condition,
                                           const std::string* nominated_node) override;
  absl::Status DeletePodForPreemption(const api::Pod& victim, const api::Pod& preemptor,
                                      std::string_view node) override;
  void RecordEvent(const framework::EventRecord& event) override;
  // resource.k8s.io/v1 claims (sync; UID precondition in every patch).
  absl::Status AddResourceClaimFinalizer(const api::ResourceClaim& claim, std::string_view finalizer) override;
  absl::Status UpdateResourceClaimStatus(const api::ResourceClaim& claim, const api::AllocationResult& allocation,
                                         const std::vector<api::ResourceClaimConsumerReference>& reserved_for) override;
  absl::Status DeallocateResourceClaim(const api::ResourceClaim& claim) override;
  // Extended resources backed by DRA: POST resourceclaims (ClaimCreateBody),
  // the finalizer removal and DELETE of such a claim, and a merge patch of
  // pods/status (ExtendedResourceClaimStatusPatch). Synchronous.
  absl::StatusOr<api::ResourceClaim> CreateResourceClaim(const api::ResourceClaim& claim,
                                                         std::string_view generate_name) override;
  absl::Status DeleteResourceClaim(const api::ResourceClaim& claim) override;
  absl::Status UpdatePodExtendedResourceClaimStatus(
      const api::Pod& pod, const framework::ExtendedResourceClaimStatus& status) override;
  absl::Status UpdatePodGroupCondition(const framework::PodGroupRef& group,
                                       const framework::PodGroupCondition& condition) override;

  // Waits until the async queue is empty (or the timeout passes).
  bool Flush(int64_t timeout_millis);
  WriterStats Stats() const;

  // Wire formats (exposed for tests).
  static std::string BindingBody(const api::Pod& pod, std::string_view node);
  static std::string PodScheduledPatch(const api::Pod& pod, const framework::PodScheduledCondition& condition,
                                       const std::string* nominated_node, int64_t now_micros);
  static std::string ClaimStatusPatch(const api::ResourceClaim& claim, const api::AllocationResult& allocation,
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
  static std::optional<HttpRequest> PodGroupConditionRequest(const framework::PodGroupRef& group,
                                                             const framework::PodGroupCondition& condition,
                                                             int64_t transition_micros);
  static std::string FormatMicroTime(int64_t unix_micros);  // 2006-01-02T15:04:05.000000Z
  static std::string FormatTime(int64_t unix_micros);       // 2006-01-02T15:04:05Z

 private:
  struct Series {
    std::string name;
    std::string namespace_;
    int32_t count = 1;
    int64_t last_micros = 0;
  };
  void Enqueue(std::function<void()> task, bool droppable);
  // Sends one status patch with retries (5xx/429/transport, up to
  // status_patch_retries); 404 means the object is gone. Counts the outcome
  // in stats_ and logs "updating <what> of <key>" on failure.
  void SendStatusPatch(const HttpRequest& req, std::string_view what, const std::string& key,
                       std::string_view verb);
  void Worker();
  void WriteEvent(const framework::EventRecord& event, int64_t now_micros);
  absl::Status CreateEvent(const framework::EventRecord& event, int64_t now_micros, std::string* name,
                           std::string* ns);

  HttpClient& client_;
  HttpClient& events_client_;
  WriterOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<std::pair<std::function<void()>, bool>> tasks_;
  size_t droppable_ = 0;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;
  std::atomic<bool> stop_flag_{false};

  absl::flat_hash_map<std::string, Series> series_;  // worker thread only
  // PodGroup "group/Kind ns/name type" -> (last status written, its transition time).
  std::mutex group_mu_;
  absl::flat_hash_map<std::string, std::pair<std::string, int64_t>> group_transitions_;

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
