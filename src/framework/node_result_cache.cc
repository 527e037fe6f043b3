#include "src/framework/node_result_cache.h"

namespace gantry::framework {
namespace {

// The NodeLocalPlugin side of each plugin (null when it has none).
template <typename P>
std::vector<const NodeLocalPlugin*> Locals(const std::vector<P*>& plugins) {
  std::vector<const NodeLocalPlugin*> out;
  out.reserve(plugins.size());
  for (P* p : plugins) out.push_back(dynamic_cast<const NodeLocalPlugin*>(p));
  return out;
}

// Whether every plugin says its per-node results for `a` and `b` are equal.
bool AllSame(const std::vector<const NodeLocalPlugin*>& locals, const PodInfo& a,
             const PodInfo& b) {
  for (const NodeLocalPlugin* l : locals) {
    if (l == nullptr || !l->SameNodeResults(a, b)) return false;
  }
  return true;
}

}  // namespace

bool NodeResultCache::PrepareFilter(const void* owner, const PodInfo& pod,
                                    const std::vector<FilterPlugin*>& filters) {
  // Equal results to the held pod's imply node-local results for `pod`.
  if (owner_ == owner && pod_.has_value() && filters_ == filters &&
      AllSame(filter_locals_, *pod_, pod)) {
    return true;
  }
  std::vector<const NodeLocalPlugin*> locals = Locals(filters);
  if (!AllSame(locals, pod, pod)) return false;
  Clear();
  owner_ = owner;
  pod_.emplace(pod);
  filters_ = filters;
  filter_locals_ = std::move(locals);
  return true;
}

bool NodeResultCache::PrepareScore(const PodInfo& pod, const std::vector<ScorePlugin*>& scores) {
  if (!pod_.has_value()) return false;
  if (scores == scores_) return AllSame(score_locals_, *pod_, pod);
  std::vector<const NodeLocalPlugin*> locals = Locals(scores);
  if (!AllSame(locals, *pod_, pod)) return false;
  for (Entry& e : entries_) {
    e.scored = false;
    e.fixed_total = 0;
  }
  scores_ = scores;
  score_locals_ = std::move(locals);
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

void NodeResultCache::Clear() {
  owner_ = nullptr;
  pod_.reset();
  filters_.clear();
  filter_locals_.clear();
  scores_.clear();
  score_locals_.clear();
  entries_.clear();
  names_.clear();
  statuses_.clear();
  raw_.clear();
  slot_of_.clear();
  slot_at_.clear();
}

}  // namespace gantry::framework
