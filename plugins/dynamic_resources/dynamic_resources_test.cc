#include "plugins/dynamic_resources/dynamic_resources.h"

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "src/state/dra_state.h"
#include "test/testing/objects.h"

namespace gantry::plugins::dynamic_resources {
namespace {

using framework::Code;

template <typename T>
std::shared_ptr<const T> Decode(std::string_view json, T (*fn)(api::Decoder&, api::JsonValue), std::string_view kind) {
  simdjson::dom::parser parser;
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS) << json;
  api::Decoder d(kind);
  T obj = fn(d, v);
  EXPECT_TRUE(d.ok()) << d.error()->ToString();
  return std::make_shared<const T>(std::move(obj));
}

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

}  // namespace
}  // namespace gantry::plugins::dynamic_resources
