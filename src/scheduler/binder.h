// Binding cycles: PreBind, Bind (with retries of retriable failures) and
// PostBind for a pod placed by the scheduling loop, and for the members a
// group cycle placed together. They run inline offline and on the binding
// pool live; either way, a member that does not bind is unreserved,
// forgotten by the cache and failed back to the queue.
#ifndef GANTRY_SRC_SCHEDULER_BINDER_H_
#define GANTRY_SRC_SCHEDULER_BINDER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gantry/clock.h"
#include "gantry/cluster_writer.h"
#include "src/framework/framework.h"
#include "src/queue/scheduling_queue.h"
#include "src/scheduler/binding_pool.h"
#include "src/scheduler/failure.h"
#include "src/scheduler/group_status.h"
#include "src/scheduler/outcome.h"
#include "src/state/cluster_state.h"

namespace gantry::scheduler {

// A pod assumed on `node` and reserved there, to be bound.
struct BindTask {
  framework::QueuedPodInfo qpi;
  framework::Framework* fw;
  std::unique_ptr<framework::CycleState> state;
  std::string node;
  int64_t cycle_micros;  // the scheduling (or group) cycle's duration
};

// The placement of one group cycle, bound together.
struct GangLeaf {
  state::GroupInfo info;
  int already = 0;  // members running before this cycle
};
struct GangBindTask {
  std::vector<BindTask> members;
  std::vector<size_t> leaf_of;  // per member: index into leaves
  std::vector<GangLeaf> leaves;
};

// Thread-safe; binding cycles of different pods run concurrently.
class Binder {
 public:
  // `binding_workers`: 0 binds inline; > 0 is the binding pool's size.
  Binder(state::ClusterState& state, framework::ClusterWriter& writer, const Clock& clock,
         queue::SchedulingQueue& queue, FailureHandler& failure, Observers& observers,
         GroupStatusWriter& group_status, int binding_workers)
      : state_(state),
        writer_(writer),
        clock_(clock),
        queue_(queue),
        failure_(failure),
        observers_(observers),
        group_status_(group_status),
        pool_(binding_workers) {}

  // Binds one pod.
  void Bind(BindTask task);
  // Binds a group cycle's members: every member's PreBind runs before any
  // member's Bind, so a PreBind failure binds no member; a member whose Bind
  // fails is failed back; a leaf left bound below its minCount is reported on
  // its PodGroup (gantry.dev/BoundBelowQuorum) until a later binding
  // completes it.
  void BindGang(GangBindTask task);

  // Waits until every binding started so far has finished.
  void Wait() { pool_.Wait(); }
  BindingPoolStats Stats() { return pool_.Stats(); }

 private:
  void RunBindingCycle(BindTask task);
  void RunGangBindingCycle(GangBindTask task);
  // Bind with retries of retriable failures (transport, 5xx, 429, Conflict).
  framework::Status BindWithRetries(BindTask& task);
  // A bound member: FinishBinding, PostBind, the Scheduled event, observers.
  void FinishBound(BindTask& task);
  // A member that will not bind: Unreserve, Forget, fail with `st`.
  void Abandon(BindTask task, const framework::Status& st);
  // Quorum after a gang's binding, per leaf: writes or clears BoundBelowQuorum.
  void ReportQuorum(const GangLeaf& leaf, int bound, int failed, const std::string& failure,
                    const std::string& scheduler_name);

  state::ClusterState& state_;
  framework::ClusterWriter& writer_;
  const Clock& clock_;
  queue::SchedulingQueue& queue_;
  FailureHandler& failure_;
  Observers& observers_;
  GroupStatusWriter& group_status_;
  // Leaves reported bound below quorum, by group key, until a later binding
  // completes them.
  std::mutex below_quorum_mu_;
  absl::flat_hash_map<std::string, state::GroupInfo> below_quorum_;
  // Last: destroyed first, so queued jobs finish while the rest is alive.
  BindingPool pool_;
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_BINDER_H_
