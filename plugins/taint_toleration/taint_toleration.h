// TaintToleration (Filter, PreScore, Score): a pod must tolerate every
// NoSchedule / NoExecute taint of a node; among feasible nodes, fewer
// untolerated PreferNoSchedule taints score higher. Upstream:
// pkg/scheduler/framework/plugins/tainttoleration. Default weight 3.
#ifndef GANTRY_PLUGINS_TAINT_TOLERATION_TAINT_TOLERATION_H_
#define GANTRY_PLUGINS_TAINT_TOLERATION_TAINT_TOLERATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"

namespace gantry::plugins::taint_toleration {

inline constexpr std::string_view kName = "TaintToleration";
inline constexpr std::string_view kPreScoreStateKey = "PreScoreTaintToleration";

class TaintToleration final : public framework::FilterPlugin,
                              public framework::PreScorePlugin,
                              public framework::ScorePlugin,
                              public framework::EnqueueExtensions,
                              public framework::NodeLocalPlugin {
 public:
  std::string_view Name() const override { return kName; }

  // UnschedulableAndUnresolvable "node(s) had untolerated taint {key: value}"
  // naming the first untolerated NoSchedule/NoExecute taint.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;

  // Stores the pod's tolerations with effect PreferNoSchedule or empty.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  // Raw score: number of PreferNoSchedule taints the pod does not tolerate.
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  bool HasNormalizeScore() const override { return true; }
  // Reverse normalisation: the node with the most intolerable taints gets 0.
  framework::Status NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                                   std::vector<framework::NodeScore>& scores) override;

  // Node/Add|UpdateNodeTaint (queue when the node becomes tolerated) and
  // UnscheduledPod/UpdatePodToleration (queue for the pod itself).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  // Filter and Score read the node's taints and the pod's tolerations only.
  bool SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const override;
};

// The first NoSchedule/NoExecute taint of `taints` not tolerated, or null.
const api::Taint* FindUntoleratedTaint(absl::Span<const api::Taint> taints,
                                       const std::vector<api::Toleration>& tolerations);

// Upstream's reason text for an untolerated taint.
std::string UntoleratedTaintReason(const api::Taint& taint);

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::taint_toleration

#endif  // GANTRY_PLUGINS_TAINT_TOLERATION_TAINT_TOLERATION_H_
