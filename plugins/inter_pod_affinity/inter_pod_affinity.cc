#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "gantry/util/strings.h"
#include "plugins/helper/node_memo.h"

namespace gantry::plugins::inter_pod_affinity {
namespace {

using framework::AffinityTerm;
using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Status;
using framework::WeightedAffinityTerm;

constexpr std::string_view kPreFilterStateKey = "PreFilterInterPodAffinity";
constexpr std::string_view kPreScoreStateKey = "PreScoreInterPodAffinity";
const framework::StateKey kPreFilterKey{kPreFilterStateKey};
const framework::StateKey kPreScoreKey{kPreScoreStateKey};
// A (topologyKey, value) pair packed into one word.
using PairKey = uint64_t;
inline PairKey Pair(api::Symbol key, api::Symbol value) {
  return (static_cast<uint64_t>(key.id()) << 32) | value.id();
}
using TopologyCounts = absl::flat_hash_map<PairKey, int64_t>;

// Linear scan by symbol identity; label sets are small.
inline std::optional<api::Symbol> LabelValue(const api::Labels& labels, api::Symbol key) {
  for (const auto& [k, v] : labels) {
    if (k == key) return v;
  }
  return std::nullopt;
}

// Adds `delta` to the node's pair for `key` (if the node has the label);
// entries that drop to zero are removed, as upstream does.
inline void UpdateCount(TopologyCounts& m, const api::Labels& node_labels, api::Symbol key,
                        int64_t delta) {
  auto v = LabelValue(node_labels, key);
  if (!v) return;
  auto it = m.try_emplace(Pair(key, *v), 0).first;
  it->second += delta;
  if (it->second == 0) m.erase(it);
}

// A term of the incoming pod against an existing pod. Upstream unrolls the
// namespaceSelector into the namespace set at PreFilter; looking up the
// existing pod's namespace labels is equivalent. An empty selector selects
// every namespace.
bool IncomingTermMatches(const AffinityTerm& t, const api::Pod& existing,
                         const framework::FrameworkHandle& handle) {
  if (t.selector_matches_nothing) return false;
  bool ns_ok = t.namespaces.contains(existing.meta.namespace_);
  if (!ns_ok && t.namespace_selector) {
    if (t.namespace_selector->Empty()) {
      ns_ok = true;
    } else {
      const api::Labels* labels = handle.NamespaceLabels(existing.meta.namespace_);
      ns_ok = labels != nullptr && t.namespace_selector->Matches(*labels);
    }
  }
  return ns_ok && t.selector.Matches(existing.meta.labels);
}

// A term of an existing pod against the incoming pod, whose namespace has
// `ns_labels` (empty when the namespace is unknown).
bool ExistingTermMatches(const AffinityTerm& t, const api::Pod& incoming, const api::Labels& ns_labels) {
  if (t.selector_matches_nothing) return false;
  bool ns_ok = t.namespaces.contains(incoming.meta.namespace_) ||
               (t.namespace_selector && t.namespace_selector->Matches(ns_labels));
  return ns_ok && t.selector.Matches(incoming.meta.labels);
}

bool IncomingMatchesAll(const std::vector<AffinityTerm>& terms, const api::Pod& existing,
                        const framework::FrameworkHandle& handle) {
  if (terms.empty()) return false;
  for (const AffinityTerm& t : terms) {
    if (!IncomingTermMatches(t, existing, handle)) return false;
  }
  return true;
}

api::Labels NamespaceLabelsOf(const framework::FrameworkHandle& handle, api::Symbol ns) {
  const api::Labels* labels = handle.NamespaceLabels(ns);
  return labels != nullptr ? *labels : api::Labels();
}

// Runs fn(chunk, begin, end) over [0, n) in a few chunks per worker and
// returns the number of chunks (fn's chunk index is below it).
template <typename F>
int ParallelChunks(framework::Parallelizer& par, int n, F&& fn) {
  if (n <= 0) return 0;
  int chunks = std::min(n, std::max(1, par.parallelism() * 4));
  int per = (n + chunks - 1) / chunks;
  chunks = (n + per - 1) / per;
  par.Until(chunks, [&](int c) {
    int begin = c * per;
    fn(c, begin, std::min(n, begin + per));
  });
  return chunks;
}

// The three count maps of PreFilter. Entries are positive; a count that
// drops to zero is erased, so `empty()` means "no such pod anywhere".
struct FilterCounts {
  TopologyCounts existing_anti;  // existing pods' anti-affinity matching the pod
  TopologyCounts affinity;       // pods matching all required affinity terms
  TopologyCounts anti_affinity;  // pods matching each required anti-affinity term
};

class PreFilterState final : public framework::StateData {
 public:
  api::Labels ns_labels;  // incoming pod's namespace labels
  // Shared with the plugin's memo (read-only) until the first
  // AddPod/RemovePod, which takes a private copy.
  std::shared_ptr<FilterCounts> counts;
  bool self_matches_all_affinity = false;

  FilterCounts& MutableCounts() {
    if (counts.use_count() > 1) counts = std::make_shared<FilterCounts>(*counts);
    return *counts;
  }
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

struct ScoreData {
  // topologyKey -> (value -> summed weight).
  std::vector<std::pair<api::Symbol, absl::flat_hash_map<api::Symbol, int64_t>>> by_key;
};

class PreScoreState final : public framework::StateData {
 public:
  std::shared_ptr<const ScoreData> data;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);  // immutable after PreScore
  }
};

// Summed weights per topology pair, remembering the pair's symbols.
struct WeightEntry {
  api::Symbol key;
  api::Symbol value;
  int64_t weight = 0;
};
using TopologyWeights = absl::flat_hash_map<PairKey, WeightEntry>;

// Adds `weight` to the pair of `key` on a node labelled `labels`. Entries
// are kept even when they sum to zero, as upstream does.
inline void AddWeight(TopologyWeights& m, const api::Labels& labels, api::Symbol key, int64_t weight) {
  auto v = LabelValue(labels, key);
  if (!v) return;
  WeightEntry& e = m[Pair(key, *v)];
  e.key = key;
  e.value = *v;
  e.weight += weight;
}

}  // namespace

// ---- Args -----------------------------------------------------------------

InterPodAffinityArgs DecodeArgs(api::Decoder& d, api::JsonValue v) {
  InterPodAffinityArgs args;
  int64_t weight = args.hard_pod_affinity_weight;
  d.ForEachField(v, [&](std::string_view key, api::JsonValue value) {
    if (key == "apiVersion" || key == "kind") return;
    if (key == "hardPodAffinityWeight") {
      if (!value.is_null()) weight = d.Int(value);
    } else if (key == "ignorePreferredTermsOfExistingPods") {
      args.ignore_preferred_terms_of_existing_pods = d.Bool(value);
    } else {
      d.Fail(gantry::StrCat("unknown field \"", key, "\""));
    }
  });
  if (d.ok() && (weight < 0 || weight > 100)) {
    d.FailAt("hardPodAffinityWeight",
             gantry::StrCat("Invalid value: ", weight, ": not in valid range [0, 100]"));
  }
  args.hard_pod_affinity_weight = static_cast<int32_t>(weight);
  return args;
}

nlohmann::json ArgsToJson(const InterPodAffinityArgs& args) {
  return nlohmann::json{{"hardPodAffinityWeight", args.hard_pod_affinity_weight},
                        {"ignorePreferredTermsOfExistingPods", args.ignore_preferred_terms_of_existing_pods}};
}

// ---- Filtering ------------------------------------------------------------

// One node's contribution to a count map: (map, topology pair) -> count.
struct Contribution {
  uint8_t map = 0;  // 0 existing_anti, 1 affinity, 2 anti_affinity
  PairKey pair = 0;
  int64_t count = 0;
};
using Contributions = absl::InlinedVector<Contribution, 2>;

// A pass over one node list whose per-node contributions are kept across
// cycles while the signature stays the same.
struct NodePassMemo {
  std::string signature;
  helper::NodeChangeTracker tracker;
  std::vector<Contributions> by_position;
  // Scratch of one pass, by index into `changed`.
  std::vector<int> changed;
  std::vector<Contributions> fresh;
};

// PreFilter's per-node results of the last cycle: pass (1) for existing
// pods' required anti-affinity, pass (2)+(3) for the pod's own terms, both
// over all nodes, and the totals they add up to.
struct FilterMemo {
  NodePassMemo existing;
  NodePassMemo incoming;
  std::shared_ptr<FilterCounts> counts = std::make_shared<FilterCounts>();
};

namespace {

inline void AddContribution(Contributions& out, uint8_t map, const api::Labels& node_labels,
                            api::Symbol key) {
  auto v = LabelValue(node_labels, key);
  if (!v) return;
  const PairKey pair = Pair(key, *v);
  for (Contribution& c : out) {
    if (c.map == map && c.pair == pair) {
      ++c.count;
      return;
    }
  }
  out.push_back(Contribution{map, pair, 1});
}

void ApplyContributions(FilterCounts& counts, const Contributions& contributions, int64_t sign) {
  for (const Contribution& c : contributions) {
    TopologyCounts& m = c.map == 0   ? counts.existing_anti
                        : c.map == 1 ? counts.affinity
                                     : counts.anti_affinity;
    auto it = m.try_emplace(c.pair, 0).first;
    it->second += sign * c.count;
    if (it->second == 0) m.erase(it);
  }
}

void AddTermSignature(helper::Signature& sig, const AffinityTerm& t) {
  sig.Add(t.selector);
  sig.Add(static_cast<uint64_t>(t.selector_matches_nothing));
  std::vector<uint32_t> ns;
  for (api::Symbol s : t.namespaces) ns.push_back(s.id());
  std::sort(ns.begin(), ns.end());
  sig.Add(static_cast<uint64_t>(ns.size()));
  for (uint32_t id : ns) sig.Add(static_cast<uint64_t>(id));
  sig.Add(t.namespace_selector);
  sig.Add(t.topology_key);
}

// Brings `memo` up to date with `nodes` for `signature` (an empty one
// disables reuse), recomputing the changed positions with `compute` and
// swapping their contributions into `counts`.
template <typename Compute>
void UpdatePass(framework::Parallelizer& par, NodePassMemo& memo, const std::string& signature,
                const std::vector<NodeInfo*>& nodes, FilterCounts& counts, Compute&& compute) {
  if (signature.empty() || memo.signature != signature) {
    for (const Contributions& c : memo.by_position) ApplyContributions(counts, c, -1);
    memo.by_position.clear();
    memo.tracker.Reset();
    memo.signature = signature;
  }
  const size_t n = nodes.size();
  for (size_t i = n; i < memo.by_position.size(); ++i)
    ApplyContributions(counts, memo.by_position[i], -1);
  memo.tracker.Diff(nodes, &memo.changed);
  memo.by_position.resize(n);
  const int num_changed = static_cast<int>(memo.changed.size());
  memo.fresh.assign(memo.changed.size(), Contributions());
  auto run = [&](int begin, int end) {
    for (int k = begin; k < end; ++k)
      compute(*nodes[static_cast<size_t>(memo.changed[k])], memo.fresh[k]);
  };
  if (num_changed >= 64) {
    ParallelChunks(par, num_changed, [&](int, int begin, int end) { run(begin, end); });
  } else {
    run(0, num_changed);
  }
  for (int k = 0; k < num_changed; ++k) {
    Contributions& slot = memo.by_position[static_cast<size_t>(memo.changed[k])];
    ApplyContributions(counts, slot, -1);
    slot = std::move(memo.fresh[k]);
    ApplyContributions(counts, slot, +1);
  }
}

bool UsesNamespaceSelector(const std::vector<AffinityTerm>& terms) {
  for (const AffinityTerm& t : terms) {
    if (t.namespace_selector && !t.namespace_selector->Empty()) return true;
  }
  return false;
}

}  // namespace

InterPodAffinity::InterPodAffinity(InterPodAffinityArgs args, framework::FrameworkHandle& handle)
    : args_(args), handle_(handle) {}

InterPodAffinity::~InterPodAffinity() = default;

Status InterPodAffinity::PreFilter(CycleState& state, const PodInfo& pod_info,
                                   const std::vector<NodeInfo*>& nodes,
                                   framework::PreFilterResult* /*result*/) {
  const api::Pod& pod = pod_info.p();
  auto s = std::make_unique<PreFilterState>();
  s->ns_labels = NamespaceLabelsOf(handle_, pod.meta.namespace_);
  framework::Parallelizer& par = handle_.parallelizer();
  const auto& aff_terms = pod_info.required_affinity;
  const auto& anti_terms = pod_info.required_anti_affinity;

  std::lock_guard<std::mutex> lock(memo_mu_);
  if (memo_ == nullptr) memo_ = std::make_unique<FilterMemo>();
  FilterMemo& m = *memo_;
  // A state of an earlier cycle still reads the counts: update a copy.
  if (m.counts.use_count() > 1) m.counts = std::make_shared<FilterCounts>(*m.counts);
  FilterCounts& counts = *m.counts;

  const std::vector<NodeInfo*> kNoNodes;

  // (1) Existing pods whose required anti-affinity selects the incoming pod:
  // depends on the pod's namespace, its labels and its namespace's labels.
  // The pass runs over all nodes, not just those with such pods, so that a
  // node's position stays put when it gains its first one; while no node
  // has any, it is skipped.
  {
    helper::Signature sig;
    sig.Add(pod.meta.namespace_);
    sig.AddList(pod.meta.labels);
    sig.AddList(s->ns_labels);
    const api::Labels& ns_labels = s->ns_labels;
    const bool any_anti = !handle_.Snapshot().HavePodsWithRequiredAntiAffinity().empty();
    UpdatePass(
        par, m.existing, sig.bytes(), any_anti ? nodes : kNoNodes, counts,
        [&](const NodeInfo& ni, Contributions& out) {
          if (ni.node() == nullptr || ni.pods_with_required_anti_affinity().empty()) return;
          const api::Labels& labels = ni.node()->meta.labels;
          for (const framework::PodInfoPtr& existing : ni.pods_with_required_anti_affinity()) {
            for (const AffinityTerm& t : existing->required_anti_affinity) {
              if (ExistingTermMatches(t, pod, ns_labels))
                AddContribution(out, 0, labels, t.topology_key);
            }
          }
        });
  }

  // (2), (3) Existing pods matching the incoming pod's required terms: depends
  // on the terms, and on namespace labels when a term selects namespaces by
  // label (those may change without a node changing, so no reuse then).
  {
    const bool any_terms = !aff_terms.empty() || !anti_terms.empty();
    std::string signature;
    if (any_terms && !UsesNamespaceSelector(aff_terms) && !UsesNamespaceSelector(anti_terms)) {
      helper::Signature sig;
      sig.Add(static_cast<uint64_t>(aff_terms.size()));
      for (const AffinityTerm& t : aff_terms) AddTermSignature(sig, t);
      sig.Add(static_cast<uint64_t>(anti_terms.size()));
      for (const AffinityTerm& t : anti_terms) AddTermSignature(sig, t);
      signature = sig.bytes();
    }
    UpdatePass(par, m.incoming, signature, any_terms ? nodes : kNoNodes, counts,
               [&](const NodeInfo& ni, Contributions& out) {
                 if (ni.node() == nullptr) return;
                 const api::Labels& labels = ni.node()->meta.labels;
                 for (const framework::PodInfoPtr& existing : ni.pods()) {
                   const api::Pod& e = existing->p();
                   if (IncomingMatchesAll(aff_terms, e, handle_)) {
                     for (const AffinityTerm& t : aff_terms)
                       AddContribution(out, 1, labels, t.topology_key);
                   }
                   for (const AffinityTerm& t : anti_terms) {
                     if (IncomingTermMatches(t, e, handle_))
                       AddContribution(out, 2, labels, t.topology_key);
                   }
                 }
               });
  }

  if (counts.existing_anti.empty() && aff_terms.empty() && anti_terms.empty())
    return Status::Skip();
  s->counts = m.counts;
  // The first pod of a group with affinity to itself may land anywhere.
  s->self_matches_all_affinity = IncomingMatchesAll(aff_terms, pod, handle_);
  state.Write(kPreFilterKey, std::move(s));
  return Status();
}

Status InterPodAffinity::UpdateWithPod(CycleState& state, const PodInfo& pod_to_schedule,
                                       const PodInfo& updated, const NodeInfo& node,
                                       int64_t delta) const {
  auto s = state.Read<PreFilterState>(kPreFilterKey);
  if (!s.ok()) return Status::FromAbsl(s.status());
  PreFilterState& st = **s;
  if (node.node() == nullptr) return Status();
  const api::Labels& labels = node.node()->meta.labels;
  for (const AffinityTerm& t : updated.required_anti_affinity) {
    if (ExistingTermMatches(t, pod_to_schedule.p(), st.ns_labels)) {
      UpdateCount(st.MutableCounts().existing_anti, labels, t.topology_key, delta);
    }
  }
  if (IncomingMatchesAll(pod_to_schedule.required_affinity, updated.p(), handle_)) {
    for (const AffinityTerm& t : pod_to_schedule.required_affinity) {
      UpdateCount(st.MutableCounts().affinity, labels, t.topology_key, delta);
    }
  }
  for (const AffinityTerm& t : pod_to_schedule.required_anti_affinity) {
    if (IncomingTermMatches(t, updated.p(), handle_)) {
      UpdateCount(st.MutableCounts().anti_affinity, labels, t.topology_key, delta);
    }
  }
  return Status();
}

Status InterPodAffinity::AddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                const PodInfo& pod_to_add, const NodeInfo& node) {
  return UpdateWithPod(state, pod_to_schedule, pod_to_add, node, +1);
}

Status InterPodAffinity::RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                   const PodInfo& pod_to_remove, const NodeInfo& node) {
  return UpdateWithPod(state, pod_to_schedule, pod_to_remove, node, -1);
}

Status InterPodAffinity::Filter(const CycleState& state, const PodInfo& pod_info, const NodeInfo& node_info) {
  const api::Node* node = node_info.node();
  if (node == nullptr) return Status::Error("node not found");
  auto s = state.Read<PreFilterState>(kPreFilterKey);
  if (!s.ok()) return Status::FromAbsl(s.status());
  const PreFilterState& st = **s;
  const api::Labels& labels = node->meta.labels;

  // Required affinity: every topology key present, and a matching pod in
  // every term's domain of this node.
  if (!pod_info.required_affinity.empty()) {
    bool pods_exist = true;
    for (const AffinityTerm& t : pod_info.required_affinity) {
      auto v = LabelValue(labels, t.topology_key);
      if (!v) return Status::Unresolvable(std::string(kErrReasonAffinityRulesNotMatch));
      if (!pods_exist) continue;
      auto it = st.counts->affinity.find(Pair(t.topology_key, *v));
      if (it == st.counts->affinity.end() || it->second <= 0) pods_exist = false;
    }
    if (!pods_exist && !(st.counts->affinity.empty() && st.self_matches_all_affinity)) {
      return Status::Unresolvable(std::string(kErrReasonAffinityRulesNotMatch));
    }
  }

  if (!st.counts->anti_affinity.empty()) {
    for (const AffinityTerm& t : pod_info.required_anti_affinity) {
      auto v = LabelValue(labels, t.topology_key);
      if (!v) continue;
      auto it = st.counts->anti_affinity.find(Pair(t.topology_key, *v));
      if (it != st.counts->anti_affinity.end() && it->second > 0) {
        return Status::Unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch));
      }
    }
  }

  if (!st.counts->existing_anti.empty()) {
    for (const auto& [k, v] : labels) {
      auto it = st.counts->existing_anti.find(Pair(k, v));
      if (it != st.counts->existing_anti.end() && it->second > 0) {
        return Status::Unschedulable(std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
      }
    }
  }
  return Status();
}

// ---- Scoring --------------------------------------------------------------

Status InterPodAffinity::PreScore(CycleState& state, const PodInfo& pod_info,
                                  const std::vector<const NodeInfo*>& nodes) {
  if (nodes.empty()) return Status::Skip();
  const api::Pod& pod = pod_info.p();
  const bool has_constraints = !pod_info.preferred_affinity.empty() || !pod_info.preferred_anti_affinity.empty();
  if (args_.ignore_preferred_terms_of_existing_pods && !has_constraints) return Status::Skip();

  // Without preferred terms of its own, only pods with affinity can matter.
  const std::vector<NodeInfo*>& all_nodes =
      has_constraints ? handle_.Snapshot().NodeInfos() : handle_.Snapshot().HavePodsWithAffinity();
  const api::Labels ns_labels = NamespaceLabelsOf(handle_, pod.meta.namespace_);
  const int64_t hard_weight = args_.hard_pod_affinity_weight;
  framework::Parallelizer& par = handle_.parallelizer();

  std::vector<TopologyWeights> partial(static_cast<size_t>(std::max(1, par.parallelism() * 4)));
  int chunks = ParallelChunks(par, static_cast<int>(all_nodes.size()), [&](int c, int begin, int end) {
    TopologyWeights& m = partial[c];
    for (int i = begin; i < end; ++i) {
      const NodeInfo* ni = all_nodes[i];
      if (ni->node() == nullptr) continue;
      const api::Labels& labels = ni->node()->meta.labels;
      if (labels.empty()) continue;
      const auto& pods = has_constraints ? ni->pods() : ni->pods_with_affinity();
      for (const framework::PodInfoPtr& existing : pods) {
        const api::Pod& e = existing->p();
        // The incoming pod's preferences towards the existing pod...
        for (const WeightedAffinityTerm& w : pod_info.preferred_affinity) {
          if (IncomingTermMatches(w.term, e, handle_)) AddWeight(m, labels, w.term.topology_key, w.weight);
        }
        for (const WeightedAffinityTerm& w : pod_info.preferred_anti_affinity) {
          if (IncomingTermMatches(w.term, e, handle_)) AddWeight(m, labels, w.term.topology_key, -w.weight);
        }
        // ...and, symmetrically, the existing pod's towards the incoming one.
        if (hard_weight > 0) {
          for (const AffinityTerm& t : existing->required_affinity) {
            if (ExistingTermMatches(t, pod, ns_labels)) AddWeight(m, labels, t.topology_key, hard_weight);
          }
        }
        for (const WeightedAffinityTerm& w : existing->preferred_affinity) {
          if (ExistingTermMatches(w.term, pod, ns_labels)) AddWeight(m, labels, w.term.topology_key, w.weight);
        }
        for (const WeightedAffinityTerm& w : existing->preferred_anti_affinity) {
          if (ExistingTermMatches(w.term, pod, ns_labels)) AddWeight(m, labels, w.term.topology_key, -w.weight);
        }
      }
    }
  });
  TopologyWeights total;
  for (int c = 0; c < chunks; ++c) {
    for (const auto& [pair, e] : partial[c]) {
      WeightEntry& t = total[pair];
      t.key = e.key;
      t.value = e.value;
      t.weight += e.weight;
    }
  }
  if (total.empty()) return Status::Skip();

  // Group by topology key so Score does one label lookup per key.
  auto data = std::make_shared<ScoreData>();
  for (const auto& [pair, e] : total) {
    auto it = std::find_if(data->by_key.begin(), data->by_key.end(),
                           [&](const auto& kv) { return kv.first == e.key; });
    if (it == data->by_key.end()) {
      data->by_key.emplace_back(e.key, absl::flat_hash_map<api::Symbol, int64_t>());
      it = data->by_key.end() - 1;
    }
    it->second[e.value] += e.weight;
  }
  auto st = std::make_unique<PreScoreState>();
  st->data = std::move(data);
  state.Write(kPreScoreKey, std::move(st));
  return Status();
}

Status InterPodAffinity::Score(const CycleState& state, const PodInfo& /*pod*/, const NodeInfo& node_info,
                               int64_t* score) {
  *score = 0;
  auto s = state.Read<PreScoreState>(kPreScoreKey);
  if (!s.ok()) return Status::FromAbsl(s.status());
  const api::Node* node = node_info.node();
  if (node == nullptr) return Status::Error("node not found");
  int64_t total = 0;
  for (const auto& [key, values] : (*s)->data->by_key) {
    auto v = LabelValue(node->meta.labels, key);
    if (!v) continue;
    if (auto it = values.find(*v); it != values.end()) total += it->second;
  }
  *score = total;
  return Status();
}

Status InterPodAffinity::NormalizeScore(const CycleState& state, const PodInfo& /*pod*/,
                                        std::vector<framework::NodeScore>& scores) {
  auto s = state.Read<PreScoreState>(kPreScoreKey);
  if (!s.ok()) return Status::FromAbsl(s.status());
  if ((*s)->data->by_key.empty()) return Status();
  int64_t min_count = std::numeric_limits<int64_t>::max();
  int64_t max_count = std::numeric_limits<int64_t>::min();
  for (const framework::NodeScore& ns : scores) {
    min_count = std::min(min_count, ns.score);
    max_count = std::max(max_count, ns.score);
  }
  const int64_t diff = max_count - min_count;
  for (framework::NodeScore& ns : scores) {
    double f = 0;
    if (diff > 0) {
      f = static_cast<double>(framework::kMaxNodeScore) *
          (static_cast<double>(ns.score - min_count) / static_cast<double>(diff));
    }
    ns.score = static_cast<int64_t>(f);
  }
  return Status();
}

// ---- Queueing hints -------------------------------------------------------

namespace {

// Upstream evaluates the target pod's terms with no namespace labels here.
bool MatchesAllForHint(const std::vector<AffinityTerm>& terms, const api::Pod& p) {
  if (terms.empty()) return false;
  static const api::Labels kNoLabels;
  for (const AffinityTerm& t : terms) {
    if (!ExistingTermMatches(t, p, kNoLabels)) return false;
  }
  return true;
}

}  // namespace

framework::QueueingHint InterPodAffinity::HintAfterPodChange(const api::Pod& pod, const api::Pod* old_pod,
                                                             const api::Pod* new_pod) const {
  using framework::QueueingHint;
  if ((new_pod != nullptr && new_pod->node_name.empty()) || (old_pod != nullptr && old_pod->node_name.empty())) {
    return QueueingHint::kSkip;
  }
  framework::PodInfoPtr info = PodInfo::Create(std::make_shared<const api::Pod>(pod), 0);
  const auto& terms = info->required_affinity;
  const auto& anti = info->required_anti_affinity;
  if (old_pod != nullptr && new_pod != nullptr) {
    if (!MatchesAllForHint(terms, *old_pod) && MatchesAllForHint(terms, *new_pod)) return QueueingHint::kQueue;
    if (MatchesAllForHint(anti, *old_pod) && !MatchesAllForHint(anti, *new_pod)) return QueueingHint::kQueue;
    return QueueingHint::kSkip;
  }
  if (new_pod != nullptr) return MatchesAllForHint(terms, *new_pod) ? QueueingHint::kQueue : QueueingHint::kSkip;
  if (old_pod != nullptr) return MatchesAllForHint(anti, *old_pod) ? QueueingHint::kQueue : QueueingHint::kSkip;
  return QueueingHint::kQueue;
}

framework::QueueingHint InterPodAffinity::HintAfterNodeChange(const api::Pod& pod, const api::Node* /*old_node*/,
                                                              const api::Node* new_node) const {
  using framework::QueueingHint;
  if (new_node == nullptr) return QueueingHint::kQueue;
  if (!pod.affinity) return QueueingHint::kSkip;
  for (const auto* list : {&pod.affinity->pod_affinity_required, &pod.affinity->pod_anti_affinity_required}) {
    for (const api::PodAffinityTerm& t : *list) {
      if (LabelValue(new_node->meta.labels, t.topology_key)) return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> InterPodAffinity::EventsToRegister() const {
  using framework::ClusterEvent;
  using framework::EventResource;
  std::vector<framework::ClusterEventWithHint> out;
  out.push_back({ClusterEvent{EventResource::kPod, framework::kAdd | framework::kUpdatePodLabel | framework::kDelete,
                              "PodChange"},
                 [this](const api::Pod& pod, const ClusterEvent&, const void* o, const void* n) {
                   return HintAfterPodChange(pod, static_cast<const api::Pod*>(o), static_cast<const api::Pod*>(n));
                 }});
  // UpdateNodeTaint is upstream's workaround for node-add events filtered
  // out while the node was not ready.
  out.push_back({ClusterEvent{EventResource::kNode,
                              framework::kAdd | framework::kUpdateNodeLabel | framework::kUpdateNodeTaint,
                              "NodeChange"},
                 [this](const api::Pod& pod, const ClusterEvent&, const void* o, const void* n) {
                   return HintAfterNodeChange(pod, static_cast<const api::Node*>(o),
                                              static_cast<const api::Node*>(n));
                 }});
  return out;
}

// ---- Registration ---------------------------------------------------------

absl::StatusOr<std::unique_ptr<framework::Plugin>> New(api::Decoder& d, api::JsonValue args,
                                                       framework::FrameworkHandle& handle) {
  InterPodAffinityArgs parsed = DecodeArgs(d, args);
  if (!d.ok()) return absl::InvalidArgumentError(d.error()->ToString());
  return std::make_unique<InterPodAffinity>(parsed, handle);
}

nlohmann::json DefaultArgs(api::Decoder& d, api::JsonValue args) { return ArgsToJson(DecodeArgs(d, args)); }

framework::PluginRegistration Registration() {
  return framework::PluginRegistration{std::string(kName), &New, &DefaultArgs, std::string(kArgsKind)};
}

absl::Status Register(framework::Registry& registry) { return registry.Register(Registration()); }

}  // namespace gantry::plugins::inter_pod_affinity
