// NodeUnschedulable (Filter): rejects nodes with spec.unschedulable unless
// the pod tolerates the node.kubernetes.io/unschedulable:NoSchedule taint.
// Upstream: pkg/scheduler/framework/plugins/nodeunschedulable.
#ifndef GANTRY_PLUGINS_NODE_UNSCHEDULABLE_NODE_UNSCHEDULABLE_H_
#define GANTRY_PLUGINS_NODE_UNSCHEDULABLE_NODE_UNSCHEDULABLE_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"

namespace gantry::plugins::node_unschedulable {

inline constexpr std::string_view kName = "NodeUnschedulable";
inline constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";
inline constexpr std::string_view kErrReasonUnknownCondition = "node(s) had unknown conditions";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

class NodeUnschedulable final : public framework::FilterPlugin,
                                public framework::EnqueueExtensions,
                                public framework::NodeLocalPlugin {
 public:
  std::string_view Name() const override { return kName; }
  // UnschedulableAndUnresolvable "node(s) were unschedulable" for a cordoned
  // node the pod does not tolerate; Success otherwise.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Node/Add|UpdateNodeTaint (spec.unschedulable changes are reported as
  // taint updates, as upstream does) and UnscheduledPod/UpdatePodToleration.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  // Filter reads the node and the pod's tolerations only.
  bool SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const override;
};

// True if `tolerations` tolerate node.kubernetes.io/unschedulable:NoSchedule.
bool ToleratesUnschedulable(const std::vector<api::Toleration>& tolerations);

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::node_unschedulable

#endif  // GANTRY_PLUGINS_NODE_UNSCHEDULABLE_NODE_UNSCHEDULABLE_H_
