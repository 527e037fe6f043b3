// Test helpers shared by the preemption and simulation suites: run a cluster given as YAML through
// the real engine offline (default configuration, built-in plugins, the
// simulator's virtual clock starting at 1,000 s).
#ifndef GANTRY_TEST_TESTING_SIMULATE_H_
#define GANTRY_TEST_TESTING_SIMULATE_H_

#include <string>

#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry::testing {

// Loads `yaml`, builds the default scheduler and hands the objects to `run`
// (which calls one of the sim::RunSimulation overloads).
template <typename RunFn>
auto SimulateYamlWith(const std::string& yaml, RunFn&& run) {
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
  auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return run(objects, *bundle->scheduler, writer, clock);
}

inline sim::SimulationResult SimulateYaml(const std::string& yaml) {
  return SimulateYamlWith(yaml, [](api::ObjectSet& objects, scheduler::Scheduler& sched,
                                   sim::InMemoryWriter& writer, FakeClock& clock) {
    return sim::RunSimulation(objects, sched, writer, clock);
  });
}

}  // namespace gantry::testing

#endif  // GANTRY_TEST_TESTING_SIMULATE_H_
