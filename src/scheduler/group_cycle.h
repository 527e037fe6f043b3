// The group cycle: a PodGroup's pending members (a CompositePodGroup tree's,
// when the group sits in one) scheduled together on one snapshot, bound
// only when the root's quorum is reached; otherwise nothing is held and
// every member goes back to the queue with a message that says how many fit
// where. See group_cycle.cc for the placement search.
#ifndef GANTRY_SRC_SCHEDULER_GROUP_CYCLE_H_
#define GANTRY_SRC_SCHEDULER_GROUP_CYCLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/framework/framework.h"
#include "src/queue/scheduling_queue.h"
#include "src/scheduler/binder.h"
#include "src/scheduler/cycle_context.h"
#include "src/scheduler/failure.h"
#include "src/scheduler/foreign_members.h"
#include "src/scheduler/group_preemption.h"
#include "src/scheduler/group_status.h"
#include "src/scheduler/outcome.h"
#include "src/state/cluster_state.h"

namespace gantry::scheduler {

struct TopologyDomainCache;  // group_cycle.cc

// Runs on the scheduling loop's thread.
class GroupCycle {
 public:
  GroupCycle(state::ClusterState& state, queue::SchedulingQueue& queue, CycleContext& cycles,
             FailureHandler& failure, Binder& binder, GroupStatusWriter& group_status,
             ForeignGroupMembers& foreign, Observers& observers,
             GroupPreemptionEvaluator& preemption);
  ~GroupCycle();
  GroupCycle(const GroupCycle&) = delete;
  GroupCycle& operator=(const GroupCycle&) = delete;

  // Schedules the group of `first` (group key `key`) in scheduling cycle
  // `cycle`, started at `start_micros` (MonotonicMicros). `group` is
  // nullopt when the PodGroup object does not exist (yet).
  void Run(framework::QueuedPodInfo first, const std::string& key,
           const std::optional<state::GroupInfo>& group, framework::Framework* fw, int64_t cycle,
           int64_t start_micros);

 private:
  struct Failure;
  // The failure path of a group cycle: every member in `members` fails
  // (FailedScheduling event, PodScheduled=False, requeued as unschedulable
  // by "GangScheduling" so any cluster event retries the group), every group
  // in `groups` not yet scheduled gets PodGroupInitiallyScheduled=False with
  // the failure's reason and message, and the observers see one
  // GroupOutcome. Nothing of the cycle is held.
  void Fail(framework::Framework* fw, std::vector<framework::QueuedPodInfo> members,
            const std::vector<state::GroupInfo>& groups, const Failure& failure, int64_t cycle,
            int64_t start_micros);

  state::ClusterState& state_;
  queue::SchedulingQueue& queue_;
  CycleContext& cycles_;
  FailureHandler& failure_;
  Binder& binder_;
  GroupStatusWriter& group_status_;
  ForeignGroupMembers& foreign_;
  Observers& observers_;
  GroupPreemptionEvaluator& preemption_;
  // Topology domains of the snapshot's nodes per label key, reused while no
  // node is added, removed or relabelled.
  std::unique_ptr<TopologyDomainCache> domain_cache_;
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_GROUP_CYCLE_H_
