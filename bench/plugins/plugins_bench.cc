// Micro-benchmarks of the core plugins' hot paths: one iteration runs the
// plugin's PreFilter (or PreScore) once and its Filter (or Score) on every
// node of a synthetic cluster, as one scheduling cycle does.
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "gantry/util/strings.h"
#include "plugins/image_locality/image_locality.h"
#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_ports/node_ports.h"
#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"
#include "plugins/node_resources_fit/node_resources_fit.h"
#include "plugins/taint_toleration/taint_toleration.h"
#include "test/testing/objects.h"

namespace gantry {
namespace {

namespace t = gantry::testing;

// A cluster of `n` nodes (8 cores, 32 GiB, 110 pods), 3 zones, 10 pods
// each, a PreferNoSchedule taint on every 7th node, one NoSchedule taint on
// every 50th, two images per node.
struct Cluster {
  t::FakeHandle handle;
  std::vector<framework::NodeInfo*> nodes;
  std::vector<const framework::NodeInfo*> const_nodes;

  explicit Cluster(int n) {
    for (int i = 0; i < n; ++i) {
      api::Node node = t::SimpleNode(gantry::StrCat("node-", i), 8000, 32LL << 30, 110,
                                     {{"topology.kubernetes.io/zone", gantry::StrCat("zone-", i % 3)},
                                      {"kubernetes.io/hostname", gantry::StrCat("node-", i)},
                                      {"node.kubernetes.io/instance-type", i % 2 ? "large" : "small"}});
      if (i % 7 == 0) {
        node.taints.push_back({api::Symbol::Intern("spot"), api::Symbol::Intern("true"),
                               api::TaintEffect::kPreferNoSchedule, 0});
      }
      if (i % 50 == 0) {
        node.taints.push_back({api::Symbol::Intern("dedicated"), api::Symbol::Intern("infra"),
                               api::TaintEffect::kNoSchedule, 0});
      }
      std::vector<api::Pod> pods;
      for (int j = 0; j < 10; ++j) {
        api::Pod p = t::SimplePod(gantry::StrCat("p-", i, "-", j), 100 + 50 * (j % 4), (256LL << 20) * (1 + j % 3));
        p.node_name = api::Symbol::Intern(node.meta.name);
        if (j == 0) p.host_ports.push_back({api::Symbol(), api::Symbol::Intern("TCP"), 9100});
        pods.push_back(std::move(p));
      }
      auto ni = t::MakeNodeInfo(std::move(node), pods);
      ni->image_states()[api::Symbol::Intern("registry.example.com/trainer:v1")] = {2LL << 30, n / 2};
      ni->image_states()[api::Symbol::Intern(gantry::StrCat("registry.example.com/tool-", i % 10, ":latest"))] = {
          300LL << 20, n / 10};
      handle.AddNode(std::move(ni));
    }
    nodes = handle.NodeInfos();
    const_nodes.assign(nodes.begin(), nodes.end());
  }
};

framework::PodInfoPtr IncomingPod() {
  return t::PodInfoFromYaml(R"(
metadata: {name: incoming, namespace: default}
spec:
  nodeSelector: {node.kubernetes.io/instance-type: large}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: topology.kubernetes.io/zone, operator: In, values: [zone-0, zone-1]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-1]}]}
      - weight: 5
        preference: {matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, values: [large]}]}
  tolerations: [{key: example, operator: Exists, effect: NoSchedule}]
  containers:
  - name: main
    image: registry.example.com/trainer:v1
    ports: [{containerPort: 8080, hostPort: 8080}]
    resources: {requests: {cpu: 500m, memory: 1Gi}}
  - name: sidecar
    image: registry.example.com/tool-3
    resources: {requests: {cpu: 100m, memory: 128Mi}}
)");
}

Cluster& GetCluster(int n) {
  static std::vector<std::unique_ptr<Cluster>> cache;
  for (auto& c : cache) {
    if (static_cast<int>(c->nodes.size()) == n) return *c;
  }
  cache.push_back(std::make_unique<Cluster>(n));
  return *cache.back();
}

template <typename Plugin>
void RunFilterBench(benchmark::State& state, Plugin& plugin) {
  Cluster& c = GetCluster(static_cast<int>(state.range(0)));
  framework::PodInfoPtr pod = IncomingPod();
  int64_t feasible = 0;
  for (auto _ : state) {
    framework::CycleState cs;
    if constexpr (std::is_base_of_v<framework::PreFilterPlugin, Plugin>) {
      framework::PreFilterResult r;
      framework::Status st = plugin.PreFilter(cs, *pod, c.nodes, &r);
      if (st.IsSkip()) continue;
    }
    feasible = 0;
    for (const framework::NodeInfo* n : c.nodes) feasible += plugin.Filter(cs, *pod, *n).IsSuccess();
    benchmark::DoNotOptimize(feasible);
  }
  state.counters["feasible"] = static_cast<double>(feasible);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

template <typename Plugin>
void RunScoreBench(benchmark::State& state, Plugin& plugin) {
  Cluster& c = GetCluster(static_cast<int>(state.range(0)));
  framework::PodInfoPtr pod = IncomingPod();
  std::vector<framework::NodeScore> scores(c.nodes.size());
  for (auto _ : state) {
    framework::CycleState cs;
    if (plugin.PreScore(cs, *pod, c.const_nodes).IsSkip()) continue;
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      scores[i].name = c.nodes[i]->name();
      plugin.Score(cs, *pod, *c.nodes[i], &scores[i].score);
    }
    if (plugin.HasNormalizeScore()) plugin.NormalizeScore(cs, *pod, scores);
    benchmark::DoNotOptimize(scores.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

using plugins::node_resources_fit::NodeResourcesFit;
using plugins::node_resources_fit::NodeResourcesFitArgs;

void BM_Filter_NodeResourcesFit(benchmark::State& state) {
  NodeResourcesFit pl{NodeResourcesFitArgs{}};
  RunFilterBench(state, pl);
}
void BM_Score_NodeResourcesFit(benchmark::State& state) {
  NodeResourcesFit pl{NodeResourcesFitArgs{}};
  RunScoreBench(state, pl);
}
void BM_Score_NodeResourcesFitMostAllocated(benchmark::State& state) {
  NodeResourcesFitArgs args;
  args.scoring_strategy.type = plugins::node_resources_fit::ScoringStrategyType::kMostAllocated;
  NodeResourcesFit pl{args};
  RunScoreBench(state, pl);
}
void BM_Score_NodeResourcesBalancedAllocation(benchmark::State& state) {
  plugins::node_resources_balanced_allocation::NodeResourcesBalancedAllocation pl{
      plugins::node_resources_balanced_allocation::NodeResourcesBalancedAllocationArgs{}};
  RunScoreBench(state, pl);
}
void BM_Filter_NodeAffinity(benchmark::State& state) {
  plugins::node_affinity::NodeAffinity pl{plugins::node_affinity::NodeAffinityArgs{}};
  RunFilterBench(state, pl);
}
void BM_Score_NodeAffinity(benchmark::State& state) {
  plugins::node_affinity::NodeAffinity pl{plugins::node_affinity::NodeAffinityArgs{}};
  RunScoreBench(state, pl);
}
void BM_Filter_TaintToleration(benchmark::State& state) {
  plugins::taint_toleration::TaintToleration pl;
  RunFilterBench(state, pl);
}
void BM_Score_TaintToleration(benchmark::State& state) {
  plugins::taint_toleration::TaintToleration pl;
  RunScoreBench(state, pl);
}
void BM_Filter_NodePorts(benchmark::State& state) {
  plugins::node_ports::NodePorts pl;
  RunFilterBench(state, pl);
}
void BM_Score_ImageLocality(benchmark::State& state) {
  Cluster& c = GetCluster(static_cast<int>(state.range(0)));
  plugins::image_locality::ImageLocality pl(c.handle);
  RunScoreBench(state, pl);
}

// ---- CycleState: the per-node read every Filter/Score plugin does ----------

struct BenchData final : framework::StateData {
  int64_t value = 1;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<BenchData>(*this);
  }
};

// Read through an interned StateKey (what the built-in plugins do).
void BM_CycleState_ReadByKey(benchmark::State& state) {
  static const framework::StateKey kKey("PreFilterBench");
  framework::CycleState cs;
  cs.Write(kKey, std::make_unique<BenchData>());
  for (auto _ : state) {
    auto r = cs.Read<BenchData>(kKey);
    benchmark::DoNotOptimize((*r)->value);
  }
}

// Read by key text (interned on every call through a per-thread cache).
void BM_CycleState_ReadByString(benchmark::State& state) {
  framework::CycleState cs;
  cs.Write("PreFilterBench", std::make_unique<BenchData>());
  for (auto _ : state) {
    auto r = cs.Read<BenchData>("PreFilterBench");
    benchmark::DoNotOptimize((*r)->value);
  }
}

// Get of an absent key: a plugin whose PreFilter skipped the pod.
void BM_CycleState_GetAbsent(benchmark::State& state) {
  static const framework::StateKey kKey("PreFilterAbsentBench");
  framework::CycleState cs;
  for (auto _ : state) benchmark::DoNotOptimize(cs.Get<BenchData>(kKey));
}

BENCHMARK(BM_CycleState_ReadByKey);
BENCHMARK(BM_CycleState_ReadByString);
BENCHMARK(BM_CycleState_GetAbsent);
BENCHMARK(BM_Filter_NodeResourcesFit)->Arg(5000);
BENCHMARK(BM_Score_NodeResourcesFit)->Arg(5000);
BENCHMARK(BM_Score_NodeResourcesFitMostAllocated)->Arg(5000);
BENCHMARK(BM_Score_NodeResourcesBalancedAllocation)->Arg(5000);
BENCHMARK(BM_Filter_NodeAffinity)->Arg(5000);
BENCHMARK(BM_Score_NodeAffinity)->Arg(5000);
BENCHMARK(BM_Filter_TaintToleration)->Arg(5000);
BENCHMARK(BM_Score_TaintToleration)->Arg(5000);
BENCHMARK(BM_Filter_NodePorts)->Arg(5000);
BENCHMARK(BM_Score_ImageLocality)->Arg(5000);

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
