#include "src/scheduler/binder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "gantry/util/strings.h"

namespace gantry::scheduler {
namespace {

using framework::Status;

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
// The most threads one gang's binding fans its members' API writes out to.
constexpr int kMaxGangBindThreads = 16;

}  // namespace

void Binder::Bind(BindTask task) {
  pool_.Run([this, task = std::move(task)]() mutable { RunBindingCycle(std::move(task)); }, 1);
}

void Binder::BindGang(GangBindTask task) {
  const int64_t pods = static_cast<int64_t>(task.members.size());
  pool_.Run([this, task = std::move(task)]() mutable { RunGangBindingCycle(std::move(task)); },
            pods);
}

Status Binder::BindWithRetries(BindTask& task) {
  const framework::PodInfo& pod = *task.qpi.pod_info;
  Status st;
  for (int attempt = 1; attempt <= kBindAttempts; ++attempt) {
    st = task.fw->RunBindPlugins(*task.state, pod, task.node);
    if (st.IsSuccess() || !RetriableBindFailure(st) || attempt == kBindAttempts) break;
    if (pool_.threaded()) {
      // Live only: offline, time is virtual and a failure is final.
      std::this_thread::sleep_for(std::chrono::milliseconds(kBindRetryMillis << (attempt - 1)));
    }
  }
  return st;
}

void Binder::Abandon(BindTask task, const Status& st) {
  const std::string uid = task.qpi.pod_info->uid();
  task.fw->RunUnreservePlugins(*task.state, *task.qpi.pod_info, task.node);
  (void)state_.Forget(uid);
  failure_.Fail(task.fw, std::move(task.qpi), st, nullptr, "", task.cycle_micros,
                queue_.SchedulingCycle());
}

void Binder::FinishBound(BindTask& task) {
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
  queue_.Done(uid);
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
  observers_.Attempt(outcome);
}

void Binder::RunBindingCycle(BindTask task) {
  const framework::PodInfo& pod = *task.qpi.pod_info;
  Status st = task.fw->RunPreBindPlugins(*task.state, pod, task.node);
  if (st.IsSuccess()) st = BindWithRetries(task);
  if (!st.IsSuccess()) {
    Abandon(std::move(task), st);
    return;
  }
  FinishBound(task);
}

void Binder::RunGangBindingCycle(GangBindTask task) {
  const size_t n = task.members.size();
  // Runs fn(i) for every member, on up to the pool's size of threads live
  // (the members' API writes overlap), in member order inline offline.
  auto for_each_member = [&](const std::function<void(size_t)>& fn) {
    const size_t threads =
        pool_.max_threads() <= 1
            ? 1
            : std::min<size_t>(
                  n, static_cast<size_t>(std::min(pool_.max_threads(), kMaxGangBindThreads)));
    if (threads <= 1) {
      for (size_t i = 0; i < n; ++i) fn(i);
      return;
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    workers.reserve(threads - 1);
    auto work = [&] {
      for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
    };
    for (size_t t = 1; t < threads; ++t) workers.emplace_back(work);
    work();
    for (std::thread& t : workers) t.join();
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
      Abandon(std::move(task.members[i]), i == failed ? pre[i] : Status::Error(why));
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
  const std::string scheduler_name =
      n > 0 ? std::string(task.members[0].fw->SchedulerName()) : std::string();
  for (size_t i = 0; i < n; ++i) {
    const size_t leaf = task.leaf_of[i];
    if (bound[i].IsSuccess()) {
      ++bound_in_leaf[leaf];
      FinishBound(task.members[i]);
    } else {
      ++failed_in_leaf[leaf];
      if (failure_in_leaf[leaf].empty()) failure_in_leaf[leaf] = bound[i].Message();
      Abandon(std::move(task.members[i]), bound[i]);
    }
  }

  // 3. Quorum after binding, per leaf.
  for (size_t l = 0; l < task.leaves.size(); ++l) {
    ReportQuorum(task.leaves[l], bound_in_leaf[l], failed_in_leaf[l], failure_in_leaf[l],
                 scheduler_name);
  }
}

void Binder::ReportQuorum(const GangLeaf& leaf, int bound, int failed, const std::string& failure,
                          const std::string& scheduler_name) {
  const int running = leaf.already + bound;
  const bool below = running > 0 && running < leaf.info.min_count && failed > 0;
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
    const std::string message =
        gantry::StrCat(running, " of minCount ", leaf.info.min_count, " members are bound; ",
                       failed, " failed to bind (", failure, ") and are retried");
    (void)writer_.UpdatePodGroupCondition(
        ref, framework::PodGroupCondition{std::string(framework::kPodGroupBoundBelowQuorum), "True",
                                          "BindingFailed", message});
    writer_.RecordEvent(framework::EventRecord{ref.kind, ref.namespace_, ref.name, ref.uid,
                                               "Warning", "BoundBelowQuorum", "Binding",
                                               TruncateEventNote(message), scheduler_name});
  } else if (was_below && running >= leaf.info.min_count) {
    (void)writer_.UpdatePodGroupCondition(
        ref,
        framework::PodGroupCondition{
            std::string(framework::kPodGroupBoundBelowQuorum), "False", "QuorumReached",
            gantry::StrCat(running, " of minCount ", leaf.info.min_count, " members are bound")});
  }
}

}  // namespace gantry::scheduler
