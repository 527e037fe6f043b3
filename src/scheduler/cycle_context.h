// What scheduling and group cycles work on: the cycle's snapshot of the
// cluster state, the placement algorithm, and the per-node Filter / Score
// results reused between pods of one spec.
//
// Everything here belongs to the scheduling loop's thread, except
// MarkNodeResultsStale, which event handlers call from any thread.
#ifndef GANTRY_SRC_SCHEDULER_CYCLE_CONTEXT_H_
#define GANTRY_SRC_SCHEDULER_CYCLE_CONTEXT_H_

#include <atomic>
#include <cstdint>

#include "src/framework/framework.h"
#include "src/framework/node_result_cache.h"
#include "src/framework/schedule_pod.h"
#include "src/state/cluster_state.h"
#include "src/state/snapshot.h"

namespace gantry::scheduler {

class CycleContext {
 public:
  CycleContext(state::ClusterState& state, int32_t percentage_of_nodes_to_score, uint64_t seed)
      : state_(state), algorithm_(percentage_of_nodes_to_score, seed) {}
  CycleContext(const CycleContext&) = delete;
  CycleContext& operator=(const CycleContext&) = delete;

  // Brings the snapshot up to date with the cache (changed nodes only) and
  // points `fw` at it; call at the start of every cycle.
  void Refresh(framework::Framework& fw) {
    state_.UpdateSnapshot(&snapshot_);
    fw.SetSnapshot(&snapshot_);
  }
  state::Snapshot& snapshot() { return snapshot_; }
  framework::PodScheduler& algorithm() { return algorithm_; }

  // The node results cache ready for the snapshot just refreshed, or null
  // when reuse is off. It is cleared first when the snapshot's nodes or the
  // DeviceClasses changed (NodeResourcesFit reads which extended resources
  // DeviceClasses serve); every other change moves the changed NodeInfos'
  // generations, which the cache checks itself.
  framework::NodeResultCache* NodeResults() {
    const bool stale = node_results_stale_.exchange(false, std::memory_order_acq_rel);
    if (stale || !reuse_ || node_results_version_ != snapshot_.nodes_version()) {
      node_results_.Clear();
      node_results_version_ = snapshot_.nodes_version();
    }
    return reuse_ ? &node_results_ : nullptr;
  }
  // Thread-safe: the cache is cleared before its next use.
  void MarkNodeResultsStale() { node_results_stale_.store(true, std::memory_order_release); }
  // Whether cycles reuse per-node results between pods of one spec (on by
  // default). The placements are the same either way.
  void SetNodeResultReuse(bool on) { reuse_ = on; }
  const framework::NodeResultCache& node_results() const { return node_results_; }

 private:
  state::ClusterState& state_;
  state::Snapshot snapshot_;
  framework::PodScheduler algorithm_;
  framework::NodeResultCache node_results_;
  uint64_t node_results_version_ = 0;
  bool reuse_ = true;
  std::atomic<bool> node_results_stale_{false};
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_CYCLE_CONTEXT_H_
