// Shared (allowMultipleAllocations) devices that also consume shared
// counters, through allocate / release cycles of DraState and the allocator
// over its snapshots: such a device holds its counters once, while at least
// one live allocation result shares it (whatever capacity that result
// consumed, zero included), and gives them back with the last one. A device
// that is shared cannot be handed out exclusively, and vice versa.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "src/dra/allocator.h"
#include "src/sim/loader.h"
#include "src/state/dra_state.h"

namespace gantry {
namespace {

// One pool on node-1 with one counter set (mem: 4) drawn on in full by
//  - `shared`: multi-allocation, capacity bw: 4 (no request policy);
//  - `nocap`:  multi-allocation without capacities (its shares consume nothing);
//  - `part`:   an ordinary partition.
// Holding any one of them leaves no counters for the other two. `plain`
// (multi-allocation, no capacities, no counters) is held by nothing else.
constexpr char kInventory[] = R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: class-a}
spec: {selectors: [{cel: {expression: 'device.driver == "driver-a"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: counters}
spec:
  driver: driver-a
  pool: {name: pool-1, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  sharedCounters: [{name: cs, counters: {mem: {value: '4'}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: devices}
spec:
  driver: driver-a
  pool: {name: pool-1, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  devices:
  - name: shared
    attributes: {kind: {string: shared}}
    allowMultipleAllocations: true
    capacity: {bw: {value: '4'}}
    consumesCounters: [{counterSet: cs, counters: {mem: {value: '4'}}}]
  - name: nocap
    attributes: {kind: {string: nocap}}
    allowMultipleAllocations: true
    consumesCounters: [{counterSet: cs, counters: {mem: {value: '4'}}}]
  - name: part
    attributes: {kind: {string: part}}
    consumesCounters: [{counterSet: cs, counters: {mem: {value: '4'}}}]
  - name: plain
    attributes: {kind: {string: plain}}
    allowMultipleAllocations: true
)";

api::ObjectSet Load(const std::string& yaml) {
  api::ObjectSet objects;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText("test", yaml, false, &objects, &stats);
  EXPECT_TRUE(st.ok()) << st << "\n" << yaml;
  return objects;
}

// An unallocated claim `name` with one request for the device of `kind`,
// asking for `bw` of capacity bw (nullopt: no capacity request).
std::shared_ptr<const api::ResourceClaim> MakeClaim(const std::string& name,
                                                    const std::string& kind,
                                                    std::optional<int> bw) {
  std::string request = StrCat(
      "deviceClassName: class-a, selectors: [{cel: {expression: "
      "'device.attributes[\"driver-a\"].kind == \"",
      kind, "\"'}}]");
  if (bw) request += StrCat(", capacity: {requests: {bw: '", *bw, "'}}");
  api::ObjectSet objects =
      Load(StrCat("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: ", name,
                  ", namespace: default, uid: uid-", name,
                  "}\nspec: {devices: {requests: [{name: r, exactly: {", request, "}}]}}\n"));
  EXPECT_EQ(objects.resource_claims.size(), 1u);
  return std::make_shared<const api::ResourceClaim>(
      objects.resource_claims.empty() ? api::ResourceClaim() : objects.resource_claims[0]);
}

api::Node Node1() {
  api::Node node;
  node.meta.name = "node-1";
  return node;
}

// Allocates `claim` alone on node-1 over `snapshot`; nullopt when it does not fit.
std::optional<api::AllocationResult> TryAllocate(std::shared_ptr<const state::DraSnapshot> snapshot,
                                                 std::shared_ptr<const api::ResourceClaim> claim,
                                                 const dra::Features& features = {}) {
  dra::AllocatorOptions opts;
  opts.features = features;
  auto allocator = dra::Allocator::Create(opts, std::move(snapshot), {std::move(claim)});
  EXPECT_TRUE(allocator.ok()) << allocator.status();
  if (!allocator.ok()) return std::nullopt;
  dra::NodeAllocation out = (*allocator)->Allocate(Node1());
  EXPECT_TRUE(out.ok() || out.result == dra::NodeAllocation::Result::kUnsatisfiable) << out.message;
  if (!out.ok()) return std::nullopt;
  EXPECT_EQ(out.allocations.size(), 1u);
  return out.allocations.at(0);
}

// What happens to DraState in one step.
enum class Op {
  kAllocate,     // allocate `claim` now and store it allocated (PreBind's write, or a watch event)
  kUpsertAgain,  // store the allocated `claim` once more, unchanged (AssumeClaim, then its event)
  kDeallocate,   // store `claim` without its allocation
  kDelete,       // delete `claim`
  kAddInFlight,  // allocate `claim` now and hold it in flight (Reserve)
  kRemoveInFlight,  // drop its in-flight entry (Unreserve)
  kCheck,           // allocating `claim` must fit (`fits`) or not; nothing is stored
};

struct Step {
  Op op;
  std::string claim;
  std::string kind;                      // kAllocate, kAddInFlight, kCheck
  std::optional<int> bw = std::nullopt;  // capacity request, as MakeClaim
  bool fits = true;                      // kCheck
  bool consumable = true;  // kAllocate, kAddInFlight, kCheck: the DRAConsumableCapacity gate
};

Step Allocate(std::string claim, std::string kind, std::optional<int> bw = std::nullopt) {
  return {Op::kAllocate, std::move(claim), std::move(kind), bw};
}
Step InFlight(std::string claim, std::string kind, std::optional<int> bw = std::nullopt) {
  return {Op::kAddInFlight, std::move(claim), std::move(kind), bw};
}
Step Fits(std::string kind, std::optional<int> bw = std::nullopt) {
  return {Op::kCheck, "probe", std::move(kind), bw};
}
Step Rejected(std::string kind, std::optional<int> bw = std::nullopt) {
  return {Op::kCheck, "probe", std::move(kind), bw, false};
}
// With DRAConsumableCapacity off: multi-allocation devices are handed out
// exclusively, without a shareID.
Step AllocateExclusive(std::string claim, std::string kind) {
  return {Op::kAllocate, std::move(claim), std::move(kind), std::nullopt, true, false};
}
Step FitsExclusive(std::string kind) {
  return {Op::kCheck, "probe", std::move(kind), std::nullopt, true, false};
}
Step RejectedExclusive(std::string kind) {
  return {Op::kCheck, "probe", std::move(kind), std::nullopt, false, false};
}
Step Deallocate(std::string claim) { return {Op::kDeallocate, std::move(claim), ""}; }
Step Delete(std::string claim) { return {Op::kDelete, std::move(claim), ""}; }
Step UpsertAgain(std::string claim) { return {Op::kUpsertAgain, std::move(claim), ""}; }
Step RemoveInFlight(std::string claim) { return {Op::kRemoveInFlight, std::move(claim), ""}; }

struct Case {
  const char* name;
  std::vector<Step> steps;
};

// DraState with kInventory and the claims of the steps run so far.
class Harness {
 public:
  Harness() {
    static const api::ObjectSet* inventory = new api::ObjectSet(Load(kInventory));
    for (const auto& s : inventory->resource_slices)
      dra_.UpsertSlice(std::make_shared<const api::ResourceSlice>(s));
    for (const auto& d : inventory->device_classes)
      dra_.UpsertClass(std::make_shared<const api::DeviceClass>(d));
  }

  state::DraState& dra() { return dra_; }
  // `name` as last stored (allocated, in flight or released).
  std::shared_ptr<const api::ResourceClaim> claim(const std::string& name) const {
    return stored_.at(name);
  }
  // The allocation of claim `name`: stored, or held in flight.
  const api::AllocationResult& allocation(const std::string& name) const {
    return allocations_.at(name);
  }

  // Runs `s` against DraState; a kCheck runs over `view` when given.
  void Run(const Step& s, std::shared_ptr<const state::DraSnapshot> view = nullptr) {
    dra::Features features;
    features.consumable_capacity = s.consumable;
    switch (s.op) {
      case Op::kAllocate:
      case Op::kAddInFlight: {
        auto claim = MakeClaim(s.claim, s.kind, s.bw);
        std::optional<api::AllocationResult> a = TryAllocate(dra_.Snapshot(), claim, features);
        ASSERT_TRUE(a.has_value()) << "claim " << s.claim << " does not fit";
        allocations_[s.claim] = *a;
        if (s.op == Op::kAddInFlight) {
          dra_.AddInFlight(claim->meta.uid, *a);
          stored_[s.claim] = claim;
          break;
        }
        auto allocated = std::make_shared<api::ResourceClaim>(*claim);
        allocated->status.allocation = *a;
        stored_[s.claim] = allocated;
        dra_.UpsertClaim(allocated);
        break;
      }
      case Op::kUpsertAgain:
        dra_.UpsertClaim(std::make_shared<const api::ResourceClaim>(*stored_.at(s.claim)));
        break;
      case Op::kDeallocate: {
        auto released = std::make_shared<api::ResourceClaim>(*stored_.at(s.claim));
        released->status.allocation.reset();
        stored_[s.claim] = released;
        dra_.UpsertClaim(released);
        break;
      }
      case Op::kDelete:
        dra_.DeleteClaim("default", s.claim);
        stored_.erase(s.claim);
        break;
      case Op::kRemoveInFlight:
        dra_.RemoveInFlight(stored_.at(s.claim)->meta.uid);
        break;
      case Op::kCheck: {
        if (view == nullptr) view = dra_.Snapshot();
        const bool fits = TryAllocate(view, MakeClaim(s.claim, s.kind, s.bw), features).has_value();
        EXPECT_EQ(fits, s.fits) << s.kind << (s.bw ? StrCat(" bw ", *s.bw) : "")
                                << (s.consumable ? "" : " exclusive");
        break;
      }
    }
  }

 private:
  state::DraState dra_;
  std::map<std::string, std::shared_ptr<const api::ResourceClaim>> stored_;
  std::map<std::string, api::AllocationResult> allocations_;
};

TEST(DraSharedDevice, HoldsItsCountersWhileSharedAndOnlyThen) {
  const Case cases[] = {
      {"a partition fits the counters of a fresh pool",
       {Fits("part"), Fits("shared", 1), Fits("nocap")}},
      {"a shared device holds its counters against a partition",
       {Allocate("a", "shared", 1), Rejected("part"), Rejected("nocap")}},
      {"a second share of a held device does not pay its counters again",
       {Allocate("a", "shared", 1), Fits("shared", 1), Allocate("b", "shared", 3),
        Rejected("shared", 1)}},
      {"a share of zero capacity holds the counters",
       {Allocate("a", "shared", 0), Rejected("part"), Fits("shared", 4)}},
      {"a share without capacities holds the counters",
       {Allocate("a", "nocap"), Rejected("part"), Fits("nocap")}},
      {"the last share released gives the counters back",
       {Allocate("a", "shared", 1), Deallocate("a"), Fits("part"), Fits("nocap")}},
      {"a released shared device pays its counters again",
       {Allocate("a", "shared", 1), Deallocate("a"), Allocate("p", "part"), Rejected("shared", 1),
        Rejected("nocap")}},
      {"a released share of zero capacity pays its counters again",
       {Allocate("a", "shared", 0), Deallocate("a"), Allocate("p", "part"), Rejected("shared", 0)}},
      {"a released share without capacities pays its counters again",
       {Allocate("a", "nocap"), Deallocate("a"), Allocate("p", "part"), Rejected("nocap")}},
      {"a deleted claim releases its share",
       {Allocate("a", "nocap"), Delete("a"), Fits("part"), Allocate("p", "part"),
        Rejected("nocap")}},
      {"one of two shares released: the device still holds the counters",
       {Allocate("a", "shared", 1), Allocate("b", "shared", 0), Deallocate("a"), Rejected("part"),
        Fits("shared", 4), Deallocate("b"), Fits("part")}},
      {"two shares without capacities, both released",
       {Allocate("a", "nocap"), Allocate("b", "nocap"), Deallocate("b"), Rejected("part"),
        Deallocate("a"), Fits("part"), Allocate("p", "part"), Rejected("nocap")}},
      {"a claim stored twice is one holder",
       {Allocate("a", "nocap"), UpsertAgain("a"), UpsertAgain("a"), Deallocate("a"), Fits("part")}},
      {"an in-flight share holds the counters until Unreserve",
       {InFlight("a", "shared", 0), Rejected("part"), Fits("shared", 4), RemoveInFlight("a"),
        Fits("part"), Allocate("p", "part"), Rejected("shared", 0)}},
      {"an in-flight share written by PreBind is one holder",
       {InFlight("a", "nocap"), Allocate("a", "nocap"), Rejected("part"), Deallocate("a"),
        Fits("part")}},
      {"a shared device is not handed out exclusively while shared",
       {Allocate("a", "plain"), RejectedExclusive("plain"), Deallocate("a"),
        FitsExclusive("plain")}},
      {"a shared device holding counters is not handed out exclusively",
       {Allocate("a", "nocap"), RejectedExclusive("nocap"), Deallocate("a"),
        FitsExclusive("nocap")}},
      {"a device held exclusively is not shared",
       {AllocateExclusive("x", "plain"), Rejected("plain"), Deallocate("x"), Fits("plain")}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h;
    for (size_t i = 0; i < c.steps.size(); ++i) {
      SCOPED_TRACE(StrCat("step ", i));
      h.Run(c.steps[i]);
      if (::testing::Test::HasFatalFailure()) break;
    }
  }
}

// Preemption what-if views (SnapshotWithReleased): releasing a claim gives
// its shares back, holding an allocation adds them, with the same meaning of
// "held" as DraState's own snapshot.
TEST(DraSharedDevice, WhatIfViewsReleaseAndHoldShares) {
  struct ViewCase {
    const char* name;
    std::vector<Step> base;             // run against DraState first
    std::vector<std::string> released;  // claims of `base` whose allocations the view releases
    // Claims (name, kind) allocated one after the other over the view built
    // so far and held in it.
    std::vector<std::pair<std::string, std::string>> held;
    std::vector<Step> checks;  // kCheck steps over the final view
  };
  const ViewCase cases[] = {
      {"releasing the only share frees the counters",
       {Allocate("a", "shared", 1)},
       {"a"},
       {},
       {Fits("part")}},
      {"a released share pays the counters again against a held partition",
       {Allocate("a", "shared", 1)},
       {"a"},
       {{"p", "part"}},
       {Rejected("shared", 1), Rejected("nocap")}},
      {"a released share of zero capacity pays the counters again",
       {Allocate("a", "shared", 0)},
       {"a"},
       {{"p", "part"}},
       {Rejected("shared", 0)}},
      {"a held share without capacities holds the counters",
       {},
       {},
       {{"z", "nocap"}},
       {Rejected("part"), Fits("nocap"), RejectedExclusive("nocap")}},
      {"a held share of zero capacity holds the counters",
       {},
       {},
       {{"z", "nocap"}, {"y", "nocap"}},
       {Rejected("part"), Rejected("shared", 0)}},
      {"releasing one of two shares without capacities keeps the device held",
       {Allocate("a", "nocap"), Allocate("b", "nocap")},
       {"a"},
       {},
       {Rejected("part"), Fits("nocap")}},
      {"releasing both shares frees the device",
       {Allocate("a", "nocap"), Allocate("b", "nocap")},
       {"a", "b"},
       {{"p", "part"}},
       {Rejected("nocap")}},
      {"releasing a partition lets a share take the counters",
       {Allocate("p", "part")},
       {"p"},
       {{"a", "shared"}},
       {Rejected("part"), Rejected("shared", 1)}},
  };
  for (const ViewCase& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h;
    for (const Step& s : c.base) h.Run(s);
    if (::testing::Test::HasFatalFailure()) continue;
    std::shared_ptr<const state::DraSnapshot> base = h.dra().Snapshot();
    std::vector<const api::AllocationResult*> released, held;
    for (const std::string& name : c.released) released.push_back(&h.allocation(name));
    std::vector<api::AllocationResult> held_results;
    held_results.reserve(c.held.size());
    for (const auto& [name, kind] : c.held) {
      std::optional<api::AllocationResult> a = TryAllocate(
          state::SnapshotWithReleased(*base, released, held), MakeClaim(name, kind, std::nullopt));
      ASSERT_TRUE(a.has_value()) << name << " does not fit the view";
      held_results.push_back(*a);
      held.push_back(&held_results.back());
    }
    std::shared_ptr<const state::DraSnapshot> view =
        state::SnapshotWithReleased(*base, released, held);
    for (const Step& s : c.checks) h.Run(s, view);
  }
}

}  // namespace
}  // namespace gantry
