// Tests of the FGD trace replay: CSV parsing and its errors, the arrival
// plan (shuffle + 1.3x inflation), the discrete curve, and a smoke replay of
// a small synthetic trace through the real engine that checks the protocol
// invariants (not the numbers).
#include <algorithm>
#include <set>
#include <string>

#include "bench/fgd/plot.h"
#include "bench/fgd/policies.h"
#include "bench/fgd/replay.h"
#include "bench/fgd/trace.h"
#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "plugins/registry/registry.h"

namespace gantry::fgd {
namespace {

constexpr std::string_view kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n";
constexpr std::string_view kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_"
    "time,scheduled_time\n";

TEST(ParseNodeCsv, ErrorTable) {
  struct Case {
    const char* name;
    std::string text;
    std::string error;  // "" = parses
  } cases[] = {
      {"ok", gantry::StrCat(kNodeHeader, "n-0,64000,262144,2,P100\nn-1,96000,393216,0,\n"), ""},
      {"columns in another order", "model,gpu,sn,memory_mib,cpu_milli\nT4,1,n-0,1024,1000\n", ""},
      {"missing column", "sn,cpu_milli,memory_mib,gpu\nn-0,1,1,1\n",
       "nodes.csv:1: missing column \"model\""},
      {"bad cpu", gantry::StrCat(kNodeHeader, "n-0,64000,262144,2,P100\nn-1,abc,1,1,T4\n"),
       "nodes.csv:3: column \"cpu_milli\": \"abc\" is not an integer in [0, "},
      {"negative gpu", gantry::StrCat(kNodeHeader, "n-0,1,1,-2,T4\n"),
       "nodes.csv:2: column \"gpu\": \"-2\""},
      {"model missing", gantry::StrCat(kNodeHeader, "n-0,1,1,2,\n"),
       "nodes.csv:2: column \"model\": \"\" is not"},
      {"short row", gantry::StrCat(kNodeHeader, "n-0,1,1\n"),
       "nodes.csv:2: 3 fields, the header has 5"},
      {"duplicate", gantry::StrCat(kNodeHeader, "n-0,1,1,1,T4\nn-0,1,1,1,T4\n"),
       "nodes.csv:3: column \"sn\": duplicate node \"n-0\""},
      {"bad name", gantry::StrCat(kNodeHeader, "Node_0,1,1,1,T4\n"), "nodes.csv:2: column \"sn\""},
      {"empty", "", "nodes.csv: empty file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParseNodeCsv(c.text, "nodes.csv");
    if (c.error.empty()) {
      EXPECT_TRUE(r.ok()) << r.status();
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_NE(std::string(r.status().message()).find(c.error), std::string::npos) << r.status();
    }
  }
}

TEST(ParsePodCsv, FieldsAndErrors) {
  auto ok = ParsePodCsv(gantry::StrCat(kPodHeader, "p-0,6000,12288,1,460,,LS,Running,0,1,0\n",
                                       "p-1,1000,1024,2,1000,V100M16|V100M32,LS,Running,0,1,0\n",
                                       "p-2,1000,1024,0,0,,BE,Failed,0,1,\n"),
                        "pods.csv");
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->size(), 3u);
  EXPECT_EQ((*ok)[0].gpu_milli, 460);
  EXPECT_EQ((*ok)[1].GpuMilliTotal(), 2000);
  EXPECT_EQ((*ok)[1].gpu_spec, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_EQ(ModelSelector((*ok)[1].gpu_spec),
            "device.attributes[\"gpu.gantry.dev\"].model in [\"V100M16\", \"V100M32\"]");
  // The 5-column multigpu files.
  EXPECT_TRUE(
      ParsePodCsv("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np-0,1,1,8,1000\n", "m.csv").ok());
  struct Case {
    const char* name;
    std::string row;
    std::string error;
  } cases[] = {
      {"milli above 1000", "p-0,1,1,1,1001,,LS,R,0,1,0",
       "pods.csv:2: column \"gpu_milli\": \"1001\""},
      {"milli without gpu", "p-0,1,1,0,500,,LS,R,0,1,0",
       "pods.csv:2: column \"gpu_milli\": 500 on a pod with num_gpu 0"},
      {"gpu without milli", "p-0,1,1,1,0,,LS,R,0,1,0",
       "pods.csv:2: column \"gpu_milli\": 0 on a pod that asks"},
      {"spec without gpu", "p-0,1,1,0,0,T4,LS,R,0,1,0",
       "pods.csv:2: column \"gpu_spec\": set on a pod without GPUs"},
      {"bad spec", "p-0,1,1,1,1000,T4||P100,LS,R,0,1,0",
       "pods.csv:2: column \"gpu_spec\": \"\" is not a GPU model"},
      {"bad memory", "p-0,1,1.5,1,1000,,LS,R,0,1,0", "pods.csv:2: column \"memory_mib\": \"1.5\""},
      {"quoted", "\"p-0\",1,1,1,1000,,LS,R,0,1,0",
       "pods.csv:2: quoted CSV fields are not supported"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParsePodCsv(gantry::StrCat(kPodHeader, c.row, "\n"), "pods.csv");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(std::string(r.status().message()).find(c.error), std::string::npos) << r.status();
  }
}

// A small synthetic cluster and workload with the trace's kinds of pods
// (CPU-only, GPU-sharing, whole-GPU, multi-GPU, model-constrained).
std::vector<TraceNode> SmallNodes() {
  std::vector<TraceNode> nodes;
  const char* models[] = {"T4", "P100", "V100M32"};
  for (int i = 0; i < 24; ++i) {
    const int gpus = i % 3 == 0 ? 8 : i % 3 == 1 ? 2 : 4;
    nodes.push_back(TraceNode{gantry::StrCat("node-", i), 96000, 393216, gpus, models[i % 3]});
  }
  return nodes;
}

std::vector<TracePod> SmallPods(int n) {
  std::vector<TracePod> pods;
  Rng rng(7);
  const int32_t shares[] = {100, 250, 460, 500, 700};
  for (int i = 0; i < n; ++i) {
    TracePod p;
    p.name = gantry::StrCat("pod-", i);
    p.cpu_milli = 1000 * static_cast<int64_t>(1 + rng.Below(12));
    p.memory_mib = 1024 * static_cast<int64_t>(1 + rng.Below(16));
    const uint64_t kind = rng.Below(100);
    if (kind < 12) {
      p.num_gpu = 0;
    } else if (kind < 50) {
      p.num_gpu = 1;
      p.gpu_milli = shares[rng.Below(5)];
    } else if (kind < 92) {
      p.num_gpu = 1;
      p.gpu_milli = 1000;
    } else {
      p.num_gpu = kind < 96 ? 2 : 4;
      p.gpu_milli = 1000;
    }
    if (p.num_gpu > 0 && rng.Below(10) == 0) p.gpu_spec = {"T4"};
    pods.push_back(std::move(p));
  }
  return pods;
}

TEST(PlanArrivals, ShufflesAndInflatesToTarget) {
  const auto nodes = SmallNodes();
  const auto pods = SmallPods(60);
  for (uint64_t seed : {42u, 43u, 51u}) {
    SCOPED_TRACE(seed);
    ArrivalPlan plan = PlanArrivals(nodes, pods, seed, 1.3);
    EXPECT_EQ(plan.capacity_milli, 1000 * (8 * 8 + 8 * 2 + 8 * 4));
    EXPECT_EQ(plan.target_milli, plan.capacity_milli * 13 / 10);
    ASSERT_LT(plan.original_milli, plan.target_milli);  // the synthetic trace is below target
    int64_t sum = 0;
    std::multiset<std::string> originals;
    int64_t clones = 0;
    for (const Arrival& a : plan.arrivals) {
      sum += pods[a.pod].GpuMilliTotal();
      if (a.clone) {
        EXPECT_EQ(a.name, gantry::StrCat(pods[a.pod].name, "-tuned-", clones));
        ++clones;
      } else {
        EXPECT_EQ(clones, 0) << "clones are appended after every original pod";
        originals.insert(a.name);
      }
    }
    EXPECT_EQ(originals.size(), pods.size());
    EXPECT_EQ(std::set<std::string>(originals.begin(), originals.end()).size(), pods.size());
    EXPECT_EQ(clones, plan.clones);
    EXPECT_EQ(sum, plan.planned_milli);
    EXPECT_LE(plan.planned_milli, plan.target_milli);
    EXPECT_GT(plan.planned_milli, plan.target_milli - 4000);  // stopped by a clone that did not fit
    // Deterministic per seed; the order differs between seeds.
    ArrivalPlan again = PlanArrivals(nodes, pods, seed, 1.3);
    ASSERT_EQ(again.arrivals.size(), plan.arrivals.size());
    for (size_t i = 0; i < plan.arrivals.size(); ++i)
      EXPECT_EQ(again.arrivals[i].name, plan.arrivals[i].name);
    ArrivalPlan other = PlanArrivals(nodes, pods, seed + 100, 1.3);
    bool differs = false;
    for (size_t i = 0; i < pods.size(); ++i)
      differs |= other.arrivals[i].name != plan.arrivals[i].name;
    EXPECT_TRUE(differs);
  }
}

TEST(PlanArrivals, DropsPodsAboveTarget) {
  const auto nodes = SmallNodes();
  const auto pods = SmallPods(400);
  ArrivalPlan plan = PlanArrivals(nodes, pods, 42, 0.5);
  ASSERT_GT(plan.original_milli, plan.target_milli);
  EXPECT_EQ(plan.clones, 0);
  EXPECT_GT(plan.removed, 0);
  EXPECT_LE(plan.planned_milli, plan.target_milli);
  EXPECT_EQ(static_cast<int64_t>(plan.arrivals.size()) + plan.removed,
            static_cast<int64_t>(pods.size()));
}

TEST(PodClass, Table) {
  struct Case {
    int32_t num_gpu, gpu_milli;
    std::vector<std::string> spec;
    std::string want;
  } cases[] = {
      {0, 0, {}, "cpu"},
      {1, 470, {}, "share"},
      {1, 1000, {}, "1gpu"},
      {8, 1000, {}, "8gpu"},
      {1, 810, {"T4"}, "share T4"},
      {2, 1000, {"V100M16", "V100M32"}, "2gpu V100M16|V100M32"},
  };
  for (const Case& c : cases) {
    TracePod p;
    p.num_gpu = c.num_gpu;
    p.gpu_milli = c.gpu_milli;
    p.gpu_spec = c.spec;
    EXPECT_EQ(PodClass(p), c.want);
  }
}

TEST(DiscreteCurve, BucketsAndNeighbours) {
  // Capacity 1000: bucket = round(arrived / 10).
  std::vector<ReplayPoint> points = {{10, 10}, {14, 14}, {30, 20}, {31, 30}};
  auto c = DiscreteCurve(points, 1000);
  ASSERT_EQ(c.size(), static_cast<size_t>(kCurveMax + 1));
  ASSERT_TRUE(c[1].has_value());
  EXPECT_DOUBLE_EQ(*c[1], 1.2);   // mean of 1.0 and 1.4
  ASSERT_TRUE(c[2].has_value());  // empty: mean over buckets 1 and 3
  EXPECT_DOUBLE_EQ(*c[2], (1.0 + 1.4 + 2.0 + 3.0) / 4);
  EXPECT_DOUBLE_EQ(*c[3], 2.5);
  EXPECT_FALSE(c[10].has_value());
}

TEST(RenderSvg, DrawsOneLinePerSeries) {
  PlotSeries a{"gpufrag", {std::vector<std::optional<double>>(131, 5.0)}};
  PlotSeries b{"bestfit", {std::vector<std::optional<double>>(131, 7.0)}};
  std::string svg = RenderSvg({a, b}, "t <1>", 75, 130);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("t &lt;1&gt;"), std::string::npos);
  size_t lines = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1))
    ++lines;
  EXPECT_EQ(lines, 2u);
  EXPECT_NE(svg.find("gpufrag (5.0% at 100)"), std::string::npos);
}

// Smoke: the protocol invariants through the real engine, per policy.
TEST(RunReplay, ProtocolInvariants) {
  const auto nodes = SmallNodes();
  const auto pods = SmallPods(60);
  framework::Registry registry;
  ASSERT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  ASSERT_TRUE(RegisterBaselinePlugins(registry).ok());
  for (const std::string& policy : PolicyNames()) {
    SCOPED_TRACE(policy);
    auto cfg = PolicyConfig(policy, 42, pods);
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    ReplayOptions opts;
    opts.seed = 42;
    opts.config_yaml = *cfg;
    auto r = RunReplay(nodes, pods, registry, opts);
    ASSERT_TRUE(r.ok()) << r.status();
    // Every arrival submitted once, one attempt each (no retries).
    EXPECT_EQ(r->submitted, static_cast<int64_t>(r->plan.arrivals.size()));
    EXPECT_EQ(r->attempts, r->submitted);
    EXPECT_EQ(r->placed + r->failed, r->submitted);
    EXPECT_GT(r->failed, 0) << "1.3x capacity cannot all fit";
    // No departures: the cluster holds every placed pod, and the DRA state
    // every placed GPU milli.
    EXPECT_EQ(r->pods_at_end, r->placed);
    EXPECT_EQ(r->dra_allocated_milli, r->points.back().allocated_milli);
    EXPECT_EQ(r->points.back().arrived_milli, r->plan.planned_milli);
    EXPECT_LE(r->points.back().allocated_milli, r->plan.capacity_milli);
    // Monotone: arrived and allocated never decrease.
    for (size_t i = 1; i < r->points.size(); ++i) {
      EXPECT_GE(r->points[i].arrived_milli, r->points[i - 1].arrived_milli);
      EXPECT_GE(r->points[i].allocated_milli, r->points[i - 1].allocated_milli);
    }
    ASSERT_TRUE(r->UnallocatedAt(100).has_value());
    EXPECT_GE(*r->UnallocatedAt(100), 0.0);
    // When arrived demand first reaches capacity, the failures so far are
    // exactly the demand not allocated, and the recorded node use is what
    // is allocated, within every node's capacity.
    size_t at = 0;
    while (at < r->points.size() && r->points[at].arrived_milli < r->plan.capacity_milli) ++at;
    ASSERT_LT(at, r->points.size());
    int64_t failed = 0;
    for (const auto& [cls, f] : r->failed_before_100) failed += f.gpu_milli;
    EXPECT_EQ(failed, r->points[at].arrived_milli - r->points[at].allocated_milli);
    ASSERT_EQ(r->use_at_100.size(), nodes.size());
    int64_t used = 0;
    for (size_t n = 0; n < nodes.size(); ++n) {
      const ReplayResult::NodeUse& u = r->use_at_100[n];
      EXPECT_LE(u.cpu_milli, nodes[n].cpu_milli) << nodes[n].name;
      EXPECT_LE(u.memory_mib, nodes[n].memory_mib) << nodes[n].name;
      ASSERT_EQ(u.gpu_milli.size(), static_cast<size_t>(nodes[n].gpus));
      for (int64_t g : u.gpu_milli) {
        EXPECT_GE(g, 0);
        EXPECT_LE(g, 1000) << nodes[n].name;
        used += g;
      }
    }
    EXPECT_EQ(used, r->points[at].allocated_milli);
    // Deterministic per seed.
    auto again = RunReplay(nodes, pods, registry, opts);
    ASSERT_TRUE(again.ok()) << again.status();
    ASSERT_EQ(again->points.size(), r->points.size());
    for (size_t i = 0; i < r->points.size(); ++i) {
      EXPECT_EQ(again->points[i].allocated_milli, r->points[i].allocated_milli) << i;
    }
  }
}

TEST(PolicyConfig, GpuFragmentationArgsTable) {
  // The fgd replica carries the artifact's score (integer sigmoid, ties to a
  // fixed per-seed node order); every GpuFragmentation policy gets the
  // seed's order; --plugin-args override.
  struct Case {
    const char* policy;
    uint64_t seed;
    std::string extra;
    std::string key;
    nlohmann::json want;
  } cases[] = {
      {"fgd", 42, "", "scoreMapping", "Sigmoid"},
      {"fgd", 42, "", "tieBreak", "Stable"},
      {"fgd", 43, "", "tieSeed", 43},
      {"fgd", 43, "", "sigmoidScale", nullptr},
      {"fgd-coarse", 46, "", "scoreMapping", "Sigmoid"},
      {"fgd-coarse", 46, "", "tieBreak", "Stable"},
      {"fgd-coarse", 46, "", "sigmoidScale", "2000"},
      {"fgd-coarse", 46, "", "tieSeed", 46},
      {"fgd-coarse", 46, R"({"sigmoidScale":"4000"})", "sigmoidScale", "4000"},
      {"gpufrag", 44, "", "tieSeed", 44},
      {"gpufrag", 44, "", "scoreMapping", nullptr},
      {"gpufrag", 44, R"({"scoreMapping":"Sigmoid","tieSeed":7})", "tieSeed", 7},
      {"gpufrag-typical", 45, "", "tieSeed", 45},
      {"bestfit", 45, "", "tieSeed", nullptr},
  };
  const auto pods = SmallPods(20);
  for (const Case& c : cases) {
    SCOPED_TRACE(gantry::StrCat(c.policy, " ", c.key));
    auto cfg = PolicyConfig(c.policy, c.seed, pods, c.extra);
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    const nlohmann::json j = nlohmann::json::parse(*cfg);
    nlohmann::json got;
    const nlohmann::json& pc = j["profiles"][0]["pluginConfig"];
    if (pc.is_array() && !pc.empty() && pc[0]["args"].contains(c.key)) got = pc[0]["args"][c.key];
    EXPECT_EQ(got, c.want);
  }
}

TEST(PolicyConfig, VariantsAreTheReplicaWithOneArgTable) {
  // Each variant changes one arg: the same typical shapes, weights,
  // coverage, score mapping, tie-break and seed as the fgd replica.
  struct Case {
    const char* policy;
    const char* key;
    const char* value;
  } cases[] = {
      {"fgd-coarse", "sigmoidScale", "2000"},
      {"fgd-surplus", "cpuPodTieBreak", "Surplus"},
  };
  const auto pods = SmallPods(40);
  auto fgd = PolicyConfig("fgd", 44, pods);
  ASSERT_TRUE(fgd.ok()) << fgd.status();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.policy);
    auto variant = PolicyConfig(c.policy, 44, pods);
    ASSERT_TRUE(variant.ok()) << variant.status();
    nlohmann::json want = nlohmann::json::parse(*fgd);
    want["profiles"][0]["pluginConfig"][0]["args"][c.key] = c.value;
    EXPECT_EQ(nlohmann::json::parse(*variant), want);
  }
}

TEST(PolicyConfig, AwareIsSurplusAvoidingPinnedModels) {
  const auto pods = SmallPods(40);
  auto surplus = PolicyConfig("fgd-surplus", 44, pods);
  auto aware = PolicyConfig("fgd-aware", 44, pods);
  ASSERT_TRUE(surplus.ok()) << surplus.status();
  ASSERT_TRUE(aware.ok()) << aware.status();
  nlohmann::json want = nlohmann::json::parse(*surplus);
  want["profiles"][0]["pluginConfig"][0]["args"]["avoidPinned"] = true;
  EXPECT_EQ(nlohmann::json::parse(*aware), want);
}

TEST(PolicyConfig, UnknownPolicyIsAnError) {
  auto cfg = PolicyConfig("tetris", 1, {});
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(std::string(cfg.status().message()).find("unknown policy \"tetris\""),
            std::string::npos);
}

}  // namespace
}  // namespace gantry::fgd
