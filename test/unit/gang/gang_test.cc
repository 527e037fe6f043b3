// Gang scheduling and topology placement through the real engine offline
// (config defaults, built-in plugins, sim driver with virtual time).
#include <random>
#include <sstream>

#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry {
namespace {

std::string Node(const std::string& name, const std::string& rack, int gpus) {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Node\nmetadata:\n  name: " << name << "\n  labels: {example.com/rack: " << rack
    << "}\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \"" << gpus
    << "\"}\n---\n";
  return o.str();
}

std::string Group(const std::string& name, int min_count, bool topology) {
  std::ostringstream o;
  o << "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " << name
    << ", namespace: ml}\nspec:\n  schedulingPolicy:\n    gang: {minCount: " << min_count << "}\n";
  if (topology) o << "  schedulingConstraints:\n    topology:\n    - key: example.com/rack\n";
  return o.str() + "---\n";
}

std::string Pod(const std::string& name, const std::string& group, int gpus, double run_seconds = -1,
                const std::string& scheduler = "gantry-scheduler") {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " << name << "\n  namespace: ml\n";
  if (run_seconds >= 0) o << "  annotations: {gantry.dev/run-duration-seconds: \"" << run_seconds << "\"}\n";
  o << "spec:\n  schedulerName: " << scheduler << "\n";
  if (!group.empty()) o << "  schedulingGroup: {podGroupName: " << group << "}\n";
  o << "  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \""
    << gpus << "\"}\n---\n";
  return o.str();
}

struct SimRun {
  sim::SimulationResult result;
};

SimRun Simulate(const std::string& yaml, uint64_t seed = 1) {
  framework::Registry registry;
  EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  auto cfg = config::DefaultConfig(registry);
  EXPECT_TRUE(cfg.ok()) << cfg.status();
  api::ObjectSet objects;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText("test.yaml", yaml, false, &objects, &stats);
  EXPECT_TRUE(st.ok()) << st;
  FakeClock clock(1'000'000'000);
  state::ClusterState cluster(clock);
  sim::InMemoryWriter writer;
  auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, seed, 0);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  SimRun run;
  run.result = sim::RunSimulation(objects, *bundle->scheduler, writer, clock);
  return run;
}

TEST(GangTest, AllOrNothingUnderContention) {
  // 2 nodes x 8 GPUs; gang A needs 4x4 = 16 GPUs (fits alone), gang B 3x4.
  std::string y = Node("n0", "r0", 8) + Node("n1", "r0", 8) + Group("a", 4, false) + Group("b", 3, false);
  for (int i = 0; i < 4; ++i) y += Pod("a-" + std::to_string(i), "a", 4);
  for (int i = 0; i < 3; ++i) y += Pod("b-" + std::to_string(i), "b", 4);
  SimRun r = Simulate(y);
  ASSERT_EQ(r.result.podgroups.count("ml/a"), 1u);
  ASSERT_EQ(r.result.podgroups.count("ml/b"), 1u);
  const bool a = r.result.podgroups["ml/a"].scheduled, b = r.result.podgroups["ml/b"].scheduled;
  EXPECT_NE(a, b) << "exactly one gang fits";
  // Never a half-placed gang: count placed members per group.
  int placed_a = 0, placed_b = 0;
  for (const auto& [pod, node] : r.result.placements) {
    placed_a += pod.rfind("ml/a-", 0) == 0;
    placed_b += pod.rfind("ml/b-", 0) == 0;
  }
  EXPECT_TRUE(placed_a == 0 || placed_a == 4) << placed_a;
  EXPECT_TRUE(placed_b == 0 || placed_b == 3) << placed_b;
}

TEST(GangTest, TopologyKeepsGroupInOneRack) {
  std::string y;
  for (int r = 0; r < 3; ++r) {
    for (int n = 0; n < 2; ++n) y += Node("n" + std::to_string(r) + std::to_string(n), "r" + std::to_string(r), 8);
  }
  y += Group("g", 4, true);
  for (int i = 0; i < 4; ++i) y += Pod("g-" + std::to_string(i), "g", 4);
  y += Group("big", 5, true);
  for (int i = 0; i < 5; ++i) y += Pod("big-" + std::to_string(i), "big", 4);
  SimRun r = Simulate(y);
  ASSERT_TRUE(r.result.podgroups["ml/g"].scheduled);
  std::set<char> racks;
  for (int i = 0; i < 4; ++i) racks.insert(r.result.placements["ml/g-" + std::to_string(i)][1]);
  EXPECT_EQ(racks.size(), 1u) << "all members in one rack";
  EXPECT_FALSE(r.result.podgroups["ml/big"].scheduled) << "20 GPUs never fit one 16-GPU rack";
  EXPECT_NE(r.result.podgroups["ml/big"].message.find("4 of minCount 5 members fit"), std::string::npos)
      << r.result.podgroups["ml/big"].message;
}

TEST(GangTest, WaitsForMembersAndRejectsMixedSchedulers) {
  std::string y = Node("n0", "r0", 8) + Group("short", 3, false) + Pod("s-0", "short", 1) + Pod("s-1", "short", 1) +
                  Group("mixed", 2, false) + Pod("m-0", "mixed", 1) + Pod("m-1", "mixed", 1, -1, "other-scheduler");
  SimRun r = Simulate(y);
  EXPECT_FALSE(r.result.podgroups["ml/short"].scheduled);
  EXPECT_NE(r.result.failures["ml/s-0"].find("2 of minCount 3 members exist"), std::string::npos)
      << r.result.failures["ml/s-0"];
  // The other scheduler's member is never touched; the group is rejected.
  EXPECT_EQ(r.result.placements.count("ml/m-1"), 0u);
  EXPECT_EQ(r.result.placements.count("ml/m-0"), 0u);
  EXPECT_NE(r.result.failures["ml/m-0"].find("members use different schedulerNames (gantry-scheduler, other-scheduler)"),
            std::string::npos)
      << r.result.failures["ml/m-0"];
}

TEST(GangTest, InterleavedGangsAndPodsNeverDeadlock) {
  // 2 nodes x 8 GPUs, 60 jobs of 1-8 GPUs (gangs of 2 and single pods)
  // arriving together and finishing over time: every job eventually runs.
  std::mt19937 rng(7);
  std::string y = Node("n0", "r0", 8) + Node("n1", "r0", 8);
  int pods = 0;
  for (int j = 0; j < 60; ++j) {
    const int gpus = 1 + static_cast<int>(rng() % 8);
    const double run = 10 + static_cast<double>(rng() % 50);
    if (j % 3 == 0 && gpus <= 8) {
      const std::string g = "job" + std::to_string(j);
      y += Group(g, 2, false);
      y += Pod(g + "-0", g, std::min(gpus, 8), run) + Pod(g + "-1", g, std::min(gpus, 8), run);
      pods += 2;
    } else {
      y += Pod("job" + std::to_string(j), "", gpus, run);
      pods += 1;
    }
  }
  SimRun r = Simulate(y);
  EXPECT_EQ(r.result.completed, pods) << "scheduled " << r.result.scheduled << ", pending " << r.result.unschedulable;
  EXPECT_TRUE(r.result.failures.empty());
}

TEST(GangTest, SameSeedSamePlacements) {
  std::string y;
  for (int r = 0; r < 4; ++r) {
    for (int n = 0; n < 3; ++n) y += Node("n" + std::to_string(r) + std::to_string(n), "r" + std::to_string(r), 8);
  }
  for (int g = 0; g < 5; ++g) {
    y += Group("g" + std::to_string(g), 3, true);
    for (int i = 0; i < 3; ++i) y += Pod("g" + std::to_string(g) + "-" + std::to_string(i), "g" + std::to_string(g), 2);
  }
  EXPECT_EQ(Simulate(y, 3).result.placements, Simulate(y, 3).result.placements);
}

}  // namespace
}  // namespace gantry
