#include "src/scheduler/scheduler_metrics.h"

#include <map>
#include <string>
#include <utility>

namespace gantry::scheduler {

void SchedulerMetricsObserver::OnAttempt(const AttemptOutcome& o) {
  const double seconds = static_cast<double>(o.duration_micros) / 1e6;
  metrics_.schedule_attempts.With({o.result, o.profile}).Inc();
  metrics_.scheduling_attempt_duration.With({o.result, o.profile}).Observe(seconds);
  if (o.result == "scheduled" && o.attempts > 0) {
    metrics_.ObservePodScheduled(o.attempts, static_cast<double>(o.since_first_attempt_micros) / 1e6);
  }
}

void SchedulerMetricsObserver::OnGroup(const GroupOutcome& o) {
  metrics_.gang_placement_duration.Get().Observe(static_cast<double>(o.duration_micros) / 1e6);
}

void ExtensionPointMetrics::ObserveExtensionPoint(std::string_view point, std::string_view status,
                                                  std::string_view profile, double seconds) {
  metrics_.ObserveExtensionPoint(point, status, profile, seconds);
}

SchedulerPluginMetrics::SchedulerPluginMetrics(SchedulerMetrics& metrics)
    : preemption_attempts_(metrics.preemption_attempts.Get()),
      preemption_victims_(metrics.preemption_victims.Get()),
      dra_allocation_(metrics.dra_allocation_duration.Get()),
      cel_evaluations_(metrics.cel_evaluations.Get()) {}

QueueMetricsCollector::QueueMetricsCollector(SchedulerMetrics& metrics, const queue::SchedulingQueue& queue)
    : metrics_(metrics), queue_(queue) {
  hook_ = metrics_.registry.AddCollectHook([this] { Collect(); });
}

QueueMetricsCollector::~QueueMetricsCollector() { metrics_.registry.RemoveCollectHook(hook_); }

void QueueMetricsCollector::Collect() {
  queue::QueueMetrics m = queue_.Metrics();
  metrics_.pending_pods.With({"active"}).Set(static_cast<double>(m.pending.active));
  metrics_.pending_pods.With({"backoff"}).Set(static_cast<double>(m.pending.backoff));
  metrics_.pending_pods.With({"unschedulable"}).Set(static_cast<double>(m.pending.unschedulable));
  metrics_.pending_pods.With({"gated"}).Set(static_cast<double>(m.pending.gated));
  for (const queue::IncomingPods& in : m.incoming) {
    metrics_.queue_incoming_pods.With({in.queue, in.event}).Mirror(static_cast<double>(in.count));
  }
  // scheduler_unschedulable_pods: only pods sitting in the unschedulable set,
  // attributed to each plugin that rejected them and to their profile.
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  if (m.pending.unschedulable > 0) {
    for (const framework::PodInfoPtr& pod : queue_.PendingPodInfos()) {
      std::optional<queue::QueueName> where = queue_.Where(pod->uid());
      if (!where || *where != queue::QueueName::kUnschedulable) continue;
      std::optional<framework::QueuedPodInfo> qpi = queue_.Get(pod->uid());
      if (!qpi) continue;
      std::string profile = pod->p().scheduler_name.str();
      for (const std::string& plugin : qpi->unschedulable_plugins) counts[{plugin, profile}]++;
    }
  }
  metrics_.unschedulable_pods.Clear();
  for (const auto& [key, n] : counts) {
    metrics_.unschedulable_pods.With({key.first, key.second}).Set(static_cast<double>(n));
  }
}

AttachedSchedulerMetrics::AttachedSchedulerMetrics(Scheduler& scheduler, SchedulerMetrics& metrics)
    : scheduler_(scheduler),
      observer_(metrics),
      points_(metrics),
      plugin_metrics_(metrics),
      collector_(metrics, scheduler.queue()) {
  scheduler_.AddObserver(&observer_);
  for (const auto& fw : scheduler_.profiles()) {
    fw->SetExtensionPointObserver(&points_);
    fw->SetPluginMetrics(&plugin_metrics_);
  }
}

AttachedSchedulerMetrics::~AttachedSchedulerMetrics() {
  scheduler_.RemoveObserver(&observer_);
  for (const auto& fw : scheduler_.profiles()) {
    fw->SetExtensionPointObserver(nullptr);
    fw->SetPluginMetrics(nullptr);
  }
}

std::unique_ptr<AttachedSchedulerMetrics> AttachSchedulerMetrics(Scheduler& scheduler,
                                                                 SchedulerMetrics& metrics) {
  return std::make_unique<AttachedSchedulerMetrics>(scheduler, metrics);
}

}  // namespace gantry::scheduler
