#include "plugins/node_name/node_name.h"

#include <memory>
#include <string>

namespace gantry::plugins::node_name {

bool Fits(const api::Pod& pod, std::string_view node_name) {
  return pod.node_name.empty() || pod.node_name.view() == node_name;
}

framework::Status NodeName::Filter(const framework::CycleState&, const framework::PodInfo& pod,
                                   const framework::NodeInfo& node) {
  if (pod.p().node_name.empty() || Fits(pod.p(), node.name())) return framework::Status();
  return framework::Status::Unresolvable(std::string(kErrReason));
}

std::vector<framework::ClusterEventWithHint> NodeName::EventsToRegister() const {
  framework::ClusterEventWithHint e;
  e.event = {framework::EventResource::kNode, framework::kAdd, "NodeAdd"};
  e.hint = [](const api::Pod& pod, const framework::ClusterEvent&, const void*, const void* new_obj) {
    const auto* node = static_cast<const api::Node*>(new_obj);
    if (node == nullptr || !Fits(pod, node->meta.name)) return framework::QueueingHint::kSkip;
    return framework::QueueingHint::kQueue;
  };
  return {std::move(e)};
}

bool NodeName::SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const {
  return a.p().node_name == b.p().node_name;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder&, api::JsonValue, framework::FrameworkHandle&)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> { return std::make_unique<NodeName>(); },
      nullptr, ""});
}

}  // namespace gantry::plugins::node_name
