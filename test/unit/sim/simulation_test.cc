// RunSimulation over a snapshot it may consume: moving the pods into the
// scheduler must give the same run as copying them, and the utilisation
// report taken before the run must match the one computed from the objects.
#include "src/sim/simulation.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "test/testing/simulate.h"

namespace gantry::sim {
namespace {

constexpr char kNodes[] = R"(
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {zone: b}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
)";

std::string Pod(const std::string& name, const std::string& cpu, const std::string& node = "",
                const std::string& phase = "") {
  std::string out = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default}\n" +
                    "spec:\n  schedulerName: gantry-scheduler\n" +
                    (node.empty() ? "" : "  nodeName: " + node + "\n") +
                    "  containers: [{name: c, resources: {requests: {cpu: \"" + cpu + "\", memory: 1Gi}}}]\n";
  if (!phase.empty()) out += "status: {phase: " + phase + "}\n";
  return out;
}

struct SimRun {
  SimulationResult result;
  nlohmann::json utilisation;
  size_t pods_left = 0;
};

SimRun Simulate(const std::string& yaml, bool consume) {
  return testing::SimulateYamlWith(yaml, [&](api::ObjectSet& objects, scheduler::Scheduler& sched,
                                             InMemoryWriter& writer, FakeClock& clock) {
    SimRun run;
    if (consume) {
      const UtilisationBase base = TakeUtilisationBase(objects);
      run.result = RunSimulation(std::move(objects), sched, writer, clock, 3);
      run.utilisation = UtilisationJson(base, run.result);
    } else {
      run.result = RunSimulation(objects, sched, writer, clock, 3);
      run.utilisation = UtilisationJson(objects, run.result);
    }
    run.pods_left = objects.pods.size();
    return run;
  });
}

TEST(RunSimulationTest, ConsumingTheSnapshotGivesTheSameRun) {
  struct Case {
    const char* name;
    std::string yaml;
    int64_t want_scheduled;
  };
  const Case cases[] = {
      {"pending only", std::string(kNodes) + Pod("a", "1") + Pod("b", "2") + Pod("c", "3"), 2},
      {"bound, pending and finished pods",
       std::string(kNodes) + Pod("run", "3", "n1") + Pod("done", "4", "n2", "Succeeded") + Pod("p1", "1") +
           Pod("p2", "2") + Pod("p3", "1"),
       2},
      {"nothing fits", std::string(kNodes) + Pod("big", "16"), 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SimRun copied = Simulate(c.yaml, false);
    SimRun moved = Simulate(c.yaml, true);
    EXPECT_EQ(copied.result.scheduled, c.want_scheduled);
    EXPECT_EQ(moved.result.placements, copied.result.placements);
    EXPECT_EQ(moved.result.failures, copied.result.failures);
    EXPECT_EQ(moved.utilisation, copied.utilisation);
    EXPECT_GT(copied.pods_left, 0u);
    EXPECT_EQ(moved.pods_left, 0u);
  }
}

}  // namespace
}  // namespace gantry::sim
