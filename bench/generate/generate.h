// Synthetic cluster snapshots for benchmarks and demos.
//
// Two families, both deterministic for a given seed:
//  - scheduler_perf-style clusters: identical nodes (4 CPU / 32Gi / 110 pods)
//    spread over zones, pending pods of 100m / 500Mi, optionally some
//    existing pods pre-bound round-robin;
//  - AI clusters: GPU nodes in zones and racks, one ResourceSlice per node
//    (GPUs and NICs with model, memory, NUMA and PCIe-root attributes),
//    DeviceClasses, ResourceClaimTemplates with CEL selectors, gangs as
//    scheduling.k8s.io/v1beta1 PodGroups and single-GPU inference pods.
//
// Output is a kubectl-style `kind: List` in JSON (written directly as text,
// no DOM, so 150k-pod clusters are fast) or a multi-document YAML stream.
#ifndef GANTRY_BENCH_GENERATE_GENERATE_H_
#define GANTRY_BENCH_GENERATE_GENERATE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace gantry::bench {

enum class OutputFormat { kYaml, kJson };

// JSON for ".json", YAML otherwise.
OutputFormat FormatForPath(std::string_view path);

struct PerfClusterOptions {
  int nodes = 100;
  int pods = 1000;        // pending pods
  int bound_pods = 0;     // extra running pods bound round-robin to the nodes
  int zones = 3;
  std::string scheduler_name = "gantry-scheduler";
  std::string pod_namespace = "default";
  uint64_t seed = 1;
};

struct AiClusterOptions {
  int zones = 2;
  int racks_per_zone = 2;
  int nodes_per_rack = 2;
  int gpus_per_node = 8;
  int nics_per_node = 2;
  // GPU models assigned to racks (picked with the seed).
  std::vector<std::string> gpu_models = {"H100", "A100"};
  int gangs = 2;            // PodGroups of training workers
  int gang_size = 2;        // pods per gang (= gang minCount)
  int gpus_per_worker = 8;  // devices per training pod's claim
  int inference_pods = 4;   // single-GPU pods, no gang
  std::string scheduler_name = "gantry-scheduler";
  std::string pod_namespace = "ml";
  uint64_t seed = 1;
};

// Writes a snapshot to `out`. Errors are invalid options or a failed stream.
absl::Status WritePerfCluster(const PerfClusterOptions& opts, OutputFormat format, std::ostream& out);
absl::Status WriteAiCluster(const AiClusterOptions& opts, OutputFormat format, std::ostream& out);

}  // namespace gantry::bench

#endif  // GANTRY_BENCH_GENERATE_GENERATE_H_
