// The structured device allocator (library gantry_dra): given the DRA
// snapshot, a node and the pod's unallocated ResourceClaims, picks devices
// for every request of every claim, upstream's way (k8s.io/dynamic-resource-
// allocation/structured, "incubating" feature set):
//
//  - depth-first search over claims -> requests -> device slots, devices in
//    inventory order (pools sorted by "driver/pool", slices by name), each
//    later slot of a request starting after the previous pick (combinations);
//    the first complete solution wins;
//  - ExactCount / All; firstAvailable subrequests in order; matchAttribute /
//    distinctAttribute (list attributes as sets); partitionable devices
//    (shared counters); consumable capacity (allowMultipleAllocations,
//    requestPolicy rounding, shareID, consumedCapacity); device taints and
//    request tolerations; admin access; the 32-results-per-claim limit;
//    binding conditions copied into results.
//
// Beyond upstream (same answers, bounded time):
//  - candidate lists per request are computed once per node and checked
//    against the count before searching ("8 devices wanted, 5 free match");
//  - the search prunes a branch when fewer compatible free candidates remain
//    than slots to fill, and stops after `max_steps` device attempts or at
//    the deadline (reported as a timeout, i.e. Unschedulable on that node);
//  - selector results are memoised per (expression, device) for the
//    inventory generation; compiled programs come from a shared cache.
//
// Allocator is prepared once per pod (Create, serial) and Allocate() is
// const and thread-safe: Filter calls it for many nodes in parallel.
#ifndef GANTRY_SRC_DRA_ALLOCATOR_H_
#define GANTRY_SRC_DRA_ALLOCATOR_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "src/api/dra.h"
#include "src/api/node.h"
#include "src/cel/cel.h"
#include "src/state/dra_state.h"

namespace gantry::dra {

// Feature gates relevant to allocation (all on by default, as in 1.37 with
// the beta gates enabled).
struct Features {
  bool admin_access = true;
  bool prioritized_list = true;
  bool partitionable_devices = true;
  bool device_taints = true;
  bool consumable_capacity = true;
  bool binding_conditions = true;
  bool operator==(const Features&) const = default;
};

struct AllocatorOptions {
  Features features;
  // Upper bound on device attempts per node (a safety net behind pruning).
  int64_t max_steps = 2'000'000;
  bool operator==(const AllocatorOptions&) const = default;
};

// The devices chosen on one node, compactly (no API objects): what Filter
// keeps per node; Allocator::Materialize turns it into AllocationResults.
struct Solution {
  struct Pick {
    int32_t device = 0;  // inventory index
    int32_t claim = 0;   // index in the allocator's claims
    int32_t alt = 0;     // request alternative (internal id)
    bool admin = false;
    bool shared = false;  // multi-allocation device: has a shareID and consumedCapacity
    uint32_t consumed_begin = 0, consumed_end = 0;  // range of `consumed`
    int32_t position = 0;                           // 1-based pick position (shareID input)
  };
  absl::InlinedVector<Pick, 4> picks;  // in pick order
  absl::InlinedVector<int16_t, 4> chosen_alt;  // per request of every claim: alternative index
  std::vector<std::pair<api::Symbol, int64_t>> consumed;  // qualified capacity name, milli-units
};

// Outcome of allocating all claims on one node.
struct NodeAllocation {
  enum class Result : uint8_t {
    kSuccess,
    kUnsatisfiable,  // no solution on this node (upstream: nil)
    kNodeError,      // upstream ErrFailedAllocationOnNode (e.g. invalid pools)
    kTimeout,        // deadline or step budget exhausted
    kFatal,          // error for the whole attempt (CEL runtime error, ...)
  };
  Result result = Result::kUnsatisfiable;
  // One per claim, in order; filled on success unless Allocate was asked
  // not to materialize (then see `solution`).
  std::vector<api::AllocationResult> allocations;
  Solution solution;    // on success
  // Prioritized-list score of the solution: sum of 8 - i over the requests
  // served by their subrequest i (upstream Score, before normalisation).
  int64_t prioritized_score = 0;
  std::string message;  // why not (kUnsatisfiable ...), or the error
  // Where `message` names a claim ("claim ns/name"): the byte range and the
  // claim's index, so that an allocator with equivalent claims can restate
  // the message for its own (Allocator::Restate). In message order.
  struct Label {
    uint32_t offset = 0, length = 0;
    int32_t claim = 0;
  };
  absl::InlinedVector<Label, 1> labels;
  int64_t steps = 0;
  // Selector evaluations this search ran (memoized verdicts not counted).
  int64_t cel_evaluations = 0;
  bool ok() const { return result == Result::kSuccess; }
};

// Shared, thread-safe compiled-program cache for DRA selectors.
cel::ProgramCache& DefaultProgramCache();

class Allocator {
 public:
  ~Allocator();
  // Validates the claims against the snapshot (classes exist, features,
  // constraints) and compiles selectors. Errors are fatal for the pod's
  // attempt (upstream: Allocate returning a non-node error).
  static absl::StatusOr<std::unique_ptr<Allocator>> Create(
      const AllocatorOptions& options, std::shared_ptr<const state::DraSnapshot> snapshot,
      std::vector<std::shared_ptr<const api::ResourceClaim>> claims,
      cel::ProgramCache* programs = nullptr);

  // Allocates every claim on `node`. With `materialize` false, a success
  // carries only `solution` (no API objects are built; cheaper for Filter),
  // to be turned into results by Materialize. `preferred` (inventory
  // indexes) changes only the search order: the node's devices listed there
  // are tried first, in that order, then the others in inventory order; the
  // first complete solution still wins, so the answer is as valid as without
  // it (a listed device that does not fit is passed over).
  NodeAllocation Allocate(const api::Node& node,
                          std::chrono::steady_clock::time_point deadline =
                              std::chrono::steady_clock::time_point::max(),
                          bool materialize = true,
                          absl::Span<const int32_t> preferred = {}) const;
  // The AllocationResults (one per claim) of a solution found on `node_name`
  // by this allocator.
  std::vector<api::AllocationResult> Materialize(std::string_view node_name, const Solution& solution) const;

  // `from.message` (an outcome of an allocator whose claims ask for the same,
  // claim by claim) with this allocator's claim names in place of those it
  // names.
  std::string Restate(const NodeAllocation& from) const;

  const state::DraSnapshot& snapshot() const { return *snapshot_; }
  const AllocatorOptions& options() const;
  // The claims being allocated, in order.
  size_t num_claims() const;
  const std::shared_ptr<const api::ResourceClaim>& claim(size_t i) const;

  struct Impl;

 private:
  Allocator() = default;
  std::shared_ptr<const state::DraSnapshot> snapshot_;
  std::unique_ptr<Impl> impl_;
};

// The consumed amount of a capacity under `policy` for a request of
// `requested` milli-units (nullopt: exceeds the policy's maximum).
std::optional<int64_t> RoundCapacity(const api::DeviceCapacity& capacity, std::optional<int64_t> requested);

}  // namespace gantry::dra

#endif  // GANTRY_SRC_DRA_ALLOCATOR_H_
