// What plugins record in the scheduler's metrics beyond what the framework
// measures for them (extension point and plugin durations). A plugin reaches
// it through FrameworkHandle::Metrics(); every method is thread-safe and
// cheap enough for Filter. Handles without metrics hand out NoPluginMetrics,
// so recording never needs a null check.
#ifndef GANTRY_METRICS_H_
#define GANTRY_METRICS_H_

#include <cstdint>

namespace gantry::framework {

class PluginMetrics {
 public:
  virtual ~PluginMetrics() = default;
  // scheduler_preemption_attempts_total: one PostFilter preemption run.
  virtual void PreemptionAttempted() = 0;
  // scheduler_preemption_victims: the victims of the candidate one preemption chose.
  virtual void PreemptionVictims(int victims) = 0;
  // gantry_dra_allocation_duration_seconds: one device search on one node.
  virtual void DraAllocationDuration(double seconds) = 0;
  // gantry_cel_evaluations_total: `count` DRA selector evaluations.
  virtual void CelEvaluations(int64_t count) = 0;
};

// Records nothing.
class NoPluginMetrics final : public PluginMetrics {
 public:
  void PreemptionAttempted() override {}
  void PreemptionVictims(int) override {}
  void DraAllocationDuration(double) override {}
  void CelEvaluations(int64_t) override {}

  // A shared instance (stateless).
  static NoPluginMetrics& Instance() {
    static NoPluginMetrics instance;
    return instance;
  }
};

}  // namespace gantry::framework

#endif  // GANTRY_METRICS_H_
