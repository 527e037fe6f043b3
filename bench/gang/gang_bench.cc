// Gang scheduling throughput: the real Scheduler with the default
// configuration and built-in plugins, driven by the simulator (virtual time,
// inline binding). Manual time is the scheduling loop only (cluster build
// and object feeding excluded); counters report pods/s and the loop's CPU
// seconds, since the benchmark machine is shared.
//
//   BM_Gang_Topology/<gangs>/<reuse>        5,000 nodes in 50 racks of 100, gangs
//                                           of 4 pods confined to one rack
//                                           (upstream's gang + topology shape:
//                                           750-2,250 gangs)
//   BM_Gang_Large/<gangs>/<size>/<reuse>    gangs of <size> pods, no topology, 5,000 nodes
//
// <reuse> 1 is the scheduler as shipped; 0 turns off the reuse of per-node
// Filter / Score results between members (Scheduler::SetNodeResultReuse) to
// show what it saves. The counters add the nodes served from / evaluated for
// that reuse.
#include <map>
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry {
namespace {

// scheduler_perf's default shapes: nodes of 4 CPU / 32Gi / 110 pods, pods of
// 100m / 500Mi.
void AddNode(std::ostringstream& o, int i, int rack) {
  o << R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-)" << i
    << R"(","labels":{"kubernetes.io/hostname":"node-)" << i << R"(","example.com/rack":"rack-)" << rack
    << R"("}},"status":{"allocatable":{"cpu":"4","memory":"32Gi","pods":"110"}}},)";
}

void AddGang(std::ostringstream& o, int g, int size, bool topology) {
  o << R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"gang-)" << g
    << R"(","namespace":"bench"},"spec":{"schedulingPolicy":{"gang":{"minCount":)" << size << "}}";
  if (topology) o << R"(,"schedulingConstraints":{"topology":[{"key":"example.com/rack"}]})";
  o << "}},";
  for (int m = 0; m < size; ++m) {
    o << R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"gang-)" << g << "-" << m
      << R"(","namespace":"bench","uid":"u-)" << g << "-" << m
      << R"("},"spec":{"schedulerName":"gantry-scheduler","schedulingGroup":{"podGroupName":"gang-)" << g
      << R"("},"containers":[{"name":"c","resources":{"requests":{"cpu":"100m","memory":"500Mi"}}}]}},)";
  }
}

api::ObjectSet Cluster(int nodes, int racks, int gangs, int size, bool topology) {
  std::ostringstream o;
  o << "[";
  for (int i = 0; i < nodes; ++i) AddNode(o, i, i % racks);
  for (int g = 0; g < gangs; ++g) AddGang(o, g, size, topology);
  std::string text = o.str();
  text.back() = ']';
  api::ObjectSet objects;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText("bench.json", text, /*is_json=*/true, &objects, &stats);
  if (!st.ok()) std::abort();
  return objects;
}

void Run(benchmark::State& state, const api::ObjectSet& objects, int64_t want_pods, bool reuse) {
  framework::Registry registry;
  if (!plugins::RegisterBuiltinPlugins(registry).ok()) std::abort();
  auto cfg = config::DefaultConfig(registry);
  if (!cfg.ok()) std::abort();
  double pods = 0, seconds = 0, cpu = 0, filter_hits = 0, filter_misses = 0;
  for (auto _ : state) {
    FakeClock clock(1'000'000'000);
    state::ClusterState cluster(clock);
    sim::InMemoryWriter writer;
    auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
    if (!bundle.ok()) std::abort();
    bundle->scheduler->SetNodeResultReuse(reuse);
    sim::SimulationResult r = sim::RunSimulation(objects, *bundle->scheduler, writer, clock);
    const framework::NodeResultCache::Counters& c = bundle->scheduler->node_results().counters();
    filter_hits += static_cast<double>(c.filter_hits);
    filter_misses += static_cast<double>(c.filter_misses);
    if (r.scheduled != want_pods) {
      state.SkipWithError("not every gang was scheduled");
      return;
    }
    state.SetIterationTime(r.loop_seconds);
    pods += static_cast<double>(r.scheduled);
    seconds += r.loop_seconds;
    cpu += r.cpu_seconds;
  }
  state.counters["pods_per_s"] = pods / seconds;
  state.counters["pods_per_cpu_s"] = pods / cpu;
  state.counters["loop_cpu_s"] = cpu / static_cast<double>(state.iterations());
  state.counters["filter_reused"] = filter_hits / static_cast<double>(state.iterations());
  state.counters["filter_run"] = filter_misses / static_cast<double>(state.iterations());
}

void BM_Gang_Topology(benchmark::State& state) {
  const int gangs = static_cast<int>(state.range(0));
  static std::map<int, api::ObjectSet> cache;
  auto it = cache.find(gangs);
  if (it == cache.end()) it = cache.emplace(gangs, Cluster(5000, 50, gangs, 4, true)).first;
  Run(state, it->second, static_cast<int64_t>(gangs) * 4, state.range(1) != 0);
}
BENCHMARK(BM_Gang_Topology)
    ->Args({750, 1})
    ->Args({2250, 1})
    ->Args({750, 0})
    ->Args({2250, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_Gang_Large(benchmark::State& state) {
  const int gangs = static_cast<int>(state.range(0));
  const int size = static_cast<int>(state.range(1));
  const api::ObjectSet objects = Cluster(5000, 50, gangs, size, false);
  Run(state, objects, static_cast<int64_t>(gangs) * size, state.range(2) != 0);
}
BENCHMARK(BM_Gang_Large)
    ->Args({3, 1000, 1})
    ->Args({10, 5000, 1})
    ->Args({3, 1000, 0})
    ->Args({10, 5000, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
