#include "plugins/scheduling_gates/scheduling_gates.h"

#include <memory>
#include <string>

namespace gantry::plugins::scheduling_gates {

static_assert(std::is_base_of_v<framework::PreEnqueuePlugin, SchedulingGates>);

framework::Status SchedulingGates::PreEnqueue(const framework::PodInfo& pod) {
  const std::vector<api::Symbol>& gates = pod.p().scheduling_gates;
  if (gates.empty()) return framework::Status();
  // Go's %v of a []string: "[a b c]".
  std::string msg = "waiting for scheduling gates: [";
  for (size_t i = 0; i < gates.size(); ++i) {
    if (i > 0) msg += ' ';
    msg += gates[i].view();
  }
  msg += ']';
  return framework::Status::Unresolvable(std::move(msg));
}

std::vector<framework::ClusterEventWithHint> SchedulingGates::EventsToRegister() const {
  framework::ClusterEventWithHint e;
  e.event = {framework::EventResource::kPod, framework::kUpdatePodSchedulingGatesEliminated,
             "PodSchedulingGateEliminatedChange"};
  e.hint = [](const api::Pod& pod, const framework::ClusterEvent&, const void*, const void* new_obj) {
    const auto* modified = static_cast<const api::Pod*>(new_obj);
    if (modified == nullptr || modified->meta.uid != pod.meta.uid) return framework::QueueingHint::kSkip;
    return framework::QueueingHint::kQueue;
  };
  return {std::move(e)};
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder&, api::JsonValue, framework::FrameworkHandle&)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        return std::make_unique<SchedulingGates>();
      },
      nullptr, ""});
}

}  // namespace gantry::plugins::scheduling_gates
