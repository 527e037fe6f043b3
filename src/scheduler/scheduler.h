// The scheduler: the front that wires its parts together and that the
// composition roots (live and offline runs) drive.
//
// - EventHandlers (event_handlers.h): the world reaches the scheduler
//   through events(), called by the live reflectors or the simulator's
//   event source; they update the cache and wake the queue.
// - SchedulingLoop (scheduling_loop.h): ScheduleOne pops a pod, runs its
//   profile's framework on a fresh snapshot (CycleContext), assumes the
//   chosen node; failures go through FailureHandler (failure.h), upstream's
//   way: a FailedScheduling event and PodScheduled=False with the FitError.
// - GroupCycle (group_cycle.h): PodGroup members scheduled together, with
//   GroupPreemptionEvaluator (group_preemption.h) when quorum is not reached.
// - Binder (binder.h): binding cycles, inline offline, on a BindingPool live.
//
// Everything is written through the ClusterWriter; nothing here knows
// whether it runs against the API server or a simulation.
#ifndef GANTRY_SRC_SCHEDULER_SCHEDULER_H_
#define GANTRY_SRC_SCHEDULER_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "gantry/clock.h"
#include "gantry/cluster_writer.h"
#include "src/framework/framework.h"
#include "src/queue/scheduling_queue.h"
#include "src/scheduler/binder.h"
#include "src/scheduler/binding_pool.h"
#include "src/scheduler/cycle_context.h"
#include "src/scheduler/event_handlers.h"
#include "src/scheduler/failure.h"
#include "src/scheduler/foreign_members.h"
#include "src/scheduler/group_cycle.h"
#include "src/scheduler/group_preemption.h"
#include "src/scheduler/group_status.h"
#include "src/scheduler/outcome.h"
#include "src/scheduler/profiles.h"
#include "src/scheduler/scheduling_loop.h"
#include "src/state/cluster_state.h"
#include "src/state/dra_state.h"
#include "src/state/event_handler.h"

namespace gantry::scheduler {

struct SchedulerOptions {
  int32_t percentage_of_nodes_to_score = 0;
  uint64_t seed = 1;
  // 0: bind inline in the scheduling loop (offline). >0: binding cycles run
  // on a pool of at most this many threads (BindingPool).
  int binding_workers = 0;
};

class Scheduler {
 public:
  Scheduler(state::ClusterState& state, framework::ClusterWriter& writer, const Clock& clock,
            SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Adds a profile (one per schedulerName). Call before Start.
  void AddProfile(std::unique_ptr<framework::Framework> fw);
  // Builds the queue from the profiles (queue sort, PreEnqueue, events) and
  // the parts that use it. Call once, before ScheduleOne and before any
  // event other than the DRA ones.
  void Start(int64_t pod_initial_backoff_micros, int64_t pod_max_backoff_micros);

  // Where the cluster's changes go (the event source calls these).
  state::ClusterEventHandler& events() { return events_; }
  // The DRA state shared by every profile (setup.cc hands it to each framework).
  state::DraState& dra() { return *dra_; }

  // Runs one scheduling cycle. Blocking waits for a pod; non-blocking
  // returns false at once when the active queue is empty.
  bool ScheduleOne(bool blocking) { return loop_->ScheduleOne(blocking); }
  // Waits until every binding started so far has finished.
  void WaitForBindings() { binder_->Wait(); }
  BindingPoolStats BindingStats() { return binder_->Stats(); }
  // Pending pods of other schedulers counted in groups this scheduler serves
  // (thread-safe; for the cache-size metrics).
  size_t ForeignGroupMemberCount() { return foreign_.size(); }

  bool Serves(std::string_view scheduler_name) const { return profiles_.Serves(scheduler_name); }
  framework::Framework* Profile(std::string_view scheduler_name) const {
    return profiles_.Get(scheduler_name);
  }
  const std::vector<std::unique_ptr<framework::Framework>>& profiles() const {
    return profiles_.all();
  }
  queue::SchedulingQueue& queue() { return *queue_; }
  state::ClusterState& cluster_state() { return state_; }
  // Thread-safe; see Observers.
  void AddObserver(AttemptObserver* observer) { observers_.Add(observer); }
  void RemoveObserver(AttemptObserver* observer) { observers_.Remove(observer); }
  // Whether scheduling cycles reuse per-node Filter / Score results between
  // pods of one spec: consecutive single pods of one template and the members
  // of a group (framework::NodeResultCache; on by default). The placements
  // are the same either way; off is for comparing and diagnosing.
  void SetNodeResultReuse(bool on) { cycles_.SetNodeResultReuse(on); }
  const framework::NodeResultCache& node_results() const { return cycles_.node_results(); }

 private:
  state::ClusterState& state_;
  framework::ClusterWriter& writer_;
  const Clock& clock_;
  const SchedulerOptions options_;
  Profiles profiles_;
  Observers observers_;
  ForeignGroupMembers foreign_;
  GroupStatusWriter group_status_{writer_};
  std::unique_ptr<state::DraState> dra_ = std::make_unique<state::DraState>();
  CycleContext cycles_;
  EventHandlers events_;
  // Built by Start, destroyed in reverse (the binder first, so queued
  // bindings finish while the rest is alive).
  std::unique_ptr<queue::SchedulingQueue> queue_;
  std::unique_ptr<FailureHandler> failure_;
  std::unique_ptr<Binder> binder_;
  std::unique_ptr<GroupPreemptionEvaluator> preemption_;
  std::unique_ptr<GroupCycle> group_cycle_;
  std::unique_ptr<SchedulingLoop> loop_;
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_SCHEDULER_H_
