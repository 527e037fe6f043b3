// Reuse of one node's allocation outcome between pods whose claims ask for
// the same devices (library gantry_dra).
//
// Pods made from one ResourceClaimTemplate have claims with identical
// requests, so on a node whose devices nobody touched since, the allocator
// finds for the next pod exactly what it found for the previous one. The
// memo keeps, per node and per *spec* (what the allocator's claims ask for:
// requests and constraints, not names or config), the compact outcome of
// Allocator::Allocate (the Filter solution, or why nothing fits), and hands
// it out again while nothing it depends on has changed:
//
//  - the inventory and the DeviceClasses: one *era* per (inventory,
//    classes) pair; a new slice, taint rule or class starts a new era and
//    every entry is dropped;
//  - the allocated state of the node's pools: each view (Begin) compares the
//    snapshot's per-device exclusive counts and shared uses (holders and
//    consumed capacity) with those of the previous view and stamps every
//    pool with a changed device with a new epoch. An outcome computed at
//    epoch E is served only while every pool visible from the node (its
//    slices' pools: the node's own devices, network-attached ones, and
//    every device drawing on the same shared counters) still has an
//    epoch <= E. Whatever changed it (another pod's claim allocated or
//    released, an in-flight reservation, a preemption what-if view, a claim
//    written by another scheduler) is seen because the comparison is of the
//    snapshots themselves, not of events;
//  - the node object: entries are keyed by the api::Node the NodeInfo holds
//    (pinned), so a Node update (labels select network-attached slices)
//    starts a fresh entry.
//
// Timeouts and fatal errors are never kept. Failure messages name the claims
// of the pod they were computed for; Allocator::Restate rewrites them for
// the pod being scheduled.
//
// Threading: Begin and SpecOf serialize on an internal lock; Find and Store
// are thread-safe (sharded locks) and are called from parallel Filter calls.
#ifndef GANTRY_SRC_DRA_NODE_MEMO_H_
#define GANTRY_SRC_DRA_NODE_MEMO_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "src/api/dra.h"
#include "src/api/node.h"
#include "src/dra/allocator.h"
#include "src/state/dra_state.h"

namespace gantry::dra {

// Whether two claim specs make the allocator search alike: the same requests
// (names, exactly / firstAvailable, class, selectors, mode, count, admin
// access, tolerations, capacity requests) and constraints. Config is left
// out (it only shapes the materialized result).
bool SameSearchSpec(const api::ResourceClaimSpec& a, const api::ResourceClaimSpec& b);

class NodeMemo {
 public:
  struct Era;
  // What one cycle may reuse: the era and epoch of the snapshot its
  // allocators search. Immutable.
  class View {
   public:
    uint64_t epoch() const { return epoch_; }

   private:
    friend class NodeMemo;
    std::shared_ptr<Era> era_;
    uint64_t epoch_ = 0;
  };

  struct Counters {
    int64_t hits = 0, misses = 0, stores = 0, eras = 0, changed_pools = 0;
  };

  NodeMemo();
  ~NodeMemo();
  NodeMemo(const NodeMemo&) = delete;
  NodeMemo& operator=(const NodeMemo&) = delete;

  // The view of `snapshot` (the one the cycle's allocators search): records
  // which pools changed since the previous view. `live_nodes` (the nodes of
  // the cluster) bounds how many node entries are kept. Null when the
  // snapshot has no inventory or allocations.
  std::shared_ptr<const View> Begin(const std::shared_ptr<const state::DraSnapshot>& snapshot,
                                    size_t live_nodes);
  // The id of what `allocator` asks for: equal for allocators whose claims
  // have the same search spec, in the same order, with the same options
  // (never 0).
  uint64_t SpecOf(const Allocator& allocator);

  // The outcome kept for `spec` on `node`, when it still holds in `view`;
  // null otherwise. Its message names the claims of the allocator that
  // computed it (Allocator::Restate).
  std::shared_ptr<const NodeAllocation> Find(const View& view, uint64_t spec,
                                             const api::Node* node);
  // Keeps `outcome` (computed by an allocator of `spec` over `view`'s
  // snapshot on `node`). Only kSuccess, kUnsatisfiable and kNodeError are
  // kept.
  void Store(const View& view, uint64_t spec, const std::shared_ptr<const api::Node>& node,
             std::shared_ptr<const NodeAllocation> outcome);

  // For results derived from outcomes (framework::NodeTrackedPlugin): appends
  // to `changed` the names of the nodes whose visible pools changed, or that
  // Invalidate named, after the view whose epoch is `*since` and up to
  // `view`; then sets `*since` to `view`'s epoch. False (nothing appended) when it cannot name
  // them:
  // `*since` is 0 or from another era, the log no longer reaches back to it,
  // or a changed pool is visible from nodes other than those its nodeName
  // slices name (network-attached devices).
  bool ChangedNodesSince(const View& view, uint64_t* since, std::vector<std::string>* changed);
  // Records that results on `node_name` computed in `view` must not be
  // reused (a search that timed out): the next views start a new epoch in
  // which the node counts as changed.
  void Invalidate(const View& view, std::string_view node_name);

  Counters counters() const;

 private:
  struct Slot {
    uint64_t spec = 0;
    uint64_t epoch = 0;
    std::shared_ptr<const NodeAllocation> outcome;
  };
  struct Entry {
    std::shared_ptr<const api::Node> node;  // pins the key
    uint64_t era = 0;                       // Era::id the entry belongs to
    absl::InlinedVector<int32_t, 2> pools;  // pools visible from the node
    absl::InlinedVector<Slot, 2> slots;
  };
  // Guards one shard; held for a lookup or an insertion only, so waiters
  // spin (yielding) instead of sleeping.
  class SpinLock {
   public:
    void lock() {
      while (flag_.test_and_set(std::memory_order_acquire)) {
        while (flag_.test(std::memory_order_relaxed)) std::this_thread::yield();
      }
    }
    void unlock() { flag_.clear(std::memory_order_release); }

   private:
    std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
  };
  struct Shard {
    mutable SpinLock mu;
    absl::flat_hash_map<const api::Node*, Entry> entries;
    int64_t hits = 0, misses = 0, stores = 0;
  };
  struct Spec {
    size_t hash = 0;
    uint64_t id = 0;
    AllocatorOptions options;
    std::vector<std::shared_ptr<const api::ResourceClaim>> claims;
  };
  static constexpr size_t kShards = 16;
  static constexpr size_t kSlotsPerNode = 4;
  static constexpr size_t kMaxSpecs = 1024;

  Shard& ShardOf(const api::Node* node) {
    return shards_[(reinterpret_cast<uintptr_t>(node) >> 6) % kShards];
  }
  // Drops entries of old eras and of Node objects nobody else holds.
  void SweepLocked();

  // Appends the names of the nodes from which pool `pool` of `era` is
  // visible; false when that is not only nodes named by nodeName slices.
  static bool PoolNodes(const Era& era, int32_t pool, std::vector<std::string>* out);

  // Bound of the change logs; older halves are dropped (log_floor_).
  static constexpr size_t kMaxLog = 1 << 16;
  // Drops the older half of `log` (entries in epoch order) once it exceeds
  // kMaxLog, raising log_floor_ past what it dropped.
  template <typename T>
  void TrimLocked(std::vector<std::pair<uint64_t, T>>& log) {
    if (log.size() <= kMaxLog) return;
    const size_t drop = log.size() / 2;
    log_floor_ = std::max(log_floor_, log[drop - 1].first);
    log.erase(log.begin(), log.begin() + static_cast<ptrdiff_t>(drop));
  }

  mutable std::mutex mu_;  // Begin, SpecOf, the change logs
  std::shared_ptr<Era> era_;
  // Pools changed per view epoch of the current era, in epoch order, and
  // the nodes invalidated per view epoch.
  std::vector<std::pair<uint64_t, int32_t>> pool_log_;
  std::vector<std::pair<uint64_t, std::string>> node_log_;
  uint64_t log_floor_ = 0;  // the logs hold every change of epochs > log_floor_
  std::shared_ptr<const state::DraAllocations> tracked_;  // allocations of the last view
  uint64_t epoch_ = 0;
  std::vector<Spec> specs_;
  uint64_t next_spec_ = 1;
  std::array<Shard, kShards> shards_;
  std::atomic<size_t> entries_{0};
  int64_t eras_ = 0, changed_pools_ = 0;  // guarded by mu_
};

}  // namespace gantry::dra

#endif  // GANTRY_SRC_DRA_NODE_MEMO_H_
