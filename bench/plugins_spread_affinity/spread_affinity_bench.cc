// Benchmarks for PodTopologySpread and InterPodAffinity on clusters shaped
// like upstream scheduler_perf's TopologySpreading and PodAntiAffinity
// workloads: N nodes in 10 zones, 2 pods per node, a 2-worker pool.
//
//   BM_<Point>_<Plugin>/<nodes>: one PreFilter, Filter over every node, ...
//     (PreFilter on an unchanged cluster reuses the previous call's counts)
//   BM_PreFilter_<Plugin>OneNodeChanged: one node's pods changed since the
//     previous PreFilter (the usual scheduling cycle)
//   BM_PreFilter_<Plugin>Cold: a fresh plugin, every node counted
//   BM_Cycle_<Plugin>/<nodes>: PreFilter + Filter(all) + PreScore + Score(all)
//     + NormalizeScore, i.e. this plugin's share of one scheduling attempt.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "gantry/util/strings.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "test/testing/objects.h"

namespace gantry {
namespace {

using framework::CycleState;
using framework::NodeInfo;

// Two workers (the caller and one thread) pulling indexes, like the
// runtime's pool on this 2-core machine; kept here so the benchmark only
// depends on the plugin API.
class TwoWorkers final : public framework::Parallelizer {
 public:
  TwoWorkers() : thread_([this] { Loop(); }) {}
  ~TwoWorkers() override {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Until(int n, const std::function<void(int)>& fn) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      fn_ = &fn;
      n_ = n;
      next_ = 0;
      helper_done_ = false;
      ++epoch_;
    }
    cv_.notify_all();
    Work();
    std::unique_lock<std::mutex> l(mu_);
    done_cv_.wait(l, [&] { return helper_done_; });
    fn_ = nullptr;
  }
  int parallelism() const override { return 2; }

 private:
  void Work() {
    for (int i = next_.fetch_add(1); i < n_; i = next_.fetch_add(1)) (*fn_)(i);
  }
  void Loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stop_ || epoch_ != seen; });
        if (stop_) return;
        seen = epoch_;
      }
      Work();
      {
        std::lock_guard<std::mutex> l(mu_);
        helper_done_ = true;
      }
      done_cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int)>* fn_ = nullptr;
  int n_ = 0;
  std::atomic<int> next_{0};
  uint64_t epoch_ = 0;
  bool helper_done_ = false;
  bool stop_ = false;
  std::thread thread_;
};

class BenchHandle : public testing::FakeHandle {
 public:
  framework::Parallelizer& parallelizer() override { return pool_; }

 private:
  TwoWorkers pool_;
};

api::Labels Labels(std::vector<std::pair<std::string, std::string>> kv) {
  api::Labels out;
  for (auto& [k, v] : kv) out.emplace_back(api::Symbol::Intern(k), api::Symbol::Intern(v));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first.view() < b.first.view(); });
  return out;
}

// `with_anti_affinity`: the first pod of every node carries required
// anti-affinity on hostname against its own group (upstream's init pods).
std::unique_ptr<BenchHandle> MakeCluster(int nodes, bool with_anti_affinity) {
  auto h = std::make_unique<BenchHandle>();
  api::Pod anti_template;
  if (with_anti_affinity) {
    anti_template = testing::ParsePod(R"(
metadata: {name: t, namespace: sched-0, labels: {color: green}}
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {color: green}}, topologyKey: kubernetes.io/hostname}
  containers: [{name: c, image: i}]
)");
  }
  for (int i = 0; i < nodes; ++i) {
    std::string name = gantry::StrCat("node-", i);
    api::Node n = testing::SimpleNode(name, 32000, 128LL << 30, 110,
                                      {{"kubernetes.io/hostname", name},
                                       {"topology.kubernetes.io/zone", gantry::StrCat("zone-", i % 10)}});
    std::vector<api::Pod> pods;
    for (int j = 0; j < 2; ++j) {
      api::Pod p = (j == 0 && with_anti_affinity) ? anti_template : testing::SimplePod("x", 100, 1 << 20, "sched-0");
      p.meta.name = gantry::StrCat("pod-", i, "-", j);
      p.meta.uid = p.meta.name;
      p.node_name = api::Symbol::Intern(name);
      if (!(j == 0 && with_anti_affinity)) p.meta.labels = Labels({{"app", j == 0 ? "spread" : "other"}});
      pods.push_back(std::move(p));
    }
    h->AddNode(testing::MakeNodeInfo(n, pods));
  }
  return h;
}

framework::PodInfoPtr SpreadPod(const char* when) {
  return testing::PodInfoFromYaml(gantry::StrCat(R"(
metadata: {name: incoming, namespace: sched-0, labels: {app: spread}}
spec:
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: )", when,
                                                 R"(, labelSelector: {matchLabels: {app: spread}}}
  containers: [{name: c, image: i}]
)"));
}

framework::PodInfoPtr AntiAffinityPod() {
  return testing::PodInfoFromYaml(R"(
metadata: {name: incoming, namespace: sched-0, labels: {color: green}}
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {color: green}}, topologyKey: kubernetes.io/hostname}
  containers: [{name: c, image: i}]
)");
}

framework::PodInfoPtr PreferredAffinityPod() {
  return testing::PodInfoFromYaml(R"(
metadata: {name: incoming, namespace: sched-0, labels: {color: blue}}
spec:
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        podAffinityTerm: {labelSelector: {matchLabels: {app: spread}}, topologyKey: topology.kubernetes.io/zone}
  containers: [{name: c, image: i}]
)");
}

std::vector<const NodeInfo*> AsConst(const std::vector<NodeInfo*>& v) { return {v.begin(), v.end()}; }

template <typename Plugin>
void RunFilterAll(Plugin& pl, CycleState& state, const framework::PodInfo& pod, const std::vector<NodeInfo*>& nodes) {
  int ok = 0;
  for (NodeInfo* n : nodes) ok += pl.Filter(state, pod, *n).IsSuccess();
  benchmark::DoNotOptimize(ok);
}

template <typename Plugin>
void RunScoreAll(Plugin& pl, CycleState& state, const framework::PodInfo& pod, const std::vector<const NodeInfo*>& nodes,
                 std::vector<framework::NodeScore>& scores) {
  scores.clear();
  for (const NodeInfo* n : nodes) {
    int64_t s = 0;
    (void)pl.Score(state, pod, *n, &s);
    scores.push_back({n->name(), s});
  }
  (void)pl.NormalizeScore(state, pod, scores);
}

plugins::pod_topology_spread::PodTopologySpreadArgs ListArgs() {
  plugins::pod_topology_spread::PodTopologySpreadArgs a;
  a.defaulting_type = plugins::pod_topology_spread::DefaultingType::kList;
  return a;
}

// ---- PodTopologySpread ----------------------------------------------------------

void BM_PreFilter_PodTopologySpread(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), false);
  plugins::pod_topology_spread::PodTopologySpread pl(ListArgs(), *h);
  auto pod = SpreadPod("DoNotSchedule");
  for (auto _ : st) {
    CycleState state;
    benchmark::DoNotOptimize(pl.PreFilter(state, *pod, h->NodeInfos(), nullptr));
  }
}

// PreFilter with one node's pods changed since the last call (a scheduling
// cycle's usual case: the previous pod landed there), so only that node is
// recounted.
template <typename Plugin>
void PreFilterOneNodeChanged(benchmark::State& st, Plugin& pl, testing::FakeHandle& h,
                             const framework::PodInfo& pod) {
  const std::vector<NodeInfo*>& nodes = h.NodeInfos();
  framework::PodInfoPtr extra = testing::PodInfoFromYaml(R"(
metadata: {name: extra, namespace: sched-0, uid: extra, labels: {app: spread, color: green}}
spec: {containers: [{name: c, image: i}]}
)");
  {
    CycleState warm;
    (void)pl.PreFilter(warm, pod, nodes, nullptr);
  }
  size_t k = 0;
  for (auto _ : st) {
    NodeInfo* n = nodes[k++ % nodes.size()];
    n->AddPod(extra);
    CycleState state;
    benchmark::DoNotOptimize(pl.PreFilter(state, pod, nodes, nullptr));
    n->RemovePod("extra");
  }
}

// PreFilter on a plugin that has never seen the cluster: every node is
// counted (the cost of the first cycle, or of a pod with a new signature).
template <typename Plugin, typename Make>
void PreFilterCold(benchmark::State& st, testing::FakeHandle& h, const framework::PodInfo& pod,
                   Make&& make) {
  for (auto _ : st) {
    std::unique_ptr<Plugin> pl = make();
    CycleState state;
    benchmark::DoNotOptimize(pl->PreFilter(state, pod, h.NodeInfos(), nullptr));
  }
}

void BM_PreFilter_PodTopologySpreadOneNodeChanged(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), false);
  plugins::pod_topology_spread::PodTopologySpread pl(ListArgs(), *h);
  PreFilterOneNodeChanged(st, pl, *h, *SpreadPod("DoNotSchedule"));
}

void BM_PreFilter_PodTopologySpreadCold(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), false);
  using plugins::pod_topology_spread::PodTopologySpread;
  PreFilterCold<PodTopologySpread>(st, *h, *SpreadPod("DoNotSchedule"), [&] {
    return std::make_unique<PodTopologySpread>(ListArgs(), *h);
  });
}

void BM_Filter_PodTopologySpread(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), false);
  plugins::pod_topology_spread::PodTopologySpread pl(ListArgs(), *h);
  auto pod = SpreadPod("DoNotSchedule");
  CycleState state;
  (void)pl.PreFilter(state, *pod, h->NodeInfos(), nullptr);
  for (auto _ : st) RunFilterAll(pl, state, *pod, h->NodeInfos());
  st.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(st.iterations() * st.range(0)),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Score_PodTopologySpread(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), false);
  plugins::pod_topology_spread::PodTopologySpread pl(ListArgs(), *h);
  auto pod = SpreadPod("ScheduleAnyway");
  auto nodes = AsConst(h->NodeInfos());
  std::vector<framework::NodeScore> scores;
  for (auto _ : st) {
    CycleState state;
    (void)pl.PreScore(state, *pod, nodes);
    RunScoreAll(pl, state, *pod, nodes, scores);
  }
}

void BM_Cycle_PodTopologySpread(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), false);
  plugins::pod_topology_spread::PodTopologySpread pl(ListArgs(), *h);
  auto pod = SpreadPod("DoNotSchedule");
  auto nodes = AsConst(h->NodeInfos());
  std::vector<framework::NodeScore> scores;
  for (auto _ : st) {
    CycleState state;
    (void)pl.PreFilter(state, *pod, h->NodeInfos(), nullptr);
    RunFilterAll(pl, state, *pod, h->NodeInfos());
    if (pl.PreScore(state, *pod, nodes).IsSuccess()) RunScoreAll(pl, state, *pod, nodes, scores);
  }
  st.counters["pods_per_s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}

// ---- InterPodAffinity -----------------------------------------------------------

void BM_PreFilter_InterPodAffinity(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), true);
  plugins::inter_pod_affinity::InterPodAffinity pl({}, *h);
  auto pod = AntiAffinityPod();
  for (auto _ : st) {
    CycleState state;
    benchmark::DoNotOptimize(pl.PreFilter(state, *pod, h->NodeInfos(), nullptr));
  }
}

void BM_PreFilter_InterPodAffinityOneNodeChanged(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), true);
  plugins::inter_pod_affinity::InterPodAffinity pl({}, *h);
  PreFilterOneNodeChanged(st, pl, *h, *AntiAffinityPod());
}

void BM_PreFilter_InterPodAffinityCold(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), true);
  using plugins::inter_pod_affinity::InterPodAffinity;
  PreFilterCold<InterPodAffinity>(st, *h, *AntiAffinityPod(), [&] {
    return std::make_unique<InterPodAffinity>(plugins::inter_pod_affinity::InterPodAffinityArgs(),
                                              *h);
  });
}

void BM_Filter_InterPodAffinity(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), true);
  plugins::inter_pod_affinity::InterPodAffinity pl({}, *h);
  auto pod = AntiAffinityPod();
  CycleState state;
  (void)pl.PreFilter(state, *pod, h->NodeInfos(), nullptr);
  for (auto _ : st) RunFilterAll(pl, state, *pod, h->NodeInfos());
  st.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(st.iterations() * st.range(0)),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Score_InterPodAffinity(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), true);
  plugins::inter_pod_affinity::InterPodAffinity pl({}, *h);
  auto pod = PreferredAffinityPod();
  auto nodes = AsConst(h->NodeInfos());
  std::vector<framework::NodeScore> scores;
  for (auto _ : st) {
    CycleState state;
    (void)pl.PreScore(state, *pod, nodes);
    RunScoreAll(pl, state, *pod, nodes, scores);
  }
}

void BM_Cycle_InterPodAffinity(benchmark::State& st) {
  auto h = MakeCluster(static_cast<int>(st.range(0)), true);
  plugins::inter_pod_affinity::InterPodAffinity pl({}, *h);
  auto pod = AntiAffinityPod();
  auto nodes = AsConst(h->NodeInfos());
  std::vector<framework::NodeScore> scores;
  for (auto _ : st) {
    CycleState state;
    (void)pl.PreFilter(state, *pod, h->NodeInfos(), nullptr);
    RunFilterAll(pl, state, *pod, h->NodeInfos());
    if (pl.PreScore(state, *pod, nodes).IsSuccess()) RunScoreAll(pl, state, *pod, nodes, scores);
  }
  st.counters["pods_per_s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}

#define GANTRY_SIZES Arg(500)->Arg(5000)->Unit(benchmark::kMicrosecond)->UseRealTime()
BENCHMARK(BM_PreFilter_PodTopologySpread)->GANTRY_SIZES;
BENCHMARK(BM_PreFilter_PodTopologySpreadOneNodeChanged)->GANTRY_SIZES;
BENCHMARK(BM_PreFilter_PodTopologySpreadCold)->GANTRY_SIZES;
BENCHMARK(BM_Filter_PodTopologySpread)->GANTRY_SIZES;
BENCHMARK(BM_Score_PodTopologySpread)->GANTRY_SIZES;
BENCHMARK(BM_Cycle_PodTopologySpread)->GANTRY_SIZES;
BENCHMARK(BM_PreFilter_InterPodAffinity)->GANTRY_SIZES;
BENCHMARK(BM_PreFilter_InterPodAffinityOneNodeChanged)->GANTRY_SIZES;
BENCHMARK(BM_PreFilter_InterPodAffinityCold)->GANTRY_SIZES;
BENCHMARK(BM_Filter_InterPodAffinity)->GANTRY_SIZES;
BENCHMARK(BM_Score_InterPodAffinity)->GANTRY_SIZES;
BENCHMARK(BM_Cycle_InterPodAffinity)->GANTRY_SIZES;

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
