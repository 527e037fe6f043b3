// ClusterState: the scheduler's cache of the cluster, fed by an event source
// (reflectors live, the snapshot loader offline); it never fetches.
//
// It holds every node as a NodeInfo with the pods bound or assumed on it,
// namespaces (labels, for namespaceSelector), priority classes (to resolve
// pod priority), and image spread. Pod lifecycle in the cache:
//
//   (not here) --Assume--> assumed --FinishBinding--> assumed, expiring
//        |                   |  ^                        |
//        |                 Forget                  AddPod (confirmed by the
//        |                   v                      event source) or Expire
//        +------AddPod----> bound <----------------------+
//                            |
//                        RemovePod
//
// The scheduling loop copies changed nodes into its Snapshot at the start of
// each cycle (UpdateSnapshot); only NodeInfos whose generation moved are
// copied (design rule 1). Thread-safe: one mutex guards everything.
#ifndef GANTRY_SRC_STATE_CLUSTER_STATE_H_
#define GANTRY_SRC_STATE_CLUSTER_STATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "gantry/clock.h"
#include "gantry/types.h"
#include "src/api/node.h"
#include "src/api/pod.h"
#include "src/api/workload.h"
#include "src/state/snapshot.h"

namespace gantry::state {

struct PriorityClassInfo {
  int32_t value = 0;
  bool global_default = false;
  std::optional<api::PreemptionPolicy> preemption_policy;
};

// A PodGroup as the scheduler uses it, from either API: native
// scheduling.k8s.io PodGroups (members name it in spec.schedulingGroup) or
// scheduler-plugins PodGroups (members carry the pod-group label).
struct GroupInfo {
  std::string key;  // "namespace/name"
  bool native = true;
  bool gang = false;          // gang policy: all-or-nothing at min_count
  int32_t min_count = 1;
  api::Symbol topology_key;   // empty: unconstrained
  std::optional<int32_t> priority;
  api::Symbol priority_class_name;
  bool disruption_all = false;
  // spec.preemptionPolicy (1.37, gate PodGroupPreemptionPolicy): authoritative
  // for the group as a preemptor; unset falls back to its PriorityClass.
  std::optional<api::PreemptionPolicy> preemption_policy;
  // A v1alpha3 CompositePodGroup: `min_count` is spec.schedulingPolicy.gang.minGroupCount
  // (ready child groups), and members are child groups, not pods.
  bool composite = false;
  // Object identity, for status writes.
  std::string uid;
  int64_t generation = 0;
  // status.conditions[PodGroupInitiallyScheduled] is already True (terminal).
  bool initially_scheduled = false;
  // Key of the parent CompositePodGroup, "" at a root.
  std::string parent;
  // PodGroup-level DRA claims (spec.resourceClaims).
  std::vector<api::PodGroupResourceClaim> resource_claims;
};

// "namespace/name" of the group `pod` belongs to, or "" when none.
std::string GroupKeyOf(const api::Pod& pod);
// The scheduler's view of either PodGroup API object.
GroupInfo GroupInfoFrom(const api::PodGroup& group);
GroupInfo GroupInfoFrom(const api::CoschedulingPodGroup& group);
GroupInfo GroupInfoFrom(const api::CompositePodGroup& group);
// True when `pod` belongs to the group `key` ("namespace/name"); allocates nothing.
bool InGroup(const api::Pod& pod, std::string_view key);

class ClusterState {
 public:
  // `assumed_ttl_micros`: how long an assumed pod whose binding finished may
  // wait for confirmation before it is expired; 0 (the default, as upstream's
  // durationToExpireAssumedPod) never expires one: the informer confirms the
  // binding (AddOrUpdateBoundPod) or removes the pod (RemovePod), so a lagging
  // pod watch never releases the capacity of a pod that did bind.
  explicit ClusterState(const Clock& clock, int64_t assumed_ttl_micros = 0);

  // ---- Fed by the event source -------------------------------------------
  void AddOrUpdateNode(std::shared_ptr<const api::Node> node);
  void RemoveNode(std::string_view name);
  // A pod bound to a node (existing load). Confirms an assumed pod with the same UID.
  void AddOrUpdateBoundPod(std::shared_ptr<const api::Pod> pod);
  // Removes a pod by UID (deleted, terminal, or unbound again).
  void RemovePod(std::string_view uid);
  void SetNamespace(api::Symbol name, api::Labels labels);
  void RemoveNamespace(api::Symbol name);
  // PodGroups by "namespace/name".
  void SetGroup(GroupInfo group);
  void RemoveGroup(std::string_view key);
  std::optional<GroupInfo> FindGroup(std::string_view key) const;
  // CompositePodGroups by "namespace/name" (a separate namespace of keys).
  void SetCompositeGroup(GroupInfo group);
  void RemoveCompositeGroup(std::string_view key);
  std::optional<GroupInfo> FindCompositeGroup(std::string_view key) const;
  // Groups (PodGroups and CompositePodGroups) whose parent is the composite
  // `key`, PodGroups first, each in key order.
  std::vector<GroupInfo> ChildGroups(std::string_view key) const;
  // Members of the group that are bound or assumed.
  int32_t PlacedMembers(std::string_view key) const;
  // Nodes (sorted, unique) of the group's bound or assumed members.
  std::vector<std::string> PlacedMemberNodes(std::string_view key) const;

  // PodDisruptionBudgets by "namespace/name".
  void SetPodDisruptionBudget(std::shared_ptr<const api::PodDisruptionBudget> pdb);
  void RemovePodDisruptionBudget(std::string_view key);
  void SetPriorityClass(api::Symbol name, PriorityClassInfo info);
  void RemovePriorityClass(api::Symbol name);

  // ---- Used by the scheduler --------------------------------------------
  // Resolves a pod's priority. A member of a known PodGroup that has a
  // priority (spec.priority, else its priorityClassName) takes the group's
  // priority, which replaces the members' own (KEP-5710). Otherwise:
  // spec.priority, else its PriorityClass, else the global default class, else 0.
  int32_t ResolvePriority(const api::Pod& pod) const;
  // The group's priority (spec.priority, else its PriorityClass), nullopt
  // when the group names neither (or a class that is not known).
  std::optional<int32_t> GroupPriority(const GroupInfo& group) const;
  // The preemption policy the group preempts with: spec.preemptionPolicy,
  // else its PriorityClass's, else PreemptLowerPriority.
  api::PreemptionPolicy GroupPreemptionPolicy(const GroupInfo& group) const;
  // The pod as the scheduler sees it. Emulates the Priority admission
  // plugin for pods that did not pass through it (offline snapshots): a pod
  // without spec.preemptionPolicy takes its PriorityClass's (the named one,
  // else the global default class), so the scheduler can keep reading only
  // spec.preemptionPolicy, as upstream does.
  framework::PodInfoPtr MakePodInfo(std::shared_ptr<const api::Pod> pod) const;

  // Places `pod` on `node` in the cache before it is bound (design rule 2).
  absl::Status Assume(framework::PodInfoPtr pod, std::string_view node);
  // Marks the binding of an assumed pod as done; starts its expiry clock.
  void FinishBinding(std::string_view uid);
  // Undoes an assumption (binding failed).
  absl::Status Forget(std::string_view uid);
  // Removes assumed pods whose binding finished longer than the TTL ago.
  // Returns their keys (for logging and metrics).
  std::vector<std::string> CleanupExpiredAssumedPods();
  bool IsAssumed(std::string_view uid) const;
  // The node a pod (bound or assumed) is on, if any.
  std::optional<std::string> NodeOf(std::string_view uid) const;

  // Copies nodes changed since the last call into `snapshot`.
  void UpdateSnapshot(Snapshot* snapshot);

  size_t NodeCount() const;
  size_t PodCount() const;
  // Pods assumed on a node (bound or binding) and not yet confirmed by the
  // informer; PodGroups and CompositePodGroups known.
  size_t AssumedPodCount() const;
  size_t GroupCount() const;

 private:
  struct PodState {
    framework::PodInfoPtr info;
    std::string node;
    bool assumed = false;
    bool binding_finished = false;
    int64_t deadline_micros = 0;
  };

  void AddPodLocked(const framework::PodInfoPtr& info, const std::string& node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemovePodLocked(std::string_view uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int32_t ResolvePriorityLocked(const api::Pod& pod) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::optional<int32_t> GroupPriorityLocked(const GroupInfo& group) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  framework::NodeInfo* GetOrCreateNodeLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateImagesLocked(const api::Node* old_node, const api::Node* new_node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Clock& clock_;
  const int64_t assumed_ttl_micros_;
  mutable absl::Mutex mu_;
  // Nodes in insertion order (stable iteration order for determinism).
  std::vector<std::string> node_order_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::unique_ptr<framework::NodeInfo>> nodes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> dirty_nodes_ ABSL_GUARDED_BY(mu_);
  bool order_changed_ ABSL_GUARDED_BY(mu_) = true;
  absl::flat_hash_map<std::string, PodState> pods_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<api::Symbol, api::Labels> namespaces_ ABSL_GUARDED_BY(mu_);
  bool namespaces_changed_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<const api::PodDisruptionBudget>> pdbs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, GroupInfo> groups_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, GroupInfo> composites_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int32_t> placed_members_ ABSL_GUARDED_BY(mu_);
  bool pdbs_changed_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<api::Symbol, PriorityClassInfo> priority_classes_ ABSL_GUARDED_BY(mu_);
  // image name -> (size, number of nodes with it)
  absl::flat_hash_map<api::Symbol, framework::ImageStateSummary> images_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gantry::state

#endif  // GANTRY_SRC_STATE_CLUSTER_STATE_H_
