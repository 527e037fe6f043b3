// The resource-allocation scorer shared by NodeResourcesFit (LeastAllocated,
// MostAllocated, RequestedToCapacityRatio) and NodeResourcesBalancedAllocation:
// per configured resource it pairs the node's allocatable with what would be
// requested after placing the pod, and folds those pairs into one score.
// Upstream: noderesources/resource_allocation.go and the three strategies.
#ifndef GANTRY_PLUGINS_HELPER_RESOURCE_ALLOCATION_H_
#define GANTRY_PLUGINS_HELPER_RESOURCE_ALLOCATION_H_

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "gantry/types.h"
#include "plugins/helper/helper.h"
#include "src/api/intern.h"

namespace gantry::plugins::helper {

using Int64s = absl::InlinedVector<int64_t, 4>;

// One point of the RequestedToCapacityRatio shape (utilization 0..100, score 0..10).
struct UtilizationShapePoint {
  int32_t utilization = 0;
  int32_t score = 0;
  friend bool operator==(const UtilizationShapePoint&, const UtilizationShapePoint&) = default;
};

// Folds (requested, allocatable) pairs into a node score; entries with
// allocatable == 0 are skipped by every strategy. A plain value (no
// std::function) so that the per-node call inlines.
class ScoreFolder {
 public:
  static ScoreFolder LeastAllocated(std::vector<int64_t> weights);
  static ScoreFolder MostAllocated(std::vector<int64_t> weights);
  static ScoreFolder RequestedToCapacityRatio(std::vector<int64_t> weights,
                                              const std::vector<UtilizationShapePoint>& shape);
  // Balanced: (1 - standard deviation of the usage fractions) * 100.
  static ScoreFolder Balanced();

  int64_t Fold(const int64_t* requested, const int64_t* allocatable, size_t n) const;
  int64_t operator()(const Int64s& requested, const Int64s& allocatable) const {
    return Fold(requested.data(), allocatable.data(), requested.size());
  }

 private:
  enum class Kind : uint8_t { kLeast, kMost, kRatio, kBalanced };
  Kind kind_ = Kind::kLeast;
  std::vector<int64_t> weights_;
  std::vector<std::pair<int64_t, int64_t>> shape_;  // (utilization, score scaled to 0..100)
};

class ResourceAllocationScorer {
 public:
  // `use_requested`: true scores actual requests (BalancedAllocation); false
  // uses the non-zero defaults for cpu/memory (NodeResourcesFit).
  ResourceAllocationScorer(const std::vector<helper::ResourceSpec>& resources, bool use_requested,
                           ScoreFolder folder);

  // The pod's request for each configured resource, in order.
  Int64s PodRequests(const framework::PodInfo& pod) const;
  // Score of `node` for a pod with `pod_requests` (from PodRequests).
  int64_t Score(const framework::NodeInfo& node, const Int64s& pod_requests) const;

  size_t size() const { return names_.size(); }

 private:
  // (allocatable, requested-after-placement) of resource `i`; (0, 0) when
  // the node does not offer it or the pod does not ask for a scalar resource.
  void AllocatableRequest(const framework::NodeInfo& node, size_t i, int64_t pod_request, int64_t* alloc,
                          int64_t* req) const;

  enum class Kind : uint8_t { kCpu, kMemory, kEphemeralStorage, kPods, kScalar };
  std::vector<api::Symbol> names_;
  std::vector<Kind> kinds_;
  bool use_requested_;
  bool cpu_memory_only_ = false;  // names_ is exactly {cpu, memory}
  ScoreFolder folder_;
};

}  // namespace gantry::plugins::helper

#endif  // GANTRY_PLUGINS_HELPER_RESOURCE_ALLOCATION_H_
