// Micro-benchmarks of the scheduling queue (virtual clock, no plugins but the
// default PrioritySort order). Items/s counts pods.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "gantry/clock.h"
#include "src/queue/scheduling_queue.h"

namespace gantry::queue {
namespace {

std::vector<PodInfoPtr> MakePods(int n) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> prio(0, 9);
  std::vector<PodInfoPtr> pods;
  pods.reserve(n);
  for (int i = 0; i < n; ++i) {
    api::Pod pod;
    pod.meta.name = "pod-" + std::to_string(i);
    pod.meta.namespace_ = api::Symbol::Intern("default");
    pod.meta.uid = "uid-" + std::to_string(i);
    pod.scheduler_name = api::Symbol::Intern("gantry-scheduler");
    int32_t p = prio(rng);
    pod.priority = p;
    pods.push_back(framework::PodInfo::Create(std::make_shared<const api::Pod>(std::move(pod)), p));
  }
  return pods;
}

QueueOptions Options() {
  QueueOptions o;
  o.events["NodeResourcesFit"] = {
      {framework::ClusterEvent{framework::EventResource::kNode, framework::kAdd, "NodeAdd"},
       [](const api::Pod&, const framework::ClusterEvent&, const void*, const void*) {
         return framework::QueueingHint::kQueue;
       }},
  };
  return o;
}

// Add N pods (random priorities, one clock tick apart), then pop all in order.
void BM_Queue_AddPop(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<PodInfoPtr> pods = MakePods(n);
  for (auto _ : state) {
    FakeClock clock;
    SchedulingQueue q(clock, Options());
    for (const PodInfoPtr& p : pods) {
      clock.Advance(1);
      q.Add(p);
    }
    int popped = 0;
    while (auto qpi = q.TryPop()) {
      q.Done(qpi->pod_info->uid());
      ++popped;
    }
    if (popped != n) state.SkipWithError("lost pods");
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Queue_AddPop)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

// N pods fail once (unschedulable by one plugin) and one NodeAdd event with a
// hint moves them all back; then they are popped again.
void BM_Queue_FailMoveAllPop(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<PodInfoPtr> pods = MakePods(n);
  const framework::ClusterEvent node_add{framework::EventResource::kNode, framework::kAdd,
                                         "NodeAdd"};
  for (auto _ : state) {
    FakeClock clock;
    SchedulingQueue q(clock, Options());
    for (const PodInfoPtr& p : pods) q.Add(p);
    while (auto qpi = q.TryPop()) {
      std::string uid = qpi->pod_info->uid();
      qpi->unschedulable_plugins.insert("NodeResourcesFit");
      (void)q.AddUnschedulableIfNotPresent(std::move(*qpi), q.SchedulingCycle());
      q.Done(uid);
    }
    clock.Advance(10'000'000);
    q.MoveAllToActiveOrBackoffQueue(node_add, nullptr, nullptr);
    int popped = 0;
    while (auto qpi = q.TryPop()) {
      q.Done(qpi->pod_info->uid());
      ++popped;
    }
    if (popped != n) state.SkipWithError("lost pods");
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Queue_FailMoveAllPop)->Arg(100000)->Unit(benchmark::kMillisecond);

// One event against N unschedulable pods whose hints all say Skip (the cost
// every cluster event pays while many pods are pending).
void BM_Queue_MoveAllSkip(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<PodInfoPtr> pods = MakePods(n);
  QueueOptions o;
  o.events["NodeResourcesFit"] = {
      {framework::ClusterEvent{framework::EventResource::kNode, framework::kAdd, "NodeAdd"},
       [](const api::Pod&, const framework::ClusterEvent&, const void*, const void*) {
         return framework::QueueingHint::kSkip;
       }},
  };
  FakeClock clock;
  SchedulingQueue q(clock, o);
  for (const PodInfoPtr& p : pods) q.Add(p);
  while (auto qpi = q.TryPop()) {
    std::string uid = qpi->pod_info->uid();
    qpi->unschedulable_plugins.insert("NodeResourcesFit");
    (void)q.AddUnschedulableIfNotPresent(std::move(*qpi), q.SchedulingCycle());
    q.Done(uid);
  }
  const framework::ClusterEvent node_add{framework::EventResource::kNode, framework::kAdd,
                                         "NodeAdd"};
  for (auto _ : state) {
    q.MoveAllToActiveOrBackoffQueue(node_add, nullptr, nullptr);
  }
  if (q.Pending().unschedulable != n) state.SkipWithError("pods moved");
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Queue_MoveAllSkip)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gantry::queue

BENCHMARK_MAIN();
