// NodeResourcesBalancedAllocation (PreScore, Score): favours nodes whose
// resource usage fractions (after placing the pod) are close to each other:
// score = (1 - stddev(fractions)) * 100, fractions capped at 1. Uses actual
// requests (not the non-zero defaults); best-effort pods skip scoring.
// Upstream: noderesources/balanced_allocation.go. Default weight 1.
#ifndef GANTRY_PLUGINS_NODE_RESOURCES_BALANCED_ALLOCATION_NODE_RESOURCES_BALANCED_ALLOCATION_H_
#define GANTRY_PLUGINS_NODE_RESOURCES_BALANCED_ALLOCATION_NODE_RESOURCES_BALANCED_ALLOCATION_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "plugins/helper/helper.h"
#include "plugins/helper/resource_allocation.h"

namespace gantry::plugins::node_resources_balanced_allocation {

inline constexpr std::string_view kName = "NodeResourcesBalancedAllocation";
inline constexpr std::string_view kArgsKind = "NodeResourcesBalancedAllocationArgs";
inline constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesBalancedAllocation";

// NodeResourcesBalancedAllocationArgs; default resources cpu and memory,
// weight 1 (weights must be 1: they do not enter the formula).
struct NodeResourcesBalancedAllocationArgs {
  std::vector<helper::ResourceSpec> resources = helper::DefaultResourceSpecs();

  // Decodes (strict), defaults (empty -> cpu/memory, weight 0 -> 1) and validates.
  static NodeResourcesBalancedAllocationArgs Decode(api::Decoder& d, api::JsonValue v);
  absl::Status Validate() const;
  void ValidateInto(api::Decoder& d) const;
  nlohmann::json ToJson() const;
};

class NodeResourcesBalancedAllocation final : public framework::PreScorePlugin,
                                              public framework::ScorePlugin,
                                              public framework::NodeLocalPlugin {
 public:
  explicit NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs args);
  std::string_view Name() const override { return kName; }
  // Skip for a pod requesting none of the configured resources.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;

  // Score reads the node's resources and the pod's requests only.
  bool SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const override;

 private:
  NodeResourcesBalancedAllocationArgs args_;
  helper::ResourceAllocationScorer scorer_;
};

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::node_resources_balanced_allocation

#endif  // GANTRY_PLUGINS_NODE_RESOURCES_BALANCED_ALLOCATION_NODE_RESOURCES_BALANCED_ALLOCATION_H_
