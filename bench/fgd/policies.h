// Scheduling policies for the FGD replay, each a KubeSchedulerConfiguration
// over Gantry's real plugins (plus two bench-only baselines from the paper):
//
//   default      Gantry's default profile (its default score plugins)
//   gpufrag      GpuFragmentation with its defaults: shape distribution
//                learned online from arriving pods, weighted by GPU demand
//   gpufrag-typical  GpuFragmentation with its defaults but a fixed
//                distribution: the trace's typical pods (as FGD's, from the
//                untuned list) with their memory, weighted by pods x GPU
//                milli (CPU-only shapes weigh 0)
//   fgd          GpuFragmentation configured as the paper's FGD: fixed typical
//                shapes from the trace (pods per shape, top 95% of pods,
//                CPU-only pods included), weighted per pod, the artifact's
//                integer sigmoid score with ties to a fixed node order
//                (scoreMapping Sigmoid, tieBreak Stable)
//   fgd-coarse   fgd with half the sigmoid's slope (sigmoidScale: two GPUs),
//                so nodes within about 80 milli-GPU of the best decrease
//                tie (40 under fgd) and the fixed node order consolidates
//                more of the load
//   fgd-surplus  fgd, but pods without GPUs break ties by CPU surplus
//                (cpuPodTieBreak: Surplus): the node with the most free CPU
//                beyond what its free GPUs' typical pods would ask
//   fgd-aware    fgd-surplus, and pods without selectors of their own break
//                ties away from the GPUs that model-pinned typical pods can
//                use (avoidPinned: true)
//   bestfit      the paper's BestFit node score (bench-only plugin FgdBestFit)
//   random       a uniformly random feasible node (bench-only plugin FgdRandom)
//
// The GpuFragmentation policies get `tieSeed` = the run's seed (one fixed
// node order per seed, as the artifact's random node-name prefix).
// Every policy keeps the default filters, scores all nodes
// (percentageOfNodesToScore 100) and disables PostFilter (the protocol has no
// preemption). Non-default policies disable every other score plugin.
// Within a node the DRA allocator picks the devices (first fit in inventory
// order), except under gpufrag and fgd: GpuFragmentation chooses the GPU
// that leaves the least fragmentation and DynamicResources honours it
// (dra::DevicePreference), as the paper's FGD does.
#ifndef GANTRY_BENCH_FGD_POLICIES_H_
#define GANTRY_BENCH_FGD_POLICIES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/fgd/trace.h"
#include "gantry/registry.h"

namespace gantry::fgd {

std::vector<std::string> PolicyNames();

// The configuration (JSON text) of `policy` for one run. `plugin_args` (a
// JSON object, may be empty) is merged into the policy's GpuFragmentation
// args (gpufrag and fgd only), for experiments.
absl::StatusOr<std::string> PolicyConfig(const std::string& policy, uint64_t seed,
                                         const std::vector<TracePod>& pods,
                                         const std::string& plugin_args = "");

// Registers the bench-only baselines FgdBestFit and FgdRandom.
absl::Status RegisterBaselinePlugins(framework::Registry& registry);

}  // namespace gantry::fgd

#endif  // GANTRY_BENCH_FGD_POLICIES_H_
