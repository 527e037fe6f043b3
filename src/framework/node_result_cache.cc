#include "src/framework/node_result_cache.h"

namespace gantry::framework {

template <typename P>
void NodeResultCache::ReuseOf(const std::vector<P*>& plugins, std::vector<Reuse>* out) {
  out->assign(plugins.size(), Reuse{});
  for (size_t i = 0; i < plugins.size(); ++i) {
    Reuse& r = (*out)[i];
    r.local = dynamic_cast<const NodeLocalPlugin*>(plugins[i]);
    if (r.local == nullptr) r.tracked = dynamic_cast<const NodeTrackedPlugin*>(plugins[i]);
  }
}

bool NodeResultCache::AllSame(std::vector<Reuse>& reuse, const PodInfo& a, const PodInfo& b,
                              const CycleState& state, bool fresh) {
  for (Reuse& r : reuse) {
    if (r.local != nullptr) {
      if (!r.local->SameNodeResults(a, b)) return false;
    } else if (r.tracked != nullptr) {
      const uint64_t key = r.tracked->NodeResultsKey(state);
      if (key == 0 || (!fresh && key != r.key)) return false;
      if (fresh) r.key = key;
    } else {
      return false;
    }
  }
  return true;
}

bool NodeResultCache::PrepareFilter(const void* owner, const PodInfo& pod,
                                    const std::vector<FilterPlugin*>& filters,
                                    const CycleState& state) {
  // Equal results to the held pod's imply node-local results for `pod`.
  if (owner_ == owner && pod_.has_value() && filters_ == filters &&
      AllSame(filter_reuse_, *pod_, pod, state, /*fresh=*/false)) {
    if (num_tracked_ > 0) SyncTracked(state);
    return true;
  }
  std::vector<Reuse> reuse;
  ReuseOf(filters, &reuse);
  if (!AllSame(reuse, pod, pod, state, /*fresh=*/true)) return false;
  Clear();
  owner_ = owner;
  pod_.emplace(pod);
  filters_ = filters;
  filter_reuse_ = std::move(reuse);
  marks_.assign(filters_.size(), 0);
  num_tracked_ = 0;
  for (const Reuse& r : filter_reuse_) num_tracked_ += r.tracked != nullptr ? 1 : 0;
  // Sets the marks (nothing is held yet).
  if (num_tracked_ > 0) SyncTracked(state);
  return true;
}

void NodeResultCache::SyncTracked(const CycleState& state) {
  for (size_t i = 0; i < filter_reuse_.size(); ++i) {
    const NodeTrackedPlugin* t = filter_reuse_[i].tracked;
    if (t == nullptr) continue;
    changed_.clear();
    if (!t->TrackedChangesSince(state, &marks_[i], &changed_)) {
      ClearEntries();
      continue;
    }
    if (changed_.empty() || entries_.empty()) continue;
    for (size_t slot = slot_by_name_.size(); slot < names_.size(); ++slot)
      slot_by_name_.emplace(names_[slot], static_cast<uint32_t>(slot));
    for (const std::string& name : changed_) {
      auto it = slot_by_name_.find(name);
      if (it == slot_by_name_.end()) continue;
      Entry& e = entries_[it->second];
      Forget(e, e.generation);
    }
  }
}

bool NodeResultCache::PrepareScore(const PodInfo& pod, const std::vector<ScorePlugin*>& scores,
                                   const CycleState& state) {
  if (!pod_.has_value()) return false;
  if (scores == scores_) return AllSame(score_reuse_, *pod_, pod, state, /*fresh=*/false);
  std::vector<Reuse> reuse;
  ReuseOf(scores, &reuse);
  if (!AllSame(reuse, *pod_, pod, state, /*fresh=*/true)) return false;
  // A tracked score plugin's changes are those its filter side reports.
  for (const Reuse& r : reuse) {
    if (r.tracked == nullptr) continue;
    bool synced = false;
    for (const Reuse& f : filter_reuse_)
      synced = synced || (f.tracked == r.tracked && f.key == r.key);
    if (!synced) return false;
  }
  for (Entry& e : entries_) {
    e.scored = false;
    e.fixed_total = 0;
  }
  scores_ = scores;
  score_reuse_ = std::move(reuse);
  raw_.assign(entries_.size() * scores_.size(), 0);
  return true;
}

void NodeResultCache::Forget(Entry& e, uint64_t generation) {
  e.generation = generation;
  e.verdict = Entry::Verdict::kUnknown;
  e.scored = false;
  e.fixed_total = 0;
  statuses_[e.slot] = Status();
}

NodeResultCache::Entry& NodeResultCache::At(const NodeInfo& node) {
  auto [it, inserted] = slot_of_.try_emplace(&node, static_cast<uint32_t>(entries_.size()));
  if (inserted) {
    Entry& fresh = entries_.emplace_back();
    fresh.node = &node;
    fresh.generation = node.generation();
    fresh.slot = it->second;
    names_.push_back(node.name());
    statuses_.emplace_back();
    raw_.resize(entries_.size() * scores_.size(), 0);
    return fresh;
  }
  Entry& e = entries_[it->second];
  if (e.generation != node.generation()) Forget(e, node.generation());
  return e;
}

NodeResultCache::Entry& NodeResultCache::AtNewPosition(const NodeInfo& node, size_t position) {
  if (position >= slot_at_.size()) slot_at_.resize(position + 1, kNoSlot);
  Entry& e = At(node);
  slot_at_[position] = e.slot;
  return e;
}

void NodeResultCache::ClearEntries() {
  entries_.clear();
  names_.clear();
  statuses_.clear();
  raw_.clear();
  slot_of_.clear();
  slot_at_.clear();
  slot_by_name_.clear();
}

void NodeResultCache::Clear() {
  owner_ = nullptr;
  pod_.reset();
  filters_.clear();
  filter_reuse_.clear();
  marks_.clear();
  num_tracked_ = 0;
  scores_.clear();
  score_reuse_.clear();
  ClearEntries();
}

}  // namespace gantry::framework
