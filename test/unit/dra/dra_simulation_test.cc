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

sim::SimulationResult RunYaml(const std::string& yaml) {
  framework::Registry registry;
  EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  auto cfg = config::DefaultConfig(registry);
  EXPECT_TRUE(cfg.ok()) << cfg.status();
  api::ObjectSet objects;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText("workload", yaml, false, &objects, &stats);
  EXPECT_TRUE(st.ok()) << st;
  FakeClock clock(1'700'000'000'000'000);
  state::ClusterState cluster(clock);
  sim::InMemoryWriter writer;
  auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return sim::RunSimulation(objects, *bundle->scheduler, writer, clock, 7);
}

sim::SimulationResult RunWorkload(const bench::dra::WorkloadOptions& o) {
  return RunYaml(bench::dra::WorkloadYaml(o));
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

TEST(DraSimulation, BindingConditionsAreReportedBySimulatedDrivers) {
  // A device with binding conditions: the simulated driver sets them after
  // the slice's delay (PreBind waits in virtual time), or fails the first
  // binding of each device (the pod is retried and then binds).
  constexpr std::string_view kObjects = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  schedulerName: gantry-scheduler
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: main, resources: {claims: [{name: gpu}]}}]
---
)";
  auto slice = [](const std::string& annotations) {
    return "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: n0-gpus\n  "
           "annotations: {" +
           annotations +
           "}\nspec:\n  driver: gpu.example.com\n  pool: {name: n0, generation: 1, "
           "resourceSliceCount: 1}\n"
           "  nodeName: n0\n  devices:\n  - {name: gpu-0, bindsToNode: true, bindingConditions: "
           "[Attached], "
           "bindingFailureConditions: [AttachFailed]}\n";
  };
  struct Case {
    const char* name;
    std::string annotations;
    int64_t min_attempts;
    double min_virtual_seconds;
  } cases[] = {
      {"ready after the delay", "gantry.dev/binding-delay-seconds: \"30\"", 1, 30},
      {"ready at once", "", 1, 0},
      {"first binding fails", "gantry.dev/binding-outcome: failure", 2, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    sim::SimulationResult r = RunYaml(std::string(kObjects) + slice(c.annotations));
    EXPECT_EQ(r.scheduled, 1) << (r.failures.empty() ? "" : r.failures.begin()->second);
    EXPECT_GE(r.attempts, c.min_attempts);
    EXPECT_GE(r.virtual_seconds, c.min_virtual_seconds);
    ASSERT_EQ(r.allocations.size(), 1u);
    EXPECT_EQ(r.allocations.begin()->second[0].device, "gpu-0");
  }
}

TEST(DraSimulation, DeterministicClaimNames) {
  bench::dra::WorkloadOptions o{.nodes = 1, .gpus_per_node = 2, .pods = 2};
  EXPECT_EQ(RunWorkload(o).allocations.begin()->first, RunWorkload(o).allocations.begin()->first);
}

}  // namespace
}  // namespace gantry
