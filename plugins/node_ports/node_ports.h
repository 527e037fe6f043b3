// NodePorts (PreFilter, Filter): the pod's hostPorts must be free on the
// node (same protocol and port on the same or a wildcard host IP conflicts).
// Upstream: pkg/scheduler/framework/plugins/nodeports.
#ifndef GANTRY_PLUGINS_NODE_PORTS_NODE_PORTS_H_
#define GANTRY_PLUGINS_NODE_PORTS_NODE_PORTS_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"

namespace gantry::plugins::node_ports {

inline constexpr std::string_view kName = "NodePorts";
inline constexpr std::string_view kPreFilterStateKey = "PreFilterNodePorts";
inline constexpr std::string_view kErrReason = "node(s) didn't have free ports for the requested pod ports";

class NodePorts final : public framework::PreFilterPlugin,
                        public framework::FilterPlugin,
                        public framework::EnqueueExtensions,
                        public framework::NodeLocalPlugin {
 public:
  std::string_view Name() const override { return kName; }
  // Skip when the pod asks for no host port; otherwise stores the ports.
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              const std::vector<framework::NodeInfo*>& nodes,
                              framework::PreFilterResult* result) override;
  // Unschedulable (preemption may free a port) with kErrReason on conflict;
  // Error when PreFilter state is missing.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // AssignedPod/Delete (queue when the deleted pod held a conflicting port)
  // and Node/Add.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  // Filter reads the node's used ports and the pod's host ports only.
  bool SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const override;
};

// True if none of `ports` conflicts with the node's used ports.
bool FitsPorts(const std::vector<api::HostPort>& ports, const framework::NodeInfo& node);

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::node_ports

#endif  // GANTRY_PLUGINS_NODE_PORTS_NODE_PORTS_H_
