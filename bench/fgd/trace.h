// The Alibaba GPU trace (cluster-trace-gpu-v2023, "openb") as Gantry
// objects, for the FGD fill-up replay (bench/fgd/replay.h).
//
// Reading: the node list (`sn,cpu_milli,memory_mib,gpu,model`) and a pod list
// (`name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...]`) are parsed
// by header name (column order and extra columns do not matter). A bad row
// fails the whole load with `file:line: column "x": message`.
//
// Modelling (docs/benchmarks.md, "GPU trace replay"):
//  - every node becomes a Node with allocatable cpu, memory and pods=1001,
//    labelled with its GPU model, and (when it has GPUs) one ResourceSlice
//    `<node>-gpus` (driver kGpuDriver, pool = node name) with one device per
//    GPU: attributes `model` (string), `index` (int) and, for models with a
//    published memory size, `memoryMiB` (int); capacity `milli` = 1000 with
//    requestPolicy {default 1000, validRange min 1 step 1};
//    allowMultipleAllocations, so GPU-sharing pods consume capacity;
//  - a DeviceClass kGpuClass selecting the driver's devices;
//  - a pod requests cpu/memory as container requests; a GPU pod references
//    the ResourceClaim `<pod>-gpu` with one request of `num_gpu` devices of
//    the class, each consuming `gpu_milli` of `milli`, and, when `gpu_spec`
//    is set, the CEL selector `device.attributes["gpu.gantry.dev"].model in
//    [...]`.
#ifndef GANTRY_BENCH_FGD_TRACE_H_
#define GANTRY_BENCH_FGD_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "src/api/objects.h"

namespace gantry::fgd {

inline constexpr std::string_view kGpuDriver = "gpu.gantry.dev";
inline constexpr std::string_view kGpuClass = "gpu.gantry.dev";
inline constexpr std::string_view kGpuCapacity = "milli";  // per device, 1000 = one whole GPU
inline constexpr std::string_view kModelLabel = "gpu.gantry.dev/model";
inline constexpr std::string_view kNamespace = "openb";

struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  std::string model;  // empty for CPU-only nodes
};

struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;              // per GPU; 0 for CPU-only pods
  std::vector<std::string> gpu_spec;  // allowed models; empty = any
  int64_t GpuMilliTotal() const { return static_cast<int64_t>(num_gpu) * gpu_milli; }
};

// Parses CSV text; `source` prefixes error positions ("file:line").
absl::StatusOr<std::vector<TraceNode>> ParseNodeCsv(std::string_view text, std::string_view source);
absl::StatusOr<std::vector<TracePod>> ParsePodCsv(std::string_view text, std::string_view source);
// Reads and parses a file.
absl::StatusOr<std::vector<TraceNode>> LoadNodeCsv(const std::string& path);
absl::StatusOr<std::vector<TracePod>> LoadPodCsv(const std::string& path);

// The CEL selector for a gpu_spec list ("" when the list is empty).
std::string ModelSelector(const std::vector<std::string>& models);

// Appends the cluster (nodes, slices, the device class, the namespace) to
// `out`, decoded by Gantry's own decoders.
absl::Status BuildCluster(const std::vector<TraceNode>& nodes, api::ObjectSet* out);

// One pod (and its claim, when it asks for GPUs) under `name` (clones of a
// trace pod get their own names). `scheduler_name` is spec.schedulerName.
struct PodObjects {
  api::Pod pod;
  std::vector<api::ResourceClaim> claims;  // empty or one
};
absl::StatusOr<PodObjects> BuildPod(const TracePod& pod, std::string_view name,
                                    std::string_view scheduler_name);

}  // namespace gantry::fgd

#endif  // GANTRY_BENCH_FGD_TRACE_H_
