// GpuFragmentation (PreFilter, PreScore, Score): a fragmentation-aware score
// for shareable GPUs modelled as DRA devices with consumable capacity (in the
// spirit of FGD, Weng et al., USENIX ATC '23). See README.md.
//
// A node's *fragmentation* with respect to a distribution of pod shapes is
// the expected amount of free GPU capacity on it that a pod drawn from the
// distribution could not use:
//   F(node) = sum_k w_k * frag_k(node),
//   frag_k  = all free GPU capacity of the node, if shape k cannot run there
//             (too little CPU, too few matching devices with enough free
//             capacity, or k asks for no GPU at all);
//             else the free capacity of the devices k cannot use (not
//             matching its selectors, or with less free than k needs).
// Score(node) = F(before) - F(after placing the pod). For a claim with one
// ExactCount request and no constraints on a node of shareable devices, the
// plugin chooses the devices itself (by default the ones that leave the
// least fragmentation, device by device) and asks DynamicResources to
// allocate those on the chosen node (dra::DevicePreference); for any other
// claim "after" applies the devices the DRA allocator picks (a second
// allocator pass). Either way the score is exact for the placement that
// would happen. Scores are min-max normalised to [0, 100]; with
// args.score_mapping kSigmoid the decrease first becomes the FGD artifact's
// integer score floor(100 * sigmoid(decrease / one device)), so near-equal
// nodes tie and go to the tie-break.
//
// The shape distribution is either given (args.shapes) or learned online
// from the pods this plugin sees in PreFilter (every arriving pod, once per
// uid): a shape is (cpu and memory requests, device count, capacity per device, device
// class, selectors). Weights are per pod or per unit of GPU demand
// (args.weighting), normalised over the most frequent shapes that cover
// args.coverage of the total.
#ifndef GANTRY_PLUGINS_GPU_FRAGMENTATION_GPU_FRAGMENTATION_H_
#define GANTRY_PLUGINS_GPU_FRAGMENTATION_GPU_FRAGMENTATION_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "src/state/dra_state.h"

namespace gantry::plugins::gpu_fragmentation {

inline constexpr std::string_view kName = "GpuFragmentation";
inline constexpr std::string_view kArgsKind = "GpuFragmentationArgs";
inline constexpr std::string_view kStateKey = "PreScoreGpuFragmentation";
// Raw score = round(fragmentation decrease, milli-units) * kTieRange + the
// tie-break bonus (in [0, kTieRange)): kTieLevelBits for the first level
// (capacity left, in capacity units), the rest for the second.
inline constexpr int kTieBits = 30;
inline constexpr int kTieLevelBits = 16;
inline constexpr int64_t kTieRange = int64_t{1} << kTieBits;

// One pod shape. `count` 0 means the pod asks for no device.
struct Shape {
  int64_t cpu_milli = 0;
  int32_t count = 0;
  int64_t capacity = 0;  // per device, in units of the capacity (e.g. 460 of 1000)
  std::string device_class;
  std::vector<std::string> selectors;  // CEL, all must match
  int64_t memory = 0;                  // bytes; 0 = not considered

  std::string Key() const;
  friend bool operator==(const Shape&, const Shape&) = default;
};

struct WeightedShape {
  Shape shape;
  double weight = 0;
  friend bool operator==(const WeightedShape&, const WeightedShape&) = default;
};

enum class Weighting : uint8_t { kPods, kDemand };
// Among nodes with the same fragmentation decrease: kPacking prefers the
// node with the least capacity left after the placement; kPackingCpu then
// the one with the least CPU left; kPackingStable then a fixed per-node
// order (a hash of the node name), so that equal choices go to the same
// nodes instead of being spread; kStable only that order; kNone leaves the
// tie to the framework's seeded selectHost.
enum class TieBreak : uint8_t { kNone, kPacking, kPackingCpu, kPackingStable, kStable };
// Which devices inside a node the score assumes (and asks DynamicResources
// for, through dra::DevicePreference): kFragmentation picks, device by
// device, the one whose use leaves the least fragmentation; kFirstFit leaves
// the choice to the allocator's inventory order.
enum class DeviceChoice : uint8_t { kFirstFit, kFragmentation };
// How frag_k counts the free capacity shape k cannot use on a node:
// kUsable (FGD's rule, see the file comment): the free capacity of the
// devices that cannot host one more k (all of it when the node cannot host
// one); kFill: the free capacity left over when the node is filled with as
// many copies of k as its devices (free / capacity per device), free CPU and
// free memory allow, i.e. it also counts the remainders k would leave on each
// device and the devices that CPU or memory exhaustion strands.
enum class Measure : uint8_t { kUsable, kFill };
// How the fragmentation decrease becomes the node's score: kLinear compares
// the decrease itself (in steps of `resolution`); kSigmoid compares
// floor(100 * sigmoid(decrease / sigmoid_scale)), the FGD artifact's integer
// score, so that nodes whose decreases differ by less than one score point
// tie (about 4% of a device near a decrease of 0, much more for large
// decreases) and go to the tie-break. Under kSigmoid the device choice also
// compares those integer scores, ties going to inventory order.
enum class ScoreMapping : uint8_t { kLinear, kSigmoid };
// The tie-break for pods that ask for no device: kSame uses `tieBreak`;
// kSurplus prefers the node with the most CPU beyond what its free devices
// need (free CPU - free capacity x the distribution's CPU per unit of
// capacity), so CPU-only pods take the CPU that GPU pods are least likely
// to need.
enum class CpuPodTieBreak : uint8_t { kSame, kSurplus };

struct GpuFragmentationArgs {
  // Qualified name of the device capacity that measures the shared unit.
  std::string capacity = "gpu.gantry.dev/milli";
  Weighting weighting = Weighting::kDemand;
  double coverage = 1.0;  // (0, 1]
  // Learned shapes carry the pod's memory request, so a node whose free
  // memory is too small for a shape counts as unable to run it.
  bool memory_fit = true;
  // Decreases are compared in steps of this many milli-units of the
  // capacity (0: exactly); nodes within one step go to the tie-break.
  int64_t resolution = 0;
  TieBreak tie_break = TieBreak::kPackingCpu;
  DeviceChoice device_choice = DeviceChoice::kFragmentation;
  Measure measure = Measure::kUsable;
  ScoreMapping score_mapping = ScoreMapping::kLinear;
  CpuPodTieBreak cpu_pod_tie_break = CpuPodTieBreak::kSame;
  // Pods whose device request has no selectors of its own break ties first
  // by the weight of the distribution's selector-bearing shapes that can
  // use the node's devices (less first), so that unpinned pods leave the
  // models that pinned pods need to them.
  bool avoid_pinned = false;
  // The decrease that moves the sigmoid by one unit (kSigmoid), in
  // milli-units of the capacity; default one 1000-unit device.
  int64_t sigmoid_scale = 1'000'000;
  // Seeds the fixed per-node order of kStable and kPackingStable (0: the
  // unseeded order), so that a benchmark can draw one order per run.
  uint64_t tie_seed = 0;
  // Fixed distribution; empty = learn from arriving pods.
  std::vector<WeightedShape> shapes;

  static GpuFragmentationArgs Decode(api::Decoder& d, api::JsonValue v);
  nlohmann::json ToJson() const;
};

// The GPU view of one node: devices carrying the capacity, their free
// amount, and the node's free CPU.
struct NodeGpus {
  std::vector<int32_t> devices;  // dense inventory indexes
  std::vector<int64_t> free;     // capacity left per device, milli-units
  std::vector<int64_t> full;     // the device's capacity, milli-units
  int64_t cpu_free = 0;          // millicores
  int64_t memory_free = 0;       // bytes
};

// Reads `node`'s devices that have `capacity` from the DRA snapshot.
NodeGpus ReadNodeGpus(const state::DraSnapshot& snap, const framework::NodeInfo& node,
                      api::Symbol capacity);

// Whether shape `s` may use inventory device `dev` (class and shape
// selectors; CEL errors count as no). Results are memoised in the inventory.
bool ShapeMatches(const state::DraSnapshot& snap, const Shape& s, int32_t dev);

// Expected fragmentation of `node` under `measure` (see the file comment and
// Measure). `matches[k][i]`: whether shape k may use node device i.
double Fragmentation(const NodeGpus& node, const std::vector<WeightedShape>& shapes,
                     const std::vector<std::vector<bool>>& matches,
                     Measure measure = Measure::kUsable);

// The same value as Fragmentation(), computed in O(groups) per node: shapes
// are grouped by (device class, selectors) — one device-match vector per
// group — then by (count, capacity), with CPU requests sorted and weights
// prefix-summed so "fits by CPU" is one binary search.
class ShapeTable {
 public:
  explicit ShapeTable(const std::vector<WeightedShape>& shapes, Measure measure = Measure::kUsable);
  // One representative shape per selector group (class and selectors).
  const std::vector<Shape>& groups() const { return group_shapes_; }
  // The summed weight of group g's shapes.
  double group_weight(size_t g) const { return group_weights_[g]; }
  // `matches[g][i]`: whether group g may use node device i.
  double Fragmentation(const NodeGpus& node, const std::vector<std::vector<bool>>& matches) const;

 private:
  struct CapGroup {
    int32_t count = 0;
    int64_t capacity = 0;
    std::vector<int64_t> cpu;     // ascending
    std::vector<int64_t> memory;  // per entry of `cpu`
    std::vector<double> weight;   // per entry of `cpu`
    std::vector<double> prefix;   // prefix[j] = weight of cpu[0..j)
    bool any_memory = false;      // some entry has a memory request
  };
  // The two measures for a node with `t` > 0 free capacity.
  double UsableFragmentation(const NodeGpus& node, const std::vector<std::vector<bool>>& matches,
                             double t) const;
  double FillFragmentation(const NodeGpus& node, const std::vector<std::vector<bool>>& matches,
                           double t) const;

  Measure measure_;
  double no_device_weight_ = 0;  // shapes asking for no device
  std::vector<Shape> group_shapes_;
  std::vector<double> group_weights_;
  std::vector<std::vector<CapGroup>> caps_;  // per selector group
};

// Normalises a distribution: most frequent first (ties by key), cut at
// `coverage` of the total, weights summing to 1.
std::vector<WeightedShape> TopShapes(const std::vector<WeightedShape>& counts, double coverage);

class GpuFragmentation final : public framework::PreFilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin {
 public:
  GpuFragmentation(GpuFragmentationArgs args, framework::FrameworkHandle& handle);
  std::string_view Name() const override { return kName; }
  // Learns the pod's shape (once per uid). Never rejects.
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              const std::vector<framework::NodeInfo*>& nodes,
                              framework::PreFilterResult* result) override;
  // Prepares the allocator for the pod's unallocated claims and the shape
  // distribution. Skip without DRA.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  bool HasNormalizeScore() const override { return true; }
  framework::Status NormalizeScore(const framework::CycleState& state,
                                   const framework::PodInfo& pod,
                                   std::vector<framework::NodeScore>& scores) override;

  // The current learned (or configured) distribution, normalised.
  std::vector<WeightedShape> Distribution() const;
  // The shape of `pod` (claims resolved through the DRA state); nullopt when
  // a claim is missing or has more than one request.
  std::optional<Shape> ShapeOf(const framework::PodInfo& pod) const;

 private:
  GpuFragmentationArgs args_;
  framework::FrameworkHandle& handle_;
  api::Symbol capacity_;
  mutable std::mutex mu_;
  absl::flat_hash_set<std::string> seen_;                    // pod uids
  absl::flat_hash_map<std::string, WeightedShape> learned_;  // key -> shape, weight = count
};

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::gpu_fragmentation

#endif  // GANTRY_PLUGINS_GPU_FRAGMENTATION_GPU_FRAGMENTATION_H_
