// DraState: which DeviceClass serves an extended resource (explicit
// spec.extendedResourceName, implicit deviceclass.resource.kubernetes.io/<class>,
// clashes), the index of the claims the scheduler created for pods'
// extended resources, the holders of shared devices, and whether an
// allocation fits again on top of a view (AllocationsFit).
#include "src/state/dra_state.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simdjson.h"

namespace gantry::state {
namespace {

// Decodes one object with `decode` (a top-level api::Decode* function).
template <typename T>
std::shared_ptr<const T> Decode(std::string_view json,
                                absl::StatusOr<T> (*decode)(api::JsonValue)) {
  simdjson::dom::parser parser;
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS) << json;
  absl::StatusOr<T> obj = decode(v);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return std::make_shared<const T>(obj.ok() ? *std::move(obj) : T());
}

std::shared_ptr<const api::DeviceClass> Class(std::string_view json) {
  return Decode<api::DeviceClass>(json, &api::DecodeDeviceClass);
}

std::shared_ptr<const api::ResourceClaim> Claim(std::string_view json) {
  return Decode<api::ResourceClaim>(json, &api::DecodeResourceClaim);
}

TEST(DraStateExtendedResources, ClassServingAResource) {
  struct Case {
    const char* name;
    std::vector<std::string> classes;  // DeviceClass JSON, upserted in order
    std::vector<std::string> deleted;  // then these class names are deleted
    std::string resource;
    std::string want;  // "" = none
  };
  const std::string a_old =
      R"({"metadata":{"name":"a","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"extendedResourceName":"example.com/gpu"}})";
  const std::string b_new =
      R"({"metadata":{"name":"b","creationTimestamp":"2026-02-01T00:00:00Z"},"spec":{"extendedResourceName":"example.com/gpu"}})";
  const std::string c_same =
      R"({"metadata":{"name":"c","creationTimestamp":"2026-02-01T00:00:00Z"},"spec":{"extendedResourceName":"example.com/gpu"}})";
  const Case cases[] = {
      {"explicit name", {a_old}, {}, "example.com/gpu", "a"},
      {"implicit name of a class with an explicit one",
       {a_old},
       {},
       "deviceclass.resource.kubernetes.io/a",
       "a"},
      {"implicit name of a class without one",
       {R"({"metadata":{"name":"plain"}})"},
       {},
       "deviceclass.resource.kubernetes.io/plain",
       "plain"},
      {"unknown resource", {a_old}, {}, "example.com/nic", ""},
      {"the newer class wins a clash", {a_old, b_new}, {}, "example.com/gpu", "b"},
      {"order of arrival does not matter", {b_new, a_old}, {}, "example.com/gpu", "b"},
      {"same creation time: the first name wins", {c_same, b_new}, {}, "example.com/gpu", "b"},
      {"deleting the winner hands the name on", {a_old, b_new}, {"b"}, "example.com/gpu", "a"},
      {"deleted class serves nothing", {a_old}, {"a"}, "deviceclass.resource.kubernetes.io/a", ""},
      {"a class renaming its resource gives the old one up",
       {a_old, R"({"metadata":{"name":"a"},"spec":{"extendedResourceName":"example.com/tpu"}})"},
       {},
       "example.com/gpu",
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DraState dra;
    for (const std::string& json : c.classes) dra.UpsertClass(Class(json));
    for (const std::string& name : c.deleted) dra.DeleteClass(name);
    EXPECT_EQ(dra.ExtendedResourceClass(c.resource), c.want);
  }
}

TEST(DraStateExtendedResources, FindsTheClaimCreatedForAPod) {
  DraState dra;
  const std::string meta_tail =
      R"("namespace":"ns","annotations":{"resource.kubernetes.io/extended-resource-claim":"true"},)"
      R"("ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"pod-uid","controller":true}]})";
  dra.UpsertClaim(
      Claim(R"({"metadata":{"name":"p-extended-resources-abcde","uid":"c1",)" + meta_tail + "}"));
  // Annotation missing, or not "true", or the pod is no controller: not the pod's.
  dra.UpsertClaim(Claim(
      R"({"metadata":{"name":"other","namespace":"ns","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"q","uid":"q-uid","controller":true}]}})"));
  dra.UpsertClaim(Claim(
      R"({"metadata":{"name":"false","namespace":"ns","annotations":{"resource.kubernetes.io/extended-resource-claim":"false"},"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"r","uid":"r-uid","controller":true}]}})"));
  dra.UpsertClaim(Claim(
      R"({"metadata":{"name":"notcontroller","namespace":"ns","annotations":{"resource.kubernetes.io/extended-resource-claim":"true"},"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"s","uid":"s-uid"}]}})"));
  auto found = dra.FindExtendedResourceClaim("pod-uid");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->meta.name, "p-extended-resources-abcde");
  EXPECT_EQ(dra.FindExtendedResourceClaim("q-uid"), nullptr);
  EXPECT_EQ(dra.FindExtendedResourceClaim("r-uid"), nullptr);
  EXPECT_EQ(dra.FindExtendedResourceClaim("s-uid"), nullptr);
  dra.DeleteClaim("ns", "p-extended-resources-abcde");
  EXPECT_EQ(dra.FindExtendedResourceClaim("pod-uid"), nullptr);
}

TEST(DraStateExtendedResources, PodClaimKeysIncludeTheExtendedResourceClaim) {
  api::Pod pod;
  pod.meta.namespace_ = api::Symbol::Intern("ns");
  EXPECT_TRUE(PodClaimKeys(pod).empty());
  EXPECT_FALSE(pod.UsesClaims());
  pod.extended_resource_claim_name = "p-extended-resources-abcde";
  EXPECT_EQ(PodClaimKeys(pod), std::vector<std::string>{"ns/p-extended-resources-abcde"});
  EXPECT_TRUE(pod.UsesClaims());
}

// A result of request "r" on device `device` of driver-a/pool-1; with
// `share` a shareID and `extra` (e.g. `"consumedCapacity":{"bw":"1"}`).
std::string Result(std::string_view device, bool share = false, std::string_view extra = "") {
  std::string r = R"({"request":"r","driver":"driver-a","pool":"pool-1","device":")";
  r += device;
  r += '"';
  if (share) r += R"(,"shareID":"s")";
  if (!extra.empty()) {
    r += ',';
    r += extra;
  }
  return r + "}";
}

// Claim `name` (uid uid-<name>), allocated `results` unless empty.
std::shared_ptr<const api::ResourceClaim> ClaimWith(std::string_view name,
                                                    const std::vector<std::string>& results) {
  std::string json = R"({"metadata":{"name":")" + std::string(name) +
                     R"(","namespace":"ns","uid":"uid-)" + std::string(name) + R"("})";
  if (!results.empty()) {
    json += R"(,"status":{"allocation":{"devices":{"results":[)";
    for (size_t i = 0; i < results.size(); ++i) json += (i ? "," : "") + results[i];
    json += "]}}}";
  }
  return Claim(json + "}");
}

TEST(DraStateSharedDevices, HoldersCountTheLiveShares) {
  // What device "m" (multi-allocation, capacity bw) looks like in the snapshot.
  struct Want {
    int32_t holders = 0;  // 0: no entry
    int64_t bw_milli = 0;
    bool held = false;
  };
  struct Case {
    const char* name;
    std::function<void(DraState&)> steps;
    Want want;
  };
  const std::string share1 = Result("m", true, R"("consumedCapacity":{"bw":"1"})");
  const std::string share0 = Result("m", true, R"("consumedCapacity":{"bw":"0"})");
  const std::string bare = Result("m", true);
  const Case cases[] = {
      {"nothing allocated", [](DraState&) {}, {}},
      {"one share", [&](DraState& d) { d.UpsertClaim(ClaimWith("a", {share1})); }, {1, 1000, true}},
      {"a share of zero capacity holds the device",
       [&](DraState& d) { d.UpsertClaim(ClaimWith("a", {share0})); },
       {1, 0, true}},
      {"a share without capacities holds the device",
       [&](DraState& d) { d.UpsertClaim(ClaimWith("a", {bare})); },
       {1, 0, true}},
      {"two shares in one claim",
       [&](DraState& d) {
         d.UpsertClaim(ClaimWith("a", {share1, bare}));
       },
       {2, 1000, true}},
      {"admin access holds nothing",
       [&](DraState& d) {
         d.UpsertClaim(ClaimWith("a", {Result("m", true, R"("adminAccess":true)")}));
       },
       {}},
      {"released: no entry is left",
       [&](DraState& d) {
         d.UpsertClaim(ClaimWith("a", {share1}));
         d.UpsertClaim(ClaimWith("b", {bare}));
         d.UpsertClaim(ClaimWith("a", {}));
         d.DeleteClaim("ns", "b");
       },
       {}},
      {"one of two released: capacity given back, still held",
       [&](DraState& d) {
         d.UpsertClaim(ClaimWith("a", {share1}));
         d.UpsertClaim(ClaimWith("b", {share0}));
         d.UpsertClaim(ClaimWith("a", {}));
       },
       {1, 0, true}},
      {"the same claim stored again is one holder",
       [&](DraState& d) {
         d.UpsertClaim(ClaimWith("a", {share1}));
         d.AssumeClaim(ClaimWith("a", {share1}));
         d.UpsertClaim(ClaimWith("a", {share1}));
       },
       {1, 1000, true}},
      {"in flight, then written by PreBind: one holder",
       [&](DraState& d) {
         d.AddInFlight("uid-a", *ClaimWith("a", {bare})->status.allocation);
         d.AssumeClaim(ClaimWith("a", {bare}));
       },
       {1, 0, true}},
      {"in flight, then Unreserve: no entry is left",
       [&](DraState& d) {
         d.AddInFlight("uid-a", *ClaimWith("a", {share0})->status.allocation);
         d.RemoveInFlight("uid-a");
       },
       {}},
      {"an in-flight allocation replaced",
       [&](DraState& d) {
         d.AddInFlight("uid-a", *ClaimWith("a", {share1})->status.allocation);
         d.AddInFlight("uid-a", *ClaimWith("a", {Result("x")})->status.allocation);
       },
       {}},
      {"an exclusive allocation of the device holds it",
       [&](DraState& d) { d.UpsertClaim(ClaimWith("a", {Result("m")})); },
       {0, 0, true}},
  };
  const auto slice = Decode<api::ResourceSlice>(
      R"({"metadata":{"name":"s"},"spec":{"driver":"driver-a","pool":{"name":"pool-1","generation":1,"resourceSliceCount":1},)"
      R"("nodeName":"n","devices":[{"name":"m","allowMultipleAllocations":true,"capacity":{"bw":{"value":"4"}}},)"
      R"({"name":"x"}]}})",
      &api::DecodeResourceSlice);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DraState dra;
    dra.UpsertSlice(slice);
    (void)dra.Snapshot();  // changes below are applied to a built inventory
    c.steps(dra);
    const auto snap = dra.Snapshot();
    const int32_t m = snap->inventory->Find(
        api::Symbol::Intern("driver-a"), api::Symbol::Intern("pool-1"), api::Symbol::Intern("m"));
    ASSERT_GE(m, 0);
    auto it = snap->allocations->shared.find(m);
    EXPECT_EQ(it == snap->allocations->shared.end() ? 0 : it->second.holders, c.want.holders);
    EXPECT_EQ(snap->allocations->Consumed(m, api::Symbol::Intern("driver-a/bw")), c.want.bw_milli);
    EXPECT_EQ(snap->allocations->Held(m), c.want.held);
    if (it != snap->allocations->shared.end()) {
      for (const auto& [cap, v] : it->second.capacity) EXPECT_NE(v, 0) << cap.view();
    }
  }
}

// ClaimWith at resourceVersion `rv`.
std::shared_ptr<const api::ResourceClaim> ClaimAt(std::string_view name, std::string_view rv,
                                                  const std::vector<std::string>& results) {
  auto c = std::make_shared<api::ResourceClaim>(*ClaimWith(name, results));
  c->meta.resource_version = std::string(rv);
  return c;
}

// Claims are kept as upstream's assume cache keeps them: a late informer
// event (older resourceVersion) never replaces what the scheduler wrote, so
// an allocated device never looks free while the informer lags.
TEST(DraStateAssumeCache, LateEventsDoNotFreeAssumedDevices) {
  struct Want {
    bool held = false;     // device "x" allocated in the snapshot
    bool assumed = false;  // IsClaimAssumed("ns", "a")
    int64_t stale = 0;     // stale events counted
  };
  struct Case {
    const char* name;
    std::function<void(DraState&)> steps;
    Want want;
  };
  const std::string x = Result("x");
  const Case cases[] = {
      {"the answer to the finalizer patch arrives after the status write",
       [&](DraState& d) {
         d.UpsertClaim(ClaimAt("a", "10", {}));
         d.AddInFlight("uid-a", *ClaimWith("a", {x})->status.allocation);
         d.AssumeClaim(ClaimAt("a", "12", {x}));  // status written at 12
         d.UpsertClaim(ClaimAt("a", "11", {}));   // finalizer patch's event
       },
       {true, true, 1}},
      {"an item of an older LIST",
       [&](DraState& d) {
         d.UpsertClaim(ClaimAt("a", "10", {}));
         d.AssumeClaim(ClaimAt("a", "12", {x}));
         d.UpsertClaim(ClaimAt("a", "9", {}));
       },
       {true, true, 1}},
      {"the informer catches up: no longer assumed",
       [&](DraState& d) {
         d.UpsertClaim(ClaimAt("a", "10", {}));
         d.AssumeClaim(ClaimAt("a", "12", {x}));
         d.UpsertClaim(ClaimAt("a", "11", {}));
         d.UpsertClaim(ClaimAt("a", "12", {x}));
       },
       {true, false, 1}},
      {"the informer delivers the write before it is assumed",
       [&](DraState& d) {
         d.UpsertClaim(ClaimAt("a", "10", {}));
         d.UpsertClaim(ClaimAt("a", "12", {x}));  // the status write's event
         d.AssumeClaim(ClaimAt("a", "12", {x}));  // the writer's answer
       },
       {true, false, 0}},
      {"the informer is past the write before it is assumed",
       [&](DraState& d) {
         d.AddInFlight("uid-a", *ClaimWith("a", {x})->status.allocation);
         d.UpsertClaim(ClaimAt("a", "13", {}));   // a relist: deallocated by someone else
         d.AssumeClaim(ClaimAt("a", "12", {x}));  // the answer to our write at 12
       },
       {false, false, 0}},
      {"a newer version from someone else wins (deallocated)",
       [&](DraState& d) {
         d.AssumeClaim(ClaimAt("a", "12", {x}));
         d.UpsertClaim(ClaimAt("a", "13", {}));
       },
       {false, false, 0}},
      {"restore after a write that must not be trusted",
       [&](DraState& d) {
         d.UpsertClaim(ClaimAt("a", "10", {}));
         d.AssumeClaim(ClaimAt("a", "12", {x}));
         d.RestoreClaim("ns", "a");
       },
       {false, false, 0}},
      {"restore uses the newest informer version seen meanwhile",
       [&](DraState& d) {
         d.UpsertClaim(ClaimAt("a", "10", {}));
         d.AssumeClaim(ClaimAt("a", "14", {x}));
         d.UpsertClaim(ClaimAt("a", "13", {x}));
         d.RestoreClaim("ns", "a");
       },
       {true, false, 1}},
      {"a recreated claim (new UID) is not compared with the old one",
       [&](DraState& d) {
         d.AssumeClaim(ClaimAt("a", "12", {x}));
         auto other = std::make_shared<api::ResourceClaim>(*ClaimAt("a", "5", {}));
         other->meta.uid = "uid-a2";
         d.UpsertClaim(other);
       },
       {false, false, 0}},
      {"versions that are not integers order nothing (snapshots)",
       [&](DraState& d) {
         d.AssumeClaim(ClaimAt("a", "", {x}));
         d.UpsertClaim(ClaimAt("a", "", {}));
       },
       {false, false, 0}},
      {"deleted: nothing held, nothing assumed",
       [&](DraState& d) {
         d.AssumeClaim(ClaimAt("a", "12", {x}));
         d.DeleteClaim("ns", "a");
         d.UpsertClaim(ClaimAt("a", "11", {x}));  // a late event of the deleted claim
         d.DeleteClaim("ns", "a");
       },
       {false, false, 0}},
  };
  const auto slice = Decode<api::ResourceSlice>(
      R"({"metadata":{"name":"s"},"spec":{"driver":"driver-a","pool":{"name":"pool-1","generation":1,"resourceSliceCount":1},)"
      R"("nodeName":"n","devices":[{"name":"x"}]}})",
      &api::DecodeResourceSlice);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DraState dra;
    dra.UpsertSlice(slice);
    (void)dra.Snapshot();
    c.steps(dra);
    const auto snap = dra.Snapshot();
    const int32_t idx = snap->inventory->Find(
        api::Symbol::Intern("driver-a"), api::Symbol::Intern("pool-1"), api::Symbol::Intern("x"));
    ASSERT_GE(idx, 0);
    EXPECT_EQ(snap->allocations->Held(idx), c.want.held);
    EXPECT_EQ(dra.IsClaimAssumed("ns", "a"), c.want.assumed);
    EXPECT_EQ(dra.Stats().stale_claim_events, c.want.stale);
    EXPECT_EQ(dra.Stats().in_flight, 0);
  }
}

TEST(DraStateSharedDevices, WhatIfViewsReleaseAndHoldShares) {
  struct Case {
    const char* name;
    std::vector<std::string> base;      // results of claim "a", stored allocated
    std::vector<std::string> released;  // results of an allocation released in the view
    std::vector<std::string> held;      // results of an allocation held in the view
    int32_t holders;                    // of device m in the view (0: no entry)
    int64_t bw_milli;
  };
  const std::string share1 = Result("m", true, R"("consumedCapacity":{"bw":"1"})");
  const std::string bare = Result("m", true);
  const Case cases[] = {
      {"the only share released", {share1}, {share1}, {}, 0, 0},
      {"the only share released, of no capacity", {bare}, {bare}, {}, 0, 0},
      {"one of two shares of no capacity released", {bare, bare}, {bare}, {}, 1, 0},
      {"one of two released, capacity given back", {share1, bare}, {share1}, {}, 1, 0},
      {"a share of no capacity held", {}, {}, {bare}, 1, 0},
      {"a share held on top of one", {share1}, {}, {share1}, 2, 2000},
      {"a release of what the base does not share changes nothing", {}, {bare}, {}, 0, 0},
  };
  const auto slice = Decode<api::ResourceSlice>(
      R"({"metadata":{"name":"s"},"spec":{"driver":"driver-a","pool":{"name":"pool-1","generation":1,"resourceSliceCount":1},)"
      R"("nodeName":"n","devices":[{"name":"m","allowMultipleAllocations":true,"capacity":{"bw":{"value":"4"}}}]}})",
      &api::DecodeResourceSlice);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DraState dra;
    dra.UpsertSlice(slice);
    if (!c.base.empty()) dra.UpsertClaim(ClaimWith("a", c.base));
    const auto base = dra.Snapshot();
    std::vector<const api::AllocationResult*> released, held;
    auto released_claim = ClaimWith("r", c.released);
    auto held_claim = ClaimWith("h", c.held);
    if (!c.released.empty()) released.push_back(&*released_claim->status.allocation);
    if (!c.held.empty()) held.push_back(&*held_claim->status.allocation);
    const auto view = SnapshotWithReleased(*base, released, held);
    auto it = view->allocations->shared.find(0);
    EXPECT_EQ(it == view->allocations->shared.end() ? 0 : it->second.holders, c.holders);
    EXPECT_EQ(view->allocations->Consumed(0, api::Symbol::Intern("driver-a/bw")), c.bw_milli);
    EXPECT_EQ(view->allocations->Held(0), c.holders > 0);
  }
}

TEST(DraStateAllocationsFit, ExclusiveSharedAndCounters) {
  // driver-a/pool-1 (two slices: the counters, the devices): plain devices
  // x, y; m (shared, capacity bw 4); the partitions of counter set gpu-0
  // (mem 4): whole (4), half-0 and half-1 (2 each), quarter (1) and mq
  // (shared, 2).
  const std::string pool =
      R"("driver":"driver-a","pool":{"name":"pool-1","generation":1,"resourceSliceCount":2},"nodeName":"n")";
  const auto counters = Decode<api::ResourceSlice>(
      R"({"metadata":{"name":"s-counters"},"spec":{)" + pool +
          R"(,"sharedCounters":[{"name":"gpu-0","counters":{"mem":{"value":"4"}}}]}})",
      &api::DecodeResourceSlice);
  const auto devices = Decode<api::ResourceSlice>(
      R"({"metadata":{"name":"s-devices"},"spec":{)" + pool +
          R"(,"devices":[)"
          R"({"name":"x"},{"name":"y"},)"
          R"({"name":"m","allowMultipleAllocations":true,"capacity":{"bw":{"value":"4"}}},)"
          R"({"name":"whole","consumesCounters":[{"counterSet":"gpu-0","counters":{"mem":{"value":"4"}}}]},)"
          R"({"name":"half-0","consumesCounters":[{"counterSet":"gpu-0","counters":{"mem":{"value":"2"}}}]},)"
          R"({"name":"half-1","consumesCounters":[{"counterSet":"gpu-0","counters":{"mem":{"value":"2"}}}]},)"
          R"({"name":"quarter","consumesCounters":[{"counterSet":"gpu-0","counters":{"mem":{"value":"1"}}}]},)"
          R"({"name":"mq","allowMultipleAllocations":true,"consumesCounters":[{"counterSet":"gpu-0","counters":{"mem":{"value":"2"}}}]}]}})",
      &api::DecodeResourceSlice);
  auto bw = [](std::string_view v) {
    return std::string(R"("consumedCapacity":{"bw":")") + std::string(v) + R"("})";
  };
  const std::string admin = R"("adminAccess":true)";
  struct Case {
    const char* name;
    std::vector<std::string> view;                  // results held in the view
    std::vector<std::vector<std::string>> checked;  // the allocations asked about
    bool want;
  };
  const Case cases[] = {
      {"nothing asked", {Result("x")}, {}, true},
      {"exclusive, free", {}, {{Result("x")}}, true},
      {"exclusive, another device taken", {Result("y")}, {{Result("x")}}, true},
      {"exclusive, taken exclusively", {Result("x")}, {{Result("x")}}, false},
      {"exclusive, held by a share", {Result("m", true, bw("1"))}, {{Result("m")}}, false},
      {"exclusive, twice in one allocation", {}, {{Result("x"), Result("x")}}, false},
      {"exclusive and a share of one device", {}, {{Result("m"), Result("m", true)}}, false},
      {"exclusive, in two allocations", {}, {{Result("x")}, {Result("x")}}, false},
      {"share, room left", {Result("m", true, bw("3"))}, {{Result("m", true, bw("1"))}}, true},
      {"share, no room left", {Result("m", true, bw("3"))}, {{Result("m", true, bw("2"))}}, false},
      {"share of no capacity on a full device",
       {Result("m", true, bw("4"))},
       {{Result("m", true)}},
       true},
      {"share, device held exclusively", {Result("m")}, {{Result("m", true, bw("0"))}}, false},
      {"two shares of one allocation fit alone, not together",
       {Result("m", true, bw("2"))},
       {{Result("m", true, bw("1")), Result("m", true, bw("2"))}},
       false},
      {"two shares of one allocation that fit together",
       {Result("m", true, bw("2"))},
       {{Result("m", true, bw("1")), Result("m", true, bw("1"))}},
       true},
      {"partition, its counters free", {Result("half-0")}, {{Result("half-1")}}, true},
      {"partition, its counters taken by another partition",
       {Result("half-0")},
       {{Result("whole")}},
       false},
      {"partition, the last counter taken",
       {Result("half-0"), Result("half-1")},
       {{Result("quarter")}},
       false},
      {"partitions of one allocation fit alone, not together",
       {Result("half-0")},
       {{Result("half-1"), Result("quarter")}},
       false},
      {"partitions of two allocations fit alone, not together",
       {Result("half-0")},
       {{Result("half-1")}, {Result("quarter")}},
       false},
      {"partitions of one allocation that fit together",
       {},
       {{Result("half-0"), Result("half-1")}},
       true},
      {"a share of a partition already shared holds no more counters",
       {Result("mq", true), Result("half-0")},
       {{Result("mq", true)}},
       true},
      {"a share of a partition not held yet needs its counters",
       {Result("half-0"), Result("half-1")},
       {{Result("mq", true)}},
       false},
      {"two shares of one unheld partition count its counters once",
       {Result("half-0")},
       {{Result("mq", true), Result("mq", true)}},
       true},
      {"admin access, device taken", {Result("x")}, {{Result("x", false, admin)}}, true},
      {"admin access, counters taken",
       {Result("half-0"), Result("half-1")},
       {{Result("whole", false, admin)}},
       true},
      {"admin access, shared device full",
       {Result("m", true, bw("4"))},
       {{Result("m", true, admin + "," + bw("1"))}},
       true},
      {"a device the inventory does not have", {}, {{Result("gone")}}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DraState dra;
    dra.UpsertSlice(counters);
    dra.UpsertSlice(devices);
    if (!c.view.empty()) dra.UpsertClaim(ClaimWith("held", c.view));
    const auto view = dra.Snapshot();
    ASSERT_EQ(view->inventory->devices.size(), 8u);
    ASSERT_EQ(view->inventory->pools.size(), 1u);
    ASSERT_FALSE(view->inventory->pools[0].incomplete);
    ASSERT_FALSE(view->inventory->pools[0].invalid) << view->inventory->pools[0].invalid_reason;
    ASSERT_EQ(view->inventory->pools[0].counter_sets.size(), 1u);
    std::vector<std::shared_ptr<const api::ResourceClaim>> claims;
    std::vector<const api::AllocationResult*> checked;
    for (const std::vector<std::string>& results : c.checked) {
      claims.push_back(ClaimWith("c" + std::to_string(claims.size()), results));
      checked.push_back(&*claims.back()->status.allocation);
    }
    EXPECT_EQ(AllocationsFit(*view, checked), c.want);
  }
}

}  // namespace
}  // namespace gantry::state
