// Benchmarks of ClusterState::UpdateSnapshot, the copy-on-change refresh the
// scheduling loop runs at the start of every cycle (design rule 1).
//
// BM_Snapshot_Unchanged/<nodes>/<pods per node>: nothing changed since the
//   last update (the common case between two cycles of an idle cache).
// BM_Snapshot_AssumeForget/<nodes>/<pods per node>: one pod assumed on a
//   node, snapshot updated, the pod forgotten, snapshot updated: two updates
//   of one dirty NodeInfo each, as a scheduling cycle and a failed binding
//   cause. Items processed count snapshot updates.
// BM_Snapshot_AllNodesChanged/<nodes>/<pods per node>: every Node object
//   updated (a status burst), then one update.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "gantry/clock.h"
#include "src/state/cluster_state.h"
#include "src/state/snapshot.h"
#include "test/testing/objects.h"

namespace gantry::state {
namespace {

using gantry::testing::SimpleNode;
using gantry::testing::SimplePod;

constexpr int64_t kGiB = int64_t{1} << 30;

std::string NodeName(int i) { return "node-" + std::to_string(i); }

// A cache with `nodes` 64-CPU nodes, each holding `pods_per_node` bound pods.
void Fill(ClusterState& state, int nodes, int pods_per_node) {
  for (int n = 0; n < nodes; ++n) {
    state.AddOrUpdateNode(
        std::make_shared<const api::Node>(SimpleNode(NodeName(n), 64000, 256 * kGiB)));
    for (int p = 0; p < pods_per_node; ++p) {
      api::Pod pod = SimplePod("pod-" + std::to_string(n) + "-" + std::to_string(p), 100, kGiB / 4);
      pod.node_name = api::Symbol::Intern(NodeName(n));
      state.AddOrUpdateBoundPod(std::make_shared<const api::Pod>(std::move(pod)));
    }
  }
}

void BM_Snapshot_Unchanged(benchmark::State& bm) {
  FakeClock clock(1'000'000);
  ClusterState state(clock);
  Fill(state, static_cast<int>(bm.range(0)), static_cast<int>(bm.range(1)));
  Snapshot snapshot;
  state.UpdateSnapshot(&snapshot);
  for (auto _ : bm) {
    state.UpdateSnapshot(&snapshot);
    benchmark::DoNotOptimize(snapshot.size());
  }
  bm.SetItemsProcessed(bm.iterations());
}
BENCHMARK(BM_Snapshot_Unchanged)->Args({5000, 30})->Args({50000, 30});

void BM_Snapshot_AssumeForget(benchmark::State& bm) {
  FakeClock clock(1'000'000);
  ClusterState state(clock);
  const int nodes = static_cast<int>(bm.range(0));
  Fill(state, nodes, static_cast<int>(bm.range(1)));
  Snapshot snapshot;
  state.UpdateSnapshot(&snapshot);
  framework::PodInfoPtr pod =
      state.MakePodInfo(std::make_shared<const api::Pod>(SimplePod("new", 100, kGiB)));
  int next = 0;
  for (auto _ : bm) {
    const std::string& node = NodeName(next);
    next = (next + 7919) % nodes;  // a different node each time, spread over the cache
    if (!state.Assume(pod, node).ok()) bm.SkipWithError("assume");
    state.UpdateSnapshot(&snapshot);
    if (!state.Forget(pod->uid()).ok()) bm.SkipWithError("forget");
    state.UpdateSnapshot(&snapshot);
  }
  bm.SetItemsProcessed(2 * bm.iterations());
}
BENCHMARK(BM_Snapshot_AssumeForget)
    ->Args({5000, 0})
    ->Args({5000, 30})
    ->Args({5000, 110})
    ->Args({50000, 30});

void BM_Snapshot_AllNodesChanged(benchmark::State& bm) {
  FakeClock clock(1'000'000);
  ClusterState state(clock);
  const int nodes = static_cast<int>(bm.range(0));
  Fill(state, nodes, static_cast<int>(bm.range(1)));
  std::vector<std::shared_ptr<const api::Node>> updated;
  for (int n = 0; n < nodes; ++n) {
    updated.push_back(
        std::make_shared<const api::Node>(SimpleNode(NodeName(n), 64000, 256 * kGiB)));
  }
  Snapshot snapshot;
  state.UpdateSnapshot(&snapshot);
  for (auto _ : bm) {
    for (const auto& node : updated) state.AddOrUpdateNode(node);
    state.UpdateSnapshot(&snapshot);
  }
  bm.SetItemsProcessed(bm.iterations() * nodes);
}
BENCHMARK(BM_Snapshot_AllNodesChanged)->Args({5000, 30})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gantry::state

BENCHMARK_MAIN();
