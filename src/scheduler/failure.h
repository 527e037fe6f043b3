// The failure path of a scheduling attempt, upstream's way: a
// FailedScheduling event, PodScheduled=False with the FitError message (and
// the nominated node, if preemption chose one), the pod requeued as
// unschedulable by the plugins that rejected it, and the observers told.
#ifndef GANTRY_SRC_SCHEDULER_FAILURE_H_
#define GANTRY_SRC_SCHEDULER_FAILURE_H_

#include <cstdint>
#include <string>

#include "gantry/cluster_writer.h"
#include "src/framework/framework.h"
#include "src/framework/schedule_pod.h"
#include "src/queue/scheduling_queue.h"
#include "src/scheduler/outcome.h"

namespace gantry::scheduler {

// An event note cut to the length the events API keeps.
std::string TruncateEventNote(const std::string& note);

// Thread-safe (the writer, queue and observers are).
class FailureHandler {
 public:
  FailureHandler(framework::ClusterWriter& writer, queue::SchedulingQueue& queue,
                 Observers& observers)
      : writer_(writer), queue_(queue), observers_(observers) {}

  // Fails one attempt of `qpi` in scheduling cycle `cycle`. `fit_error` is
  // the diagnosis when the filters ran (its message wins over `status`'s).
  void Fail(framework::Framework* fw, framework::QueuedPodInfo qpi, const framework::Status& status,
            const framework::FitError* fit_error, const std::string& nominated_node,
            int64_t duration_micros, int64_t cycle);
  // Fails one member of a group cycle. Its rejecting plugin is
  // "GangScheduling", which registers no events, so any cluster change
  // retries the group. `scheduler_error`: an infrastructure failure rather
  // than a verdict.
  void FailGroupMember(framework::Framework* fw, framework::QueuedPodInfo qpi,
                       const std::string& message, int64_t duration_micros, int64_t cycle,
                       bool scheduler_error = false, const std::string& nominated_node = "");

 private:
  framework::ClusterWriter& writer_;
  queue::SchedulingQueue& queue_;
  Observers& observers_;
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_FAILURE_H_
