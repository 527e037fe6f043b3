// What the framework gives plugins: read access to the cycle's snapshot,
// the cluster writer, the clock, the worker pool, namespace labels and the
// metrics plugins record.
#ifndef GANTRY_HANDLE_H_
#define GANTRY_HANDLE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gantry/clock.h"
#include "gantry/cluster_writer.h"
#include "gantry/cycle_state.h"
#include "gantry/metrics.h"
#include "gantry/status.h"
#include "gantry/types.h"
#include "src/api/policy.h"

namespace gantry::state {
class DraState;  // src/state/dra_state.h
}  // namespace gantry::state

namespace gantry::framework {

class FilterPlugin;  // gantry/plugin.h

// A pod nominated to a node (a preemptor waiting for its victims) that the
// current attempt counts as running there.
struct NominatedPod {
  const NodeInfo* node = nullptr;
  PodInfoPtr pod;
};

// The immutable per-cycle view of all nodes (design rule 1).
class SnapshotLister {
 public:
  virtual ~SnapshotLister() = default;
  virtual const std::vector<NodeInfo*>& NodeInfos() const = 0;
  virtual const std::vector<NodeInfo*>& HavePodsWithAffinity() const = 0;
  virtual const std::vector<NodeInfo*>& HavePodsWithRequiredAntiAffinity() const = 0;
  virtual const NodeInfo* Get(std::string_view node_name) const = 0;
  // The nominated pods (of priority >= the pod being scheduled) that this
  // attempt counts as placed: they are already in their nodes' NodeInfos;
  // plugins whose state lives elsewhere (DRA devices) account for them in
  // PreFilter.
  virtual const std::vector<NominatedPod>& NominatedPods() const {
    static const std::vector<NominatedPod> kNone;
    return kNone;
  }
};

// Runs work on the profile's fixed worker pool.
class Parallelizer {
 public:
  virtual ~Parallelizer() = default;
  // Calls fn(i) for i in [0, n), spread over the workers; returns when done.
  virtual void Until(int n, const std::function<void(int)>& fn) = 0;
  virtual int parallelism() const = 0;
};

// The unit a pod is evicted in (workload-aware preemption): a member of a
// PodGroup with disruptionMode `all` goes together with every other placed
// member of that group; anything else goes alone.
struct DisruptionUnit {
  std::string group;  // "ns/name" of its PodGroup; "CompositePodGroup ns/name" (`all` subtree)
  bool whole_group = false;  // the group's disruptionMode is `all`
  // The group's priority when it has one (it replaces the members' own).
  std::optional<int32_t> group_priority;
};

class FrameworkHandle {
 public:
  virtual ~FrameworkHandle() = default;
  virtual const SnapshotLister& Snapshot() const = 0;
  virtual ClusterWriter& Writer() = 0;
  virtual const Clock& clock() const = 0;
  virtual Parallelizer& parallelizer() = 0;
  // Labels of a namespace (nullptr if unknown), for namespaceSelector.
  virtual const api::Labels* NamespaceLabels(api::Symbol ns) const = 0;
  // The profile's scheduler name.
  virtual std::string_view SchedulerName() const = 0;

  // Pods nominated to run on `node` (preemptors whose victims are leaving).
  virtual std::vector<PodInfoPtr> NominatedPodsForNode(std::string_view node) const {
    (void)node;
    return {};
  }
  // PodDisruptionBudgets as of this cycle (for preemption).
  virtual const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& PodDisruptionBudgets()
      const {
    static const std::vector<std::shared_ptr<const api::PodDisruptionBudget>> kNone;
    return kNone;
  }
  // The unit `pod` is evicted in (see DisruptionUnit). Default: alone.
  virtual DisruptionUnit DisruptionUnitOf(const api::Pod& pod) const {
    (void)pod;
    return {};
  }
  // Dynamic Resource Allocation state (slices, classes, claims, in-flight
  // allocations); null when the scheduler runs without DRA.
  virtual state::DraState* Dra() const { return nullptr; }
  // Where plugins record their metrics (see gantry/metrics.h).
  virtual PluginMetrics& Metrics() const { return NoPluginMetrics::Instance(); }

  // ---- Preemption support (what-if evaluation on modified NodeInfo copies) --
  // The Framework forwards these to its runners; a handle without plugins to
  // run must say so itself (there is no silent default).

  // Runs the profile's filter plugins (those not skipped in `state`) on `node`.
  virtual Status RunFilterPluginsWithState(const CycleState& state, const PodInfo& pod,
                                           const NodeInfo& node) = 0;
  // The filter plugins that run for `state` (those its PreFilter did not
  // skip), computed once for many RunFilterPluginsWithPlan calls on clones
  // of `state` (clones keep the skip set). Default: empty (the plan is unused).
  virtual std::vector<FilterPlugin*> ActiveFilterPlugins(const CycleState& state) const {
    (void)state;
    return {};
  }
  // RunFilterPluginsWithState with the plugins in `plan` (from
  // ActiveFilterPlugins of `state` or a clone of it). Default: ignores the plan.
  virtual Status RunFilterPluginsWithPlan(const std::vector<FilterPlugin*>& plan,
                                          const CycleState& state, const PodInfo& pod,
                                          const NodeInfo& node) {
    (void)plan;
    return RunFilterPluginsWithState(state, pod, node);
  }
  // False when RunPreFilterExtensionAddPod / RemovePod cannot change `state`
  // (no PreFilter plugin it did not skip has extensions): a what-if may then
  // share `state` instead of cloning it. Default: true.
  virtual bool HasPreFilterExtensions(const CycleState& state) const {
    (void)state;
    return true;
  }
  // Runs the PreFilter extensions' AddPod / RemovePod on `state`.
  virtual Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod,
                                             const PodInfo& to_add, const NodeInfo& node) = 0;
  virtual Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                                const PodInfo& to_remove, const NodeInfo& node) = 0;
};

}  // namespace gantry::framework

#endif  // GANTRY_HANDLE_H_
