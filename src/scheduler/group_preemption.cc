// Workload-aware preemption for a group preemptor and the nominated-room
// overlay. The phases are described in group_preemption.h and
// docs/preemption.md.
#include "src/scheduler/group_preemption.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gantry/util/strings.h"
#include "src/scheduler/group_status.h"

namespace gantry::scheduler {

// ---- NominatedRoom ------------------------------------------------------------

NominatedRoom::NominatedRoom(state::Snapshot& snapshot, const queue::SchedulingQueue& queue,
                             int32_t priority,
                             const std::function<bool(const framework::PodInfo&)>& skip)
    : snapshot_(snapshot), listed_before_(snapshot.mutable_nominated_pods().size()) {
  if (!queue.HasNominations()) return;
  // Collected under the queue's lock, applied after (skip may lock the cache).
  std::vector<std::pair<framework::NodeInfo*, framework::PodInfoPtr>> wanted;
  queue.ForEachNomination([&](std::string_view node_name, const framework::PodInfoPtr& pod) {
    if (pod->priority < priority) return;
    if (framework::NodeInfo* node = snapshot.GetMutable(node_name)) wanted.emplace_back(node, pod);
  });
  // The order of pods within a node does not change any verdict, so the
  // queue's (unordered) iteration is fine.
  for (const auto& [node, pod] : wanted) {
    if (skip(*pod)) continue;
    bool present = false;  // already assumed or bound there
    for (const framework::PodInfoPtr& p : node->pods()) present |= p->uid() == pod->uid();
    if (present) continue;
    node->AddPod(pod);
    added_.push_back(node);
    snapshot.mutable_nominated_pods().push_back(framework::NominatedPod{node, pod});
  }
}

NominatedRoom::~NominatedRoom() {
  // Rooms are scoped: this one's pods are the last ones listed.
  std::vector<framework::NominatedPod>& listed = snapshot_.mutable_nominated_pods();
  for (size_t i = added_.size(); i-- > 0;)
    added_[i]->RemovePod(listed[listed_before_ + i].pod->uid());
  listed.resize(listed_before_);
}

std::optional<TreeDisruptionUnit> TreeUnitOf(const state::ClusterState& state,
                                             const state::GroupInfo& group) {
  std::optional<TreeDisruptionUnit> unit;
  std::optional<int32_t> priority;
  std::string parent = group.parent;
  for (size_t depth = 0; !parent.empty(); ++depth) {
    if (depth >= api::kWorkloadMaxTreeDepth) return std::nullopt;
    std::optional<state::GroupInfo> c = state.FindCompositeGroup(parent);
    if (!c) return std::nullopt;
    if (std::optional<int32_t> p = state.GroupPriority(*c))
      priority = std::max(priority.value_or(*p), *p);
    parent = c->parent;
    if (c->disruption_all) unit = TreeDisruptionUnit{std::move(*c), priority};
  }
  return unit;
}

std::string TreeUnitKey(const state::GroupInfo& root) {
  return gantry::StrCat("CompositePodGroup ", root.key);
}

bool MoreImportantUnit(const VictimUnit& a, const VictimUnit& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.whole_group != b.whole_group) return a.whole_group;
  if (a.pods.size() != b.pods.size()) return a.pods.size() > b.pods.size();
  if (a.earliest_start != b.earliest_start) return a.earliest_start < b.earliest_start;
  return a.id < b.id;
}

namespace {

using framework::Status;

// Members placed on the snapshot by a trial (undone by Unplace).
struct Placement {
  std::vector<std::string> nodes;  // per member, "" when not placed
  std::vector<std::unique_ptr<framework::CycleState>> states;
  int32_t placed = 0;
  std::string first_failure;
};

Placement Place(framework::PodScheduler& algorithm, framework::Framework& fw,
                state::Snapshot& snapshot, const std::vector<framework::QueuedPodInfo>& members,
                int32_t need, const std::vector<framework::NodeInfo*>& nodes) {
  Placement pl;
  const int32_t total = static_cast<int32_t>(members.size());
  int32_t failed = 0;
  for (const framework::QueuedPodInfo& m : members) {
    pl.states.push_back(std::make_unique<framework::CycleState>());
    pl.nodes.emplace_back();
    if (total - failed < need) continue;  // quorum out of reach
    framework::ScheduleResult result;
    framework::FitError fit;
    Status st =
        algorithm.Schedule(fw, *pl.states.back(), *m.pod_info, snapshot, &result, &fit, &nodes);
    std::string failure;
    if (st.IsSuccess()) {
      framework::NodeInfo* host = snapshot.GetMutable(result.suggested_host);
      Status rs = fw.RunReservePlugins(*pl.states.back(), *m.pod_info, result.suggested_host);
      if (rs.IsSuccess() && host != nullptr) {
        host->AddPod(m.pod_info);
        pl.nodes.back() = result.suggested_host;
        pl.placed++;
        continue;
      }
      fw.RunUnreservePlugins(*pl.states.back(), *m.pod_info, result.suggested_host);
      failure = rs.Message();
    } else {
      failure = st.IsRejected() ? fit.Message() : st.Message();
    }
    ++failed;
    if (pl.first_failure.empty()) pl.first_failure = failure;
  }
  return pl;
}

void Unplace(framework::Framework& fw, state::Snapshot& snapshot,
             const std::vector<framework::QueuedPodInfo>& members, Placement& pl) {
  for (size_t i = pl.nodes.size(); i-- > 0;) {
    if (pl.nodes[i].empty()) continue;
    fw.RunUnreservePlugins(*pl.states[i], *members[i].pod_info, pl.nodes[i]);
    if (framework::NodeInfo* host = snapshot.GetMutable(pl.nodes[i]))
      host->RemovePod(members[i].pod_info->uid());
  }
}

void RemoveUnit(const VictimUnit& u) {
  for (const auto& [node, pod] : u.pods) node->RemovePod(pod->uid());
}
void RestoreUnit(const VictimUnit& u) {
  for (const auto& [node, pod] : u.pods) node->AddPod(pod);
}

// Units whose eviction would violate a PodDisruptionBudget (best effort, as
// the pod preemption's filterPodsWithPDBViolation), counted in `order`.
std::vector<bool> PdbViolations(
    const std::vector<const VictimUnit*>& order,
    const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs) {
  std::vector<bool> out(order.size(), false);
  if (pdbs.empty()) return out;
  std::vector<int64_t> allowed;
  for (const auto& pdb : pdbs) allowed.push_back(pdb->status.disruptions_allowed);
  for (size_t u = 0; u < order.size(); ++u) {
    for (const auto& [node, info] : order[u]->pods) {
      const api::Pod& pod = info->p();
      if (pod.meta.labels.empty() || pod.meta.deletion_micros.has_value()) continue;
      for (size_t i = 0; i < pdbs.size(); ++i) {
        const api::PodDisruptionBudget& pdb = *pdbs[i];
        if (pdb.meta.namespace_ != pod.meta.namespace_) continue;
        if (!pdb.spec.selector || pdb.spec.selector->Empty() ||
            !pdb.spec.selector->Matches(pod.meta.labels))
          continue;
        bool disrupted = false;
        for (const auto& [name, t] : pdb.status.disrupted_pods) disrupted |= name == pod.meta.name;
        if (disrupted) continue;
        if (--allowed[i] < 0) out[u] = true;
      }
    }
  }
  return out;
}

}  // namespace

// One domain's answer.
struct GroupPreemptionEvaluator::DomainChoice {
  std::string domain;
  std::vector<std::string> member_nodes;  // per member
  std::vector<const VictimUnit*> victims;
  std::vector<const VictimUnit*> leaving;  // terminating units relied upon
  int32_t top_priority = std::numeric_limits<int32_t>::min();
  int64_t pdb_violations = 0;
  int64_t victim_pods = 0;
  int64_t latest_start = 0;  // earliest start among the top-priority victims

  // Upstream's pickOneNodeForPreemption criteria, generalised to units.
  bool BetterThan(const DomainChoice& o) const {
    if (victims.empty() != o.victims.empty()) return victims.empty();
    if (pdb_violations != o.pdb_violations) return pdb_violations < o.pdb_violations;
    if (top_priority != o.top_priority) return top_priority < o.top_priority;
    if (victims.size() != o.victims.size()) return victims.size() < o.victims.size();
    if (victim_pods != o.victim_pods) return victim_pods < o.victim_pods;
    return latest_start > o.latest_start;
  }
};

struct GroupPreemptionEvaluator::Units {
  std::vector<VictimUnit> all;
  // Strictly lower priority than the preemptor. A unit with any member of
  // >= priority is not a candidate at all (never evicted in part).
  std::vector<const VictimUnit*> candidates;
  // Groups looked up while collecting (by key; nullopt: not found).
  absl::flat_hash_map<std::string, std::optional<state::GroupInfo>> groups;

  const state::GroupInfo* FindGroup(const state::ClusterState& state, const std::string& key) {
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) it->second = state.FindGroup(key);
    return it->second ? &*it->second : nullptr;
  }
};

// DRA: while units are removed, the allocated claims their pods alone hold
// are released (state::DraState::SetReleasedClaims), so members' PreFilter
// sees those devices as free. Claims held by a pod that stays (or shared
// with one) are not released.
class GroupPreemptionEvaluator::ClaimRelease {
 public:
  explicit ClaimRelease(state::DraState& dra) : dra_(dra) {}
  ClaimRelease(const ClaimRelease&) = delete;
  ClaimRelease& operator=(const ClaimRelease&) = delete;
  ~ClaimRelease() { Release({}); }

  // Releases exactly the claims `units` alone hold (none: every claim is held again).
  void Release(const std::vector<const VictimUnit*>& units) {
    std::vector<std::string> keys;
    absl::flat_hash_set<std::string> leaving_uids;
    absl::flat_hash_set<std::string> leaving_groups;  // "ns/podgroup" evicted whole
    for (const VictimUnit* u : units) {
      for (const auto& [node, pod] : u->pods) {
        const api::Pod& p = pod->p();
        if (!p.UsesClaims()) continue;
        leaving_uids.insert(pod->uid());
        if (u->whole_group && !p.pod_group_name.empty())
          leaving_groups.insert(
              gantry::StrCat(p.meta.namespace_.view(), "/", p.pod_group_name.view()));
        for (std::string& k : state::PodClaimKeys(p)) keys.push_back(std::move(k));
      }
    }
    std::vector<std::shared_ptr<const api::ResourceClaim>> now =
        keys.empty()
            ? std::vector<std::shared_ptr<const api::ResourceClaim>>{}
            : dra_.ReleasableClaims(keys, [&](const api::ResourceClaim& claim,
                                              const api::ResourceClaimConsumerReference& c) {
                // A PodGroup's claims go with the group when it is evicted whole.
                if (c.resource.view() == "podgroups")
                  return leaving_groups.contains(
                      gantry::StrCat(claim.meta.namespace_.view(), "/", c.name));
                return leaving_uids.contains(c.uid);
              });
    if (now.empty() && released_.empty()) return;
    released_ = now;
    dra_.SetReleasedClaims(std::move(now));
  }

  // True when `u`'s released claims could not all be held again on top of
  // the dry run's view (what the placed members and the units reprieved so
  // far hold): a device of theirs went to a member, exclusively or as a
  // share, or holding it again would exceed a device's capacity or a shared
  // counter (state::AllocationsFit). Claims that were not released are held
  // in the view already.
  bool Taken(const VictimUnit& u) const {
    if (released_.empty()) return false;
    absl::flat_hash_set<std::string> keys;
    for (const auto& [node, pod] : u.pods) {
      if (!pod->p().UsesClaims()) continue;
      for (std::string& k : state::PodClaimKeys(pod->p())) keys.insert(std::move(k));
    }
    std::vector<const api::AllocationResult*> own;
    for (const auto& c : released_) {
      if (keys.contains(gantry::StrCat(c->meta.namespace_.view(), "/", c->meta.name)))
        own.push_back(&*c->status.allocation);
    }
    if (own.empty()) return false;
    return !state::AllocationsFit(*dra_.Snapshot(), own);  // the view has `released_` free
  }

 private:
  state::DraState& dra_;
  std::vector<std::shared_ptr<const api::ResourceClaim>> released_;
};

bool GroupPreemptionEvaluator::PreemptForGroup(const Preemptor& preemptor, int32_t need,
                                               const Domains& domains, std::string* note) {
  std::vector<framework::QueuedPodInfo>& members = *preemptor.members;
  if (members.empty() || need <= 0) return false;
  framework::Framework& fw = *preemptor.fw;
  state::Snapshot& snapshot = cycles_.snapshot();
  Placement current;
  GroupPlacer placer;
  placer.place = [&](const std::vector<framework::NodeInfo*>& nodes) {
    current = Place(cycles_.algorithm(), fw, snapshot, members, need, nodes);
    return GroupPlacement{current.nodes, current.placed >= need, current.placed,
                          current.first_failure};
  };
  placer.undo = [&] { Unplace(fw, snapshot, members, current); };
  return Preempt(preemptor, placer, domains, note);
}

std::optional<int32_t> GroupPreemptionEvaluator::EligiblePriority(const Preemptor& preemptor,
                                                                  std::string* note) {
  const state::GroupInfo& group = *preemptor.group;
  api::PreemptionPolicy policy = state_.GroupPreemptionPolicy(group);
  if (!group.native && !group.preemption_policy) {
    // scheduler-plugins groups carry no policy: any Never member stops it.
    for (const framework::QueuedPodInfo& m : *preemptor.members) {
      if (m.pod_info->p().preemption_policy == api::PreemptionPolicy::kNever)
        policy = api::PreemptionPolicy::kNever;
    }
  }
  if (policy == api::PreemptionPolicy::kNever) {
    *note = "preemption: not eligible due to preemptionPolicy=Never.";
    return std::nullopt;
  }
  if (std::optional<int32_t> gp = state_.GroupPriority(group)) return *gp;
  int32_t priority = std::numeric_limits<int32_t>::min();
  for (const framework::QueuedPodInfo& m : *preemptor.members)
    priority = std::max(priority, m.pod_info->priority);
  return priority;
}

void GroupPreemptionEvaluator::FailMembers(
    const Preemptor& preemptor, const std::string& message,
    const absl::flat_hash_map<std::string, std::string>& nominate, int32_t placed,
    const std::string& domain) {
  const int64_t duration = MonotonicMicros() - preemptor.start_micros;
  for (framework::QueuedPodInfo& m : *preemptor.members) {
    auto it = nominate.find(m.pod_info->uid());
    failure_.FailGroupMember(preemptor.fw, std::move(m), message, duration, preemptor.cycle,
                             /*scheduler_error=*/false, it == nominate.end() ? "" : it->second);
  }
  const state::GroupInfo& group = *preemptor.group;
  observers_.Group(GroupOutcome{preemptor.key, false, placed, group.gang ? group.min_count : 1,
                                domain, message, duration});
}

bool GroupPreemptionEvaluator::StillWaitingForVictims(const Preemptor& preemptor) {
  auto pit = pending_.find(preemptor.key);
  if (pit == pending_.end()) return false;
  int32_t left = 0;
  for (const std::string& uid : pit->second.waiting_for)
    left += state_.NodeOf(uid).has_value() ? 1 : 0;
  if (left == 0) {
    // Every victim is gone and the unit still does not fit: start over.
    pending_.erase(pit);
    return false;
  }
  absl::flat_hash_map<std::string, std::string> nominate(pit->second.nominations.begin(),
                                                         pit->second.nominations.end());
  FailMembers(
      preemptor,
      gantry::StrCat("pod group ", preemptor.key, ": waiting for ", left,
                     " preemption victim(s) to terminate; the members keep their nominated nodes"),
      nominate, 0, "");
  return true;
}

void GroupPreemptionEvaluator::CollectVictimUnits(const Preemptor& preemptor, int32_t priority,
                                                  Units* units) {
  absl::flat_hash_map<std::string, size_t> unit_index;
  absl::flat_hash_map<std::string, std::optional<TreeDisruptionUnit>> trees;  // by leaf group key
  absl::flat_hash_set<std::string> member_uids;
  for (const framework::QueuedPodInfo& m : *preemptor.members)
    member_uids.insert(m.pod_info->uid());
  for (framework::NodeInfo* n : cycles_.snapshot().NodeInfos()) {
    for (const framework::PodInfoPtr& p : n->pods()) {
      if (member_uids.contains(p->uid())) continue;
      std::string gk = state::GroupKeyOf(p->p());
      if (!gk.empty() && preemptor.own_group(gk)) continue;  // the preemptor's own running members
      const state::GroupInfo* g = gk.empty() ? nullptr : units->FindGroup(state_, gk);
      int32_t prio = p->priority;
      if (g != nullptr) {
        if (std::optional<int32_t> gp = state_.GroupPriority(*g)) prio = *gp;
      }
      bool whole = g != nullptr && g->disruption_all;
      std::string id = whole ? gk : p->uid();
      const TreeDisruptionUnit* tree = nullptr;
      if (g != nullptr && !g->parent.empty()) {
        auto [tit, fresh] = trees.try_emplace(gk);
        if (fresh) tit->second = TreeUnitOf(state_, *g);
        if (tit->second) {
          tree = &*tit->second;
          whole = true;
          id = TreeUnitKey(tree->root);
          if (tree->priority) prio = std::max(prio, *tree->priority);
        }
      }
      auto [it, inserted] = unit_index.try_emplace(id, units->all.size());
      if (inserted) {
        VictimUnit u;
        u.id = std::move(id);
        u.group = gk;
        u.whole_group = whole;
        if (tree != nullptr) u.tree_root = tree->root;
        u.priority = prio;
        u.earliest_start = p->p().start_micros;
        units->all.push_back(std::move(u));
      }
      VictimUnit& u = units->all[it->second];
      u.priority = std::max(u.priority, prio);
      u.earliest_start = std::min(u.earliest_start, p->p().start_micros);
      u.pods.emplace_back(n, p);
      if (p->p().meta.deletion_micros.has_value()) u.terminating++;
    }
  }
  for (const VictimUnit& u : units->all) {
    if (u.priority < priority) units->candidates.push_back(&u);
  }
}

std::optional<GroupPreemptionEvaluator::DomainChoice>
GroupPreemptionEvaluator::SelectVictimsInDomain(const Preemptor& preemptor,
                                                const GroupPlacer& placer, const Units& units,
                                                ClaimRelease& claims, const std::string& domain,
                                                const std::vector<framework::NodeInfo*>& nodes,
                                                int32_t* most_placed, std::string* first_failure) {
  state::Snapshot& snapshot = cycles_.snapshot();
  absl::flat_hash_set<const framework::NodeInfo*> in_domain(nodes.begin(), nodes.end());
  std::vector<const VictimUnit*> relevant;  // candidates with a pod in the domain
  std::vector<const VictimUnit*> leaving;
  for (const VictimUnit* u : units.candidates) {
    bool touches = false;
    for (const auto& [node, pod] : u->pods) touches |= in_domain.contains(node);
    if (!touches) continue;
    (u->Leaving() ? leaving : relevant).push_back(u);
  }
  if (relevant.empty() && leaving.empty()) return std::nullopt;  // nothing lower-priority here
  // Least important first: the victim set is the shortest prefix of this
  // order that makes the unit fit, so lower priority levels go before any
  // higher one, then lone pods and smaller groups, then later starts.
  std::sort(relevant.begin(), relevant.end(),
            [](const VictimUnit* a, const VictimUnit* b) { return MoreImportantUnit(*b, *a); });

  // Removes the leaving units and the first `k` of `relevant` (their DRA
  // claims released), places, and (unless `keep`) restores everything.
  std::vector<const VictimUnit*> removed;
  auto trial = [&](size_t k, bool keep) {
    removed.clear();
    for (const VictimUnit* u : leaving) removed.push_back(u);
    for (size_t i = 0; i < k; ++i) removed.push_back(relevant[i]);
    for (const VictimUnit* u : removed) RemoveUnit(*u);
    claims.Release(removed);
    GroupPlacement pl = placer.place(nodes);
    if (!keep) {
      placer.undo();
      for (const VictimUnit* u : removed) RestoreUnit(*u);
      claims.Release({});
    }
    return pl;
  };
  {
    GroupPlacement all = trial(relevant.size(), false);
    if (!all.satisfied) {
      if (all.placed >= *most_placed) {
        *most_placed = all.placed;
        *first_failure = all.first_failure;
      }
      return std::nullopt;  // infeasible even with every lower-priority unit gone
    }
  }
  // Shortest sufficient prefix (feasibility grows with the prefix): binary
  // search, which also finds the lowest sufficient priority level.
  size_t lo = 0, hi = relevant.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (trial(mid, false).satisfied) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  // Assume the preemptor with that prefix removed, then reprieve units,
  // most important first, wherever they still fit in place.
  GroupPlacement pl = trial(lo, true);
  if (!pl.satisfied) {  // placement is not strictly monotone; fall back to everything
    placer.undo();
    for (const VictimUnit* u : removed) RestoreUnit(*u);
    pl = trial(relevant.size(), true);
    if (!pl.satisfied) {
      placer.undo();
      for (const VictimUnit* u : removed) RestoreUnit(*u);
      claims.Release({});
      return std::nullopt;
    }
  }
  std::vector<const VictimUnit*> order;
  for (const VictimUnit* u : removed) {
    if (!u->Leaving()) order.push_back(u);
  }
  std::sort(order.begin(), order.end(),
            [](const VictimUnit* a, const VictimUnit* b) { return MoreImportantUnit(*a, *b); });
  {  // PDB-violating units are reprieved first (they stay sorted within each part).
    const std::vector<bool> violating = PdbViolations(order, snapshot.PodDisruptionBudgets());
    std::vector<const VictimUnit*> first, rest;
    for (size_t i = 0; i < order.size(); ++i) (violating[i] ? first : rest).push_back(order[i]);
    first.insert(first.end(), rest.begin(), rest.end());
    order.swap(first);
  }
  DomainChoice choice;
  choice.domain = domain;
  choice.member_nodes = pl.nodes;
  choice.leaving = leaving;
  std::vector<const VictimUnit*> reprieved;
  std::vector<const VictimUnit*> still_removed = removed;
  for (const VictimUnit* u : order) {
    std::vector<std::pair<framework::NodeInfo*, std::string>> back;
    // Devices of its claims taken by the placed members: it cannot stay.
    bool fits = !claims.Taken(*u);
    for (const auto& [node, pod] : u->pods) {
      if (!fits) break;
      framework::CycleState st;
      framework::ScheduleResult result;
      framework::FitError fit;
      const std::vector<framework::NodeInfo*> one{node};
      if (!cycles_.algorithm()
               .Schedule(*preemptor.fw, st, *pod, snapshot, &result, &fit, &one)
               .IsSuccess()) {
        fits = false;
        break;
      }
      node->AddPod(pod);
      back.emplace_back(node, pod->uid());
    }
    if (fits) {
      reprieved.push_back(u);
      std::erase(still_removed, u);
      claims.Release(still_removed);  // its claims are held again
      continue;
    }
    for (size_t i = back.size(); i-- > 0;) back[i].first->RemovePod(back[i].second);
    choice.victims.push_back(u);
  }
  // Roll back: reprieved units are back already; restore the rest.
  for (const VictimUnit* u : reprieved) RemoveUnit(*u);
  placer.undo();
  for (const VictimUnit* u : removed) RestoreUnit(*u);
  claims.Release({});

  const std::vector<bool> victim_violations =
      PdbViolations(choice.victims, snapshot.PodDisruptionBudgets());
  for (size_t i = 0; i < choice.victims.size(); ++i) {
    const VictimUnit* u = choice.victims[i];
    choice.pdb_violations += victim_violations[i] ? 1 : 0;
    choice.top_priority = std::max(choice.top_priority, u->priority);
    choice.victim_pods += static_cast<int64_t>(u->pods.size()) - u->terminating;
  }
  int64_t earliest = std::numeric_limits<int64_t>::max();
  for (const VictimUnit* u : choice.victims) {
    if (u->priority == choice.top_priority) earliest = std::min(earliest, u->earliest_start);
  }
  choice.latest_start = earliest;
  return choice;
}

int64_t GroupPreemptionEvaluator::Evict(const Preemptor& preemptor, const DomainChoice& choice,
                                        Units& units, std::vector<std::string>* waiting_for) {
  const api::Pod& by = preemptor.members->front().pod_info->p();
  const std::string scheduler_name(preemptor.fw->SchedulerName());
  int64_t evicted = 0;
  for (const VictimUnit* u : choice.victims) {
    for (const auto& [node, pod] : u->pods) {
      waiting_for->push_back(pod->uid());
      if (pod->p().meta.deletion_micros.has_value()) continue;  // already leaving
      absl::Status st = writer_.DeletePodForPreemption(pod->p(), by, node->name());
      (void)st;  // the writer logs and counts its own failures
      ++evicted;
      writer_.RecordEvent(framework::EventRecord{
          "Pod", std::string(pod->p().meta.namespace_.view()), pod->p().meta.name, pod->uid(),
          "Normal", "Preempted", "Preempting",
          gantry::StrCat("Preempted by pod group ", preemptor.key, " on node ", node->name()),
          scheduler_name});
    }
    if (!u->whole_group) continue;
    // The unit's object: the subtree's root composite, else the PodGroup.
    const state::GroupInfo* g = u->tree_root ? &*u->tree_root : units.FindGroup(state_, u->group);
    if (g == nullptr) continue;
    (void)writer_.UpdatePodGroupCondition(
        PodGroupRefOf(*g),
        framework::PodGroupCondition{
            std::string(kDisruptionTarget), "True", std::string(kPreemptionByScheduler),
            gantry::StrCat(by.scheduler_name.view(),
                           ": preempting to accommodate a higher priority pod group")});
    const size_t slash = g->key.find('/');
    writer_.RecordEvent(framework::EventRecord{
        g->composite ? "CompositePodGroup" : "PodGroup", g->key.substr(0, slash),
        g->key.substr(slash + 1), g->uid, "Normal", "Preempted", "Preempting",
        gantry::StrCat("Preempted as a whole (disruptionMode all) by pod group ", preemptor.key),
        scheduler_name});
  }
  for (const VictimUnit* u : choice.leaving) {
    for (const auto& [node, pod] : u->pods) waiting_for->push_back(pod->uid());
  }
  return evicted;
}

void GroupPreemptionEvaluator::ClearLowerNominations(
    const DomainChoice& choice, int32_t priority,
    const absl::flat_hash_map<std::string, std::string>& nominate) {
  absl::flat_hash_set<std::string> victim_nodes;
  for (const VictimUnit* u : choice.victims) {
    for (const auto& [node, pod] : u->pods) victim_nodes.insert(std::string(node->name()));
  }
  for (const auto& [node_name, np] : queue_.Nominations()) {
    if (np->priority >= priority || !victim_nodes.contains(node_name) ||
        nominate.contains(np->uid()))
      continue;
    const std::string empty;
    (void)writer_.UpdatePodScheduledCondition(
        np->p(), framework::PodScheduledCondition{"False", "Unschedulable", ""}, &empty);
    queue_.DeleteNominatedPodIfExists(np->uid());
  }
}

bool GroupPreemptionEvaluator::Preempt(const Preemptor& preemptor, const GroupPlacer& placer,
                                       const Domains& domains, std::string* note) {
  if (!preemptor.fw->HasPostFilterPlugins())
    return false;  // preemption is disabled in this profile
  std::vector<framework::QueuedPodInfo>& members = *preemptor.members;
  if (members.empty()) return false;

  // ---- 1. Eligibility ------------------------------------------------------------
  const std::optional<int32_t> priority = EligiblePriority(preemptor, note);
  if (!priority) return false;
  if (StillWaitingForVictims(preemptor)) return true;

  // Nominated room of other preemptors with >= priority is kept throughout.
  NominatedRoom room(cycles_.snapshot(), queue_, *priority, [&](const framework::PodInfo& p) {
    return preemptor.own_group(state::GroupKeyOf(p.p())) || state_.NodeOf(p.uid()).has_value();
  });

  // ---- 2. Victim units -------------------------------------------------------------
  Units units;
  CollectVictimUnits(preemptor, *priority, &units);

  // ---- 3. Per domain ---------------------------------------------------------------
  std::optional<DomainChoice> best;
  std::string first_failure;
  int32_t most_placed = 0;
  {
    ClaimRelease claims(dra_);
    for (const auto& [domain, nodes] : domains) {
      std::optional<DomainChoice> choice = SelectVictimsInDomain(
          preemptor, placer, units, claims, domain, nodes, &most_placed, &first_failure);
      if (choice && (!best || choice->BetterThan(*best))) best = std::move(choice);
    }
  }
  if (!best) {
    *note = units.candidates.empty()
                ? "preemption: no lower-priority pods or pod groups to preempt."
                : gantry::StrCat(
                      "preemption: the group would not reach quorum even without every "
                      "lower-priority pod",
                      first_failure.empty()
                          ? ""
                          : gantry::StrCat(" (", most_placed, " placed; ", first_failure, ")"),
                      ".");
    return false;
  }

  // ---- 4. Evict (the whole unit is known to fit) and nominate ------------------------
  PendingPreemption pending;
  const int64_t evicted = Evict(preemptor, *best, units, &pending.waiting_for);
  absl::flat_hash_map<std::string, std::string> nominate;
  int32_t placed = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    if (best->member_nodes[i].empty()) continue;
    nominate[members[i].pod_info->uid()] = best->member_nodes[i];
    pending.nominations.emplace_back(members[i].pod_info->uid(), best->member_nodes[i]);
    ++placed;
  }
  ClearLowerNominations(*best, *priority, nominate);
  const std::string message =
      best->victims.empty()
          ? gantry::StrCat("pod group ", preemptor.key, ": ", placed,
                           " members nominated; waiting for ", pending.waiting_for.size(),
                           " terminating pod(s) to leave")
          : gantry::StrCat("pod group ", preemptor.key, ": preempting ", best->victims.size(),
                           " victim unit(s) (", evicted, " pods) so that ", placed, " members fit",
                           best->domain.empty() ? "" : gantry::StrCat(" in ", best->domain),
                           "; the members are nominated and wait for the victims to terminate");
  if (!pending.waiting_for.empty()) pending_[preemptor.key] = std::move(pending);
  FailMembers(preemptor, message, nominate, placed, best->domain);
  return true;
}

}  // namespace gantry::scheduler
