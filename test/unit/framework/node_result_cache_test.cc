// NodeResultCache: a stream of pods scheduled with the cache places every pod
// where the same stream without it does (same hosts, same FitError messages,
// same tie-breaks), with the built-in plugins of the default profile, and the
// cache is used only when every active Filter / Score plugin is node-local.
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

}  // namespace
}  // namespace gantry::framework
