#include "src/framework/schedule_pod.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "gantry/util/strings.h"

namespace gantry::framework {
namespace {

constexpr int kMinFeasibleNodesToFind = 100;
constexpr int kMinFeasibleNodesPercentageToFind = 5;

}  // namespace

int NumFeasibleNodesToFind(int num_all_nodes, int32_t percentage) {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  int32_t pct = percentage;
  if (pct >= 100) return num_all_nodes;
  if (pct <= 0) {
    pct = 50 - num_all_nodes / 125;
    if (pct < kMinFeasibleNodesPercentageToFind) pct = kMinFeasibleNodesPercentageToFind;
  }
  int64_t n = static_cast<int64_t>(num_all_nodes) * pct / 100;
  if (n < kMinFeasibleNodesToFind) return kMinFeasibleNodesToFind;
  return static_cast<int>(n);
}

std::string FitError::Message() const {
  std::string msg = gantry::StrCat("0/", num_all_nodes, " nodes are available:");
  if (!diagnosis.pre_filter_msg.empty()) {
    gantry::StrAppend(&msg, " ", diagnosis.pre_filter_msg, ".");
  } else {
    std::map<std::string, int> histogram;
    for (const auto& [node, st] : diagnosis.node_to_status) {
      for (const std::string& r : st.reasons()) histogram[r]++;
    }
    if (diagnosis.absent_nodes_status) {
      int absent = num_all_nodes - static_cast<int>(diagnosis.node_to_status.size());
      if (absent > 0) {
        for (const std::string& r : diagnosis.absent_nodes_status->reasons())
          histogram[r] += absent;
      }
    }
    std::vector<std::string> parts;
    for (const auto& [reason, count] : histogram)
      parts.push_back(gantry::StrCat(count, " ", reason));
    std::sort(parts.begin(), parts.end());
    std::string joined;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i) joined += ", ";
      joined += parts[i];
    }
    gantry::StrAppend(&msg, " ", joined, ".");
  }
  if (!diagnosis.post_filter_msg.empty()) gantry::StrAppend(&msg, " ", diagnosis.post_filter_msg);
  return msg;
}

void PodScheduler::RecordRejection(const NodeInfo& node, Status status, FitError* fit_error) {
  auto& plugins = fit_error->diagnosis.unschedulable_plugins;
  if (!plugins.contains(gantry::AsAbsl(status.plugin())))
    plugins.insert(std::string(status.plugin()));
  fit_error->diagnosis.node_to_status.emplace(std::string(node.name()), std::move(status));
}

Status PodScheduler::Schedule(Framework& fw, CycleState& state, const PodInfo& pod,
                              const state::Snapshot& snapshot, ScheduleResult* result,
                              FitError* fit_error, const std::vector<NodeInfo*>* restrict_to,
                              NodeResultCache* cache) {
  const std::vector<NodeInfo*>& all = restrict_to != nullptr ? *restrict_to : snapshot.NodeInfos();
  const int num_all = static_cast<int>(all.size());
  fit_error->num_all_nodes = num_all;
  if (num_all == 0)
    return Status(Code::kUnschedulableAndUnresolvable, "no nodes available to schedule pods");

  // PreFilter.
  PreFilterResult pre;
  Status st = fw.RunPreFilterPlugins(state, pod, &pre);
  if (!st.IsSuccess()) {
    if (!st.IsRejected()) return st;
    fit_error->diagnosis.pre_filter_msg = st.Message();
    fit_error->diagnosis.absent_nodes_status = st;
    fit_error->diagnosis.unschedulable_plugins.insert(std::string(st.plugin()));
    return Status(st.code(), st.Message()).WithPlugin(st.plugin());
  }

  // The candidate list: all nodes, or those PreFilter kept (in snapshot order).
  std::vector<NodeInfo*> narrowed;
  const std::vector<NodeInfo*>* candidates = &all;
  if (pre.node_names) {
    for (NodeInfo* n : all) {
      if (pre.node_names->contains(std::string(n->name()))) narrowed.push_back(n);
    }
    candidates = &narrowed;
    std::string plugins;
    for (const std::string& p : pre.narrowed_by) plugins += (plugins.empty() ? "" : " ") + p;
    fit_error->diagnosis.absent_nodes_status =
        Status(Code::kUnschedulableAndUnresolvable,
               gantry::StrCat("node(s) didn't satisfy plugin(s) [", plugins, "]"));
    for (const std::string& p : pre.narrowed_by)
      fit_error->diagnosis.unschedulable_plugins.insert(p);
  }
  const int n = static_cast<int>(candidates->size());
  const int32_t pct = fw.percentage_of_nodes_to_score().value_or(global_percentage_);
  const int to_find = std::min(n, NumFeasibleNodesToFind(num_all, pct));

  // Filter from a rotating start index, in waves evaluated in parallel: each
  // wave covers as many nodes as are still needed, and feasible nodes are
  // taken in candidate order. The outcome does not depend on thread timing
  // (design rule 6), and at most one wave of extra nodes is evaluated.
  const size_t start = n > 0 ? next_start_node_index_ % static_cast<size_t>(n) : 0;
  std::vector<uint8_t>& verdict = verdict_scratch_;  // 1 = fits, 2 = rejected
  std::vector<Status>& statuses = status_scratch_;
  std::vector<const NodeInfo*> feasible;
  feasible.reserve(static_cast<size_t>(to_find));
  std::vector<NodeResultCache::Entry*> feasible_entries;  // with the cache: theirs
  // With the cache, rejected nodes and their entries; the diagnosis is built
  // from them only when no node fits (a placed pod does not need it).
  std::vector<std::pair<const NodeInfo*, NodeResultCache::Entry*>>& rejected = rejected_scratch_;
  std::atomic<bool> had_error{false};
  std::mutex error_mu;
  Status first_error;
  int evaluated = 0;
  const std::vector<FilterPlugin*> active_filters = fw.ActiveFilterPlugins(state);
  if (cache != nullptr && !cache->PrepareFilter(&fw, pod, active_filters, state)) cache = nullptr;
  // The snapshot's own list keeps its positions while the cache holds
  // entries (it is cleared when the nodes change), and the snapshot mirrors
  // its NodeInfos' generations by position.
  const bool by_position = candidates == &snapshot.NodeInfos() &&
                           snapshot.Generations().size() == snapshot.NodeInfos().size();
  std::vector<int>& misses = miss_scratch_;  // wave positions the cache does not hold
  std::vector<NodeResultCache::Entry*>& entries = entry_scratch_;
  const size_t nn = static_cast<size_t>(n);
  // One pass over the candidates; a second one without the cache when the
  // first found no node with kept results of a NodeTrackedPlugin (their
  // rejections may name another pod's objects). With the cache, rejections
  // reach the diagnosis only after the pass, so the first one leaves none.
  while (true) {
    feasible.clear();
    feasible_entries.clear();
    rejected.clear();
    evaluated = 0;
    if (cache != nullptr) {
      // Entry pointers are kept across waves: no insertion may move them.
      cache->Reserve(static_cast<size_t>(n));
      feasible_entries.reserve(static_cast<size_t>(to_find));
    }
    while (evaluated < n && static_cast<int>(feasible.size()) < to_find) {
      const int wave = std::min(n - evaluated, to_find - static_cast<int>(feasible.size()));
      const int base = evaluated;
      // Candidate index of the wave's first node; the wave wraps around.
      const size_t first = (start + static_cast<size_t>(base)) % nn;
      verdict.assign(static_cast<size_t>(wave), 0);
      if (statuses.size() < static_cast<size_t>(wave)) statuses.resize(static_cast<size_t>(wave));
      auto node_at = [&](int k) {
        size_t idx = first + static_cast<size_t>(k);
        if (idx >= nn) idx -= nn;
        return (*candidates)[idx];
      };
      misses.clear();
      if (cache != nullptr) {
        entries.resize(static_cast<size_t>(wave));
        const uint64_t* generations = by_position ? snapshot.Generations().data() : nullptr;
        size_t idx = first;
        for (int k = 0; k < wave; ++k) {
          const NodeInfo& node = *(*candidates)[idx];
          NodeResultCache::Entry& e =
              by_position ? cache->At(node, idx, generations[idx]) : cache->At(node);
          if (++idx == nn) idx = 0;
          entries[static_cast<size_t>(k)] = &e;
          if (e.verdict == NodeResultCache::Entry::Verdict::kFits) {
            verdict[static_cast<size_t>(k)] = 1;
          } else if (e.verdict == NodeResultCache::Entry::Verdict::kRejected) {
            verdict[static_cast<size_t>(k)] = 2;
          } else {
            misses.push_back(k);
          }
        }
        cache->counters().filter_hits += wave - static_cast<int64_t>(misses.size());
        cache->counters().filter_misses += static_cast<int64_t>(misses.size());
      }
      const int to_run = cache != nullptr ? static_cast<int>(misses.size()) : wave;
      fw.parallelizer().Until(to_run, [&](int j) {
        if (had_error.load(std::memory_order_relaxed)) return;
        const int k = cache != nullptr ? misses[static_cast<size_t>(j)] : j;
        Status fst = fw.RunFilterPlugins(active_filters, state, pod, *node_at(k));
        if (fst.IsSuccess()) {
          verdict[static_cast<size_t>(k)] = 1;
        } else if (fst.IsError()) {
          std::lock_guard<std::mutex> lock(error_mu);
          if (!had_error.exchange(true)) first_error = std::move(fst);
        } else {
          verdict[static_cast<size_t>(k)] = 2;
          statuses[static_cast<size_t>(k)] = std::move(fst);
        }
      });
      if (had_error.load()) return first_error;
      for (int k : misses) {
        NodeResultCache::Entry& e = *entries[static_cast<size_t>(k)];
        if (verdict[static_cast<size_t>(k)] == 1) {
          e.verdict = NodeResultCache::Entry::Verdict::kFits;
        } else {
          e.verdict = NodeResultCache::Entry::Verdict::kRejected;
          cache->status(e) = std::move(statuses[static_cast<size_t>(k)]);
        }
      }
      size_t idx = first;
      for (int k = 0; k < wave; ++k) {
        const NodeInfo* node = (*candidates)[idx];
        if (++idx == nn) idx = 0;
        if (verdict[static_cast<size_t>(k)] == 1) {
          if (static_cast<int>(feasible.size()) < to_find) {
            feasible.push_back(node);
            if (cache != nullptr) feasible_entries.push_back(entries[static_cast<size_t>(k)]);
          }
        } else if (cache != nullptr) {
          rejected.emplace_back(node, entries[static_cast<size_t>(k)]);
        } else {
          RecordRejection(*node, std::move(statuses[static_cast<size_t>(k)]), fit_error);
        }
      }
      evaluated += wave;
    }
    if (feasible.empty() && cache != nullptr) {
      if (cache->tracked()) {
        cache = nullptr;
        continue;
      }
      for (const auto& [node, e] : rejected) RecordRejection(*node, cache->status(*e), fit_error);
    }
    break;
  }
  const int found = static_cast<int>(feasible.size());
  next_start_node_index_ =
      (start + static_cast<size_t>(evaluated)) % static_cast<size_t>(std::max(n, 1));
  result->evaluated_nodes = evaluated;
  result->feasible_nodes = found;
  if (found == 0) {
    return Status(Code::kUnschedulable, "no feasible nodes");
  }
  if (found == 1) {
    result->suggested_host = std::string(feasible[0]->name());
    return Status();
  }

  // Score.
  st = fw.RunPreScorePlugins(state, pod, feasible);
  if (!st.IsSuccess()) return st;
  std::vector<int64_t> totals;
  st = fw.RunScorePlugins(state, pod, feasible, &totals, nullptr, cache,
                          cache != nullptr ? &feasible_entries : nullptr);
  if (!st.IsSuccess()) return st;

  // selectHost: the maximum total, a tie broken by one uniform draw among
  // the tied nodes (the distribution of upstream's reservoir sampling).
  int64_t top = totals[0];
  int ties = 0;
  for (int64_t t : totals) {
    if (t > top) {
      top = t;
      ties = 1;
    } else if (t == top) {
      ++ties;
    }
  }
  int pick = ties > 1 ? std::uniform_int_distribution<int>(0, ties - 1)(rng_) : 0;
  size_t best = 0;
  for (size_t i = 0; i < totals.size(); ++i) {
    if (totals[i] == top && pick-- == 0) {
      best = i;
      break;
    }
  }
  result->suggested_host = std::string(feasible[best]->name());
  return Status();
}

}  // namespace gantry::framework
