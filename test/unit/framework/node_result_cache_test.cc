// NodeResultCache: a stream of pods scheduled with the cache places every pod
// where the same stream without it does (same hosts, same FitError messages,
// same tie-breaks), with the built-in plugins of the default profile, and the
// cache is used only when every active Filter / Score plugin is node-local.
// The Scheduler's single-pod cycles use it the same way, and forget it when
// a DeviceClass changes.
#include "src/framework/node_result_cache.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/framework/schedule_pod.h"
#include "src/scheduler/setup.h"
#include "src/sim/simulation.h"
#include "src/state/cluster_state.h"
#include "test/testing/objects.h"
#include "test/testing/simulate.h"

namespace gantry::framework {
namespace {

// One scheduler over the default configuration and its own copy of the nodes.
class Side {
 public:
  explicit Side(const std::vector<std::string>& nodes) : clock_(1'000'000'000), cluster_(clock_) {
    EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry_).ok());
    auto cfg = config::DefaultConfig(registry_);
    EXPECT_TRUE(cfg.ok()) << cfg.status();
    auto bundle = scheduler::BuildScheduler(*cfg, registry_, cluster_, writer_, clock_, 1, 0);
    EXPECT_TRUE(bundle.ok()) << bundle.status();
    bundle_ = std::move(*bundle);
    for (const std::string& yaml : nodes) {
      cluster_.AddOrUpdateNode(std::make_shared<const api::Node>(testing::ParseNode(yaml)));
    }
    cluster_.UpdateSnapshot(&snapshot_);
    fw_ = bundle_.scheduler->Profile("gantry-scheduler");
    fw_->SetSnapshot(&snapshot_);
  }

  // Schedules `pod` and keeps it on the chosen node; returns "node" or the
  // failure message.
  std::string Schedule(const PodInfoPtr& pod, NodeResultCache* cache) {
    CycleState state;
    ScheduleResult result;
    FitError fit;
    Status st = algorithm_.Schedule(*fw_, state, *pod, snapshot_, &result, &fit, nullptr, cache);
    if (!st.IsSuccess()) return "failed: " + (st.IsRejected() ? fit.Message() : st.Message());
    snapshot_.GetMutable(result.suggested_host)->AddPod(pod);
    return result.suggested_host;
  }

 private:
  FakeClock clock_;
  state::ClusterState cluster_;
  sim::InMemoryWriter writer_;
  Registry registry_;
  scheduler::SchedulerBundle bundle_;
  state::Snapshot snapshot_;
  Framework* fw_ = nullptr;
  PodScheduler algorithm_{0, 7};
};

std::string NodeYaml(int i, bool gold, bool spot, bool image, const std::string& cpu) {
  std::string y = "metadata:\n  name: n-" + std::to_string(i) +
                  "\n  labels: {tier: " + (gold ? "gold" : "silver") +
                  ", kubernetes.io/hostname: n-" + std::to_string(i) + "}\n";
  if (spot) y += "spec:\n  taints: [{key: spot, value: \"true\", effect: PreferNoSchedule}]\n";
  y += "status:\n  allocatable: {cpu: \"" + cpu + "\", memory: 16Gi, pods: \"110\"}\n";
  if (image) y += "  images: [{names: [\"registry.example/app:v1\"], sizeBytes: 600000000}]\n";
  return y;
}

// `body` is the pod's spec after schedulerName; `name` and `uid` are unique.
PodInfoPtr PodFromSpec(int i, const std::string& labels, const std::string& body) {
  const std::string name = "p-" + std::to_string(i);
  return testing::PodInfoFromYaml("metadata: {name: " + name + ", namespace: default, uid: u-" +
                                  name + ", labels: {" + labels +
                                  "}}\nspec:\n  schedulerName: gantry-scheduler\n" + body);
}

std::string Containers(const std::string& cpu, const std::string& extra = "") {
  return "  containers:\n  - name: c\n    image: registry.example/app:v1\n" + extra +
         "    resources:\n      requests: {cpu: " + cpu + ", memory: 1Gi}\n";
}

struct Case {
  std::string name;
  int nodes;
  std::string node_cpu;
  int pods;
  std::function<PodInfoPtr(int)> pod;
  bool reused;  // whether the cache must serve some nodes
};

TEST(NodeResultCacheTest, SamePlacementsAsWithoutTheCache) {
  const std::string preferences =
      "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
      "      - weight: 10\n        preference: {matchExpressions: [{key: tier, operator: In, "
      "values: [gold]}]}\n";
  const std::vector<Case> cases = {
      {"plain pods until the nodes are full", 20, "4", 180,
       [](int i) { return PodFromSpec(i, "", Containers("500m")); }, true},
      {"preferred affinity, PreferNoSchedule taints, images", 30, "4", 260,
       [&](int i) { return PodFromSpec(i, "", preferences + Containers("500m")); }, true},
      {"300 nodes: a rotating window of them is filtered", 300, "1", 950,
       [](int i) { return PodFromSpec(i, "", Containers("300m")); }, true},
      {"host ports: one pod per node", 25, "4", 30,
       [](int i) {
         return PodFromSpec(
             i, "", Containers("100m", "    ports: [{containerPort: 80, hostPort: 8080}]\n"));
       },
       true},
      {"two specs taking turns", 20, "4", 150,
       [](int i) { return PodFromSpec(i, "", Containers((i / 10) % 2 == 0 ? "500m" : "700m")); },
       true},
      {"topology spread: not node-local, never served", 20, "4", 130,
       [](int i) {
         return PodFromSpec(
             i, "app: web",
             "  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: tier, whenUnsatisfiable: "
             "DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n" +
                 Containers("500m"));
       },
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> nodes;
    for (int i = 0; i < c.nodes; ++i)
      nodes.push_back(NodeYaml(i, i % 3 == 0, i % 4 == 1, i % 5 == 2, c.node_cpu));
    Side plain(nodes), cached(nodes);
    NodeResultCache cache;
    int failures = 0;
    for (int i = 0; i < c.pods; ++i) {
      PodInfoPtr pod = c.pod(i);
      const std::string want = plain.Schedule(pod, nullptr);
      failures += want.rfind("failed", 0) == 0 ? 1 : 0;
      ASSERT_EQ(cached.Schedule(pod, &cache), want) << "pod " << i;
    }
    EXPECT_GT(failures, 0) << "the case should fill the nodes";
    const NodeResultCache::Counters& n = cache.counters();
    if (c.reused) {
      EXPECT_GT(n.filter_hits, 0);
      EXPECT_GT(n.score_hits, 0);
      EXPECT_GT(n.filter_misses, 0);
    } else {
      EXPECT_EQ(n.filter_hits + n.filter_misses + n.score_hits + n.score_misses, 0);
    }
  }
}

// A cluster for the Scheduler-level cases: `nodes` nodes of 4 CPUs.
std::string ClusterYaml(int nodes) {
  std::string y;
  for (int i = 0; i < nodes; ++i) {
    y += "apiVersion: v1\nkind: Node\n" + NodeYaml(i, i % 3 == 0, i % 4 == 1, i % 5 == 2, "4") +
         "---\n";
  }
  return y;
}

// A pending pod of `cpu` (finishing `run_seconds` after it is bound when >= 0).
std::string PendingPodYaml(const std::string& name, const std::string& cpu, double run_seconds,
                           const std::string& extra_spec = "") {
  std::string y =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: default\n";
  if (run_seconds >= 0)
    y += "  annotations: {gantry.dev/run-duration-seconds: \"" + std::to_string(run_seconds) +
         "\"}\n";
  return y + "spec:\n  schedulerName: gantry-scheduler\n" + extra_spec + Containers(cpu) + "---\n";
}

sim::SimulationResult RunStream(const std::string& yaml, bool reuse,
                                NodeResultCache::Counters* counters) {
  return testing::SimulateYamlWith(yaml, [&](api::ObjectSet& objects, scheduler::Scheduler& sched,
                                             sim::InMemoryWriter& writer, FakeClock& clock) {
    sched.SetNodeResultReuse(reuse);
    sim::SimulationResult r = sim::RunSimulation(objects, sched, writer, clock);
    *counters = sched.node_results().counters();
    return r;
  });
}

// The Scheduler's own cycles (single pods, one after the other, nodes
// freeing in virtual time) place every pod as they do without reuse.
TEST(NodeResultCacheTest, SchedulerStreamsPlaceAsWithoutReuse) {
  struct StreamCase {
    std::string name;
    std::string yaml;
    bool reused;
  };
  std::vector<StreamCase> cases;
  {
    std::string y = ClusterYaml(30);
    for (int i = 0; i < 260; ++i) y += PendingPodYaml("a-" + std::to_string(i), "500m", -1);
    cases.push_back({"one template until the nodes are full", y, true});
  }
  {
    std::string y = ClusterYaml(12);
    for (int i = 0; i < 200; ++i)
      y += PendingPodYaml("b-" + std::to_string(i), i % 3 == 0 ? "1500m" : "700m", 5 + i % 7);
    cases.push_back({"two templates, pods finishing over time", y, true});
  }
  {
    const std::string anti =
        "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}\n";
    std::string y = ClusterYaml(10);
    for (int i = 0; i < 80; ++i) {
      if (i % 4 == 0) {
        std::string pod = PendingPodYaml("db-" + std::to_string(i), "200m", -1, anti);
        pod.replace(pod.find("  namespace: default\n"), 21,
                    "  namespace: default\n  labels: {app: db}\n");
        y += pod;
      } else {
        y += PendingPodYaml("c-" + std::to_string(i), "300m", -1);
      }
    }
    cases.push_back({"node-local pods between pods with anti-affinity", y, true});
  }
  for (const StreamCase& c : cases) {
    SCOPED_TRACE(c.name);
    NodeResultCache::Counters with, without;
    const sim::SimulationResult a = RunStream(c.yaml, true, &with);
    const sim::SimulationResult b = RunStream(c.yaml, false, &without);
    EXPECT_GT(a.scheduled, 0);
    EXPECT_EQ(a.placements, b.placements);
    EXPECT_EQ(a.failures, b.failures);
    EXPECT_EQ(a.scheduled, b.scheduled);
    EXPECT_EQ(without.filter_hits + without.filter_misses, 0);
    if (c.reused) {
      EXPECT_GT(with.filter_hits, 0);
      EXPECT_GT(with.score_hits, 0);
    }
  }
}

// A DeviceClass event drops every kept result before the next cycle: the
// next pod evaluates every node again.
TEST(NodeResultCacheTest, DeviceClassChangeForgetsResults) {
  std::string yaml = ClusterYaml(6);
  for (int i = 0; i < 4; ++i) yaml += PendingPodYaml("d-" + std::to_string(i), "500m", -1);
  testing::SimulateYamlWith(yaml, [](api::ObjectSet& objects, scheduler::Scheduler& sched,
                                     sim::InMemoryWriter& writer, FakeClock& clock) {
    const sim::SimulationResult r = sim::RunSimulation(objects, sched, writer, clock);
    EXPECT_EQ(r.scheduled, 4);
    EXPECT_EQ(sched.node_results().size(), 6u);

    auto schedule_one_more = [&](const std::string& name) {
      api::Pod pod = testing::PodInfoFromYaml(
                         "metadata: {name: " + name + ", namespace: default, uid: u-" + name +
                         "}\nspec:\n  schedulerName: gantry-scheduler\n" + Containers("500m"))
                         ->p();
      sched.events().OnPodAdd(std::make_shared<const api::Pod>(std::move(pod)));
      const NodeResultCache::Counters before = sched.node_results().counters();
      EXPECT_TRUE(sched.ScheduleOne(false));
      const NodeResultCache::Counters& after = sched.node_results().counters();
      return std::make_pair(after.filter_hits - before.filter_hits,
                            after.filter_misses - before.filter_misses);
    };
    // Only the node of the last pod changed: the others are served.
    auto [hits, misses] = schedule_one_more("e-0");
    EXPECT_EQ(hits, 5);
    EXPECT_EQ(misses, 1);

    api::DeviceClass cls;
    cls.meta.name = "gpu.example.com";
    sched.events().OnDeviceClass(nullptr, std::make_shared<const api::DeviceClass>(std::move(cls)));
    std::tie(hits, misses) = schedule_one_more("e-1");
    EXPECT_EQ(hits, 0);
    EXPECT_EQ(misses, 6);
    return 0;
  });
}

}  // namespace
}  // namespace gantry::framework
