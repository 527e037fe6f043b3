// BM_DRA_Workload/<nodes>/<pods>/<matchNic>: the whole offline scheduler
// (default config, DynamicResources on) over WorkloadYaml; counters report
// scheduled pods/s and attempts/s of the scheduling loop (wall time), the
// loop's process CPU time and scheduled pods per CPU-second.
// BM_DRA_NoSolution/<devices>: one node, a claim for N devices where N-1 match.
#include <benchmark/benchmark.h>

#include "bench/dra/workload.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/dra/allocator.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry {
namespace {

void BM_DRA_Workload(benchmark::State& state) {
  bench::dra::WorkloadOptions o;
  o.nodes = static_cast<int>(state.range(0));
  o.pods = static_cast<int>(state.range(1));
  o.match_nic = state.range(2) != 0;
  api::ObjectSet objects;
  sim::LoadStats stats;
  if (!sim::LoadClusterText("workload", bench::dra::WorkloadYaml(o), false, &objects, &stats).ok()) {
    state.SkipWithError("load");
    return;
  }
  framework::Registry registry;
  (void)plugins::RegisterBuiltinPlugins(registry);
  auto cfg = config::DefaultConfig(registry);
  double scheduled = 0, attempts = 0, seconds = 0, cpu = 0;
  for (auto _ : state) {
    FakeClock clock(1'700'000'000'000'000);
    state::ClusterState cluster(clock);
    sim::InMemoryWriter writer;
    auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
    sim::SimulationResult r = sim::RunSimulation(objects, *bundle->scheduler, writer, clock);
    scheduled += static_cast<double>(r.scheduled);
    attempts += static_cast<double>(r.attempts);
    seconds += r.loop_seconds;
    cpu += r.cpu_seconds;
  }
  state.counters["scheduled"] = scheduled / static_cast<double>(state.iterations());
  state.counters["scheduled_per_s"] = scheduled / seconds;
  state.counters["attempts_per_s"] = attempts / seconds;
  // Process CPU time of the loop (all threads): steadier than wall time on a loaded machine.
  state.counters["loop_cpu_s"] = cpu;
  state.counters["scheduled_per_cpu_s"] = scheduled / cpu;
}
BENCHMARK(BM_DRA_Workload)->Args({500, 4000, 0})->Args({500, 5000, 0})->Args({500, 4000, 1})
    ->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void BM_DRA_NoSolution(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  bench::dra::WorkloadOptions o{.nodes = 1, .gpus_per_node = n, .pods = 0};
  api::ObjectSet objects;
  sim::LoadStats stats;
  (void)sim::LoadClusterText("w", bench::dra::WorkloadYaml(o), false, &objects, &stats);
  state::DraState dra;
  for (auto& c : objects.device_classes) dra.UpsertClass(std::make_shared<const api::DeviceClass>(c));
  for (auto& s : objects.resource_slices) dra.UpsertSlice(std::make_shared<const api::ResourceSlice>(s));
  // N devices wanted, all on one pcieRoot: only 2 share a root -> no solution after search.
  auto claim = std::make_shared<api::ResourceClaim>();
  claim->meta.name = "c";
  claim->meta.uid = "c";
  api::DeviceRequest r;
  r.name = api::Symbol::Intern("gpu");
  r.exactly.emplace();
  r.exactly->device_class_name = api::Symbol::Intern("gpu.example.com");
  r.exactly->count = std::min(n - 1, 32);
  claim->spec.requests.push_back(r);
  api::DeviceConstraint c;
  c.match_attribute = api::Symbol::Intern("resource.kubernetes.io/pcieRoot");
  claim->spec.constraints.push_back(c);
  auto alloc = dra::Allocator::Create({}, dra.Snapshot(), {claim});
  api::Node node = objects.nodes[0];
  int64_t steps = 0;
  for (auto _ : state) {
    dra::NodeAllocation out = (*alloc)->Allocate(node);
    steps = out.steps;
    benchmark::DoNotOptimize(out);
  }
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_DRA_NoSolution)->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
