// NodeAffinity (PreFilter, Filter, PreScore, Score): spec.nodeSelector and
// required node affinity must match the node; preferred terms add their
// weights to the score. `addedAffinity` in the args is ANDed with every pod
// (required) and added to every pod's preferences (preferred). Upstream:
// pkg/scheduler/framework/plugins/nodeaffinity. Default weight 2.
#ifndef GANTRY_PLUGINS_NODE_AFFINITY_NODE_AFFINITY_H_
#define GANTRY_PLUGINS_NODE_AFFINITY_NODE_AFFINITY_H_

#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "src/api/selectors.h"

namespace gantry::plugins::node_affinity {

inline constexpr std::string_view kName = "NodeAffinity";
inline constexpr std::string_view kArgsKind = "NodeAffinityArgs";
inline constexpr std::string_view kPreFilterStateKey = "PreFilterNodeAffinity";
inline constexpr std::string_view kPreScoreStateKey = "PreScoreNodeAffinity";
inline constexpr std::string_view kErrReasonPod = "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view kErrReasonEnforced = "node(s) didn't match scheduler-enforced node affinity";
inline constexpr std::string_view kErrReasonConflict = "pod affinity terms conflict";

// NodeAffinityArgs. Default: no added affinity.
struct NodeAffinityArgs {
  bool has_added_affinity = false;
  std::optional<api::NodeSelector> added_required;
  std::vector<api::PreferredSchedulingTerm> added_preferred;
  nlohmann::json added_affinity_json;  // canonical form of addedAffinity

  // Decodes (strict fields) and validates; errors go to `d` with field paths.
  static NodeAffinityArgs Decode(api::Decoder& d, api::JsonValue v);
  // Re-validates a decoded value (term shapes are checked while decoding).
  absl::Status Validate() const;
  nlohmann::json ToJson() const;
};

class NodeAffinity final : public framework::PreFilterPlugin,
                           public framework::FilterPlugin,
                           public framework::PreScorePlugin,
                           public framework::ScorePlugin,
                           public framework::EnqueueExtensions,
                           public framework::NodeLocalPlugin {
 public:
  explicit NodeAffinity(NodeAffinityArgs args) : args_(std::move(args)) {}
  std::string_view Name() const override { return kName; }

  // Skip when the pod has neither nodeSelector nor required affinity and no
  // addedAffinity is configured. Narrows the node set to the names given by
  // `matchFields: metadata.name In [...]` when every term has one;
  // UnschedulableAndUnresolvable "pod affinity terms conflict" when those
  // sets are all empty.
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              const std::vector<framework::NodeInfo*>& nodes,
                              framework::PreFilterResult* result) override;
  // UnschedulableAndUnresolvable with kErrReasonEnforced or kErrReasonPod.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;

  // Skip when there are no preferred terms (pod or added).
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  // Sum of the weights of matching preferred terms.
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  bool HasNormalizeScore() const override { return true; }
  framework::Status NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                                   std::vector<framework::NodeScore>& scores) override;

  // Node/Add|UpdateNodeLabel: queue when the node starts matching.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  const NodeAffinityArgs& args() const { return args_; }

  // Filter and Score read the node's labels and name, the args and the pod's node selector and node
  // affinity only.
  bool SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const override;

 private:
  NodeAffinityArgs args_;
};

// nodeSelector AND required node affinity of `pod` match `node`.
bool MatchesRequired(const api::Pod& pod, const api::Node& node);

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::node_affinity

#endif  // GANTRY_PLUGINS_NODE_AFFINITY_NODE_AFFINITY_H_
