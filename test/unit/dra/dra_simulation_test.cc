// End-to-end offline: slices + classes + a claim template + pods through
// sim::RunSimulation with the default configuration (DynamicResources on).
#include <set>

#include "bench/dra/workload.h"
#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry {
namespace {

sim::SimulationResult RunWorkload(const bench::dra::WorkloadOptions& o) {
  framework::Registry registry;
  EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  auto cfg = config::DefaultConfig(registry);
  EXPECT_TRUE(cfg.ok()) << cfg.status();
  api::ObjectSet objects;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText("workload", bench::dra::WorkloadYaml(o), false, &objects, &stats);
  EXPECT_TRUE(st.ok()) << st;
  FakeClock clock(1'700'000'000'000'000);
  state::ClusterState cluster(clock);
  sim::InMemoryWriter writer;
  auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return sim::RunSimulation(objects, *bundle->scheduler, writer, clock, 7);
}

TEST(DraSimulation, AllocatesOneGpuPerPodAndNeverTwice) {
  bench::dra::WorkloadOptions o{.nodes = 3, .gpus_per_node = 4, .pods = 14};
  sim::SimulationResult r = RunWorkload(o);
  EXPECT_EQ(r.scheduled, 12);
  EXPECT_EQ(r.unschedulable, 2);
  ASSERT_EQ(r.allocations.size(), 12u);
  std::set<std::string> devices;
  for (const auto& [claim, devs] : r.allocations) {
    ASSERT_EQ(devs.size(), 1u);
    EXPECT_EQ(devs[0].request, "gpu");
    EXPECT_EQ(devs[0].driver, "gpu.example.com");
    EXPECT_TRUE(devices.insert(devs[0].pool + "/" + devs[0].device).second) << "device allocated twice";
    // Claim names follow the ResourceClaim controller: <pod>-<claim>-<5 chars>.
    EXPECT_EQ(claim.rfind("default/pod-", 0), 0u);
    EXPECT_EQ(claim.size() - claim.rfind("-gpu-") - 5, 5u) << claim;
  }
  // The pool of each allocation is the node the pod landed on.
  for (const auto& [pod, node] : r.placements) {
    bool found = false;
    for (const auto& [claim, devs] : r.allocations) {
      if (claim.rfind(pod + "-gpu-", 0) == 0) {
        found = true;
        EXPECT_EQ(devs[0].pool, node);
      }
    }
    EXPECT_TRUE(found) << pod;
  }
  for (const auto& [pod, msg] : r.failures) {
    EXPECT_NE(msg.find("0/3 nodes are available"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1 device wanted, 0 free match"), std::string::npos) << msg;
  }
  nlohmann::json j = sim::ResultJson(r);
  EXPECT_EQ(j["allocations"].size(), 12u);
}

TEST(DraSimulation, GpuAndNicOnSamePcieRoot) {
  bench::dra::WorkloadOptions o{.nodes = 2, .gpus_per_node = 4, .pods = 8, .match_nic = true};
  sim::SimulationResult r = RunWorkload(o);
  EXPECT_EQ(r.scheduled, 8);
  for (const auto& [claim, devs] : r.allocations) {
    ASSERT_EQ(devs.size(), 2u);
    // gpu-i and nic-j share pcieRoot pci<i/2>.
    EXPECT_EQ((devs[0].device.back() - '0') / 2, (devs[1].device.back() - '0') / 2) << claim;
  }
}

TEST(DraSimulation, DeterministicClaimNames) {
  bench::dra::WorkloadOptions o{.nodes = 1, .gpus_per_node = 2, .pods = 2};
  EXPECT_EQ(RunWorkload(o).allocations.begin()->first, RunWorkload(o).allocations.begin()->first);
}

}  // namespace
}  // namespace gantry
