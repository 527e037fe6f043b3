// InterPodAffinity: required and preferred pod affinity / anti-affinity.
//
// Upstream semantics (kube-scheduler v1.37, plugin "InterPodAffinity"):
//   PreFilter  counts, per (topologyKey, value) pair, (1) existing pods whose
//              required anti-affinity terms match the incoming pod, (2)
//              existing pods matching ALL required affinity terms of the
//              incoming pod, (3) existing pods matching each of its required
//              anti-affinity terms. Skip when all three are irrelevant.
//   Filter     affinity: the node must carry every term's topology key and
//              each pair must count > 0, except for the first pod of a group
//              that matches its own terms while no pod matches at all
//              (UnschedulableAndUnresolvable); anti-affinity and existing
//              pods' anti-affinity: no matching pod in the node's domains
//              (Unschedulable).
//   PreScore / Score / NormalizeScore  sum the weights of preferred terms
//              (of the incoming pod and, symmetrically, of existing pods,
//              plus hardPodAffinityWeight for existing pods' required
//              affinity) per topology pair; scores are scaled to 0..100.
// Namespaces: terms select pods in `namespaces`, or in namespaces whose
// labels match `namespaceSelector` (labels from FrameworkHandle::NamespaceLabels).
//
// Threading: Filter and Score only read the cycle state and allocate nothing.
#ifndef GANTRY_PLUGINS_INTER_POD_AFFINITY_INTER_POD_AFFINITY_H_
#define GANTRY_PLUGINS_INTER_POD_AFFINITY_INTER_POD_AFFINITY_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "src/api/decode.h"

namespace gantry::plugins::inter_pod_affinity {

inline constexpr std::string_view kName = "InterPodAffinity";
inline constexpr std::string_view kArgsKind = "InterPodAffinityArgs";

inline constexpr std::string_view kErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch =
    "node(s) didn't match pod anti-affinity rules";
inline constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
    "node(s) didn't satisfy existing pods anti-affinity rules";

// kubescheduler.config.k8s.io/v1 InterPodAffinityArgs.
struct InterPodAffinityArgs {
  // Score weight of an existing pod's required affinity term that the
  // incoming pod matches; 0..100.
  int32_t hard_pod_affinity_weight = 1;
  // Skip scoring when the incoming pod has no preferred (anti-)affinity.
  bool ignore_preferred_terms_of_existing_pods = false;
};

// Decodes, defaults and validates the args JSON (null = all defaults).
InterPodAffinityArgs DecodeArgs(api::Decoder& d, api::JsonValue args);
nlohmann::json ArgsToJson(const InterPodAffinityArgs& args);

struct FilterMemo;

class InterPodAffinity final : public framework::PreFilterPlugin,
                               public framework::PreFilterExtensions,
                               public framework::FilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin,
                               public framework::EnqueueExtensions {
 public:
  InterPodAffinity(InterPodAffinityArgs args, framework::FrameworkHandle& handle);
  ~InterPodAffinity() override;

  std::string_view Name() const override { return kName; }

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
  framework::Status UpdateWithPod(framework::CycleState& state,
                                  const framework::PodInfo& pod_to_schedule,
                                  const framework::PodInfo& updated, const framework::NodeInfo& node,
                                  int64_t delta) const;

  InterPodAffinityArgs args_;
  framework::FrameworkHandle& handle_;
  // PreFilter's per-node counts, kept across cycles (inter_pod_affinity.cc).
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

}  // namespace gantry::plugins::inter_pod_affinity

#endif  // GANTRY_PLUGINS_INTER_POD_AFFINITY_INTER_POD_AFFINITY_H_
