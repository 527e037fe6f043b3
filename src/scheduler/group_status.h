// PodGroup status from the group cycle: the PodGroupInitiallyScheduled
// condition (CompositePodGroupInitiallyScheduled on composites), written
// through framework::ClusterWriter.
//
// Contract: True is terminal (written once, never followed by False, also
// when the observed object already says True); False is written only while
// the group has not been scheduled and only when status, reason or message
// changed since the last write for that group, so a group that keeps failing
// the same way costs one write. Thread-safe.
#ifndef GANTRY_SRC_SCHEDULER_GROUP_STATUS_H_
#define GANTRY_SRC_SCHEDULER_GROUP_STATUS_H_

#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "gantry/cluster_writer.h"
#include "src/state/cluster_state.h"

namespace gantry::scheduler {

inline constexpr std::string_view kPodGroupInitiallyScheduled = "PodGroupInitiallyScheduled";
inline constexpr std::string_view kCompositePodGroupInitiallyScheduled = "CompositePodGroupInitiallyScheduled";
// Written by preemption on a group it evicts whole (status True).
inline constexpr std::string_view kDisruptionTarget = "DisruptionTarget";
inline constexpr std::string_view kPreemptionByScheduler = "PreemptionByScheduler";

// The object a GroupInfo describes, as the writer names it.
framework::PodGroupRef PodGroupRefOf(const state::GroupInfo& group);

class GroupStatusWriter {
 public:
  explicit GroupStatusWriter(framework::ClusterWriter& writer) : writer_(writer) {}

  // The group reached quorum and its members went to binding.
  void Scheduled(const state::GroupInfo& group, const std::string& message);
  // The group cycle failed; `reason` is "Unschedulable" or "SchedulerError".
  void Failed(const state::GroupInfo& group, std::string_view reason, const std::string& message);
  // The group was deleted: forget what was written.
  void Forget(std::string_view key);
  // Whether True was written (or observed) for `key`.
  bool IsScheduled(std::string_view key) const;

 private:
  void Write(const state::GroupInfo& group, framework::PodGroupCondition condition);

  framework::ClusterWriter& writer_;
  mutable std::mutex mu_;
  // key -> last written "status\x1freason\x1fmessage".
  absl::flat_hash_map<std::string, std::string> last_;
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_GROUP_STATUS_H_
