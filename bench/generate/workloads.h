// Offline equivalents of upstream scheduler_perf workloads, for
// `gantry-bench --workload NAME`.
//
// Each workload builds a cluster from upstream's node and pod templates
// (node-default: 4 CPU / 32Gi / 110 pods; pod-default: 100m / 500Mi; the
// affinity, spreading, preemption and PodGroup templates), with upstream's
// labelling of nodes and its initPods / measurePods counts. Init pods are
// bound round-robin before the run (the scheduler places them one per node in
// upstream's runs too, which is all the measured pods see); measured pods are
// scheduled by the real engine offline and timed on the wall clock of the
// scheduling loop. Only pods of the measured namespace count, as upstream's
// throughput collector counts only the measured namespaces: PreemptionAsync's
// preemptors and Unschedulable's never-fitting pods are load, not output.
//
// Offline there is no pod creation rate: upstream's churn ops (one pod every
// 200 ms while the measured pods are created) become one churn pod before
// every 100th measured pod, the rate they have at 500 measured pods/s.
#ifndef GANTRY_BENCH_GENERATE_WORKLOADS_H_
#define GANTRY_BENCH_GENERATE_WORKLOADS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace gantry::bench {

struct WorkloadSize {
  std::string name;  // upstream's workload name, e.g. "5000Nodes_10000Pods"
  int nodes = 0;
  int init_pods = 0;
  int measure_pods = 0;    // gang workloads: groups x pods_per_group
  int pods_per_group = 0;  // gang workloads: members (and minCount) per PodGroup
  int nodes_per_rack = 0;  // TopologyAwareScheduling: nodes per rack label value
};

struct WorkloadCase {
  std::string name;  // upstream test case, e.g. "SchedulingBasic"
  std::vector<std::string> aliases;
  double upstream_threshold = 0;    // pods/s CI floor of the default size (0: none published)
  std::vector<WorkloadSize> sizes;  // sizes[0] is the default, the last one is --quick
};

// All workloads `gantry-bench --workload` knows, in documentation order.
const std::vector<WorkloadCase>& WorkloadCases();

// Per-second throughput samples as upstream's throughputCollector reports
// them: the pods scheduled in each 1-second window of the loop's wall clock,
// starting at the first scheduled pod; a final partial window counts (scaled
// to per-second) if it lasts at least 100 ms or is the only one.
std::vector<double> ThroughputSamples(const std::vector<int64_t>& scheduled_wall_micros);

struct ThroughputSummary {
  double average = 0;
  double perc50 = 0, perc90 = 0, perc95 = 0, perc99 = 0;
};
// Average over the samples and upstream's nearest-rank percentiles.
ThroughputSummary Summarize(std::vector<double> samples);

struct WorkloadOptions {
  std::string name;         // "Case" (default size) or "Case/Size"
  bool quick = false;       // smallest size, for smoke tests
  std::string config_path;  // optional KubeSchedulerConfiguration
  bool node_result_reuse = true;  // Scheduler::SetNodeResultReuse (off: to compare)
  uint64_t seed = 1;
};

// Runs one workload and returns its report: workload, sizes, scheduled,
// unschedulable, pods/s (loop wall clock), the throughput summary, CPU
// seconds per 1,000 pods, peak RSS, attempt latency, and `dataItems` in
// perf-dash form. Errors: unknown workload, bad config, load failure.
absl::StatusOr<nlohmann::json> RunWorkload(const WorkloadOptions& opts);

// The cluster text (JSON List) of a workload size; pods name `scheduler_name`.
absl::StatusOr<std::string> WorkloadClusterJson(const WorkloadCase& c, const WorkloadSize& size,
                                                std::string_view scheduler_name);

}  // namespace gantry::bench

#endif  // GANTRY_BENCH_GENERATE_WORKLOADS_H_
