// NodeName (Filter): a pod with spec.nodeName only fits that node.
// Upstream: pkg/scheduler/framework/plugins/nodename.
#ifndef GANTRY_PLUGINS_NODE_NAME_NODE_NAME_H_
#define GANTRY_PLUGINS_NODE_NAME_NODE_NAME_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"

namespace gantry::plugins::node_name {

inline constexpr std::string_view kName = "NodeName";
inline constexpr std::string_view kErrReason = "node(s) didn't match the requested node name";

class NodeName final : public framework::FilterPlugin,
                       public framework::EnqueueExtensions,
                       public framework::NodeLocalPlugin {
 public:
  std::string_view Name() const override { return kName; }
  // UnschedulableAndUnresolvable when spec.nodeName is set and differs.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Node/Add, queued only when the new node is the requested one.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  // Filter reads the node name and the pod's spec.nodeName only.
  bool SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const override;
};

// True if the pod names no node or names `node_name`.
bool Fits(const api::Pod& pod, std::string_view node_name);

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::node_name

#endif  // GANTRY_PLUGINS_NODE_NAME_NODE_NAME_H_
