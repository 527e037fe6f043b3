// DynamicResources with the NodeMemo (src/dra/node_memo.h): a pod whose claim
// asks for what an earlier pod's claim asked for is served the earlier
// per-node outcomes only while nothing they depend on changed. Each case
// filters pod A, applies a change, then filters pod B with the memo and with
// a plugin that never reuses (the reference): verdicts, messages and the
// devices Reserve takes must be the reference's. Cases whose change matters
// also check that B's reference outcome differs from A's, so a memo serving
// A's outcome to B fails them.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "plugins/dynamic_resources/test_decode.h"
#include "src/state/dra_state.h"
#include "test/testing/objects.h"

namespace gantry::plugins::dynamic_resources {
namespace {

using framework::Code;

std::string Gpu(std::string_view name, std::string_view model = "A100") {
  return gantry::StrCat(R"({"name":")", name, R"(","attributes":{"model":{"string":")", model,
                        R"("}}})");
}

// A slice of driver gpu.example.com; `where` is its node selection
// ("nodeName":"node-1", "allNodes":true, ...).
// `content` is `"devices":[...]` or `"sharedCounters":[...]`.
std::shared_ptr<const api::ResourceSlice> SliceOf(std::string_view name, std::string_view pool,
                                                  std::string_view where, std::string_view content,
                                                  int generation = 1, int slices = 1) {
  return Decode<api::ResourceSlice>(
      gantry::StrCat(R"({"metadata":{"name":")", name,
                     R"("},"spec":{"driver":"gpu.example.com","pool":{"name":")", pool,
                     R"(","generation":)", generation, R"(,"resourceSliceCount":)", slices, "},",
                     where, ",", content, "}}"),
      &api::DecodeResourceSlice, "ResourceSlice");
}

std::string Devices(std::string_view devices) {
  return gantry::StrCat(R"("devices":[)", devices, "]");
}

std::shared_ptr<const api::ResourceSlice> NodeSlice(std::string_view node, std::string_view devices,
                                                    int generation = 1, int slices = 1) {
  return SliceOf(gantry::StrCat(node, "-gpus"), node,
                 gantry::StrCat(R"("nodeName":")", node, R"(")"), Devices(devices), generation,
                 slices);
}

// The counter set "gpu-0-counters" (memory 80Gi) of a node's pool of two slices.
std::shared_ptr<const api::ResourceSlice> CounterSlice(std::string_view node) {
  return SliceOf(
      gantry::StrCat(node, "-counters"), node, gantry::StrCat(R"("nodeName":")", node, R"(")"),
      R"("sharedCounters":[{"name":"gpu-0-counters","counters":{"memory":{"value":"80Gi"}}}])", 1,
      2);
}

std::shared_ptr<const api::DeviceClass> GpuClass(
    std::string_view selector = R"(device.driver == \"gpu.example.com\")") {
  return Decode<api::DeviceClass>(
      gantry::StrCat(R"({"metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":{"expression":")",
                     selector, R"("}}]}})"),
      &api::DecodeDeviceClass, "DeviceClass");
}

// Claim `name` with `request` (the "exactly" object of request "gpu").
std::shared_ptr<const api::ResourceClaim> ClaimOf(std::string_view name, std::string_view request) {
  return Decode<api::ResourceClaim>(
      gantry::StrCat(R"({"metadata":{"name":")", name, R"(","namespace":"default","uid":"uid-)",
                     name, R"("},"spec":{"devices":{"requests":[{"name":"gpu","exactly":)", request,
                     "}]}}}"),
      &api::DecodeResourceClaim, "ResourceClaim");
}

// Claim `name` allocated `results` (JSON objects), reserved for pod `name`.
std::shared_ptr<const api::ResourceClaim> AllocatedClaim(std::string_view name,
                                                         std::string_view results) {
  return Decode<api::ResourceClaim>(
      gantry::StrCat(
          R"({"metadata":{"name":")", name, R"(","namespace":"default","uid":"uid-)", name,
          R"("},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}},)",
          R"("status":{"allocation":{"devices":{"results":[)", results,
          R"(]}},"reservedFor":[{"resource":"pods","name":")", name, R"(","uid":")", name,
          R"("}]}})"),
      &api::DecodeResourceClaim, "ResourceClaim");
}

std::string Result(std::string_view pool, std::string_view device, std::string_view extra = "") {
  return gantry::StrCat(R"({"request":"gpu","driver":"gpu.example.com","pool":")", pool,
                        R"(","device":")", device, R"(")", extra, "}");
}

api::AllocationResult AllocationOf(std::string_view results) {
  return *AllocatedClaim("tmp", results)->status.allocation;
}

constexpr std::string_view kOneGpu = R"({"deviceClassName":"gpu"})";

struct MemoFixture {
  MemoFixture() {
    handle.SetDra(&dra);
    for (const char* name : {"node-1", "node-2"}) {
      auto info =
          testing::MakeNodeInfo(testing::SimpleNode(name, 8000, 1 << 30, 110, {{"rack", "r1"}}));
      nodes.push_back(info.get());
      handle.AddNode(std::move(info));
    }
    dra.UpsertClass(GpuClass());
  }
  void Relabel(int i, std::string_view rack) {
    nodes[static_cast<size_t>(i)]->SetNode(std::make_shared<const api::Node>(testing::SimpleNode(
        nodes[static_cast<size_t>(i)]->name(), 8000, 1 << 30, 110, {{"rack", std::string(rack)}})));
  }
  state::DraState dra;
  testing::FakeHandle handle;
  std::vector<framework::NodeInfo*> nodes;
};

// What one pod gets on each node: the Filter verdict and message, and for a
// feasible node the devices Reserve takes there (held, then released again).
struct NodeOutcome {
  Code code = Code::kSuccess;
  std::string message;
  std::vector<std::string> devices;  // "pool/device", "pool/device:capacity=milli"
  bool operator==(const NodeOutcome&) const = default;
};

std::string Describe(const std::vector<NodeOutcome>& v) {
  std::string out;
  for (const NodeOutcome& o : v) {
    gantry::StrAppend(&out, "[", static_cast<int>(o.code), " ", o.message, " {");
    for (const std::string& d : o.devices) gantry::StrAppend(&out, d, " ");
    out += "}] ";
  }
  return out;
}

// The devices whose allocation changed from `before` to `after`.
std::vector<std::string> Taken(const state::DraSnapshot& before, const state::DraSnapshot& after) {
  std::vector<std::string> out;
  const state::DraInventory& inv = *after.inventory;
  for (size_t i = 0; i < inv.devices.size(); ++i) {
    const int32_t d = static_cast<int32_t>(i);
    const std::string name =
        gantry::StrCat(inv.devices[i].pool.view(), "/", inv.devices[i].device->name.view());
    if (after.allocations->InUse(d) != before.allocations->InUse(d)) out.push_back(name);
    auto holders = [d](const state::DraSnapshot& s) {
      auto it = s.allocations->shared.find(d);
      return it == s.allocations->shared.end() ? 0 : it->second.holders;
    };
    if (holders(after) != holders(before))
      out.push_back(gantry::StrCat(name, ":holders=", holders(after) - holders(before)));
    auto it = after.allocations->shared.find(d);
    if (it == after.allocations->shared.end()) continue;
    for (const auto& [cap, v] : it->second.capacity) {
      const int64_t delta = v - before.allocations->Consumed(d, cap);
      if (delta != 0) out.push_back(gantry::StrCat(name, ":", cap.view(), "=", delta));
    }
  }
  return out;
}

// Filters the pod of claim `claim` on every node (`hits`, when given, gets
// the nodes served from the memo), then, per feasible node, filters it there
// again in a fresh cycle and records what Reserve takes (Reserve keeps only
// the chosen node's solution).
// `on_cycle`, when given, sees the state of the pass over every node right
// after its PreFilter.
std::vector<NodeOutcome> RunPod(
    MemoFixture& f, DynamicResources& p, std::string_view claim, int64_t* hits = nullptr,
    const std::function<void(const framework::CycleState&)>& on_cycle = nullptr) {
  auto pod = testing::PodInfoFromYaml(
      gantry::StrCat("metadata: {name: ", claim, ", namespace: default, uid: ", claim,
                     "}\nspec: {containers: [{name: c}], resourceClaims: "
                     "[{name: gpus, resourceClaimName: ",
                     claim, "}]}"));
  std::vector<NodeOutcome> out;
  auto prefilter = [&](framework::CycleState& st) {
    framework::PreFilterResult r;
    framework::Status pf = p.PreFilter(st, *pod, f.handle.NodeInfos(), &r);
    EXPECT_TRUE(pf.IsSuccess()) << pf.Message();
    return pf.IsSuccess();
  };
  framework::CycleState st;
  if (!prefilter(st)) return out;
  if (on_cycle) on_cycle(st);
  const int64_t before = p.node_memo() != nullptr ? p.node_memo()->counters().hits : 0;
  for (framework::NodeInfo* n : f.nodes) {
    framework::Status s = p.Filter(st, *pod, *n);
    out.push_back({s.code(), s.Message(), {}});
  }
  if (hits != nullptr) *hits = p.node_memo()->counters().hits - before;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (out[i].code != Code::kSuccess) continue;
    framework::CycleState one;
    if (!prefilter(one)) continue;
    EXPECT_TRUE(p.Filter(one, *pod, *f.nodes[i]).IsSuccess());
    auto snapshot = f.dra.Snapshot();
    EXPECT_TRUE(p.Reserve(one, *pod, f.nodes[i]->name()).IsSuccess());
    out[i].devices = Taken(*snapshot, *f.dra.Snapshot());
    p.Unreserve(one, *pod, f.nodes[i]->name());
  }
  return out;
}

// A's outcome as B would state it (claim names swapped).
std::vector<NodeOutcome> AsIfB(std::vector<NodeOutcome> v) {
  for (NodeOutcome& o : v) {
    for (size_t at = o.message.find("default/a"); at != std::string::npos;
         at = o.message.find("default/a", at + 1))
      o.message.replace(at, 9, "default/b");
  }
  return v;
}

TEST(DynamicResourcesNodeMemo, ServesOnlyOutcomesThatStillHold) {
  using Step = std::function<void(MemoFixture&)>;
  const Step nothing = [](MemoFixture&) {};
  const std::string two_gpus = Gpu("gpu-0") + "," + Gpu("gpu-1");
  // The same devices on both nodes.
  auto both = [](std::string devices) -> Step {
    return [devices](MemoFixture& f) {
      f.dra.UpsertSlice(NodeSlice("node-1", devices));
      f.dra.UpsertSlice(NodeSlice("node-2", devices));
    };
  };
  // One GPU per node, node-1's allocated to claim x.
  const Step one_each_node_1_taken = [both](MemoFixture& f) {
    both(Gpu("gpu-0"))(f);
    f.dra.UpsertClaim(AllocatedClaim("x", Result("node-1", "gpu-0")));
  };
  const std::string shared_device =
      R"({"name":"shared-0","allowMultipleAllocations":true,"capacity":{"memory":{"value":"80Gi"}}})";
  auto partition = [](std::string_view name, std::string_view profile, std::string_view memory) {
    return gantry::StrCat(
        R"({"name":")", name, R"(","attributes":{"profile":{"string":")", profile,
        R"("}},"consumesCounters":[{"counterSet":"gpu-0-counters","counters":{"memory":{"value":")",
        memory, R"("}}}]})");
  };
  const std::string partitions = partition("full", "full", "80Gi") + "," +
                                 partition("half-0", "half", "40Gi") + "," +
                                 partition("half-1", "half", "40Gi");
  // Both nodes: the counter set and a shared device drawing on all of the
  // counters the partitions draw on.
  const Step shared_partitions =
      [devices = gantry::StrCat(
           R"({"name":"shared-1","attributes":{"profile":{"string":"shared"}},)",
           R"("allowMultipleAllocations":true,"consumesCounters":[{"counterSet":"gpu-0-counters",)",
           R"("counters":{"memory":{"value":"80Gi"}}}]},)", partitions)](MemoFixture& f) {
        for (const char* node : {"node-1", "node-2"}) {
          f.dra.UpsertSlice(CounterSlice(node));
          f.dra.UpsertSlice(NodeSlice(node, devices, 1, 2));
        }
      };
  const std::string half =
      R"({"deviceClassName":"gpu","selectors":[{"cel":{"expression":"device.attributes[\"gpu.example.com\"].profile == \"half\""}}]})";
  struct Case {
    const char* name;
    Step setup;
    std::string request_a;
    Step between;
    std::string request_b;
    int64_t want_hits;    // nodes B is served from the memo
    bool change_matters;  // B's outcome differs from A's
    // The nodes TrackedChangesSince may name for B's cycle since A's
    // ("*": it may answer that it cannot name them), and whether the change
    // is of a Node object (the engine's result cache drops those itself).
    std::vector<std::string> may_change = {};
    bool node_object_changed = false;
  } cases[] = {
      {"nothing changed: both nodes reused", both(two_gpus), std::string(kOneGpu), nothing,
       std::string(kOneGpu), 2, false},
      {"a rejection is restated for the next pod's claim", one_each_node_1_taken,
       std::string(kOneGpu), nothing, std::string(kOneGpu), 2, false},
      {"reserved and released in between: still reused", both(two_gpus), std::string(kOneGpu),
       [](MemoFixture& f) {
         f.dra.AddInFlight("uid-y", AllocationOf(Result("node-1", "gpu-0")));
         (void)f.dra.Snapshot();  // a snapshot with the device taken
         f.dra.RemoveInFlight("uid-y");
       },
       std::string(kOneGpu), 2, false},
      {"another pod's claim allocated on node-1",
       both(two_gpus),
       std::string(kOneGpu),
       [](MemoFixture& f) { f.dra.UpsertClaim(AllocatedClaim("x", Result("node-1", "gpu-0"))); },
       std::string(kOneGpu),
       1,
       true,
       {"node-1"}},
      {"another pod's claim released on node-1",
       one_each_node_1_taken,
       std::string(kOneGpu),
       [](MemoFixture& f) { f.dra.DeleteClaim("default", "x"); },
       std::string(kOneGpu),
       1,
       true,
       {"node-1"}},
      {"an in-flight reservation on node-1",
       both(two_gpus),
       std::string(kOneGpu),
       [](MemoFixture& f) { f.dra.AddInFlight("uid-y", AllocationOf(Result("node-1", "gpu-0"))); },
       std::string(kOneGpu),
       1,
       true,
       {"node-1"}},
      {"node-1's slice updated",
       both(two_gpus),
       R"({"deviceClassName":"gpu","selectors":[{"cel":{"expression":"device.attributes[\"gpu.example.com\"].model == \"A100\""}}]})",
       [](MemoFixture& f) { f.dra.UpsertSlice(NodeSlice("node-1", Gpu("gpu-0", "H100"), 2)); },
       R"({"deviceClassName":"gpu","selectors":[{"cel":{"expression":"device.attributes[\"gpu.example.com\"].model == \"A100\""}}]})",
       0,
       true,
       {"*"}},
      {"a different selector", both(two_gpus), std::string(kOneGpu), nothing,
       R"({"deviceClassName":"gpu","selectors":[{"cel":{"expression":"device.attributes[\"gpu.example.com\"].model == \"H100\""}}]})",
       0, true},
      {"a different count",
       [&](MemoFixture& f) {
         f.dra.UpsertSlice(NodeSlice("node-1", Gpu("gpu-0")));
         f.dra.UpsertSlice(NodeSlice("node-2", two_gpus));
       },
       std::string(kOneGpu), nothing, R"({"deviceClassName":"gpu","count":2})", 0, true},
      {"the DeviceClass changed",
       [&](MemoFixture& f) {
         f.dra.UpsertSlice(NodeSlice("node-1", two_gpus));
         f.dra.UpsertSlice(NodeSlice("node-2", Gpu("gpu-0", "H100")));
       },
       std::string(kOneGpu),
       [](MemoFixture& f) {
         f.dra.UpsertClass(GpuClass(R"(device.attributes[\"gpu.example.com\"].model == \"H100\")"));
       },
       std::string(kOneGpu),
       0,
       true,
       {"*"}},
      {"a DeviceTaintRule taints node-1's devices",
       both(two_gpus),
       std::string(kOneGpu),
       [](MemoFixture& f) {
         f.dra.UpsertTaintRule(Decode<api::DeviceTaintRule>(
             R"({"metadata":{"name":"maintenance"},"spec":{"deviceSelector":{"pool":"node-1"},"taint":{"key":"k","effect":"NoSchedule"}}})",
             &api::DecodeDeviceTaintRule, "DeviceTaintRule"));
       },
       std::string(kOneGpu),
       0,
       true,
       {"*"}},
      {"consumable capacity used by another claim",
       both(shared_device),
       R"({"deviceClassName":"gpu","capacity":{"requests":{"memory":"50Gi"}}})",
       [](MemoFixture& f) {
         f.dra.UpsertClaim(AllocatedClaim(
             "x", Result("node-1", "shared-0",
                         R"(,"shareID":"s1","consumedCapacity":{"memory":"40Gi"})")));
       },
       R"({"deviceClassName":"gpu","capacity":{"requests":{"memory":"50Gi"}}})", 1, true,
       {"node-1"}},
      {"a share of no capacity holds the counters of a shared device", shared_partitions, half,
       [](MemoFixture& f) {
         f.dra.UpsertClaim(AllocatedClaim("x", Result("node-1", "shared-1", R"(,"shareID":"s1")")));
       },
       half, 1, true, {"node-1"}},
      {"the last share released gives a shared device's counters back", shared_partitions, half,
       [](MemoFixture& f) {
         f.dra.UpsertClaim(AllocatedClaim("x", Result("node-1", "shared-1", R"(,"shareID":"s1")")));
         f.dra.DeleteClaim("default", "x");
       },
       half, 2, false, {"node-1"}},
      {"a partition drawing on the same counters allocated",
       [&](MemoFixture& f) {
         for (const char* node : {"node-1", "node-2"}) {
           f.dra.UpsertSlice(CounterSlice(node));
           f.dra.UpsertSlice(NodeSlice(node, partitions, 1, 2));
         }
       },
       R"({"deviceClassName":"gpu","selectors":[{"cel":{"expression":"device.attributes[\"gpu.example.com\"].profile == \"half\""}}]})",
       [](MemoFixture& f) { f.dra.UpsertClaim(AllocatedClaim("x", Result("node-1", "full"))); },
       R"({"deviceClassName":"gpu","selectors":[{"cel":{"expression":"device.attributes[\"gpu.example.com\"].profile == \"half\""}}]})",
       1,
       true,
       {"node-1"}},
      {"a network-attached device allocated for a pod elsewhere",
       [&](MemoFixture& f) {
         f.dra.UpsertSlice(
             SliceOf("fabric", "fabric", R"("allNodes":true)", Devices(Gpu("fgpu-0"))));
       },
       std::string(kOneGpu),
       [](MemoFixture& f) { f.dra.UpsertClaim(AllocatedClaim("x", Result("fabric", "fgpu-0"))); },
       std::string(kOneGpu),
       0,
       true,
       {"*"}},
      {"admin access asks for something else",
       [&](MemoFixture& f) {
         f.handle.SetNamespaceLabels(
             "default",
             {{api::Symbol::Intern(api::kAdminAccessNamespaceLabel), api::Symbol::Intern("true")}});
         one_each_node_1_taken(f);
       },
       std::string(kOneGpu), nothing, R"({"deviceClassName":"gpu","adminAccess":true})", 0, true},
      {"node-1's labels no longer select the rack's slice",
       [&](MemoFixture& f) {
         f.dra.UpsertSlice(SliceOf(
             "rack-r1", "rack-r1",
             R"("nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"rack","operator":"In","values":["r1"]}]}]})",
             Devices(Gpu("rgpu-0"))));
       },
       std::string(kOneGpu),
       [](MemoFixture& f) { f.Relabel(0, "r2"); },
       std::string(kOneGpu),
       1,
       true,
       {},
       /*node_object_changed=*/true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    MemoFixture f;
    c.setup(f);
    DynamicResources memo({}, f.handle);
    memo.SetNodeMemo(true);
    DynamicResources reference({}, f.handle);
    reference.SetNodeMemo(false);
    ASSERT_EQ(reference.node_memo(), nullptr);
    f.dra.UpsertClaim(ClaimOf("a", c.request_a));
    // NodeTrackedPlugin: the key of each pass and the nodes changed between.
    uint64_t mark = 0, key_a = 0, key_b = 0;
    bool named = false;
    std::vector<std::string> changed;
    const std::vector<NodeOutcome> a =
        RunPod(f, memo, "a", nullptr, [&](const framework::CycleState& st) {
          key_a = memo.NodeResultsKey(st);
          EXPECT_FALSE(memo.TrackedChangesSince(st, &mark, &changed)) << "no earlier cycle";
          EXPECT_NE(mark, 0u);
        });
    c.between(f);
    f.dra.UpsertClaim(ClaimOf("b", c.request_b));
    int64_t hits = 0;
    const std::vector<NodeOutcome> b =
        RunPod(f, memo, "b", &hits, [&](const framework::CycleState& st) {
          key_b = memo.NodeResultsKey(st);
          named = memo.TrackedChangesSince(st, &mark, &changed);
        });
    EXPECT_NE(key_a, 0u);
    EXPECT_EQ(key_a == key_b, c.request_a == c.request_b);
    const bool may_refuse = c.may_change.size() == 1 && c.may_change[0] == "*";
    if (!named) {
      EXPECT_TRUE(may_refuse) << "could not name the changed nodes";
    } else {
      for (const std::string& n : changed) {
        EXPECT_TRUE(may_refuse ||
                    std::find(c.may_change.begin(), c.may_change.end(), n) != c.may_change.end())
            << n << " reported changed";
      }
    }
    const std::vector<NodeOutcome> want = RunPod(f, reference, "b");
    EXPECT_EQ(b, want) << "memo: " << Describe(b) << "\nreference: " << Describe(want);
    // Every node where B's outcome is not A's is among the changed ones.
    const std::vector<NodeOutcome> a_as_b = AsIfB(a);
    for (size_t i = 0; named && !c.node_object_changed && key_a == key_b && i < want.size(); ++i) {
      if (i < a_as_b.size() && a_as_b[i] == want[i]) continue;
      const std::string node(f.nodes[i]->name());
      EXPECT_NE(std::find(changed.begin(), changed.end(), node), changed.end())
          << node << "'s outcome changed but it was not reported";
    }
    EXPECT_EQ(hits, c.want_hits);
    if (c.change_matters) {
      EXPECT_NE(AsIfB(a), want) << "the change does not show: " << Describe(want);
    } else {
      EXPECT_EQ(AsIfB(a), want) << Describe(a) << "\n" << Describe(want);
    }
    for (const NodeOutcome& o : b)
      EXPECT_EQ(o.message.find("default/a"), std::string::npos) << o.message;
  }
}

// A preemption what-if (RemovePod frees a victim's devices) is searched
// afresh and leaves nothing behind for the next pod.
TEST(DynamicResourcesNodeMemo, PreemptionWhatIfIsNeitherServedNorKept) {
  MemoFixture f;
  f.dra.UpsertSlice(NodeSlice("node-1", Gpu("gpu-0")));
  f.dra.UpsertSlice(NodeSlice("node-2", ""));
  f.dra.UpsertClaim(AllocatedClaim("v1", Result("node-1", "gpu-0")));
  DynamicResources p({}, f.handle);
  p.SetNodeMemo(true);
  auto pod = [](std::string_view name) {
    return testing::PodInfoFromYaml(
        gantry::StrCat("metadata: {name: ", name, ", namespace: default, uid: ", name,
                       "}\nspec: {containers: [{name: c}], resourceClaims: "
                       "[{name: gpus, resourceClaimName: ",
                       name, "}]}"));
  };
  auto victim = pod("v1");
  f.dra.UpsertClaim(ClaimOf("a", kOneGpu));
  f.dra.UpsertClaim(ClaimOf("b", kOneGpu));
  auto a = pod("a");
  framework::CycleState st;
  framework::PreFilterResult r;
  ASSERT_TRUE(p.PreFilter(st, *a, f.handle.NodeInfos(), &r).IsSuccess());
  ASSERT_EQ(p.Filter(st, *a, *f.nodes[0]).code(), Code::kUnschedulable);
  // What if v1 were evicted: its GPU is free for a.
  std::unique_ptr<framework::CycleState> what_if = st.Clone();
  ASSERT_TRUE(p.RemovePod(*what_if, *a, *victim, *f.nodes[0]).IsSuccess());
  const int64_t hits = p.node_memo()->counters().hits;
  EXPECT_TRUE(p.Filter(*what_if, *a, *f.nodes[0]).IsSuccess());
  EXPECT_EQ(p.node_memo()->counters().hits, hits) << "the what-if was served a kept outcome";
  // The cluster did not change: b gets a's outcome, restated, not the what-if's.
  auto b = pod("b");
  framework::CycleState sb;
  ASSERT_TRUE(p.PreFilter(sb, *b, f.handle.NodeInfos(), &r).IsSuccess());
  framework::Status s = p.Filter(sb, *b, *f.nodes[0]);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "claim default/b: request \"gpu\": 1 device wanted, 0 free match");
  EXPECT_EQ(p.node_memo()->counters().hits, hits + 1);
}

// ChangedNodesSince over a sequence of views: pools changed between views
// and invalidated nodes name their nodes once per mark; an inventory change,
// a missing mark or a pool not pinned to nodeName nodes cannot be answered.
TEST(DynamicResourcesNodeMemo, ChangedNodesSinceFollowsTheViews) {
  MemoFixture f;
  f.dra.UpsertSlice(NodeSlice("node-1", Gpu("gpu-0")));
  f.dra.UpsertSlice(NodeSlice("node-2", Gpu("gpu-0")));
  dra::NodeMemo memo;
  auto begin = [&] { return memo.Begin(f.dra.Snapshot(), 2); };
  auto changes = [&](const dra::NodeMemo::View& v, uint64_t* mark) -> std::string {
    std::vector<std::string> names;
    if (!memo.ChangedNodesSince(v, mark, &names)) return "*";
    std::sort(names.begin(), names.end());
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
    return out;
  };
  uint64_t mark = 0, other = 0;
  auto v1 = begin();
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(changes(*v1, &mark), "*") << "no earlier view";
  EXPECT_EQ(mark, v1->epoch());
  other = mark;
  EXPECT_EQ(changes(*begin(), &mark), "") << "nothing changed";
  f.dra.UpsertClaim(AllocatedClaim("x", Result("node-2", "gpu-0")));
  auto v3 = begin();
  memo.Invalidate(*v3, "node-1");
  EXPECT_EQ(changes(*v3, &mark), "node-2");
  EXPECT_EQ(changes(*begin(), &mark), "node-1") << "invalidated after the mark's view";
  EXPECT_EQ(changes(*begin(), &mark), "");
  EXPECT_EQ(changes(*begin(), &other), "node-1,node-2") << "an older mark sees everything since";
  uint64_t stale = 0;
  EXPECT_EQ(changes(*begin(), &stale), "*");
  f.dra.UpsertSlice(NodeSlice("node-1", Gpu("gpu-0") + "," + Gpu("gpu-1"), 2));
  EXPECT_EQ(changes(*begin(), &mark), "*") << "a new inventory";
  EXPECT_EQ(changes(*begin(), &mark), "");
  // A pool visible from nodes that no nodeName slice names.
  f.dra.UpsertSlice(SliceOf("fabric", "fabric", R"("allNodes":true)", Devices(Gpu("fgpu-0"))));
  EXPECT_EQ(changes(*begin(), &mark), "*");
  f.dra.UpsertClaim(AllocatedClaim("y", Result("fabric", "fgpu-0")));
  EXPECT_EQ(changes(*begin(), &mark), "*");
  EXPECT_EQ(changes(*begin(), &mark), "");
}

// The memo can be switched off from the environment (for comparing runs).
TEST(DynamicResourcesNodeMemo, EnvironmentSwitchesItOff) {
  MemoFixture f;
  struct Case {
    const char* value;  // null: unset
    bool on;
  } cases[] = {{nullptr, true}, {"on", true}, {"off", false}, {"0", false}, {"false", false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value == nullptr ? "unset" : c.value);
    if (c.value == nullptr) {
      unsetenv("GANTRY_DRA_NODE_MEMO");
    } else {
      setenv("GANTRY_DRA_NODE_MEMO", c.value, 1);
    }
    DynamicResources p({}, f.handle);
    EXPECT_EQ(p.node_memo() != nullptr, c.on);
  }
  unsetenv("GANTRY_DRA_NODE_MEMO");
}

}  // namespace
}  // namespace gantry::plugins::dynamic_resources
