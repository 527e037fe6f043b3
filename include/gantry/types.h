// The scheduler's view of pods and nodes inside a cycle.
//
// `PodInfo` wraps an immutable api::Pod with what plugins would otherwise
// recompute every cycle (resolved priority, resource vector, affinity terms).
// `NodeInfo` aggregates a node with the pods on it (bound and assumed) and
// their summed requests, ports and images. NodeInfos are copied into the
// per-cycle snapshot only when their `generation` changed (design rule 1).
#ifndef GANTRY_TYPES_H_
#define GANTRY_TYPES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "src/api/node.h"
#include "src/api/pod.h"

namespace gantry::framework {

// Default requests upstream assumes for scoring when a container asks for none.
inline constexpr int64_t kDefaultMilliCpuRequest = 100;                // 0.1 core
inline constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;  // 200 MiB
inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

// A resource vector: the four well-known resources inline, others in a list.
//
// Add, Sub and AddScalar saturate per component instead of overflowing (see
// gantry/util/saturating.h for the contract): a component that reaches
// INT64_MAX or INT64_MIN stays there under further Add and Sub, because the
// sum it stands for is no longer known. A holder of a sum of parts that
// needs the exact value after removing a part recomputes the sum from the
// remaining parts when HasSaturated() (NodeInfo::RemovePod does).
struct Resource {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t allowed_pod_number = 0;
  absl::InlinedVector<api::ResourceAmount, 2> scalar;  // extended, hugepages

  static Resource FromList(const api::ResourceList& list);
  int64_t Get(api::Symbol name) const;
  void Set(api::Symbol name, int64_t value);
  void Add(const Resource& other);
  void Sub(const Resource& other);
  void AddScalar(api::Symbol name, int64_t value);
  bool IsZero() const;
  // True when any component is INT64_MAX or INT64_MIN.
  bool HasSaturated() const;
};

// An affinity term with its namespaces resolved against the owning pod.
struct AffinityTerm {
  api::LabelSelector selector;            // empty-but-present selectors match all
  bool selector_matches_nothing = false;  // labelSelector was absent
  absl::flat_hash_set<api::Symbol> namespaces;
  std::optional<api::LabelSelector> namespace_selector;
  api::Symbol topology_key;

  // True if `pod` (in a namespace labelled `ns_labels`) is selected.
  bool Matches(const api::Pod& pod, const api::Labels* ns_labels) const;
};

struct WeightedAffinityTerm {
  AffinityTerm term;
  int32_t weight = 0;
};

struct PodInfo {
  std::shared_ptr<const api::Pod> pod;
  int32_t priority = 0;  // resolved: spec.priority, else its PriorityClass, else 0
  Resource requests;
  Resource non_zero_requests;  // cpu/memory defaulted for scoring
  std::vector<AffinityTerm> required_affinity;
  std::vector<AffinityTerm> required_anti_affinity;
  std::vector<WeightedAffinityTerm> preferred_affinity;
  std::vector<WeightedAffinityTerm> preferred_anti_affinity;

  // Builds the derived fields. `priority` comes from the caller (PriorityClass lookup).
  static std::shared_ptr<const PodInfo> Create(std::shared_ptr<const api::Pod> pod,
                                               int32_t priority);
  const api::Pod& p() const { return *pod; }
  std::string Key() const { return pod->meta.Key(); }
  const std::string& uid() const { return pod->meta.uid; }
};
using PodInfoPtr = std::shared_ptr<const PodInfo>;

// Host ports in use on a node: ip -> {(protocol, port)}; 0.0.0.0 conflicts with every ip.
class HostPortInfo {
 public:
  void Add(api::Symbol ip, api::Symbol protocol, int32_t port);
  void Remove(api::Symbol ip, api::Symbol protocol, int32_t port);
  bool CheckConflict(api::Symbol ip, api::Symbol protocol, int32_t port) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    api::Symbol ip, protocol;
    int32_t port;
    int32_t count;
  };
  std::vector<Entry> entries_;
};

struct ImageStateSummary {
  int64_t size_bytes = 0;
  int32_t num_nodes = 0;  // nodes in the cluster that have this image
};

// A NodeInfo's generation, optionally mirrored into a slot that its owner
// (state::Snapshot) keeps in a dense array by node position, so that a pass
// over many nodes can compare generations without touching each NodeInfo.
// Copies are never mirrored; assigning to a mirrored value updates its slot.
class MirroredGeneration {
 public:
  MirroredGeneration() = default;
  MirroredGeneration(const MirroredGeneration& other) : value_(other.value_) {}
  MirroredGeneration& operator=(const MirroredGeneration& other) {
    Set(other.value_);
    return *this;
  }
  uint64_t value() const { return value_; }
  void Set(uint64_t v) {
    value_ = v;
    if (mirror_ != nullptr) *mirror_ = v;
  }
  // Starts (or, with nullptr, stops) mirroring into `*slot`, which must
  // outlive the mirroring; writes the current value there.
  void MirrorTo(uint64_t* slot) {
    mirror_ = slot;
    if (mirror_ != nullptr) *mirror_ = value_;
  }

 private:
  uint64_t value_ = 0;
  uint64_t* mirror_ = nullptr;
};

class NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(std::shared_ptr<const api::Node> node) { SetNode(std::move(node)); }

  void SetNode(std::shared_ptr<const api::Node> node);
  const api::Node* node() const { return node_.get(); }
  const std::shared_ptr<const api::Node>& node_ptr() const { return node_; }
  // Hot fields of the Node, copied here so per-node checks stay in this
  // object's cache lines instead of chasing the Node.
  std::string_view name() const { return name_; }
  bool unschedulable() const { return unschedulable_; }
  // The Node's taints (empty without a Node).
  absl::Span<const api::Taint> taints() const { return taints_; }

  void AddPod(PodInfoPtr pod);
  // Removes the pod with `uid`; false if it is not on this node.
  bool RemovePod(std::string_view uid);

  const std::vector<PodInfoPtr>& pods() const { return pods_; }
  const std::vector<PodInfoPtr>& pods_with_affinity() const { return pods_with_affinity_; }
  const std::vector<PodInfoPtr>& pods_with_required_anti_affinity() const {
    return pods_with_required_anti_affinity_;
  }
  const Resource& requested() const { return requested_; }
  const Resource& non_zero_requested() const { return non_zero_requested_; }
  const Resource& allocatable() const { return allocatable_; }
  const HostPortInfo& used_ports() const { return used_ports_; }

  // Images on the node with cluster-wide spread (filled by the snapshot).
  absl::flat_hash_map<api::Symbol, ImageStateSummary>& image_states() { return image_states_; }
  const absl::flat_hash_map<api::Symbol, ImageStateSummary>& image_states() const {
    return image_states_;
  }

  uint64_t generation() const { return generation_.value(); }
  // A new process-wide generation number; NodeInfo mutations bump to it.
  static uint64_t NextGeneration();
  // For the owning snapshot: mirror the generation into `*slot` (nullptr
  // stops). Copies of this NodeInfo are not mirrored.
  void MirrorGenerationTo(uint64_t* slot) { generation_.MirrorTo(slot); }

 private:
  void Bump() { generation_.Set(NextGeneration()); }
  void Account(const PodInfo& pod, int sign);

  // Ordered by use: what every Filter reads comes first, so that the filter
  // loop touches as few of this object's cache lines as possible.
  std::shared_ptr<const api::Node> node_;
  std::string_view name_;                // points into *node_
  absl::Span<const api::Taint> taints_;  // points into *node_
  MirroredGeneration generation_;
  bool unschedulable_ = false;
  std::vector<PodInfoPtr> pods_;
  Resource allocatable_;
  Resource requested_;
  Resource non_zero_requested_;
  HostPortInfo used_ports_;
  absl::flat_hash_map<api::Symbol, ImageStateSummary> image_states_;
  std::vector<PodInfoPtr> pods_with_affinity_;
  std::vector<PodInfoPtr> pods_with_required_anti_affinity_;
};

// Per-node verdicts of one attempt, keyed by node name.
struct NodeScore {
  std::string_view name;
  int64_t score = 0;
};

}  // namespace gantry::framework

#endif  // GANTRY_TYPES_H_
