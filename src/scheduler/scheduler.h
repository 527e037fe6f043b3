// The scheduling loop: pops a pod, runs its profile's framework on a fresh
// snapshot, assumes the chosen node, and binds (inline offline, on binding
// workers live). Failures are written back upstream's way: a
// FailedScheduling event and PodScheduled=False with the FitError message.
//
// The world reaches the scheduler through the On* event handlers (called by
// the live reflectors or the simulator's event source) and is written
// through the ClusterWriter; nothing here knows which one it runs against.
#ifndef GANTRY_SRC_SCHEDULER_SCHEDULER_H_
#define GANTRY_SRC_SCHEDULER_SCHEDULER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gantry/clock.h"
#include "gantry/cluster_writer.h"
#include "src/framework/framework.h"
#include "src/framework/schedule_pod.h"
#include "src/queue/scheduling_queue.h"
#include "src/scheduler/group_status.h"
#include "src/state/cluster_state.h"
#include "src/state/dra_state.h"
#include "src/state/event_handler.h"
#include "src/state/snapshot.h"

namespace gantry::scheduler {

struct TopologyDomainCache;  // group_cycle.cc

struct SchedulerOptions {
  int32_t percentage_of_nodes_to_score = 0;
  uint64_t seed = 1;
  // 0: bind inline in the scheduling loop (offline). >0: binding cycles run
  // on a pool of at most this many threads. The pool grows on demand (a
  // thread is started when a binding is queued while every started thread is
  // busy) and keeps its threads until the scheduler is destroyed, so at most
  // this many binding cycles wait on the API server at once.
  int binding_workers = 0;
};

// The binding pool's counters (live mode), for logs and tests.
struct BindingPoolStats {
  int threads = 0;          // started so far (never more than binding_workers)
  int in_flight = 0;        // queued or running binding cycles now
  int peak_in_flight = 0;   // the most there ever were at once
  int64_t started = 0;      // binding cycles handed to the pool
};

// What happened to one scheduling attempt (for reports, metrics, explain).
struct AttemptOutcome {
  framework::PodInfoPtr pod;
  std::string profile;
  std::string result;  // "scheduled" | "unschedulable" | "error"
  std::string node;    // chosen node when scheduled
  std::string message; // failure message (upstream format)
  int64_t duration_micros = 0;  // wall time of the scheduling cycle
  std::string nominated_node;
  // Set when scheduled: attempts it took (this one included) and the time
  // since its first attempt (scheduler_pod_scheduling_sli_duration_seconds).
  int32_t attempts = 0;
  int64_t since_first_attempt_micros = 0;
  // Rejected attempts that ran the filters: their diagnosis (per-node
  // statuses, PreFilter message). Valid only during OnAttempt; copy what you keep.
  const framework::FitError* fit_error = nullptr;
};

// One topology domain tried by a group cycle for its root group ("" when
// the group has no topology constraint): how many members fit there.
struct DomainTrial {
  std::string domain;  // "key=value"
  int32_t placed = 0;  // members (or child groups of a composite) that fit
  bool satisfied = false;
  std::string failure;  // why the quorum was not reached there
};

// A member of a failed group cycle and why it did not fit (in the last
// domain tried; "" when it did fit there).
struct MemberFailure {
  std::string pod;  // "namespace/name"
  std::string failure;
};

// What happened to one group cycle.
struct GroupOutcome {
  std::string key;        // "namespace/name"
  bool scheduled = false; // quorum reached and members sent to binding
  int32_t placed = 0;     // members placed in this cycle
  int32_t min_count = 0;
  std::string domain;     // "key=value" of the chosen topology domain, "" if none
  std::string message;    // failure summary
  int64_t duration_micros = 0;  // the group cycle's placement search (gantry_gang_placement_duration_seconds)
  // The root group's placement search, in the order tried (for explain).
  std::vector<DomainTrial> domains{};
  std::vector<MemberFailure> members{};  // failed cycles only
};

class AttemptObserver {
 public:
  virtual ~AttemptObserver() = default;
  // Called after each attempt's outcome is known (for binds: after Bind).
  virtual void OnAttempt(const AttemptOutcome& outcome) = 0;
  // Called after each group cycle.
  virtual void OnGroup(const GroupOutcome& outcome) { (void)outcome; }
  // Called when a pod this scheduler serves is deleted (or finished).
  virtual void OnPodDeleted(const api::Pod& pod) { (void)pod; }
};

class Scheduler final : public state::ClusterEventHandler {
 public:
  Scheduler(state::ClusterState& state, framework::ClusterWriter& writer, const Clock& clock,
            SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Adds a profile (one per schedulerName). Call before Start/ScheduleOne.
  void AddProfile(std::unique_ptr<framework::Framework> fw);
  // Builds the queue from the profiles (queue sort, PreEnqueue, events).
  void Start(int64_t pod_initial_backoff_micros, int64_t pod_max_backoff_micros);

  // ---- Event handlers (state::ClusterEventHandler): the event source calls these
  void OnPodAdd(std::shared_ptr<const api::Pod> pod) override;
  void OnPodUpdate(std::shared_ptr<const api::Pod> old_pod,
                   std::shared_ptr<const api::Pod> pod) override;
  void OnPodDelete(std::shared_ptr<const api::Pod> pod) override;
  void OnNodeAdd(std::shared_ptr<const api::Node> node) override;
  void OnNodeUpdate(std::shared_ptr<const api::Node> old_node,
                    std::shared_ptr<const api::Node> node) override;
  void OnNodeDelete(std::shared_ptr<const api::Node> node) override;
  void OnNamespace(api::Symbol name, api::Labels labels) override;
  void OnNamespaceDelete(api::Symbol name) override;
  void OnPriorityClass(api::Symbol name, state::PriorityClassInfo info) override;
  void OnPriorityClassDelete(api::Symbol name) override;
  void OnPodDisruptionBudget(std::shared_ptr<const api::PodDisruptionBudget> pdb) override;
  void OnPodDisruptionBudgetDelete(std::string_view key) override;
  // PodGroups (native or scheduler-plugins); members waiting for them retry.
  void OnPodGroup(state::GroupInfo group) override;
  void OnPodGroupDelete(std::string_view key) override;
  // v1alpha3 CompositePodGroups (group trees); members of the tree retry.
  void OnCompositePodGroup(state::GroupInfo group) override;
  void OnCompositePodGroupDelete(std::string_view key) override;
  // DRA objects (src/scheduler/dra_events.cc): update dra() and requeue.
  void OnResourceSlice(std::shared_ptr<const api::ResourceSlice> old_obj,
                       std::shared_ptr<const api::ResourceSlice> obj) override;
  void OnResourceSliceDelete(std::shared_ptr<const api::ResourceSlice> obj) override;
  void OnDeviceClass(std::shared_ptr<const api::DeviceClass> old_obj,
                     std::shared_ptr<const api::DeviceClass> obj) override;
  void OnDeviceClassDelete(std::shared_ptr<const api::DeviceClass> obj) override;
  void OnResourceClaim(std::shared_ptr<const api::ResourceClaim> old_obj,
                       std::shared_ptr<const api::ResourceClaim> obj) override;
  void OnResourceClaimDelete(std::shared_ptr<const api::ResourceClaim> obj) override;
  void OnResourceClaimTemplate(std::shared_ptr<const api::ResourceClaimTemplate> obj) override;
  void OnResourceClaimTemplateDelete(
      std::shared_ptr<const api::ResourceClaimTemplate> obj) override;
  void OnDeviceTaintRule(std::shared_ptr<const api::DeviceTaintRule> old_obj,
                         std::shared_ptr<const api::DeviceTaintRule> obj) override;
  void OnDeviceTaintRuleDelete(std::shared_ptr<const api::DeviceTaintRule> obj) override;
  // The DRA state shared by every profile (setup.cc hands it to each framework).
  state::DraState& dra() { return *dra_; }

  // Runs one scheduling cycle. Blocking waits for a pod; non-blocking
  // returns false at once when the active queue is empty.
  bool ScheduleOne(bool blocking);
  // Waits until every binding started so far has finished.
  void WaitForBindings();
  BindingPoolStats BindingStats();
  // Pending pods of other schedulers counted in groups this scheduler serves
  // (thread-safe; for the cache-size metrics).
  size_t ForeignGroupMemberCount();

  bool Serves(std::string_view scheduler_name) const;
  queue::SchedulingQueue& queue() { return *queue_; }
  state::ClusterState& cluster_state() { return state_; }
  // Thread-safe; observers are called under one lock, one outcome at a
  // time, in the order added. Remove an observer before destroying it.
  void AddObserver(AttemptObserver* observer) {
    std::lock_guard<std::mutex> lock(observer_mu_);
    observers_.push_back(observer);
  }
  void RemoveObserver(AttemptObserver* observer) {
    std::lock_guard<std::mutex> lock(observer_mu_);
    std::erase(observers_, observer);
  }
  framework::Framework* Profile(std::string_view scheduler_name) const;
  // Whether scheduling cycles reuse per-node Filter / Score results between
  // pods of one spec: consecutive single pods of one template and the members
  // of a group (framework::NodeResultCache; on by default). The placements
  // are the same either way; off is for comparing and diagnosing.
  void SetNodeResultReuse(bool on) { reuse_node_results_ = on; }
  const framework::NodeResultCache& node_results() const { return node_results_; }
  const std::vector<std::unique_ptr<framework::Framework>>& profiles() const { return profiles_; }

 private:
  struct BindTask {
    framework::QueuedPodInfo qpi;
    framework::Framework* fw;
    std::unique_ptr<framework::CycleState> state;
    std::string node;
    int64_t cycle_micros;
  };

  // The placement of one group cycle, bound together: every member's PreBind
  // runs before any member's Bind, so a PreBind failure binds no member; a
  // member whose Bind fails for a retriable reason is retried; a leaf left
  // bound below its minCount is reported on its PodGroup until it completes.
  struct GangLeaf {
    state::GroupInfo info;
    int already = 0;  // members running before this cycle
  };
  struct GangBindTask {
    std::vector<BindTask> members;
    std::vector<size_t> leaf_of;  // per member: index into leaves
    std::vector<GangLeaf> leaves;
  };
  using BindJob = std::variant<BindTask, GangBindTask>;

  void RunBindingCycle(BindTask task);
  void RunGangBindingCycle(GangBindTask task);
  // Bind with retries of retriable failures (transport, 5xx, 429, Conflict).
  framework::Status BindWithRetries(BindTask& task);
  // A bound member: FinishBinding, PostBind, the Scheduled event, observers.
  void FinishBound(BindTask& task);
  // A member that will not bind: Unreserve, Forget, requeue with `st`.
  void AbandonBinding(BindTask task, const framework::Status& st);
  void StartBinding(BindTask task);
  void StartBinding(GangBindTask task);
  void EnqueueBindJob(BindJob job, int64_t pods);
  // Schedules a whole PodGroup on one snapshot (src/scheduler/group_cycle.cc).
  // `group` is nullopt when the PodGroup object does not exist (yet).
  void RunGroupCycle(framework::QueuedPodInfo first, const std::string& key,
                     const std::optional<state::GroupInfo>& group, framework::Framework* fw,
                     int64_t cycle, int64_t start_micros);
  // Fails one member of a group cycle (event, condition, requeue, observer).
  // `scheduler_error`: an infrastructure failure rather than a verdict.
  void FailGroupMember(framework::Framework* fw, framework::QueuedPodInfo qpi, const std::string& message,
                       int64_t duration_micros, int64_t cycle, bool scheduler_error = false);
  // Why a group cycle failed.
  struct GroupFailure {
    std::string key;                      // the cycle's root group ("namespace/name")
    std::string reason = "Unschedulable"; // or "SchedulerError"
    std::string message;                  // how many members fit where, and why not
    std::string domain;                   // best topology domain tried, "" if none
    int32_t placed = 0;
    int32_t min_count = 0;
    std::vector<DomainTrial> domains{};   // the root's domain trials, if any were run
    std::vector<MemberFailure> members{}; // per-member failures, if placement ran
  };
  // The failure path of a group cycle, and the hook for workload-aware
  // preemption: every member in `members` fails through HandleFailure
  // (FailedScheduling event, PodScheduled=False, requeued as unschedulable
  // by "GangScheduling" so any cluster event retries the group), every group
  // in `groups` not yet scheduled gets PodGroupInitiallyScheduled=False with
  // `failure.reason` and `failure.message`, and the observer sees one
  // GroupOutcome for `failure.key`. Nothing of the cycle is held.
  void FailGroupCycle(framework::Framework* fw, std::vector<framework::QueuedPodInfo> members,
                      const std::vector<state::GroupInfo>& groups, const GroupFailure& failure, int64_t cycle,
                      int64_t start_micros);
  // ---- Workload-aware preemption (src/scheduler/group_preemption.cc) -------
  using Domains = std::vector<std::pair<std::string, std::vector<framework::NodeInfo*>>>;
  // Called by the group cycle when no placement reaches quorum. Returns true
  // when it took the members over (victims evicted or still terminating;
  // members nominated and requeued); false with `*note` saying why
  // preemption cannot help (the caller appends it to the failure message).
  bool PreemptForGroup(const std::string& key, const state::GroupInfo& group,
                       std::vector<framework::QueuedPodInfo>& members, int32_t need, const Domains& domains,
                       framework::Framework* fw, int64_t cycle, int64_t start_micros, std::string* note);
  // How a preempting unit places its members on the snapshot (with some
  // victims removed): a PodGroup's members one by one, or a CompositePodGroup
  // tree's placer. `place` leaves the placement on the snapshot (members
  // added, Reserve run) until `undo`.
  struct GroupPlacement {
    std::vector<std::string> nodes;  // per member, "" when not placed
    bool satisfied = false;          // quorum reached (the root's, for a tree)
    int32_t placed = 0;
    std::string first_failure;
  };
  struct GroupPlacer {
    std::function<GroupPlacement(const std::vector<framework::NodeInfo*>& nodes)> place;
    std::function<void()> undo;
  };
  // PreemptForGroup for any unit: `key` / `group` name the preemptor (the
  // root of a tree), `own_group(group key)` tells the unit's own groups
  // (their pods are never victims).
  bool PreemptForUnit(const std::string& key, const state::GroupInfo& group,
                      const std::function<bool(const std::string&)>& own_group,
                      std::vector<framework::QueuedPodInfo>& members, const GroupPlacer& placer,
                      const Domains& domains, framework::Framework* fw, int64_t cycle,
                      int64_t start_micros, std::string* note);
  // A group whose victims were evicted and are still terminating: while any
  // is left, the group keeps its nominations and starts no new preemption.
  struct PendingGroupPreemption {
    std::vector<std::string> waiting_for;                          // victim UIDs
    std::vector<std::pair<std::string, std::string>> nominations;  // member UID, node
  };
  absl::flat_hash_map<std::string, PendingGroupPreemption> pending_group_preemptions_;

  void HandleFailure(framework::Framework* fw, framework::QueuedPodInfo qpi,
                     const framework::Status& status, const framework::FitError* fit_error,
                     const std::string& nominated_node, int64_t duration_micros, int64_t cycle);
  void Notify(const AttemptOutcome& outcome);
  void NotifyGroup(const GroupOutcome& outcome);
  void BindingWorker();

  state::ClusterState& state_;
  framework::ClusterWriter& writer_;
  GroupStatusWriter group_status_{writer_};
  const Clock& clock_;
  SchedulerOptions options_;
  std::vector<std::unique_ptr<framework::Framework>> profiles_;
  absl::flat_hash_map<std::string, framework::Framework*> by_name_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  state::Snapshot snapshot_;
  std::unique_ptr<framework::PodScheduler> algorithm_;
  std::vector<AttemptObserver*> observers_;  // guarded by observer_mu_
  // Group key -> scheduler name -> how many pending members that scheduler
  // serves (those pods are never touched; the group is rejected as mixed),
  // and which group and scheduler each such pod (by UID) was counted for.
  // Entries go when the pod is deleted or bound, so both stay as large as
  // the set of such pods.
  struct ForeignMember {
    std::string group;
    std::string scheduler;
  };
  std::mutex foreign_mu_;
  absl::flat_hash_map<std::string, std::map<std::string, int>> foreign_group_schedulers_;
  absl::flat_hash_map<std::string, ForeignMember> foreign_members_;
  void ForgetForeignMember(std::string_view uid);
  std::unique_ptr<state::DraState> dra_ = std::make_unique<state::DraState>();
  std::mutex observer_mu_;
  // Topology domains of the snapshot's nodes per label key, reused by group
  // cycles while no node is added, removed or relabelled (group_cycle.cc).
  std::shared_ptr<TopologyDomainCache> domain_cache_;
  // Per-node Filter verdicts and raw scores shared by pods of one spec,
  // across scheduling and group cycles while snapshot_ keeps its
  // nodes_version and no DeviceClass changes (NodeResourcesFit reads which
  // extended resources DeviceClasses serve); every other change moves the
  // changed NodeInfos' generations. Scheduling thread only.
  framework::NodeResultCache node_results_;
  uint64_t node_results_version_ = 0;
  bool reuse_node_results_ = true;
  // Set by the DeviceClass handlers (any thread): node_results_ is cleared
  // before its next use.
  std::atomic<bool> node_results_stale_{false};
  // node_results_ ready for the snapshot just updated, or null when reuse is
  // off (cleared first when the nodes or DeviceClasses changed).
  framework::NodeResultCache* NodeResultsForCycle();

  // Binding workers (live mode).
  std::mutex bind_mu_;
  std::condition_variable bind_cv_;
  std::condition_variable bind_idle_cv_;
  std::deque<BindJob> bind_tasks_;
  int binds_in_flight_ = 0;
  int bind_idle_ = 0;  // threads waiting for a task
  int bind_peak_ = 0;
  int64_t binds_started_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> bind_threads_;
  // Leaves reported bound below quorum (gantry.dev/BoundBelowQuorum True),
  // by group key, until a later binding completes them or they are deleted.
  std::mutex below_quorum_mu_;
  absl::flat_hash_map<std::string, state::GroupInfo> below_quorum_;
};

// The ActionType bits describing what changed on a node.
uint32_t NodeUpdateActions(const api::Node& old_node, const api::Node& new_node);

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_SCHEDULER_H_
