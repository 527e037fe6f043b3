// The scheduling loop's step: pops the next pod (or group), runs its
// profile's framework on a fresh snapshot, assumes the chosen node, runs
// Reserve and Permit, and hands the pod to the binder; on rejection it runs
// PostFilter (preemption) and fails the attempt upstream's way.
#ifndef GANTRY_SRC_SCHEDULER_SCHEDULING_LOOP_H_
#define GANTRY_SRC_SCHEDULER_SCHEDULING_LOOP_H_

#include "src/queue/scheduling_queue.h"
#include "src/scheduler/binder.h"
#include "src/scheduler/cycle_context.h"
#include "src/scheduler/failure.h"
#include "src/scheduler/group_cycle.h"
#include "src/scheduler/profiles.h"
#include "src/state/cluster_state.h"

namespace gantry::scheduler {

// One thread runs the loop.
class SchedulingLoop {
 public:
  SchedulingLoop(state::ClusterState& state, queue::SchedulingQueue& queue,
                 const Profiles& profiles, CycleContext& cycles, FailureHandler& failure,
                 Binder& binder, GroupCycle& group_cycle)
      : state_(state),
        queue_(queue),
        profiles_(profiles),
        cycles_(cycles),
        failure_(failure),
        binder_(binder),
        group_cycle_(group_cycle) {}

  // Runs one scheduling cycle (a group cycle for a group member). Blocking
  // waits for a pod; non-blocking returns false at once when the active
  // queue is empty.
  bool ScheduleOne(bool blocking);

 private:
  // The cycle of one pod that is not a group member.
  void SchedulePod(framework::QueuedPodInfo qpi, framework::Framework* fw, int64_t cycle,
                   int64_t start);

  state::ClusterState& state_;
  queue::SchedulingQueue& queue_;
  const Profiles& profiles_;
  CycleContext& cycles_;
  FailureHandler& failure_;
  Binder& binder_;
  GroupCycle& group_cycle_;
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_SCHEDULING_LOOP_H_
