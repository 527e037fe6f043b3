#include "plugins/node_unschedulable/node_unschedulable.h"

#include <memory>
#include <string>

namespace gantry::plugins::node_unschedulable {

bool ToleratesUnschedulable(const std::vector<api::Toleration>& tolerations) {
  static const api::Taint kTaint{api::Symbol::Intern(kTaintNodeUnschedulable), api::Symbol(),
                                 api::TaintEffect::kNoSchedule, 0};
  return api::TaintTolerated(kTaint, tolerations);
}

framework::Status NodeUnschedulable::Filter(const framework::CycleState&, const framework::PodInfo& pod,
                                            const framework::NodeInfo& node) {
  if (node.node() == nullptr) {
    return framework::Status::Unresolvable(std::string(kErrReasonUnknownCondition));
  }
  if (!node.unschedulable()) return framework::Status();
  if (ToleratesUnschedulable(pod.p().tolerations)) return framework::Status();
  return framework::Status::Unresolvable(std::string(kErrReasonUnschedulable));
}

std::vector<framework::ClusterEventWithHint> NodeUnschedulable::EventsToRegister() const {
  framework::ClusterEventWithHint node_event;
  node_event.event = {framework::EventResource::kNode, framework::kAdd | framework::kUpdateNodeTaint,
                      "NodeAddOrTaintChange"};
  node_event.hint = [](const api::Pod&, const framework::ClusterEvent&, const void* old_obj,
                       const void* new_obj) {
    const auto* before = static_cast<const api::Node*>(old_obj);
    const auto* after = static_cast<const api::Node*>(new_obj);
    if (after == nullptr) return framework::QueueingHint::kSkip;
    // Queue on: added schedulable node, or unschedulable -> schedulable.
    if ((before == nullptr && !after->unschedulable) ||
        (before != nullptr && before->unschedulable && !after->unschedulable)) {
      return framework::QueueingHint::kQueue;
    }
    return framework::QueueingHint::kSkip;
  };
  framework::ClusterEventWithHint pod_event;
  pod_event.event = {framework::EventResource::kUnscheduledPod, framework::kUpdatePodToleration,
                     "UnscheduledPodUpdateToleration"};
  pod_event.hint = [](const api::Pod& pod, const framework::ClusterEvent&, const void*,
                      const void* new_obj) {
    const auto* modified = static_cast<const api::Pod*>(new_obj);
    if (modified == nullptr || modified->meta.uid != pod.meta.uid) return framework::QueueingHint::kSkip;
    return ToleratesUnschedulable(modified->tolerations) ? framework::QueueingHint::kQueue
                                                         : framework::QueueingHint::kSkip;
  };
  return {std::move(node_event), std::move(pod_event)};
}

bool NodeUnschedulable::SameNodeResults(const framework::PodInfo& a,
                                        const framework::PodInfo& b) const {
  return a.p().tolerations == b.p().tolerations;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder&, api::JsonValue, framework::FrameworkHandle&)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        return std::make_unique<NodeUnschedulable>();
      },
      nullptr, ""});
}

}  // namespace gantry::plugins::node_unschedulable
