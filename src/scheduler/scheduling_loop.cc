#include "src/scheduler/scheduling_loop.h"

#include <memory>
#include <optional>
#include <string>

#include "gantry/util/strings.h"
#include "src/scheduler/group_preemption.h"

namespace gantry::scheduler {

using framework::Code;
using framework::Status;

bool SchedulingLoop::ScheduleOne(bool blocking) {
  std::optional<framework::QueuedPodInfo> popped = blocking ? queue_.Pop() : queue_.TryPop();
  if (!popped) return false;
  framework::QueuedPodInfo qpi = std::move(*popped);
  const int64_t cycle = queue_.SchedulingCycle();
  const int64_t start = MonotonicMicros();
  const framework::PodInfo& pod = *qpi.pod_info;
  const std::string uid = pod.uid();

  framework::Framework* fw = profiles_.Get(pod.p().scheduler_name.view());
  if (fw == nullptr || state_.NodeOf(uid).has_value()) {
    // Not ours any more, or already assumed/bound: nothing to do.
    queue_.Done(uid);
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
    failure_.Fail(fw, std::move(qpi),
                  Status(Code::kUnschedulableAndUnresolvable, fit.diagnosis.pre_filter_msg)
                      .WithPlugin("VolumeBinding"),
                  &fit, "", MonotonicMicros() - start, cycle);
    return true;
  }
  if (std::string group_key = state::GroupKeyOf(pod.p()); !group_key.empty()) {
    group_cycle_.Run(std::move(qpi), group_key, state_.FindGroup(group_key), fw, cycle, start);
    return true;
  }
  SchedulePod(std::move(qpi), fw, cycle, start);
  return true;
}

void SchedulingLoop::SchedulePod(framework::QueuedPodInfo qpi, framework::Framework* fw,
                                 int64_t cycle, int64_t start) {
  const framework::PodInfo& pod = *qpi.pod_info;
  const std::string uid = pod.uid();
  cycles_.Refresh(*fw);
  state::Snapshot& snapshot = cycles_.snapshot();
  framework::PodScheduler& algorithm = cycles_.algorithm();
  auto cycle_state = std::make_unique<framework::CycleState>();
  framework::ScheduleResult result;
  framework::FitError fit_error;
  Status st;
  {
    // Room nominated to preemptors of >= priority stays theirs (group_preemption.h).
    NominatedRoom room(snapshot, queue_, pod.priority,
                       [&](const framework::PodInfo& p) { return p.uid() == uid; });
    // A pod nominated by an earlier preemption tries that node first: it is
    // likely the only one that fits (upstream evaluateNominatedNode).
    bool on_nominated = false;
    if (std::optional<std::string> nn = queue_.NominatedNodeFor(uid)) {
      if (framework::NodeInfo* node = snapshot.GetMutable(*nn)) {
        const std::vector<framework::NodeInfo*> only{node};
        auto nominated_state = std::make_unique<framework::CycleState>();
        framework::FitError ignored;
        if (algorithm.Schedule(*fw, *nominated_state, pod, snapshot, &result, &ignored, &only)
                .IsSuccess()) {
          cycle_state = std::move(nominated_state);
          on_nominated = true;
        }
      }
    }
    if (!on_nominated)
      st = algorithm.Schedule(*fw, *cycle_state, pod, snapshot, &result, &fit_error, nullptr,
                              cycles_.NodeResults());
  }
  if (!st.IsSuccess()) {
    std::string nominated;
    if (st.IsRejected() && fw->HasPostFilterPlugins()) {
      framework::PostFilterResult pf =
          fw->RunPostFilterPlugins(*cycle_state, pod, fit_error.diagnosis.node_to_status);
      fit_error.diagnosis.post_filter_msg = pf.message;
      if (pf.nominated_node_name) nominated = *pf.nominated_node_name;
    }
    failure_.Fail(fw, std::move(qpi), st, st.IsRejected() ? &fit_error : nullptr, nominated,
                  MonotonicMicros() - start, cycle);
    return;
  }

  const std::string& host = result.suggested_host;
  if (absl::Status as = state_.Assume(qpi.pod_info, host); !as.ok()) {
    failure_.Fail(fw, std::move(qpi), Status::FromAbsl(as), nullptr, "", MonotonicMicros() - start,
                  cycle);
    return;
  }
  Status rs = fw->RunReservePlugins(*cycle_state, pod, host);
  if (rs.IsSuccess()) rs = fw->RunPermitPlugins(*cycle_state, pod, host);
  if (!rs.IsSuccess()) {
    fw->RunUnreservePlugins(*cycle_state, pod, host);
    (void)state_.Forget(uid);
    failure_.Fail(fw, std::move(qpi), rs, nullptr, "", MonotonicMicros() - start, cycle);
    return;
  }
  binder_.Bind(
      BindTask{std::move(qpi), fw, std::move(cycle_state), host, MonotonicMicros() - start});
}

}  // namespace gantry::scheduler
