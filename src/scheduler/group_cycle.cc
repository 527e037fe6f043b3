// The group cycle: a PodGroup's pending members are scheduled together on
// one snapshot. When the PodGroup sits in a CompositePodGroup
// tree (v1alpha3, depth <= 4), the whole tree is the unit: every pending
// member of every leaf is gathered into the cycle.
//
// Placement walks the tree top-down on an overlay of the snapshot, so each
// member sees the earlier ones. A group with a topology constraint is tried
// in every domain (nodes sharing the label value) inside the domain chosen
// for its parent (zone, then rack inside it); the feasible domains are
// scored by how tightly the group fills them and the best one is kept.
// Domains are tried in order of an upper bound on that score (the score if
// every member fits), and the search stops once no remaining domain can beat
// the best feasible one, which gives the exhaustive search's answer without
// trying every domain. A leaf is satisfied when at least minCount members
// (counting members already running) fit, a composite when at least
// minGroupCount children are satisfied; an unsatisfied group keeps nothing.
//
// The tree binds only when its root is satisfied; otherwise nothing is
// assumed, reserved or held, and every member goes back to the queue with a
// message that says how many fit where (GroupCycle::Fail).
#include "src/scheduler/group_cycle.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "gantry/util/strings.h"

namespace gantry::scheduler {
namespace {

using framework::Status;

// One member's placement in the current trial.
struct MemberTrial {
  std::unique_ptr<framework::CycleState> state;
  std::string node;  // "" when it did not fit (or was not tried)
  std::string failure;
};

// A group of the cycle's tree: the root, composites, and leaf PodGroups.
struct TreeNode {
  state::GroupInfo info;
  std::vector<size_t> children;  // composite: indices into the tree
  std::vector<size_t> members;   // leaf: indices into the members
  int32_t already = 0;           // leaf: members bound or assumed earlier
  std::vector<std::string> placed_nodes;  // leaf with topology: nodes of those members
  int32_t need = 0;              // leaf: members still to place; composite: children to satisfy
  framework::Resource requests;  // summed over the subtree's pending members
  // Result of the kept placement.
  bool satisfied = false;
  int32_t placed = 0;  // leaf: members placed; composite: children satisfied
  std::string domain;
};

// Result of placing one group.
struct Outcome {
  bool satisfied = false;
  int32_t placed = 0;  // leaf: members placed (+ already); composite: children satisfied
  std::string domain;  // "key=value" of the domain, "" when unconstrained
  std::string failure; // why it is not satisfied (or the first member failure)
};

// The winning trial of a domain search, replayed to keep it: the outcome of
// every group in the subtree and the node of every member (tie-breaking in
// selectHost is random, so the trial is replayed node by node rather than
// searched again).
struct Replay {
  std::vector<std::optional<Outcome>> outcome;  // per tree node
  std::vector<std::string> node;                // per member; "" = did not fit
  std::vector<std::string> failure;             // per member
};

using NodeList = std::vector<framework::NodeInfo*>;

// Default placement score: how tightly a placement fills its domain, over the
// resources the group requests (0..1, higher is tighter), from the domain's
// summed `requested` and `allocatable`. With `add` the requests are added to
// the current usage (the score if every member fits: an upper bound, since
// usage only grows with placed members).
double TightnessOf(const framework::Resource& requested, const framework::Resource& allocatable,
                   const framework::Resource& wanted, bool add) {
  double sum = 0;
  int count = 0;
  auto term = [&](int64_t want, int64_t used, int64_t total) {
    if (want <= 0 || total <= 0) return;
    const int64_t r = used + (add ? want : 0);
    sum += std::min(1.0, static_cast<double>(r) / static_cast<double>(total));
    ++count;
  };
  term(wanted.milli_cpu, requested.milli_cpu, allocatable.milli_cpu);
  term(wanted.memory, requested.memory, allocatable.memory);
  for (const api::ResourceAmount& a : wanted.scalar)
    term(a.value, requested.Get(a.name), allocatable.Get(a.name));
  return count == 0 ? 0 : sum / count;
}

// TightnessOf over `nodes`, summing only the resources the group requests.
double Tightness(const NodeList& nodes, const framework::Resource& wanted, bool add) {
  framework::Resource requested, allocatable;
  for (const api::ResourceAmount& a : wanted.scalar) {
    if (a.value > 0) {
      requested.scalar.push_back({a.name, 0});
      allocatable.scalar.push_back({a.name, 0});
    }
  }
  for (const framework::NodeInfo* n : nodes) {
    const framework::Resource& r = n->requested();
    const framework::Resource& c = n->allocatable();
    requested.milli_cpu += r.milli_cpu;
    requested.memory += r.memory;
    allocatable.milli_cpu += c.milli_cpu;
    allocatable.memory += c.memory;
    for (size_t i = 0; i < requested.scalar.size(); ++i) {
      requested.scalar[i].value += r.Get(requested.scalar[i].name);
      allocatable.scalar[i].value += c.Get(requested.scalar[i].name);
    }
  }
  return TightnessOf(requested, allocatable, wanted, add);
}

// Splits `nodes` by the value of label `key` (domains in value order);
// unlabelled nodes belong to no domain.
std::vector<std::pair<std::string, NodeList>> SplitDomains(const NodeList& nodes, api::Symbol key) {
  absl::flat_hash_map<api::Symbol, size_t> index;  // label value -> position in `lists`
  std::vector<std::pair<api::Symbol, NodeList>> lists;
  for (framework::NodeInfo* n : nodes) {
    std::optional<api::Symbol> v = api::FindLabel(n->node()->meta.labels, key);
    if (!v) continue;
    auto [it, added] = index.try_emplace(*v, lists.size());
    if (added) lists.emplace_back(*v, NodeList{});
    lists[it->second].second.push_back(n);
  }
  std::sort(lists.begin(), lists.end(),
            [](const auto& a, const auto& b) { return a.first.view() < b.first.view(); });
  std::vector<std::pair<std::string, NodeList>> out;
  out.reserve(lists.size());
  for (auto& [value, list] : lists)
    out.emplace_back(gantry::StrCat(key.view(), "=", value.view()), std::move(list));
  return out;
}

constexpr uint64_t kNoGeneration = ~uint64_t{0};

}  // namespace

// SplitDomains of the whole snapshot per topology key, kept while the
// snapshot's nodes_version holds (no node added, removed or changed), so a
// stream of gangs does not re-split thousands of nodes for every group
// cycle. Each domain's requested sum is kept too and brought up to date from
// the nodes whose generation moved since it was last read, which gives the
// same Tightness as summing the domain's nodes again.
struct TopologyDomainCache {
  struct Entry {
    api::Symbol key;
    uint64_t nodes_version = 0;
    std::vector<std::pair<std::string, NodeList>> domains;
    // Per domain: the summed allocatable (fixed while nodes_version holds),
    // the summed requested as of `generations`, and each node's part of it.
    struct Sums {
      framework::Resource requested, allocatable;
      std::vector<uint64_t> generations;
      std::vector<framework::Resource> requested_of;
    };
    std::vector<Sums> sums;

    // Tightness of domain `i` (see TightnessOf) on its nodes as they are now.
    double Tightness(size_t i, const framework::Resource& wanted, bool add) {
      Sums& s = sums[i];
      const NodeList& nodes = domains[i].second;
      for (size_t k = 0; k < nodes.size(); ++k) {
        const uint64_t g = nodes[k]->generation();
        if (g == s.generations[k]) continue;
        s.requested.Sub(s.requested_of[k]);
        s.requested_of[k] = nodes[k]->requested();
        s.requested.Add(s.requested_of[k]);
        s.generations[k] = g;
      }
      return TightnessOf(s.requested, s.allocatable, wanted, add);
    }
  };
  // Entries are never moved: a group's search keeps a reference while its
  // subtree looks up other keys.
  std::vector<std::unique_ptr<Entry>> entries;

  Entry& Split(const state::Snapshot& snapshot, api::Symbol key) {
    Entry* e = nullptr;
    for (const std::unique_ptr<Entry>& x : entries) {
      if (x->key == key) e = x.get();
    }
    if (e == nullptr) {
      entries.push_back(std::make_unique<Entry>());
      e = entries.back().get();
      e->key = key;
    } else if (e->nodes_version == snapshot.nodes_version() && snapshot.nodes_version() != 0) {
      return *e;
    }
    e->nodes_version = snapshot.nodes_version();
    e->domains = SplitDomains(snapshot.NodeInfos(), key);
    e->sums.assign(e->domains.size(), Entry::Sums{});
    for (size_t i = 0; i < e->domains.size(); ++i) {
      Entry::Sums& s = e->sums[i];
      for (const framework::NodeInfo* n : e->domains[i].second) s.allocatable.Add(n->allocatable());
      s.generations.assign(e->domains[i].second.size(), kNoGeneration);
      s.requested_of.assign(e->domains[i].second.size(), framework::Resource{});
    }
    return *e;
  }
};

namespace {

std::string GroupNoun(const state::GroupInfo& g) {
  return gantry::StrCat(g.composite ? "composite pod group " : "pod group ", g.key);
}

// Places the tree's members on the snapshot overlay. Every trial runs the
// members' Reserve plugins and adds them to their snapshot NodeInfos;
// RollbackTo undoes both, last member first.
class Placer {
 public:
  // `node_results`: shared per-node results, or null (every member filters
  // and scores from scratch).
  Placer(framework::PodScheduler& algorithm, framework::Framework& fw, state::Snapshot& snapshot,
         const std::vector<framework::QueuedPodInfo>& members, std::vector<TreeNode>& tree,
         TopologyDomainCache& domain_cache, framework::NodeResultCache* node_results)
      : algorithm_(algorithm),
        fw_(fw),
        snapshot_(snapshot),
        members_(members),
        tree_(tree),
        domain_cache_(domain_cache),
        node_results_(node_results) {
    slots_.resize(members.size());
  }

  // Places group `n` within `nodes`, choosing its topology domain. When the
  // outcome is satisfied the placement stays applied; otherwise nothing does.
  Outcome Place(size_t n, const NodeList& nodes) {
    TreeNode& t = tree_[n];
    if (replay_ != nullptr) {
      // Replaying a winning trial: no search; unsatisfied groups stay out.
      const Outcome& o = *replay_->outcome[n];
      if (!o.satisfied) return Record(n, o);
      return Record(n, PlaceIn(n, nodes, o.domain));
    }
    if (t.info.topology_key.empty()) return Record(n, PlaceIn(n, nodes, ""));
    // The whole snapshot (a root group) is split once per node change, and
    // its domains keep their summed requests.
    TopologyDomainCache::Entry* cached = &nodes == &snapshot_.NodeInfos()
                                             ? &domain_cache_.Split(snapshot_, t.info.topology_key)
                                             : nullptr;
    std::vector<std::pair<std::string, NodeList>> own;
    if (cached == nullptr) own = SplitDomains(nodes, t.info.topology_key);
    const std::vector<std::pair<std::string, NodeList>>& domains =
        cached != nullptr ? cached->domains : own;
    std::vector<size_t> candidates(domains.size());  // indices into `domains`
    for (size_t i = 0; i < domains.size(); ++i) candidates[i] = i;
    if (!t.placed_nodes.empty()) {
      // Members already run: only their domain is a candidate.
      std::set<std::string> values;
      for (const std::string& name : t.placed_nodes) {
        const framework::NodeInfo* ni = snapshot_.Get(name);
        std::optional<api::Symbol> v =
            ni == nullptr ? std::nullopt : api::FindLabel(ni->node()->meta.labels, t.info.topology_key);
        values.insert(v ? gantry::StrCat(t.info.topology_key.view(), "=", v->view()) : "");
      }
      if (values.size() != 1 || values.begin()->empty()) {
        return Record(n, Outcome{false, t.already, "",
                                 gantry::StrCat(GroupNoun(t.info), ": its running members are not in one ",
                                                t.info.topology_key.view(), " domain")});
      }
      std::erase_if(candidates, [&](size_t i) { return domains[i].first != *values.begin(); });
      if (candidates.empty()) {
        return Record(n, Outcome{false, t.already, *values.begin(),
                                 gantry::StrCat(GroupNoun(t.info), ": its running members' domain ", *values.begin(),
                                                " is outside the parent's domain")});
      }
    }
    if (candidates.empty()) {
      return Record(n, Outcome{false, 0, "",
                               gantry::StrCat(GroupNoun(t.info), ": no node", nodes.size() == snapshot_.NodeInfos().size() ? "" : " in the parent's domain",
                                              " has the topology label ", t.info.topology_key.view())});
    }
    if (candidates.size() == 1) {
      const auto& [name, list] = domains[candidates[0]];
      return Record(n, PlaceIn(n, list, name));
    }

    auto tightness = [&](size_t i, bool add) {
      return cached != nullptr ? cached->Tightness(i, t.requests, add)
                               : Tightness(domains[i].second, t.requests, add);
    };
    std::vector<double> bound(domains.size());
    for (size_t i : candidates) bound[i] = tightness(i, /*add=*/true);
    std::vector<size_t> order = candidates;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bound[a] > bound[b]; });
    std::optional<size_t> best;
    double best_score = 0;
    Replay winner;
    std::optional<Outcome> most;  // the unsatisfied trial that placed most, for the message
    for (size_t k = 0; k < order.size(); ++k) {
      const size_t i = order[k];
      if (best && bound[i] <= best_score) break;  // no remaining domain can beat the best
      const size_t mark = applied_.size();
      Outcome o = PlaceIn(n, domains[i].second, domains[i].first);
      if (o.satisfied) {
        const double score = tightness(i, /*add=*/false);
        if (!best || score > best_score) {
          // No later domain can beat this one (bounds descend): keep the
          // trial applied instead of rolling it back and replaying it.
          if (k + 1 == order.size() || bound[order[k + 1]] <= score) return Record(n, std::move(o));
          best = i;
          best_score = score;
          winner = Capture(n, o);
        }
        RollbackTo(mark);
      } else if (!most || o.placed > most->placed) {
        most = std::move(o);
      }
    }
    if (!best) return Record(n, std::move(*most));
    // Replay the winner and keep it (the overlay is as it was for the trial).
    const Replay* saved = replay_;
    replay_ = &winner;
    Outcome o = PlaceIn(n, domains[*best].second, domains[*best].first);
    replay_ = saved;
    return Record(n, std::move(o));
  }

  // Removes every kept member from the overlay; their reservations stay
  // (the commit assumes them in the cache instead).
  void ReleaseOverlay() {
    for (size_t i = applied_.size(); i-- > 0;) {
      const size_t m = applied_[i];
      if (framework::NodeInfo* host = snapshot_.GetMutable(slots_[m].node)) {
        host->RemovePod(members_[m].pod_info->uid());
      }
    }
  }

  // Undoes every kept member (Unreserve, off the overlay), last first.
  void RollbackAll() { RollbackTo(0); }

  const std::vector<size_t>& applied() const { return applied_; }
  std::vector<MemberTrial>& slots() { return slots_; }
  // The root group's domain trials (not replays), in the order tried.
  const std::vector<DomainTrial>& root_trials() const { return root_trials_; }

 private:
  // The current trial of group `n` (outcome `o`) and its subtree.
  Replay Capture(size_t n, const Outcome& o) {
    Replay r;
    r.outcome.resize(tree_.size());
    r.node.resize(slots_.size());
    r.failure.resize(slots_.size());
    r.outcome[n] = o;
    std::vector<size_t> stack = {n};
    while (!stack.empty()) {
      const size_t x = stack.back();
      stack.pop_back();
      if (x != n) r.outcome[x] = last_[x];
      for (size_t c : tree_[x].children) stack.push_back(c);
      for (size_t m : tree_[x].members) {
        r.node[m] = slots_[m].node;
        r.failure[m] = slots_[m].failure;
      }
    }
    return r;
  }

  Outcome Record(size_t n, Outcome o) {
    TreeNode& t = tree_[n];
    last_[n] = o;
    t.satisfied = o.satisfied;
    t.domain = o.domain;
    t.placed = t.info.composite ? o.placed : o.placed - t.already;
    return o;
  }

  void RollbackTo(size_t mark) {
    while (applied_.size() > mark) {
      const size_t m = applied_.back();
      applied_.pop_back();
      MemberTrial& mt = slots_[m];
      fw_.RunUnreservePlugins(*mt.state, *members_[m].pod_info, mt.node);
      if (framework::NodeInfo* host = snapshot_.GetMutable(mt.node)) host->RemovePod(members_[m].pod_info->uid());
      mt.node.clear();
    }
  }

  // Places group `n` within `nodes` (one domain, already chosen).
  Outcome PlaceIn(size_t n, const NodeList& nodes, const std::string& domain) {
    TreeNode& t = tree_[n];
    const size_t mark = applied_.size();
    const std::string where = domain.empty() ? "" : gantry::StrCat(" in ", domain);
    Outcome o;
    o.domain = domain;
    if (t.info.composite) {
      int32_t satisfied = 0;
      size_t remaining = t.children.size();
      std::string first_failure;
      for (size_t c : t.children) {
        // Early abort: the quorum of children is out of reach.
        if (satisfied + static_cast<int32_t>(remaining) < t.need) break;
        --remaining;
        Outcome co = Place(c, nodes);
        if (co.satisfied) {
          ++satisfied;
        } else if (first_failure.empty()) {
          first_failure = co.failure;
        }
      }
      o.placed = satisfied;
      o.satisfied = satisfied >= t.need;
      if (!o.satisfied) {
        o.failure = gantry::StrCat(GroupNoun(t.info), ": ", satisfied, " of minGroupCount ", t.need,
                                   " child groups fit", where, "; ", first_failure);
      }
    } else {
      const int32_t total = static_cast<int32_t>(t.members.size());
      int32_t failed = 0, placed = 0;
      std::string first_failure;
      for (size_t m : t.members) {
        MemberTrial& mt = slots_[m];
        mt.node.clear();
        mt.failure.clear();
        // Early abort: quorum is out of reach, the rest need not be tried.
        if (total - failed < t.need) {
          mt.failure = "not tried: the group's quorum was already out of reach";
          continue;
        }
        NodeList only;  // replay: the member's node in the winning trial
        if (replay_ != nullptr) {
          framework::NodeInfo* host =
              replay_->node[m].empty() ? nullptr : snapshot_.GetMutable(replay_->node[m]);
          if (host == nullptr) {
            mt.failure = replay_->failure[m];
            ++failed;
            if (first_failure.empty()) first_failure = mt.failure;
            continue;
          }
          only.push_back(host);
        }
        mt.state = std::make_unique<framework::CycleState>();
        const framework::PodInfo& pod = *members_[m].pod_info;
        framework::ScheduleResult result;
        framework::FitError fit;
        Status st = algorithm_.Schedule(fw_, *mt.state, pod, snapshot_, &result, &fit,
                                        replay_ != nullptr ? &only : &nodes, node_results_);
        if (st.IsSuccess()) {
          framework::NodeInfo* host = snapshot_.GetMutable(result.suggested_host);
          Status rs = fw_.RunReservePlugins(*mt.state, pod, result.suggested_host);
          if (rs.IsSuccess() && host != nullptr) {
            host->AddPod(members_[m].pod_info);
            mt.node = result.suggested_host;
            applied_.push_back(m);
            ++placed;
            continue;
          }
          fw_.RunUnreservePlugins(*mt.state, pod, result.suggested_host);
          mt.failure = rs.Message();
        } else {
          mt.failure = st.IsRejected() ? fit.Message() : st.Message();
        }
        ++failed;
        if (first_failure.empty()) first_failure = mt.failure;
      }
      o.placed = placed + t.already;
      o.satisfied = placed >= t.need;
      if (!o.satisfied) {
        o.failure = gantry::StrCat(GroupNoun(t.info), ": ", o.placed, " of minCount ", t.info.min_count,
                                   " members fit", domain.empty() ? "" : gantry::StrCat(" (best domain ", domain, ")"),
                                   "; ", first_failure);
      } else {
        o.failure = first_failure;
      }
    }
    if (!o.satisfied) RollbackTo(mark);
    if (n == 0 && replay_ == nullptr)
      root_trials_.push_back(DomainTrial{domain, o.placed, o.satisfied, o.failure});
    return o;
  }

  framework::PodScheduler& algorithm_;
  framework::Framework& fw_;
  state::Snapshot& snapshot_;
  const std::vector<framework::QueuedPodInfo>& members_;
  std::vector<TreeNode>& tree_;
  TopologyDomainCache& domain_cache_;
  std::vector<MemberTrial> slots_;
  // Filter verdicts and raw scores per node, shared by members of one spec
  // (null: every member filters and scores from scratch).
  framework::NodeResultCache* node_results_;
  std::vector<size_t> applied_;  // members on the overlay, in placement order
  std::vector<Outcome> last_ = std::vector<Outcome>(tree_.size());  // last recorded outcome per group
  const Replay* replay_ = nullptr;  // set while a winning trial is replayed
  std::vector<DomainTrial> root_trials_;
};

}  // namespace

// Why a group cycle failed.
struct GroupCycle::Failure {
  std::string key;                       // the cycle's root group ("namespace/name")
  std::string reason = "Unschedulable";  // or "SchedulerError"
  std::string message;                   // how many members fit where, and why not
  std::string domain;                    // best topology domain tried, "" if none
  int32_t placed = 0;
  int32_t min_count = 0;
  std::vector<DomainTrial> domains{};    // the root's domain trials, if any were run
  std::vector<MemberFailure> members{};  // per-member failures, if placement ran
};

GroupCycle::GroupCycle(state::ClusterState& state, queue::SchedulingQueue& queue,
                       CycleContext& cycles, FailureHandler& failure, Binder& binder,
                       GroupStatusWriter& group_status, ForeignGroupMembers& foreign,
                       Observers& observers, GroupPreemptionEvaluator& preemption)
    : state_(state),
      queue_(queue),
      cycles_(cycles),
      failure_(failure),
      binder_(binder),
      group_status_(group_status),
      foreign_(foreign),
      observers_(observers),
      preemption_(preemption),
      domain_cache_(std::make_unique<TopologyDomainCache>()) {}

GroupCycle::~GroupCycle() = default;

void GroupCycle::Fail(framework::Framework* fw, std::vector<framework::QueuedPodInfo> members,
                      const std::vector<state::GroupInfo>& groups, const Failure& failure,
                      int64_t cycle, int64_t start_micros) {
  const int64_t duration = MonotonicMicros() - start_micros;
  const bool error = failure.reason == "SchedulerError";
  for (framework::QueuedPodInfo& m : members) {
    failure_.FailGroupMember(fw, std::move(m), failure.message, duration, cycle, error);
  }
  for (const state::GroupInfo& g : groups) {
    if (!group_status_.IsScheduled(g.key)) group_status_.Failed(g, failure.reason, failure.message);
  }
  GroupOutcome outcome{failure.key,    false,           failure.placed, failure.min_count,
                       failure.domain, failure.message, duration};
  outcome.domains = failure.domains;
  outcome.members = failure.members;
  observers_.Group(outcome);
}

void GroupCycle::Run(framework::QueuedPodInfo first, const std::string& key,
                     const std::optional<state::GroupInfo>& group, framework::Framework* fw,
                     int64_t cycle, int64_t start_micros) {
  std::vector<framework::QueuedPodInfo> members;
  members.push_back(std::move(first));
  auto fail = [&](std::vector<state::GroupInfo> groups, Failure failure) {
    Fail(fw, std::move(members), groups, failure, cycle, start_micros);
  };

  if (!group) {
    for (framework::QueuedPodInfo& m : queue_.PopGroups({key})) members.push_back(std::move(m));
    fail({},
         Failure{key, "Unschedulable",
                 gantry::StrCat("pod group ", key, " does not exist yet; its members wait for it"),
                 "", 0, 0});
    return;
  }

  // The tree: walk up to the root CompositePodGroup, then down to every leaf.
  std::vector<TreeNode> tree;
  std::string invalid;
  std::string root_key;
  std::optional<state::GroupInfo> root = group;
  {
    std::set<std::string> seen = {group->key};
    size_t depth = 1;
    while (!root->parent.empty()) {
      std::optional<state::GroupInfo> parent = state_.FindCompositeGroup(root->parent);
      if (!parent) {
        invalid = gantry::StrCat("pod group ", key, " waits for its CompositePodGroup ", root->parent);
        break;
      }
      if (!seen.insert("c:" + parent->key).second || ++depth > api::kWorkloadMaxTreeDepth) {
        invalid = gantry::StrCat("pod group ", key, " is in an invalid CompositePodGroup tree: ",
                                 depth > api::kWorkloadMaxTreeDepth ? "deeper than 4 levels" : "a cycle", " at ",
                                 parent->key);
        break;
      }
      root = std::move(parent);
    }
  }
  // Builds the subtree of `g` (depth counted from the root, 1-based).
  std::function<size_t(state::GroupInfo, size_t)> build = [&](state::GroupInfo g, size_t depth) -> size_t {
    const size_t idx = tree.size();
    tree.push_back(TreeNode{});
    tree[idx].info = std::move(g);
    if (!tree[idx].info.composite) return idx;
    if (depth >= api::kWorkloadMaxTreeDepth) {
      if (invalid.empty()) {
        invalid = gantry::StrCat("composite pod group ", tree[idx].info.key,
                                 " has children below the maximum tree depth of 4");
      }
      return idx;
    }
    for (state::GroupInfo& c : state_.ChildGroups(tree[idx].info.key)) {
      const size_t child = build(std::move(c), depth + 1);
      tree[idx].children.push_back(child);
    }
    return idx;
  };
  if (invalid.empty()) build(*root, 1);
  root_key = root->key;

  // Gather every pending member of the tree's leaves into this cycle.
  absl::flat_hash_map<std::string, size_t> leaf_of;
  for (size_t i = 0; i < tree.size(); ++i) {
    if (!tree[i].info.composite) leaf_of[tree[i].info.key] = i;
  }
  {
    std::vector<std::string> leaves;
    if (tree.size() <= 1) {
      leaves.push_back(key);
    } else {
      for (const TreeNode& t : tree) {
        if (!t.info.composite) leaves.push_back(t.info.key);
      }
    }
    for (framework::QueuedPodInfo& m : queue_.PopGroups(leaves)) members.push_back(std::move(m));
  }
  std::vector<state::GroupInfo> infos;
  for (const TreeNode& t : tree) infos.push_back(t.info);
  if (infos.empty()) infos.push_back(*group);
  if (!invalid.empty()) {
    // Not transient: waits (as unschedulable) for the tree's objects to change.
    fail(infos, Failure{key, "Unschedulable", invalid, "", 0, group->min_count});
    return;
  }

  // All members must be served by one scheduler: ours, and one profile.
  std::string foreign;
  {
    std::vector<std::string> leaves;
    for (const auto& [leaf, idx] : leaf_of) leaves.push_back(leaf);
    std::sort(leaves.begin(), leaves.end());
    foreign = foreign_.SchedulersOf(leaves);
  }
  if (foreign.empty()) {
    for (const framework::QueuedPodInfo& m : members) {
      if (m.pod_info->p().scheduler_name != members.front().pod_info->p().scheduler_name) {
        foreign = gantry::StrCat(", ", m.pod_info->p().scheduler_name.view());
        break;
      }
    }
  }
  if (!foreign.empty()) {
    fail(infos, Failure{root_key, "Unschedulable",
                        gantry::StrCat(GroupNoun(*root),
                                       " is rejected: its members use different schedulerNames (",
                                       members.front().pod_info->p().scheduler_name.view(), foreign,
                                       "); all members must use one"),
                        "", 0, root->min_count});
    return;
  }

  // Members per leaf, quorum still needed, readiness bottom-up.
  for (size_t i = 0; i < members.size(); ++i) {
    auto it = leaf_of.find(state::GroupKeyOf(members[i].pod_info->p()));
    if (it == leaf_of.end()) continue;  // cannot happen: gathered by leaf key
    tree[it->second].members.push_back(i);
  }
  std::string not_ready;
  // Returns whether node `n` is ready; fills need and requests.
  std::function<bool(size_t)> ready = [&](size_t n) -> bool {
    TreeNode& t = tree[n];
    if (!t.info.composite) {
      t.already = state_.PlacedMembers(t.info.key);
      if (t.already > 0 && !t.info.topology_key.empty()) t.placed_nodes = state_.PlacedMemberNodes(t.info.key);
      const int32_t min = t.info.gang ? t.info.min_count : 1;
      t.need = std::max(0, min - t.already);
      for (size_t m : t.members) t.requests.Add(members[m].pod_info->requests);
      const int32_t have = static_cast<int32_t>(t.members.size()) + t.already;
      if (have >= min) return true;
      if (not_ready.empty()) {
        not_ready = gantry::StrCat("pod group ", t.info.key, ": ", have, " of minCount ", min,
                                   " members exist; waiting for the rest");
      }
      return false;
    }
    int32_t ready_children = 0;
    for (size_t c : t.children) {
      ready_children += ready(c) ? 1 : 0;
      t.requests.Add(tree[c].requests);
    }
    t.need = t.info.gang ? t.info.min_count : 1;
    if (ready_children >= t.need) return true;
    not_ready = gantry::StrCat("composite pod group ", t.info.key, ": ", ready_children, " of minGroupCount ", t.need,
                               " child groups are ready", not_ready.empty() ? "" : "; ", not_ready);
    return false;
  };
  if (!ready(0)) {
    fail(infos, Failure{root_key, "Unschedulable", not_ready, "", 0, root->min_count});
    return;
  }

  cycles_.Refresh(*fw);
  state::Snapshot& snapshot = cycles_.snapshot();
  Placer placer(cycles_.algorithm(), *fw, snapshot, members, tree, *domain_cache_,
                cycles_.NodeResults());
  Outcome outcome;
  {
    // Room nominated to other preemptors of >= priority stays theirs (group_preemption.h).
    NominatedRoom room(snapshot, queue_, members.front().pod_info->priority,
                       [&](const framework::PodInfo& p) {
                         return (tree.size() <= 1 ? state::InGroup(p.p(), key)
                                                  : leaf_of.contains(state::GroupKeyOf(p.p()))) ||
                                state_.NodeOf(p.uid()).has_value();
                       });
    outcome = placer.Place(0, snapshot.NodeInfos());
    if (outcome.satisfied) placer.ReleaseOverlay();  // before the room goes: the snapshot is restored in order
  }
  if (!outcome.satisfied) {
    if (tree.size() == 1) {
      // Workload-aware preemption for a single PodGroup: on success it has
      // nominated and requeued the members.
      Domains domains;
      if (group->topology_key.empty()) {
        domains.emplace_back("", snapshot.NodeInfos());
      } else {
        domains = SplitDomains(snapshot.NodeInfos(), group->topology_key);
      }
      std::string note;
      const Preemptor preemptor{
          key,   &*group,     [&](const std::string& gk) { return gk == key; }, &members, fw,
          cycle, start_micros};
      if (preemption_.PreemptForGroup(preemptor, tree[0].need, domains, &note)) {
        group_status_.Failed(*group, "Unschedulable", gantry::StrCat(outcome.failure, "; preempting for the group"));
        return;
      }
      if (!note.empty()) outcome.failure = gantry::StrCat(outcome.failure, " ", note);
    } else {
      // A CompositePodGroup tree preempts as one unit: each trial runs the
      // tree's placer over the whole cluster (it chooses the domains itself).
      std::unique_ptr<Placer> trial;
      GroupPlacer tree_placer;
      tree_placer.place = [&](const NodeList& nodes) {
        trial = std::make_unique<Placer>(cycles_.algorithm(), *fw, snapshot, members, tree,
                                         *domain_cache_,
                                         /*node_results=*/nullptr);
        const Outcome o = trial->Place(0, nodes);
        GroupPlacement r{{}, o.satisfied, o.placed, o.failure};
        for (const MemberTrial& mt : trial->slots()) r.nodes.push_back(mt.node);
        return r;
      };
      tree_placer.undo = [&] {
        if (trial) trial->RollbackAll();
      };
      Domains domains;
      domains.emplace_back("", snapshot.NodeInfos());
      std::string note;
      const Preemptor preemptor{
          root_key,    &*root, [&](const std::string& gk) { return leaf_of.contains(gk); },
          &members,    fw,     cycle,
          start_micros};
      if (preemption_.Preempt(preemptor, tree_placer, domains, &note)) {
        for (const TreeNode& t : tree) {
          group_status_.Failed(t.info, "Unschedulable",
                               gantry::StrCat(outcome.failure, "; preempting for the tree"));
        }
        return;
      }
      if (!note.empty()) outcome.failure = gantry::StrCat(outcome.failure, " ", note);
    }
    Failure failure{root_key,
                    "Unschedulable",
                    outcome.failure,
                    outcome.domain,
                    tree[0].info.composite ? outcome.placed : tree[0].placed,
                    root->min_count};
    failure.domains = placer.root_trials();
    for (size_t m = 0; m < members.size(); ++m) {
      const api::Pod& p = members[m].pod_info->p();
      failure.members.push_back(MemberFailure{
          gantry::StrCat(p.meta.namespace_.view(), "/", p.meta.name), placer.slots()[m].failure});
    }
    fail(infos, failure);
    return;
  }

  // Commit: the kept placement has left the overlay and is assumed in the
  // cache; its reservations carry over. Any failure undoes the whole tree.
  std::vector<MemberTrial>& slots = placer.slots();
  std::vector<size_t> committed;
  std::string broken;
  for (size_t m : placer.applied()) {
    MemberTrial& mt = slots[m];
    const framework::PodInfo& pod = *members[m].pod_info;
    if (absl::Status as = state_.Assume(members[m].pod_info, mt.node); !as.ok()) {
      fw->RunUnreservePlugins(*mt.state, pod, mt.node);
      broken = std::string(as.message());
    } else if (Status ps = fw->RunPermitPlugins(*mt.state, pod, mt.node); !ps.IsSuccess()) {
      fw->RunUnreservePlugins(*mt.state, pod, mt.node);
      (void)state_.Forget(pod.uid());
      broken = ps.Message();
    } else {
      committed.push_back(m);
      continue;
    }
    // Undo everything else of the placement (committed and not yet tried).
    for (size_t c : committed) {
      fw->RunUnreservePlugins(*slots[c].state, *members[c].pod_info, slots[c].node);
      (void)state_.Forget(members[c].pod_info->uid());
    }
    bool after = false;
    for (size_t r : placer.applied()) {
      if (after) fw->RunUnreservePlugins(*slots[r].state, *members[r].pod_info, slots[r].node);
      after = after || r == m;
    }
    break;
  }
  if (!broken.empty()) {
    fail(infos, Failure{root_key, "SchedulerError",
                        gantry::StrCat(GroupNoun(*root), ": the placement",
                                       outcome.domain.empty() ? "" : " in " + outcome.domain,
                                       " could not be reserved (", broken, "); retrying"),
                        outcome.domain, 0, root->min_count});
    return;
  }

  const int64_t duration = MonotonicMicros() - start_micros;
  // The placed members bind together (Binder::BindGang).
  GangBindTask gang;
  absl::flat_hash_map<size_t, size_t> gang_leaf;  // tree index -> index into gang.leaves
  for (size_t m = 0; m < members.size(); ++m) {
    MemberTrial& mt = slots[m];
    if (mt.node.empty()) {
      const state::GroupInfo& leaf = tree[leaf_of[state::GroupKeyOf(members[m].pod_info->p())]].info;
      failure_.FailGroupMember(fw, std::move(members[m]),
                               gantry::StrCat(GroupNoun(*root), " is scheduled (", committed.size(),
                                              " members placed in this cycle); this member of ",
                                              leaf.key, " did not fit: ", mt.failure),
                               duration, cycle, false);
      continue;
    }
    const size_t t = leaf_of[state::GroupKeyOf(members[m].pod_info->p())];
    auto [it, added] = gang_leaf.try_emplace(t, gang.leaves.size());
    if (added) gang.leaves.push_back(GangLeaf{tree[t].info, tree[t].already});
    gang.leaf_of.push_back(it->second);
    gang.members.push_back(
        BindTask{std::move(members[m]), fw, std::move(mt.state), mt.node, duration});
  }

  for (const TreeNode& t : tree) {
    const std::string where = t.domain.empty() ? "" : gantry::StrCat(" in ", t.domain);
    if (t.satisfied) {
      group_status_.Scheduled(
          t.info, t.info.composite
                      ? gantry::StrCat(t.placed, " of ", t.children.size(), " child groups scheduled", where)
                      : gantry::StrCat(t.placed + t.already, " members scheduled (minCount ", t.info.min_count, ")",
                                       where));
    } else if (!group_status_.IsScheduled(t.info.key)) {
      group_status_.Failed(t.info, "Unschedulable",
                           gantry::StrCat(GroupNoun(t.info), " did not fit while ", GroupNoun(*root),
                                          " was scheduled; it is retried on its own quorum"));
    }
    GroupOutcome go{t.info.key, t.satisfied, t.placed, t.info.min_count, t.domain, "", duration};
    if (&t == &tree.front()) go.domains = placer.root_trials();
    observers_.Group(go);
  }
  // After the status: an inline (offline) binding's failure must not be
  // followed by the cycle's own condition.
  if (!gang.members.empty()) binder_.BindGang(std::move(gang));
}

}  // namespace gantry::scheduler
