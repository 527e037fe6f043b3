#include "bench/generate/workloads.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string_view>
#include <utility>

#include "bench/dra/workload.h"
#include "gantry/util/strings.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry::bench {
namespace {

// How nodes are labelled (upstream's labelNodePrepareStrategy, or the
// podgroup/tas node template: zone-<i/100>, rack-<i/nodesPerRack>).
enum class NodeLabels { kNone, kZone1, kMoonZones, kZonesAndRacks };
// Upstream pod templates.
enum class PodTemplate {
  kDefault,                     // pod-default.yaml
  kNodeAffinity,                // pod-with-node-affinity.yaml
  kPodAffinity,                 // pod-with-pod-affinity.yaml
  kPodAntiAffinity,             // pod-with-pod-anti-affinity.yaml
  kTopologySpreading,           // pod-with-topology-spreading.yaml
  kPreferredTopologySpreading,  // pod-with-preferred-topology-spreading.yaml
  kHighPriorityLargeCpu,        // pod-high-priority-large-cpu.yaml (never fits)
  kLowPriority,                 // pod-low-priority.yaml (900m, grace period 0)
  kHighPriority,                // pod-high-priority.yaml (3 CPU, priority 10)
  kGangPod,                     // podgroup/*/gang-pod.yaml (100m / 100Mi, in a PodGroup)
};

struct CaseShape {
  NodeLabels labels = NodeLabels::kNone;
  PodTemplate init = PodTemplate::kDefault;
  PodTemplate measure = PodTemplate::kDefault;
  std::string init_namespace = "default";
  std::string measure_namespace = "default";
  // Unschedulable: pods of this template interleaved with the measured ones
  // (upstream churns them in at 5/s while the measured pods are created).
  int unschedulable_every = 0;
  // PreemptionAsync: a high-priority preemptor (namespace "churn") before
  // every `preemptor_every`-th measured pod.
  int preemptor_every = 0;
  // GangScheduling / TopologyAwareScheduling: scheduling.k8s.io/v1beta1
  // PodGroups gang-<i> (gang policy, minCount = pods per group), optionally
  // confined to one topology.kubernetes.io/rack.
  bool gang = false;
  bool rack_topology = false;
  // SchedulingWithResourceClaimTemplate and its variants (bench/dra/workload.h).
  enum class Dra { kNone, kOneGpu, kMatchAttribute, kFirstAvailable, kPartitionable };
  Dra dra = Dra::kNone;
  // SteadyStateClusterResourceClaimTemplate: `init_pods` allocated claims of
  // no pod, then rounds of kSteadyStatePods pods that are scheduled and
  // finish (their devices are freed) before the next round is created.
  bool steady_state = false;
};

// Pods in flight per round of the steady-state workload (upstream's count: 10).
constexpr int kSteadyStatePods = 10;

CaseShape ShapeOf(std::string_view name) {
  CaseShape s;
  if (name == "SchedulingNodeAffinity") {
    s.labels = NodeLabels::kZone1;
    s.init = s.measure = PodTemplate::kNodeAffinity;
  } else if (name == "SchedulingPodAffinity") {
    s.labels = NodeLabels::kZone1;
    s.init = s.measure = PodTemplate::kPodAffinity;
    s.init_namespace = "sched-0";
    s.measure_namespace = "sched-1";
  } else if (name == "SchedulingPodAntiAffinity") {
    s.init = s.measure = PodTemplate::kPodAntiAffinity;
    s.init_namespace = "sched-0";
    s.measure_namespace = "sched-1";
  } else if (name == "TopologySpreading") {
    s.labels = NodeLabels::kMoonZones;
    s.measure = PodTemplate::kTopologySpreading;
  } else if (name == "PreferredTopologySpreading") {
    s.labels = NodeLabels::kMoonZones;
    s.measure = PodTemplate::kPreferredTopologySpreading;
  } else if (name == "Unschedulable") {
    s.unschedulable_every = 100;
  } else if (name == "PreemptionAsync") {
    s.init = PodTemplate::kLowPriority;
    s.preemptor_every = 100;
  } else if (name == "GangScheduling") {
    s.measure = PodTemplate::kGangPod;
    s.measure_namespace = "gang-ns-0";
    s.gang = true;
  } else if (name == "TopologyAwareScheduling") {
    s.labels = NodeLabels::kZonesAndRacks;
    s.measure = PodTemplate::kGangPod;
    s.measure_namespace = "tas-0";
    s.gang = true;
    s.rack_topology = true;
  } else if (name == "SchedulingWithResourceClaimTemplate") {
    s.dra = CaseShape::Dra::kOneGpu;
  } else if (name == "SchedulingWithResourceClaimTemplateMatchAttribute") {
    s.dra = CaseShape::Dra::kMatchAttribute;
  } else if (name == "SchedulingWithResourceClaimTemplateFirstAvailable") {
    s.dra = CaseShape::Dra::kFirstAvailable;
  } else if (name == "SchedulingWithResourceClaimTemplatePartitionable") {
    s.dra = CaseShape::Dra::kPartitionable;
  } else if (name == "SteadyStateClusterResourceClaimTemplate") {
    s.dra = CaseShape::Dra::kOneGpu;
    s.steady_state = true;
  }
  return s;
}

// `count` claims in namespace "init", allocated node by node (claim i takes
// GPU i % gpus_per_node of node i / gpus_per_node) and reserved for nobody,
// as upstream's allocResourceClaims leaves them.
std::string InitClaimsYaml(int count, int gpus_per_node) {
  std::string y;
  for (int i = 0; i < count; ++i) {
    gantry::StrAppend(&y,
                      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: "
                      "claim-",
                      i, ", namespace: init, uid: init-claim-", i,
                      "}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: "
                      "gpu.example.com}}]}}\nstatus: {allocation: {devices: {results: [{request: "
                      "gpu, driver: gpu.example.com, pool: node-",
                      i / gpus_per_node, ", device: gpu-", i % gpus_per_node, "}]}}}\n---\n");
  }
  return y;
}

// One round of the steady-state workload: the claim template (the simulator
// acts as the ResourceClaim controller for the pods it is given with it) and
// kSteadyStatePods pods that finish one virtual second after binding (the
// caller names them per round).
std::string SteadyStateRoundYaml(const std::string& template_yaml) {
  std::string y = template_yaml;
  for (int p = 0; p < kSteadyStatePods; ++p) {
    gantry::StrAppend(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: steady-", p,
                      ", namespace: default, uid: steady-", p, ", annotations: {",
                      sim::kRunDurationAnnotation,
                      ": \"1\"}}\nspec: {schedulerName: gantry-scheduler, containers: [{name: c, "
                      "resources: {requests: {cpu: 100m}}}], resourceClaims: [{name: gpu, "
                      "resourceClaimTemplateName: gpu}]}\n---\n");
  }
  return y;
}

// Schedules `pods` steady-state pods in rounds of kSteadyStatePods (each
// round created, scheduled and finished before the next) on a scheduler
// that already holds the cluster. As for the other workloads, time and CPU
// are the scheduling loops' (scheduling, bindings, completions), summed over
// the rounds; a pod's sample time is its loop's offset plus its time in the
// loop. Feeding each round and the simulator's end-of-run report are
// harness work, returned in *harness_seconds.
absl::StatusOr<sim::SimulationResult> RunSteadyStateRounds(
    const std::string& workload, const std::string& template_yaml, int pods,
    scheduler::Scheduler& scheduler, sim::InMemoryWriter& writer, FakeClock& clock, uint64_t seed,
    double* harness_seconds) {
  api::ObjectSet prototype;
  sim::LoadStats prototype_stats;
  if (absl::Status st = sim::LoadClusterText(workload, SteadyStateRoundYaml(template_yaml),
                                             /*is_json=*/false, &prototype, &prototype_stats);
      !st.ok()) {
    return st;
  }
  const auto start = std::chrono::steady_clock::now();
  sim::SimulationResult result;
  int64_t loop_offset_micros = 0;
  for (int first = 0; first < pods; first += kSteadyStatePods) {
    api::ObjectSet round = prototype;
    for (size_t k = 0; k < round.pods.size(); ++k) {
      const std::string name = gantry::StrCat("steady-", first + static_cast<int>(k));
      round.pods[k].meta.name = name;
      round.pods[k].meta.uid = name;
    }
    sim::SimulationResult r = sim::RunSimulation(std::move(round), scheduler, writer, clock, seed);
    result.scheduled += r.scheduled;
    result.unschedulable += r.unschedulable;
    result.attempts += r.attempts;
    result.completed += r.completed;
    result.loop_seconds += r.loop_seconds;
    result.cpu_seconds += r.cpu_seconds;
    result.attempt_micros.insert(result.attempt_micros.end(), r.attempt_micros.begin(),
                                 r.attempt_micros.end());
    for (size_t i = 0; i < r.scheduled_keys.size() && i < r.scheduled_wall_micros.size(); ++i) {
      result.scheduled_keys.push_back(std::move(r.scheduled_keys[i]));
      result.scheduled_wall_micros.push_back(loop_offset_micros + r.scheduled_wall_micros[i]);
    }
    loop_offset_micros += static_cast<int64_t>(r.loop_seconds * 1e6);
    for (auto& [claim, devices] : r.allocations) result.allocations[claim] = std::move(devices);
  }
  *harness_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
      result.loop_seconds;
  return result;
}

void AppendNode(std::string* out, int i, NodeLabels labels, int nodes_per_rack) {
  const std::string name = gantry::StrCat("scheduler-perf-", i);
  gantry::StrAppend(out, R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                    R"(","labels":{"kubernetes.io/hostname":")", name, "\"");
  if (labels == NodeLabels::kZone1) out->append(R"(,"topology.kubernetes.io/zone":"zone1")");
  if (labels == NodeLabels::kMoonZones) {
    gantry::StrAppend(out, R"(,"topology.kubernetes.io/zone":"moon-)", i % 3 + 1, "\"");
  }
  if (labels == NodeLabels::kZonesAndRacks) {
    gantry::StrAppend(out, R"(,"topology.kubernetes.io/zone":"zone-)", i / 100,
                      R"(","topology.kubernetes.io/rack":"rack-)", i / std::max(1, nodes_per_rack),
                      "\"");
  }
  out->append(R"(}},"spec":{},"status":{"capacity":{"pods":"110","cpu":"4","memory":"32Gi"},)"
              R"("allocatable":{"pods":"110","cpu":"4","memory":"32Gi"},)"
              R"("conditions":[{"status":"True","type":"Ready"}],"phase":"Running"}})");
}

void AppendPod(std::string* out, std::string_view name, std::string_view ns, PodTemplate t,
               std::string_view node_name, std::string_view scheduler_name,
               std::string_view group = "") {
  std::string labels, affinity, spread, priority, grace, scheduling_group;
  std::string cpu = "100m", memory = "500Mi";
  bool limits_and_port = true;
  switch (t) {
    case PodTemplate::kDefault:
      break;
    case PodTemplate::kNodeAffinity:
      affinity =
          R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)"
          R"([{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"In","values":["zone1","zone2"]}]}]}}},)";
      break;
    case PodTemplate::kPodAffinity:
      labels = R"("labels":{"color":"blue"},)";
      affinity =
          R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":)"
          R"({"matchLabels":{"color":"blue"}},"topologyKey":"topology.kubernetes.io/zone","namespaces":["sched-1","sched-0"]}]}},)";
      break;
    case PodTemplate::kPodAntiAffinity:
      labels = R"("labels":{"color":"green"},)";
      affinity =
          R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":)"
          R"({"matchLabels":{"color":"green"}},"topologyKey":"kubernetes.io/hostname","namespaces":["sched-1","sched-0"]}]}},)";
      break;
    case PodTemplate::kTopologySpreading:
    case PodTemplate::kPreferredTopologySpreading:
      labels = R"("labels":{"color":"blue"},)";
      spread = gantry::StrCat(
          R"("topologySpreadConstraints":[{"maxSkew":5,"topologyKey":"topology.kubernetes.io/zone",)",
          R"("whenUnsatisfiable":")",
          t == PodTemplate::kTopologySpreading ? "DoNotSchedule" : "ScheduleAnyway",
          R"(","labelSelector":{"matchLabels":{"color":"blue"}}}],)");
      break;
    case PodTemplate::kHighPriorityLargeCpu:
      priority = R"("priority":10,)";
      cpu = "9";
      break;
    case PodTemplate::kLowPriority:
      grace = R"("terminationGracePeriodSeconds":0,)";
      cpu = "900m";
      break;
    case PodTemplate::kHighPriority:
      priority = R"("priority":10,)";
      cpu = "3";
      break;
    case PodTemplate::kGangPod:
      memory = "100Mi";
      limits_and_port = false;
      scheduling_group = gantry::StrCat(R"("schedulingGroup":{"podGroupName":")", group, R"("},)");
      break;
  }
  // `labels` ends with a comma when set; metadata closes after name/namespace.
  gantry::StrAppend(out, R"({"apiVersion":"v1","kind":"Pod","metadata":{)", labels, R"("name":")",
                    name, R"(","namespace":")", ns, R"("},"spec":{"schedulerName":")",
                    scheduler_name, R"(",)", priority, grace, scheduling_group, affinity, spread);
  if (!node_name.empty()) gantry::StrAppend(out, R"("nodeName":")", node_name, R"(",)");
  const std::string requests =
      gantry::StrCat(R"({"cpu":")", cpu, R"(","memory":")", memory, R"("})");
  out->append(R"("containers":[{"name":"pause","image":"registry.k8s.io/pause:3.10",)");
  if (limits_and_port) {
    gantry::StrAppend(out, R"("ports":[{"containerPort":80}],"resources":{"limits":)", requests,
                      ",");
  } else {
    out->append(R"("resources":{)");
  }
  gantry::StrAppend(out, R"("requests":)", requests, R"(}}]},"status":{"phase":")",
                    node_name.empty() ? "Pending" : "Running", R"("}})");
}

// podgroup/{gangscheduling,tas}/templates/podgroup.yaml.
void AppendPodGroup(std::string* out, std::string_view name, std::string_view ns, int min_count,
                    bool rack_topology) {
  gantry::StrAppend(
      out, R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":")",
      name, R"(","namespace":")", ns, R"("},"spec":{"schedulingPolicy":{"gang":{"minCount":)",
      min_count, "}}");
  if (rack_topology)
    out->append(R"(,"schedulingConstraints":{"topology":[{"key":"topology.kubernetes.io/rack"}]})");
  out->append("}}");
}

// Namespace of churn pods (PreemptionAsync's preemptors): never measured.
constexpr std::string_view kChurnNamespace = "churn";

int64_t PeakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

nlohmann::json DataItem(nlohmann::json data, std::string_view unit, std::string_view metric,
                        std::string_view name) {
  return {
      {"data", std::move(data)}, {"unit", unit}, {"labels", {{"Metric", metric}, {"Name", name}}}};
}

}  // namespace

const std::vector<WorkloadCase>& WorkloadCases() {
  static const auto* cases = new std::vector<WorkloadCase>{
      {"SchedulingBasic",
       {"Basic"},
       680,
       {{"5000Nodes_10000Pods", 5000, 1000, 10000},
        {"5000Nodes_50000Pods", 5000, 5000, 50000},
        {"500Nodes", 500, 500, 1000}}},
      {"SchedulingNodeAffinity",
       {"NodeAffinity"},
       220,
       {{"5000Nodes_10000Pods", 5000, 5000, 10000}, {"500Nodes", 500, 500, 1000}}},
      {"TopologySpreading",
       {},
       460,
       {{"5000Nodes_5000Pods", 5000, 5000, 5000}, {"500Nodes", 500, 1000, 1000}}},
      {"PreferredTopologySpreading",
       {},
       340,
       {{"5000Nodes_5000Pods", 5000, 5000, 5000}, {"500Nodes", 500, 1000, 1000}}},
      {"SchedulingPodAntiAffinity",
       {"PodAntiAffinity"},
       60,
       {{"5000Nodes_2000Pods", 5000, 1000, 2000}, {"500Nodes", 500, 100, 400}}},
      {"SchedulingPodAffinity",
       {"PodAffinity"},
       35,
       {{"5000Nodes_5000Pods", 5000, 5000, 5000}, {"500Nodes", 500, 500, 1000}}},
      {"Unschedulable",
       {},
       590,
       {{"5kNodes/100Init/10kPods", 5000, 100, 10000}, {"500Nodes/10Init/1kPods", 500, 10, 1000}}},
      // 4 low-priority pods (3.6 CPU) on every node; preemptors need 3 CPU.
      {"PreemptionAsync",
       {"Preemption"},
       570,
       {{"5000Nodes", 5000, 20000, 5000}, {"500Nodes", 500, 2000, 500}}},
      // No published floors for the PodGroup workloads (upstream has no
      // thresholds yet); docs/benchmarks.md compares with PR #140611's numbers.
      {"GangScheduling",
       {"Gang"},
       0,
       {{"5000Nodes_1000Gangs_3000Pods", 5000, 0, 3000, 3},
        {"5000Nodes_3000Gangs_9000Pods", 5000, 0, 9000, 3},
        {"5000Nodes_3Gangs_3000Pods_1000PerGroup", 5000, 0, 3000, 1000},
        {"5000Nodes_10Gangs_50000Pods_5000PerGroup", 5000, 0, 50000, 5000},
        {"100Nodes_10Gangs", 100, 0, 30, 3}}},
      {"TopologyAwareScheduling",
       {"TAS"},
       0,
       {{"5000Nodes_750Gangs_3000Pods", 5000, 0, 3000, 4, 100},
        {"5000Nodes_1500Gangs_6000Pods", 5000, 0, 6000, 4, 100},
        {"5000Nodes_2250Gangs_9000Pods", 5000, 0, 9000, 4, 100},
        {"5000Nodes_3Gangs_3000Pods_1000PerGroup", 5000, 0, 3000, 1000, 100},
        {"100Nodes_10Gangs", 100, 0, 30, 3, 10}}},
      // DRA: 500 nodes with 10 devices each (upstream's maxClaimsPerNode 10),
      // one claim per pod from a ResourceClaimTemplate.
      {"SchedulingWithResourceClaimTemplate",
       {"ResourceClaimTemplate"},
       40,
       {{"5000pods_500nodes", 500, 0, 5000}, {"2000pods_100nodes", 100, 0, 1000}}},
      // Gantry's variants of the same shape (10 claims per node, no
      // published floors): GPU + NIC on one PCIe root (matchAttribute), a
      // firstAvailable request whose first subrequest never matches, and
      // halves of partitionable GPUs (5 GPUs x 2 halves per node).
      {"SchedulingWithResourceClaimTemplateMatchAttribute",
       {"MatchAttribute"},
       0,
       {{"5000pods_500nodes", 500, 0, 5000}, {"2000pods_100nodes", 100, 0, 1000}}},
      {"SchedulingWithResourceClaimTemplateFirstAvailable",
       {"FirstAvailable"},
       0,
       {{"5000pods_500nodes", 500, 0, 5000}, {"2000pods_100nodes", 100, 0, 1000}}},
      {"SchedulingWithResourceClaimTemplatePartitionable",
       {"Partitionable"},
       0,
       {{"5000pods_500nodes", 500, 0, 5000}, {"2000pods_100nodes", 100, 0, 1000}}},
      // Upstream's sizes: 500 nodes x 10 devices with 0 / 2500 / 4990 claims
      // allocated up front (init_pods holds that count), ten pods in flight.
      // Upstream runs each for 10 s of wall clock; offline a fixed number of
      // measured pods (500 rounds of ten) keeps runs comparable. Floors:
      // empty 64, half 70, full 60 (the default size's is kept here).
      {"SteadyStateClusterResourceClaimTemplate",
       {"SteadyStateDRA"},
       64,
       {{"empty_500nodes", 500, 0, 5000},
        {"half_500nodes", 500, 2500, 5000},
        {"full_500nodes", 500, 4990, 5000},
        {"full_10nodes", 10, 90, 100},
        {"fast", 1, 0, 100}}},
  };
  return *cases;
}

std::vector<double> ThroughputSamples(const std::vector<int64_t>& at) {
  std::vector<double> samples;
  if (at.empty()) return samples;
  const int64_t start = at.front();
  const int64_t end = at.back();
  constexpr int64_t kWindow = 1'000'000;
  size_t i = 0;
  int64_t window_start = start;
  while (window_start + kWindow <= end) {
    size_t count = 0;
    while (i < at.size() && at[i] < window_start + kWindow) {
      ++count;
      ++i;
    }
    samples.push_back(static_cast<double>(count));
    window_start += kWindow;
  }
  const size_t rest = at.size() - i;
  const int64_t span = end - window_start;
  if (rest > 0 && (samples.empty() || span >= 100'000)) {
    // A short run (or tail): its rate over the time it covered (at least 1 ms).
    samples.push_back(static_cast<double>(rest) * 1e6 /
                      static_cast<double>(std::max<int64_t>(span, 1000)));
  }
  return samples;
}

ThroughputSummary Summarize(std::vector<double> samples) {
  ThroughputSummary s;
  if (samples.empty()) return s;
  double total = 0;
  for (double v : samples) total += v;
  s.average = total / static_cast<double>(samples.size());
  std::sort(samples.begin(), samples.end());
  auto perc = [&](double p) {
    size_t rank = static_cast<size_t>(std::ceil(static_cast<double>(samples.size()) * p / 100.0));
    return samples[std::max<size_t>(rank, 1) - 1];
  };
  s.perc50 = perc(50);
  s.perc90 = perc(90);
  s.perc95 = perc(95);
  s.perc99 = perc(99);
  return s;
}

absl::StatusOr<std::string> WorkloadClusterJson(const WorkloadCase& c, const WorkloadSize& size,
                                                std::string_view scheduler_name) {
  const CaseShape shape = ShapeOf(c.name);
  if (shape.dra != CaseShape::Dra::kNone)
    return absl::InvalidArgumentError(
        "the DRA workload is generated as YAML (bench/dra/workload.h)");
  std::string out = R"({"apiVersion":"v1","kind":"List","items":[)";
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  std::vector<std::string> namespaces = {shape.init_namespace};
  if (shape.measure_namespace != shape.init_namespace)
    namespaces.push_back(shape.measure_namespace);
  if (shape.preemptor_every > 0) namespaces.push_back(std::string(kChurnNamespace));
  for (const std::string& ns : namespaces) {
    if (ns == "default") continue;
    sep();
    gantry::StrAppend(&out, R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")", ns,
                      R"("}})");
  }
  for (int i = 0; i < size.nodes; ++i) {
    sep();
    AppendNode(&out, i, shape.labels, size.nodes_per_rack);
  }
  const int per_group = std::max(1, size.pods_per_group);
  if (shape.gang) {
    for (int g = 0; g * per_group < size.measure_pods; ++g) {
      sep();
      AppendPodGroup(&out, gantry::StrCat("gang-", g), shape.measure_namespace, per_group,
                     shape.rack_topology);
    }
  }
  for (int i = 0; i < size.init_pods; ++i) {
    sep();
    AppendPod(&out, gantry::StrCat("init-pod-", i), shape.init_namespace, shape.init,
              gantry::StrCat("scheduler-perf-", i % std::max(1, size.nodes)), scheduler_name);
  }
  for (int i = 0; i < size.measure_pods; ++i) {
    if (shape.unschedulable_every > 0 && i % shape.unschedulable_every == 0) {
      sep();
      AppendPod(&out, gantry::StrCat("large-cpu-", i / shape.unschedulable_every),
                shape.measure_namespace, PodTemplate::kHighPriorityLargeCpu, "", scheduler_name);
    }
    if (shape.preemptor_every > 0 && i % shape.preemptor_every == 0) {
      sep();
      AppendPod(&out, gantry::StrCat("preemptor-", i / shape.preemptor_every), kChurnNamespace,
                PodTemplate::kHighPriority, "", scheduler_name);
    }
    sep();
    AppendPod(&out, gantry::StrCat("pod-", i), shape.measure_namespace, shape.measure, "",
              scheduler_name, shape.gang ? gantry::StrCat("gang-", i / per_group) : std::string());
  }
  out += "]}\n";
  return out;
}

absl::StatusOr<nlohmann::json> RunWorkload(const WorkloadOptions& opts) {
  // Resolve "Case" or "Case/Size" (aliases allowed).
  const std::string_view full = opts.name;
  const size_t slash = full.find('/');
  const std::string_view case_name = full.substr(0, slash);
  const std::string size_name =
      slash == std::string_view::npos ? "" : std::string(full.substr(slash + 1));
  const WorkloadCase* wc = nullptr;
  for (const WorkloadCase& c : WorkloadCases()) {
    if (c.name == case_name ||
        std::find(c.aliases.begin(), c.aliases.end(), case_name) != c.aliases.end())
      wc = &c;
  }
  if (wc == nullptr) {
    std::string known;
    for (const WorkloadCase& c : WorkloadCases()) known += (known.empty() ? "" : ", ") + c.name;
    return absl::NotFoundError(
        gantry::StrCat("unknown workload \"", case_name, "\" (known: ", known, ")"));
  }
  const WorkloadSize* size = opts.quick ? &wc->sizes.back() : &wc->sizes.front();
  if (!size_name.empty()) {
    size = nullptr;
    for (const WorkloadSize& s : wc->sizes) {
      if (s.name == size_name) size = &s;
    }
    if (size == nullptr) {
      std::string known;
      for (const WorkloadSize& s : wc->sizes) known += (known.empty() ? "" : ", ") + s.name;
      return absl::NotFoundError(gantry::StrCat("workload ", wc->name, " has no size \"", size_name,
                                                "\" (known: ", known, ")"));
    }
  }

  framework::Registry registry;
  if (absl::Status st = plugins::RegisterBuiltinPlugins(registry); !st.ok()) return st;
  absl::StatusOr<config::Configuration> cfg =
      opts.config_path.empty() ? config::DefaultConfig(registry)
                               : config::LoadConfigFile(opts.config_path, registry);
  if (!cfg.ok()) return cfg.status();

  api::ObjectSet objects;
  sim::LoadStats stats;
  const CaseShape shape = ShapeOf(wc->name);
  dra::WorkloadOptions d;  // DRA workloads' shape
  if (shape.dra != CaseShape::Dra::kNone) {
    d.nodes = size->nodes;
    d.gpus_per_node = shape.dra == CaseShape::Dra::kPartitionable ? 5 : 10;
    d.pods = shape.steady_state ? 0 : size->measure_pods;
    d.match_nic = shape.dra == CaseShape::Dra::kMatchAttribute;
    d.first_available = shape.dra == CaseShape::Dra::kFirstAvailable;
    d.partitionable = shape.dra == CaseShape::Dra::kPartitionable;
    std::string cluster_yaml = dra::WorkloadYaml(d);
    if (shape.steady_state) {
      if (size->init_pods > size->nodes * d.gpus_per_node)
        return absl::InvalidArgumentError(gantry::StrCat(
            wc->name, "/", size->name, ": ", size->init_pods, " claims for ",
            size->nodes * d.gpus_per_node, " devices"));
      cluster_yaml += "apiVersion: v1\nkind: Namespace\nmetadata: {name: init}\n---\n";
      cluster_yaml += InitClaimsYaml(size->init_pods, d.gpus_per_node);
    }
    if (absl::Status st = sim::LoadClusterText(wc->name, cluster_yaml, /*is_json=*/false,
                                               &objects, &stats);
        !st.ok()) {
      return st;
    }
  } else {
    absl::StatusOr<std::string> text = WorkloadClusterJson(
        *wc, *size,
        cfg->profiles.empty() ? "gantry-scheduler" : cfg->profiles.front().scheduler_name);
    if (!text.ok()) return text.status();
    if (absl::Status st = sim::LoadClusterText(wc->name, *text, /*is_json=*/true, &objects, &stats);
        !st.ok()) {
      return st;
    }
  }

  FakeClock clock(1'700'000'000'000'000);
  state::ClusterState cluster(clock);
  sim::InMemoryWriter writer;
  absl::StatusOr<scheduler::SchedulerBundle> bundle = scheduler::BuildScheduler(
      *cfg, registry, cluster, writer, clock, opts.seed, /*binding_workers=*/0);
  if (!bundle.ok()) return bundle.status();
  bundle->scheduler->SetNodeResultReuse(opts.node_result_reuse);
  sim::SimulationResult result;
  double harness_seconds = 0;  // steady state: feeding rounds and reports
  if (shape.steady_state) {
    // The cluster first (nodes, slices, classes, allocated claims), then the rounds.
    sim::RunSimulation(std::move(objects), *bundle->scheduler, writer, clock, opts.seed);
    absl::StatusOr<sim::SimulationResult> rounds =
        RunSteadyStateRounds(wc->name, dra::ClaimTemplateYaml(d), size->measure_pods,
                             *bundle->scheduler, writer, clock, opts.seed, &harness_seconds);
    if (!rounds.ok()) return rounds.status();
    result = std::move(*rounds);
  } else {
    result = sim::RunSimulation(std::move(objects), *bundle->scheduler, writer, clock, opts.seed);
  }

  const std::string label = gantry::StrCat(wc->name, "/", size->name);
  // Only the measured namespace counts (churn pods are load).
  const std::string measured_prefix = gantry::StrCat(shape.measure_namespace, "/");
  std::vector<int64_t> measured_at;
  measured_at.reserve(result.scheduled_wall_micros.size());
  for (size_t i = 0; i < result.scheduled_wall_micros.size() && i < result.scheduled_keys.size();
       ++i) {
    if (result.scheduled_keys[i].starts_with(measured_prefix))
      measured_at.push_back(result.scheduled_wall_micros[i]);
  }
  const auto measured = static_cast<int64_t>(measured_at.size());
  const ThroughputSummary t = Summarize(ThroughputSamples(measured_at));
  const double pods_per_second =
      result.loop_seconds > 0 ? static_cast<double>(measured) / result.loop_seconds : 0;
  const double cpu_per_1000 =
      measured > 0 ? 1000.0 * result.cpu_seconds / static_cast<double>(measured) : 0;
  const double peak_rss_mib = static_cast<double>(PeakRssKiB()) / 1024.0;
  std::vector<int64_t> lat = result.attempt_micros;
  std::sort(lat.begin(), lat.end());
  auto lat_ms = [&](double p) -> double {
    if (lat.empty()) return 0;
    return static_cast<double>(lat[static_cast<size_t>(p * static_cast<double>(lat.size() - 1))]) /
           1000.0;
  };
  double lat_avg = 0;
  for (int64_t v : lat) lat_avg += static_cast<double>(v) / 1000.0;
  if (!lat.empty()) lat_avg /= static_cast<double>(lat.size());

  nlohmann::json throughput = {{"Average", t.average},
                               {"Perc50", t.perc50},
                               {"Perc90", t.perc90},
                               {"Perc95", t.perc95},
                               {"Perc99", t.perc99}};
  nlohmann::json out;
  out["workload"] = label;
  out["nodes"] = size->nodes;
  out["init_pods"] = shape.steady_state ? 0 : size->init_pods;
  if (shape.steady_state) {
    out["init_claims"] = size->init_pods;
    out["pods_in_flight"] = kSteadyStatePods;
    out["completed"] = result.completed;
    out["harness_seconds"] = harness_seconds;
  }
  out["measure_pods"] = size->measure_pods;
  out["percentage_of_nodes_to_score"] = cfg->percentage_of_nodes_to_score;
  out["scheduled"] = measured;
  out["other_scheduled"] = result.scheduled - measured;  // churn pods (preemptors)
  out["unschedulable"] = result.unschedulable;
  out["evictions"] = result.evictions.size();
  if (shape.dra != CaseShape::Dra::kNone) {
    int64_t devices = 0;
    for (const auto& [claim, allocated] : result.allocations)
      devices += static_cast<int64_t>(allocated.size());
    out["claims_allocated"] = result.allocations.size();
    out["devices_allocated"] = devices;
  }
  if (shape.gang) {
    int64_t groups_scheduled = 0;
    int64_t groups_in_domain = 0;  // placed inside one topology domain
    for (const auto& [key, g] : result.podgroups) {
      groups_scheduled += g.scheduled ? 1 : 0;
      groups_in_domain += g.scheduled && !g.domain.empty() ? 1 : 0;
    }
    out["podgroups"] = result.podgroups.size();
    out["podgroups_scheduled"] = groups_scheduled;
    out["podgroups_in_one_domain"] = groups_in_domain;
  }
  out["attempts"] = result.attempts;
  out["loop_seconds"] = result.loop_seconds;
  out["pods_per_second"] = pods_per_second;
  out["throughput"] = throughput;
  out["cpu_seconds"] = result.cpu_seconds;
  out["cpu_seconds_per_1000_pods"] = cpu_per_1000;
  out["peak_rss_mib"] = peak_rss_mib;
  out["upstream_threshold"] = wc->upstream_threshold;
  out["attempt_latency_ms"] = {{"Average", lat_avg},
                               {"Perc50", lat_ms(0.5)},
                               {"Perc90", lat_ms(0.9)},
                               {"Perc99", lat_ms(0.99)}};
  out["version"] = "v1";
  out["dataItems"] = nlohmann::json::array(
      {DataItem(throughput, "pods/s", "SchedulingThroughput", label),
       DataItem(out["attempt_latency_ms"], "ms", "scheduler_scheduling_attempt_duration_seconds",
                label),
       DataItem({{"Value", cpu_per_1000}}, "s", "CPUSecondsPer1000Pods", label),
       DataItem({{"Value", peak_rss_mib}}, "MiB", "PeakRSS", label)});
  return out;
}

}  // namespace gantry::bench
