// The scheduling queue: where pending pods wait between attempts.
//
// Upstream's PriorityQueue semantics (kube-scheduler), with one mutex and an
// injected Clock so the same code runs live and in virtual time:
//
//   Add/Update ──PreEnqueue──┬─ rejected ─► gated (held, with the gating plugin)
//                            └─ admitted ─► activeQ (heap by QueueSort Less)
//   Pop() ─► in flight ─► Done(uid)                        (scheduled / dropped)
//                      └► AddUnschedulableIfNotPresent ─┬─► unschedulablePods
//                                                       ├─► backoffQ   (Error, or an
//                                                       │    event arrived meanwhile)
//                                                       └─► activeQ    (event, backoff over)
//   backoffQ ──FlushBackoffQCompleted (expiry ≤ now)──► activeQ
//   unschedulablePods ──MoveAllToActiveOrBackoffQueue(event)──► backoffQ / activeQ
//                     ──FlushUnschedulablePodsLeftover (> max duration)──► same
//
// Requeueing: a pod in unschedulablePods moves when some plugin that rejected
// it registered an event matching the one that happened (ClusterEvent::Matches)
// and that registration's QueueingHintFn says kQueue (a null hint means
// kQueue). A rejecting plugin that has no entry at all in the registration map
// is treated as registered for every event. Pods with no rejecting plugin
// (the attempt ended with Error) always move. A pending plugin (Pending code)
// whose hint says kQueue skips backoff. Wildcard events (resource kWildcard
// and actions kAll, e.g. UnschedulableTimeout) move everything.
//
// Backoff: attempts ≥ 1 wait initial × 2^(attempts-1), capped at max, counted
// from the time the pod last failed (QueuedPodInfo::timestamp_micros); a pod
// that was never attempted does not back off.
//
// PreEnqueue runs whenever a pod enters activeQ or backoffQ from outside
// (Add, Update, requeue from unschedulable/gated/in flight, Activate); not on
// backoffQ → activeQ (it was checked on the way in). A gated pod is re-checked
// when an event its gating plugin registered for happens, when it is updated,
// and on the leftover flush.
//
// In flight: Pop() marks the pod in flight until Done(uid). Every event that
// arrives while at least one pod is in flight is remembered (with its objects
// when given as shared_ptr); AddUnschedulableIfNotPresent evaluates the events
// that arrived since that pod's Pop against its rejecting plugins, so a
// wake-up that happens during the attempt is never lost. Updates to an
// in-flight pod are kept and the requeued pod carries the latest PodInfo; a
// pod deleted while in flight is dropped when it comes back.
//
// Threading: every method is thread-safe (one mutex). Pop() blocks on a
// condition variable until a pod is active or Close() is called; TryPop()
// never blocks (simulator). PreEnqueue plugins and queueing hints run under
// the queue's lock: they must be fast and must not call back into the queue.
//
// Determinism: iteration never depends on hash order or addresses; pods that
// compare equal under Less leave activeQ in insertion order.
//
// PodGroups: every member is its own entry, keyed by its UID, with its own
// backoff and rejecting plugins. With QueueOptions::group_of set, the queue
// also indexes pending pods by group, so that a group cycle gathers a gang's
// members (PopGroups) at the cost of its size, not of the queue's length.
#ifndef GANTRY_SRC_QUEUE_SCHEDULING_QUEUE_H_
#define GANTRY_SRC_QUEUE_SCHEDULING_QUEUE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "gantry/clock.h"
#include "gantry/events.h"
#include "gantry/plugin.h"
#include "gantry/types.h"

namespace gantry::queue {

using framework::ClusterEvent;
using framework::ClusterEventWithHint;
using framework::PodInfoPtr;
using framework::QueuedPodInfo;

// Strict weak order of activeQ: true if `a` should be scheduled before `b`.
using LessFn = std::function<bool(const QueuedPodInfo& a, const QueuedPodInfo& b)>;
// Plugin name -> the events it registered (EnqueueExtensions::EventsToRegister).
using PluginEvents = absl::flat_hash_map<std::string, std::vector<ClusterEventWithHint>>;
// Extra filter for MoveAllToActiveOrBackoffQueue: false keeps the pod where it is.
using PreCheckFn = std::function<bool(const api::Pod& pod)>;

// PrioritySort's order: higher priority first, then earlier timestamp.
LessFn DefaultLess();
// Adapts a QueueSort plugin (not owned; must outlive the queue). Returns null
// (the cached-key fast path) for null and for the built-in "PrioritySort",
// whose Less is exactly DefaultLess().
LessFn LessFromPlugin(const framework::QueueSortPlugin* plugin);

// Labels of the events the queue itself generates (metrics and logs).
namespace event_label {
inline constexpr std::string_view kPodAdd = "PodAdd";
inline constexpr std::string_view kPodUpdate = "PodUpdate";
inline constexpr std::string_view kScheduleAttemptFailure = "ScheduleAttemptFailure";
inline constexpr std::string_view kBackoffComplete = "BackoffComplete";
inline constexpr std::string_view kUnschedulableTimeout = "UnschedulableTimeout";
inline constexpr std::string_view kForceActivate = "ForceActivate";
inline constexpr std::string_view kUnscheduledPodUpdate = "UnscheduledPodUpdate";
inline constexpr std::string_view kAssignedPodAdd = "AssignedPodAdd";
inline constexpr std::string_view kAssignedPodUpdate = "AssignedPodUpdate";
inline constexpr std::string_view kAssignedPodDelete = "AssignedPodDelete";
}  // namespace event_label

// The ActionType bits describing what changed between two versions of a pod
// (labels, scale-down of requests, tolerations, scheduling gates removed,
// generated resource claims; kUpdateOther for any other spec change, detected
// by metadata.generation). 0 when nothing scheduling-relevant changed (e.g. a
// status-only update such as the scheduler's own PodScheduled condition).
uint32_t PodUpdateActions(const api::Pod& old_pod, const api::Pod& new_pod);

// What one profile (one schedulerName) contributes to the queue.
struct ProfileQueueConfig {
  // Run in order on admission; not owned, must outlive the queue.
  std::vector<framework::PreEnqueuePlugin*> pre_enqueue;
  // Registrations of this profile's plugins; when unset, QueueOptions::events apply.
  std::optional<PluginEvents> events;
};

struct QueueOptions {
  // activeQ order. Null means PrioritySort's order (priority desc, then
  // timestamp) on cached keys, the fast path: leave it null when the
  // profiles' QueueSort plugin is PrioritySort.
  LessFn less;
  int64_t pod_initial_backoff_micros = 1'000'000;          // podInitialBackoffSeconds
  int64_t pod_max_backoff_micros = 10'000'000;             // podMaxBackoffSeconds
  int64_t pod_max_in_unschedulable_pods_micros = 300'000'000;  // 5 min upstream
  PluginEvents events;  // shared registrations (all profiles)
  // schedulerName -> its PreEnqueue plugins (and optional own registrations).
  absl::flat_hash_map<std::string, ProfileQueueConfig> profiles;
  // The group a pod belongs to ("" for none), e.g. its PodGroup key. When
  // set, the queue indexes its pods by group and PopGroups finds a group's
  // members without scanning the queue. Must be a pure function of the pod.
  std::function<std::string(const api::Pod&)> group_of;
};

// Where a pod currently is.
enum class QueueName : uint8_t { kActive, kBackoff, kUnschedulable, kGated, kInFlight };
std::string_view QueueNameLabel(QueueName q);  // "active", "backoff", ...

// `scheduler_pending_pods{queue}`.
struct PendingPods {
  int64_t active = 0;
  int64_t backoff = 0;
  int64_t unschedulable = 0;
  int64_t gated = 0;
  int64_t in_flight = 0;  // not an upstream label; popped and not yet done
};

// One `scheduler_queue_incoming_pods_total{queue,event}` series. As upstream,
// pods entering the gated set count under queue="unschedulable".
struct IncomingPods {
  std::string queue;
  std::string event;
  uint64_t count = 0;
};

struct QueueMetrics {
  PendingPods pending;
  std::vector<IncomingPods> incoming;  // sorted by (queue, event)
};

class SchedulingQueue {
 public:
  SchedulingQueue(const Clock& clock, QueueOptions options);
  ~SchedulingQueue();
  SchedulingQueue(const SchedulingQueue&) = delete;
  SchedulingQueue& operator=(const SchedulingQueue&) = delete;

  // ---- Informer side ------------------------------------------------------

  // A new pending pod: PreEnqueue, then activeQ or gated. Records its
  // status.nominatedNodeName. An already known UID is treated as Update.
  void Add(PodInfoPtr pod);
  // A new version of a pending pod (unknown UIDs are added). activeQ: re-sorted
  // in place; backoffQ: updated in place; gated: PreEnqueue runs again;
  // unschedulable: requeued when a scheduling-relevant field changed and the
  // rejecting plugins' hints (event kUnscheduledPod with PodUpdateActions) say
  // so, always for kUpdateOther; in flight: kept for the requeue and recorded
  // as an in-flight event.
  void Update(PodInfoPtr pod);
  // Removes the pod everywhere (incl. its nomination). In flight: dropped when
  // it comes back through AddUnschedulableIfNotPresent.
  void Delete(std::string_view uid);

  // Hooks for bound pods (they are never queued): trigger the kAssignedPod
  // events so pods rejected by affinity/spread/fit plugins that registered for
  // them are requeued; Added also drops the pod's nomination.
  void AssignedPodAdded(const PodInfoPtr& pod);
  void AssignedPodUpdated(const PodInfoPtr& old_pod, const PodInfoPtr& new_pod);
  void AssignedPodDeleted(const PodInfoPtr& pod);

  // A cluster event happened. Moves matching unschedulable pods (and re-checks
  // matching gated pods), and remembers the event for in-flight pods. The
  // objects are the api type of event.resource (see QueueingHintFn); the queue
  // keeps them only while some pod is in flight.
  void MoveAllToActiveOrBackoffQueue(const ClusterEvent& event,
                                     std::shared_ptr<const void> old_obj,
                                     std::shared_ptr<const void> new_obj,
                                     const PreCheckFn& pre_check = nullptr);
  // Same with borrowed objects that only live for the call: hints run now for
  // queued pods; for in-flight pods the event is remembered without objects
  // and any matching registration counts as kQueue (never a lost wake-up).
  void MoveAllToActiveOrBackoffQueueBorrowed(const ClusterEvent& event, const void* old_obj,
                                             const void* new_obj,
                                             const PreCheckFn& pre_check = nullptr);

  // Moves the pod to activeQ now (skipping backoff; PreEnqueue still runs).
  // In flight: it goes straight to activeQ when it comes back.
  void Activate(std::string_view uid);

  // ---- Scheduling loop side ------------------------------------------------

  // Blocks until a pod is active or the queue is closed (then nullopt).
  // Increments attempts, sets initial_attempt_micros on the first attempt,
  // clears the previous rejecting plugins, and marks the pod in flight.
  std::optional<QueuedPodInfo> Pop();
  // Non-blocking Pop (simulator): nullopt when activeQ is empty.
  std::optional<QueuedPodInfo> TryPop();
  // Pops every queued pod (active, backoff or unschedulable; not gated, not
  // in flight) for which `pred` holds, in activeQ order (priority, then
  // arrival, then UID). Each returned pod is in flight exactly as after
  // Pop(): it needs one Done and, on failure, AddUnschedulableIfNotPresent.
  // Used to schedule a PodGroup's members together in one group cycle.
  std::vector<QueuedPodInfo> PopMatching(const std::function<bool(const framework::PodInfo&)>& pred);
  // PopMatching for the pods whose QueueOptions::group_of is one of `groups`,
  // through the group index: O(members), not O(queue). Without group_of it
  // pops nothing.
  std::vector<QueuedPodInfo> PopGroups(const std::vector<std::string>& groups);
  // Number of Pops so far (upstream's scheduling cycle).
  int64_t SchedulingCycle() const;

  // The attempt for `qpi` failed; its unschedulable_plugins / pending_plugins
  // say who rejected it (both empty = Error). Call before Done(uid). Goes to
  // unschedulablePods, or backoffQ/activeQ if it failed with Error or a
  // relevant event arrived since its Pop. A pod that is not in flight (never
  // popped, or already Done) is accepted too; then any event since
  // `scheduling_cycle` moves it (upstream's moveRequestCycle).
  // AlreadyExists if the pod is already queued.
  absl::Status AddUnschedulableIfNotPresent(QueuedPodInfo qpi, int64_t scheduling_cycle);
  // Ends one Pop of `uid` (call exactly once per Pop, also after a requeue).
  // A pod still in flight at Done (scheduled, or dropped) leaves the queue.
  void Done(std::string_view uid);

  // Moves backoffQ pods whose backoff expired to activeQ. Live: call every second.
  void FlushBackoffQCompleted();
  // Moves pods that stayed in unschedulablePods longer than the maximum
  // (event UnschedulableTimeout) and re-checks gated pods as old.
  void FlushUnschedulablePodsLeftover();

  // Wakes all Pop() waiters; Pop returns nullopt from now on.
  void Close();
  bool closed() const;

  // ---- Nominated pods (preemption) -------------------------------------------

  // Records that `pod` is nominated to run on `node`; nullopt uses the pod's
  // status.nominatedNodeName. An empty node removes the nomination.
  void AddNominatedPod(const PodInfoPtr& pod, std::optional<std::string> node = std::nullopt);
  void DeleteNominatedPodIfExists(std::string_view uid);
  // Latest PodInfos of the pods nominated to `node`, in nomination order.
  std::vector<PodInfoPtr> NominatedPodsForNode(std::string_view node) const;
  std::optional<std::string> NominatedNodeFor(std::string_view uid) const;
  // Every nomination as (node, latest PodInfo), in no particular order; for
  // keeping nominated room (src/scheduler/group_preemption.h).
  std::vector<std::pair<std::string, PodInfoPtr>> Nominations() const;
  // Calls fn(node, pod) for every nomination under the queue's lock (fn must
  // not call back into the queue); no copies.
  void ForEachNomination(const std::function<void(std::string_view, const PodInfoPtr&)>& fn) const;
  bool HasNominations() const;

  // ---- Introspection -----------------------------------------------------

  QueueMetrics Metrics() const;
  PendingPods Pending() const;
  // Where the pod is, nullopt if unknown.
  std::optional<QueueName> Where(std::string_view uid) const;
  // A copy of the queued entry (not for in-flight pods).
  std::optional<QueuedPodInfo> Get(std::string_view uid) const;
  // Every queued pod (not in flight), ordered by queue and position.
  std::vector<PodInfoPtr> PendingPodInfos() const;
  // Earliest backoff expiry in backoffQ (the simulator advances virtual time to it).
  std::optional<int64_t> NextBackoffExpiryMicros() const;
  // Earliest time an unschedulable pod reaches the leftover timeout (O(n)).
  std::optional<int64_t> NextUnschedulableTimeoutMicros() const;
  // initial × 2^(attempts-1) capped at max; 0 for attempts ≤ 0.
  int64_t BackoffDurationMicros(int32_t attempts) const;

 private:
  struct Entry;
  struct InFlightEvent;
  enum class Strategy : uint8_t { kSkip, kQueueAfterBackoff, kQueueImmediately };

  // An indexed binary heap. Items cache a sort key (k1, k2, then seq) so the
  // built-in orders (PrioritySort, backoff expiry) compare without touching
  // the entries; with a custom Less the entries are compared through it and
  // seq breaks ties.
  class Heap {
   public:
    using KeyFn = void (*)(const Entry&, int64_t* k1, int64_t* k2);
    Heap(const LessFn* custom, KeyFn key) : custom_(custom), key_(key) {}
    void Push(Entry* e);
    Entry* Top() const { return items_.empty() ? nullptr : items_.front().e; }
    Entry* PopTop();
    void Remove(Entry* e);
    void Fix(Entry* e);  // after the entry's key changed
    size_t size() const { return items_.size(); }
    // Entries in pop order (copies the heap; O(n log n)).
    std::vector<Entry*> Sorted() const;

   private:
    struct Item {
      int64_t k1 = 0;
      int64_t k2 = 0;
      uint64_t seq = 0;
      Entry* e = nullptr;
    };
    bool Less(const Item& a, const Item& b) const;
    void Swap(size_t i, size_t j);
    bool Up(size_t i);
    void Down(size_t i);
    Item MakeItem(Entry* e) const;
    const LessFn* custom_;  // null: compare cached keys
    KeyFn key_;
    std::vector<Item> items_;
  };

  // An unordered set with O(1) removal and deterministic iteration.
  class Slots {
   public:
    void Insert(Entry* e);
    void Remove(Entry* e);
    size_t size() const { return items_.size(); }
    const std::vector<Entry*>& items() const { return items_; }

   private:
    std::vector<Entry*> items_;
  };

  static void ActiveKey(const Entry& e, int64_t* k1, int64_t* k2);
  static void BackoffKey(const Entry& e, int64_t* k1, int64_t* k2);

  Entry* Find(std::string_view uid) const;
  void Detach(Entry* e);  // from its current collection
  void Erase(Entry* e);
  void InsertActive(Entry* e, std::string_view event);
  void InsertBackoff(Entry* e, std::string_view event);
  void InsertUnschedulable(Entry* e, std::string_view event);
  void InsertGated(Entry* e, std::string_view event);
  // Admits a detached entry: PreEnqueue, then activeQ or backoffQ per `s`.
  void Requeue(Entry* e, Strategy s, std::string_view event);
  bool RunPreEnqueue(Entry* e);
  bool IsBackingOff(const Entry& e) const;
  const PluginEvents& EventsFor(const api::Pod& pod) const;
  Strategy WorthRequeuing(const QueuedPodInfo& qpi, const ClusterEvent& event,
                          const void* old_obj, const void* new_obj, bool objects_known) const;
  void MoveAllLocked(const ClusterEvent& event, std::shared_ptr<const void> old_obj,
                     std::shared_ptr<const void> new_obj, const void* old_raw,
                     const void* new_raw, bool owned, const PreCheckFn& pre_check);
  void RecordInFlightEvent(const ClusterEvent& event, std::shared_ptr<const void> old_obj,
                           std::shared_ptr<const void> new_obj, bool objects_known);
  void EndInFlightAttempt(Entry* e);
  void PruneInFlightEvents();
  void AddLocked(PodInfoPtr pod, std::string_view event);
  void UpdateLocked(PodInfoPtr pod);
  void CountIncoming(QueueName q, std::string_view event);
  std::optional<QueuedPodInfo> PopLocked();
  QueuedPodInfo PopEntryLocked(Entry* e);
  // Pops `matches` (queued entries) in activeQ order (PopMatching's order).
  std::vector<QueuedPodInfo> PopEntriesLocked(std::vector<Entry*> matches);
  // Whether PopMatching / PopGroups may take the entry.
  static bool Poppable(const Entry& e);
  // Keeps the group index in step with the entry's pod (call after its
  // pod_info changed); Unindex before the entry is erased.
  void Reindex(Entry* e);
  void Unindex(Entry* e);
  void AddNominatedLocked(const PodInfoPtr& pod, std::optional<std::string> node);
  void DeleteNominatedLocked(std::string_view uid);
  void UpdateNominatedLocked(const PodInfoPtr& old_pod, const PodInfoPtr& new_pod);

  const Clock& clock_;
  QueueOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cond_;
  bool closed_ = false;
  int64_t scheduling_cycle_ = 0;
  int64_t move_request_cycle_ = -1;
  uint64_t next_seq_ = 0;

  absl::flat_hash_map<std::string, std::unique_ptr<Entry>> entries_;  // by UID
  // group_of -> the entries of that group (every entry, whatever its state).
  absl::flat_hash_map<std::string, absl::flat_hash_set<Entry*>> by_group_;
  Heap active_;
  Heap backoff_;
  Slots unschedulable_;
  Slots gated_;
  int64_t in_flight_ = 0;  // entries currently popped and not yet requeued/done

  // Events seen while some pod was in flight, oldest first, with sequence numbers.
  std::deque<InFlightEvent> in_flight_events_;
  uint64_t next_event_seq_ = 0;
  std::multiset<uint64_t> in_flight_starts_;  // event seq at each active Pop

  // Nominations: uid -> (node, latest PodInfo); node -> uids in nomination order.
  struct Nomination {
    std::string node;
    PodInfoPtr pod;
  };
  absl::flat_hash_map<std::string, Nomination> nominated_by_uid_;
  absl::flat_hash_map<std::string, std::vector<std::string>> nominated_by_node_;

  // incoming_[queue][event label] counters.
  absl::flat_hash_map<std::string, uint64_t> incoming_[4];
};

}  // namespace gantry::queue

#endif  // GANTRY_SRC_QUEUE_SCHEDULING_QUEUE_H_
