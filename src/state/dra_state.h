// Dynamic Resource Allocation state: the device inventory built from
// ResourceSlices (and DeviceTaintRules), DeviceClasses, ResourceClaims and
// ResourceClaimTemplates, plus which devices are allocated (from claim
// statuses) or being allocated (in-flight, between Reserve and PreBind).
//
// DraState is fed by events (live reflectors or the simulator) and is
// thread-safe. Scheduling reads it through an immutable DraSnapshot (design
// rule 1): `Snapshot()` returns the same shared_ptr until something changed,
// so a cycle that takes it in PreFilter sees one consistent view during the
// parallel Filter phase while events keep arriving.
//
// Inventory (rebuilt when slices, taint rules change; O(devices)):
//  - pools keyed by (driver, pool name); only slices of the highest
//    generation are kept; a pool is incomplete when it has fewer slices at
//    that generation than resourceSliceCount, invalid on duplicate device
//    names, duplicate counter sets or references to unknown counters;
//  - pools sorted by "driver/pool" (pools with binding conditions last),
//    slices by name within a pool, devices in slice order: every device gets
//    a dense index in that order, which is the allocator's search order;
//  - per node, the nodeName slices are indexed; nodeSelector / allNodes /
//    perDeviceNodeSelection slices are matched against the node on demand;
//  - each device's taints are its own plus those of matching DeviceTaintRules.
//
// Allocations (updated incrementally; copied into the snapshot as a dense
// per-device counter vector only when they changed):
//  - every allocated claim's results (admin-access results excluded, as they
//    never take a device away from others); results with a shareID
//    (consumable capacity) count as one holder of the device each and add
//    their consumedCapacity to it; a shared device is held (and holds its
//    shared counters) while it has a holder, whatever capacity they consume;
//  - in-flight allocations added in Reserve, dropped in Unreserve or when
//    PreBind wrote the claim (AssumeClaim); a PodGroup-level claim's entry is
//    shared by the group's members and counted once.
// After a restart the state is rebuilt from the claims' statuses alone.
//
// Preemption what-if: SnapshotWithReleased() derives a snapshot in which the
// devices of given claims are free (the claims of pods a preemption
// evaluation has removed), and SetReleasedClaims() makes Snapshot() return
// such a view until it is cleared (the group preemption's dry run, which
// schedules members through the normal PreFilter).
#ifndef GANTRY_SRC_STATE_DRA_STATE_H_
#define GANTRY_SRC_STATE_DRA_STATE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/api/dra.h"
#include "src/api/node.h"
#include "src/api/pod.h"
#include "src/api/workload.h"

namespace gantry::state {

// (driver, pool, device) of one device.
struct DeviceKey {
  api::Symbol driver;
  api::Symbol pool;
  api::Symbol device;
  friend bool operator==(const DeviceKey& a, const DeviceKey& b) {
    return a.driver == b.driver && a.pool == b.pool && a.device == b.device;
  }
  template <typename H>
  friend H AbslHashValue(H h, const DeviceKey& k) {
    return H::combine(std::move(h), k.driver, k.pool, k.device);
  }
};

struct DraDevice {
  const api::Device* device = nullptr;  // points into the slice (kept alive by the inventory)
  api::Symbol driver;
  api::Symbol pool;
  int32_t pool_index = 0;
  int32_t slice_index = 0;
  std::vector<api::Taint> taints;  // device taints + DeviceTaintRule taints
};

struct DraSlice {
  std::shared_ptr<const api::ResourceSlice> slice;
  int32_t pool_index = 0;
  int32_t first_device = 0;  // dense index of its first device
  int32_t num_devices = 0;
};

struct DraPool {
  api::Symbol driver;
  api::Symbol name;
  std::string key;  // "driver/pool": the sort key
  int64_t generation = 0;
  bool incomplete = false;
  bool invalid = false;
  std::string invalid_reason;
  bool has_binding_conditions = false;
  std::vector<int32_t> slices;                       // slice indexes, by slice name
  std::vector<const api::CounterSet*> counter_sets;  // all counter sets of the pool
  std::vector<int32_t> counter_consumers;            // devices with consumesCounters
};

// Memoised selector results for one expression over the inventory's devices:
// 0 unknown, 1 true, 2 false, 3 error. Lock-free reads; racing writers write
// the same value.
class SelectorMemo {
 public:
  explicit SelectorMemo(size_t n) : n_(n), v_(new std::atomic<uint8_t>[n]) {
    for (size_t i = 0; i < n; ++i) v_[i].store(0, std::memory_order_relaxed);
  }
  uint8_t Get(int32_t i) const {
    return v_[static_cast<size_t>(i)].load(std::memory_order_relaxed);
  }
  void Set(int32_t i, uint8_t x) const {
    v_[static_cast<size_t>(i)].store(x, std::memory_order_relaxed);
  }
  size_t size() const { return n_; }

 private:
  size_t n_;
  std::unique_ptr<std::atomic<uint8_t>[]> v_;
};

// The values of one attribute across the inventory's devices (indexed like
// them), for constraints: a scalar is a 1-element list, a device without the
// attribute is not `present`. Points into the slices the inventory keeps.
struct AttributeTable {
  struct Entry {
    const api::AttributeValue* values = nullptr;
    uint32_t count = 0;
    bool present = false;
  };
  std::vector<Entry> entries;
};

// What the inventory knows about one node named by nodeName slices.
struct DraNodeEntry {
  std::vector<int32_t> slices;   // nodeName slices with devices, in search order
  std::vector<int32_t> devices;  // their devices, in search order
  // `metadata.name In [node]`, the nodeSelector of allocations pinned to it.
  std::shared_ptr<const api::NodeSelector> pin;
};

// The immutable device inventory of one slice/taint-rule generation.
class DraInventory {
 public:
  uint64_t generation = 0;
  std::vector<DraPool> pools;
  std::vector<DraSlice> slices;  // in search order (pool order, then slice name)
  std::vector<DraDevice> devices;
  // Per device (same index), a compact summary the allocator checks first so
  // that the common device (complete, valid pool; no binding conditions,
  // counters, multi-allocation or taints) costs no pointer chasing.
  enum DeviceFlag : uint8_t {
    kPoolIncomplete = 1,
    kPoolInvalid = 2,
    kBindingConditions = 4,
    kMultiAllocation = 8,
    kConsumesCounters = 16,
    kTainted = 32,
  };
  std::vector<uint8_t> device_flags;
  absl::flat_hash_map<std::string, DraNodeEntry> nodes;  // by node name (nodeName slices)
  std::vector<int32_t> other_slices;  // nodeSelector / allNodes / perDevice slices
  absl::flat_hash_map<DeviceKey, int32_t> device_index;

  // Dense index of a device, or -1.
  int32_t Find(api::Symbol driver, api::Symbol pool, api::Symbol device) const;
  // Slices with devices that may be visible from `node` (slices without
  // devices are left out), in search order. Per-device selection is checked
  // by DeviceOnNode.
  void SlicesForNode(const api::Node& node, std::vector<int32_t>* out) const;
  // The entry of a node with nodeName slices, or null.
  const DraNodeEntry* FindNode(std::string_view node_name) const;
  // `metadata.name In [node_name]` (shared for nodes with nodeName slices).
  std::shared_ptr<const api::NodeSelector> NodePinSelector(std::string_view node_name) const;
  // Whether device `i` is available on `node` (slice- or device-level selection).
  bool DeviceOnNode(int32_t i, const api::Node& node) const;
  // The memo table of one selector expression (created on first use).
  const SelectorMemo* Memo(std::string_view expression) const;
  // The table of one fully qualified attribute (built on first use, O(devices)).
  const AttributeTable* Attributes(api::Symbol name) const;

 private:
  mutable std::mutex memo_mu_;
  mutable absl::flat_hash_map<std::string, std::unique_ptr<SelectorMemo>> memo_;
  mutable absl::flat_hash_map<api::Symbol, std::unique_ptr<AttributeTable>> attributes_;
};

// What the live allocation results sharing one device (results with a
// shareID: consumable capacity, allowMultipleAllocations) hold of it.
struct SharedUse {
  // How many such results there are; every stored SharedUse has at least
  // one. A result holds the device whatever capacity it consumed, zero or
  // none included.
  int32_t holders = 0;
  // Capacity consumed by them together: qualified capacity name ->
  // milli-units; capacities nobody consumes are left out.
  std::vector<std::pair<api::Symbol, int64_t>> capacity;

  // Adds (sign +1) or takes away (sign -1) `result`, one result with a
  // shareID on this device; false when no holder is left (the caller drops
  // the entry).
  bool Apply(const api::DeviceRequestAllocationResult& result, int sign);
  friend bool operator==(const SharedUse&, const SharedUse&) = default;
};

// Allocated-state of one snapshot, indexed like the inventory's devices.
//
// A device is *held* while some live allocation result names it: an
// exclusive one (`in_use`) or one with a shareID (`shared`). A held device
// that consumes shared counters (partitionable devices) holds its counters,
// once however many results share it. The allocator hands out no held device
// exclusively and shares none that is held exclusively.
struct DraAllocations {
  uint64_t generation = 0;
  std::vector<uint16_t> in_use;  // exclusive allocations per device
  // Shared devices: only those with at least one holder have an entry.
  absl::flat_hash_map<int32_t, SharedUse> shared;
  // Allocated devices not present in the inventory (kept for diagnostics).
  int64_t unknown_devices = 0;

  bool InUse(int32_t i) const {
    return i >= 0 && static_cast<size_t>(i) < in_use.size() && in_use[i] > 0;
  }
  bool Shared(int32_t i) const { return !shared.empty() && shared.contains(i); }
  bool Held(int32_t i) const { return InUse(i) || Shared(i); }
  int64_t Consumed(int32_t device, api::Symbol capacity) const;
};

using DeviceClassMap = absl::flat_hash_map<std::string, std::shared_ptr<const api::DeviceClass>>;

struct DraSnapshot {
  std::shared_ptr<const DraInventory> inventory;
  std::shared_ptr<const DraAllocations> allocations;
  std::shared_ptr<const DeviceClassMap> classes;

  const api::DeviceClass* FindClass(std::string_view name) const;
};

// `base` with the devices of `released` allocations free again: exclusive
// counts decremented, shares of shared devices given back (one holder and
// its consumed capacity each; admin-access results never held a device), and
// the devices of `held` allocations taken (counted as in use, shared with
// their capacity consumed). The inventory and classes are shared with `base`.
std::shared_ptr<const DraSnapshot> SnapshotWithReleased(
    const DraSnapshot& base, const std::vector<const api::AllocationResult*>& released,
    const std::vector<const api::AllocationResult*>& held = {});

// Whether the results of `allocations`, counted together, could be held on
// top of what `view` holds without a double allocation and without exceeding
// a device's capacity or a shared counter (the preemption dry run asks this
// before it reprieves a victim whose claims it released). That is, for every
// device of the inventory the results name:
//  - an exclusive result (no shareID) needs the device held by nobody else:
//    not in `view` (exclusively or by a share) and by no other result;
//  - results with a shareID need the device held exclusively by nobody, and
//    per capacity the device declares, what `view`'s shares consume plus
//    what these results consume (consumedCapacity) at most its value
//    (capacities the device does not declare bound nothing);
//  - the devices `view` does not hold yet, each counted once, must keep
//    every counter they consume (consumesCounters) within its counter set's
//    value, summed with what the devices `view` holds in the same pool
//    consume (a shared device holds its counters once, so shares of a
//    device `view` already holds add none).
// Admin-access results and devices missing from the inventory hold nothing
// and always fit. True when `view` has no inventory or allocations.
bool AllocationsFit(const DraSnapshot& view,
                    const std::vector<const api::AllocationResult*>& allocations);

// "namespace/name" of every ResourceClaim `pod` uses: spec.resourceClaims by
// name, or from a template as recorded in status.resourceClaimStatuses, and
// the claim for its extended resources (status.extendedResourceClaimStatus).
std::vector<std::string> PodClaimKeys(const api::Pod& pod);
// A native PodGroup's spec.resourceClaims: pods of the group whose claim
// entry matches one exactly use the group's claim, reserved for the group.
struct PodGroupClaims {
  std::string namespace_;
  std::string name;
  std::string uid;  // "" when unknown
  std::vector<api::PodGroupResourceClaim> claims;
};

struct DraStats {
  int64_t slices = 0, pools = 0, devices = 0, classes = 0, claims = 0, allocated_claims = 0,
          in_flight = 0, inventory_rebuilds = 0, claim_templates = 0;
  // Claims written by the scheduler and not yet seen back from the informer,
  // and informer claim events ignored because the stored claim was newer.
  int64_t assumed_claims = 0, stale_claim_events = 0;
};

class DraState {
 public:
  DraState();
  ~DraState();
  DraState(const DraState&) = delete;
  DraState& operator=(const DraState&) = delete;

  // ---- Event feed (idempotent; the newest object replaces the stored one) --
  // UpsertClaim is the informer's feed and keeps claims as upstream's assume
  // cache does: a claim older (by resourceVersion, same UID) than the stored
  // one is ignored, so a late event cannot replace what AssumeClaim stored
  // after a write and free its devices; an equal or newer one replaces it.
  void UpsertSlice(std::shared_ptr<const api::ResourceSlice> slice);
  void DeleteSlice(std::string_view name);
  void UpsertClass(std::shared_ptr<const api::DeviceClass> cls);
  void DeleteClass(std::string_view name);
  void UpsertClaim(std::shared_ptr<const api::ResourceClaim> claim);
  void DeleteClaim(std::string_view ns, std::string_view name);
  void UpsertTemplate(std::shared_ptr<const api::ResourceClaimTemplate> tmpl);
  void DeleteTemplate(std::string_view ns, std::string_view name);
  void UpsertTaintRule(std::shared_ptr<const api::DeviceTaintRule> rule);
  void DeleteTaintRule(std::string_view name);

  // ---- Reads --------------------------------------------------------------
  std::shared_ptr<const api::ResourceClaim> GetClaim(std::string_view ns,
                                                     std::string_view name) const;
  std::shared_ptr<const api::ResourceClaimTemplate> GetTemplate(std::string_view ns,
                                                                std::string_view name) const;
  std::shared_ptr<const api::DeviceClass> GetClass(std::string_view name) const;
  std::vector<std::shared_ptr<const api::ResourceClaim>> Claims() const;
  // The DeviceClass that serves the extended resource `resource` (extended
  // resources backed by DRA), "" when none: the class whose
  // spec.extendedResourceName it is (of several, the newest by
  // creationTimestamp, on a tie the first by name), or the class <name> of
  // the implicit deviceclass.resource.kubernetes.io/<name>.
  std::string ExtendedResourceClass(std::string_view resource) const;
  // The claim the scheduler created for the extended resources of the pod
  // with `pod_uid` (annotation resource.kubernetes.io/extended-resource-claim
  // "true", controlled by the pod), null when there is none.
  std::shared_ptr<const api::ResourceClaim> FindExtendedResourceClaim(
      std::string_view pod_uid) const;

  // ---- PodGroup-level claims (KEP-5729) ------------------------------------
  // Fed from native PodGroup events: the group's spec.resourceClaims (a group
  // without claims is removed).
  void SetPodGroupClaims(PodGroupClaims group);
  void RemovePodGroupClaims(std::string_view ns, std::string_view name);
  std::optional<PodGroupClaims> FindPodGroupClaims(std::string_view ns,
                                                   std::string_view name) const;
  // The current immutable view (rebuilt lazily when anything changed).
  std::shared_ptr<const DraSnapshot> Snapshot();
  DraStats Stats() const;

  // The allocated claims among `claim_keys` whose every reservedFor consumer
  // is leaving: what evicting those consumers would free. `leaving` is asked
  // per (claim, consumer): a pod by its UID, a PodGroup (resource
  // `podgroups`, in the claim's namespace) by its name.
  using LeavingConsumer = std::function<bool(const api::ResourceClaim& claim,
                                             const api::ResourceClaimConsumerReference& consumer)>;
  std::vector<std::shared_ptr<const api::ResourceClaim>> ReleasableClaims(
      const std::vector<std::string>& claim_keys, const LeavingConsumer& leaving) const;

  // ---- Preemption what-if (scheduling thread only) -------------------------
  // While `claims` is non-empty, Snapshot() returns the current view with
  // their allocations released (SnapshotWithReleased); an empty list ends it.
  void SetReleasedClaims(std::vector<std::shared_ptr<const api::ResourceClaim>> claims);

  // ---- In-flight allocations (Reserve / Unreserve / PreBind) --------------
  // Marks `allocation` of the claim `claim_uid` as being allocated; replaces
  // an earlier in-flight entry of that claim.
  void AddInFlight(const std::string& claim_uid, const api::AllocationResult& allocation);
  void RemoveInFlight(const std::string& claim_uid);
  bool IsInFlight(const std::string& claim_uid) const;
  // PodGroup-level claims: one allocation for the PodGroup `group_uid`,
  // shared by its members. Each member (`sharer`, a pod UID) holds the entry
  // from Reserve until Unreserve; the entry goes with the last sharer or when
  // PreBind wrote the claim (AssumeClaim). A claim in flight for another
  // group (or a single pod) is replaced, as AddInFlight does.
  void AddInFlightForGroup(const std::string& claim_uid, const api::AllocationResult& allocation,
                           const std::string& group_uid, const std::string& sharer);
  // The allocation in flight for the PodGroup `group_uid`, nullopt when the
  // claim is not in flight or in flight for someone else.
  std::optional<api::AllocationResult> InFlightForGroup(const std::string& claim_uid,
                                                        const std::string& group_uid) const;
  // Drops `sharer` from a PodGroup claim's in-flight entry (no-op for other entries).
  void RemoveInFlightSharer(const std::string& claim_uid, const std::string& sharer);

  // ---- Waiting for device status (binding conditions) ----------------------
  // How PreBind lets time pass while it waits for drivers to report device
  // conditions: offline, the simulator advances virtual time by `micros` and
  // plays the drivers; the hook returns false when it cannot wait. Unset
  // (live), PreBind sleeps. Set before scheduling starts.
  using DeviceStatusWait = std::function<bool(int64_t micros)>;
  void SetDeviceStatusWait(DeviceStatusWait wait);
  bool HasDeviceStatusWait() const;
  // Calls the hook (outside the state's lock); false when none is set.
  bool WaitForDeviceStatus(int64_t micros) const;
  // After the scheduler wrote the claim: store it (as an update event would)
  // and drop the in-flight entry in one step. `claim` carries the
  // resourceVersion the write's answer gave, so informer events older than
  // the write are ignored until the informer delivers that version or a newer
  // one (then the claim is no longer assumed). When the informer has already
  // delivered that version or a newer one, the stored claim stays and
  // nothing is assumed.
  void AssumeClaim(std::shared_ptr<const api::ResourceClaim> claim);
  bool IsClaimAssumed(std::string_view ns, std::string_view name) const;
  // Drops an assumed claim for the informer's newest version of it (a claim
  // the informer never delivered is removed): for a write whose effect must
  // not be trusted any more.
  void RestoreClaim(std::string_view ns, std::string_view name);

 private:
  struct Impl;
  void ApplyAllocationLocked(const api::AllocationResult& a, int sign);
  void UpsertClaimLocked(std::shared_ptr<const api::ResourceClaim> claim);
  void RebuildInventoryLocked();
  void RebuildExtendedResourcesLocked();

  mutable std::mutex mu_;
  std::unique_ptr<Impl> impl_;
  DeviceStatusWait device_status_wait_;  // guarded by mu_
};

}  // namespace gantry::state

#endif  // GANTRY_SRC_STATE_DRA_STATE_H_
