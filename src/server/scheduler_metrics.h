// Feeds the scheduler's metrics from the engine:
//   - SchedulerMetricsObserver: an AttemptObserver recording every attempt
//     (scheduler_schedule_attempts_total, ..._attempt_duration_seconds) and
//     every scheduled pod (scheduler_pod_scheduling_sli_duration_seconds,
//     scheduler_pod_scheduling_attempts);
//   - ExtensionPointMetrics: the frameworks' ExtensionPointObserver
//     (scheduler_framework_extension_point_duration_seconds);
//   - QueueMetricsCollector: a collect hook that reads the queue at scrape
//     time (scheduler_pending_pods, scheduler_queue_incoming_pods_total,
//     scheduler_unschedulable_pods).
//
// Live wiring (after BuildScheduler):
//   auto attached = server::AttachSchedulerMetrics(*bundle->scheduler, server::GlobalMetrics());
//   ... run; `attached` must be destroyed before the scheduler.
#ifndef GANTRY_SRC_SERVER_SCHEDULER_METRICS_H_
#define GANTRY_SRC_SERVER_SCHEDULER_METRICS_H_

#include <memory>
#include <string_view>

#include "src/framework/framework.h"
#include "src/queue/scheduling_queue.h"
#include "src/scheduler/scheduler.h"
#include "src/server/metrics.h"

namespace gantry::server {

class SchedulerMetricsObserver : public scheduler::AttemptObserver {
 public:
  explicit SchedulerMetricsObserver(SchedulerMetrics& metrics) : metrics_(metrics) {}
  void OnAttempt(const scheduler::AttemptOutcome& outcome) override;
  void OnGroup(const scheduler::GroupOutcome& outcome) override;

 private:
  SchedulerMetrics& metrics_;
};

class ExtensionPointMetrics : public framework::ExtensionPointObserver {
 public:
  explicit ExtensionPointMetrics(SchedulerMetrics& metrics) : metrics_(metrics) {}
  void ObserveExtensionPoint(std::string_view point, std::string_view status, std::string_view profile,
                             double seconds) override;

 private:
  SchedulerMetrics& metrics_;
};

// Registers a collect hook on metrics.registry for as long as it lives.
class QueueMetricsCollector {
 public:
  QueueMetricsCollector(SchedulerMetrics& metrics, const queue::SchedulingQueue& queue);
  ~QueueMetricsCollector();
  QueueMetricsCollector(const QueueMetricsCollector&) = delete;
  QueueMetricsCollector& operator=(const QueueMetricsCollector&) = delete;

  // What the hook does (public for tests).
  void Collect();

 private:
  SchedulerMetrics& metrics_;
  const queue::SchedulingQueue& queue_;
  Registry::HookId hook_ = 0;
};

// All of the above attached to a scheduler (observer, queue collector, every
// profile's extension points); detaches on destruction.
class AttachedSchedulerMetrics {
 public:
  AttachedSchedulerMetrics(scheduler::Scheduler& scheduler, SchedulerMetrics& metrics);
  ~AttachedSchedulerMetrics();
  AttachedSchedulerMetrics(const AttachedSchedulerMetrics&) = delete;
  AttachedSchedulerMetrics& operator=(const AttachedSchedulerMetrics&) = delete;

 private:
  scheduler::Scheduler& scheduler_;
  SchedulerMetricsObserver observer_;
  ExtensionPointMetrics points_;
  QueueMetricsCollector collector_;
};

std::unique_ptr<AttachedSchedulerMetrics> AttachSchedulerMetrics(scheduler::Scheduler& scheduler,
                                                                 SchedulerMetrics& metrics);

}  // namespace gantry::server

#endif  // GANTRY_SRC_SERVER_SCHEDULER_METRICS_H_
