#include "src/scheduler/scheduler.h"

#include <chrono>

#include "gantry/util/strings.h"
#include "src/scheduler/group_preemption.h"

namespace gantry::scheduler {
namespace {

using framework::ClusterEvent;
using framework::Code;
using framework::EventResource;
using framework::Status;

constexpr size_t kEventNoteLimit = 1024;

std::string TruncateNote(const std::string& s) {
  if (s.size() <= kEventNoteLimit) return s;
  return s.substr(0, kEventNoteLimit - 4) + " ...";
}

bool SameTaints(const std::vector<api::Taint>& a, const std::vector<api::Taint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].value != b[i].value || a[i].effect != b[i].effect)
      return false;
  }
  return true;
}

bool SameConditions(const std::vector<api::NodeCondition>& a,
                    const std::vector<api::NodeCondition>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type != b[i].type || a[i].status != b[i].status) return false;
  }
  return true;
}

}  // namespace

uint32_t NodeUpdateActions(const api::Node& old_node, const api::Node& new_node) {
  uint32_t actions = 0;
  if (!(old_node.allocatable == new_node.allocatable)) actions |= framework::kUpdateNodeAllocatable;
  if (old_node.meta.labels != new_node.meta.labels) actions |= framework::kUpdateNodeLabel;
  if (!SameTaints(old_node.taints, new_node.taints) ||
      old_node.unschedulable != new_node.unschedulable) {
    actions |= framework::kUpdateNodeTaint;
  }
  if (!SameConditions(old_node.conditions, new_node.conditions))
    actions |= framework::kUpdateNodeCondition;
  if (old_node.meta.annotations != new_node.meta.annotations)
    actions |= framework::kUpdateNodeAnnotation;
  return actions;
}

Scheduler::Scheduler(state::ClusterState& state, framework::ClusterWriter& writer,
                     const Clock& clock, SchedulerOptions options)
    : state_(state), writer_(writer), clock_(clock), options_(options) {
  algorithm_ = std::make_unique<framework::PodScheduler>(options_.percentage_of_nodes_to_score,
                                                         options_.seed);
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(bind_mu_);
    stopping_ = true;
  }
  bind_cv_.notify_all();
  for (std::thread& t : bind_threads_) t.join();
  if (queue_) queue_->Close();
}

void Scheduler::AddProfile(std::unique_ptr<framework::Framework> fw) {
  fw->SetNominator([this](std::string_view node) {
    return queue_ ? queue_->NominatedPodsForNode(node) : std::vector<framework::PodInfoPtr>{};
  });
  fw->SetDisruptionUnits([this](const api::Pod& pod) {
    framework::DisruptionUnit unit;
    unit.group = state::GroupKeyOf(pod);
    if (unit.group.empty()) return unit;
    if (std::optional<state::GroupInfo> g = state_.FindGroup(unit.group)) {
      unit.whole_group = g->disruption_all;
      unit.group_priority = state_.GroupPriority(*g);
      // In a CompositePodGroup subtree with disruptionMode all, the subtree is the unit.
      if (!g->parent.empty()) {
        if (std::optional<TreeDisruptionUnit> tree = TreeUnitOf(state_, *g)) {
          unit.group = TreeUnitKey(tree->root);
          unit.whole_group = true;
          int32_t prio = state_.ResolvePriority(pod);  // the leaf group's priority when it has one
          if (tree->priority) prio = std::max(prio, *tree->priority);
          unit.group_priority = prio;
        }
      }
    }
    return unit;
  });
  by_name_[std::string(fw->SchedulerName())] = fw.get();
  profiles_.push_back(std::move(fw));
}

void Scheduler::Start(int64_t pod_initial_backoff_micros, int64_t pod_max_backoff_micros) {
  queue::QueueOptions qo;
  qo.pod_initial_backoff_micros = pod_initial_backoff_micros;
  qo.pod_max_backoff_micros = pod_max_backoff_micros;
  if (!profiles_.empty()) qo.less = queue::LessFromPlugin(profiles_.front()->queue_sort());
  qo.group_of = state::GroupKeyOf;  // group cycles gather members with PopGroups
  for (const auto& fw : profiles_) {
    queue::ProfileQueueConfig pc;
    pc.pre_enqueue = fw->pre_enqueue_plugins();
    pc.events = fw->EventsToRegister();
    qo.profiles[std::string(fw->SchedulerName())] = std::move(pc);
  }
  queue_ = std::make_unique<queue::SchedulingQueue>(clock_, std::move(qo));
}

bool Scheduler::Serves(std::string_view scheduler_name) const {
  return by_name_.contains(std::string(scheduler_name));
}

framework::Framework* Scheduler::Profile(std::string_view scheduler_name) const {
  auto it = by_name_.find(std::string(scheduler_name));
  return it == by_name_.end() ? nullptr : it->second;
}

framework::NodeResultCache* Scheduler::NodeResultsForCycle() {
  const bool stale = node_results_stale_.exchange(false, std::memory_order_acq_rel);
  if (stale || !reuse_node_results_ || node_results_version_ != snapshot_.nodes_version()) {
    node_results_.Clear();
    node_results_version_ = snapshot_.nodes_version();
  }
  return reuse_node_results_ ? &node_results_ : nullptr;
}

// ---- Event handlers ---------------------------------------------------------

void Scheduler::OnPodAdd(std::shared_ptr<const api::Pod> pod) {
  if (pod->IsTerminal()) return;
  if (pod->IsBound()) {
    state_.AddOrUpdateBoundPod(pod);
    framework::PodInfoPtr info = state_.MakePodInfo(pod);
    queue_->Delete(pod->meta.uid);
    queue_->AssignedPodAdded(info);
    return;
  }
  if (!Serves(pod->scheduler_name.view())) {
    // Another scheduler's pod: never touched, but remembered if it claims
    // membership of a PodGroup, so that group can be rejected as mixed.
    if (std::string group = state::GroupKeyOf(*pod); !group.empty()) {
      std::lock_guard<std::mutex> lock(foreign_mu_);
      if (!foreign_members_.contains(pod->meta.uid)) {
        ++foreign_group_schedulers_[group][pod->scheduler_name.str()];
        foreign_members_[pod->meta.uid] = ForeignMember{group, pod->scheduler_name.str()};
      }
    }
    return;
  }
  queue_->Add(state_.MakePodInfo(std::move(pod)));
}

void Scheduler::OnPodUpdate(std::shared_ptr<const api::Pod> old_pod,
                            std::shared_ptr<const api::Pod> pod) {
  if (pod->IsTerminal()) {
    OnPodDelete(pod);
    return;
  }
  if (pod->IsBound()) {
    ForgetForeignMember(pod->meta.uid);
    state_.AddOrUpdateBoundPod(pod);
    framework::PodInfoPtr info = state_.MakePodInfo(pod);
    if (old_pod && old_pod->IsBound()) {
      queue_->AssignedPodUpdated(state_.MakePodInfo(old_pod), info);
    } else {
      queue_->Delete(pod->meta.uid);
      queue_->AssignedPodAdded(info);
    }
    return;
  }
  if (!Serves(pod->scheduler_name.view())) {
    OnPodAdd(std::move(pod));  // counts a foreign group member once (by UID)
    return;
  }
  queue_->Update(state_.MakePodInfo(std::move(pod)));
}

void Scheduler::ForgetForeignMember(std::string_view uid) {
  std::lock_guard<std::mutex> lock(foreign_mu_);
  auto m = foreign_members_.find(std::string(uid));
  if (m == foreign_members_.end()) return;
  auto g = foreign_group_schedulers_.find(m->second.group);
  if (g != foreign_group_schedulers_.end()) {
    auto n = g->second.find(m->second.scheduler);
    if (n != g->second.end() && --n->second <= 0) g->second.erase(n);
    if (g->second.empty()) foreign_group_schedulers_.erase(g);
  }
  foreign_members_.erase(m);
}

void Scheduler::OnPodDelete(std::shared_ptr<const api::Pod> pod) {
  ForgetForeignMember(pod->meta.uid);
  const bool was_in_cache = state_.NodeOf(pod->meta.uid).has_value();
  state_.RemovePod(pod->meta.uid);
  queue_->Delete(pod->meta.uid);
  queue_->DeleteNominatedPodIfExists(pod->meta.uid);
  if (was_in_cache || pod->IsBound()) queue_->AssignedPodDeleted(state_.MakePodInfo(pod));
  if (Serves(pod->scheduler_name.view())) {
    std::lock_guard<std::mutex> lock(observer_mu_);
    for (AttemptObserver* o : observers_) o->OnPodDeleted(*pod);
  }
}

void Scheduler::OnNodeAdd(std::shared_ptr<const api::Node> node) {
  state_.AddOrUpdateNode(node);
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kNode, framework::kAdd, "NodeAdd"}, nullptr, node);
}

void Scheduler::OnNodeUpdate(std::shared_ptr<const api::Node> old_node,
                             std::shared_ptr<const api::Node> node) {
  uint32_t actions = old_node ? NodeUpdateActions(*old_node, *node) : framework::kUpdate;
  state_.AddOrUpdateNode(node);
  if (actions == 0) return;
  queue_->MoveAllToActiveOrBackoffQueue(ClusterEvent{EventResource::kNode, actions, "NodeUpdate"},
                                        old_node, node);
}

void Scheduler::OnNodeDelete(std::shared_ptr<const api::Node> node) {
  state_.RemoveNode(node->meta.name);
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kNode, framework::kDelete, "NodeDelete"}, node, nullptr);
}

void Scheduler::OnNamespace(api::Symbol name, api::Labels labels) {
  state_.SetNamespace(name, std::move(labels));
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kNamespace, framework::kAdd | framework::kUpdateOther,
                   "NamespaceChange"},
      nullptr, nullptr);
}

void Scheduler::OnNamespaceDelete(api::Symbol name) { state_.RemoveNamespace(name); }

void Scheduler::OnPriorityClass(api::Symbol name, state::PriorityClassInfo info) {
  state_.SetPriorityClass(name, info);
}

void Scheduler::OnPriorityClassDelete(api::Symbol name) { state_.RemovePriorityClass(name); }

void Scheduler::OnPodDisruptionBudget(std::shared_ptr<const api::PodDisruptionBudget> pdb) {
  state_.SetPodDisruptionBudget(std::move(pdb));
}

void Scheduler::OnPodDisruptionBudgetDelete(std::string_view key) {
  state_.RemovePodDisruptionBudget(key);
}

void Scheduler::OnPodGroup(state::GroupInfo group) {
  if (group.native && !group.composite) {
    // PodGroup-level DRA claims (DynamicResources reads them from DraState).
    const size_t slash = group.key.find('/');
    dra_->SetPodGroupClaims(state::PodGroupClaims{
        group.key.substr(0, slash), group.key.substr(slash + 1), group.uid, group.resource_claims});
  }
  state_.SetGroup(std::move(group));
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kPodGroup, framework::kAdd | framework::kUpdateOther,
                   "PodGroupChange"},
      nullptr, nullptr);
}

void Scheduler::OnPodGroupDelete(std::string_view key) {
  const size_t slash = key.find('/');
  if (slash != std::string_view::npos)
    dra_->RemovePodGroupClaims(key.substr(0, slash), key.substr(slash + 1));
  state_.RemoveGroup(key);
  group_status_.Forget(key);
  writer_.ForgetPodGroup(key);
}

void Scheduler::OnCompositePodGroup(state::GroupInfo group) {
  state_.SetCompositeGroup(std::move(group));
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kPodGroup, framework::kAdd | framework::kUpdateOther,
                   "CompositePodGroupChange"},
      nullptr, nullptr);
}

void Scheduler::OnCompositePodGroupDelete(std::string_view key) {
  state_.RemoveCompositeGroup(key);
  group_status_.Forget(key);
  writer_.ForgetPodGroup(key);
}

// ---- The loop -----------------------------------------------------------------

void Scheduler::Notify(const AttemptOutcome& outcome) {
  std::lock_guard<std::mutex> lock(observer_mu_);
  for (AttemptObserver* o : observers_) o->OnAttempt(outcome);
}

void Scheduler::NotifyGroup(const GroupOutcome& outcome) {
  std::lock_guard<std::mutex> lock(observer_mu_);
  for (AttemptObserver* o : observers_) o->OnGroup(outcome);
}

bool Scheduler::ScheduleOne(bool blocking) {
  std::optional<framework::QueuedPodInfo> popped = blocking ? queue_->Pop() : queue_->TryPop();
  if (!popped) return false;
  framework::QueuedPodInfo qpi = std::move(*popped);
  const int64_t cycle = queue_->SchedulingCycle();
  const int64_t start = MonotonicMicros();
  const framework::PodInfo& pod = *qpi.pod_info;
  const std::string uid = pod.uid();

  framework::Framework* fw = Profile(pod.p().scheduler_name.view());
  if (fw == nullptr || state_.NodeOf(uid).has_value()) {
    // Not ours any more, or already assumed/bound: nothing to do.
    queue_->Done(uid);
    return true;
  }

  if (!pod.p().pvc_names.empty() || !pod.p().ephemeral_volume_names.empty()) {
    // Without the volume plugins Gantry cannot tell whether the claims are
    // bound or where their volumes live, so such a pod (a generic ephemeral
    // volume is a claim too) is never bound blindly.
    std::string claims;
    for (const std::string& c : pod.p().VolumeClaimNames())
      claims += (claims.empty() ? "" : ", ") + c;
    framework::FitError fit;
    fit.num_all_nodes = static_cast<int>(state_.NodeCount());
    fit.diagnosis.pre_filter_msg =
        gantry::StrCat("pod has PersistentVolumeClaim volumes (", claims,
                       ") and volume binding is not supported by this build of Gantry "
                       "(VolumeBinding is not built in)");
    fit.diagnosis.unschedulable_plugins.insert("VolumeBinding");
    HandleFailure(fw, std::move(qpi),
                  Status(Code::kUnschedulableAndUnresolvable, fit.diagnosis.pre_filter_msg)
                      .WithPlugin("VolumeBinding"),
                  &fit, "", MonotonicMicros() - start, cycle);
    return true;
  }
  if (std::string group_key = state::GroupKeyOf(pod.p()); !group_key.empty()) {
    RunGroupCycle(std::move(qpi), group_key, state_.FindGroup(group_key), fw, cycle, start);
    return true;
  }

  state_.UpdateSnapshot(&snapshot_);
  fw->SetSnapshot(&snapshot_);
  auto cycle_state = std::make_unique<framework::CycleState>();
  framework::ScheduleResult result;
  framework::FitError fit_error;
  Status st;
  {
    // Room nominated to preemptors of >= priority stays theirs (group_preemption.h).
    NominatedRoom room(snapshot_, *queue_, pod.priority,
                       [&](const framework::PodInfo& p) { return p.uid() == uid; });
    // A pod nominated by an earlier preemption tries that node first: it is
    // likely the only one that fits (upstream evaluateNominatedNode).
    bool on_nominated = false;
    if (std::optional<std::string> nn = queue_->NominatedNodeFor(uid)) {
      if (framework::NodeInfo* node = snapshot_.GetMutable(*nn)) {
        const std::vector<framework::NodeInfo*> only{node};
        auto nominated_state = std::make_unique<framework::CycleState>();
        framework::FitError ignored;
        if (algorithm_->Schedule(*fw, *nominated_state, pod, snapshot_, &result, &ignored, &only)
                .IsSuccess()) {
          cycle_state = std::move(nominated_state);
          on_nominated = true;
        }
      }
    }
    if (!on_nominated)
      st = algorithm_->Schedule(*fw, *cycle_state, pod, snapshot_, &result, &fit_error, nullptr,
                                NodeResultsForCycle());
  }
  if (!st.IsSuccess()) {
    std::string nominated;
    if (st.IsRejected() && fw->HasPostFilterPlugins()) {
      framework::PostFilterResult pf =
          fw->RunPostFilterPlugins(*cycle_state, pod, fit_error.diagnosis.node_to_status);
      fit_error.diagnosis.post_filter_msg = pf.message;
      if (pf.nominated_node_name) nominated = *pf.nominated_node_name;
    }
    HandleFailure(fw, std::move(qpi), st, st.IsRejected() ? &fit_error : nullptr, nominated,
                  MonotonicMicros() - start, cycle);
    return true;
  }

  const std::string& host = result.suggested_host;
  if (absl::Status as = state_.Assume(qpi.pod_info, host); !as.ok()) {
    HandleFailure(fw, std::move(qpi), Status::FromAbsl(as), nullptr, "", MonotonicMicros() - start,
                  cycle);
    return true;
  }
  Status rs = fw->RunReservePlugins(*cycle_state, pod, host);
  if (rs.IsSuccess()) rs = fw->RunPermitPlugins(*cycle_state, pod, host);
  if (!rs.IsSuccess()) {
    fw->RunUnreservePlugins(*cycle_state, pod, host);
    (void)state_.Forget(uid);
    HandleFailure(fw, std::move(qpi), rs, nullptr, "", MonotonicMicros() - start, cycle);
    return true;
  }
  StartBinding(
      BindTask{std::move(qpi), fw, std::move(cycle_state), host, MonotonicMicros() - start});
  return true;
}

void Scheduler::StartBinding(BindTask task) {
  if (options_.binding_workers <= 0) {
    RunBindingCycle(std::move(task));
    return;
  }
  EnqueueBindJob(BindJob(std::move(task)), 1);
}

void Scheduler::StartBinding(GangBindTask task) {
  if (options_.binding_workers <= 0) {
    RunGangBindingCycle(std::move(task));
    return;
  }
  const int64_t pods = static_cast<int64_t>(task.members.size());
  EnqueueBindJob(BindJob(std::move(task)), pods);
}

void Scheduler::EnqueueBindJob(BindJob job, int64_t pods) {
  {
    std::lock_guard<std::mutex> lock(bind_mu_);
    bind_tasks_.push_back(std::move(job));
    ++binds_in_flight_;
    binds_started_ += pods;
    bind_peak_ = std::max(bind_peak_, binds_in_flight_);
    // Every waiting thread will take one of the queued tasks; start another
    // thread for a task none of them can take (up to the limit).
    if (static_cast<int>(bind_tasks_.size()) > bind_idle_ &&
        static_cast<int>(bind_threads_.size()) < options_.binding_workers) {
      bind_threads_.emplace_back([this] { BindingWorker(); });
    }
  }
  bind_cv_.notify_one();
}

namespace {

// Bind failures worth retrying in place: the API server did not answer, was
// overloaded, or raced us; a refusal (admission, validation, a pod bound
// elsewhere or gone) is not retried here (the pod is requeued instead).
bool RetriableBindFailure(const Status& st) {
  switch (st.infra_code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

constexpr int kBindAttempts = 3;
constexpr int64_t kBindRetryMillis = 200;

}  // namespace

Status Scheduler::BindWithRetries(BindTask& task) {
  const framework::PodInfo& pod = *task.qpi.pod_info;
  Status st;
  for (int attempt = 1; attempt <= kBindAttempts; ++attempt) {
    st = task.fw->RunBindPlugins(*task.state, pod, task.node);
    if (st.IsSuccess() || !RetriableBindFailure(st) || attempt == kBindAttempts) break;
    if (options_.binding_workers > 0) {
      // Live only: offline, time is virtual and a failure is final.
      std::this_thread::sleep_for(std::chrono::milliseconds(kBindRetryMillis << (attempt - 1)));
    }
  }
  return st;
}

void Scheduler::AbandonBinding(BindTask task, const Status& st) {
  const std::string uid = task.qpi.pod_info->uid();
  task.fw->RunUnreservePlugins(*task.state, *task.qpi.pod_info, task.node);
  (void)state_.Forget(uid);
  HandleFailure(task.fw, std::move(task.qpi), st, nullptr, "", task.cycle_micros,
                queue_->SchedulingCycle());
}

void Scheduler::FinishBound(BindTask& task) {
  const framework::PodInfo& pod = *task.qpi.pod_info;
  const std::string uid = pod.uid();
  state_.FinishBinding(uid);
  task.fw->RunPostBindPlugins(*task.state, pod, task.node);
  writer_.RecordEvent(framework::EventRecord{
      "Pod", std::string(pod.p().meta.namespace_.view()), pod.p().meta.name, uid, "Normal",
      "Scheduled", "Binding",
      gantry::StrCat("Successfully assigned ", pod.p().meta.namespace_.view(), "/",
                     pod.p().meta.name, " to ", task.node),
      std::string(task.fw->SchedulerName())});
  queue_->Done(uid);
  AttemptOutcome outcome{task.qpi.pod_info,
                         std::string(task.fw->SchedulerName()),
                         "scheduled",
                         task.node,
                         "",
                         task.cycle_micros,
                         ""};
  outcome.attempts = task.qpi.attempts;
  if (task.qpi.initial_attempt_micros > 0) {
    outcome.since_first_attempt_micros =
        std::max<int64_t>(0, clock_.NowMicros() - task.qpi.initial_attempt_micros);
  }
  Notify(outcome);
}

void Scheduler::RunBindingCycle(BindTask task) {
  const framework::PodInfo& pod = *task.qpi.pod_info;
  Status st = task.fw->RunPreBindPlugins(*task.state, pod, task.node);
  if (st.IsSuccess()) st = BindWithRetries(task);
  if (!st.IsSuccess()) {
    AbandonBinding(std::move(task), st);
    return;
  }
  FinishBound(task);
}

void Scheduler::RunGangBindingCycle(GangBindTask task) {
  const size_t n = task.members.size();
  // Runs fn(i) for every member, on up to binding_workers threads live (the
  // members' API writes overlap), in member order inline offline.
  auto for_each_member = [&](const std::function<void(size_t)>& fn) {
    const size_t threads =
        options_.binding_workers <= 1
            ? 1
            : std::min<size_t>(n, static_cast<size_t>(std::min(options_.binding_workers, 16)));
    if (threads <= 1) {
      for (size_t i = 0; i < n; ++i) fn(i);
      return;
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    auto work = [&] {
      for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
    };
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  };

  // 1. Every member's PreBind (claims, volumes) before any Bind.
  std::vector<Status> pre(n);
  for_each_member([&](size_t i) {
    BindTask& m = task.members[i];
    pre[i] = m.fw->RunPreBindPlugins(*m.state, *m.qpi.pod_info, m.node);
  });
  size_t failed = n;
  for (size_t i = 0; i < n && failed == n; ++i) {
    if (!pre[i].IsSuccess()) failed = i;
  }
  if (failed < n) {
    // No member is bound: undo them all, each with why.
    const api::Pod& culprit = task.members[failed].qpi.pod_info->p();
    const std::string why = gantry::StrCat(
        "PreBind of pod group member ", culprit.meta.namespace_.view(), "/", culprit.meta.name,
        " failed: ", pre[failed].Message(), "; no member was bound");
    for (size_t i = 0; i < n; ++i) {
      AbandonBinding(std::move(task.members[i]), i == failed ? pre[i] : Status::Error(why));
    }
    for (const GangLeaf& leaf : task.leaves) {
      group_status_.Failed(leaf.info, "SchedulerError", why);
    }
    return;
  }

  // 2. Bind every member, retrying retriable failures.
  std::vector<Status> bound(n);
  for_each_member([&](size_t i) { bound[i] = BindWithRetries(task.members[i]); });
  std::vector<int> bound_in_leaf(task.leaves.size(), 0);
  std::vector<int> failed_in_leaf(task.leaves.size(), 0);
  std::vector<std::string> failure_in_leaf(task.leaves.size());
  for (size_t i = 0; i < n; ++i) {
    const size_t leaf = task.leaf_of[i];
    if (bound[i].IsSuccess()) {
      ++bound_in_leaf[leaf];
      FinishBound(task.members[i]);
    } else {
      ++failed_in_leaf[leaf];
      if (failure_in_leaf[leaf].empty()) failure_in_leaf[leaf] = bound[i].Message();
      AbandonBinding(std::move(task.members[i]), bound[i]);
    }
  }

  // 3. Quorum after binding, per leaf.
  const std::string scheduler_name =
      n > 0 ? std::string(task.members[0].fw->SchedulerName()) : std::string();
  for (size_t l = 0; l < task.leaves.size(); ++l) {
    const GangLeaf& leaf = task.leaves[l];
    const int running = leaf.already + bound_in_leaf[l];
    const bool below = running > 0 && running < leaf.info.min_count && failed_in_leaf[l] > 0;
    bool was_below = false;
    {
      std::lock_guard<std::mutex> lock(below_quorum_mu_);
      was_below = below_quorum_.contains(leaf.info.key);
      if (below) {
        below_quorum_[leaf.info.key] = leaf.info;
      } else if (was_below && running >= leaf.info.min_count) {
        below_quorum_.erase(leaf.info.key);
      }
    }
    const framework::PodGroupRef ref = PodGroupRefOf(leaf.info);
    if (below) {
      const std::string message = gantry::StrCat(
          running, " of minCount ", leaf.info.min_count, " members are bound; ", failed_in_leaf[l],
          " failed to bind (", failure_in_leaf[l], ") and are retried");
      (void)writer_.UpdatePodGroupCondition(
          ref, framework::PodGroupCondition{std::string(framework::kPodGroupBoundBelowQuorum),
                                            "True", "BindingFailed", message});
      writer_.RecordEvent(framework::EventRecord{ref.kind, ref.namespace_, ref.name, ref.uid,
                                                 "Warning", "BoundBelowQuorum", "Binding",
                                                 TruncateNote(message), scheduler_name});
    } else if (was_below && running >= leaf.info.min_count) {
      (void)writer_.UpdatePodGroupCondition(
          ref,
          framework::PodGroupCondition{
              std::string(framework::kPodGroupBoundBelowQuorum), "False", "QuorumReached",
              gantry::StrCat(running, " of minCount ", leaf.info.min_count, " members are bound")});
    }
  }
}

void Scheduler::HandleFailure(framework::Framework* fw, framework::QueuedPodInfo qpi,
                              const Status& status, const framework::FitError* fit_error,
                              const std::string& nominated_node, int64_t duration_micros,
                              int64_t cycle) {
  const framework::PodInfo& pod = *qpi.pod_info;
  const bool rejected = status.IsRejected();
  std::string message = fit_error != nullptr ? fit_error->Message() : status.Message();
  if (message.empty()) message = std::string(framework::CodeName(status.code()));
  qpi.unschedulable_plugins.clear();
  qpi.pending_plugins.clear();
  if (fit_error != nullptr) {
    for (const std::string& p : fit_error->diagnosis.unschedulable_plugins) {
      if (!p.empty()) qpi.unschedulable_plugins.insert(p);
    }
    for (const std::string& p : fit_error->diagnosis.pending_plugins) qpi.pending_plugins.insert(p);
  } else if (rejected && !status.plugin().empty()) {
    qpi.unschedulable_plugins.insert(std::string(status.plugin()));
  }

  writer_.RecordEvent(framework::EventRecord{
      "Pod", std::string(pod.p().meta.namespace_.view()), pod.p().meta.name, pod.uid(), "Warning",
      "FailedScheduling", "Scheduling", TruncateNote(message), std::string(fw->SchedulerName())});
  framework::PodScheduledCondition cond{"False", rejected ? "Unschedulable" : "SchedulerError",
                                        message};
  absl::Status ws = writer_.UpdatePodScheduledCondition(
      pod.p(), cond, nominated_node.empty() ? nullptr : &nominated_node);
  (void)ws;  // the writer logs and counts its own failures
  if (!nominated_node.empty()) queue_->AddNominatedPod(qpi.pod_info, nominated_node);

  AttemptOutcome outcome{qpi.pod_info,
                         std::string(fw->SchedulerName()),
                         rejected ? "unschedulable" : "error",
                         "",
                         message,
                         duration_micros,
                         nominated_node};
  outcome.fit_error = fit_error;
  const std::string uid = pod.uid();
  (void)queue_->AddUnschedulableIfNotPresent(std::move(qpi), cycle);
  queue_->Done(uid);
  Notify(outcome);
}

void Scheduler::BindingWorker() {
  while (true) {
    BindJob job;
    {
      std::unique_lock<std::mutex> lock(bind_mu_);
      ++bind_idle_;
      bind_cv_.wait(lock, [&] { return stopping_ || !bind_tasks_.empty(); });
      --bind_idle_;
      if (bind_tasks_.empty()) return;
      job = std::move(bind_tasks_.front());
      bind_tasks_.pop_front();
    }
    if (BindTask* single = std::get_if<BindTask>(&job)) {
      RunBindingCycle(std::move(*single));
    } else {
      RunGangBindingCycle(std::move(std::get<GangBindTask>(job)));
    }
    {
      std::lock_guard<std::mutex> lock(bind_mu_);
      --binds_in_flight_;
    }
    bind_idle_cv_.notify_all();
  }
}

void Scheduler::WaitForBindings() {
  std::unique_lock<std::mutex> lock(bind_mu_);
  bind_idle_cv_.wait(lock, [&] { return binds_in_flight_ == 0; });
}

size_t Scheduler::ForeignGroupMemberCount() {
  std::lock_guard<std::mutex> lock(foreign_mu_);
  return foreign_members_.size();
}

BindingPoolStats Scheduler::BindingStats() {
  std::lock_guard<std::mutex> lock(bind_mu_);
  return BindingPoolStats{static_cast<int>(bind_threads_.size()), binds_in_flight_, bind_peak_,
                          binds_started_};
}

}  // namespace gantry::scheduler
