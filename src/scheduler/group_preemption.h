// Workload-aware preemption support for the scheduler (KEP-5710; see
// docs/preemption.md):
//
// - NominatedRoom keeps the room promised to nominated preemptors: while it
//   is alive, pods nominated to a node with a priority >= the pod being
//   scheduled are added to that node in the snapshot (and listed in
//   Snapshot::NominatedPods, so DynamicResources holds their devices), so
//   lower-priority pods cannot take it (upstream
//   RunFilterPluginsWithNominatedPods).
// - Victim units and their ordering, used by Scheduler::PreemptForGroup
//   (group_preemption.cc), which the group cycle calls when no placement of
//   a PodGroup reaches quorum.
//
// Everything here runs on the scheduling loop's thread.
#ifndef GANTRY_SRC_SCHEDULER_GROUP_PREEMPTION_H_
#define GANTRY_SRC_SCHEDULER_GROUP_PREEMPTION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gantry/types.h"
#include "src/queue/scheduling_queue.h"
#include "src/state/cluster_state.h"
#include "src/state/snapshot.h"

namespace gantry::scheduler {

// Adds nominated pods to the snapshot for the lifetime of the object and
// removes them again on destruction (the snapshot is left as it was). Rooms
// nest only as scopes (the inner one is destroyed first).
// `skip(pod)` excludes pods that must not count: the pod being scheduled,
// members of the same group, pods already placed somewhere.
class NominatedRoom {
 public:
  NominatedRoom(state::Snapshot& snapshot, const queue::SchedulingQueue& queue, int32_t priority,
                const std::function<bool(const framework::PodInfo&)>& skip);
  ~NominatedRoom();
  NominatedRoom(const NominatedRoom&) = delete;
  NominatedRoom& operator=(const NominatedRoom&) = delete;

  // Number of nominated pods added.
  size_t size() const { return added_.size(); }

 private:
  state::Snapshot& snapshot_;
  size_t listed_before_;  // Snapshot::NominatedPods() entries of enclosing rooms
  // The node of each pod added, in the order they follow those entries.
  std::vector<framework::NodeInfo*> added_;
};

// The CompositePodGroup subtree a member of `group` is evicted with: the
// top-most ancestor composite with disruptionMode `all` (its whole subtree
// goes together; with `single` its children are disrupted independently).
struct TreeDisruptionUnit {
  state::GroupInfo root;
  std::optional<int32_t> priority;  // highest priority set on the composites from the group up to `root`
};
// nullopt when no ancestor of `group` is a composite in mode `all` (or the
// tree is broken: a missing parent, a cycle, too deep).
std::optional<TreeDisruptionUnit> TreeUnitOf(const state::ClusterState& state, const state::GroupInfo& group);
// The unit key of a tree ("CompositePodGroup ns/name"; PodGroup keys are "ns/name").
std::string TreeUnitKey(const state::GroupInfo& root);

// A preemption victim unit: a whole PodGroup with disruptionMode `all`, a
// whole CompositePodGroup subtree in mode `all`, or one pod (lone, or a
// member of a `single` group).
struct VictimUnit {
  std::string id;     // unit key for a whole group or tree, pod UID otherwise
  std::string group;  // the victim's group key, "" for a lone pod
  bool whole_group = false;
  std::optional<state::GroupInfo> tree_root;  // set when the unit is a composite subtree
  // The unit's priority: the group's priority when it has one (it replaces
  // the members'), else the highest member priority.
  int32_t priority = 0;
  int64_t earliest_start = 0;  // earliest start among its pods
  // Pods of the unit and the snapshot node each is on.
  std::vector<std::pair<framework::NodeInfo*, framework::PodInfoPtr>> pods;
  int32_t terminating = 0;  // pods already being deleted
  bool Leaving() const { return terminating == static_cast<int32_t>(pods.size()); }
};

// Importance order for victims (KEP-5710 step 3): higher priority first;
// then a PodGroup before a lone pod; then the bigger group; then the
// earlier start. Returns true when `a` is more important than `b`.
bool MoreImportantUnit(const VictimUnit& a, const VictimUnit& b);

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_GROUP_PREEMPTION_H_
