// The per-pod scheduling algorithm: find feasible nodes (PreFilter, parallel
// Filter with percentageOfNodesToScore and a rotating start), score them and
// pick the best with a seeded tie-break. Failures come back as a FitError
// whose message follows upstream's `0/N nodes are available: ...` format.
#ifndef GANTRY_SRC_FRAMEWORK_SCHEDULE_POD_H_
#define GANTRY_SRC_FRAMEWORK_SCHEDULE_POD_H_

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gantry/plugin.h"
#include "src/framework/framework.h"
#include "src/framework/node_result_cache.h"
#include "src/state/snapshot.h"

namespace gantry::framework {

// Why a pod did not fit: per-node statuses plus the PreFilter / PostFilter parts.
struct Diagnosis {
  NodeToStatus node_to_status;
  // Status given to nodes that were never evaluated (PreFilter rejection or narrowing).
  std::optional<Status> absent_nodes_status;
  std::string pre_filter_msg;
  std::string post_filter_msg;
  absl::flat_hash_set<std::string> unschedulable_plugins;
  absl::flat_hash_set<std::string> pending_plugins;
};

struct FitError {
  int num_all_nodes = 0;
  Diagnosis diagnosis;
  // "0/N nodes are available: <reasons>." (+ " <postfilter msg>")
  std::string Message() const;
};

struct ScheduleResult {
  std::string suggested_host;
  int evaluated_nodes = 0;
  int feasible_nodes = 0;
};

// upstream numFeasibleNodesToFind: all nodes below 100 or at >= 100%; else
// pct (adaptive 50 - n/125, floor 5 when pct <= 0) of n, floored at 100.
int NumFeasibleNodesToFind(int num_all_nodes, int32_t percentage);

class PodScheduler {
 public:
  // `global_percentage`: KubeSchedulerConfiguration.percentageOfNodesToScore
  // (a profile's own value wins). `seed` drives tie-breaking.
  PodScheduler(int32_t global_percentage, uint64_t seed)
      : global_percentage_(global_percentage), rng_(seed) {}

  // Runs one scheduling attempt for `pod` on `snapshot` (already set on `fw`).
  // Returns kSuccess with the result, or a rejection with `*fit_error` filled
  // (only then: a placed pod's rejected nodes are not recorded), or an error
  // status. Does not run PostFilter (the caller decides).
  // `restrict_to` (optional) limits the attempt to those nodes, e.g. one
  // topology domain of a group placement; FitError counts only them.
  // `cache` (optional) serves and keeps per-node Filter verdicts and raw
  // scores for pods of one spec (node_result_cache.h); the result, the
  // FitError and the tie-breaking draws are those of a run without it (a
  // pod no node fits is filtered again without it when kept rejections may
  // name another pod's objects: NodeResultCache::tracked()).
  Status Schedule(Framework& fw, CycleState& state, const PodInfo& pod,
                  const state::Snapshot& snapshot, ScheduleResult* result, FitError* fit_error,
                  const std::vector<NodeInfo*>* restrict_to = nullptr,
                  NodeResultCache* cache = nullptr);

 private:
  int32_t global_percentage_;
  std::mt19937_64 rng_;
  size_t next_start_node_index_ = 0;
  // Per-wave scratch space reused across attempts.
  std::vector<uint8_t> verdict_scratch_;
  std::vector<Status> status_scratch_;
  std::vector<int> miss_scratch_;
  std::vector<NodeResultCache::Entry*> entry_scratch_;
  std::vector<std::pair<const NodeInfo*, NodeResultCache::Entry*>> rejected_scratch_;

  // Adds a rejected node to the diagnosis.
  static void RecordRejection(const NodeInfo& node, Status status, FitError* fit_error);
};

}  // namespace gantry::framework

#endif  // GANTRY_SRC_FRAMEWORK_SCHEDULE_POD_H_
