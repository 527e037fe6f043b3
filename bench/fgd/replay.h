// The FGD paper's fill-up experiment (method: docs/benchmarks.md)
// run through Gantry's real engine: BuildScheduler with the given
// configuration (framework + plugins + DRA allocator), pods submitted one at
// a time, no departures, no retries.
//
// One run (seed s):
//  1. the trace pods sorted by name, then shuffled with `seed`;
//  2. inflated to `tune_ratio` x cluster GPU capacity: clones
//     `<name>-tuned-<i>` drawn uniformly with replacement from the original
//     pods are appended while the total GPU request (sum of num_gpu *
//     gpu_milli) stays within the target; the first clone that would exceed
//     it ends the list. A list already above the target loses random pods
//     until it is within;
//  3. each pod (and its claim) is added to the scheduler and one scheduling
//     cycle runs; a pod that does not fit is deleted at once (no queue, no
//     retry, no preemption); nothing ever departs;
//  4. after every pod: arrived GPU milli (all attempted pods, failed ones
//     included) and allocated GPU milli (placed pods).
// The curve: for each integer arrived percentage b = round(arrived /
// capacity * 100), the mean allocation ratio over the points in that
// bucket; an empty bucket takes the mean over the points of b-1 and b+1.
#ifndef GANTRY_BENCH_FGD_REPLAY_H_
#define GANTRY_BENCH_FGD_REPLAY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/fgd/trace.h"
#include "gantry/registry.h"

namespace gantry::fgd {

// The seeded generator of the experiment (splitmix64): the same seed gives
// the same arrival list on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [0, n), n > 0 (rejection sampling, no modulo bias).
  uint64_t Below(uint64_t n);

 private:
  uint64_t state_;
};

struct Arrival {
  int32_t pod = 0;   // index into the trace pod list
  std::string name;  // the pod's name (clones: "<name>-tuned-<i>")
  bool clone = false;
};

struct ArrivalPlan {
  std::vector<Arrival> arrivals;
  int64_t capacity_milli = 0;  // cluster GPUs x 1000
  int64_t target_milli = 0;    // tune_ratio x capacity
  int64_t original_milli = 0;  // GPU request of the trace as given
  int64_t planned_milli = 0;   // GPU request of `arrivals`
  int64_t clones = 0;
  int64_t removed = 0;
};

// Steps 1-2 of the protocol.
ArrivalPlan PlanArrivals(const std::vector<TraceNode>& nodes, const std::vector<TracePod>& pods,
                         uint64_t seed, double tune_ratio);

struct ReplayOptions {
  uint64_t seed = 42;
  double tune_ratio = 1.3;
  // KubeSchedulerConfiguration (YAML); its first profile schedules the pods.
  std::string config_yaml;
  // Submit only the first N arrivals (0: all). For smoke tests.
  int64_t max_pods = 0;
};

struct ReplayPoint {
  int64_t arrived_milli = 0;
  int64_t allocated_milli = 0;
};

inline constexpr int kCurveMax = 130;  // buckets 0..kCurveMax percent

struct ReplayResult {
  uint64_t seed = 0;
  ArrivalPlan plan;
  int64_t submitted = 0;
  int64_t placed = 0;
  int64_t failed = 0;
  int64_t pods_at_end = 0;  // pods the cluster state holds at the end (= placed: nothing departed)
  int64_t attempts = 0;     // scheduling cycles run (one per submitted pod)
  int64_t dra_allocated_milli = 0;           // GPU milli the DRA state holds at the end
  std::vector<ReplayPoint> points;           // one per submitted pod
  std::vector<std::string> failure_samples;  // the first failures: "ns/name: message"
  // Failures of pods that arrived while arrived demand was below capacity
  // (the ones that make up the unallocated GPUs at 100 %), by PodClass.
  struct ClassFailures {
    int64_t pods = 0;
    int64_t gpu_milli = 0;
  };
  std::map<std::string, ClassFailures> failed_before_100;
  // The cluster when arrived demand first reached capacity: per node (in the
  // node list's order) the CPU and memory placed pods request and the GPU
  // milli used per device. Empty when the run ended before that.
  struct NodeUse {
    int64_t cpu_milli = 0;
    int64_t memory_mib = 0;
    std::vector<int64_t> gpu_milli;  // per device "gpu-<i>"
  };
  std::vector<NodeUse> use_at_100;
  // Allocation ratio (% of capacity) per arrived-% bucket; nullopt when
  // neither the bucket nor its neighbours hold a point.
  std::vector<std::optional<double>> curve;
  double wall_seconds = 0;
  double cpu_seconds = 0;

  // 100 - allocation ratio at arrived = `percent` (nullopt: no data).
  std::optional<double> UnallocatedAt(int percent) const;
};

// Runs one seed end to end.
absl::StatusOr<ReplayResult> RunReplay(const std::vector<TraceNode>& nodes,
                                       const std::vector<TracePod>& pods,
                                       const framework::Registry& registry,
                                       const ReplayOptions& options);

// The class of a trace pod for failure breakdowns: "cpu", "share" (one GPU,
// gpu_milli < 1000) or "<n>gpu", followed by " <model>|<model>..." when
// gpu_spec restricts the model.
std::string PodClass(const TracePod& pod);

// The curve from per-pod points (exposed for tests).
std::vector<std::optional<double>> DiscreteCurve(const std::vector<ReplayPoint>& points,
                                                 int64_t capacity_milli);

}  // namespace gantry::fgd

#endif  // GANTRY_BENCH_FGD_REPLAY_H_
