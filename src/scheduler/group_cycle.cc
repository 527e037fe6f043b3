// The group cycle: a PodGroup's pending members are scheduled together on
// one snapshot (design §4). Members are placed in order on an overlay of
// the snapshot, so each sees the earlier ones; with a topology constraint
// every domain (nodes sharing the label value) is tried and the feasible
// placements are scored. A gang binds only when at least minCount members
// (counting members already running) fit; otherwise nothing is assumed,
// reserved or held, and every member goes back to the queue with a message
// that says how many fit where.
#include <algorithm>
#include <chrono>
#include <map>

#include "gantry/util/strings.h"
#include "src/scheduler/group_preemption.h"
#include "src/scheduler/scheduler.h"

namespace gantry::scheduler {
namespace {

using framework::Status;

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One member's placement in a trial.
struct MemberTrial {
  std::unique_ptr<framework::CycleState> state;
  std::string node;  // "" when it did not fit
  std::string failure;
};

struct Trial {
  std::string domain;  // "key=value", "" for the unconstrained placement
  std::vector<MemberTrial> members;
  int32_t placed = 0;
  int64_t score = 0;
  std::string first_failure;
};

// Default placement score: how tightly the placement fills its domain, over
// the resources the group requests (0..100, higher is tighter).
int64_t TightnessScore(const std::vector<framework::NodeInfo*>& nodes,
                       const std::vector<framework::QueuedPodInfo>& members) {
  framework::Resource wanted;
  for (const auto& m : members) wanted.Add(m.pod_info->requests);
  double sum = 0;
  int count = 0;
  auto add = [&](int64_t requested, int64_t allocatable) {
    if (allocatable <= 0) return;
    sum += std::min(1.0, static_cast<double>(requested) / static_cast<double>(allocatable));
    ++count;
  };
  framework::Resource requested, allocatable;
  for (const framework::NodeInfo* n : nodes) {
    requested.Add(n->requested());
    allocatable.Add(n->allocatable());
  }
  if (wanted.milli_cpu > 0) add(requested.milli_cpu, allocatable.milli_cpu);
  if (wanted.memory > 0) add(requested.memory, allocatable.memory);
  for (const api::ResourceAmount& a : wanted.scalar) {
    if (a.value > 0) add(requested.Get(a.name), allocatable.Get(a.name));
  }
  if (count == 0) return 0;
  return static_cast<int64_t>(100.0 * sum / count);
}

}  // namespace

void Scheduler::FailGroupMember(framework::Framework* fw, framework::QueuedPodInfo qpi,
                                const std::string& message, int64_t duration_micros, int64_t cycle) {
  // A group waits for any cluster change (members arriving, capacity freed):
  // "GangScheduling" registers no events, so the queue wakes it on all.
  HandleFailure(fw, std::move(qpi), Status(framework::Code::kUnschedulable, message).WithPlugin("GangScheduling"),
                nullptr, "", duration_micros, cycle);
}

void Scheduler::RunGroupCycle(framework::QueuedPodInfo first, const std::string& key,
                              const std::optional<state::GroupInfo>& group, framework::Framework* fw,
                              int64_t cycle, int64_t start_micros) {
  const std::string ns(first.pod_info->p().meta.namespace_.view());
  // Gather the group's other pending members into this cycle.
  std::vector<framework::QueuedPodInfo> members;
  members.push_back(std::move(first));
  for (framework::QueuedPodInfo& m : queue_->PopMatching(
           [&](const framework::PodInfo& p) { return state::GroupKeyOf(p.p()) == key; })) {
    members.push_back(std::move(m));
  }
  std::stable_sort(members.begin() + 1, members.end(), [](const auto& a, const auto& b) {
    return a.pod_info->priority > b.pod_info->priority;
  });

  auto fail_all = [&](const std::string& message, const std::string& domain, int32_t placed, int32_t min) {
    const int64_t duration = NowMicros() - start_micros;
    for (framework::QueuedPodInfo& m : members) FailGroupMember(fw, std::move(m), message, duration, cycle);
    NotifyGroup(GroupOutcome{key, false, placed, min, domain, message, duration});
  };

  if (!group) {
    fail_all(gantry::StrCat("pod group ", key, " does not exist yet; its members wait for it"), "", 0, 0);
    return;
  }
  // All members must be served by one scheduler: ours, and one profile.
  std::string foreign;
  {
    std::lock_guard<std::mutex> lock(foreign_mu_);
    auto it = foreign_group_schedulers_.find(key);
    if (it != foreign_group_schedulers_.end()) {
      for (const std::string& n : it->second) foreign += ", " + n;
    }
  }
  if (!foreign.empty()) {
    fail_all(gantry::StrCat("pod group ", key, " is rejected: its members use different schedulerNames (",
                            members.front().pod_info->p().scheduler_name.view(), foreign,
                            "); all members must use one"),
             "", 0, group ? group->min_count : 0);
    return;
  }
  // All members must be served by the same profile.
  for (const framework::QueuedPodInfo& m : members) {
    if (m.pod_info->p().scheduler_name != members.front().pod_info->p().scheduler_name) {
      fail_all(gantry::StrCat("pod group ", key, " is rejected: its members use different schedulerNames (",
                              members.front().pod_info->p().scheduler_name.view(), ", ",
                              m.pod_info->p().scheduler_name.view(), "); all members must use one"),
               "", 0, group->min_count);
      return;
    }
  }

  const int32_t already = state_.PlacedMembers(key);
  const int32_t min_count = group->gang ? group->min_count : 1;
  const int32_t need = std::max(0, min_count - already);
  if (static_cast<int32_t>(members.size()) < need) {
    fail_all(gantry::StrCat("pod group ", key, ": ", members.size() + static_cast<size_t>(already), " of minCount ",
                            min_count, " members exist; waiting for the rest"),
             "", 0, min_count);
    return;
  }

  state_.UpdateSnapshot(&snapshot_);
  fw->SetSnapshot(&snapshot_);

  // Candidate placements: one per topology domain, or the whole cluster.
  std::vector<std::pair<std::string, std::vector<framework::NodeInfo*>>> domains;
  if (group->topology_key.empty()) {
    domains.emplace_back("", snapshot_.NodeInfos());
  } else {
    std::map<std::string, std::vector<framework::NodeInfo*>> by_value;
    for (framework::NodeInfo* n : snapshot_.NodeInfos()) {
      if (auto v = api::FindLabel(n->node()->meta.labels, group->topology_key)) {
        by_value[v->str()].push_back(n);
      }
    }
    for (auto& [value, nodes] : by_value) {
      domains.emplace_back(gantry::StrCat(group->topology_key.view(), "=", value), std::move(nodes));
    }
  }
  if (domains.empty()) {
    fail_all(gantry::StrCat("pod group ", key, ": no node has the topology label ", group->topology_key.view()),
             "", 0, min_count);
    return;
  }

  // Tries the members on one domain on the snapshot overlay, then rolls back.
  auto try_domain = [&](const std::string& name, const std::vector<framework::NodeInfo*>& nodes) {
    Trial trial;
    trial.domain = name;
    const int32_t total = static_cast<int32_t>(members.size());
    int32_t failed = 0;
    for (const framework::QueuedPodInfo& m : members) {
      MemberTrial mt;
      mt.state = std::make_unique<framework::CycleState>();
      // Once quorum is out of reach, the rest need not be tried.
      if (total - failed < need) {
        trial.members.push_back(std::move(mt));
        continue;
      }
      framework::ScheduleResult result;
      framework::FitError fit;
      Status st = algorithm_->Schedule(*fw, *mt.state, *m.pod_info, snapshot_, &result, &fit, &nodes);
      if (st.IsSuccess()) {
        framework::NodeInfo* host = snapshot_.GetMutable(result.suggested_host);
        Status rs = fw->RunReservePlugins(*mt.state, *m.pod_info, result.suggested_host);
        if (rs.IsSuccess() && host != nullptr) {
          host->AddPod(m.pod_info);
          mt.node = result.suggested_host;
          trial.placed++;
        } else {
          fw->RunUnreservePlugins(*mt.state, *m.pod_info, result.suggested_host);
          mt.failure = rs.Message();
        }
      } else {
        mt.failure = st.IsRejected() ? fit.Message() : st.Message();
      }
      if (mt.node.empty()) {
        ++failed;
        if (trial.first_failure.empty()) trial.first_failure = mt.failure;
      }
      trial.members.push_back(std::move(mt));
    }
    if (trial.placed >= need) trial.score = TightnessScore(nodes, members);
    // Roll back the overlay and the reservations, last member first.
    for (size_t i = trial.members.size(); i-- > 0;) {
      MemberTrial& mt = trial.members[i];
      if (mt.node.empty()) continue;
      fw->RunUnreservePlugins(*mt.state, *members[i].pod_info, mt.node);
      if (framework::NodeInfo* host = snapshot_.GetMutable(mt.node)) host->RemovePod(members[i].pod_info->uid());
    }
    return trial;
  };

  std::optional<Trial> best;
  Trial most_placed;
  {
    // Room nominated to other preemptors of >= priority stays theirs (group_preemption.h).
    NominatedRoom room(snapshot_, *queue_, members.front().pod_info->priority, [&](const framework::PodInfo& p) {
      return state::GroupKeyOf(p.p()) == key || state_.NodeOf(p.uid()).has_value();
    });
    for (const auto& [name, nodes] : domains) {
      Trial t = try_domain(name, nodes);
      if (t.placed >= need) {
        if (!best || t.score > best->score) best = std::move(t);
      } else if (t.placed >= most_placed.placed) {
        if (most_placed.members.empty() || t.placed > most_placed.placed) most_placed = std::move(t);
      }
    }
  }

  if (!best) {
    // Workload-aware preemption (src/scheduler/group_preemption.cc): on
    // success it has nominated and requeued the members itself.
    std::string preemption_note;
    if (PreemptForGroup(key, *group, members, need, domains, fw, cycle, start_micros, &preemption_note)) return;
    std::string where = most_placed.domain.empty() ? "" : gantry::StrCat(" (best domain ", most_placed.domain, ")");
    fail_all(gantry::StrCat("pod group ", key, ": ", most_placed.placed + already, " of minCount ", min_count,
                            " members fit", where, "; ", most_placed.first_failure,
                            preemption_note.empty() ? "" : " ", preemption_note),
             most_placed.domain, most_placed.placed, min_count);
    return;
  }

  // Commit the winning placement: assume, reserve and bind the placed
  // members; members beyond quorum that did not fit wait in the queue.
  std::vector<size_t> committed;
  bool broken = false;
  for (size_t i = 0; i < members.size(); ++i) {
    MemberTrial& mt = best->members[i];
    if (mt.node.empty()) continue;
    const framework::PodInfo& pod = *members[i].pod_info;
    if (!state_.Assume(members[i].pod_info, mt.node).ok()) {
      broken = true;
      break;
    }
    Status rs = fw->RunReservePlugins(*mt.state, pod, mt.node);
    if (rs.IsSuccess()) rs = fw->RunPermitPlugins(*mt.state, pod, mt.node);
    if (!rs.IsSuccess()) {
      fw->RunUnreservePlugins(*mt.state, pod, mt.node);
      (void)state_.Forget(pod.uid());
      mt.failure = rs.Message();
      mt.node.clear();
      continue;
    }
    committed.push_back(i);
  }
  if (broken || static_cast<int32_t>(committed.size()) < need) {
    for (size_t i : committed) {
      fw->RunUnreservePlugins(*best->members[i].state, *members[i].pod_info, best->members[i].node);
      (void)state_.Forget(members[i].pod_info->uid());
    }
    fail_all(gantry::StrCat("pod group ", key, ": the placement in ", best->domain.empty() ? "the cluster" : best->domain,
                            " could not be reserved; retrying"),
             best->domain, 0, min_count);
    return;
  }

  const int64_t duration = NowMicros() - start_micros;
  const int32_t placed = static_cast<int32_t>(committed.size());
  for (size_t i = 0; i < members.size(); ++i) {
    MemberTrial& mt = best->members[i];
    if (mt.node.empty()) {
      FailGroupMember(fw, std::move(members[i]),
                      gantry::StrCat("pod group ", key, " is scheduled (", placed + already,
                                     " members); this member did not fit: ", mt.failure),
                      duration, cycle);
      continue;
    }
    StartBinding(BindTask{std::move(members[i]), fw, std::move(mt.state), mt.node, duration});
  }
  NotifyGroup(GroupOutcome{key, true, placed, min_count, best->domain, "", duration});
}

}  // namespace gantry::scheduler
