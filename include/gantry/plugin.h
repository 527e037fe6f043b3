// The plugin API: one small interface per extension point.
//
// A plugin derives from `Plugin` and from each extension-point interface it
// implements; the framework sorts plugins into typed lists once, when the
// profile is built. Order of the points in one attempt (upstream semantics):
//
//   PreEnqueue -> [queue: QueueSort] -> PreFilter -> Filter (parallel, per
//   node) -> PostFilter (only if no node fits) -> PreScore -> Score (parallel)
//   -> NormalizeScore -> Reserve -> Permit -> [binding: PreBind -> Bind ->
//   PostBind]; Unreserve on any failure after Reserve.
//
// Threading: Filter and Score are called concurrently for different nodes of
// the same cycle and must not mutate shared state; every other point is
// called from one thread at a time. CycleState is read-only during Filter and
// Score. Plugins must use the NodeInfo they are handed (preemption passes
// modified copies), never look a node up themselves during Filter.
#ifndef GANTRY_PLUGIN_H_
#define GANTRY_PLUGIN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gantry/cycle_state.h"
#include "gantry/events.h"
#include "gantry/status.h"
#include "gantry/types.h"

namespace gantry::framework {

class Plugin {
 public:
  virtual ~Plugin() = default;
  // The unique name used in configuration ("NodeResourcesFit").
  virtual std::string_view Name() const = 0;
};

// A pod waiting in the scheduling queue.
struct QueuedPodInfo {
  PodInfoPtr pod_info;
  int64_t timestamp_micros = 0;          // when it (re)entered the queue
  int64_t initial_attempt_micros = 0;    // first scheduling attempt, 0 if none yet
  int32_t attempts = 0;
  absl::flat_hash_set<std::string> unschedulable_plugins;  // rejectors of the last attempt
  absl::flat_hash_set<std::string> pending_plugins;
  std::string gating_plugin;             // PreEnqueue plugin holding it, if any
};

// PreEnqueue: may keep a pod out of the active queue. Success admits it; any
// other code parks it as gated until an event the plugin registered for.
class PreEnqueuePlugin : public virtual Plugin {
 public:
  virtual Status PreEnqueue(const PodInfo& pod) = 0;
};

// QueueSort: strict weak order of the active queue. Exactly one per profile,
// and all profiles must share it.
class QueueSortPlugin : public virtual Plugin {
 public:
  virtual bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

// Restricts Filter to a subset of nodes (nullopt: all nodes).
struct PreFilterResult {
  std::optional<absl::flat_hash_set<std::string>> node_names;
  // Filled by the framework: the plugins whose results narrowed the set.
  std::vector<std::string> narrowed_by;
};

// Incremental updates of PreFilter state when preemption or nomination
// simulates adding or removing a pod on a node.
class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status AddPod(CycleState& state, const PodInfo& pod_to_schedule,
                        const PodInfo& pod_to_add, const NodeInfo& node) = 0;
  virtual Status RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                           const PodInfo& pod_to_remove, const NodeInfo& node) = 0;
};

// PreFilter: computes per-pod state once. Codes: Success; Skip (this
// plugin's Filter is skipped for the cycle); Unschedulable* (the attempt
// fails for all nodes without running Filter); Error.
class PreFilterPlugin : public virtual Plugin {
 public:
  virtual Status PreFilter(CycleState& state, const PodInfo& pod,
                           const std::vector<NodeInfo*>& nodes, PreFilterResult* result) = 0;
  virtual PreFilterExtensions* Extensions() { return nullptr; }
};

// Filter: can `pod` run on `node`? Success or Unschedulable* with a reason
// in upstream's wording; Error for internal failures. Concurrent, read-only.
class FilterPlugin : public virtual Plugin {
 public:
  virtual Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) = 0;
};

// Node name -> the status that rejected it.
using NodeToStatus = absl::flat_hash_map<std::string, Status>;

struct PostFilterResult {
  std::optional<std::string> nominated_node_name;
  Status status;  // Success: the pod may fit after the nominated changes
  std::string message;  // appended to the FitError message (e.g. "preemption: ...")
};

// PostFilter: runs only when no node fits; DefaultPreemption lives here.
class PostFilterPlugin : public virtual Plugin {
 public:
  virtual PostFilterResult PostFilter(CycleState& state, const PodInfo& pod,
                                      const NodeToStatus& filtered) = 0;
};

// PreScore: computes per-pod scoring state over the feasible nodes. Skip
// skips this plugin's Score for the cycle.
class PreScorePlugin : public virtual Plugin {
 public:
  virtual Status PreScore(CycleState& state, const PodInfo& pod,
                          const std::vector<const NodeInfo*>& nodes) = 0;
};

// Score: a raw score for one feasible node (0..100 after normalisation).
// Concurrent, read-only.
class ScorePlugin : public virtual Plugin {
 public:
  virtual Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                       int64_t* score) = 0;
  // Rescales all scores of the cycle into [0, 100]; called once, serially.
  virtual bool HasNormalizeScore() const { return false; }
  virtual Status NormalizeScore(const CycleState& state, const PodInfo& pod,
                                std::vector<NodeScore>& scores) {
    (void)state;
    (void)pod;
    (void)scores;
    return Status();
  }
};

// Optional, for Filter and Score plugins: lets the framework reuse this
// plugin's per-node results between pods of one spec, such as a stream of
// pods or the members of a PodGroup made from one template. PodScheduler then
// keeps each node's Filter verdict and raw Score (before NormalizeScore)
// while that NodeInfo keeps its generation, and serves them to the next pod
// for which every active Filter and Score plugin answers true (this, or
// NodeTrackedPlugin below; framework::NodeResultCache). The owner of the
// cache drops it when nodes are added, removed or changed. Plugins that
// implement neither interface are never reused.
class NodeLocalPlugin : public virtual Plugin {
 public:
  // True when this plugin's Filter verdict and raw Score for `a` on any node
  // are also those for `b`: they depend only on that NodeInfo, on the fields
  // of the pods compared here, on the plugin's args, and on what stays fixed
  // while one snapshot is in place and no node is added or removed (the
  // number of nodes, image spread); never on other nodes, on other pods in
  // flight or on state outside the snapshot. Must be false whenever either
  // pod's results depend on more than that (`a` and `b` may be one pod).
  virtual bool SameNodeResults(const PodInfo& a, const PodInfo& b) const = 0;
};

// Optional, for Filter and Score plugins whose per-node results depend on the
// NodeInfo and on state the plugin tracks per node outside the snapshot's
// NodeInfos (DynamicResources: the devices visible from the node and their
// allocations). Their results are reused like a NodeLocalPlugin's, with two
// questions asked after PreFilter, on the cycle's state:
//  - NodeResultsKey: pods with the same non-zero key get the same Filter
//    verdict and raw Score on a node whose NodeInfo and tracked state did not
//    change (0: this pod's results must not be reused);
//  - TrackedChangesSince: which nodes' tracked state changed since an earlier
//    cycle; their kept results are dropped before the pod is filtered.
// Rejection messages may name the pod the result was computed for: the
// framework recomputes every node's result when no node fits the pod.
class NodeTrackedPlugin : public virtual Plugin {
 public:
  virtual uint64_t NodeResultsKey(const CycleState& state) const = 0;
  // Appends to `changed` the names of the nodes whose tracked state may
  // differ from what it was in the cycle that set `*mark` (0: no earlier
  // cycle), and sets `*mark` for the next call. False when the plugin cannot
  // name them (every kept result must be dropped).
  virtual bool TrackedChangesSince(const CycleState& state, uint64_t* mark,
                                   std::vector<std::string>* changed) const = 0;
};

// Reserve: claims resources for the chosen node in the plugin's own state.
// Unreserve must be idempotent and is called in reverse order on failure.
class ReservePlugin : public virtual Plugin {
 public:
  virtual Status Reserve(CycleState& state, const PodInfo& pod, std::string_view node) = 0;
  virtual void Unreserve(CycleState& state, const PodInfo& pod, std::string_view node) = 0;
};

// Permit: Success, Unschedulable* (reject) or Wait with `*timeout_micros`.
class PermitPlugin : public virtual Plugin {
 public:
  virtual Status Permit(CycleState& state, const PodInfo& pod, std::string_view node,
                        int64_t* timeout_micros) = 0;
};

// PreBind: writes prerequisites (e.g. ResourceClaim status) before Bind.
// Runs on a binding worker thread.
class PreBindPlugin : public virtual Plugin {
 public:
  virtual Status PreBind(CycleState& state, const PodInfo& pod, std::string_view node) = 0;
};

// Bind: the first plugin not returning Skip binds the pod.
class BindPlugin : public virtual Plugin {
 public:
  virtual Status Bind(CycleState& state, const PodInfo& pod, std::string_view node) = 0;
};

// PostBind: informational, after a successful bind.
class PostBindPlugin : public virtual Plugin {
 public:
  virtual void PostBind(CycleState& state, const PodInfo& pod, std::string_view node) = 0;
};

// Plugins that reject pods register the events that may help them.
class EnqueueExtensions : public virtual Plugin {
 public:
  virtual std::vector<ClusterEventWithHint> EventsToRegister() const = 0;
};

// ---- Group placement (PodGroups; used by the gang scheduling work) -------

// A candidate set of nodes for a whole group, e.g. one rack.
struct Placement {
  std::string topology_key;    // "" for the unconstrained placement
  std::string topology_value;
  std::vector<const NodeInfo*> nodes;
};

struct PodGroupInfo {
  std::string key;  // "namespace/name"
  std::vector<PodInfoPtr> members;  // in scheduling order
  int32_t min_count = 1;
  int32_t priority = 0;
};

// Where each member landed in one placement ("" when it did not fit).
struct PlacementResult {
  std::vector<std::string> member_nodes;
  int32_t placed = 0;
};

class PlacementGeneratePlugin : public virtual Plugin {
 public:
  // Appends candidate placements for the group over `nodes`.
  virtual Status GeneratePlacements(CycleState& state, const PodGroupInfo& group,
                                    const std::vector<const NodeInfo*>& nodes,
                                    std::vector<Placement>* out) = 0;
};

class PlacementScorePlugin : public virtual Plugin {
 public:
  // Scores a feasible placement (higher is better, 0..100).
  virtual Status ScorePlacement(CycleState& state, const PodGroupInfo& group,
                                const Placement& placement, const PlacementResult& result,
                                int64_t* score) = 0;
};

}  // namespace gantry::framework

#endif  // GANTRY_PLUGIN_H_
