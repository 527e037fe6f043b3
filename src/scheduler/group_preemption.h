// Workload-aware preemption (see docs/preemption.md):
//
// - NominatedRoom keeps the room promised to nominated preemptors: while it
//   is alive, pods nominated to a node with a priority >= the pod being
//   scheduled are added to that node in the snapshot (and listed in
//   Snapshot::NominatedPods, so DynamicResources holds their devices), so
//   lower-priority pods cannot take it (upstream
//   RunFilterPluginsWithNominatedPods).
// - Victim units and their ordering.
// - GroupPreemptionEvaluator, which the group cycle calls when no placement
//   of a PodGroup (or a CompositePodGroup tree) reaches quorum.
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

#include "absl/container/flat_hash_map.h"
#include "gantry/cluster_writer.h"
#include "gantry/types.h"
#include "src/framework/framework.h"
#include "src/queue/scheduling_queue.h"
#include "src/scheduler/cycle_context.h"
#include "src/scheduler/failure.h"
#include "src/scheduler/outcome.h"
#include "src/state/cluster_state.h"
#include "src/state/dra_state.h"
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

// Candidate node sets for a preemptor: the whole cluster ("", every node),
// or one entry per topology domain ("key=value", its nodes).
using Domains = std::vector<std::pair<std::string, std::vector<framework::NodeInfo*>>>;

// How a preempting unit places its members on the snapshot (with some
// victims removed): a PodGroup's members one by one, or a CompositePodGroup
// tree's placer. `place` leaves the placement on the snapshot (members
// added, Reserve run) until `undo`.
struct GroupPlacement {
  std::vector<std::string> nodes;  // per member, "" when not placed
  bool satisfied = false;          // quorum reached (the root's, for a tree)
  int32_t placed = 0;
  std::string first_failure;
};
struct GroupPlacer {
  std::function<GroupPlacement(const std::vector<framework::NodeInfo*>& nodes)> place;
  std::function<void()> undo;
};

// The unit asking for room: a PodGroup, or a CompositePodGroup tree.
struct Preemptor {
  std::string key;                // the PodGroup's (or the tree root's) key
  const state::GroupInfo* group;  // that group
  // The unit's own groups, by group key: their pods are never victims.
  std::function<bool(const std::string&)> own_group;
  std::vector<framework::QueuedPodInfo>* members;  // the pending members, in the cycle's order
  framework::Framework* fw;
  int64_t cycle;         // the scheduling cycle the members were popped in
  int64_t start_micros;  // the group cycle's start (MonotonicMicros)
};

// Preemption for a unit whose members do not reach quorum, in phases:
//  1. Eligibility: the group's preemptionPolicy (else its PriorityClass's)
//     must not be Never. A unit whose earlier victims are still terminating
//     keeps its nominations and starts nothing new (delayed preemption).
//  2. Victim units over the whole cluster: every bound pod of another group
//     or none, grouped into units (a disruptionMode `all` group or subtree is
//     one unit; anything else is one pod per unit). A unit is a candidate
//     only when its priority is below the preemptor's. Units already
//     terminating are counted as leaving.
//  3. Per domain: remove every candidate touching it and place the members;
//     below quorum the domain is infeasible. Otherwise binary-search the
//     shortest prefix of the candidates sorted least important first, place
//     the members with it removed, then reprieve units most important first
//     (PDB-violating ones first) wherever all their pods still fit in place.
//  4. The best domain (no victims, fewest PDB violations, lowest highest
//     victim priority, fewest units, fewest pods, latest start) wins. Only
//     now are its victims evicted (DisruptionTarget + delete, `Preempted`
//     events; a whole-group victim also gets DisruptionTarget on its group),
//     and the members are nominated to their nodes and requeued.
// Runs on the scheduling loop's thread; it leaves the snapshot as it found it.
class GroupPreemptionEvaluator {
 public:
  GroupPreemptionEvaluator(state::ClusterState& state, queue::SchedulingQueue& queue,
                           CycleContext& cycles, state::DraState& dra,
                           framework::ClusterWriter& writer, FailureHandler& failure,
                           Observers& observers)
      : state_(state),
        queue_(queue),
        cycles_(cycles),
        dra_(dra),
        writer_(writer),
        failure_(failure),
        observers_(observers) {}

  // Preemption for one PodGroup whose members are placed one by one; `need`
  // is how many more must fit for its quorum.
  bool PreemptForGroup(const Preemptor& preemptor, int32_t need, const Domains& domains,
                       std::string* note);
  // Preemption for any unit, placed by `placer`. Returns true when it took
  // the members over (victims evicted or still terminating; members
  // nominated and requeued); false with `*note` saying why preemption cannot
  // help (the caller appends it to the failure message).
  bool Preempt(const Preemptor& preemptor, const GroupPlacer& placer, const Domains& domains,
               std::string* note);

 private:
  struct Units;         // the victim units of one attempt and the candidates among them
  class ClaimRelease;   // DRA claims of removed units, released while they are removed
  struct DomainChoice;  // one domain's victims and how good they are

  // Phase 1: the preemptor's priority, or nullopt (with `*note`) when its
  // policy is Never.
  std::optional<int32_t> EligiblePriority(const Preemptor& preemptor, std::string* note);
  // Delayed preemption: true when victims of an earlier preemption are still
  // terminating (the members were failed back keeping their nominations).
  bool StillWaitingForVictims(const Preemptor& preemptor);
  // Phase 2.
  void CollectVictimUnits(const Preemptor& preemptor, int32_t priority, Units* units);
  // Phase 3 for one domain; nullopt when preemption cannot make the unit fit
  // there (`*most_placed` / `*first_failure` keep the best infeasible try).
  std::optional<DomainChoice> SelectVictimsInDomain(const Preemptor& preemptor,
                                                    const GroupPlacer& placer, const Units& units,
                                                    ClaimRelease& claims, const std::string& domain,
                                                    const std::vector<framework::NodeInfo*>& nodes,
                                                    int32_t* most_placed,
                                                    std::string* first_failure);
  // Phase 4: evicts the victims; returns how many pods were deleted.
  int64_t Evict(const Preemptor& preemptor, const DomainChoice& choice, Units& units,
                std::vector<std::string>* waiting_for);
  // Phase 4: nominated pods of lower priority on the victims' nodes lose
  // their nomination.
  void ClearLowerNominations(const DomainChoice& choice, int32_t priority,
                             const absl::flat_hash_map<std::string, std::string>& nominate);
  // Fails every member back to the queue with `message`; those in
  // `nominate` (member UID -> node) keep a nomination there.
  void FailMembers(const Preemptor& preemptor, const std::string& message,
                   const absl::flat_hash_map<std::string, std::string>& nominate, int32_t placed,
                   const std::string& domain);

  // A unit whose victims were evicted and are still terminating: while any
  // is left, it keeps its nominations and starts no new preemption.
  struct PendingPreemption {
    std::vector<std::string> waiting_for;                          // victim UIDs
    std::vector<std::pair<std::string, std::string>> nominations;  // member UID, node
  };

  state::ClusterState& state_;
  queue::SchedulingQueue& queue_;
  CycleContext& cycles_;
  state::DraState& dra_;
  framework::ClusterWriter& writer_;
  FailureHandler& failure_;
  Observers& observers_;
  absl::flat_hash_map<std::string, PendingPreemption> pending_;  // by preemptor key
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_GROUP_PREEMPTION_H_
