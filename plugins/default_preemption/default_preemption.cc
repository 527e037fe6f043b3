#include "plugins/default_preemption/default_preemption.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "gantry/util/strings.h"
#include "plugins/helper/helper.h"
#include "src/api/policy.h"

namespace gantry::plugins::default_preemption {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;

// ---- Args -------------------------------------------------------------------

DefaultPreemptionArgs DefaultPreemptionArgs::Decode(api::Decoder& d, api::JsonValue v) {
  DefaultPreemptionArgs args;
  helper::DecodeArgsObject(d, v, kArgsKind, [&](std::string_view key, api::JsonValue value) {
    if (key == "minCandidateNodesPercentage") {
      if (!value.is_null()) args.min_candidate_nodes_percentage = d.Int(value);
    } else if (key == "minCandidateNodesAbsolute") {
      if (!value.is_null()) args.min_candidate_nodes_absolute = d.Int(value);
    } else {
      return false;
    }
    return true;
  });
  if (!d.ok()) return args;
  args.ValidateInto(d);
  return args;
}

void DefaultPreemptionArgs::ValidateInto(api::Decoder& d) const {
  if (min_candidate_nodes_percentage < 0 || min_candidate_nodes_percentage > 100) {
    d.FailAt("minCandidateNodesPercentage",
             gantry::StrCat("Invalid value: ", min_candidate_nodes_percentage, ": not in valid range [0, 100]"));
  }
  if (min_candidate_nodes_absolute < 0) {
    d.FailAt("minCandidateNodesAbsolute",
             gantry::StrCat("Invalid value: ", min_candidate_nodes_absolute, ": not in valid range [0, inf)"));
  }
  if (min_candidate_nodes_percentage == 0 && min_candidate_nodes_absolute == 0) {
    d.FailAt("minCandidateNodesPercentage",
             "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute");
    d.FailAt("minCandidateNodesAbsolute",
             "Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage");
  }
}

absl::Status DefaultPreemptionArgs::Validate() const {
  api::Decoder d(kArgsKind);
  ValidateInto(d);
  return helper::DecoderStatus(d);
}

nlohmann::json DefaultPreemptionArgs::ToJson() const {
  return nlohmann::json{{"minCandidateNodesPercentage", min_candidate_nodes_percentage},
                        {"minCandidateNodesAbsolute", min_candidate_nodes_absolute}};
}

// ---- Helpers ----------------------------------------------------------------

namespace {

// upstream MoreImportantPod: higher priority first, then the earlier start.
bool MoreImportant(const PodInfoPtr& a, const PodInfoPtr& b) {
  if (a->priority != b->priority) return a->priority > b->priority;
  return a->p().start_micros < b->p().start_micros;
}

bool PreemptsNever(const PodInfo& pod) {
  return pod.p().preemption_policy.has_value() &&
         *pod.p().preemption_policy == api::PreemptionPolicy::kNever;
}

// Splits `pods` (kept in order) into those whose eviction would violate a
// PodDisruptionBudget and those whose would not (upstream filterPodsWithPDBViolation).
void SplitByPdbViolation(const std::vector<PodInfoPtr>& pods,
                         const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs,
                         std::vector<PodInfoPtr>* violating, std::vector<PodInfoPtr>* non_violating) {
  std::vector<int64_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& pdb : pdbs) allowed.push_back(pdb->status.disruptions_allowed);
  for (const PodInfoPtr& p : pods) {
    const api::Pod& pod = p->p();
    bool violates = false;
    if (!pod.meta.labels.empty()) {
      for (size_t i = 0; i < pdbs.size(); ++i) {
        const api::PodDisruptionBudget& pdb = *pdbs[i];
        if (pdb.meta.namespace_ != pod.meta.namespace_) continue;
        // A null or empty selector selects nothing here (as upstream's preemption does).
        if (!pdb.spec.selector || pdb.spec.selector->Empty()) continue;
        if (!pdb.spec.selector->Matches(pod.meta.labels)) continue;
        // Already being disrupted: counted in disruptionsAllowed already.
        bool disrupted = false;
        for (const auto& [name, t] : pdb.status.disrupted_pods) {
          if (name == pod.meta.name) disrupted = true;
        }
        if (disrupted) continue;
        if (--allowed[i] < 0) violates = true;
      }
    }
    (violates ? violating : non_violating)->push_back(p);
  }
}

// The object of an `all` unit key (DisruptionUnit::group): "ns/name" of a
// PodGroup, or "CompositePodGroup ns/name" of a subtree's root composite.
// The handle gives no UID or generation: the write has no UID precondition
// and no observedGeneration.
framework::PodGroupRef GroupRefOfUnit(std::string_view key) {
  framework::PodGroupRef ref;
  ref.api_group = "scheduling.k8s.io";
  ref.kind = "PodGroup";
  constexpr std::string_view kComposite = "CompositePodGroup ";
  if (key.substr(0, kComposite.size()) == kComposite) {
    ref.kind = "CompositePodGroup";
    key.remove_prefix(kComposite.size());
  }
  const size_t slash = key.find('/');
  ref.namespace_ = std::string(key.substr(0, slash));
  ref.name = std::string(key.substr(slash == std::string_view::npos ? key.size() : slash + 1));
  return ref;
}

// The fit-error style message: "0/N nodes are available: <histogram>."
std::string NodesAvailableMessage(int num_all_nodes, const std::map<std::string, int>& histogram) {
  std::vector<std::string> parts;
  for (const auto& [reason, count] : histogram) parts.push_back(gantry::StrCat(count, " ", reason));
  std::sort(parts.begin(), parts.end());
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) joined += ", ";
    joined += parts[i];
  }
  return gantry::StrCat("0/", num_all_nodes, " nodes are available: ", joined, ".");
}

}  // namespace

// ---- Steps ------------------------------------------------------------------

std::string DefaultPreemption::EligibleToPreemptOthers(const PodInfo& pod,
                                                       const framework::NodeToStatus& filtered) const {
  if (PreemptsNever(pod)) return std::string(kPolicyNever);
  const api::Symbol nominated = pod.p().nominated_node_name;
  if (nominated.empty()) return "";
  // Filters now reject the nominated node outright: preempt again elsewhere.
  auto it = filtered.find(std::string(nominated.view()));
  if (it != filtered.end() && it->second.code() == Code::kUnschedulableAndUnresolvable) return "";
  const NodeInfo* node = handle_.Snapshot().Get(nominated.view());
  if (node == nullptr) return "";
  for (const PodInfoPtr& p : node->pods()) {
    if (p->p().meta.deletion_micros.has_value() && p->priority < pod.priority) {
      return std::string(kTerminatingVictim);
    }
  }
  return "";
}

int DefaultPreemption::NumCandidates(int num_nodes) const {
  int64_t n = static_cast<int64_t>(num_nodes) * args_.min_candidate_nodes_percentage / 100;
  if (n < args_.min_candidate_nodes_absolute) n = args_.min_candidate_nodes_absolute;
  if (n > num_nodes) n = num_nodes;
  return static_cast<int>(n);
}

const WholeGroupIndex::Group* WholeGroupIndex::Get(const std::string& key) {
  std::call_once(once_, [&] {
    for (const NodeInfo* n : handle_.Snapshot().NodeInfos()) {
      for (const PodInfoPtr& p : n->pods()) {
        framework::DisruptionUnit u = handle_.DisruptionUnitOf(p->p());
        if (!u.whole_group) continue;
        Group& g = groups_[u.group];
        g.members.push_back(p);
        g.max_priority = std::max(g.max_priority, u.group_priority.value_or(p->priority));
      }
    }
  });
  auto it = groups_.find(key);
  return it == groups_.end() ? nullptr : &it->second;
}

// What one PostFilter's dry run shares across its candidate nodes.
struct DefaultPreemption::DryRun {
  const CycleState& state;
  const PodInfo& pod;
  std::vector<framework::FilterPlugin*> plan;  // the active filters, computed once
  // Whether the PreFilter extensions may change the state: only then does a
  // candidate evaluate on a clone of it.
  bool extensions = true;
  WholeGroupIndex* groups = nullptr;
};

Status DefaultPreemption::SelectVictimsOnNode(const CycleState& cycle_state, const PodInfo& pod,
                                              const NodeInfo& original, const std::vector<PodInfoPtr>& nominated,
                                              Candidate* out, WholeGroupIndex* groups) const {
  WholeGroupIndex own(handle_);
  DryRun run{cycle_state, pod, handle_.ActiveFilterPlugins(cycle_state),
             handle_.HasPreFilterExtensions(cycle_state), groups != nullptr ? groups : &own};
  return Evaluate(run, original, nominated, out);
}

Status DefaultPreemption::FitsWithNominated(const DryRun& run, const CycleState& state,
                                            const NodeInfo& node,
                                            const std::vector<PodInfoPtr>& room) const {
  NodeInfo with_nominated = node;
  std::unique_ptr<CycleState> with_state = run.extensions ? state.Clone() : nullptr;
  for (const PodInfoPtr& np : room) {
    with_nominated.AddPod(np);
    if (with_state == nullptr) continue;
    Status st = handle_.RunPreFilterExtensionAddPod(*with_state, run.pod, *np, with_nominated);
    if (!st.IsSuccess()) return st;
  }
  Status st = handle_.RunFilterPluginsWithPlan(run.plan, with_state ? *with_state : state, run.pod,
                                               with_nominated);
  if (!st.IsSuccess()) return st;
  return handle_.RunFilterPluginsWithPlan(run.plan, state, run.pod, node);
}

Status DefaultPreemption::Evaluate(const DryRun& run, const NodeInfo& original,
                                   const std::vector<PodInfoPtr>& nominated, Candidate* out) const {
  const PodInfo& pod = run.pod;
  std::vector<PodInfoPtr> potential;
  // Pod UID -> its `all` group (members on this node move as one block).
  absl::flat_hash_map<std::string, std::string> whole_group_of;
  for (const PodInfoPtr& p : original.pods()) {
    // A pod in no group (no PodGroup name, no labels for a scheduler-plugins
    // group) is a unit by itself: no lookup.
    const bool lone = p->p().pod_group_name.empty() && p->p().meta.labels.empty();
    if (lone && p->priority >= pod.priority) continue;
    framework::DisruptionUnit unit =
        lone ? framework::DisruptionUnit{} : handle_.DisruptionUnitOf(p->p());
    // A group's priority replaces its members' own.
    if (unit.group_priority.value_or(p->priority) >= pod.priority) continue;
    if (unit.whole_group) {
      const WholeGroupIndex::Group* g = run.groups->Get(unit.group);
      // Any member as important as the preemptor protects the whole group.
      if (g == nullptr || g->max_priority >= pod.priority) continue;
      whole_group_of[p->uid()] = unit.group;
    }
    potential.push_back(p);
  }
  if (potential.empty()) return Status(Code::kUnschedulableAndUnresolvable, std::string(kNoVictims));

  // Pods nominated here with >= priority count as placed (upstream
  // addNominatedPods). Upstream checks twice, with and without them; the
  // second check can only fail for a pod that needs pod affinity (removing
  // other pods never breaks any other filter), so only then are they kept
  // apart; otherwise they stay in the what-if node for the whole evaluation.
  std::vector<PodInfoPtr> room;
  for (const PodInfoPtr& np : nominated) {
    if (np->uid() == pod.uid() || np->priority < pod.priority) continue;
    bool present = false;
    for (const PodInfoPtr& q : original.pods()) present = present || q->uid() == np->uid();
    if (!present) room.push_back(np);
  }
  const bool two_pass = !room.empty() && !pod.required_affinity.empty();

  NodeInfo node = original;  // the what-if copy
  std::unique_ptr<CycleState> owned_state = run.extensions ? run.state.Clone() : nullptr;
  const CycleState& state = owned_state ? *owned_state : run.state;
  auto remove = [&](const PodInfoPtr& p) -> Status {
    node.RemovePod(p->uid());
    return owned_state ? handle_.RunPreFilterExtensionRemovePod(*owned_state, pod, *p, node)
                       : Status();
  };
  auto add = [&](const PodInfoPtr& p) -> Status {
    node.AddPod(p);
    return owned_state ? handle_.RunPreFilterExtensionAddPod(*owned_state, pod, *p, node)
                       : Status();
  };
  auto fits = [&]() -> Status {
    if (two_pass) return FitsWithNominated(run, state, node, room);
    return handle_.RunFilterPluginsWithPlan(run.plan, state, pod, node);
  };
  if (!two_pass) {
    for (const PodInfoPtr& np : room) {
      if (Status st = add(np); !st.IsSuccess()) return st;
    }
  }
  for (const PodInfoPtr& p : potential) {
    if (Status st = remove(p); !st.IsSuccess()) return st;
  }
  // Even without every lower-priority pod the pod does not fit: no help here.
  if (Status st = fits(); !st.IsSuccess()) return st;

  std::sort(potential.begin(), potential.end(), MoreImportant);
  out->node = std::string(original.name());
  out->victims.clear();
  out->num_pdb_violations = 0;
  absl::flat_hash_map<std::string, bool> group_done;  // `all` group -> reprieved?
  std::vector<PodInfoPtr> block;
  // Reprieve as many as possible, most important first; PDB-violating pods
  // first. An `all` group's members on this node are tried as one block.
  auto reprieve = [&](const PodInfoPtr& p, bool violates) -> Status {
    block.clear();
    auto wit = whole_group_of.find(p->uid());
    if (wit == whole_group_of.end()) {
      block.push_back(p);
    } else {
      if (group_done.contains(wit->second)) return Status();  // decided with its first member
      for (const PodInfoPtr& q : potential) {
        auto qit = whole_group_of.find(q->uid());
        if (qit != whole_group_of.end() && qit->second == wit->second) block.push_back(q);
      }
    }
    for (const PodInfoPtr& q : block) {
      if (Status st = add(q); !st.IsSuccess()) return st;
    }
    Status fit = fits();
    if (fit.IsError()) return fit;
    const bool kept = fit.IsSuccess();
    if (wit != whole_group_of.end()) group_done[wit->second] = kept;
    if (!kept) {
      for (const PodInfoPtr& q : block) {
        if (Status st = remove(q); !st.IsSuccess()) return st;
        out->victims.push_back(q);
      }
      if (violates) out->num_pdb_violations++;
    }
    return Status();
  };
  const auto& pdbs = handle_.PodDisruptionBudgets();
  if (pdbs.empty()) {
    for (const PodInfoPtr& p : potential) {
      if (Status st = reprieve(p, false); !st.IsSuccess()) return st;
    }
  } else {
    std::vector<PodInfoPtr> violating, non_violating;
    SplitByPdbViolation(potential, pdbs, &violating, &non_violating);
    for (const PodInfoPtr& p : violating) {
      if (Status st = reprieve(p, true); !st.IsSuccess()) return st;
    }
    for (const PodInfoPtr& p : non_violating) {
      if (Status st = reprieve(p, false); !st.IsSuccess()) return st;
    }
  }
  // An evicted `all` group goes whole: its members on other nodes too.
  for (const auto& [group, kept] : group_done) {
    if (kept) continue;
    out->whole_groups.push_back(group);
    for (const PodInfoPtr& m : run.groups->Get(group)->members) {
      if (m->p().node_name.view() != original.name()) out->victims.push_back(m);
    }
  }
  std::sort(out->victims.begin(), out->victims.end(), MoreImportant);
  std::sort(out->whole_groups.begin(), out->whole_groups.end());
  return Status();
}

int DefaultPreemption::PickOne(const std::vector<Candidate>& candidates) {
  if (candidates.empty()) return -1;
  std::vector<int> idx;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
    // A node that needs no victim at all wins outright.
    if (candidates[static_cast<size_t>(i)].victims.empty()) return i;
    idx.push_back(i);
  }
  // Keeps the indices minimising `key` (stable: original order preserved).
  auto keep_min = [&](auto key) {
    if (idx.size() <= 1) return;
    auto best = key(candidates[static_cast<size_t>(idx[0])]);
    for (int i : idx) best = std::min(best, key(candidates[static_cast<size_t>(i)]));
    std::vector<int> kept;
    for (int i : idx) {
      if (key(candidates[static_cast<size_t>(i)]) == best) kept.push_back(i);
    }
    idx.swap(kept);
  };
  // 1. fewest PDB violations.
  keep_min([](const Candidate& c) { return c.num_pdb_violations; });
  // 2. lowest priority of the most important victim.
  keep_min([](const Candidate& c) { return static_cast<int64_t>(c.victims.front()->priority); });
  // 3. smallest sum of victim priorities (shifted so negative priorities count as small).
  keep_min([](const Candidate& c) {
    int64_t sum = 0;
    for (const PodInfoPtr& v : c.victims) {
      sum += static_cast<int64_t>(v->priority) + static_cast<int64_t>(std::numeric_limits<int32_t>::max()) + 1;
    }
    return sum;
  });
  // 4. fewest victims.
  keep_min([](const Candidate& c) { return static_cast<int64_t>(c.victims.size()); });
  // 5. latest start among the highest-priority victims (earliest start of those, maximised).
  keep_min([](const Candidate& c) {
    const int32_t top = c.victims.front()->priority;
    int64_t earliest = std::numeric_limits<int64_t>::max();
    for (const PodInfoPtr& v : c.victims) {
      if (v->priority == top) earliest = std::min(earliest, v->p().start_micros);
    }
    return -earliest;
  });
  // 6. the first remaining.
  return idx.front();
}

// ---- PostFilter -------------------------------------------------------------

framework::PostFilterResult DefaultPreemption::PostFilter(CycleState& state, const PodInfo& pod,
                                                          const framework::NodeToStatus& filtered) {
  // scheduler_preemption_attempts_total counts every PostFilter run, as upstream.
  handle_.Metrics().PreemptionAttempted();
  framework::PostFilterResult result;
  if (std::string why = EligibleToPreemptOthers(pod, filtered); !why.empty()) {
    result.status = Status(Code::kUnschedulable, why);
    result.message = gantry::StrCat("preemption: ", why);
    return result;
  }
  const std::vector<NodeInfo*>& all = handle_.Snapshot().NodeInfos();
  const int num_all = static_cast<int>(all.size());
  // Nodes where preemption might help: rejected as Unschedulable (not
  // UnschedulableAndUnresolvable, and not left out by PreFilter).
  std::vector<const NodeInfo*> potential;
  for (const NodeInfo* n : all) {
    auto it = filtered.find(gantry::AsAbsl(n->name()));
    if (it == filtered.end() || it->second.code() != Code::kUnschedulable) continue;
    potential.push_back(n);
  }
  std::map<std::string, int> histogram;
  auto fail = [&](int not_helpful) {
    if (not_helpful > 0) histogram[std::string(kNotHelpful)] += not_helpful;
    framework::PostFilterResult r;
    std::string msg = NodesAvailableMessage(num_all, histogram);
    r.status = Status(Code::kUnschedulable, msg);
    r.message = gantry::StrCat("preemption: ", msg);
    return r;
  };
  if (potential.empty()) return fail(num_all);

  // Dry run from a rotating offset until enough candidates are found; waves
  // run in parallel but are merged in node order, so the result is deterministic.
  const int n = static_cast<int>(potential.size());
  const int want = NumCandidates(n);
  const size_t offset = static_cast<size_t>(offset_.fetch_add(1, std::memory_order_relaxed) % static_cast<uint64_t>(n));
  std::vector<Candidate> candidates;
  WholeGroupIndex groups(handle_);
  const DryRun run{state, pod, handle_.ActiveFilterPlugins(state),
                   handle_.HasPreFilterExtensions(state), &groups};
  int evaluated = 0;
  int failed = 0;
  std::vector<Candidate> wave_out;
  std::vector<Status> wave_status;
  std::vector<std::vector<PodInfoPtr>> wave_nominated;
  while (evaluated < n && static_cast<int>(candidates.size()) < want) {
    const int wave = std::min(n - evaluated, want - static_cast<int>(candidates.size()));
    wave_out.assign(static_cast<size_t>(wave), Candidate{});
    wave_status.assign(static_cast<size_t>(wave), Status());
    wave_nominated.assign(static_cast<size_t>(wave), {});
    auto node_at = [&](int k) {
      return potential[(offset + static_cast<size_t>(evaluated + k)) % static_cast<size_t>(n)];
    };
    for (int k = 0; k < wave; ++k) wave_nominated[static_cast<size_t>(k)] = handle_.NominatedPodsForNode(node_at(k)->name());
    handle_.parallelizer().Until(wave, [&](int k) {
      const size_t i = static_cast<size_t>(k);
      wave_status[i] = Evaluate(run, *node_at(k), wave_nominated[i], &wave_out[i]);
    });
    for (int k = 0; k < wave; ++k) {
      const size_t i = static_cast<size_t>(k);
      if (wave_status[i].IsSuccess()) {
        candidates.push_back(std::move(wave_out[i]));
      } else if (wave_status[i].IsError()) {
        result.status = wave_status[i];
        return result;
      } else {
        failed++;
        for (const std::string& r : wave_status[i].reasons()) histogram[r]++;
      }
    }
    evaluated += wave;
  }
  if (candidates.empty()) return fail(num_all - failed);

  const int best = PickOne(candidates);
  const Candidate& chosen = candidates[static_cast<size_t>(best)];
  handle_.Metrics().PreemptionVictims(static_cast<int>(chosen.victims.size()));
  framework::ClusterWriter& writer = handle_.Writer();
  for (const PodInfoPtr& v : chosen.victims) {
    // Members of an evicted `all` group may be on other nodes.
    const std::string victim_node = v->p().node_name.empty() ? chosen.node : v->p().node_name.str();
    absl::Status st = writer.DeletePodForPreemption(v->p(), pod.p(), victim_node);
    if (!st.ok()) {
      result.status = Status::FromAbsl(st);
      return result;
    }
    framework::EventRecord ev;
    ev.regarding_kind = "Pod";
    ev.namespace_ = v->p().meta.namespace_.str();
    ev.name = v->p().meta.name;
    ev.uid = v->uid();
    ev.type = "Normal";
    ev.reason = "Preempted";
    ev.action = "Preempting";
    ev.note = gantry::StrCat("Preempted by pod ", pod.uid(), " on node ", victim_node);
    ev.reporting_controller = std::string(handle_.SchedulerName());
    writer.RecordEvent(ev);
  }
  // A group evicted whole is marked on its object too (KEP-5710).
  for (const std::string& key : chosen.whole_groups) {
    (void)writer.UpdatePodGroupCondition(
        GroupRefOfUnit(key),
        framework::PodGroupCondition{
            "DisruptionTarget", "True", "PreemptionByScheduler",
            gantry::StrCat(pod.p().scheduler_name.view(),
                           ": preempting to accommodate a higher priority pod")});
  }
  // Lower-priority pods nominated to the chosen node lose their nomination.
  for (const PodInfoPtr& np : handle_.NominatedPodsForNode(chosen.node)) {
    if (np->uid() == pod.uid() || np->priority >= pod.priority) continue;
    const std::string empty;
    framework::PodScheduledCondition cond{"False", "Unschedulable", ""};
    (void)writer.UpdatePodScheduledCondition(np->p(), cond, &empty);
  }
  result.nominated_node_name = chosen.node;
  result.status = Status();
  return result;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder& d, api::JsonValue args, framework::FrameworkHandle& handle)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        DefaultPreemptionArgs a = DefaultPreemptionArgs::Decode(d, args);
        if (!d.ok()) return helper::DecoderStatus(d);
        return std::make_unique<DefaultPreemption>(a, handle);
      },
      [](api::Decoder& d, api::JsonValue args) -> nlohmann::json {
        return DefaultPreemptionArgs::Decode(d, args).ToJson();
      },
      std::string(kArgsKind)});
}

}  // namespace gantry::plugins::default_preemption
