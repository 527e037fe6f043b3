// What the scheduler reports about its work: one AttemptOutcome per
// scheduling attempt, one GroupOutcome per group cycle, and the observers
// (metrics, admin API, simulation reports) that receive them.
#ifndef GANTRY_SRC_SCHEDULER_OUTCOME_H_
#define GANTRY_SRC_SCHEDULER_OUTCOME_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "src/api/pod.h"
#include "src/framework/schedule_pod.h"

namespace gantry::scheduler {

// What happened to one scheduling attempt (for reports, metrics, explain).
struct AttemptOutcome {
  framework::PodInfoPtr pod;
  std::string profile;
  std::string result;           // "scheduled" | "unschedulable" | "error"
  std::string node;             // chosen node when scheduled
  std::string message;          // failure message (upstream format)
  int64_t duration_micros = 0;  // wall time of the scheduling cycle
  std::string nominated_node;
  // Set when scheduled: attempts it took (this one included) and the time
  // since its first attempt (scheduler_pod_scheduling_sli_duration_seconds).
  int32_t attempts = 0;
  int64_t since_first_attempt_micros = 0;
  // Rejected attempts that ran the filters: their diagnosis (per-node
  // statuses, PreFilter message). Valid only during OnAttempt; copy what you keep.
  const framework::FitError* fit_error = nullptr;
};

// One topology domain tried by a group cycle for its root group ("" when
// the group has no topology constraint): how many members fit there.
struct DomainTrial {
  std::string domain;  // "key=value"
  int32_t placed = 0;  // members (or child groups of a composite) that fit
  bool satisfied = false;
  std::string failure;  // why the quorum was not reached there
};

// A member of a failed group cycle and why it did not fit (in the last
// domain tried; "" when it did fit there).
struct MemberFailure {
  std::string pod;  // "namespace/name"
  std::string failure;
};

// What happened to one group cycle.
struct GroupOutcome {
  std::string key;         // "namespace/name"
  bool scheduled = false;  // quorum reached and members sent to binding
  int32_t placed = 0;      // members placed in this cycle
  int32_t min_count = 0;
  std::string domain;   // "key=value" of the chosen topology domain, "" if none
  std::string message;  // failure summary
  int64_t duration_micros =
      0;  // the group cycle's placement search (gantry_gang_placement_duration_seconds)
  // The root group's placement search, in the order tried (for explain).
  std::vector<DomainTrial> domains{};
  std::vector<MemberFailure> members{};  // failed cycles only
};

class AttemptObserver {
 public:
  virtual ~AttemptObserver() = default;
  // Called after each attempt's outcome is known (for binds: after Bind).
  virtual void OnAttempt(const AttemptOutcome& outcome) = 0;
  // Called after each group cycle.
  virtual void OnGroup(const GroupOutcome& outcome) { (void)outcome; }
  // Called when a pod this scheduler serves is deleted (or finished).
  virtual void OnPodDeleted(const api::Pod& pod) { (void)pod; }
};

// The registered observers. Thread-safe: observers are called under one
// lock, one outcome at a time, in the order added. Remove an observer
// before destroying it.
class Observers {
 public:
  void Add(AttemptObserver* observer);
  void Remove(AttemptObserver* observer);

  void Attempt(const AttemptOutcome& outcome);
  void Group(const GroupOutcome& outcome);
  void PodDeleted(const api::Pod& pod);

 private:
  std::mutex mu_;
  std::vector<AttemptObserver*> observers_;  // guarded by mu_
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_OUTCOME_H_
