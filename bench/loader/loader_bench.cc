// Snapshot loading throughput: decode a generated scheduler_perf-style JSON
// (or YAML) snapshot with the real loader. The argument is the pod count;
// nodes are pods / 30, as in the 5,000-node / 150,000-pod target.
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"
#include "bench/generate/generate.h"
#include "src/sim/loader.h"

namespace {

std::string Snapshot(int64_t pods, gantry::bench::OutputFormat format) {
  gantry::bench::PerfClusterOptions o;
  o.pods = static_cast<int>(pods);
  o.nodes = static_cast<int>(std::max<int64_t>(1, pods / 30));
  std::ostringstream out;
  if (!gantry::bench::WritePerfCluster(o, format, out).ok()) std::abort();
  return out.str();
}

void BM_Loader_DecodeJson(benchmark::State& state) {
  const std::string text = Snapshot(state.range(0), gantry::bench::OutputFormat::kJson);
  for (auto _ : state) {
    gantry::api::ObjectSet set;
    gantry::sim::LoadStats stats;
    absl::Status st = gantry::sim::LoadClusterText("bench.json", text, true, &set, &stats);
    if (!st.ok()) state.SkipWithError(std::string(st.message()).c_str());
    benchmark::DoNotOptimize(set.pods.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_Loader_DecodeJson)->Arg(1000)->Arg(10000)->Arg(150000)->Unit(benchmark::kMillisecond);

void BM_Loader_DecodeYaml(benchmark::State& state) {
  const std::string text = Snapshot(state.range(0), gantry::bench::OutputFormat::kYaml);
  for (auto _ : state) {
    gantry::api::ObjectSet set;
    gantry::sim::LoadStats stats;
    absl::Status st = gantry::sim::LoadClusterText("bench.yaml", text, false, &set, &stats);
    if (!st.ok()) state.SkipWithError(std::string(st.message()).c_str());
    benchmark::DoNotOptimize(set.pods.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_Loader_DecodeYaml)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
