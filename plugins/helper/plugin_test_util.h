// Test-only drivers that run a plugin through the framework's call order on
// a fresh CycleState: PreFilter -> Filter and PreScore -> Score ->
// NormalizeScore, exactly as the runtime does (Skip honoured).
#ifndef GANTRY_PLUGINS_HELPER_PLUGIN_TEST_UTIL_H_
#define GANTRY_PLUGINS_HELPER_PLUGIN_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "gantry/cycle_state.h"
#include "gantry/plugin.h"
#include "gantry/types.h"

namespace gantry::plugins::testing {

// Runs PreFilter (when the plugin has one) then Filter on one node. A
// rejecting PreFilter status is returned as-is; a Skip returns Success.
inline framework::Status RunFilter(framework::Plugin& plugin, const framework::PodInfo& pod,
                                   const framework::NodeInfo& node) {
  framework::CycleState state;
  std::vector<framework::NodeInfo*> nodes{const_cast<framework::NodeInfo*>(&node)};
  if (auto* pf = dynamic_cast<framework::PreFilterPlugin*>(&plugin)) {
    framework::PreFilterResult result;
    framework::Status st = pf->PreFilter(state, pod, nodes, &result);
    if (st.IsSkip()) return framework::Status();
    if (!st.IsSuccess()) return st;
    if (result.node_names && !result.node_names->contains(std::string(node.name()))) {
      return framework::Status(framework::Code::kUnschedulableAndUnresolvable,
                               "node(s) didn't satisfy plugin(s) [" + std::string(plugin.Name()) + "]");
    }
  }
  auto* f = dynamic_cast<framework::FilterPlugin*>(&plugin);
  if (f == nullptr) return framework::Status::Error("not a filter plugin");
  return f->Filter(state, pod, node);
}

// Runs PreScore (when present), Score on every node and NormalizeScore.
// Returns the final scores in node order; `status` receives the first
// non-success status. A PreScore Skip yields all-zero scores.
inline std::vector<int64_t> RunScore(framework::Plugin& plugin, const framework::PodInfo& pod,
                                     const std::vector<const framework::NodeInfo*>& nodes,
                                     framework::Status* status = nullptr) {
  framework::CycleState state;
  std::vector<int64_t> out(nodes.size(), 0);
  if (auto* ps = dynamic_cast<framework::PreScorePlugin*>(&plugin)) {
    framework::Status st = ps->PreScore(state, pod, nodes);
    if (st.IsSkip()) return out;
    if (!st.IsSuccess()) {
      if (status) *status = st;
      return out;
    }
  }
  auto* sp = dynamic_cast<framework::ScorePlugin*>(&plugin);
  if (sp == nullptr) {
    if (status) *status = framework::Status::Error("not a score plugin");
    return out;
  }
  std::vector<framework::NodeScore> scores;
  for (const framework::NodeInfo* n : nodes) {
    int64_t s = 0;
    framework::Status st = sp->Score(state, pod, *n, &s);
    if (!st.IsSuccess()) {
      if (status) *status = st;
      return out;
    }
    scores.push_back({n->name(), s});
  }
  if (sp->HasNormalizeScore()) {
    framework::Status st = sp->NormalizeScore(state, pod, scores);
    if (!st.IsSuccess() && status) *status = st;
  }
  for (size_t i = 0; i < scores.size(); ++i) out[i] = scores[i].score;
  return out;
}

}  // namespace gantry::plugins::testing

#endif  // GANTRY_PLUGINS_HELPER_PLUGIN_TEST_UTIL_H_
