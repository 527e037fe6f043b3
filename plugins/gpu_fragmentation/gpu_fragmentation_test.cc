#include "plugins/gpu_fragmentation/gpu_fragmentation.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "src/dra/device_preference.h"
#include "src/state/dra_state.h"
#include "test/testing/objects.h"

namespace gantry::plugins::gpu_fragmentation {
namespace {

constexpr int64_t kGpu = 1'000'000;  // one whole GPU: capacity 1000, in milli-units

Shape Share(int64_t milli, int64_t cpu = 0) { return Shape{cpu, 1, milli * 1000, "gpu", {}}; }
Shape Whole(int32_t count, int64_t cpu = 0) {
  return Shape{cpu, count, count > 0 ? kGpu : 0, "gpu", {}};
}

Shape WithMemory(Shape s, int64_t bytes) {
  s.memory = bytes;
  return s;
}

NodeGpus Node(std::vector<int64_t> free_milli, int64_t cpu_free = 64000,
              int64_t memory_free = int64_t{1} << 36) {
  NodeGpus g;
  for (size_t i = 0; i < free_milli.size(); ++i) {
    g.devices.push_back(static_cast<int32_t>(i));
    g.free.push_back(free_milli[i] * 1000);
    g.full.push_back(kGpu);
  }
  g.cpu_free = cpu_free;
  g.memory_free = memory_free;
  return g;
}

std::vector<std::vector<bool>> AllMatch(size_t shapes, size_t devices, bool v = true) {
  return std::vector<std::vector<bool>>(shapes, std::vector<bool>(devices, v));
}

struct FragmentationCase {
  const char* name;
  NodeGpus node;
  std::vector<WeightedShape> shapes;
  bool match;
  double want_milli;  // expected F / 1000
};

// Checks the reference formula and the grouped table (one selector group
// here) against every case, under `measure`.
void CheckFragmentation(const std::vector<FragmentationCase>& cases, Measure measure) {
  for (const FragmentationCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto m = AllMatch(c.shapes.size(), c.node.free.size(), c.match);
    EXPECT_NEAR(Fragmentation(c.node, c.shapes, m, measure), c.want_milli * 1000, 1e-6);
    ShapeTable t(c.shapes, measure);
    auto gm = AllMatch(t.groups().size(), c.node.free.size(), c.match);
    EXPECT_NEAR(t.Fragmentation(c.node, gm), c.want_milli * 1000, 1e-6);
  }
}

TEST(Fragmentation, BothMeasuresTable) {
  const std::vector<FragmentationCase> cases = {
      {"no free GPU, no fragment", Node({0, 0}), {{Share(500), 1}}, true, 0},
      {"CPU-only shape: every free GPU is a fragment",
       Node({1000, 500}),
       {{Whole(0), 1}},
       true,
       1500},
      {"devices do not match the selectors -> all free",
       Node({1000}),
       {{Share(100), 1}},
       false,
       1000},
  };
  for (Measure measure : {Measure::kUsable, Measure::kFill}) CheckFragmentation(cases, measure);
}

TEST(Fragmentation, Table) {
  CheckFragmentation(
      {
          {"share fits: only GPUs with less free count",
           Node({1000, 500}),
           {{Share(600), 1}},
           true,
           500},
          {"share fits everywhere", Node({1000, 700}), {{Share(600), 1}}, true, 0},
          {"whole GPUs: too few fully free -> all free",
           Node({1000, 500}),
           {{Whole(2), 1}},
           true,
           1500},
          {"whole GPU fits: partial GPUs are fragments",
           Node({1000, 500, 250}),
           {{Whole(1), 1}},
           true,
           750},
          {"too little CPU -> all free",
           Node({1000, 1000}, 1000),
           {{Share(100, 2000), 1}},
           true,
           2000},
          {"too little memory -> all free",
           Node({1000, 600}, 64000, 1 << 30),
           {{WithMemory(Share(500), int64_t{2} << 30), 1}},
           true,
           1600},
          {"memory fits: only the GPU rule",
           Node({1000, 400}, 64000, int64_t{4} << 30),
           {{WithMemory(Share(500), int64_t{2} << 30), 1}},
           true,
           400},
          {"CPU and memory per shape",
           Node({1000, 400}, 8000, int64_t{4} << 30),
           {{WithMemory(Share(500, 4000), int64_t{8} << 30), 1},
            {WithMemory(Share(500, 16000), 1 << 30), 1},
            {WithMemory(Share(500, 4000), 1 << 30), 2}},
           true,
           1400 + 1400 + 2 * 400},  // weights are used as given
          {"weights mix",
           Node({1000, 300}),
           {{Share(500), 0.5}, {Whole(2), 0.25}, {Whole(0), 0.25}},
           true,
           0.5 * 300 + 0.25 * 1300 + 0.25 * 1300},
      },
      Measure::kUsable);
}

TEST(Fragmentation, FillTable) {
  CheckFragmentation(
      {
          {"remainders on every device count", Node({1000, 530}), {{Share(470), 1}}, true, 60 + 60},
          {"a device smaller than the share is all fragment",
           Node({1000, 190}),
           {{Share(810), 1}},
           true,
           190 + 190},
          {"whole GPUs: partial devices are fragments",
           Node({1000, 1000, 500}),
           {{Whole(1), 1}},
           true,
           500},
          {"multi-GPU copies: the odd whole device is a fragment",
           Node({1000, 1000, 1000}),
           {{Whole(2), 1}},
           true,
           1000},
          {"too few whole devices -> all free", Node({1000, 500}), {{Whole(2), 1}}, true, 1500},
          {"CPU bounds the copies",
           Node({1000, 1000, 1000, 1000}, 24000),
           {{Whole(1, 11000), 1}},
           true,
           2000},
          {"CPU bounds shares too",
           Node({1000, 1000}, 24000),
           {{Share(470, 12000), 1}},
           true,
           2000 - 2 * 470},
          {"memory bounds the copies",
           Node({1000, 1000}, 64000, int64_t{3} << 30),
           {{WithMemory(Whole(1), int64_t{2} << 30), 1}},
           true,
           1000},
          {"no CPU left -> all free", Node({1000}, 0), {{Share(100, 1000), 1}}, true, 1000},
          {"weights mix",
           Node({1000, 300}),
           {{Share(500), 0.5}, {Whole(1), 0.5}},
           true,
           0.5 * 300 + 0.5 * 300},
      },
      Measure::kFill);
}

// How the Fill measure ranks two placements (score = F before - F after).
TEST(Fragmentation, FillRanksPlacementsTable) {
  struct Case {
    const char* name;
    std::vector<WeightedShape> shapes;
    NodeGpus a_before, a_after, b_before, b_after;
    bool fill_prefers_a;
  } cases[] = {
      {"a 470 share goes next to another 470 rather than on a fresh GPU",
       {{Share(470), 0.5}, {Whole(1), 0.5}},
       Node({530, 1000}),
       Node({60, 1000}),
       Node({530, 1000}),
       Node({530, 530}),
       true},
      {"a whole-GPU pod goes where CPU strands GPUs for the CPU-hungry shape",
       {{Share(470, 12000), 1}},
       Node({1000, 1000}, 24000),
       Node({0, 1000}, 12000),
       Node({1000, 1000}, 96000),
       Node({0, 1000}, 84000),
       true},
      {"a CPU-only pod goes where CPU is plentiful",
       {{Whole(1, 10000), 1}},
       Node({1000, 1000}, 20000),
       Node({1000, 1000}, 10000),
       Node({1000, 1000}, 96000),
       Node({1000, 1000}, 86000),
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ShapeTable t(c.shapes, Measure::kFill);
    auto m = AllMatch(t.groups().size(), c.a_before.free.size());
    const double a = t.Fragmentation(c.a_before, m) - t.Fragmentation(c.a_after, m);
    const double b = t.Fragmentation(c.b_before, m) - t.Fragmentation(c.b_after, m);
    EXPECT_EQ(a > b, c.fill_prefers_a) << a << " vs " << b;
    EXPECT_NE(a, b);
  }
}

TEST(ShapeTable, AgreesWithFragmentationOnMixedShapes) {
  // Several selector groups, counts, capacities and CPU requests.
  std::vector<WeightedShape> shapes;
  uint64_t x = 12345;
  auto next = [&](uint64_t n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % n;
  };
  for (int i = 0; i < 40; ++i) {
    Shape s;
    s.cpu_milli = 1000 * static_cast<int64_t>(next(16));
    s.count = static_cast<int32_t>(next(4));
    s.capacity = s.count == 1 && next(2) ? 1000 * static_cast<int64_t>(50 + next(900)) : kGpu;
    if (s.count > 0) s.device_class = "gpu";
    if (s.count > 0 && next(3) == 0) s.selectors = {gantry::StrCat("sel-", next(2))};
    if (next(2) == 0) s.memory = static_cast<int64_t>(next(8)) << 30;
    shapes.push_back({s, 1.0 + static_cast<double>(next(5))});
  }
  for (Measure measure : {Measure::kUsable, Measure::kFill}) {
    ShapeTable table(shapes, measure);
    for (int trial = 0; trial < 50; ++trial) {
      SCOPED_TRACE(trial);
      std::vector<int64_t> free;
      const size_t n = 1 + next(8);
      for (size_t i = 0; i < n; ++i) free.push_back(static_cast<int64_t>(next(5)) * 250);
      NodeGpus node =
          Node(free, 1000 * static_cast<int64_t>(next(20)), static_cast<int64_t>(next(8)) << 30);
      // Per-group device matches, expanded to per-shape for the reference.
      std::vector<std::vector<bool>> group_matches;
      for (size_t g = 0; g < table.groups().size(); ++g) {
        std::vector<bool> m(n);
        for (size_t i = 0; i < n; ++i) m[i] = next(4) != 0;
        group_matches.push_back(m);
      }
      std::vector<std::vector<bool>> shape_matches;
      for (const WeightedShape& ws : shapes) {
        std::vector<bool> m(n, false);
        for (size_t g = 0; g < table.groups().size(); ++g) {
          if (table.groups()[g].device_class == ws.shape.device_class &&
              table.groups()[g].selectors == ws.shape.selectors) {
            m = group_matches[g];
          }
        }
        shape_matches.push_back(m);
      }
      EXPECT_NEAR(table.Fragmentation(node, group_matches),
                  Fragmentation(node, shapes, shape_matches, measure), 1e-3);
    }
  }
}

TEST(TopShapes, CoverageTable) {
  std::vector<WeightedShape> counts = {
      {Share(100), 50}, {Share(200), 30}, {Whole(1), 15}, {Whole(8), 5}};
  struct Case {
    double coverage;
    size_t kept;
  } cases[] = {{1.0, 4}, {0.95, 3}, {0.8, 2}, {0.5, 1}, {0.01, 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.coverage);
    auto top = TopShapes(counts, c.coverage);
    ASSERT_EQ(top.size(), c.kept);
    double sum = 0;
    for (const auto& ws : top) sum += ws.weight;
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_EQ(top[0].shape, Share(100));
  }
  EXPECT_TRUE(TopShapes({}, 1.0).empty());
}

GpuFragmentationArgs DecodeArgs(std::string_view json, std::string* error) {
  simdjson::dom::parser parser;
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS) << json;
  api::Decoder d(kArgsKind);
  GpuFragmentationArgs a = GpuFragmentationArgs::Decode(d, v);
  *error = d.ok() ? "" : d.error()->ToString();
  return a;
}

TEST(GpuFragmentationArgs, DecodeTable) {
  struct Case {
    const char* name;
    std::string json;
    std::string error;  // substring; "" = valid
  } cases[] = {
      {"defaults", "null", ""},
      {"all fields",
       R"({"capacity":"x.io/milli","weighting":"Pods","coverage":0.95,"shapes":[{"cpuMilli":6000,"count":1,"capacity":"460","deviceClassName":"gpu","selectors":["true"],"weight":3},{"cpuMilli":1000,"count":0}]})",
       ""},
      {"unqualified capacity", R"({"capacity":"milli"})", "must be a qualified name"},
      {"bad weighting", R"({"weighting":"Gpus"})", "Unsupported value: \"Gpus\""},
      {"tie break", R"({"tieBreak":"None"})", ""},
      {"bad tie break", R"({"tieBreak":"Spread"})", "Unsupported value: \"Spread\""},
      {"device choice", R"({"deviceChoice":"FirstFit"})", ""},
      {"fill measure", R"({"measure":"Fill"})", ""},
      {"bad measure", R"({"measure":"Spread"})", "Unsupported value: \"Spread\""},
      {"tie break with CPU", R"({"tieBreak":"PackingCpu"})", ""},
      {"tie break with a fixed order", R"({"tieBreak":"PackingStable"})", ""},
      {"resolution", R"({"resolution":"50"})", ""},
      {"negative resolution", R"({"resolution":"-1"})", "must not be negative"},
      {"memory fit off", R"({"memoryFit":false})", ""},
      {"sigmoid mapping", R"({"scoreMapping":"Sigmoid","sigmoidScale":"500","tieSeed":42})", ""},
      {"bad mapping", R"({"scoreMapping":"Log"})", "Unsupported value: \"Log\""},
      {"zero sigmoid scale", R"({"sigmoidScale":"0"})", "must be positive"},
      {"negative tie seed", R"({"tieSeed":-1})", "must be between 0 and"},
      {"shape with memory", R"({"shapes":[{"count":0,"memory":"8Gi"}]})", ""},
      {"shape negative memory", R"({"shapes":[{"count":0,"memory":"-1"}]})",
       "must not be negative"},
      {"bad device choice", R"({"deviceChoice":"BestFit"})", "Unsupported value: \"BestFit\""},
      {"CPU pod tie break", R"({"cpuPodTieBreak":"Surplus"})", ""},
      {"avoid pinned", R"({"avoidPinned":true})", ""},
      {"avoid pinned not a bool", R"({"avoidPinned":"yes"})", "expected"},
      {"bad CPU pod tie break", R"({"cpuPodTieBreak":"Spread"})", "Unsupported value: \"Spread\""},
      {"coverage 0", R"({"coverage":0})", "must be in (0, 1]"},
      {"coverage above 1", R"({"coverage":1.5})", "must be in (0, 1]"},
      {"shape without class", R"({"shapes":[{"count":1}]})",
       "a shape with devices needs a device class"},
      {"shape bad weight", R"({"shapes":[{"count":0,"weight":0}]})", "must be positive"},
      {"shape unknown field", R"({"shapes":[{"gpus":1}]})", "unknown field \"gpus\""},
      {"unknown field", R"({"window":10})", "unknown field \"window\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string error;
    GpuFragmentationArgs a = DecodeArgs(c.json, &error);
    if (c.error.empty()) {
      EXPECT_EQ(error, "");
    } else {
      EXPECT_NE(error.find(c.error), std::string::npos) << error;
    }
  }
  std::string error;
  GpuFragmentationArgs a = DecodeArgs(
      R"({"weighting":"Pods","shapes":[{"cpuMilli":6000,"count":1,"capacity":"460","deviceClassName":"gpu","memory":"1Gi"}]})",
      &error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(a.weighting, Weighting::kPods);
  ASSERT_EQ(a.shapes.size(), 1u);
  EXPECT_EQ(a.shapes[0].shape, (Shape{6000, 1, 460'000, "gpu", {}, int64_t{1} << 30}));
  EXPECT_EQ(a.shapes[0].weight, 1.0);
  // ToJson round-trips.
  std::string round = a.ToJson().dump();
  GpuFragmentationArgs b = DecodeArgs(round, &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(b.shapes, a.shapes);
  GpuFragmentationArgs c = DecodeArgs(
      R"({"tieBreak":"PackingCpu","resolution":"50m","memoryFit":false,"deviceChoice":"FirstFit","measure":"Fill"})",
      &error);
  ASSERT_EQ(error, "");
  GpuFragmentationArgs d = DecodeArgs(c.ToJson().dump(), &error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(d.tie_break, TieBreak::kPackingCpu);
  EXPECT_EQ(d.resolution, 50);
  EXPECT_FALSE(d.memory_fit);
  EXPECT_EQ(d.device_choice, DeviceChoice::kFirstFit);
  EXPECT_EQ(d.measure, Measure::kFill);
  EXPECT_EQ(a.measure, Measure::kUsable);
  EXPECT_EQ(a.score_mapping, ScoreMapping::kLinear);
  GpuFragmentationArgs e =
      DecodeArgs(R"({"scoreMapping":"Sigmoid","sigmoidScale":"500","tieSeed":42})", &error);
  ASSERT_EQ(error, "");
  GpuFragmentationArgs g = DecodeArgs(e.ToJson().dump(), &error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(g.score_mapping, ScoreMapping::kSigmoid);
  EXPECT_EQ(g.sigmoid_scale, 500'000);
  EXPECT_EQ(g.tie_seed, 42u);
}

// ---- Plugin on a DRA state ----------------------------------------------

template <typename T>
std::shared_ptr<const T> Decode(const std::string& json, T (*fn)(api::Decoder&, api::JsonValue)) {
  simdjson::dom::parser parser;
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS) << json;
  api::Decoder d("object");
  T obj = fn(d, v);
  EXPECT_TRUE(d.ok()) << d.error()->ToString();
  return std::make_shared<const T>(std::move(obj));
}

std::shared_ptr<const api::ResourceSlice> Slice(const std::string& node, int gpus,
                                                const std::string& model = "T4") {
  std::string devs;
  for (int i = 0; i < gpus; ++i) {
    devs += gantry::StrCat(
        i ? "," : "", R"({"name":"gpu-)", i,
        R"(","allowMultipleAllocations":true,"attributes":{"model":{"string":")", model,
        R"("}},"capacity":{"milli":{"value":"1000","requestPolicy":{"default":"1000","validRange":{"min":"1","step":"1"}}}}})");
  }
  return Decode<api::ResourceSlice>(
      gantry::StrCat(R"({"metadata":{"name":")", node,
                     R"(-gpus"},"spec":{"driver":"gpu.gantry.dev","pool":{"name":")", node,
                     R"(","generation":1,"resourceSliceCount":1},"nodeName":")", node,
                     R"(","devices":[)", devs, "]}}"),
      &api::DecodeResourceSlice);
}

// A claim for `count` devices of `milli` each; `constrained` adds a
// matchAttribute constraint (trivially met) that takes the allocator path.
std::shared_ptr<const api::ResourceClaim> Claim(const std::string& name, int count, int milli,
                                                bool constrained = false) {
  return Decode<api::ResourceClaim>(
      gantry::StrCat(
          R"({"metadata":{"name":")", name, R"(","namespace":"default","uid":"uid-)", name,
          R"("},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","count":)",
          count, R"(,"capacity":{"requests":{"milli":")", milli, R"("}}}}])",
          constrained ? R"(,"constraints":[{"matchAttribute":"gpu.gantry.dev/model"}])" : "",
          "}}}"),
      &api::DecodeResourceClaim);
}

// An allocated claim consuming `milli` of `device` on `node`.
std::shared_ptr<const api::ResourceClaim> Used(const std::string& name, const std::string& node,
                                               const std::string& device, int milli) {
  return Decode<api::ResourceClaim>(
      gantry::StrCat(
          R"({"metadata":{"name":")", name, R"(","namespace":"default","uid":"uid-)", name,
          R"("},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","capacity":{"requests":{"milli":")",
          milli,
          R"("}}}}]}},"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.gantry.dev","pool":")",
          node, R"(","device":")", device, R"(","shareID":"s-)", name,
          R"(","consumedCapacity":{"milli":")", milli,
          R"("}}]}},"reservedFor":[{"resource":"pods","name":"x","uid":"x-)", name, R"("}]}})"),
      &api::DecodeResourceClaim);
}

framework::PodInfoPtr PodWithClaim(const std::string& uid, const std::string& claim,
                                   int64_t cpu_milli = 1000) {
  return testing::PodInfoFromYaml(
      gantry::StrCat("metadata: {name: ", uid, ", namespace: default, uid: ", uid,
                     "}\nspec: {containers: [{name: c, resources: {requests: {cpu: ", cpu_milli,
                     "m}}}], resourceClaims: [{name: gpus, resourceClaimName: ", claim, "}]}"));
}

struct Fixture {
  explicit Fixture(int gpus_a = 2, int gpus_b = 2, int64_t cpu_a = 64000, int64_t cpu_b = 64000) {
    handle.SetDra(&dra);
    handle.AddNode(testing::MakeNodeInfo(testing::SimpleNode("node-a", cpu_a, int64_t{1} << 36)));
    handle.AddNode(testing::MakeNodeInfo(testing::SimpleNode("node-b", cpu_b, int64_t{1} << 36)));
    dra.UpsertClass(Decode<api::DeviceClass>(
        R"({"metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":{"expression":"device.driver == \"gpu.gantry.dev\""}}]}})",
        &api::DecodeDeviceClass));
    dra.UpsertSlice(Slice("node-a", gpus_a));
    dra.UpsertSlice(Slice("node-b", gpus_b));
  }
  // Raw scores per node (before normalisation), then normalised.
  // `state`: the cycle state to use (a fresh one when null).
  std::vector<framework::NodeScore> Scores(GpuFragmentation& p, const framework::PodInfo& pod,
                                           bool normalise, framework::CycleState* state = nullptr) {
    framework::CycleState fresh;
    framework::CycleState& st = state != nullptr ? *state : fresh;
    framework::PreFilterResult pr;
    p.PreFilter(st, pod, handle.NodeInfos(), &pr);
    std::vector<const framework::NodeInfo*> nodes(handle.NodeInfos().begin(),
                                                  handle.NodeInfos().end());
    EXPECT_TRUE(p.PreScore(st, pod, nodes).IsSuccess());
    std::vector<framework::NodeScore> out;
    for (const framework::NodeInfo* n : nodes) {
      int64_t s = 0;
      EXPECT_TRUE(p.Score(st, pod, *n, &s).IsSuccess());
      out.push_back({n->name(), s});
    }
    if (normalise) {
      EXPECT_TRUE(p.NormalizeScore(st, pod, out).IsSuccess());
    }
    return out;
  }
  state::DraState dra;
  testing::FakeHandle handle;
};

GpuFragmentationArgs FixedShapes(std::vector<WeightedShape> shapes) {
  GpuFragmentationArgs a;
  a.shapes = std::move(shapes);
  return a;
}

TEST(GpuFragmentation, ScoreIsFragmentationDecrease) {
  // node-a: gpu-0 has 400 left. node-b: both GPUs idle. Shapes: 400-shares
  // and whole GPUs, equally likely. A 400 pod on node-a fills gpu-0 (F 400
  // -> 0, +400); on node-b it breaks a whole GPU (F 0 -> 600, -600).
  Fixture f;
  f.dra.UpsertClaim(Used("old", "node-a", "gpu-0", 600));
  f.dra.UpsertClaim(Claim("new", 1, 400));
  GpuFragmentationArgs args = FixedShapes({{Share(400), 1}, {Whole(1), 1}});
  args.tie_break = TieBreak::kNone;
  GpuFragmentation p(args, f.handle);
  auto pod = PodWithClaim("p1", "new");
  auto raw = f.Scores(p, *pod, false);
  EXPECT_EQ(raw[0].score, 200'000 * kTieRange);   // 0.5 * 400 (milli-units x1000)
  EXPECT_EQ(raw[1].score, -300'000 * kTieRange);  // 0.5 * -600
  auto norm = f.Scores(p, *pod, true);
  EXPECT_EQ(norm[0].score, 100);
  EXPECT_EQ(norm[1].score, 0);
}

TEST(GpuFragmentation, TieBreakTable) {
  // Only whole-GPU pods are expected and a whole GPU is placed: the decrease
  // is 0 on both nodes (no partial GPU either way), so the tie-break decides.
  // want -1: exactly one of the two nodes gets the maximum (a fixed order).
  struct Case {
    const char* name;
    TieBreak tie;
    int gpus_a, gpus_b;
    int64_t cpu_a, cpu_b;
    int64_t want_a, want_b;
  } cases[] = {
      {"packing: less GPU left", TieBreak::kPacking, 2, 4, 64000, 64000, 100, 0},
      {"none", TieBreak::kNone, 2, 4, 64000, 64000, 0, 0},
      {"packing ignores CPU", TieBreak::kPacking, 2, 2, 64000, 32000, 0, 0},
      {"packing then CPU: less CPU left", TieBreak::kPackingCpu, 2, 2, 64000, 32000, 0, 100},
      {"GPU before CPU", TieBreak::kPackingCpu, 2, 4, 64000, 32000, 100, 0},
      {"packing then a fixed order", TieBreak::kPackingStable, 2, 2, 64000, 64000, -1, -1},
      {"packing before the order", TieBreak::kPackingStable, 2, 4, 64000, 64000, 100, 0},
      {"only the order", TieBreak::kStable, 2, 4, 64000, 64000, -1, -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f(c.gpus_a, c.gpus_b, c.cpu_a, c.cpu_b);
    f.dra.UpsertClaim(Claim("new", 1, 1000));
    GpuFragmentationArgs args = FixedShapes({{Whole(1), 1}});
    args.tie_break = c.tie;
    GpuFragmentation p(args, f.handle);
    auto s = f.Scores(p, *PodWithClaim("p", "new"), true);
    if (c.want_a < 0) {
      EXPECT_EQ(std::max(s[0].score, s[1].score), 100);
      EXPECT_EQ(std::min(s[0].score, s[1].score), 0);
      // The order is fixed: the same node wins again.
      auto again = f.Scores(p, *PodWithClaim("p", "new"), true);
      EXPECT_EQ(again[0].score, s[0].score);
      continue;
    }
    EXPECT_EQ(s[0].score, c.want_a);
    EXPECT_EQ(s[1].score, c.want_b);
  }
}

// Raw scores (tie-break off) of a 400 pod on node-a, whose gpu-0 has `used`
// taken, and on idle node-b, with 400-shares and whole GPUs equally likely
// and the other fields of `args`.
std::vector<framework::NodeScore> ShareScoresAfter(int used, GpuFragmentationArgs args) {
  Fixture f;
  f.dra.UpsertClaim(Used("old", "node-a", "gpu-0", used));
  f.dra.UpsertClaim(Claim("new", 1, 400));
  args.shapes = {{Share(400), 1}, {Whole(1), 1}};
  args.tie_break = TieBreak::kNone;
  GpuFragmentation p(args, f.handle);
  return f.Scores(p, *PodWithClaim("p", "new"), false);
}

TEST(GpuFragmentation, SigmoidTiesGoToTheTieBreak) {
  // node-a: gpu-0 has 400 left, node-b: gpu-0 has 500 left; the others idle.
  // Whole GPUs (0.99) and 200-shares (0.01) expected; a 300 pod. Exactly,
  // node-b is better by 1 milli-GPU (its remainder of 200 still takes a
  // 200-share); under the sigmoid both score 57 and the tie-break decides
  // (node-a keeps less GPU capacity left).
  struct Case {
    ScoreMapping mapping;
    const char* want;  // the node with the maximum
  } cases[] = {{ScoreMapping::kLinear, "node-b"}, {ScoreMapping::kSigmoid, "node-a"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.want);
    Fixture f(2, 2, 32000, 64000);
    f.dra.UpsertClaim(Used("ua", "node-a", "gpu-0", 600));
    f.dra.UpsertClaim(Used("ub", "node-b", "gpu-0", 500));
    f.dra.UpsertClaim(Claim("new", 1, 300));
    GpuFragmentationArgs args = FixedShapes({{Whole(1), 99}, {Share(200), 1}});
    args.score_mapping = c.mapping;
    args.tie_break = TieBreak::kPackingCpu;
    GpuFragmentation p(args, f.handle);
    auto s = f.Scores(p, *PodWithClaim("p", "new"), true);
    EXPECT_EQ(s[0].score == 100   ? "node-a"
              : s[1].score == 100 ? "node-b"
                                  : "",
              std::string(c.want));
  }
}

TEST(GpuFragmentation, SigmoidDeviceChoiceTable) {
  // node-a: gpu-0 has 400 left, gpu-1 500, gpu-2 and gpu-3 idle; a 300 pod;
  // shapes as above. Exactly, gpu-1 is better by 1 milli-GPU; under the
  // sigmoid both score 57 and inventory order (gpu-0, the allocator's first
  // fit, so no preference) wins.
  struct Case {
    ScoreMapping mapping;
    std::vector<std::string> want;  // preferred devices on node-a
  } cases[] = {{ScoreMapping::kLinear, {"gpu-1"}}, {ScoreMapping::kSigmoid, {}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.mapping));
    Fixture f(4, 4);
    f.dra.UpsertClaim(Used("u0", "node-a", "gpu-0", 600));
    f.dra.UpsertClaim(Used("u1", "node-a", "gpu-1", 500));
    f.dra.UpsertClaim(Claim("new", 1, 300));
    GpuFragmentationArgs args = FixedShapes({{Whole(1), 99}, {Share(200), 1}});
    args.score_mapping = c.mapping;
    GpuFragmentation p(args, f.handle);
    framework::CycleState st;
    f.Scores(p, *PodWithClaim("p", "new"), false, &st);
    auto pref = st.Read<dra::DevicePreference>(dra::kDevicePreferenceKey);
    ASSERT_TRUE(pref.ok());
    const state::DraInventory* inv = f.dra.Snapshot()->inventory.get();
    std::vector<std::string> got;
    for (int32_t dev : (*pref)->Get("node-a", inv))
      got.push_back(inv->devices[static_cast<size_t>(dev)].device->name.str());
    EXPECT_EQ(got, c.want);
  }
}

TEST(GpuFragmentation, SeededStableOrderTable) {
  // Two nodes in the same state: the fixed order decides, the same way on
  // every cycle for one seed; over a few seeds both nodes win sometimes.
  std::set<int64_t> winners;
  for (uint64_t seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) {
    SCOPED_TRACE(seed);
    Fixture f;
    f.dra.UpsertClaim(Claim("new", 1, 1000));
    GpuFragmentationArgs args = FixedShapes({{Whole(1), 1}});
    args.tie_break = TieBreak::kStable;
    args.tie_seed = seed;
    GpuFragmentation p(args, f.handle);
    auto s = f.Scores(p, *PodWithClaim("p", "new"), true);
    auto again = f.Scores(p, *PodWithClaim("p", "new"), true);
    EXPECT_EQ(again[0].score, s[0].score);
    EXPECT_EQ(std::max(s[0].score, s[1].score), 100);
    winners.insert(s[0].score == 100 ? 0 : 1);
  }
  EXPECT_EQ(winners.size(), 2u);
}

TEST(GpuFragmentation, ScoreMappingTable) {
  // Linear, used 400: node-a's gpu-0 has 600 left and the pod fills it to
  // 200 left (F 300 -> 200 milli-GPU, x0.5 weights folded in: +100'000
  // milli-units); on node-b it breaks a whole GPU (F 0 -> 300: -300'000).
  // Steps of one GPU or more make the two nodes tie.
  // Sigmoid, used 600: decreases of +0.2 GPU on node-a and -0.3 GPU on
  // node-b (as ScoreIsFragmentationDecrease), mapped to
  // floor(100 * sigmoid(decrease / scale)).
  struct Case {
    ScoreMapping mapping;
    int used;
    int64_t step;  // resolution (Linear) or sigmoid scale, milli-units
    int64_t want_a, want_b;
  } cases[] = {
      {ScoreMapping::kLinear, 400, 0, 100'000, -300'000},
      {ScoreMapping::kLinear, 400, 100'000, 1, -3},
      {ScoreMapping::kLinear, 400, 1'000'000, 0, 0},
      {ScoreMapping::kLinear, 400, 10'000'000, 0, 0},
      {ScoreMapping::kSigmoid, 600, 1'000'000, 54, 42},   // sigmoid(0.2), sigmoid(-0.3)
      {ScoreMapping::kSigmoid, 600, 2'000'000, 52, 46},   // sigmoid(0.1), sigmoid(-0.15)
      {ScoreMapping::kSigmoid, 600, 100'000, 88, 4},      // sigmoid(2), sigmoid(-3)
      {ScoreMapping::kSigmoid, 600, 10'000'000, 50, 49},  // sigmoid(0.02), sigmoid(-0.03)
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(gantry::StrCat(static_cast<int>(c.mapping), " ", c.step));
    GpuFragmentationArgs args;
    args.score_mapping = c.mapping;
    if (c.mapping == ScoreMapping::kSigmoid) {
      args.sigmoid_scale = c.step;
    } else {
      args.resolution = c.step;
    }
    auto raw = ShareScoresAfter(c.used, args);
    EXPECT_EQ(raw[0].score, c.want_a * kTieRange);
    EXPECT_EQ(raw[1].score, c.want_b * kTieRange);
  }
}

TEST(GpuFragmentation, FastPathAgreesWithAllocator) {
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, int>> used;  // "node/device" -> milli
    int count, milli;
  } cases[] = {
      {"share on idle nodes", {}, 1, 300},
      {"share skips a full GPU", {{"node-a/gpu-0", 900}, {"node-b/gpu-1", 500}}, 1, 200},
      {"share does not fit first GPU", {{"node-a/gpu-0", 700}, {"node-b/gpu-0", 100}}, 1, 400},
      {"two whole GPUs", {{"node-a/gpu-1", 100}}, 2, 1000},
      {"whole GPU", {{"node-a/gpu-0", 1000}, {"node-b/gpu-2", 10}}, 1, 1000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f(4, 4);
    int i = 0;
    for (const auto& [where, milli] : c.used) {
      const size_t slash = where.find('/');
      f.dra.UpsertClaim(
          Used(gantry::StrCat("u", i++), where.substr(0, slash), where.substr(slash + 1), milli));
    }
    f.dra.UpsertClaim(Claim("fast", c.count, c.milli));
    f.dra.UpsertClaim(Claim("slow", c.count, c.milli, /*constrained=*/true));
    GpuFragmentationArgs args =
        FixedShapes({{Share(300), 2}, {Share(600), 1}, {Whole(1), 3}, {Whole(2), 1}});
    args.device_choice = DeviceChoice::kFirstFit;  // the allocator's own choice
    GpuFragmentation p(args, f.handle);
    auto fast = f.Scores(p, *PodWithClaim("p-fast", "fast"), false);
    auto slow = f.Scores(p, *PodWithClaim("p-slow", "slow"), false);
    ASSERT_EQ(fast.size(), slow.size());
    for (size_t n = 0; n < fast.size(); ++n)
      EXPECT_EQ(fast[n].score, slow[n].score) << fast[n].name;
  }
}

TEST(GpuFragmentation, DeviceChoiceTable) {
  // node-a and node-b have gpu-0 .. gpu-3. The preference names node-a's
  // devices where the choice differs from the allocator's first fit; none
  // is recorded where they agree, and none at all under FirstFit.
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, int>> used;  // device of node-a -> milli used
    int count, milli;
    DeviceChoice choice;
    std::vector<WeightedShape> shapes;
    std::vector<std::string> want;  // preferred devices on node-a
    bool entry;                     // a DevicePreference is written at all
  } cases[] = {
      {"fills the partly used GPU",
       {{"gpu-2", 700}},
       1,
       300,
       DeviceChoice::kFragmentation,
       {{Share(300), 1}, {Whole(1), 1}},
       {"gpu-2"},
       true},
      {"tightest of two partial GPUs",
       {{"gpu-0", 400}, {"gpu-1", 600}},
       1,
       400,
       DeviceChoice::kFragmentation,
       {{Share(400), 1}, {Share(600), 1}},
       {"gpu-1"},
       true},
      {"whole GPU agrees with first fit",
       {{"gpu-0", 500}},
       1,
       1000,
       DeviceChoice::kFragmentation,
       {{Share(500), 1}, {Whole(1), 1}},
       {},
       true},
      {"two devices",
       {{"gpu-1", 700}, {"gpu-3", 700}},
       2,
       300,
       DeviceChoice::kFragmentation,
       {{Share(300), 1}, {Whole(1), 1}},
       {"gpu-1", "gpu-3"},
       true},
      {"first fit records nothing",
       {{"gpu-2", 700}},
       1,
       300,
       DeviceChoice::kFirstFit,
       {{Share(300), 1}, {Whole(1), 1}},
       {},
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f(4, 4);
    int i = 0;
    for (const auto& [dev, milli] : c.used)
      f.dra.UpsertClaim(Used(gantry::StrCat("u", i++), "node-a", dev, milli));
    f.dra.UpsertClaim(Claim("new", c.count, c.milli));
    GpuFragmentationArgs args = FixedShapes(c.shapes);
    args.device_choice = c.choice;
    GpuFragmentation p(args, f.handle);
    framework::CycleState st;
    f.Scores(p, *PodWithClaim("p", "new"), false, &st);
    auto pref = st.Read<dra::DevicePreference>(dra::kDevicePreferenceKey);
    ASSERT_EQ(pref.ok(), c.entry);
    if (!c.entry) continue;
    const state::DraInventory* inv = f.dra.Snapshot()->inventory.get();
    std::vector<std::string> got;
    for (int32_t dev : (*pref)->Get("node-a", inv))
      got.push_back(inv->devices[static_cast<size_t>(dev)].device->name.str());
    EXPECT_EQ(got, c.want);
    EXPECT_TRUE((*pref)->Get("node-b", inv).empty());  // idle node: first fit is as good
  }
}

TEST(GpuFragmentation, DeviceChoiceLowersFragmentation) {
  // The score assumes the chosen devices: filling node-a's partly used GPU
  // removes its fragment (F 300 -> 0) where first fit would break an idle
  // GPU (F 300 -> 1000 under the whole-GPU shape).
  struct Case {
    DeviceChoice choice;
    int64_t want_a;  // raw score on node-a (tie-break off), milli-units x1000 x kTieRange
  } cases[] = {{DeviceChoice::kFragmentation, 150'000}, {DeviceChoice::kFirstFit, -350'000}};
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.choice));
    Fixture f(4, 4);
    f.dra.UpsertClaim(Used("u", "node-a", "gpu-2", 700));
    f.dra.UpsertClaim(Claim("new", 1, 300));
    GpuFragmentationArgs args = FixedShapes({{Share(300), 1}, {Whole(1), 1}});
    args.tie_break = TieBreak::kNone;
    args.device_choice = c.choice;
    GpuFragmentation p(args, f.handle);
    auto raw = f.Scores(p, *PodWithClaim("p", "new"), false);
    EXPECT_EQ(raw[0].score, c.want_a * kTieRange);
  }
}

TEST(GpuFragmentation, LearnsShapesFromArrivingPods) {
  Fixture f;
  f.dra.UpsertClaim(Claim("a", 1, 500));
  f.dra.UpsertClaim(Claim("b", 2, 1000));
  GpuFragmentationArgs args;
  args.weighting = Weighting::kPods;
  GpuFragmentation p(args, f.handle);
  framework::CycleState st;
  framework::PreFilterResult pr;
  auto pa = PodWithClaim("pa", "a", 2000);
  auto pb = PodWithClaim("pb", "b", 4000);
  auto cpu = testing::PodInfoFromYaml(
      "metadata: {name: c, namespace: default, uid: c}\nspec: {containers: [{name: "
      "c, resources: {requests: {cpu: 1}}}]}");
  for (const auto* pod : {pa.get(), pa.get(), pb.get(), cpu.get(), pb.get()}) {
    p.PreFilter(st, *pod, f.handle.NodeInfos(), &pr);  // the same uid counts once
  }
  auto d = p.Distribution();
  ASSERT_EQ(d.size(), 3u);
  for (const WeightedShape& ws : d) EXPECT_NEAR(ws.weight, 1.0 / 3, 1e-12) << ws.shape.Key();
  // Per unit of demand: 500 vs 2000 vs 0 milli-GPU.
  GpuFragmentation q(GpuFragmentationArgs{}, f.handle);
  for (const auto* pod : {pa.get(), pb.get(), cpu.get()})
    q.PreFilter(st, *pod, f.handle.NodeInfos(), &pr);
  d = q.Distribution();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].shape, (Shape{4000, 2, 1'000'000, "gpu", {}}));
  EXPECT_NEAR(d[0].weight, 0.8, 1e-12);
  EXPECT_NEAR(d[1].weight, 0.2, 1e-12);
}

TEST(GpuFragmentation, CpuPodTieBreakTable) {
  // A pod without devices on two nodes of 64 cores; the distribution's GPU
  // pods ask 16 cores per whole GPU (and 8 per 500-milli share, the same per
  // unit). Nothing fragments either way, so only the tie-break decides.
  // Surplus = free CPU - 16 cores x free GPUs: node-a (2 GPUs) keeps 32 - 4
  // cores, node-b (4 GPUs) 0 - 4, so node-a; with GPUs in use on node-b
  // its surplus grows. want -1: a fixed order (one node wins, the same again).
  struct Case {
    const char* name;
    CpuPodTieBreak cpu_tie;
    int gpus_a, gpus_b;
    int64_t cpu_a, cpu_b;
    int used_b;  // whole GPUs in use on node-b
    int64_t want_a, want_b;
  } cases[] = {
      {"surplus: fewer GPUs per core", CpuPodTieBreak::kSurplus, 2, 4, 64000, 64000, 0, 100, 0},
      {"surplus: more spare CPU", CpuPodTieBreak::kSurplus, 2, 2, 48000, 64000, 0, 0, 100},
      {"surplus counts free GPUs only", CpuPodTieBreak::kSurplus, 2, 4, 64000, 64000, 3, 0, 100},
      {"same: the configured tie-break", CpuPodTieBreak::kSame, 2, 4, 64000, 64000, 0, -1, -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f(c.gpus_a, c.gpus_b, c.cpu_a, c.cpu_b);
    for (int i = 0; i < c.used_b; ++i)
      f.dra.UpsertClaim(Used(gantry::StrCat("u", i), "node-b", gantry::StrCat("gpu-", i), 1000));
    GpuFragmentationArgs args =
        FixedShapes({{Whole(1, 16000), 1}, {Share(500, 8000), 1}, {Whole(0, 4000), 1}});
    args.score_mapping = ScoreMapping::kSigmoid;
    args.tie_break = TieBreak::kStable;
    args.cpu_pod_tie_break = c.cpu_tie;
    GpuFragmentation p(args, f.handle);
    auto pod = testing::PodInfoFromYaml(
        "metadata: {name: c, namespace: default, uid: c}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: 4}}}]}");
    auto s = f.Scores(p, *pod, true);
    if (c.want_a < 0) {
      EXPECT_EQ(std::max(s[0].score, s[1].score), 100);
      EXPECT_EQ(std::min(s[0].score, s[1].score), 0);
      EXPECT_EQ(f.Scores(p, *pod, true)[0].score, s[0].score);
      continue;
    }
    EXPECT_EQ(s[0].score, c.want_a);
    EXPECT_EQ(s[1].score, c.want_b);
  }
}

TEST(GpuFragmentation, AvoidPinnedTable) {
  // node-a has G2s, node-b T4s; 1 % of the expected pods are pinned to T4.
  // An unpinned whole-GPU pod decreases fragmentation by 10 milli-GPU on
  // node-a (one G2 fewer that the pinned pods cannot use) and by 0 on
  // node-b: the same sigmoid level, so the tie-break decides. With
  // avoidPinned it leaves the T4s to the pinned pods; a pod with selectors,
  // or avoidPinned off, follows the fixed order.
  // want "": either node, the same one again (the fixed order).
  const std::string t4 = R"(device.attributes["gpu.gantry.dev"].model == "T4")";
  const std::string either = R"(device.attributes["gpu.gantry.dev"].model in ["T4", "G2"])";
  struct Case {
    const char* name;
    bool avoid;
    std::string pod_selector;
    std::string want;
  } cases[] = {
      {"unpinned pod avoids the pinned model", true, "", "node-a"},
      {"off: the fixed order (node-b first)", false, "", "node-b"},
      {"a pod with selectors keeps the fixed order", true, either, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f;
    f.dra.UpsertSlice(Slice("node-a", 2, "G2"));
    std::string claim =
        R"({"metadata":{"name":"new","namespace":"default","uid":"uid-new"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu")";
    if (!c.pod_selector.empty()) {
      claim += gantry::StrCat(R"(,"selectors":[{"cel":{"expression":)",
                              nlohmann::json(c.pod_selector).dump(), "}}]");
    }
    claim += R"(,"capacity":{"requests":{"milli":"1000"}}}}]}}})";
    f.dra.UpsertClaim(Decode<api::ResourceClaim>(claim, &api::DecodeResourceClaim));
    Shape pinned = Whole(1);
    pinned.selectors = {t4};
    GpuFragmentationArgs args = FixedShapes({{Whole(1), 99}, {pinned, 1}});
    args.score_mapping = ScoreMapping::kSigmoid;
    args.tie_break = TieBreak::kStable;
    args.avoid_pinned = c.avoid;
    GpuFragmentation p(args, f.handle);
    auto s = f.Scores(p, *PodWithClaim("p", "new"), true);
    ASSERT_EQ(std::max(s[0].score, s[1].score), 100);
    const std::string got = s[0].score == 100 ? "node-a" : "node-b";
    if (c.want.empty()) {
      EXPECT_EQ(f.Scores(p, *PodWithClaim("p", "new"), true)[0].score, s[0].score);
    } else {
      EXPECT_EQ(got, c.want);
    }
  }
}

TEST(GpuFragmentation, SkipsWithoutDraOrShapes) {
  testing::FakeHandle handle;
  GpuFragmentation p(GpuFragmentationArgs{}, handle);
  auto pod =
      testing::PodInfoFromYaml("metadata: {name: c, uid: c}\nspec: {containers: [{name: c}]}");
  framework::CycleState st;
  EXPECT_TRUE(p.PreScore(st, *pod, {}).IsSkip());
  Fixture f;
  GpuFragmentation q(GpuFragmentationArgs{}, f.handle);  // nothing learned yet
  EXPECT_TRUE(q.PreScore(st, *pod, {}).IsSkip());
}

}  // namespace
}  // namespace gantry::plugins::gpu_fragmentation
