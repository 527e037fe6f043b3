#include "plugins/node_ports/node_ports.h"

#include <memory>
#include <string>

namespace gantry::plugins::node_ports {

namespace {
const framework::StateKey kPreFilterKey{kPreFilterStateKey};

struct PreFilterState final : framework::StateData {
  std::vector<api::HostPort> ports;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

bool IsWildcard(api::Symbol ip) { return ip.empty() || ip.view() == "0.0.0.0" || ip.view() == "::"; }

// Whether two host ports collide (upstream HostPortInfo semantics).
bool Conflicts(const api::HostPort& a, const api::HostPort& b) {
  if (a.port != b.port || a.protocol != b.protocol) return false;
  return IsWildcard(a.host_ip) || IsWildcard(b.host_ip) || a.host_ip == b.host_ip;
}

}  // namespace

bool FitsPorts(const std::vector<api::HostPort>& ports, const framework::NodeInfo& node) {
  const framework::HostPortInfo& used = node.used_ports();
  for (const api::HostPort& p : ports) {
    if (used.CheckConflict(p.host_ip, p.protocol, p.port)) return false;
  }
  return true;
}

framework::Status NodePorts::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                       const std::vector<framework::NodeInfo*>&, framework::PreFilterResult*) {
  const std::vector<api::HostPort>& ports = pod.p().host_ports;
  if (ports.empty()) return framework::Status::Skip();
  auto s = std::make_unique<PreFilterState>();
  s->ports = ports;
  state.Write(kPreFilterKey, std::move(s));
  return framework::Status();
}

framework::Status NodePorts::Filter(const framework::CycleState& state, const framework::PodInfo&,
                                    const framework::NodeInfo& node) {
  const PreFilterState* s = state.Get<PreFilterState>(kPreFilterKey);
  if (s == nullptr) return framework::Status::FromAbsl(state.Read<PreFilterState>(kPreFilterKey).status());
  if (FitsPorts(s->ports, node)) return framework::Status();
  return framework::Status::Unschedulable(std::string(kErrReason));
}

std::vector<framework::ClusterEventWithHint> NodePorts::EventsToRegister() const {
  framework::ClusterEventWithHint pod_event;
  // spec.containers[*].ports is immutable, so only deletions can free ports.
  pod_event.event = {framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete"};
  pod_event.hint = [](const api::Pod& pod, const framework::ClusterEvent&, const void* old_obj, const void*) {
    const auto* deleted = static_cast<const api::Pod*>(old_obj);
    if (deleted == nullptr || deleted->node_name.empty()) return framework::QueueingHint::kSkip;
    for (const api::HostPort& a : deleted->host_ports) {
      for (const api::HostPort& b : pod.host_ports) {
        if (Conflicts(a, b)) return framework::QueueingHint::kQueue;
      }
    }
    return framework::QueueingHint::kSkip;
  };
  framework::ClusterEventWithHint node_event;
  node_event.event = {framework::EventResource::kNode, framework::kAdd, "NodeAdd"};
  return {std::move(pod_event), std::move(node_event)};
}

bool NodePorts::SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const {
  return a.p().host_ports == b.p().host_ports;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder&, api::JsonValue, framework::FrameworkHandle&)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> { return std::make_unique<NodePorts>(); },
      nullptr, ""});
}

}  // namespace gantry::plugins::node_ports
