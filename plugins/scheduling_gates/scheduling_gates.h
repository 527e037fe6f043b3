// SchedulingGates (PreEnqueue): keeps a pod out of the active queue while
// spec.schedulingGates is non-empty. Upstream: pkg/scheduler/framework/
// plugins/schedulinggates.
#ifndef GANTRY_PLUGINS_SCHEDULING_GATES_SCHEDULING_GATES_H_
#define GANTRY_PLUGINS_SCHEDULING_GATES_SCHEDULING_GATES_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"

namespace gantry::plugins::scheduling_gates {

inline constexpr std::string_view kName = "SchedulingGates";

class SchedulingGates final : public framework::PreEnqueuePlugin,
                              public framework::EnqueueExtensions {
 public:
  std::string_view Name() const override { return kName; }
  // Success without gates; otherwise UnschedulableAndUnresolvable with
  // "waiting for scheduling gates: [g1 g2]".
  framework::Status PreEnqueue(const framework::PodInfo& pod) override;
  // Pod/UpdatePodSchedulingGatesEliminated, queued only for the pod itself.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
};

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::scheduling_gates

#endif  // GANTRY_PLUGINS_SCHEDULING_GATES_SCHEDULING_GATES_H_
