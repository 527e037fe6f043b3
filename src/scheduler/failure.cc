#include "src/scheduler/failure.h"

namespace gantry::scheduler {

namespace {
constexpr size_t kEventNoteLimit = 1024;
}  // namespace

std::string TruncateEventNote(const std::string& note) {
  if (note.size() <= kEventNoteLimit) return note;
  return note.substr(0, kEventNoteLimit - 4) + " ...";
}

void FailureHandler::Fail(framework::Framework* fw, framework::QueuedPodInfo qpi,
                          const framework::Status& status, const framework::FitError* fit_error,
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

  writer_.RecordEvent(
      framework::EventRecord{"Pod", std::string(pod.p().meta.namespace_.view()), pod.p().meta.name,
                             pod.uid(), "Warning", "FailedScheduling", "Scheduling",
                             TruncateEventNote(message), std::string(fw->SchedulerName())});
  framework::PodScheduledCondition cond{"False", rejected ? "Unschedulable" : "SchedulerError",
                                        message};
  absl::Status ws = writer_.UpdatePodScheduledCondition(
      pod.p(), cond, nominated_node.empty() ? nullptr : &nominated_node);
  (void)ws;  // the writer logs and counts its own failures
  if (!nominated_node.empty()) queue_.AddNominatedPod(qpi.pod_info, nominated_node);

  AttemptOutcome outcome{qpi.pod_info,
                         std::string(fw->SchedulerName()),
                         rejected ? "unschedulable" : "error",
                         "",
                         message,
                         duration_micros,
                         nominated_node};
  outcome.fit_error = fit_error;
  const std::string uid = pod.uid();
  (void)queue_.AddUnschedulableIfNotPresent(std::move(qpi), cycle);
  queue_.Done(uid);
  observers_.Attempt(outcome);
}

void FailureHandler::FailGroupMember(framework::Framework* fw, framework::QueuedPodInfo qpi,
                                     const std::string& message, int64_t duration_micros,
                                     int64_t cycle, bool scheduler_error,
                                     const std::string& nominated_node) {
  Fail(fw, std::move(qpi),
       framework::Status(
           scheduler_error ? framework::Code::kError : framework::Code::kUnschedulable, message)
           .WithPlugin("GangScheduling"),
       nullptr, nominated_node, duration_micros, cycle);
}

}  // namespace gantry::scheduler
