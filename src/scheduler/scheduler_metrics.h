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
//   - SchedulerPluginMetrics: the frameworks' PluginMetrics (what plugins
//     record through FrameworkHandle::Metrics()).
//
// Live wiring (after BuildScheduler, before scheduling starts):
//   auto attached = scheduler::AttachSchedulerMetrics(*bundle->scheduler, metrics);
//   ... run; `attached` must be destroyed before the scheduler.
#ifndef GANTRY_SRC_SCHEDULER_SCHEDULER_METRICS_H_
#define GANTRY_SRC_SCHEDULER_SCHEDULER_METRICS_H_

#include <memory>
#include <string_view>

#include "gantry/metrics.h"
#include "src/framework/framework.h"
#include "src/metrics/metrics.h"
#include "src/queue/scheduling_queue.h"
#include "src/scheduler/scheduler.h"

namespace gantry::scheduler {

using metrics::SchedulerMetrics;

class SchedulerMetricsObserver : public AttemptObserver {
 public:
  explicit SchedulerMetricsObserver(SchedulerMetrics& metrics) : metrics_(metrics) {}
  void OnAttempt(const AttemptOutcome& outcome) override;
  void OnGroup(const GroupOutcome& outcome) override;

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

class SchedulerPluginMetrics final : public framework::PluginMetrics {
 public:
  explicit SchedulerPluginMetrics(SchedulerMetrics& metrics);
  void PreemptionAttempted() override { preemption_attempts_.Inc(); }
  void PreemptionVictims(int victims) override { preemption_victims_.Observe(victims); }
  void DraAllocationDuration(double seconds) override { dra_allocation_.Observe(seconds); }
  void CelEvaluations(int64_t count) override {
    if (count > 0) cel_evaluations_.Inc(static_cast<double>(count));
  }

 private:
  metrics::Counter& preemption_attempts_;
  metrics::Histogram& preemption_victims_;
  metrics::Histogram& dra_allocation_;
  metrics::Counter& cel_evaluations_;
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
  metrics::Registry::HookId hook_ = 0;
};

// All of the above attached to a scheduler (observer, queue collector, every
// profile's extension points and plugin metrics); detaches on destruction.
class AttachedSchedulerMetrics {
 public:
  AttachedSchedulerMetrics(Scheduler& scheduler, SchedulerMetrics& metrics);
  ~AttachedSchedulerMetrics();
  AttachedSchedulerMetrics(const AttachedSchedulerMetrics&) = delete;
  AttachedSchedulerMetrics& operator=(const AttachedSchedulerMetrics&) = delete;

 private:
  Scheduler& scheduler_;
  SchedulerMetricsObserver observer_;
  ExtensionPointMetrics points_;
  SchedulerPluginMetrics plugin_metrics_;
  QueueMetricsCollector collector_;
};

std::unique_ptr<AttachedSchedulerMetrics> AttachSchedulerMetrics(Scheduler& scheduler,
                                                                 SchedulerMetrics& metrics);

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_SCHEDULER_METRICS_H_
