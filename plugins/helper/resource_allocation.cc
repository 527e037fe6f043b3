#include "plugins/helper/resource_allocation.h"

#include <cmath>

#include "src/api/resources.h"

namespace gantry::plugins::helper {
namespace {

constexpr int64_t kMaxUtilization = 100;
constexpr int64_t kMaxCustomPriorityScore = 10;

int64_t LeastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * framework::kMaxNodeScore / capacity;
}

int64_t MostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Pods without requests get the non-zero defaults, so requested may exceed capacity.
  if (requested > capacity) requested = capacity;
  return requested * framework::kMaxNodeScore / capacity;
}

// Upstream's helper.BuildBrokenLinearFunction over scaled shape points.
int64_t BrokenLinear(const std::vector<std::pair<int64_t, int64_t>>& shape, int64_t p) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].first) {
      if (i == 0) return shape[0].second;
      const auto& [u0, s0] = shape[i - 1];
      const auto& [u1, s1] = shape[i];
      return s0 + (s1 - s0) * (p - u0) / (u1 - u0);
    }
  }
  return shape.back().second;
}

}  // namespace

ScoreFolder ScoreFolder::LeastAllocated(std::vector<int64_t> weights) {
  ScoreFolder f;
  f.kind_ = Kind::kLeast;
  f.weights_ = std::move(weights);
  return f;
}

ScoreFolder ScoreFolder::MostAllocated(std::vector<int64_t> weights) {
  ScoreFolder f;
  f.kind_ = Kind::kMost;
  f.weights_ = std::move(weights);
  return f;
}

ScoreFolder ScoreFolder::RequestedToCapacityRatio(std::vector<int64_t> weights,
                                                  const std::vector<UtilizationShapePoint>& shape) {
  ScoreFolder f;
  f.kind_ = Kind::kRatio;
  f.weights_ = std::move(weights);
  for (const UtilizationShapePoint& p : shape) {
    // Shape scores are 0..10; scale them to the scheduler's 0..100.
    f.shape_.emplace_back(p.utilization,
                          int64_t{p.score} * (framework::kMaxNodeScore / kMaxCustomPriorityScore));
  }
  return f;
}

ScoreFolder ScoreFolder::Balanced() {
  ScoreFolder f;
  f.kind_ = Kind::kBalanced;
  return f;
}

int64_t ScoreFolder::Fold(const int64_t* requested, const int64_t* allocatable, size_t n) const {
  switch (kind_) {
    case Kind::kLeast:
    case Kind::kMost: {
      int64_t node_score = 0, weight_sum = 0;
      for (size_t i = 0; i < n; ++i) {
        if (allocatable[i] == 0) continue;
        const int64_t s = kind_ == Kind::kLeast ? LeastRequestedScore(requested[i], allocatable[i])
                                                : MostRequestedScore(requested[i], allocatable[i]);
        node_score += s * weights_[i];
        weight_sum += weights_[i];
      }
      return weight_sum == 0 ? 0 : node_score / weight_sum;
    }
    case Kind::kRatio: {
      if (shape_.empty()) return 0;
      int64_t node_score = 0, weight_sum = 0;
      for (size_t i = 0; i < n; ++i) {
        if (allocatable[i] == 0) continue;
        int64_t resource_score;
        if (requested[i] > allocatable[i]) {
          resource_score = BrokenLinear(shape_, kMaxUtilization);
        } else {
          resource_score = BrokenLinear(shape_, requested[i] * kMaxUtilization / allocatable[i]);
        }
        if (resource_score > 0) {
          node_score += resource_score * weights_[i];
          weight_sum += weights_[i];
        }
      }
      if (weight_sum == 0) return 0;
      return static_cast<int64_t>(
          std::round(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
    }
    case Kind::kBalanced: {
      // Fractions of the resources the node offers, in order.
      absl::InlinedVector<double, 8> fractions(n);
      size_t m = 0;
      double total = 0;
      for (size_t i = 0; i < n; ++i) {
        if (allocatable[i] == 0) continue;
        double f = static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]);
        if (f > 1) f = 1;
        total += f;
        fractions[m++] = f;
      }
      double stddev = 0;
      if (m == 2) {
        stddev = std::abs((fractions[0] - fractions[1]) / 2);
      } else if (m > 2) {
        double mean = total / static_cast<double>(m);
        double sum = 0;
        for (size_t i = 0; i < m; ++i) sum += (fractions[i] - mean) * (fractions[i] - mean);
        stddev = std::sqrt(sum / static_cast<double>(m));
      }
      return static_cast<int64_t>((1 - stddev) * static_cast<double>(framework::kMaxNodeScore));
    }
  }
  return 0;
}

ResourceAllocationScorer::ResourceAllocationScorer(
    const std::vector<helper::ResourceSpec>& resources, bool use_requested, ScoreFolder folder)
    : use_requested_(use_requested), folder_(std::move(folder)) {
  const api::ResourceNames& n = api::ResourceNames::Get();
  for (const helper::ResourceSpec& r : resources) {
    api::Symbol name = api::Symbol::Intern(r.name);
    names_.push_back(name);
    if (name == n.cpu) {
      kinds_.push_back(Kind::kCpu);
    } else if (name == n.memory) {
      kinds_.push_back(Kind::kMemory);
    } else if (name == n.ephemeral_storage) {
      kinds_.push_back(Kind::kEphemeralStorage);
    } else if (name == n.pods) {
      kinds_.push_back(Kind::kPods);
    } else {
      kinds_.push_back(Kind::kScalar);
    }
  }
  cpu_memory_only_ = kinds_.size() == 2 && kinds_[0] == Kind::kCpu && kinds_[1] == Kind::kMemory;
}

Int64s ResourceAllocationScorer::PodRequests(const framework::PodInfo& pod) const {
  Int64s out(names_.size(), 0);
  for (size_t i = 0; i < names_.size(); ++i) {
    switch (kinds_[i]) {
      case Kind::kCpu:
        out[i] = use_requested_ ? pod.requests.milli_cpu : pod.non_zero_requests.milli_cpu;
        break;
      case Kind::kMemory:
        out[i] = use_requested_ ? pod.requests.memory : pod.non_zero_requests.memory;
        break;
      default:
        out[i] = pod.requests.Get(names_[i]);
        break;
    }
  }
  return out;
}

void ResourceAllocationScorer::AllocatableRequest(const framework::NodeInfo& node, size_t i,
                                                  int64_t pod_request, int64_t* alloc, int64_t* req) const {
  const framework::Resource& requested = use_requested_ ? node.requested() : node.non_zero_requested();
  const framework::Resource& allocatable = node.allocatable();
  *alloc = 0;
  *req = 0;
  switch (kinds_[i]) {
    case Kind::kCpu:
      *alloc = allocatable.milli_cpu;
      *req = requested.milli_cpu + pod_request;
      return;
    case Kind::kMemory:
      *alloc = allocatable.memory;
      *req = requested.memory + pod_request;
      return;
    case Kind::kEphemeralStorage:
      *alloc = allocatable.ephemeral_storage;
      *req = node.requested().ephemeral_storage + pod_request;
      return;
    case Kind::kPods:
    case Kind::kScalar:
      // A scalar resource the pod does not ask for is left out of the score.
      if (pod_request == 0) return;
      for (const api::ResourceAmount& a : allocatable.scalar) {
        if (a.name == names_[i]) {
          *alloc = a.value;
          *req = node.requested().Get(names_[i]) + pod_request;
          return;
        }
      }
      return;
  }
}

int64_t ResourceAllocationScorer::Score(const framework::NodeInfo& node, const Int64s& pod_requests) const {
  const size_t n = names_.size();
  if (cpu_memory_only_) {
    // The default resource list: no per-resource dispatch.
    const framework::Resource& requested = use_requested_ ? node.requested() : node.non_zero_requested();
    const framework::Resource& allocatable = node.allocatable();
    const int64_t alloc[2] = {allocatable.milli_cpu, allocatable.memory};
    const int64_t req[2] = {alloc[0] == 0 ? 0 : requested.milli_cpu + pod_requests[0],
                            alloc[1] == 0 ? 0 : requested.memory + pod_requests[1]};
    return folder_.Fold(req, alloc, 2);
  }
  constexpr size_t kOnStack = 8;
  int64_t requested_buf[kOnStack], allocatable_buf[kOnStack];
  Int64s requested_heap, allocatable_heap;
  int64_t* requested = requested_buf;
  int64_t* allocatable = allocatable_buf;
  if (n > kOnStack) {
    requested_heap.resize(n);
    allocatable_heap.resize(n);
    requested = requested_heap.data();
    allocatable = allocatable_heap.data();
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t alloc, req;
    AllocatableRequest(node, i, pod_requests[i], &alloc, &req);
    allocatable[i] = alloc;
    requested[i] = alloc == 0 ? 0 : req;
  }
  return folder_.Fold(requested, allocatable, n);
}

}  // namespace gantry::plugins::helper
