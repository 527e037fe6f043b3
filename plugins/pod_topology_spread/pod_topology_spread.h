// PodTopologySpread: spreads matching pods evenly over topology domains
// (zones, hosts, racks) following each pod's topologySpreadConstraints, or
// the cluster-level default constraints when the pod has none.
//
// Upstream semantics (kube-scheduler v1.37, plugin "PodTopologySpread"):
//   PreFilter  counts, per DoNotSchedule constraint, the matching pods of
//              every eligible topology domain (node inclusion policies,
//              nodes missing any topology key are not eligible). Skip when
//              the pod has no hard constraint.
//   Filter     rejects a node when `count(domain) + selfMatch - globalMin >
//              maxSkew` (Unschedulable), or when the node lacks a topology
//              key (UnschedulableAndUnresolvable). `globalMin` is 0 while
//              fewer than minDomains domains are eligible.
//   PreScore / Score / NormalizeScore  prefer nodes whose domains hold fewer
//              matching pods, for ScheduleAnyway constraints.
// AddPod/RemovePod keep the PreFilter counts current for preemption.
//
// Threading: Filter and Score only read the cycle state and allocate nothing.
#ifndef GANTRY_PLUGINS_POD_TOPOLOGY_SPREAD_POD_TOPOLOGY_SPREAD_H_
#define GANTRY_PLUGINS_POD_TOPOLOGY_SPREAD_POD_TOPOLOGY_SPREAD_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "src/api/decode.h"
#include "src/api/pod.h"

namespace gantry::plugins::pod_topology_spread {

inline constexpr std::string_view kName = "PodTopologySpread";
inline constexpr std::string_view kArgsKind = "PodTopologySpreadArgs";

inline constexpr std::string_view kErrReasonConstraintsNotMatch =
    "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view kErrReasonNodeLabelNotMatch =
    "node(s) didn't match pod topology spread constraints (missing required label)";

// How constraints are chosen for pods that define none.
enum class DefaultingType : uint8_t {
  kSystem,  // the built-in list (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway)
  kList,    // `defaultConstraints` from the args (possibly empty)
};

// kubescheduler.config.k8s.io/v1 PodTopologySpreadArgs.
struct PodTopologySpreadArgs {
  std::vector<api::TopologySpreadConstraint> default_constraints;
  DefaultingType defaulting_type = DefaultingType::kSystem;
};

// The built-in defaults used with DefaultingType::kSystem.
const std::vector<api::TopologySpreadConstraint>& SystemDefaultConstraints();

// Decodes, defaults and validates the args JSON (null = all defaults).
// Errors are recorded in `d` with the field path and upstream's wording.
PodTopologySpreadArgs DecodeArgs(api::Decoder& d, api::JsonValue args);
// Canonical (defaulted) form of the args, as --write-config-to prints it.
nlohmann::json ArgsToJson(const PodTopologySpreadArgs& args);

// A constraint as the plugin evaluates it: selector resolved for one pod
// (matchLabelKeys merged, or the derived default selector).
struct Constraint {
  int32_t max_skew = 1;
  api::Symbol topology_key;
  // nullopt: the constraint had no labelSelector and matches no pod.
  std::optional<api::LabelSelector> selector;
  int32_t min_domains = 1;
  api::InclusionPolicy node_affinity_policy = api::InclusionPolicy::kHonor;
  api::InclusionPolicy node_taints_policy = api::InclusionPolicy::kIgnore;

  bool Matches(const api::Labels& labels) const {
    return selector.has_value() && selector->Matches(labels);
  }
  // Upstream counts nothing for a nil or empty selector (it still self-matches).
  bool Counts() const { return selector.has_value() && !selector->Empty(); }
};

// The selector upstream would derive from the pod's Services and controller.
// Gantry watches neither, so it is derived from the pod itself: pods with a
// controller owner of kind ReplicaSet, StatefulSet or ReplicationController
// get their own labels minus per-pod labels (controller-revision-hash,
// statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index); every
// other pod gets nullopt (no default constraints). See README.md.
std::optional<api::LabelSelector> DefaultSelector(const api::Pod& pod);

struct FilterMemo;

class PodTopologySpread final : public framework::PreFilterPlugin,
                                public framework::PreFilterExtensions,
                                public framework::FilterPlugin,
                                public framework::PreScorePlugin,
                                public framework::ScorePlugin,
                                public framework::EnqueueExtensions {
 public:
  PodTopologySpread(PodTopologySpreadArgs args, framework::FrameworkHandle& handle);
  ~PodTopologySpread() override;

  std::string_view Name() const override { return kName; }

  // Constraints of `pod` with the given action (pod's own, else defaults).
  std::vector<Constraint> GetConstraints(const api::Pod& pod,
                                         api::UnsatisfiableAction action) const;

  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              const std::vector<framework::NodeInfo*>& nodes,
                              framework::PreFilterResult* result) override;
  framework::PreFilterExtensions* Extensions() override { return this; }
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                           const framework::PodInfo& pod_to_add,
                           const framework::NodeInfo& node) override;
  framework::Status RemovePod(framework::CycleState& state,
                              const framework::PodInfo& pod_to_schedule,
                              const framework::PodInfo& pod_to_remove,
                              const framework::NodeInfo& node) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;

  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  bool HasNormalizeScore() const override { return true; }
  framework::Status NormalizeScore(const framework::CycleState& state,
                                   const framework::PodInfo& pod,
                                   std::vector<framework::NodeScore>& scores) override;

  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // Queueing hints (exposed for tests).
  framework::QueueingHint HintAfterPodChange(const api::Pod& pod, const api::Pod* old_pod,
                                             const api::Pod* new_pod) const;
  framework::QueueingHint HintAfterNodeChange(const api::Pod& pod, const api::Node* old_node,
                                              const api::Node* new_node) const;

 private:
  framework::Status UpdateWithPod(framework::CycleState& state, const api::Pod& preemptor,
                                  const api::Pod& updated, const framework::NodeInfo& node,
                                  int delta) const;

  std::vector<api::TopologySpreadConstraint> default_constraints_;
  bool system_defaulted_ = false;
  framework::FrameworkHandle& handle_;
  // PreFilter's per-node counts, kept across cycles (pod_topology_spread.cc).
  std::mutex memo_mu_;
  std::unique_ptr<FilterMemo> memo_;
};

// Factory and args defaulter for the registry.
absl::StatusOr<std::unique_ptr<framework::Plugin>> New(api::Decoder& d, api::JsonValue args,
                                                       framework::FrameworkHandle& handle);
nlohmann::json DefaultArgs(api::Decoder& d, api::JsonValue args);
framework::PluginRegistration Registration();
// Adds the plugin to `registry` (RegisterBuiltinPlugins calls this).
absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::pod_topology_spread

#endif  // GANTRY_PLUGINS_POD_TOPOLOGY_SPREAD_POD_TOPOLOGY_SPREAD_H_
