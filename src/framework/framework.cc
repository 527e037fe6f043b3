#include "src/framework/framework.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "gantry/util/strings.h"
#include "simdjson.h"

namespace gantry::framework {
namespace {

bool Implements(Plugin* p, ExtensionPoint point) {
  switch (point) {
    case ExtensionPoint::kPreEnqueue:
      return dynamic_cast<PreEnqueuePlugin*>(p) != nullptr;
    case ExtensionPoint::kQueueSort:
      return dynamic_cast<QueueSortPlugin*>(p) != nullptr;
    case ExtensionPoint::kPreFilter:
      return dynamic_cast<PreFilterPlugin*>(p) != nullptr;
    case ExtensionPoint::kFilter:
      return dynamic_cast<FilterPlugin*>(p) != nullptr;
    case ExtensionPoint::kPostFilter:
      return dynamic_cast<PostFilterPlugin*>(p) != nullptr;
    case ExtensionPoint::kPreScore:
      return dynamic_cast<PreScorePlugin*>(p) != nullptr;
    case ExtensionPoint::kScore:
      return dynamic_cast<ScorePlugin*>(p) != nullptr;
    case ExtensionPoint::kReserve:
      return dynamic_cast<ReservePlugin*>(p) != nullptr;
    case ExtensionPoint::kPermit:
      return dynamic_cast<PermitPlugin*>(p) != nullptr;
    case ExtensionPoint::kPreBind:
      return dynamic_cast<PreBindPlugin*>(p) != nullptr;
    case ExtensionPoint::kBind:
      return dynamic_cast<BindPlugin*>(p) != nullptr;
    case ExtensionPoint::kPostBind:
      return dynamic_cast<PostBindPlugin*>(p) != nullptr;
    case ExtensionPoint::kPlacementGenerate:
      return dynamic_cast<PlacementGeneratePlugin*>(p) != nullptr;
    case ExtensionPoint::kPlacementScore:
      return dynamic_cast<PlacementScorePlugin*>(p) != nullptr;
    case ExtensionPoint::kPlacementFeasible:
    case ExtensionPoint::kPodGroupPostFilter:
      return false;
  }
  return false;
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

ProfileSpec ProfileSpec::MultiPoint(std::string scheduler_name, std::vector<PluginSpec> plugins) {
  ProfileSpec spec;
  spec.scheduler_name = std::move(scheduler_name);
  for (ExtensionPoint point : kAllExtensionPoints) {
    if (!FrameworkRuns(point)) continue;
    for (const PluginSpec& p : plugins) spec.points[point].push_back(PointPlugin{p.name, true});
  }
  spec.plugins = std::move(plugins);
  return spec;
}

bool FrameworkRuns(ExtensionPoint p) {
  return p != ExtensionPoint::kPlacementFeasible && p != ExtensionPoint::kPodGroupPostFilter;
}

absl::StatusOr<std::unique_ptr<Framework>> Framework::Create(const ProfileSpec& spec,
                                                             const Registry& registry,
                                                             ClusterWriter& writer,
                                                             const Clock& clock,
                                                             Parallelizer& parallelizer) {
  std::unique_ptr<Framework> fw(new Framework(writer, clock, parallelizer));
  fw->scheduler_name_ = spec.scheduler_name;
  fw->pct_nodes_to_score_ = spec.percentage_of_nodes_to_score;
  fw->snapshot_ = &fw->empty_snapshot_;

  absl::flat_hash_map<std::string, Plugin*> by_name;
  absl::flat_hash_map<std::string, int32_t> weights;
  for (const PluginSpec& ps : spec.plugins) {
    if (by_name.contains(ps.name)) {
      return absl::InvalidArgumentError(gantry::StrCat("profile ", spec.scheduler_name,
                                                       ": plugin \"", ps.name, "\" listed twice"));
    }
    const PluginRegistration* reg = registry.Find(ps.name);
    if (reg == nullptr) {
      return absl::NotFoundError(gantry::StrCat("profile ", spec.scheduler_name, ": plugin \"",
                                                ps.name, "\" does not exist"));
    }
    simdjson::dom::parser parser;
    api::JsonValue args;
    const std::string args_text = ps.args_json.empty() ? "null" : ps.args_json;
    if (parser.parse(args_text).get(args) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(gantry::StrCat("profile ", spec.scheduler_name, ": plugin ",
                                                       ps.name, ": args are not valid JSON"));
    }
    api::Decoder d(reg->args_kind.empty() ? ps.name + "Args" : reg->args_kind);
    absl::StatusOr<std::unique_ptr<Plugin>> plugin = reg->factory(d, args, *fw);
    if (!d.ok()) return d.Finish(args);
    if (!plugin.ok()) {
      return absl::Status(plugin.status().code(),
                          gantry::StrCat("profile ", spec.scheduler_name, ": plugin ", ps.name,
                                         ": ", AsStd(plugin.status().message())));
    }
    if (ps.weight < 0) {
      return absl::InvalidArgumentError(gantry::StrCat(
          "profile ", spec.scheduler_name, ": score plugin ", ps.name, " has a negative weight"));
    }
    by_name[ps.name] = plugin->get();
    weights[ps.name] = ps.weight == 0 ? 1 : ps.weight;
    fw->owned_.push_back(*std::move(plugin));
  }

  for (ExtensionPoint point : kAllExtensionPoints) {
    auto it = spec.points.find(point);
    if (it == spec.points.end()) continue;
    if (!FrameworkRuns(point)) {
      // multiPoint expands to every point; no plugin can implement one the
      // framework does not run, so only explicit entries are an error.
      for (const PointPlugin& entry : it->second) {
        if (entry.via_multi_point) continue;
        return absl::UnimplementedError(gantry::StrCat(
            "profile ", spec.scheduler_name, ": extension point ", ExtensionPointName(point),
            " is not supported by this version of Gantry (plugin ", entry.name, ")"));
      }
      continue;
    }
    std::vector<std::string> seen;
    for (const PointPlugin& entry : it->second) {
      auto pit = by_name.find(entry.name);
      if (pit == by_name.end()) {
        return absl::InvalidArgumentError(gantry::StrCat(
            "profile ", spec.scheduler_name, ": plugin \"", entry.name, "\" is enabled at ",
            ExtensionPointName(point), " but not instantiated"));
      }
      Plugin* p = pit->second;
      if (!Implements(p, point)) {
        if (entry.via_multi_point) continue;
        return absl::InvalidArgumentError(
            gantry::StrCat("profile ", spec.scheduler_name, ": plugin \"", entry.name,
                           "\" does not extend ", ExtensionPointName(point), " plugin"));
      }
      if (Contains(seen, entry.name)) {
        return absl::InvalidArgumentError(
            gantry::StrCat("profile ", spec.scheduler_name, ": plugin \"", entry.name,
                           "\" already registered as \"", ExtensionPointName(point), "\""));
      }
      seen.push_back(entry.name);
      switch (point) {
        case ExtensionPoint::kPreEnqueue:
          fw->pre_enqueue_.push_back(dynamic_cast<PreEnqueuePlugin*>(p));
          break;
        case ExtensionPoint::kQueueSort:
          if (fw->queue_sort_ != nullptr) {
            return absl::InvalidArgumentError(
                gantry::StrCat("profile ", spec.scheduler_name,
                               ": only one queueSort plugin may be enabled, found ",
                               fw->queue_sort_->Name(), " and ", entry.name));
          }
          fw->queue_sort_ = dynamic_cast<QueueSortPlugin*>(p);
          break;
        case ExtensionPoint::kPreFilter:
          fw->pre_filter_.push_back(dynamic_cast<PreFilterPlugin*>(p));
          break;
        case ExtensionPoint::kFilter:
          fw->filter_.push_back(dynamic_cast<FilterPlugin*>(p));
          break;
        case ExtensionPoint::kPostFilter:
          fw->post_filter_.push_back(dynamic_cast<PostFilterPlugin*>(p));
          break;
        case ExtensionPoint::kPreScore:
          fw->pre_score_.push_back(dynamic_cast<PreScorePlugin*>(p));
          break;
        case ExtensionPoint::kScore:
          fw->score_.push_back({dynamic_cast<ScorePlugin*>(p), weights[entry.name]});
          break;
        case ExtensionPoint::kReserve:
          fw->reserve_.push_back(dynamic_cast<ReservePlugin*>(p));
          break;
        case ExtensionPoint::kPermit:
          fw->permit_.push_back(dynamic_cast<PermitPlugin*>(p));
          break;
        case ExtensionPoint::kPreBind:
          fw->pre_bind_.push_back(dynamic_cast<PreBindPlugin*>(p));
          break;
        case ExtensionPoint::kBind:
          fw->bind_.push_back(dynamic_cast<BindPlugin*>(p));
          break;
        case ExtensionPoint::kPostBind:
          fw->post_bind_.push_back(dynamic_cast<PostBindPlugin*>(p));
          break;
        case ExtensionPoint::kPlacementGenerate:
          fw->placement_generate_.push_back(dynamic_cast<PlacementGeneratePlugin*>(p));
          break;
        case ExtensionPoint::kPlacementScore:
          fw->placement_score_.push_back(dynamic_cast<PlacementScorePlugin*>(p));
          break;
        case ExtensionPoint::kPlacementFeasible:
        case ExtensionPoint::kPodGroupPostFilter:
          break;  // refused above (FrameworkRuns)
      }
    }
  }
  if (fw->queue_sort_ == nullptr) {
    return absl::InvalidArgumentError(
        gantry::StrCat("profile ", spec.scheduler_name, ": no queueSort plugin is enabled"));
  }
  if (fw->bind_.empty()) {
    return absl::InvalidArgumentError(
        gantry::StrCat("profile ", spec.scheduler_name, ": at least one bind plugin is needed"));
  }
  return fw;
}

Plugin* Framework::FindPlugin(std::string_view name) const {
  for (const auto& p : owned_) {
    if (p->Name() == name) return p.get();
  }
  return nullptr;
}

std::vector<std::string> Framework::PluginNames(ExtensionPoint point) const {
  std::vector<std::string> out;
  auto add = [&](Plugin* p) { out.emplace_back(p->Name()); };
  switch (point) {
    case ExtensionPoint::kPreEnqueue:
      for (auto* p : pre_enqueue_) add(p);
      break;
    case ExtensionPoint::kQueueSort:
      if (queue_sort_) add(queue_sort_);
      break;
    case ExtensionPoint::kPreFilter:
      for (auto* p : pre_filter_) add(p);
      break;
    case ExtensionPoint::kFilter:
      for (auto* p : filter_) add(p);
      break;
    case ExtensionPoint::kPostFilter:
      for (auto* p : post_filter_) add(p);
      break;
    case ExtensionPoint::kPreScore:
      for (auto* p : pre_score_) add(p);
      break;
    case ExtensionPoint::kScore:
      for (auto& w : score_) add(w.plugin);
      break;
    case ExtensionPoint::kReserve:
      for (auto* p : reserve_) add(p);
      break;
    case ExtensionPoint::kPermit:
      for (auto* p : permit_) add(p);
      break;
    case ExtensionPoint::kPreBind:
      for (auto* p : pre_bind_) add(p);
      break;
    case ExtensionPoint::kBind:
      for (auto* p : bind_) add(p);
      break;
    case ExtensionPoint::kPostBind:
      for (auto* p : post_bind_) add(p);
      break;
    case ExtensionPoint::kPlacementGenerate:
      for (auto* p : placement_generate_) add(p);
      break;
    case ExtensionPoint::kPlacementScore:
      for (auto* p : placement_score_) add(p);
      break;
    case ExtensionPoint::kPlacementFeasible:
    case ExtensionPoint::kPodGroupPostFilter:
      break;  // not run (FrameworkRuns)
  }
  return out;
}

absl::flat_hash_map<std::string, std::vector<ClusterEventWithHint>> Framework::EventsToRegister()
    const {
  absl::flat_hash_map<std::string, std::vector<ClusterEventWithHint>> out;
  for (const auto& p : owned_) {
    if (auto* ext = dynamic_cast<EnqueueExtensions*>(p.get())) {
      out[std::string(p->Name())] = ext->EventsToRegister();
    }
  }
  return out;
}

Status Framework::RunPreEnqueuePlugins(const PodInfo& pod) const {
  for (PreEnqueuePlugin* p : pre_enqueue_) {
    Status st = p->PreEnqueue(pod);
    if (!st.IsSuccess()) return std::move(st.WithPlugin(p->Name()));
  }
  return Status();
}

Status Framework::RunPreFilterPluginsUntimed(CycleState& state, const PodInfo& pod,
                                             PreFilterResult* result) {
  const std::vector<NodeInfo*>& nodes = snapshot_->NodeInfos();
  std::optional<absl::flat_hash_set<std::string>> narrowed;
  std::vector<std::string> narrowing_plugins;
  for (PreFilterPlugin* p : pre_filter_) {
    PreFilterResult r;
    Status st = p->PreFilter(state, pod, nodes, &r);
    if (st.IsSkip()) {
      state.skip_filter_plugins()[std::string(p->Name())] = true;
      continue;
    }
    if (!st.IsSuccess()) {
      st.WithPlugin(p->Name());
      if (st.IsRejected()) return st;
      return Status(Code::kError,
                    gantry::StrCat("running PreFilter plugin \"", p->Name(), "\": ", st.Message()))
          .WithPlugin(p->Name());
    }
    if (r.node_names) {
      narrowing_plugins.emplace_back(p->Name());
      if (!narrowed) {
        narrowed = std::move(r.node_names);
      } else {
        absl::flat_hash_set<std::string> both;
        for (const std::string& n : *narrowed) {
          if (r.node_names->contains(n)) both.insert(n);
        }
        narrowed = std::move(both);
      }
      if (narrowed->empty()) {
        std::string plugins;
        for (size_t i = 0; i < narrowing_plugins.size(); ++i) {
          plugins += (i ? " " : "") + narrowing_plugins[i];
        }
        return Status(Code::kUnschedulableAndUnresolvable,
                      narrowing_plugins.size() > 1
                          ? gantry::StrCat("node(s) didn't satisfy plugin(s) [", plugins,
                                           "] simultaneously")
                          : gantry::StrCat("node(s) didn't satisfy plugin(s) [", plugins, "]"))
            .WithPlugin(narrowing_plugins.back());
      }
    }
  }
  result->node_names = std::move(narrowed);
  result->narrowed_by = std::move(narrowing_plugins);
  return Status();
}

std::vector<FilterPlugin*> Framework::ActiveFilterPlugins(const CycleState& state) const {
  std::vector<FilterPlugin*> active;
  active.reserve(filter_.size());
  for (FilterPlugin* p : filter_) {
    if (!state.SkipFilter(p->Name())) active.push_back(p);
  }
  return active;
}

Status Framework::RunFilterPlugins(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node) {
  return RunFilterPlugins(ActiveFilterPlugins(state), state, pod, node);
}

Status Framework::RunFilterPlugins(const std::vector<FilterPlugin*>& active,
                                   const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node) {
  for (FilterPlugin* p : active) {
    Status st = p->Filter(state, pod, node);
    if (!st.IsSuccess()) {
      if (!st.IsRejected()) {
        return Status(Code::kError,
                      gantry::StrCat("running \"", p->Name(), "\" filter plugin: ", st.Message()))
            .WithPlugin(p->Name());
      }
      return std::move(st.WithPlugin(p->Name()));
    }
  }
  return Status();
}

bool Framework::HasPreFilterExtensions(const CycleState& state) const {
  for (PreFilterPlugin* p : pre_filter_) {
    if (p->Extensions() != nullptr && !state.SkipFilter(p->Name())) return true;
  }
  return false;
}

Status Framework::RunPreFilterAddPod(CycleState& state, const PodInfo& pod, const PodInfo& to_add,
                                     const NodeInfo& node) {
  for (PreFilterPlugin* p : pre_filter_) {
    PreFilterExtensions* ext = p->Extensions();
    if (ext == nullptr || state.SkipFilter(p->Name())) continue;  // cheap test first
    Status st = ext->AddPod(state, pod, to_add, node);
    if (!st.IsSuccess()) return std::move(st.WithPlugin(p->Name()));
  }
  return Status();
}

Status Framework::RunPreFilterRemovePod(CycleState& state, const PodInfo& pod,
                                        const PodInfo& to_remove, const NodeInfo& node) {
  for (PreFilterPlugin* p : pre_filter_) {
    PreFilterExtensions* ext = p->Extensions();
    if (ext == nullptr || state.SkipFilter(p->Name())) continue;  // cheap test first
    Status st = ext->RemovePod(state, pod, to_remove, node);
    if (!st.IsSuccess()) return std::move(st.WithPlugin(p->Name()));
  }
  return Status();
}

PostFilterResult Framework::RunPostFilterPluginsUntimed(CycleState& state, const PodInfo& pod,
                                                        const NodeToStatus& filtered) {
  PostFilterResult last;
  last.status = Status(Code::kUnschedulable);
  std::string messages;
  for (PostFilterPlugin* p : post_filter_) {
    PostFilterResult r = p->PostFilter(state, pod, filtered);
    if (!r.message.empty()) {
      if (!messages.empty()) messages += " ";
      messages += r.message;
    }
    if (r.status.IsSuccess()) {
      r.message = messages;
      return r;
    }
    if (r.status.IsError()) {
      r.status.WithPlugin(p->Name());
      r.message = messages;
      return r;
    }
    last = std::move(r);
  }
  last.message = messages;
  return last;
}

Status Framework::RunPreScorePluginsUntimed(CycleState& state, const PodInfo& pod,
                                            const std::vector<const NodeInfo*>& nodes) {
  for (PreScorePlugin* p : pre_score_) {
    Status st = p->PreScore(state, pod, nodes);
    if (st.IsSkip()) {
      state.skip_score_plugins()[std::string(p->Name())] = true;
      continue;
    }
    if (!st.IsSuccess()) {
      return Status(Code::kError,
                    gantry::StrCat("running PreScore plugin \"", p->Name(), "\": ", st.Message()))
          .WithPlugin(p->Name());
    }
  }
  return Status();
}

namespace {

Status ScoreError(const ScorePlugin& p, const Status& st) {
  return Status(Code::kError,
                gantry::StrCat("running Score plugin \"", p.Name(), "\": ", st.Message()))
      .WithPlugin(p.Name());
}

Status NormalizeError(const ScorePlugin& p, const Status& st) {
  return Status(Code::kError, gantry::StrCat("running Normalize on Score plugin \"", p.Name(),
                                             "\": ", st.Message()))
      .WithPlugin(p.Name());
}

Status RangeError(const ScorePlugin& p, int64_t s) {
  return Status(Code::kError, gantry::StrCat("plugin \"", p.Name(), "\" returns an invalid score ",
                                             s, ", it should in the range of [", kMinNodeScore,
                                             ", ", kMaxNodeScore, "] after normalizing"))
      .WithPlugin(p.Name());
}

// Marks `e` scored with the sum of weight x raw score over the plugins
// without NormalizeScore (`raw`: one per plugin of `active`). False, with `e`
// left unscored and `*bad` the plugin's index, when one of those scores is out
// of range.
bool StoreFixedTotal(NodeResultCache::Entry& e, const int64_t* raw,
                     const std::vector<WeightedScorePlugin>& active, size_t* bad) {
  int64_t fixed = 0;
  for (size_t k = 0; k < active.size(); ++k) {
    if (active[k].plugin->HasNormalizeScore()) continue;
    if (raw[k] < kMinNodeScore || raw[k] > kMaxNodeScore) {
      *bad = k;
      e.scored = false;
      return false;
    }
    fixed += raw[k] * active[k].weight;
  }
  e.fixed_total = fixed;
  e.scored = true;
  return true;
}

// RunScorePlugins with a prepared cache and without per-plugin output: the
// plugins without NormalizeScore contribute each entry's fixed_total, and
// only the others get per-node score lists. Equal totals to the general path.
Status ScoreFromCache(Parallelizer& parallelizer, const CycleState& state, const PodInfo& pod,
                      const std::vector<const NodeInfo*>& nodes,
                      const std::vector<WeightedScorePlugin>& active, NodeResultCache& cache,
                      const std::vector<NodeResultCache::Entry*>& entries,
                      std::vector<int64_t>* totals) {
  const size_t n = nodes.size();
  thread_local std::vector<size_t> normalizing_scratch;
  thread_local std::vector<std::vector<NodeScore>> lists_scratch;
  thread_local std::vector<int> to_score_scratch;
  std::vector<size_t>& normalizing = normalizing_scratch;      // indexes into `active`
  std::vector<std::vector<NodeScore>>& lists = lists_scratch;  // per normalizing plugin
  std::vector<int>& to_score = to_score_scratch;
  normalizing.clear();
  to_score.clear();
  for (size_t k = 0; k < active.size(); ++k) {
    if (active[k].plugin->HasNormalizeScore()) normalizing.push_back(k);
  }
  if (lists.size() < normalizing.size()) lists.resize(normalizing.size());
  for (size_t m = 0; m < normalizing.size(); ++m) lists[m].resize(n);
  for (size_t i = 0; i < n; ++i) {
    const NodeResultCache::Entry& e = *entries[i];
    if (!e.scored) {
      to_score.push_back(static_cast<int>(i));
      continue;
    }
    (*totals)[i] = e.fixed_total;
    const int64_t* raw = cache.raw(e);
    const std::string_view name = cache.name(e);
    for (size_t m = 0; m < normalizing.size(); ++m)
      lists[m][i] = NodeScore{name, raw[normalizing[m]]};
  }
  cache.counters().score_hits += static_cast<int64_t>(n - to_score.size());
  cache.counters().score_misses += static_cast<int64_t>(to_score.size());
  if (!to_score.empty()) {
    std::mutex err_mu;
    Status first_error;
    std::atomic<bool> failed{false};
    // Each node writes only its own entry's raw scores.
    parallelizer.Until(static_cast<int>(to_score.size()), [&](int j) {
      if (failed.load(std::memory_order_relaxed)) return;
      const size_t i = static_cast<size_t>(to_score[static_cast<size_t>(j)]);
      int64_t* raw = cache.raw(*entries[i]);
      for (size_t k = 0; k < active.size(); ++k) {
        Status st = active[k].plugin->Score(state, pod, *nodes[i], &raw[k]);
        if (!st.IsSuccess()) {
          std::lock_guard<std::mutex> lock(err_mu);
          if (!failed.exchange(true)) first_error = ScoreError(*active[k].plugin, st);
          return;
        }
      }
    });
    if (failed.load()) return first_error;
    for (int j : to_score) {
      const size_t i = static_cast<size_t>(j);
      NodeResultCache::Entry& e = *entries[i];
      const int64_t* raw = cache.raw(e);
      size_t bad = 0;
      if (!StoreFixedTotal(e, raw, active, &bad)) return RangeError(*active[bad].plugin, raw[bad]);
      (*totals)[i] = e.fixed_total;
      const std::string_view name = cache.name(e);
      for (size_t m = 0; m < normalizing.size(); ++m)
        lists[m][i] = NodeScore{name, raw[normalizing[m]]};
    }
  }
  for (size_t m = 0; m < normalizing.size(); ++m) {
    const WeightedScorePlugin& w = active[normalizing[m]];
    std::vector<NodeScore>& list = lists[m];
    Status st = w.plugin->NormalizeScore(state, pod, list);
    if (!st.IsSuccess()) return NormalizeError(*w.plugin, st);
    for (size_t i = 0; i < n; ++i) {
      const int64_t s = list[i].score;
      if (s < kMinNodeScore || s > kMaxNodeScore) return RangeError(*w.plugin, s);
      (*totals)[i] += s * w.weight;
    }
  }
  return Status();
}

}  // namespace

Status Framework::RunScorePluginsUntimed(const CycleState& state, const PodInfo& pod,
                                         const std::vector<const NodeInfo*>& nodes,
                                         std::vector<int64_t>* totals,
                                         std::vector<PluginScores>* by_plugin,
                                         NodeResultCache* cache,
                                         const std::vector<NodeResultCache::Entry*>* cached) {
  totals->assign(nodes.size(), 0);
  if (by_plugin != nullptr) by_plugin->clear();
  // Per-thread scratch, reused by the thread's next cycle. Bound to plain
  // references: the worker threads below must see this thread's instances.
  thread_local std::vector<WeightedScorePlugin> active_scratch;
  thread_local std::vector<std::vector<NodeScore>> scores_scratch;
  thread_local std::vector<int> to_score_scratch;
  thread_local std::vector<NodeResultCache::Entry*> entries_scratch;
  std::vector<WeightedScorePlugin>& active = active_scratch;
  std::vector<std::vector<NodeScore>>& scores = scores_scratch;
  std::vector<int>& to_score = to_score_scratch;
  std::vector<NodeResultCache::Entry*>& entries = entries_scratch;
  active.clear();
  to_score.clear();
  for (const WeightedScorePlugin& w : score_) {
    if (!state.SkipScore(w.plugin->Name())) active.push_back(w);
  }
  if (active.empty() || nodes.empty()) return Status();
  const size_t n = nodes.size();
  if (cache != nullptr) {
    thread_local std::vector<ScorePlugin*> plugins_scratch;
    std::vector<ScorePlugin*>& plugins = plugins_scratch;
    plugins.clear();
    for (const WeightedScorePlugin& w : active) plugins.push_back(w.plugin);
    if (!cache->PrepareScore(pod, plugins, state)) cache = nullptr;
  }
  // The cache's entries of `nodes`: the caller's, or looked up here.
  const std::vector<NodeResultCache::Entry*>* node_entries = cached;
  if (cache != nullptr && (cached == nullptr || cached->size() != n)) {
    cache->Reserve(n);
    entries.resize(n);
    for (size_t i = 0; i < n; ++i) entries[i] = &cache->At(*nodes[i]);
    node_entries = &entries;
  }
  if (cache != nullptr && by_plugin == nullptr) {
    return ScoreFromCache(parallelizer_, state, pod, nodes, active, *cache, *node_entries, totals);
  }
  if (scores.size() < active.size()) scores.resize(active.size());
  for (size_t k = 0; k < active.size(); ++k) scores[k].assign(n, NodeScore{});
  if (cache != nullptr) {
    for (size_t i = 0; i < n; ++i) {
      const NodeResultCache::Entry& e = *(*node_entries)[i];
      if (!e.scored) {
        to_score.push_back(static_cast<int>(i));
        continue;
      }
      const int64_t* raw = cache->raw(e);
      for (size_t k = 0; k < active.size(); ++k) scores[k][i] = NodeScore{cache->name(e), raw[k]};
    }
    cache->counters().score_hits += static_cast<int64_t>(n - to_score.size());
    cache->counters().score_misses += static_cast<int64_t>(to_score.size());
  }
  const int to_run = cache != nullptr ? static_cast<int>(to_score.size()) : static_cast<int>(n);
  std::mutex err_mu;
  Status first_error;
  std::atomic<bool> failed{false};
  parallelizer_.Until(to_run, [&](int j) {
    if (failed.load(std::memory_order_relaxed)) return;
    const int i = cache != nullptr ? to_score[static_cast<size_t>(j)] : j;
    for (size_t k = 0; k < active.size(); ++k) {
      int64_t s = 0;
      Status st = active[k].plugin->Score(state, pod, *nodes[i], &s);
      if (!st.IsSuccess()) {
        std::lock_guard<std::mutex> lock(err_mu);
        if (!failed.exchange(true)) {
          first_error = ScoreError(*active[k].plugin, st);
        }
        return;
      }
      scores[k][static_cast<size_t>(i)] = NodeScore{nodes[i]->name(), s};
    }
  });
  if (failed.load()) return first_error;
  for (int i : to_score) {
    NodeResultCache::Entry& e = *(*node_entries)[static_cast<size_t>(i)];
    int64_t* raw = cache->raw(e);
    for (size_t k = 0; k < active.size(); ++k) raw[k] = scores[k][static_cast<size_t>(i)].score;
    // An out-of-range score is reported by the loop below.
    size_t bad = 0;
    StoreFixedTotal(e, raw, active, &bad);
  }
  for (size_t k = 0; k < active.size(); ++k) {
    ScorePlugin* p = active[k].plugin;
    if (p->HasNormalizeScore()) {
      Status st = p->NormalizeScore(state, pod, scores[k]);
      if (!st.IsSuccess()) return NormalizeError(*p, st);
    }
    for (size_t i = 0; i < n; ++i) {
      int64_t s = scores[k][i].score;
      if (s < kMinNodeScore || s > kMaxNodeScore) return RangeError(*p, s);
      (*totals)[i] += s * active[k].weight;
    }
    if (by_plugin != nullptr) {
      PluginScores& ps =
          by_plugin->emplace_back(PluginScores{std::string(p->Name()), active[k].weight, {}});
      ps.scores.reserve(n);
      for (size_t i = 0; i < n; ++i) ps.scores.push_back(scores[k][i].score * active[k].weight);
    }
  }
  return Status();
}

Status Framework::RunReservePluginsUntimed(CycleState& state, const PodInfo& pod,
                                           std::string_view node) {
  for (ReservePlugin* p : reserve_) {
    Status st = p->Reserve(state, pod, node);
    if (!st.IsSuccess()) {
      if (st.IsRejected()) return std::move(st.WithPlugin(p->Name()));
      return Status(Code::kError,
                    gantry::StrCat("running Reserve plugin \"", p->Name(), "\": ", st.Message()))
          .WithPlugin(p->Name());
    }
  }
  return Status();
}

void Framework::RunUnreservePluginsUntimed(CycleState& state, const PodInfo& pod,
                                           std::string_view node) {
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it) (*it)->Unreserve(state, pod, node);
}

Status Framework::RunPermitPluginsUntimed(CycleState& state, const PodInfo& pod,
                                          std::string_view node) {
  for (PermitPlugin* p : permit_) {
    int64_t timeout = 0;
    Status st = p->Permit(state, pod, node, &timeout);
    if (st.IsSuccess()) continue;
    if (st.IsWait()) {
      // Gantry admits groups in one group cycle and holds nothing while a
      // group waits (design §4), so a per-pod Permit barrier is not offered.
      return Status(
                 Code::kUnschedulable,
                 gantry::StrCat("plugin \"", p->Name(),
                                "\" asked to wait in Permit; Gantry does not hold pods in Permit"))
          .WithPlugin(p->Name());
    }
    if (st.IsRejected()) return std::move(st.WithPlugin(p->Name()));
    return Status(Code::kError,
                  gantry::StrCat("running Permit plugin \"", p->Name(), "\": ", st.Message()))
        .WithPlugin(p->Name());
  }
  return Status();
}

Status Framework::RunPreBindPluginsUntimed(CycleState& state, const PodInfo& pod,
                                           std::string_view node) {
  for (PreBindPlugin* p : pre_bind_) {
    Status st = p->PreBind(state, pod, node);
    if (st.IsSkip()) continue;
    if (!st.IsSuccess()) return std::move(st.WithPlugin(p->Name()));
  }
  return Status();
}

Status Framework::RunBindPluginsUntimed(CycleState& state, const PodInfo& pod,
                                        std::string_view node) {
  for (BindPlugin* p : bind_) {
    Status st = p->Bind(state, pod, node);
    if (st.IsSkip()) continue;
    if (!st.IsSuccess()) return std::move(st.WithPlugin(p->Name()));
    return st;
  }
  return Status(Code::kError, "all bind plugins skipped the pod");
}

void Framework::RunPostBindPluginsUntimed(CycleState& state, const PodInfo& pod,
                                          std::string_view node) {
  for (PostBindPlugin* p : post_bind_) p->PostBind(state, pod, node);
}

// ---- Timed extension points -----------------------------------------------

template <typename Body, typename CodeOf>
auto Framework::Timed(std::string_view point, Body&& body, CodeOf&& code_of) {
  if (point_observer_ == nullptr) return body();
  const auto start = std::chrono::steady_clock::now();
  auto result = body();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  point_observer_->ObserveExtensionPoint(point, CodeName(code_of(result)), scheduler_name_,
                                         seconds);
  return result;
}

namespace {
Code StatusCode(const Status& st) { return st.code(); }
}  // namespace

Status Framework::RunPreFilterPlugins(CycleState& state, const PodInfo& pod,
                                      PreFilterResult* result) {
  return Timed(
      "PreFilter", [&] { return RunPreFilterPluginsUntimed(state, pod, result); }, StatusCode);
}

PostFilterResult Framework::RunPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                                 const NodeToStatus& filtered) {
  return Timed(
      "PostFilter", [&] { return RunPostFilterPluginsUntimed(state, pod, filtered); },
      [](const PostFilterResult& r) { return r.status.code(); });
}

Status Framework::RunPreScorePlugins(CycleState& state, const PodInfo& pod,
                                     const std::vector<const NodeInfo*>& nodes) {
  return Timed(
      "PreScore", [&] { return RunPreScorePluginsUntimed(state, pod, nodes); }, StatusCode);
}

Status Framework::RunScorePlugins(const CycleState& state, const PodInfo& pod,
                                  const std::vector<const NodeInfo*>& nodes,
                                  std::vector<int64_t>* totals,
                                  std::vector<PluginScores>* by_plugin, NodeResultCache* cache,
                                  const std::vector<NodeResultCache::Entry*>* cached) {
  return Timed(
      "Score",
      [&] { return RunScorePluginsUntimed(state, pod, nodes, totals, by_plugin, cache, cached); },
      StatusCode);
}

Status Framework::RunReservePlugins(CycleState& state, const PodInfo& pod, std::string_view node) {
  return Timed(
      "Reserve", [&] { return RunReservePluginsUntimed(state, pod, node); }, StatusCode);
}

void Framework::RunUnreservePlugins(CycleState& state, const PodInfo& pod, std::string_view node) {
  Timed(
      "Unreserve",
      [&] {
        RunUnreservePluginsUntimed(state, pod, node);
        return Status();
      },
      StatusCode);
}

Status Framework::RunPermitPlugins(CycleState& state, const PodInfo& pod, std::string_view node) {
  return Timed(
      "Permit", [&] { return RunPermitPluginsUntimed(state, pod, node); }, StatusCode);
}

Status Framework::RunPreBindPlugins(CycleState& state, const PodInfo& pod, std::string_view node) {
  return Timed(
      "PreBind", [&] { return RunPreBindPluginsUntimed(state, pod, node); }, StatusCode);
}

Status Framework::RunBindPlugins(CycleState& state, const PodInfo& pod, std::string_view node) {
  return Timed(
      "Bind", [&] { return RunBindPluginsUntimed(state, pod, node); }, StatusCode);
}

void Framework::RunPostBindPlugins(CycleState& state, const PodInfo& pod, std::string_view node) {
  Timed(
      "PostBind",
      [&] {
        RunPostBindPluginsUntimed(state, pod, node);
        return Status();
      },
      StatusCode);
}

}  // namespace gantry::framework
