// NodeResourcesFit (PreFilter, Filter, PreScore, Score): the node must have
// room for the pod's requests (pods count, cpu, memory, ephemeral storage,
// extended and hugepage resources); feasible nodes are scored by the
// configured strategy. An extended resource that a DeviceClass serves
// (extended resources backed by DRA) is not checked on a node without
// allocatable of it: DynamicResources allocates devices for it there.
// Upstream: pkg/scheduler/framework/plugins/noderesources/fit.go. Default
// weight 1.
#ifndef GANTRY_PLUGINS_NODE_RESOURCES_FIT_NODE_RESOURCES_FIT_H_
#define GANTRY_PLUGINS_NODE_RESOURCES_FIT_NODE_RESOURCES_FIT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "plugins/helper/helper.h"
#include "plugins/helper/resource_allocation.h"

namespace gantry::plugins::node_resources_fit {

// The shared scorer (plugins/helper/resource_allocation.h) under the names
// this plugin's args and tests use.
using helper::Int64s;
using helper::ResourceAllocationScorer;
using helper::ScoreFolder;
using helper::UtilizationShapePoint;

inline constexpr std::string_view kName = "NodeResourcesFit";
inline constexpr std::string_view kArgsKind = "NodeResourcesFitArgs";
inline constexpr std::string_view kPreFilterStateKey = "PreFilterNodeResourcesFit";
inline constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesFit";
inline constexpr std::string_view kTooManyPods = "Too many pods";

enum class ScoringStrategyType : uint8_t { kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio };
std::string_view ScoringStrategyTypeName(ScoringStrategyType t);

struct ScoringStrategy {
  ScoringStrategyType type = ScoringStrategyType::kLeastAllocated;
  std::vector<helper::ResourceSpec> resources = helper::DefaultResourceSpecs();
  bool has_requested_to_capacity_ratio = false;
  std::vector<UtilizationShapePoint> shape;  // requestedToCapacityRatio.shape
};

// NodeResourcesFitArgs with upstream defaults: LeastAllocated over
// cpu/memory with weight 1; no ignored resources.
struct NodeResourcesFitArgs {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  ScoringStrategy scoring_strategy;

  // Decodes JSON (strict fields), applies defaults (missing resources ->
  // cpu/memory; weight 0 -> 1) and validates. Errors go to `d` with the
  // field path (e.g. scoringStrategy.resources[0].weight).
  static NodeResourcesFitArgs Decode(api::Decoder& d, api::JsonValue v);
  // Upstream's ValidateNodeResourcesFitArgs.
  absl::Status Validate() const;
  void ValidateInto(api::Decoder& d) const;
  // Canonical (defaulted) JSON, as --write-config-to prints it.
  nlohmann::json ToJson() const;
};

class NodeResourcesFit final : public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin,
                               public framework::EnqueueExtensions,
                               public framework::NodeLocalPlugin {
 public:
  // `handle` (optional) gives the DRA state, which says which extended
  // resources DeviceClasses serve; without it every extended resource must
  // be in the node's allocatable.
  explicit NodeResourcesFit(NodeResourcesFitArgs args,
                            framework::FrameworkHandle* handle = nullptr);
  std::string_view Name() const override { return kName; }

  // Stores the pod's requests (minus ignored extended resources) under
  // "PreFilterNodeResourcesFit".
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              const std::vector<framework::NodeInfo*>& nodes,
                              framework::PreFilterResult* result) override;
  // Unschedulable with every failing reason ("Too many pods",
  // "Insufficient cpu", ...); UnschedulableAndUnresolvable when some request
  // exceeds the node's whole allocatable. Error without PreFilter state.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;

  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  // Strategy score in [0, 100]; no normalisation.
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;

  // Pod/Delete (queue when the deleted pod was assigned or nominated) and
  // Node/Add|UpdateNodeAllocatable (queue when the pod would fit the node,
  // resources served by DRA aside, and, for updates, a requested allocatable
  // grew or DRA serves a requested resource there) and, with a handle,
  // DeviceClass/Add|Update (queue when the class now serves a requested
  // resource).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  const NodeResourcesFitArgs& args() const { return args_; }

  // Filter and Score read the node's resources, the args and the pod's requests only.
  bool SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const override;

 private:
  bool Ignored(api::Symbol name) const;

  NodeResourcesFitArgs args_;
  framework::FrameworkHandle* handle_;  // may be null
  absl::flat_hash_set<std::string> ignored_resources_;
  absl::flat_hash_set<std::string> ignored_groups_;
  ResourceAllocationScorer scorer_;
};

// A reason why a pod does not fit, with whether preemption cannot help.
struct InsufficientResource {
  std::string reason;
  bool unresolvable = false;
};

// Upstream's fitsRequest: the reasons `requests` does not fit a node with
// `allocatable`, `used` and `num_pods` pods. Scalar requests for which
// `skip(name)` is true are not checked.
std::vector<InsufficientResource> FitsRequest(const framework::Resource& requests,
                                              const framework::Resource& allocatable,
                                              const framework::Resource& used, size_t num_pods,
                                              const std::function<bool(api::Symbol)>& skip = nullptr);

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::node_resources_fit

#endif  // GANTRY_PLUGINS_NODE_RESOURCES_FIT_NODE_RESOURCES_FIT_H_
