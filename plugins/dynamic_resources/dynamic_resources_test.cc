#include "plugins/dynamic_resources/dynamic_resources.h"

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "plugins/dynamic_resources/test_decode.h"
#include "simdjson.h"
#include "src/dra/device_preference.h"
#include "src/state/dra_state.h"
#include "test/testing/objects.h"

namespace gantry::plugins::dynamic_resources {
namespace {

using framework::Code;

std::shared_ptr<const api::ResourceSlice> Slice(std::string_view node, int gpus) {
  std::string devs;
  for (int i = 0; i < gpus; ++i) {
    devs += gantry::StrCat(i ? "," : "", R"({"name":"gpu-)", i, R"(","attributes":{"model":{"string":"A100"}}})");
  }
  return Decode<api::ResourceSlice>(
      gantry::StrCat(R"({"metadata":{"name":")", node, R"(-gpus"},"spec":{"driver":"gpu.example.com","pool":{"name":")",
                     node, R"(","generation":1,"resourceSliceCount":1},"nodeName":")", node, R"(","devices":[)", devs,
                     "]}}"),
      &api::DecodeResourceSlice, "ResourceSlice");
}

std::shared_ptr<const api::DeviceClass> GpuClass() {
  return Decode<api::DeviceClass>(
      R"({"metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":{"expression":"device.driver == \"gpu.example.com\""}}]}})",
      &api::DecodeDeviceClass, "DeviceClass");
}

std::shared_ptr<const api::ResourceClaim> Claim(std::string_view name, int count, std::string_view extra_req = "") {
  return Decode<api::ResourceClaim>(
      gantry::StrCat(R"({"metadata":{"name":")", name, R"(","namespace":"default","uid":"uid-)", name,
                     R"("},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","count":)",
                     count, "}}", extra_req, "]}}}"),
      &api::DecodeResourceClaim, "ResourceClaim");
}

framework::PodInfoPtr PodWithClaim(std::string_view claim) {
  return testing::PodInfoFromYaml(gantry::StrCat(
      "metadata: {name: p, namespace: default, uid: pod-uid}\nspec: {containers: [{name: c}], resourceClaims: "
      "[{name: gpus, resourceClaimName: ",
      claim, "}]}"));
}

struct Fixture {
  Fixture() {
    handle.SetDra(&dra);
    handle.AddNode(testing::MakeNodeInfo(testing::SimpleNode("node-1", 8000, 1 << 30)));
    handle.AddNode(testing::MakeNodeInfo(testing::SimpleNode("node-2", 8000, 1 << 30)));
    dra.UpsertClass(GpuClass());
    dra.UpsertSlice(Slice("node-1", 2));
    dra.UpsertSlice(Slice("node-2", 8));
  }
  framework::Status FilterOn(DynamicResources& p, framework::CycleState& st, const framework::PodInfo& pod,
                             std::string_view node) {
    return p.Filter(st, pod, *handle.Get(node));
  }
  state::DraState dra;
  testing::FakeHandle handle;
};

// Runs PreFilter, Filter on `node` and Reserve for `pod`; returns Filter's status.
framework::Status PlaceOn(Fixture& f, DynamicResources& p, framework::CycleState& st,
                          const framework::PodInfo& pod, std::string_view node) {
  framework::PreFilterResult r;
  framework::Status pf = p.PreFilter(st, pod, f.handle.NodeInfos(), &r);
  if (!pf.IsSuccess()) return pf;
  framework::Status fs = f.FilterOn(p, st, pod, node);
  if (!fs.IsSuccess()) return fs;
  return p.Reserve(st, pod, node);
}

TEST(DynamicResources, PodWithoutClaimsIsSkipped) {
  Fixture f;
  DynamicResources p({}, f.handle);
  auto pod = testing::PodInfoFromYaml("metadata: {name: p, uid: u}\nspec: {containers: [{name: c}]}");
  framework::CycleState st;
  framework::PreFilterResult r;
  EXPECT_TRUE(p.PreEnqueue(*pod).IsSuccess());
  EXPECT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSkip());
}

TEST(DynamicResources, PreEnqueueWaitsForClaim) {
  Fixture f;
  DynamicResources p({}, f.handle);
  auto pod = PodWithClaim("gpus");
  framework::Status st = p.PreEnqueue(*pod);
  EXPECT_EQ(st.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.Message(), "resourceclaim \"gpus\" not found");
  f.dra.UpsertClaim(Claim("gpus", 4));
  EXPECT_TRUE(p.PreEnqueue(*pod).IsSuccess());
}

TEST(DynamicResources, FilterTable) {
  struct Case {
    const char* name;
    int count;
    Code node1;
    Code node2;
    std::string reason1;
  } cases[] = {
      {"fits both", 1, Code::kSuccess, Code::kSuccess, ""},
      {"fits only the 8-GPU node", 4, Code::kUnschedulable, Code::kSuccess,
       "claim default/gpus: request \"gpu\": 4 devices wanted, 2 free match"},
      {"fits nowhere", 9, Code::kUnschedulable, Code::kUnschedulable,
       "claim default/gpus: request \"gpu\": 9 devices wanted, 2 free match"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f;
    f.dra.UpsertClaim(Claim("gpus", c.count));
    DynamicResources p({}, f.handle);
    auto pod = PodWithClaim("gpus");
    framework::CycleState st;
    framework::PreFilterResult r;
    ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
    framework::Status s1 = f.FilterOn(p, st, *pod, "node-1");
    EXPECT_EQ(s1.code(), c.node1) << s1.Message();
    if (!c.reason1.empty()) {
      EXPECT_EQ(s1.Message(), c.reason1);
    }
    EXPECT_EQ(f.FilterOn(p, st, *pod, "node-2").code(), c.node2);
  }
}

TEST(DynamicResources, ReservePreBindWritesClaimAndAssumes) {
  Fixture f;
  f.dra.UpsertClaim(Claim("gpus", 2));
  DynamicResources p({}, f.handle);
  auto pod = PodWithClaim("gpus");
  framework::CycleState st;
  framework::PreFilterResult r;
  ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
  ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-1").IsSuccess());
  ASSERT_TRUE(p.Reserve(st, *pod, "node-1").IsSuccess());
  EXPECT_TRUE(f.dra.IsInFlight("uid-gpus"));
  // In flight: a second claim cannot get node-1's devices.
  f.dra.UpsertClaim(Claim("other", 1));
  {
    DynamicResources p2({}, f.handle);
    auto pod2 = testing::PodInfoFromYaml(
        "metadata: {name: q, namespace: default, uid: q}\nspec: {containers: [{name: c}], resourceClaims: "
        "[{name: g, resourceClaimName: other}]}");
    framework::CycleState st2;
    ASSERT_TRUE(p2.PreFilter(st2, *pod2, f.handle.NodeInfos(), &r).IsSuccess());
    EXPECT_EQ(f.FilterOn(p2, st2, *pod2, "node-1").code(), Code::kUnschedulable);
  }
  ASSERT_TRUE(p.PreBind(st, *pod, "node-1").IsSuccess());
  EXPECT_FALSE(f.dra.IsInFlight("uid-gpus"));
  ASSERT_EQ(f.handle.claim_allocations.size(), 1u);
  EXPECT_EQ(f.handle.claim_allocations[0].first, "default/gpus");
  EXPECT_EQ(f.handle.claim_allocations[0].second.results.size(), 2u);
  ASSERT_EQ(f.handle.claim_reservations[0].size(), 1u);
  EXPECT_EQ(f.handle.claim_reservations[0][0].uid, "pod-uid");
  EXPECT_EQ(f.handle.claim_finalizers, std::vector<std::string>{"default/gpus"});
  auto stored = f.dra.GetClaim("default", "gpus");
  ASSERT_TRUE(stored->IsAllocated());
  EXPECT_TRUE(stored->IsReservedFor("pod-uid"));
}

TEST(DynamicResources, ReserveHonoursDevicePreferenceTable) {
  // node-2 has gpu-0 .. gpu-7 (exclusive). Without a usable preference
  // Reserve keeps Filter's first fit.
  struct Case {
    const char* name;
    int count;
    std::vector<std::string> preferred;  // devices of node-2, or "node-1/gpu-0"
    bool other_inventory;                // the preference refers to another inventory
    bool busy_gpu1;                      // gpu-1 already allocated to another claim
    std::vector<std::string> want;
  } cases[] = {
      {"no preference", 1, {}, false, false, {"gpu-0"}},
      {"one preferred device", 1, {"gpu-5"}, false, false, {"gpu-5"}},
      {"two in the given order", 2, {"gpu-6", "gpu-3"}, false, false, {"gpu-6", "gpu-3"}},
      {"fewer preferred than wanted", 2, {"gpu-4"}, false, false, {"gpu-4", "gpu-0"}},
      {"preferred device in use", 1, {"gpu-1"}, false, true, {"gpu-0"}},
      {"device of another node", 1, {"node-1/gpu-1"}, false, false, {"gpu-0"}},
      {"stale inventory", 1, {"gpu-5"}, true, false, {"gpu-0"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f;
    if (c.busy_gpu1) {
      f.dra.UpsertClaim(Decode<api::ResourceClaim>(
          R"({"metadata":{"name":"busy","namespace":"default","uid":"uid-busy"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}},"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"node-2","device":"gpu-1"}]}},"reservedFor":[{"resource":"pods","name":"x","uid":"x"}]}})",
          &api::DecodeResourceClaim, "ResourceClaim"));
    }
    f.dra.UpsertClaim(Claim("gpus", c.count));
    DynamicResources p({}, f.handle);
    auto pod = PodWithClaim("gpus");
    framework::CycleState st;
    framework::PreFilterResult r;
    ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
    ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-2").IsSuccess());
    auto snap = f.dra.Snapshot();
    std::shared_ptr<const state::DraInventory> inv = snap->inventory;
    if (c.other_inventory) {
      f.dra.UpsertSlice(Slice("node-3", 1));
      inv = f.dra.Snapshot()->inventory;
      ASSERT_NE(inv.get(), snap->inventory.get());
    }
    if (!c.preferred.empty()) {
      auto pref = std::make_unique<dra::DevicePreference>(inv);
      std::vector<int32_t> devices;
      for (const std::string& d : c.preferred) {
        const size_t slash = d.find('/');
        const std::string pool = slash == std::string::npos ? "node-2" : d.substr(0, slash);
        const std::string dev = slash == std::string::npos ? d : d.substr(slash + 1);
        devices.push_back(inv->Find(api::Symbol::Intern("gpu.example.com"),
                                    api::Symbol::Intern(pool), api::Symbol::Intern(dev)));
        ASSERT_GE(devices.back(), 0) << d;
      }
      pref->Set("node-2", devices);
      st.Write(dra::kDevicePreferenceKey, std::move(pref));
    }
    ASSERT_TRUE(p.Reserve(st, *pod, "node-2").IsSuccess());
    ASSERT_TRUE(p.PreBind(st, *pod, "node-2").IsSuccess());
    ASSERT_EQ(f.handle.claim_allocations.size(), 1u);
    std::vector<std::string> got;
    for (const auto& res : f.handle.claim_allocations[0].second.results)
      got.push_back(res.device.str());
    EXPECT_EQ(got, c.want);
  }
}

TEST(DynamicResources, UnreserveReleasesInFlight) {
  Fixture f;
  f.dra.UpsertClaim(Claim("gpus", 2));
  DynamicResources p({}, f.handle);
  auto pod = PodWithClaim("gpus");
  framework::CycleState st;
  framework::PreFilterResult r;
  ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
  ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-1").IsSuccess());
  ASSERT_TRUE(p.Reserve(st, *pod, "node-1").IsSuccess());
  p.Unreserve(st, *pod, "node-1");
  EXPECT_FALSE(f.dra.IsInFlight("uid-gpus"));
  EXPECT_EQ(f.dra.Snapshot()->allocations->in_use, std::vector<uint16_t>(10, 0));
}

TEST(DynamicResources, UnreserveAfterPreBindTakesThePodOutOfReservedFor) {
  // A later PreBind plugin or Bind failed after this plugin's PreBind wrote
  // the claim: Unreserve removes the pod's reservedFor entry again.
  Fixture f;
  f.dra.UpsertClaim(Claim("gpus", 2));
  DynamicResources p({}, f.handle);
  auto pod = PodWithClaim("gpus");
  framework::CycleState st;
  ASSERT_TRUE(PlaceOn(f, p, st, *pod, "node-1").IsSuccess());
  ASSERT_TRUE(p.PreBind(st, *pod, "node-1").IsSuccess());
  ASSERT_TRUE(f.dra.GetClaim("default", "gpus")->IsReservedFor("pod-uid"));
  ASSERT_EQ(f.handle.claim_reservations.size(), 1u);
  p.Unreserve(st, *pod, "node-1");
  ASSERT_EQ(f.handle.claim_reservations.size(), 2u) << "a second status write";
  EXPECT_TRUE(f.handle.claim_reservations[1].empty()) << "reservedFor without the pod";
  EXPECT_EQ(f.handle.claim_allocations[1].first, "default/gpus");
  EXPECT_EQ(f.handle.claim_allocations[1].second.results.size(), 2u)
      << "the allocation is written unchanged";
  auto stored = f.dra.GetClaim("default", "gpus");
  EXPECT_FALSE(stored->IsReservedFor("pod-uid"));
  EXPECT_TRUE(stored->IsAllocated()) << "the allocation stays for the next attempt";
  // Without a reservation (Unreserve before PreBind) nothing is written.
  Fixture g;
  g.dra.UpsertClaim(Claim("gpus", 2));
  DynamicResources q({}, g.handle);
  framework::CycleState st2;
  ASSERT_TRUE(PlaceOn(g, q, st2, *pod, "node-1").IsSuccess());
  q.Unreserve(st2, *pod, "node-1");
  EXPECT_TRUE(g.handle.claim_reservations.empty());
}

TEST(DynamicResources, PreBindWriteFailureIsError) {
  Fixture f;
  f.dra.UpsertClaim(Claim("gpus", 1));
  f.handle.dra_write_status = absl::UnavailableError("apiserver down");
  DynamicResources p({}, f.handle);
  auto pod = PodWithClaim("gpus");
  framework::CycleState st;
  framework::PreFilterResult r;
  ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
  ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-1").IsSuccess());
  ASSERT_TRUE(p.Reserve(st, *pod, "node-1").IsSuccess());
  framework::Status s = p.PreBind(st, *pod, "node-1");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_FALSE(f.dra.IsInFlight("uid-gpus"));
}

TEST(DynamicResources, AllocatedClaimOnOtherNodeAndPostFilterDeallocates) {
  Fixture f;
  f.dra.UpsertClaim(Claim("gpus", 1));
  DynamicResources p({}, f.handle);
  auto pod = PodWithClaim("gpus");
  {
    framework::CycleState st;
    framework::PreFilterResult r;
    ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
    ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-1").IsSuccess());
    ASSERT_TRUE(p.Reserve(st, *pod, "node-1").IsSuccess());
    ASSERT_TRUE(p.PreBind(st, *pod, "node-1").IsSuccess());
  }
  // Same claim, now allocated to node-1 but not reserved for this new pod.
  auto pod2 = testing::PodInfoFromYaml(
      "metadata: {name: q, namespace: default, uid: q}\nspec: {containers: [{name: c}], resourceClaims: "
      "[{name: g, resourceClaimName: gpus}]}");
  auto claim = std::make_shared<api::ResourceClaim>(*f.dra.GetClaim("default", "gpus"));
  claim->status.reserved_for.clear();
  f.dra.UpsertClaim(claim);
  framework::CycleState st;
  framework::PreFilterResult r;
  ASSERT_TRUE(p.PreFilter(st, *pod2, f.handle.NodeInfos(), &r).IsSuccess());
  EXPECT_TRUE(f.FilterOn(p, st, *pod2, "node-1").IsSuccess());
  framework::Status s2 = f.FilterOn(p, st, *pod2, "node-2");
  EXPECT_EQ(s2.Message(), "resourceclaim \"gpus\" not available on the node");
  framework::PostFilterResult pf = p.PostFilter(st, *pod2, {});
  EXPECT_EQ(pf.status.Message(), "deallocation of ResourceClaim completed");
  EXPECT_EQ(f.handle.deallocated_claims, std::vector<std::string>{"default/gpus"});
  EXPECT_FALSE(f.dra.GetClaim("default", "gpus")->IsAllocated());
}

TEST(DynamicResources, ScorePrefersFirstSubrequest) {
  Fixture f;
  auto claim = Decode<api::ResourceClaim>(
      R"({"metadata":{"name":"gpus","namespace":"default","uid":"u"},"spec":{"devices":{"requests":[{"name":"gpu","firstAvailable":[
         {"name":"big","deviceClassName":"gpu","count":4},{"name":"small","deviceClassName":"gpu","count":1}]}]}}})",
      &api::DecodeResourceClaim, "ResourceClaim");
  f.dra.UpsertClaim(claim);
  DynamicResources p({}, f.handle);
  auto pod = PodWithClaim("gpus");
  framework::CycleState st;
  framework::PreFilterResult r;
  ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
  ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-1").IsSuccess());
  ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-2").IsSuccess());
  int64_t s1 = 0, s2 = 0;
  ASSERT_TRUE(p.Score(st, *pod, *f.handle.Get("node-1"), &s1).IsSuccess());
  ASSERT_TRUE(p.Score(st, *pod, *f.handle.Get("node-2"), &s2).IsSuccess());
  EXPECT_EQ(s1, 7);
  EXPECT_EQ(s2, 8);
}

TEST(DynamicResources, AdminAccessNeedsNamespaceLabel) {
  Fixture f;
  f.dra.UpsertClaim(Decode<api::ResourceClaim>(
      R"({"metadata":{"name":"gpus","namespace":"default","uid":"u"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","adminAccess":true}}]}}})",
      &api::DecodeResourceClaim, "ResourceClaim"));
  DynamicResources p({}, f.handle);
  auto pod = PodWithClaim("gpus");
  framework::CycleState st;
  framework::PreFilterResult r;
  EXPECT_EQ(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).code(), Code::kUnschedulableAndUnresolvable);
  f.handle.SetNamespaceLabels("default", {{api::Symbol::Intern(api::kAdminAccessNamespaceLabel), api::Symbol::Intern("true")}});
  framework::CycleState st2;
  EXPECT_TRUE(p.PreFilter(st2, *pod, f.handle.NodeInfos(), &r).IsSuccess());
}

TEST(DynamicResources, ArgsDefaultsAndValidation) {
  simdjson::dom::parser parser;
  auto parse = [&](std::string_view json, std::string* err) {
    api::JsonValue v;
    EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS);
    api::Decoder d(kArgsKind);
    DynamicResourcesArgs a = DynamicResourcesArgs::Decode(d, v);
    *err = d.ok() ? "" : d.error()->ToString();
    return a;
  };
  std::string err;
  DynamicResourcesArgs a = parse("null", &err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(a.ToJson()["filterTimeout"], "10s");
  EXPECT_EQ(a.ToJson()["bindingTimeout"], "600s");
  a = parse(R"({"filterTimeout":"1m30s"})", &err);
  EXPECT_EQ(a.filter_timeout_micros, 90'000'000);
  parse(R"({"bindingTimeout":"500ms"})", &err);
  EXPECT_NE(err.find("at least 1s"), std::string::npos);
  parse(R"({"bogus":1})", &err);
  EXPECT_NE(err.find("unknown field"), std::string::npos);
}

// ---- Binding conditions ----------------------------------------------------

std::shared_ptr<const api::ResourceSlice> AttachableSlice(std::string_view node) {
  return Decode<api::ResourceSlice>(
      gantry::StrCat(R"({"metadata":{"name":")", node,
                     R"(-fabric"},"spec":{"driver":"gpu.example.com","pool":{"name":")", node,
                     R"(-fabric","generation":1,"resourceSliceCount":1},"nodeName":")", node,
                     R"(","devices":[{"name":"fgpu-0","bindingConditions":["Attached"],)",
                     R"("bindingFailureConditions":["AttachFailed"]}]}})"),
      &api::DecodeResourceSlice, "ResourceSlice");
}

// The claim as the driver would update it: status.devices with one condition.
void ReportCondition(state::DraState& dra, std::string_view type, bool value) {
  auto claim = dra.GetClaim("default", "gpus");
  ASSERT_TRUE(claim != nullptr && claim->IsAllocated());
  auto copy = std::make_shared<api::ResourceClaim>(*claim);
  const api::DeviceRequestAllocationResult& r = copy->status.allocation->results.at(0);
  api::AllocatedDeviceStatus* status = nullptr;
  for (auto& d : copy->status.devices) {
    if (d.device == r.device) status = &d;
  }
  if (status == nullptr) {
    copy->status.devices.push_back(api::AllocatedDeviceStatus{r.driver, r.pool, r.device, "", {}, "", std::nullopt});
    status = &copy->status.devices.back();
  }
  api::Condition c;
  c.type = api::Symbol::Intern(type);
  c.status = value ? api::ConditionStatus::kTrue : api::ConditionStatus::kFalse;
  c.reason = api::Symbol::Intern("Driver");
  c.message = "reported by the driver";
  status->conditions.push_back(c);
  dra.UpsertClaim(std::move(copy));
}

TEST(DynamicResources, PreBindWaitsForBindingConditions) {
  struct Case {
    const char* name;
    // Condition the fake driver reports at poll N (1-based); 0 = never.
    int report_at;
    const char* condition;
    bool value;
    Code want;
    std::string want_message;  // substring
    int want_polls;
  } cases[] = {
      {"attached after two polls", 2, "Attached", true, Code::kSuccess, "", 2},
      {"attached before the first poll", 0, "Attached", true, Code::kSuccess, "", 0},
      {"failure condition", 1, "AttachFailed", true, Code::kError, "binding failed on device node-1-fabric/fgpu-0", 1},
      {"False is not ready: timeout", 1, "Attached", false, Code::kError, "binding timeout", 4},
      {"never reported: timeout", -1, "", false, Code::kError, "binding timeout", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f;
    f.dra.UpsertSlice(AttachableSlice("node-1"));
    // One device from the fabric pool only (selector on its name).
    f.dra.UpsertClaim(Decode<api::ResourceClaim>(
        R"({"metadata":{"name":"gpus","namespace":"default","uid":"uid-gpus"},"spec":{"devices":{"requests":[)"
        R"({"name":"gpu","exactly":{"deviceClassName":"gpu","selectors":[{"cel":{"expression":)"
        R"("device.attributes[\"gpu.example.com\"].?model.orValue(\"\") == \"\""}}]}}]}}})",
        &api::DecodeResourceClaim, "ResourceClaim"));
    DynamicResourcesArgs args;
    args.binding_timeout_micros = 20'000'000;  // 4 polls of 5 s
    DynamicResources p(args, f.handle);
    int polls = 0;
    p.SetBindingPollWait([&](int64_t micros) {
      EXPECT_LE(micros, kBindingPollMicros);
      f.handle.fake_clock().Advance(micros);
      ++polls;
      if (polls == c.report_at) ReportCondition(f.dra, c.condition, c.value);
      return true;
    });
    auto pod = PodWithClaim("gpus");
    framework::CycleState st;
    framework::PreFilterResult r;
    ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
    ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-1").IsSuccess());
    ASSERT_TRUE(p.Reserve(st, *pod, "node-1").IsSuccess());
    framework::Status s;
    if (c.report_at == 0) {
      // A quick driver: reported during the first wait, ready at the next look.
      int shots = 0;
      p.SetBindingPollWait([&](int64_t micros) {
        if (shots++ > 0) return false;
        f.handle.fake_clock().Advance(micros);
        ReportCondition(f.dra, c.condition, c.value);
        return true;
      });
      s = p.PreBind(st, *pod, "node-1");
      EXPECT_EQ(shots, 1);
    } else {
      s = p.PreBind(st, *pod, "node-1");
      EXPECT_EQ(polls, c.want_polls);
    }
    EXPECT_EQ(s.code(), c.want) << s.Message();
    if (!c.want_message.empty()) {
      EXPECT_NE(s.Message().find(c.want_message), std::string::npos) << s.Message();
    }
    ASSERT_FALSE(f.handle.events.empty());
    EXPECT_EQ(f.handle.events.back().reason, "BindingConditionsPending");
    auto stored = f.dra.GetClaim("default", "gpus");
    if (c.want == Code::kSuccess) {
      EXPECT_TRUE(stored->IsAllocated());
      EXPECT_TRUE(f.handle.deallocated_claims.empty());
    } else {
      // The failed attempt's allocation is released.
      EXPECT_FALSE(stored->IsAllocated());
      EXPECT_EQ(f.handle.deallocated_claims, std::vector<std::string>{"default/gpus"});
    }
  }
}

TEST(DynamicResources, BindingConditionsOfflineFailInsteadOfHanging) {
  Fixture f;
  f.dra.UpsertSlice(AttachableSlice("node-1"));
  f.dra.UpsertClaim(Decode<api::ResourceClaim>(
      R"({"metadata":{"name":"gpus","namespace":"default","uid":"uid-gpus"},"spec":{"devices":{"requests":[)"
      R"({"name":"gpu","exactly":{"deviceClassName":"gpu","selectors":[{"cel":{"expression":)"
      R"("device.attributes[\"gpu.example.com\"].?model.orValue(\"\") == \"\""}}]}}]}}})",
      &api::DecodeResourceClaim, "ResourceClaim"));
  DynamicResources p({}, f.handle);  // FakeClock: the default wait refuses
  auto pod = PodWithClaim("gpus");
  framework::CycleState st;
  framework::PreFilterResult r;
  ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
  ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-1").IsSuccess());
  ASSERT_TRUE(p.Reserve(st, *pod, "node-1").IsSuccess());
  framework::Status s = p.PreBind(st, *pod, "node-1");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_NE(s.Message().find("cannot wait"), std::string::npos) << s.Message();
}

TEST(DynamicResources, CheckBindingConditionsTable) {
  auto claim = [](std::vector<std::pair<const char*, bool>> conds, int64_t allocated_at) {
    api::ResourceClaim c;
    c.meta.name = "gpus";
    api::AllocationResult a;
    api::DeviceRequestAllocationResult r;
    r.driver = api::Symbol::Intern("d");
    r.pool = api::Symbol::Intern("p");
    r.device = api::Symbol::Intern("x");
    r.binding_conditions = {api::Symbol::Intern("Ready"), api::Symbol::Intern("Wired")};
    r.binding_failure_conditions = {api::Symbol::Intern("Broken")};
    a.results.push_back(r);
    a.allocation_timestamp_micros = allocated_at;
    c.status.allocation = a;
    if (!conds.empty()) {
      api::AllocatedDeviceStatus s{r.driver, r.pool, r.device, "", {}, "", std::nullopt};
      for (auto [type, value] : conds) {
        api::Condition k;
        k.type = api::Symbol::Intern(type);
        k.status = value ? api::ConditionStatus::kTrue : api::ConditionStatus::kFalse;
        s.conditions.push_back(k);
      }
      c.status.devices.push_back(s);
    }
    return c;
  };
  struct Case {
    const char* name;
    api::ResourceClaim claim;
    int64_t now;
    BindingState want;
  } cases[] = {
      {"no status yet", claim({}, 100), 150, BindingState::kPending},
      {"one of two", claim({{"Ready", true}}, 100), 150, BindingState::kPending},
      {"both", claim({{"Ready", true}, {"Wired", true}}, 100), 150, BindingState::kReady},
      {"failure wins", claim({{"Ready", true}, {"Wired", true}, {"Broken", true}}, 100), 150, BindingState::kFailed},
      {"failure False is fine", claim({{"Ready", true}, {"Wired", true}, {"Broken", false}}, 100), 150,
       BindingState::kReady},
      {"pending past timeout", claim({{"Ready", true}}, 100), 100 + 60 + 1, BindingState::kTimedOut},
      {"ready past timeout", claim({{"Ready", true}, {"Wired", true}}, 100), 1000, BindingState::kReady},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string why;
    EXPECT_EQ(CheckBindingConditions(c.claim, c.now, 60, &why), c.want);
    if (c.want == BindingState::kFailed || c.want == BindingState::kTimedOut) {
      EXPECT_FALSE(why.empty());
    }
  }
}

TEST(DynamicResources, FilterRejectsAllocatedClaimWhoseBindingFailed) {
  Fixture f;
  f.dra.UpsertSlice(AttachableSlice("node-1"));
  auto base = Decode<api::ResourceClaim>(
      R"({"metadata":{"name":"gpus","namespace":"default","uid":"uid-gpus"},"spec":{"devices":{"requests":[)"
      R"({"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}},"status":{"allocation":{"devices":{"results":[)"
      R"({"request":"gpu","driver":"gpu.example.com","pool":"node-1-fabric","device":"fgpu-0",)"
      R"("bindingConditions":["Attached"],"bindingFailureConditions":["AttachFailed"]}]}},)"
      R"("devices":[{"driver":"gpu.example.com","pool":"node-1-fabric","device":"fgpu-0",)"
      R"("conditions":[{"type":"AttachFailed","status":"True","reason":"NoPath","message":"m",)"
      R"("lastTransitionTime":"2026-01-01T00:00:00Z"}]}]}})",
      &api::DecodeResourceClaim, "ResourceClaim");
  f.dra.UpsertClaim(base);
  DynamicResources p({}, f.handle);
  auto pod = PodWithClaim("gpus");
  framework::CycleState st;
  framework::PreFilterResult r;
  ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
  framework::Status s = f.FilterOn(p, st, *pod, "node-1");
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_NE(s.Message().find("binding failed"), std::string::npos) << s.Message();
  // PostFilter releases it (nobody else holds it).
  framework::NodeToStatus filtered;
  framework::PostFilterResult pf = p.PostFilter(st, *pod, filtered);
  EXPECT_EQ(pf.status.code(), Code::kUnschedulable) << pf.status.Message();
  EXPECT_EQ(f.handle.deallocated_claims, std::vector<std::string>{"default/gpus"});
  EXPECT_FALSE(f.dra.GetClaim("default", "gpus")->IsAllocated());
}

// Preemption what-if (PreFilterExtensions): a victim's devices are free
// once every consumer of its claim is removed, and held again when added back.
TEST(DynamicResources, RemovePodFreesTheDevicesOfItsClaims) {
  // Both GPUs of node-1 are allocated to claim "held" (gpu-0, gpu-1).
  auto held = [](std::string_view reserved) {
    return Decode<api::ResourceClaim>(
        gantry::StrCat(
            R"({"metadata":{"name":"held","namespace":"default","uid":"uid-held"},)",
            R"("spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","count":2}}]}},)",
            R"("status":{"allocation":{"devices":{"results":[)",
            R"({"request":"gpu","driver":"gpu.example.com","pool":"node-1","device":"gpu-0"},)",
            R"({"request":"gpu","driver":"gpu.example.com","pool":"node-1","device":"gpu-1"}]}},)",
            R"("reservedFor":[)", reserved, "]}}"),
        &api::DecodeResourceClaim, "ResourceClaim");
  };
  auto holder = [](std::string_view name) {
    return testing::PodInfoFromYaml(
        gantry::StrCat("metadata: {name: ", name, ", namespace: default, uid: ", name,
                       "}\nspec: {containers: [{name: c}], resourceClaims: "
                       "[{name: g, resourceClaimName: held}]}"));
  };
  const std::string v1 = R"({"resource":"pods","name":"v1","uid":"v1"})";
  const std::string v2 = R"({"resource":"pods","name":"v2","uid":"v2"})";
  struct Step {
      std::string op;  // "remove" / "add" a holder
      std::string pod;
      Code want;  // the preemptor on node-1 afterwards
  };
  struct Case {
      const char* name;
      std::string reserved;
      std::vector<Step> steps;
  } cases[] = {
      {"sole consumer removed, then added back",
       v1,
       {{"remove", "v1", Code::kSuccess}, {"add", "v1", Code::kUnschedulable}}},
      {"shared claim: free only when both consumers leave",
       v1 + "," + v2,
       {{"remove", "v1", Code::kUnschedulable},
        {"remove", "v2", Code::kSuccess},
        {"add", "v2", Code::kUnschedulable}}},
      {"a pod that does not hold the claim frees nothing", v1, {{"remove", "v2", Code::kUnschedulable}}},
  };
  for (const Case& c : cases) {
      SCOPED_TRACE(c.name);
      Fixture f;
      f.dra.UpsertClaim(held(c.reserved));
      f.dra.UpsertClaim(Claim("gpus", 1));
      DynamicResources p({}, f.handle);
      auto pod = PodWithClaim("gpus");
      framework::CycleState st;
      framework::PreFilterResult r;
      ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
      ASSERT_EQ(f.FilterOn(p, st, *pod, "node-1").code(), Code::kUnschedulable);
      ASSERT_NE(p.Extensions(), nullptr);
      for (const Step& s : c.steps) {
        SCOPED_TRACE(s.op + " " + s.pod);
        auto other = holder(s.pod);
        const framework::NodeInfo& node = *f.handle.Get("node-1");
        framework::Status es = s.op == "remove" ? p.Extensions()->RemovePod(st, *pod, *other, node)
                                                : p.Extensions()->AddPod(st, *pod, *other, node);
        ASSERT_TRUE(es.IsSuccess()) << es.Message();
        EXPECT_EQ(f.FilterOn(p, st, *pod, "node-1").code(), s.want);
      }
      // The what-if never touched the cluster's DRA state.
      EXPECT_TRUE(f.dra.Snapshot()->allocations->InUse(0));
  }
  }

  // ---- PodGroup-level claims ------------------------------------------------

  framework::PodInfoPtr GroupMember(std::string_view name, std::string_view claim_entry) {
    return testing::PodInfoFromYaml(
        gantry::StrCat("metadata: {name: ", name, ", namespace: default, uid: ", name,
                       "}\nspec: {containers: [{name: c}], schedulingGroup: {podGroupName: "
                       "g}, resourceClaims: [",
                       claim_entry, "]}"));
  }

  state::PodGroupClaims GroupG(std::string_view claim_name, std::string_view template_name) {
    api::PodGroupResourceClaim c;
    c.name = api::Symbol::Intern("gpus");
    c.resource_claim_name = std::string(claim_name);
    c.resource_claim_template_name = std::string(template_name);
    return state::PodGroupClaims{"default", "g", "group-uid", {c}};
  }

  TEST(DynamicResources, PodGroupClaimIsAllocatedOnceAndReservedForTheGroup) {
    Fixture f;
    f.dra.UpsertClaim(Claim("shared", 2));
    f.dra.SetPodGroupClaims(GroupG("shared", ""));
    DynamicResources p({}, f.handle);
    auto a = GroupMember("a", "{name: gpus, resourceClaimName: shared}");
    auto b = GroupMember("b", "{name: gpus, resourceClaimName: shared}");
    framework::CycleState sa, sb;
    ASSERT_TRUE(PlaceOn(f, p, sa, *a, "node-1").IsSuccess());
    ASSERT_TRUE(f.dra.IsInFlight("uid-shared"));
    // The second member shares the in-flight allocation: node-1's devices are
    // reachable only from node-1.
    framework::PreFilterResult r;
    ASSERT_TRUE(p.PreFilter(sb, *b, f.handle.NodeInfos(), &r).IsSuccess());
    framework::Status other = f.FilterOn(p, sb, *b, "node-2");
    EXPECT_EQ(other.code(), Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(other.Message(), "resourceclaim \"shared\" not available on the node");
    ASSERT_TRUE(f.FilterOn(p, sb, *b, "node-1").IsSuccess());
    ASSERT_TRUE(p.Reserve(sb, *b, "node-1").IsSuccess());
    // Counted once: node-1's two GPUs are in use, nothing else.
    EXPECT_EQ(f.dra.Snapshot()->allocations->in_use[0] + f.dra.Snapshot()->allocations->in_use[1],
              2);
    // A pod outside the group waits for the allocation to finish.
    {
      auto outsider = PodWithClaim("shared");
      framework::CycleState so;
      framework::Status s = p.PreFilter(so, *outsider, f.handle.NodeInfos(), &r);
      EXPECT_EQ(s.code(), Code::kUnschedulable);
      EXPECT_EQ(s.Message(), "resourceclaim \"shared\" is being allocated for another pod");
    }
    // The second member binds first: it writes the claim once, for the group.
    ASSERT_TRUE(p.PreBind(sb, *b, "node-1").IsSuccess());
    ASSERT_TRUE(p.PreBind(sa, *a, "node-1").IsSuccess());
    ASSERT_EQ(f.handle.claim_allocations.size(), 1u);
    EXPECT_EQ(f.handle.claim_allocations[0].first, "default/shared");
    EXPECT_EQ(f.handle.claim_allocations[0].second.results.size(), 2u);
    ASSERT_EQ(f.handle.claim_reservations.size(), 1u);
    ASSERT_EQ(f.handle.claim_reservations[0].size(), 1u);
    const api::ResourceClaimConsumerReference& ref = f.handle.claim_reservations[0][0];
    EXPECT_EQ(ref.api_group.view(), "scheduling.k8s.io");
    EXPECT_EQ(ref.resource.view(), "podgroups");
    EXPECT_EQ(ref.name, "g");
    EXPECT_EQ(ref.uid, "group-uid");
    EXPECT_EQ(f.handle.claim_finalizers, std::vector<std::string>{"default/shared"});
    EXPECT_FALSE(f.dra.IsInFlight("uid-shared"));
    auto stored = f.dra.GetClaim("default", "shared");
    ASSERT_TRUE(stored->IsAllocated());
    EXPECT_FALSE(stored->IsReservedFor("a"));
    EXPECT_FALSE(stored->IsReservedFor("b"));
    // A later member finds the claim allocated and reserved for its group:
    // PreBind writes nothing more.
    auto c = GroupMember("c", "{name: gpus, resourceClaimName: shared}");
    framework::CycleState sc;
    ASSERT_TRUE(PlaceOn(f, p, sc, *c, "node-1").IsSuccess());
    ASSERT_TRUE(p.PreBind(sc, *c, "node-1").IsSuccess());
    EXPECT_EQ(f.handle.claim_allocations.size(), 1u);
    // PostFilter never deallocates a claim reserved for a PodGroup.
    framework::CycleState sd;
    auto d = GroupMember("d", "{name: gpus, resourceClaimName: shared}");
    ASSERT_TRUE(p.PreFilter(sd, *d, f.handle.NodeInfos(), &r).IsSuccess());
    EXPECT_FALSE(f.FilterOn(p, sd, *d, "node-2").IsSuccess());
    EXPECT_FALSE(p.PostFilter(sd, *d, {}).status.IsSuccess());
    EXPECT_TRUE(f.handle.deallocated_claims.empty());
  }

  TEST(DynamicResources, PodGroupClaimRollbackReleasesTheSharedAllocation) {
    Fixture f;
    f.dra.UpsertClaim(Claim("shared", 2));
    f.dra.SetPodGroupClaims(GroupG("shared", ""));
    DynamicResources p({}, f.handle);
    auto a = GroupMember("a", "{name: gpus, resourceClaimName: shared}");
    auto b = GroupMember("b", "{name: gpus, resourceClaimName: shared}");
    framework::CycleState sa, sb;
    ASSERT_TRUE(PlaceOn(f, p, sa, *a, "node-2").IsSuccess());
    ASSERT_TRUE(PlaceOn(f, p, sb, *b, "node-2").IsSuccess());
    // The first member leaves first: the second still holds the allocation.
    p.Unreserve(sa, *a, "node-2");
    EXPECT_TRUE(f.dra.IsInFlight("uid-shared"));
    p.Unreserve(sb, *b, "node-2");
    EXPECT_FALSE(f.dra.IsInFlight("uid-shared"));
    EXPECT_EQ(f.dra.Snapshot()->allocations->in_use, std::vector<uint16_t>(10, 0));
    EXPECT_TRUE(f.handle.claim_allocations.empty());
  }

  TEST(DynamicResources, PodGroupClaimEntriesMustMatchAndTemplateClaimsBelongToTheGroup) {
    struct Case {
      const char* name;
      std::string group_template;  // the PodGroup's entry
      std::string pod_entry;
      std::string owner_uid;  // of the generated claim
      std::string want;       // PreEnqueue message, "" = success
    } cases[] = {
        {"owned by the group", "tmpl", "{name: gpus, resourceClaimTemplateName: tmpl}", "group-uid",
         ""},
        {"owned by the pod instead", "tmpl", "{name: gpus, resourceClaimTemplateName: tmpl}", "m",
         "resourceclaim \"gen\" was not created for pod group default/g"},
        {"other template: a per-pod claim", "other",
         "{name: gpus, resourceClaimTemplateName: tmpl}", "m", ""},
        {"other template, owned by the group", "other",
         "{name: gpus, resourceClaimTemplateName: tmpl}", "group-uid",
         "resourceclaim \"gen\" was not created for the pod"},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name);
      Fixture f;
      f.dra.UpsertClaim(Decode<api::ResourceClaim>(
          gantry::StrCat(
              R"({"metadata":{"name":"gen","namespace":"default","uid":"uid-gen","ownerReferences":[)",
              R"({"apiVersion":"v1","kind":"X","name":"x","uid":")", c.owner_uid,
              R"(","controller":true}]},"spec":{"devices":{"requests":[{"name":"gpu","exactly":)",
              R"({"deviceClassName":"gpu","count":1}}]}}})"),
          &api::DecodeResourceClaim, "ResourceClaim"));
      f.dra.SetPodGroupClaims(GroupG("", c.group_template));
      DynamicResources p({}, f.handle);
      auto pod = testing::PodInfoFromYaml(gantry::StrCat(
          "metadata: {name: m, namespace: default, uid: m}\nspec: {containers: [{name: c}], "
          "schedulingGroup: "
          "{podGroupName: g}, resourceClaims: [",
          c.pod_entry,
          "]}\nstatus: {resourceClaimStatuses: [{name: gpus, resourceClaimName: gen}]}"));
      framework::Status st = p.PreEnqueue(*pod);
      if (c.want.empty()) {
        EXPECT_TRUE(st.IsSuccess()) << st.Message();
      } else {
        EXPECT_EQ(st.Message(), c.want);
      }
    }
  }

  // ---- Extended resources backed by DRA ------------------------------------------

  std::shared_ptr<const api::DeviceClass> GpuClassServing(std::string_view resource) {
    return Decode<api::DeviceClass>(
        gantry::StrCat(R"({"metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":{"expression":)"
                       R"("device.driver == \"gpu.example.com\""}}],"extendedResourceName":")",
                       resource, R"("}})"),
        &api::DecodeDeviceClass, "DeviceClass");
  }

  framework::PodInfoPtr ExtendedPod(std::string_view spec) {
    return testing::PodInfoFromYaml(
        gantry::StrCat("metadata: {name: p, namespace: default, uid: pod-uid}\nspec: ", spec));
  }

  // Runs PreFilter, Filter on `node`, Reserve and PreBind; returns the first
  // status that is not a success.
  framework::Status Bind(Fixture& f, DynamicResources& p, framework::CycleState& st,
                         const framework::PodInfo& pod, std::string_view node) {
    framework::Status s = PlaceOn(f, p, st, pod, node);
    if (!s.IsSuccess()) return s;
    return p.PreBind(st, pod, node);
  }

  TEST(DynamicResources, ExtendedResourceClaimRequestsAndMappingsTable) {
    struct Req {
      std::string name;
      int64_t count;
    };
    struct Map {
      std::string container, resource, request;
    };
    struct Case {
      const char* name;
      std::string spec;
      std::vector<Req> requests;
      std::vector<Map> mappings;
    };
    const Case cases[] = {
        {"one container: index over init + regular containers, position among sorted request names",
         "{initContainers: [{name: init}], containers: [{name: main, resources: {requests: {cpu: "
         "100m, "
         "example.com/gpu: 3}}}]}",
         {{"container-1-request-1", 3}},
         {{"main", "example.com/gpu", "container-1-request-1"}}},
        {"the implicit name of the class",
         "{containers: [{name: main, resources: {requests: "
         "{deviceclass.resource.kubernetes.io/gpu: 1}}}]}",
         {{"container-0-request-0", 1}},
         {{"main", "deviceclass.resource.kubernetes.io/gpu", "container-0-request-0"}}},
        {"one request per container",
         "{containers: [{name: a, resources: {requests: {example.com/gpu: 2}}}, {name: b, "
         "resources: {requests: "
         "{example.com/gpu: 2}}}]}",
         {{"container-0-request-0", 2}, {"container-1-request-0", 2}},
         {{"a", "example.com/gpu", "container-0-request-0"},
          {"b", "example.com/gpu", "container-1-request-0"}}},
        {"an init container reuses the devices of a later container",
         "{initContainers: [{name: init, resources: {requests: {example.com/gpu: 1}}}], "
         "containers: [{name: main, "
         "resources: {requests: {example.com/gpu: 2}}}]}",
         {{"container-1-request-0", 2}},
         {{"main", "example.com/gpu", "container-1-request-0"},
          {"init", "example.com/gpu", "container-1-request-0"}}},
        {"an init container asks for what reuse does not cover",
         "{initContainers: [{name: init, resources: {requests: {example.com/gpu: 3}}}], "
         "containers: [{name: main, "
         "resources: {requests: {example.com/gpu: 1}}}]}",
         {{"container-0-request-0", 2}, {"container-1-request-0", 1}},
         {{"main", "example.com/gpu", "container-1-request-0"},
          {"init", "example.com/gpu", "container-1-request-0"},
          {"init", "example.com/gpu", "container-0-request-0"}}},
        {"init containers share their largest request",
         "{initContainers: [{name: i1, resources: {requests: {example.com/gpu: 2}}}, {name: i2, "
         "resources: {requests: "
         "{example.com/gpu: 4}}}], containers: [{name: main}]}",
         {{"container-1-request-0", 4}},
         {{"i1", "example.com/gpu", "container-1-request-0"},
          {"i2", "example.com/gpu", "container-1-request-0"}}},
        {"a sidecar is long-lived",
         "{initContainers: [{name: side, restartPolicy: Always, resources: {requests: "
         "{example.com/gpu: 1}}}], "
         "containers: [{name: main, resources: {requests: {example.com/gpu: 1}}}]}",
         {{"container-0-request-0", 1}, {"container-1-request-0", 1}},
         {{"side", "example.com/gpu", "container-0-request-0"},
          {"main", "example.com/gpu", "container-1-request-0"}}},
        {"two names of one class, requests sorted by name",
         "{containers: [{name: main, resources: {requests: {example.com/gpu: 1, "
         "deviceclass.resource.kubernetes.io/gpu: 2}}}]}",
         {{"container-0-request-0", 2}, {"container-0-request-1", 1}},
         {{"main", "deviceclass.resource.kubernetes.io/gpu", "container-0-request-0"},
          {"main", "example.com/gpu", "container-0-request-1"}}},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name);
      Fixture f;
      f.dra.UpsertClass(GpuClassServing("example.com/gpu"));
      DynamicResources p({}, f.handle);
      auto pod = ExtendedPod(c.spec);
      framework::CycleState st;
      framework::Status s = Bind(f, p, st, *pod, "node-2");
      ASSERT_TRUE(s.IsSuccess()) << s.Message();
      ASSERT_EQ(f.handle.created_claims.size(), 1u);
      const api::ResourceClaim& claim = f.handle.created_claims[0];
      ASSERT_EQ(claim.spec.requests.size(), c.requests.size());
      int64_t devices = 0;
      for (size_t i = 0; i < c.requests.size(); ++i) {
        EXPECT_EQ(claim.spec.requests[i].name.view(), c.requests[i].name) << i;
        ASSERT_TRUE(claim.spec.requests[i].exactly.has_value());
        EXPECT_EQ(claim.spec.requests[i].exactly->device_class_name.view(), "gpu");
        EXPECT_EQ(claim.spec.requests[i].exactly->count, c.requests[i].count) << i;
        devices += c.requests[i].count;
      }
      ASSERT_EQ(f.handle.claim_allocations.size(), 1u);
      EXPECT_EQ(static_cast<int64_t>(f.handle.claim_allocations[0].second.results.size()), devices);
      ASSERT_EQ(f.handle.extended_statuses.size(), 1u);
      const auto& mappings = f.handle.extended_statuses[0].second.request_mappings;
      ASSERT_EQ(mappings.size(), c.mappings.size());
      for (size_t i = 0; i < c.mappings.size(); ++i) {
        EXPECT_EQ(mappings[i].container_name, c.mappings[i].container) << i;
        EXPECT_EQ(mappings[i].resource_name, c.mappings[i].resource) << i;
        EXPECT_EQ(mappings[i].request_name, c.mappings[i].request) << i;
      }
    }
  }

  TEST(DynamicResources, ExtendedResourceIsAllocatedThroughItsDeviceClassAndCreatedInPreBind) {
    Fixture f;
    f.dra.UpsertClass(GpuClassServing("example.com/gpu"));
    DynamicResources p({}, f.handle);
    auto pod = ExtendedPod(
        "{containers: [{name: main, resources: {requests: {cpu: 100m, example.com/gpu: 3}}}]}");
    framework::CycleState st;
    framework::PreFilterResult r;
    ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
    framework::Status s1 = f.FilterOn(p, st, *pod, "node-1");
    EXPECT_EQ(s1.code(), Code::kUnschedulable);
    EXPECT_EQ(s1.Message(),
              "claim default/<extended-resources>: request \"container-0-request-1\": 3 devices "
              "wanted, 2 free match");
    ASSERT_TRUE(f.FilterOn(p, st, *pod, "node-2").IsSuccess());
    ASSERT_TRUE(p.Reserve(st, *pod, "node-2").IsSuccess());
    EXPECT_EQ(f.dra.Stats().in_flight, 1);
    ASSERT_TRUE(p.PreBind(st, *pod, "node-2").IsSuccess());
    EXPECT_EQ(f.dra.Stats().in_flight, 0);
    ASSERT_EQ(f.handle.created_claims.size(), 1u);
    const api::ResourceClaim& c = f.handle.created_claims[0];
    EXPECT_EQ(c.meta.name, "p-extended-resources-x");
    EXPECT_EQ(c.meta.namespace_.view(), "default");
    ASSERT_NE(c.meta.FindAnnotation(api::kExtendedResourceClaimAnnotation), nullptr);
    EXPECT_EQ(*c.meta.FindAnnotation(api::kExtendedResourceClaimAnnotation), "true");
    ASSERT_EQ(c.meta.owner_references.size(), 1u);
    EXPECT_EQ(c.meta.owner_references[0].kind.view(), "Pod");
    EXPECT_EQ(c.meta.owner_references[0].name, "p");
    EXPECT_EQ(c.meta.owner_references[0].uid, "pod-uid");
    EXPECT_TRUE(c.meta.owner_references[0].controller);
    EXPECT_EQ(c.meta.finalizers,
              std::vector<std::string>{std::string(api::kDeleteProtectionFinalizer)});
    ASSERT_EQ(f.handle.claim_allocations.size(), 1u);
    EXPECT_EQ(f.handle.claim_allocations[0].first, "default/p-extended-resources-x");
    ASSERT_EQ(f.handle.claim_allocations[0].second.results.size(), 3u);
    for (const auto& res : f.handle.claim_allocations[0].second.results)
      EXPECT_EQ(res.pool.view(), "node-2");
    ASSERT_EQ(f.handle.claim_reservations[0].size(), 1u);
    EXPECT_EQ(f.handle.claim_reservations[0][0].resource.view(), "pods");
    EXPECT_EQ(f.handle.claim_reservations[0][0].uid, "pod-uid");
    ASSERT_EQ(f.handle.extended_statuses.size(), 1u);
    EXPECT_EQ(f.handle.extended_statuses[0].first, "default/p");
    EXPECT_EQ(f.handle.extended_statuses[0].second.resource_claim_name, "p-extended-resources-x");
    auto stored = f.dra.GetClaim("default", "p-extended-resources-x");
    ASSERT_NE(stored, nullptr);
    EXPECT_TRUE(stored->IsReservedFor("pod-uid"));
    EXPECT_EQ(f.dra.FindExtendedResourceClaim("pod-uid"), stored);
    int in_use = 0;
    for (uint16_t u : f.dra.Snapshot()->allocations->in_use) in_use += u;
    EXPECT_EQ(in_use, 3) << "held once";
    // Binding failed after PreBind: Unreserve deletes the claim and frees the devices.
    p.Unreserve(st, *pod, "node-2");
    EXPECT_EQ(f.handle.deleted_claims, std::vector<std::string>{"default/p-extended-resources-x"});
    EXPECT_EQ(f.dra.GetClaim("default", "p-extended-resources-x"), nullptr);
    in_use = 0;
    for (uint16_t u : f.dra.Snapshot()->allocations->in_use) in_use += u;
    EXPECT_EQ(in_use, 0);
  }

  TEST(DynamicResources, ExtendedResourceOnNodesWithAndWithoutDevicePlugin) {
    struct Case {
      const char* name;
      std::string spec;
      std::string node_extra;  // allocatable of the node besides cpu/memory/pods
      bool with_user_claim;
      Code filter;
      size_t created;      // extended-resource claims created
      size_t allocations;  // claim status writes
    };
    const Case cases[] = {
        {"device plugin serves it: nothing to do",
         "{containers: [{name: c, resources: {requests: {example.com/gpu: 3}}}]}",
         ", example.com/gpu: 4", false, Code::kSuccess, 0, 0},
        {"device plugin serves it, the user claim is still allocated",
         "{containers: [{name: c, resources: {requests: {example.com/gpu: 3}}}], resourceClaims: "
         "[{name: gpus, "
         "resourceClaimName: gpus}]}",
         ", example.com/gpu: 4", true, Code::kSuccess, 0, 1},
        {"no device plugin: DRA serves it with the user claim",
         "{containers: [{name: c, resources: {requests: {example.com/gpu: 3}}}], resourceClaims: "
         "[{name: gpus, "
         "resourceClaimName: gpus}]}",
         "", true, Code::kSuccess, 1, 2},
        {"no device plugin, too few devices beside the user claim",
         "{containers: [{name: c, resources: {requests: {example.com/gpu: 7}}}], resourceClaims: "
         "[{name: gpus, "
         "resourceClaimName: gpus}]}",
         "", true, Code::kUnschedulable, 0, 0},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name);
      Fixture f;
      f.dra.UpsertClass(GpuClassServing("example.com/gpu"));
      f.dra.UpsertSlice(Slice("plugin-node", 8));
      if (c.with_user_claim) f.dra.UpsertClaim(Claim("gpus", 2));
      f.handle.AddNode(testing::MakeNodeInfo(testing::ParseNode(gantry::StrCat(
          "metadata: {name: plugin-node}\nstatus: {allocatable: {cpu: 8, memory: 1Gi, pods: 110",
          c.node_extra, "}}"))));
      DynamicResources p({}, f.handle);
      auto pod = ExtendedPod(c.spec);
      framework::CycleState st;
      framework::PreFilterResult r;
      ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
      framework::Status s = f.FilterOn(p, st, *pod, "plugin-node");
      ASSERT_EQ(s.code(), c.filter) << s.Message();
      if (!s.IsSuccess()) continue;
      ASSERT_TRUE(p.Reserve(st, *pod, "plugin-node").IsSuccess());
      ASSERT_TRUE(p.PreBind(st, *pod, "plugin-node").IsSuccess());
      EXPECT_EQ(f.handle.created_claims.size(), c.created);
      EXPECT_EQ(f.handle.claim_allocations.size(), c.allocations);
      EXPECT_EQ(f.handle.extended_statuses.size(), c.created);
      EXPECT_EQ(f.dra.Stats().in_flight, 0);
    }
  }

  TEST(DynamicResources, ResourcesNoClassServesAreLeftToNodeResourcesFit) {
    Fixture f;  // class "gpu" serves only deviceclass.resource.kubernetes.io/gpu
    DynamicResources p({}, f.handle);
    auto pod =
        ExtendedPod("{containers: [{name: c, resources: {requests: {example.com/gpu: 1}}}]}");
    framework::CycleState st;
    framework::PreFilterResult r;
    EXPECT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSkip());
    // Without DRA state at all the pod is no business of this plugin either.
    testing::FakeHandle no_dra;
    DynamicResources q({}, no_dra);
    framework::CycleState st2;
    EXPECT_TRUE(q.PreFilter(st2, *pod, no_dra.NodeInfos(), &r).IsSkip());
  }

  TEST(DynamicResources, StaleExtendedResourceClaimIsDeletedByPostFilter) {
    Fixture f;
    f.dra.UpsertClass(GpuClassServing("example.com/gpu"));
    f.dra.UpsertClaim(Decode<api::ResourceClaim>(
        R"({"metadata":{"name":"p-extended-resources-old","namespace":"default","uid":"old-uid",)"
        R"("annotations":{"resource.kubernetes.io/extended-resource-claim":"true"},)"
        R"("ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"pod-uid","controller":true}]},)"
        R"("spec":{"devices":{"requests":[{"name":"container-0-request-0","exactly":{"deviceClassName":"gpu","count":1}}]}}})",
        &api::DecodeResourceClaim, "ResourceClaim"));
    DynamicResources p({}, f.handle);
    auto pod =
        ExtendedPod("{containers: [{name: c, resources: {requests: {example.com/gpu: 1}}}]}");
    framework::CycleState st;
    framework::PreFilterResult r;
    ASSERT_TRUE(p.PreFilter(st, *pod, f.handle.NodeInfos(), &r).IsSuccess());
    framework::Status s = f.FilterOn(p, st, *pod, "node-2");
    EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(s.Message(), "cannot schedule extended resource claim \"p-extended-resources-old\"");
    framework::PostFilterResult pf = p.PostFilter(st, *pod, {});
    EXPECT_EQ(pf.status.code(), Code::kUnschedulable);
    EXPECT_EQ(pf.status.Message(), "deletion of ResourceClaim completed");
    EXPECT_EQ(f.handle.deleted_claims,
              std::vector<std::string>{"default/p-extended-resources-old"});
    EXPECT_EQ(f.dra.FindExtendedResourceClaim("pod-uid"), nullptr);
    // The next attempt allocates afresh.
    framework::CycleState st2;
    ASSERT_TRUE(Bind(f, p, st2, *pod, "node-2").IsSuccess());
    EXPECT_EQ(f.handle.created_claims.size(), 1u);
  }

  TEST(DynamicResources, ExtendedResourceClaimWriteFailuresLeaveNothingHeld) {
    struct Case {
      const char* name;
      bool fail_create;
      std::string want;
    };
    const Case cases[] = {
        {"create fails", true,
         "create the claim for the extended resources of pod default/p: api down"},
        {"status write fails", false,
         "allocate the claim for the extended resources of pod default/p: api down"},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name);
      Fixture f;
      f.dra.UpsertClass(GpuClassServing("example.com/gpu"));
      DynamicResources p({}, f.handle);
      auto pod =
          ExtendedPod("{containers: [{name: c, resources: {requests: {example.com/gpu: 2}}}]}");
      framework::CycleState st;
      ASSERT_TRUE(PlaceOn(f, p, st, *pod, "node-2").IsSuccess());
      if (c.fail_create) {
        f.handle.dra_write_status = absl::UnavailableError("api down");
      } else {
        // Creation works; the status write after it fails.
        f.handle.fail_claim_status_writes = true;
      }
      framework::Status s = p.PreBind(st, *pod, "node-2");
      EXPECT_EQ(s.code(), Code::kError);
      EXPECT_EQ(s.Message(), c.want);
      f.handle.dra_write_status = absl::OkStatus();
      f.handle.fail_claim_status_writes = false;
      p.Unreserve(st, *pod, "node-2");
      EXPECT_EQ(f.dra.Stats().in_flight, 0);
      EXPECT_EQ(f.handle.deleted_claims.size(), c.fail_create ? 0u : 1u);
      int in_use = 0;
      for (uint16_t u : f.dra.Snapshot()->allocations->in_use) in_use += u;
      EXPECT_EQ(in_use, 0);
    }
  }

}  // namespace
}  // namespace gantry::plugins::dynamic_resources
