// Preemption benchmarks (Google Benchmark), offline with the default
// configuration and built-in plugins.
//
// BM_PreemptionAsync/<nodes>/<low>/<high>: upstream scheduler_perf's
//   PreemptionAsync shape: <nodes> 4-CPU nodes full of <low> 1-CPU
//   low-priority pods, then <high> 1-CPU high-priority pods arrive; each must
//   evict one victim and bind after it left (grace period 1 s of virtual
//   time). The whole simulation runs; counters report preemptors scheduled
//   per second of the scheduling loop (wall and CPU) and scheduling attempts.
// BM_GangPreemption/<case>: one group cycle of a preempting PodGroup, timed
//   as one decision (ScheduleOne of the first member): 0 = a 100-pod gang
//   evicting 1,000 lone pods; 1 = a gang evicting 5 lower-priority `all`
//   gangs; 2 = a gang evicting 50 of them. Counters: evictions, decision ms.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <sstream>
#include <string>

#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry {
namespace {

double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void Node(std::ostringstream& o, const std::string& name, const std::string& cpu, int gpus) {
  o << "apiVersion: v1\nkind: Node\nmetadata: {name: " << name
    << "}\nstatus:\n  allocatable: {cpu: \"" << cpu << "\", memory: 512Gi, pods: \"110\"";
  if (gpus > 0) o << ", nvidia.com/gpu: \"" << gpus << "\"";
  o << "}\n---\n";
}

void Pod(std::ostringstream& o, const std::string& name, const std::string& node,
         const std::string& cpu, int gpus, int priority, const std::string& group = "",
         int grace = 1) {
  o << "apiVersion: v1\nkind: Pod\nmetadata: {name: " << name << ", namespace: bench}\nspec:\n"
    << "  schedulerName: gantry-scheduler\n  priority: " << priority
    << "\n  terminationGracePeriodSeconds: " << grace << "\n";
  if (!group.empty()) o << "  schedulingGroup: {podGroupName: " << group << "}\n";
  if (!node.empty()) o << "  nodeName: " << node << "\n";
  o << "  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"" << cpu
    << "\", memory: 1Gi";
  if (gpus > 0) o << ", nvidia.com/gpu: \"" << gpus << "\"";
  o << "}\n";
  if (!node.empty()) o << "status: {phase: Running}\n";
  o << "---\n";
}

void Group(std::ostringstream& o, const std::string& name, int min_count, int priority, bool all) {
  o << "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " << name
    << ", namespace: bench}\nspec:\n  priority: " << priority
    << "\n  schedulingPolicy:\n    gang: {minCount: " << min_count << "}\n";
  if (all) o << "  disruptionMode: {all: {}}\n";
  o << "---\n";
}

bool Load(const std::string& yaml, api::ObjectSet* objects) {
  sim::LoadStats stats;
  return sim::LoadClusterText("bench.yaml", yaml, false, objects, &stats).ok();
}

void BM_PreemptionAsync(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int low = static_cast<int>(state.range(1));
  const int high = static_cast<int>(state.range(2));
  std::ostringstream o;
  for (int n = 0; n < nodes; ++n) Node(o, "node-" + std::to_string(n), "4", 0);
  for (int i = 0; i < low; ++i)
    Pod(o, "low-" + std::to_string(i), "node-" + std::to_string(i % nodes), "1", 0, 0);
  for (int i = 0; i < high; ++i) Pod(o, "high-" + std::to_string(i), "", "1", 0, 1000);
  api::ObjectSet objects;
  if (!Load(o.str(), &objects)) {
    state.SkipWithError("load");
    return;
  }
  framework::Registry registry;
  (void)plugins::RegisterBuiltinPlugins(registry);
  auto cfg = config::DefaultConfig(registry);
  double scheduled = 0, seconds = 0, cpu = 0, evictions = 0, attempts = 0;
  for (auto _ : state) {
    FakeClock clock(1'700'000'000'000'000);
    state::ClusterState cluster(clock);
    sim::InMemoryWriter writer;
    auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
    sim::SimulationResult r = sim::RunSimulation(objects, *bundle->scheduler, writer, clock);
    int64_t preemptors = 0;
    for (const auto& [pod, node] : r.placements)
      preemptors += pod.rfind("bench/high-", 0) == 0 ? 1 : 0;
    scheduled += static_cast<double>(preemptors);
    seconds += r.loop_seconds;
    cpu += r.cpu_seconds;
    evictions += static_cast<double>(r.evictions.size());
    attempts += static_cast<double>(r.attempts);
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["attempts"] = attempts / iters;
  state.counters["preemptors_scheduled"] = scheduled / iters;
  state.counters["evictions"] = evictions / iters;
  state.counters["pods_per_s_wall"] = scheduled / seconds;
  state.counters["pods_per_s_cpu"] = scheduled / cpu;
}
BENCHMARK(BM_PreemptionAsync)
    ->Args({500, 2000, 500})
    ->Args({5000, 20000, 100})  // small enough for callgrind at full cluster size
    ->Args({5000, 20000, 1000})
    ->Args({5000, 20000, 5000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

// Gang cases: {nodes, gpus per node, lone pods per node (1 GPU), low gangs,
// low gang size (8 GPUs per member), preemptor members, GPUs per member}.
struct GangShape {
  int nodes, gpus, lone_per_node, low_gangs, low_gang_size, members, member_gpus;
};
constexpr GangShape kGangShapes[] = {
    // 500 nodes x 10 GPUs full of 1-GPU pods; 100 members x 10 GPUs -> 1,000 victims.
    {500, 10, 10, 0, 0, 100, 10},
    // 200 nodes x 8 GPUs full of 50 `all` gangs of 4 x 8 GPUs; 20 members x 8 GPUs -> 5 gangs.
    {200, 8, 0, 50, 4, 20, 8},
    // Same cluster, 200 members -> all 50 gangs.
    {200, 8, 0, 50, 4, 200, 8},
};

void BM_GangPreemption(benchmark::State& state) {
  const GangShape& s = kGangShapes[state.range(0)];
  std::ostringstream o;
  for (int n = 0; n < s.nodes; ++n) Node(o, "node-" + std::to_string(n), "128", s.gpus);
  for (int n = 0; n < s.nodes; ++n) {
    for (int i = 0; i < s.lone_per_node; ++i) {
      Pod(o, "lone-" + std::to_string(n) + "-" + std::to_string(i), "node-" + std::to_string(n),
          "1", 1, 0);
    }
  }
  int next_node = 0;
  for (int g = 0; g < s.low_gangs; ++g) {
    const std::string name = "low-" + std::to_string(g);
    Group(o, name, s.low_gang_size, 10, true);
    for (int i = 0; i < s.low_gang_size; ++i) {
      Pod(o, name + "-" + std::to_string(i), "node-" + std::to_string(next_node++ % s.nodes), "1",
          8, 0, name);
    }
  }
  Group(o, "big", s.members, 1000, false);
  for (int i = 0; i < s.members; ++i)
    Pod(o, "big-" + std::to_string(i), "", "1", s.member_gpus, 0, "big");
  api::ObjectSet objects;
  if (!Load(o.str(), &objects)) {
    state.SkipWithError("load");
    return;
  }
  framework::Registry registry;
  (void)plugins::RegisterBuiltinPlugins(registry);
  auto cfg = config::DefaultConfig(registry);
  double decision_ms = 0, decision_cpu_ms = 0, evictions = 0;
  for (auto _ : state) {
    state.PauseTiming();
    FakeClock clock(1'700'000'000'000'000);
    state::ClusterState cluster(clock);
    sim::InMemoryWriter writer;
    auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
    scheduler::Scheduler& sched = *bundle->scheduler;
    for (const api::Node& n : objects.nodes)
      sched.events().OnNodeAdd(std::make_shared<const api::Node>(n));
    for (const api::PodGroup& g : objects.pod_groups)
      sched.events().OnPodGroup(state::GroupInfoFrom(g));
    int uid = 0;
    for (const api::Pod& p : objects.pods) {
      auto pod = std::make_shared<api::Pod>(p);
      pod->meta.uid = "uid-" + std::to_string(uid++);
      sched.events().OnPodAdd(std::move(pod));
    }
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    const double cpu0 = CpuSeconds();
    sched.ScheduleOne(false);  // the first member's cycle: the whole group's decision
    decision_cpu_ms += (CpuSeconds() - cpu0) * 1e3;
    decision_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    evictions += static_cast<double>(writer.TakeEvictions().size());
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["evictions"] = evictions / iters;
  state.counters["decision_ms"] = decision_ms / iters;
  state.counters["decision_cpu_ms"] = decision_cpu_ms / iters;
}
BENCHMARK(BM_GangPreemption)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
