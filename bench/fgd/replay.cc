#include "bench/fgd/replay.h"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "gantry/util/strings.h"
#include "src/config/config.h"
#include "src/scheduler/scheduler.h"
#include "src/scheduler/setup.h"
#include "src/sim/simulation.h"
#include "src/state/cluster_state.h"

namespace gantry::fgd {
namespace {

double ProcessCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Records the outcome of the single attempt each submitted pod gets.
class OutcomeRecorder final : public scheduler::AttemptObserver {
 public:
  void OnAttempt(const scheduler::AttemptOutcome& o) override {
    ++attempts;
    last_key = o.pod->Key();
    last_result = o.result;
    last_message = o.message;
  }
  int64_t attempts = 0;
  std::string last_key, last_result, last_message;
};

}  // namespace

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Rng::Below(uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = Next();
  } while (x >= limit);
  return x % n;
}

ArrivalPlan PlanArrivals(const std::vector<TraceNode>& nodes, const std::vector<TracePod>& pods,
                         uint64_t seed, double tune_ratio) {
  ArrivalPlan plan;
  for (const TraceNode& n : nodes) plan.capacity_milli += int64_t{1000} * n.gpus;
  plan.target_milli =
      static_cast<int64_t>(std::llround(tune_ratio * static_cast<double>(plan.capacity_milli)));
  std::vector<int32_t> order(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return pods[a].name < pods[b].name; });
  Rng rng(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  for (const TracePod& p : pods) plan.original_milli += p.GpuMilliTotal();
  int64_t total = plan.original_milli;
  if (total > plan.target_milli) {
    // Above target: drop random pods until within.
    while (total > plan.target_milli && !order.empty()) {
      size_t k = rng.Below(order.size());
      total -= pods[order[k]].GpuMilliTotal();
      order.erase(order.begin() + static_cast<std::ptrdiff_t>(k));
      ++plan.removed;
    }
  }
  for (int32_t i : order) plan.arrivals.push_back(Arrival{i, pods[i].name, false});
  if (!pods.empty() && plan.removed == 0) {
    while (true) {
      int32_t k = static_cast<int32_t>(rng.Below(pods.size()));
      if (total + pods[k].GpuMilliTotal() > plan.target_milli) break;
      total += pods[k].GpuMilliTotal();
      plan.arrivals.push_back(
          Arrival{k, gantry::StrCat(pods[k].name, "-tuned-", plan.clones), true});
      ++plan.clones;
    }
  }
  plan.planned_milli = total;
  return plan;
}

std::optional<double> ReplayResult::UnallocatedAt(int percent) const {
  if (percent < 0 || percent >= static_cast<int>(curve.size()) || !curve[percent])
    return std::nullopt;
  return 100.0 - *curve[percent];
}

std::vector<std::optional<double>> DiscreteCurve(const std::vector<ReplayPoint>& points,
                                                 int64_t capacity_milli) {
  std::vector<double> sum(kCurveMax + 1, 0);
  std::vector<int64_t> count(kCurveMax + 1, 0);
  if (capacity_milli <= 0) return std::vector<std::optional<double>>(kCurveMax + 1);
  const double cap = static_cast<double>(capacity_milli);
  for (const ReplayPoint& p : points) {
    const long b = std::lround(static_cast<double>(p.arrived_milli) / cap * 100.0);
    if (b < 0 || b > kCurveMax) continue;
    sum[b] += static_cast<double>(p.allocated_milli) / cap * 100.0;
    count[b]++;
  }
  std::vector<std::optional<double>> out(kCurveMax + 1);
  for (int b = 0; b <= kCurveMax; ++b) {
    if (count[b] > 0) {
      out[b] = sum[b] / static_cast<double>(count[b]);
      continue;
    }
    double s = 0;
    int64_t c = 0;
    for (int nb : {b - 1, b + 1}) {
      if (nb < 0 || nb > kCurveMax) continue;
      s += sum[nb];
      c += count[nb];
    }
    if (c > 0) out[b] = s / static_cast<double>(c);
  }
  return out;
}

namespace {

// Adds the GPU milli an allocated claim consumes to the device's node.
void AddDeviceUse(const api::ResourceClaim& claim,
                  const absl::flat_hash_map<std::string, size_t>& node_index,
                  std::vector<ReplayResult::NodeUse>* use) {
  for (const api::DeviceRequestAllocationResult& r : claim.status.allocation->results) {
    auto it = node_index.find(r.pool.str());  // one pool per node, named after it
    if (it == node_index.end()) continue;
    std::string_view dev = r.device.view();
    constexpr std::string_view kPrefix = "gpu-";
    if (!dev.starts_with(kPrefix)) continue;
    dev.remove_prefix(kPrefix.size());
    size_t i = 0;
    if (std::from_chars(dev.data(), dev.data() + dev.size(), i).ec != std::errc() ||
        i >= (*use)[it->second].gpu_milli.size()) {
      continue;
    }
    int64_t milli = 1000;
    for (const api::CapacityRequest& c : r.consumed_capacity) {
      if (api::SplitQualifiedName(c.name.view()).second == kGpuCapacity) {
        milli = c.value.MilliValue() / 1000;
      }
    }
    (*use)[it->second].gpu_milli[i] += milli;
  }
}

}  // namespace

std::string PodClass(const TracePod& pod) {
  std::string c = pod.num_gpu == 0                           ? "cpu"
                  : pod.num_gpu == 1 && pod.gpu_milli < 1000 ? "share"
                                                             : gantry::StrCat(pod.num_gpu, "gpu");
  for (size_t i = 0; i < pod.gpu_spec.size(); ++i)
    c += gantry::StrCat(i ? "|" : " ", pod.gpu_spec[i]);
  return c;
}

absl::StatusOr<ReplayResult> RunReplay(const std::vector<TraceNode>& nodes,
                                       const std::vector<TracePod>& pods,
                                       const framework::Registry& registry,
                                       const ReplayOptions& options) {
  absl::StatusOr<config::Configuration> cfg =
      config::LoadConfigText(options.config_yaml, "policy", registry);
  if (!cfg.ok()) return cfg.status();
  if (cfg->profiles.empty())
    return absl::InvalidArgumentError("policy configuration has no profile");
  const std::string scheduler_name = cfg->profiles[0].scheduler_name;

  api::ObjectSet cluster;
  if (absl::Status st = BuildCluster(nodes, &cluster); !st.ok()) return st;

  FakeClock clock(1'700'000'000'000'000);
  state::ClusterState state(clock);
  sim::InMemoryWriter writer;
  absl::StatusOr<scheduler::SchedulerBundle> bundle = scheduler::BuildScheduler(
      *cfg, registry, state, writer, clock, options.seed, /*binding_workers=*/0);
  if (!bundle.ok()) return bundle.status();
  scheduler::Scheduler& sched = *bundle->scheduler;
  OutcomeRecorder recorder;
  sched.AddObserver(&recorder);

  for (const api::Namespace& ns : cluster.namespaces)
    sched.events().OnNamespace(api::Symbol::Intern(ns.meta.name), ns.meta.labels);
  for (const api::Node& n : cluster.nodes)
    sched.events().OnNodeAdd(std::make_shared<const api::Node>(n));
  for (const api::DeviceClass& c : cluster.device_classes) {
    sched.events().OnDeviceClass(nullptr, std::make_shared<const api::DeviceClass>(c));
  }
  for (const api::ResourceSlice& s : cluster.resource_slices) {
    sched.events().OnResourceSlice(nullptr, std::make_shared<const api::ResourceSlice>(s));
  }

  ReplayResult result;
  result.seed = options.seed;
  result.plan = PlanArrivals(nodes, pods, options.seed, options.tune_ratio);
  const size_t limit = options.max_pods > 0 ? std::min(result.plan.arrivals.size(),
                                                       static_cast<size_t>(options.max_pods))
                                            : result.plan.arrivals.size();
  int64_t arrived = 0, allocated = 0;
  absl::flat_hash_map<std::string, size_t> node_index;
  std::vector<ReplayResult::NodeUse> use(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    node_index[nodes[i].name] = i;
    use[i].gpu_milli.assign(static_cast<size_t>(nodes[i].gpus), 0);
  }
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = ProcessCpuSeconds();
  for (size_t i = 0; i < limit; ++i) {
    const Arrival& a = result.plan.arrivals[i];
    const TracePod& tp = pods[static_cast<size_t>(a.pod)];
    absl::StatusOr<PodObjects> objs = BuildPod(tp, a.name, scheduler_name);
    if (!objs.ok()) return objs.status();
    std::vector<std::shared_ptr<const api::ResourceClaim>> claims;
    for (api::ResourceClaim& c : objs->claims) {
      claims.push_back(std::make_shared<const api::ResourceClaim>(std::move(c)));
      sched.events().OnResourceClaim(nullptr, claims.back());
    }
    auto pod = std::make_shared<const api::Pod>(std::move(objs->pod));
    const std::string key = pod->meta.Key();
    sched.events().OnPodAdd(pod);
    const int64_t before = recorder.attempts;
    if (!sched.ScheduleOne(/*blocking=*/false)) {
      return absl::InternalError(
          gantry::StrCat("pod ", key, " was not queued: ", recorder.last_message));
    }
    if (recorder.attempts != before + 1 || recorder.last_key != key) {
      return absl::InternalError(
          gantry::StrCat("pod ", key, ": expected exactly one attempt of this pod, got ",
                         recorder.attempts - before, " (last: ", recorder.last_key, ")"));
    }
    sched.WaitForBindings();
    arrived += tp.GpuMilliTotal();
    ++result.submitted;
    // Feed what the scheduler wrote back, as the API server's watch would.
    for (sim::InMemoryWriter::ClaimUpdate& u : writer.TakeClaimUpdates()) {
      if (u.claim->IsAllocated() && (u.old_claim == nullptr || !u.old_claim->IsAllocated())) {
        AddDeviceUse(*u.claim, node_index, &use);
      }
      sched.events().OnResourceClaim(std::move(u.old_claim), std::move(u.claim));
    }
    std::vector<sim::InMemoryWriter::Binding> bindings = writer.TakeBindings();
    if (recorder.last_result == "scheduled") {
      if (bindings.size() != 1) {
        return absl::InternalError(
            gantry::StrCat("pod ", key, ": scheduled but ", bindings.size(), " bindings"));
      }
      auto bound = std::make_shared<api::Pod>(*bindings[0].pod);
      bound->node_name = api::Symbol::Intern(bindings[0].node);
      bound->phase = api::PodPhase::kRunning;
      sched.events().OnPodUpdate(bindings[0].pod, std::move(bound));
      allocated += tp.GpuMilliTotal();
      ++result.placed;
      if (auto it = node_index.find(bindings[0].node); it != node_index.end()) {
        use[it->second].cpu_milli += tp.cpu_milli;
        use[it->second].memory_mib += tp.memory_mib;
      }
    } else {
      if (!bindings.empty())
        return absl::InternalError(gantry::StrCat("pod ", key, ": failed but bound"));
      // Dropped: no queue, no retry.
      sched.events().OnPodDelete(pod);
      for (const auto& c : claims) sched.events().OnResourceClaimDelete(c);
      ++result.failed;
      if (arrived - tp.GpuMilliTotal() < result.plan.capacity_milli) {
        ReplayResult::ClassFailures& f = result.failed_before_100[PodClass(tp)];
        ++f.pods;
        f.gpu_milli += tp.GpuMilliTotal();
      }
      if (result.failure_samples.size() < 5)
        result.failure_samples.push_back(key + ": " + recorder.last_message);
    }
    result.points.push_back(ReplayPoint{arrived, allocated});
    if (result.use_at_100.empty() && arrived >= result.plan.capacity_milli) result.use_at_100 = use;
  }
  result.cpu_seconds = ProcessCpuSeconds() - cpu_start;
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  result.attempts = recorder.attempts;
  if (sched.ScheduleOne(/*blocking=*/false)) {
    return absl::InternalError(
        "a pod was still queued after the replay (a retry would have happened)");
  }
  result.pods_at_end = static_cast<int64_t>(state.PodCount());
  for (const auto& claim : sched.dra().Claims()) {
    if (!claim->IsAllocated()) continue;
    for (const api::DeviceRequestAllocationResult& r : claim->status.allocation->results) {
      for (const api::CapacityRequest& c : r.consumed_capacity) {
        if (api::SplitQualifiedName(c.name.view()).second == kGpuCapacity) {
          result.dra_allocated_milli += c.value.MilliValue() / 1000;
        }
      }
    }
  }
  sched.RemoveObserver(&recorder);
  result.curve = DiscreteCurve(result.points, result.plan.capacity_milli);
  return result;
}

}  // namespace gantry::fgd
