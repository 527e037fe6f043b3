// Pending pods of other schedulers that claim membership of a group. Those
// pods are never touched, but a group with such members is rejected as
// mixed (all members of a group must use one schedulerName).
#ifndef GANTRY_SRC_SCHEDULER_FOREIGN_MEMBERS_H_
#define GANTRY_SRC_SCHEDULER_FOREIGN_MEMBERS_H_

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/api/pod.h"

namespace gantry::scheduler {

// Thread-safe. Entries go when the pod is deleted or bound (Forget), so the
// tables stay as large as the set of such pods.
class ForeignGroupMembers {
 public:
  // Counts `pod` (another scheduler's pending pod) for its group, once per
  // UID; a pod that names no group is ignored.
  void Add(const api::Pod& pod);
  // Forgets the pod with `uid`, if it was counted.
  void Forget(std::string_view uid);
  // The schedulerNames of the foreign members of any of `groups` (group
  // keys), each prefixed with ", "; "" when there are none.
  std::string SchedulersOf(const std::vector<std::string>& groups);
  size_t size();

 private:
  struct Member {
    std::string group;
    std::string scheduler;
  };
  std::mutex mu_;
  // Group key -> scheduler name -> how many pending members it serves.
  absl::flat_hash_map<std::string, std::map<std::string, int>> schedulers_;
  absl::flat_hash_map<std::string, Member> members_;  // by pod UID
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_FOREIGN_MEMBERS_H_
