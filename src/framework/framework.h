// The runtime of one scheduling profile: its plugins sorted into typed lists
// per extension point, and the runners that call them in upstream order.
//
// A Framework also serves as the FrameworkHandle its plugins see. The
// scheduling loop points it at the cycle's snapshot (SetSnapshot) before
// running any extension point.
#ifndef GANTRY_SRC_FRAMEWORK_FRAMEWORK_H_
#define GANTRY_SRC_FRAMEWORK_FRAMEWORK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "gantry/extension_point.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "src/framework/node_result_cache.h"
#include "src/framework/parallelize.h"
#include "src/state/snapshot.h"

namespace gantry::framework {

// Whether this framework runs plugins at `p`. The workload points
// placementFeasible and podGroupPostFilter exist in the configuration API
// but are not run yet: a profile that names a plugin there explicitly is
// refused.
bool FrameworkRuns(ExtensionPoint p);

// One plugin of a profile: instantiated once with its args.
struct PluginSpec {
  std::string name;
  int32_t weight = 1;  // Score weight; 0 means 1
  std::string args_json;  // "" or "null": defaults
};

// One candidate at one extension point, in run order.
struct PointPlugin {
  std::string name;
  // true: enabled via multiPoint, kept only if the plugin implements the
  // point; false: named at this point explicitly, must implement it.
  bool via_multi_point = true;
};

// A profile as the configuration resolved it (src/config owns the merge
// rules: defaults, multiPoint, enabled/disabled). The framework instantiates
// `plugins` and keeps, per point, the candidates that implement it.
struct ProfileSpec {
  std::string scheduler_name = "gantry-scheduler";
  std::optional<int32_t> percentage_of_nodes_to_score;
  std::vector<PluginSpec> plugins;
  absl::flat_hash_map<ExtensionPoint, std::vector<PointPlugin>> points;

  // All `plugins` enabled through multiPoint at every point, in order
  // (convenient for tests and simple profiles).
  static ProfileSpec MultiPoint(std::string scheduler_name, std::vector<PluginSpec> plugins);
};

// One Score plugin's weighted, normalised scores for a cycle's nodes.
struct PluginScores {
  std::string plugin;
  int64_t weight = 1;
  std::vector<int64_t> scores;  // same order as the scored nodes
};

struct WeightedScorePlugin {
  ScorePlugin* plugin;
  int64_t weight;
};

// Receives the duration of each extension point run (kube-scheduler's
// scheduler_framework_extension_point_duration_seconds). Called on the
// scheduling and binding threads; implementations must be thread-safe.
class ExtensionPointObserver {
 public:
  virtual ~ExtensionPointObserver() = default;
  // `status` is CodeName() of the point's result, `profile` the scheduler name.
  virtual void ObserveExtensionPoint(std::string_view point, std::string_view status, std::string_view profile,
                                     double seconds) = 0;
};

class Framework final : public FrameworkHandle {
 public:
  // Instantiates every plugin once and sorts it into the points it serves.
  // Errors name the plugin and, for bad args, the field.
  static absl::StatusOr<std::unique_ptr<Framework>> Create(const ProfileSpec& spec,
                                                           const Registry& registry,
                                                           ClusterWriter& writer,
                                                           const Clock& clock,
                                                           Parallelizer& parallelizer);

  // ---- Extension point runners (upstream semantics) ----------------------
  Status RunPreEnqueuePlugins(const PodInfo& pod) const;
  // Narrowed node set in `result`; rejected pods get the plugin's status.
  Status RunPreFilterPlugins(CycleState& state, const PodInfo& pod, PreFilterResult* result);
  // First failing filter wins (plugin recorded in the status).
  Status RunFilterPlugins(const CycleState& state, const PodInfo& pod, const NodeInfo& node);
  // The filter plugins not skipped by PreFilter in `state` (compute once per
  // cycle, then run them per node with the overload below).
  std::vector<FilterPlugin*> ActiveFilterPlugins(const CycleState& state) const override;
  Status RunFilterPlugins(const std::vector<FilterPlugin*>& active, const CycleState& state,
                          const PodInfo& pod, const NodeInfo& node);
  Status RunPreFilterAddPod(CycleState& state, const PodInfo& pod, const PodInfo& to_add,
                            const NodeInfo& node);
  Status RunPreFilterRemovePod(CycleState& state, const PodInfo& pod, const PodInfo& to_remove,
                               const NodeInfo& node);
  PostFilterResult RunPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                        const NodeToStatus& filtered);
  Status RunPreScorePlugins(CycleState& state, const PodInfo& pod,
                            const std::vector<const NodeInfo*>& nodes);
  // Weighted, normalised totals per node (same order as `nodes`). With
  // `by_plugin`, also each active plugin's weighted, normalised scores (explain).
  // With `cache` (prepared for `pod` by its PrepareFilter), raw scores of
  // nodes it holds are taken from it and the others are stored in it, when
  // every active score plugin is node-local for `pod`; the totals are the same.
  // `cached` (optional, with `cache`): the cache's entries of `nodes`, in
  // the same order, as the caller already looked them up.
  Status RunScorePlugins(const CycleState& state, const PodInfo& pod,
                         const std::vector<const NodeInfo*>& nodes, std::vector<int64_t>* totals,
                         std::vector<PluginScores>* by_plugin = nullptr,
                         NodeResultCache* cache = nullptr,
                         const std::vector<NodeResultCache::Entry*>* cached = nullptr);
  Status RunReservePlugins(CycleState& state, const PodInfo& pod, std::string_view node);
  void RunUnreservePlugins(CycleState& state, const PodInfo& pod, std::string_view node);
  Status RunPermitPlugins(CycleState& state, const PodInfo& pod, std::string_view node);
  Status RunPreBindPlugins(CycleState& state, const PodInfo& pod, std::string_view node);
  Status RunBindPlugins(CycleState& state, const PodInfo& pod, std::string_view node);
  void RunPostBindPlugins(CycleState& state, const PodInfo& pod, std::string_view node);

  bool HasFilterPlugins() const { return !filter_.empty(); }
  bool HasScorePlugins() const { return !score_.empty(); }
  bool HasPostFilterPlugins() const { return !post_filter_.empty(); }
  QueueSortPlugin* queue_sort() const { return queue_sort_; }
  const std::vector<PreEnqueuePlugin*>& pre_enqueue_plugins() const { return pre_enqueue_; }
  const std::vector<PlacementGeneratePlugin*>& placement_generate_plugins() const {
    return placement_generate_;
  }
  const std::vector<PlacementScorePlugin*>& placement_score_plugins() const {
    return placement_score_;
  }
  // Plugin name -> events it registered (for the queue).
  absl::flat_hash_map<std::string, std::vector<ClusterEventWithHint>> EventsToRegister() const;
  // Names of the enabled plugins per point (for --write-config-to, tests, docs).
  std::vector<std::string> PluginNames(ExtensionPoint point) const;
  std::optional<int32_t> percentage_of_nodes_to_score() const { return pct_nodes_to_score_; }
  Plugin* FindPlugin(std::string_view name) const;

  // ---- FrameworkHandle ---------------------------------------------------
  void SetSnapshot(const state::Snapshot* snapshot) { snapshot_ = snapshot; }
  const SnapshotLister& Snapshot() const override { return *snapshot_; }
  ClusterWriter& Writer() override { return writer_; }
  const Clock& clock() const override { return clock_; }
  Parallelizer& parallelizer() override { return parallelizer_; }
  const api::Labels* NamespaceLabels(api::Symbol ns) const override {
    return snapshot_ ? snapshot_->NamespaceLabels(ns) : nullptr;
  }
  std::string_view SchedulerName() const override { return scheduler_name_; }
  std::vector<PodInfoPtr> NominatedPodsForNode(std::string_view node) const override {
    return nominator_ ? nominator_(node) : std::vector<PodInfoPtr>{};
  }
  const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& PodDisruptionBudgets()
      const override {
    return snapshot_->PodDisruptionBudgets();
  }
  state::DraState* Dra() const override { return dra_; }
  PluginMetrics& Metrics() const override { return *plugin_metrics_; }
  DisruptionUnit DisruptionUnitOf(const api::Pod& pod) const override {
    return disruption_units_ ? disruption_units_(pod) : DisruptionUnit{};
  }
  Status RunFilterPluginsWithState(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node) override {
    return RunFilterPlugins(state, pod, node);
  }
  Status RunFilterPluginsWithPlan(const std::vector<FilterPlugin*>& plan, const CycleState& state,
                                  const PodInfo& pod, const NodeInfo& node) override {
    return RunFilterPlugins(plan, state, pod, node);
  }
  bool HasPreFilterExtensions(const CycleState& state) const override;
  Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod, const PodInfo& to_add,
                                     const NodeInfo& node) override {
    return RunPreFilterAddPod(state, pod, to_add, node);
  }
  Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                        const PodInfo& to_remove, const NodeInfo& node) override {
    return RunPreFilterRemovePod(state, pod, to_remove, node);
  }

  // Wiring done by the scheduler.
  void SetNominator(std::function<std::vector<PodInfoPtr>(std::string_view)> nominator) {
    nominator_ = std::move(nominator);
  }
  void SetDraState(state::DraState* dra) { dra_ = dra; }
  void SetDisruptionUnits(std::function<DisruptionUnit(const api::Pod&)> fn) { disruption_units_ = std::move(fn); }
  // Times PreFilter, PostFilter, PreScore, Score, Reserve, Unreserve, Permit,
  // PreBind, Bind and PostBind (not the per-node Filter, as upstream). Set
  // before scheduling starts; nullptr (the default) turns timing off.
  void SetExtensionPointObserver(ExtensionPointObserver* observer) { point_observer_ = observer; }
  // Where plugins record (FrameworkHandle::Metrics). Set before scheduling
  // starts; nullptr restores NoPluginMetrics.
  void SetPluginMetrics(PluginMetrics* metrics) {
    plugin_metrics_ = metrics != nullptr ? metrics : &NoPluginMetrics::Instance();
  }

 private:
  Framework(ClusterWriter& writer, const Clock& clock, Parallelizer& parallelizer)
      : writer_(writer), clock_(clock), parallelizer_(parallelizer) {}

  std::string scheduler_name_;
  std::optional<int32_t> pct_nodes_to_score_;
  ClusterWriter& writer_;
  const Clock& clock_;
  Parallelizer& parallelizer_;
  const state::Snapshot* snapshot_ = nullptr;
  state::Snapshot empty_snapshot_;
  std::function<std::vector<PodInfoPtr>(std::string_view)> nominator_;
  state::DraState* dra_ = nullptr;
  std::function<DisruptionUnit(const api::Pod&)> disruption_units_;
  ExtensionPointObserver* point_observer_ = nullptr;
  PluginMetrics* plugin_metrics_ = &NoPluginMetrics::Instance();

  // The extension point bodies; the public Run*Plugins time them.
  Status RunPreFilterPluginsUntimed(CycleState& state, const PodInfo& pod, PreFilterResult* result);
  PostFilterResult RunPostFilterPluginsUntimed(CycleState& state, const PodInfo& pod, const NodeToStatus& filtered);
  Status RunPreScorePluginsUntimed(CycleState& state, const PodInfo& pod, const std::vector<const NodeInfo*>& nodes);
  Status RunScorePluginsUntimed(const CycleState& state, const PodInfo& pod,
                                const std::vector<const NodeInfo*>& nodes,
                                std::vector<int64_t>* totals, std::vector<PluginScores>* by_plugin,
                                NodeResultCache* cache,
                                const std::vector<NodeResultCache::Entry*>* cached);
  Status RunReservePluginsUntimed(CycleState& state, const PodInfo& pod, std::string_view node);
  void RunUnreservePluginsUntimed(CycleState& state, const PodInfo& pod, std::string_view node);
  Status RunPermitPluginsUntimed(CycleState& state, const PodInfo& pod, std::string_view node);
  Status RunPreBindPluginsUntimed(CycleState& state, const PodInfo& pod, std::string_view node);
  Status RunBindPluginsUntimed(CycleState& state, const PodInfo& pod, std::string_view node);
  void RunPostBindPluginsUntimed(CycleState& state, const PodInfo& pod, std::string_view node);
  // Runs `body` and reports its duration and the code `code_of(result)`.
  template <typename Body, typename CodeOf>
  auto Timed(std::string_view point, Body&& body, CodeOf&& code_of);

  std::vector<std::unique_ptr<Plugin>> owned_;
  std::vector<PreEnqueuePlugin*> pre_enqueue_;
  QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<PreFilterPlugin*> pre_filter_;
  std::vector<FilterPlugin*> filter_;
  std::vector<PostFilterPlugin*> post_filter_;
  std::vector<PreScorePlugin*> pre_score_;
  std::vector<WeightedScorePlugin> score_;
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  std::vector<PreBindPlugin*> pre_bind_;
  std::vector<BindPlugin*> bind_;
  std::vector<PostBindPlugin*> post_bind_;
  std::vector<PlacementGeneratePlugin*> placement_generate_;
  std::vector<PlacementScorePlugin*> placement_score_;
};

}  // namespace gantry::framework

#endif  // GANTRY_SRC_FRAMEWORK_FRAMEWORK_H_
