// End-to-end offline: slices + classes + a claim template + pods through
// sim::RunSimulation with the default configuration (DynamicResources on).
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "bench/dra/workload.h"
#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry {
namespace {

sim::SimulationResult RunYaml(const std::string& yaml) {
  framework::Registry registry;
  EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  auto cfg = config::DefaultConfig(registry);
  EXPECT_TRUE(cfg.ok()) << cfg.status();
  api::ObjectSet objects;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText("workload", yaml, false, &objects, &stats);
  EXPECT_TRUE(st.ok()) << st;
  FakeClock clock(1'700'000'000'000'000);
  state::ClusterState cluster(clock);
  sim::InMemoryWriter writer;
  auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return sim::RunSimulation(objects, *bundle->scheduler, writer, clock, 7);
}

sim::SimulationResult RunWorkload(const bench::dra::WorkloadOptions& o) {
  return RunYaml(bench::dra::WorkloadYaml(o));
}

TEST(DraSimulation, AllocatesOneGpuPerPodAndNeverTwice) {
  bench::dra::WorkloadOptions o{.nodes = 3, .gpus_per_node = 4, .pods = 14};
  sim::SimulationResult r = RunWorkload(o);
  EXPECT_EQ(r.scheduled, 12);
  EXPECT_EQ(r.unschedulable, 2);
  ASSERT_EQ(r.allocations.size(), 12u);
  std::set<std::string> devices;
  for (const auto& [claim, devs] : r.allocations) {
    ASSERT_EQ(devs.size(), 1u);
    EXPECT_EQ(devs[0].request, "gpu");
    EXPECT_EQ(devs[0].driver, "gpu.example.com");
    EXPECT_TRUE(devices.insert(devs[0].pool + "/" + devs[0].device).second)
        << "device allocated twice";
    // Claim names follow the ResourceClaim controller: <pod>-<claim>-<5 chars>.
    EXPECT_EQ(claim.rfind("default/pod-", 0), 0u);
    EXPECT_EQ(claim.size() - claim.rfind("-gpu-") - 5, 5u) << claim;
  }
  // The pool of each allocation is the node the pod landed on.
  for (const auto& [pod, node] : r.placements) {
    bool found = false;
    for (const auto& [claim, devs] : r.allocations) {
      if (claim.rfind(pod + "-gpu-", 0) == 0) {
        found = true;
        EXPECT_EQ(devs[0].pool, node);
      }
    }
    EXPECT_TRUE(found) << pod;
  }
  for (const auto& [pod, msg] : r.failures) {
    EXPECT_NE(msg.find("0/3 nodes are available"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1 device wanted, 0 free match"), std::string::npos) << msg;
  }
  nlohmann::json j = sim::ResultJson(r);
  EXPECT_EQ(j["allocations"].size(), 12u);
}

TEST(DraSimulation, GpuAndNicOnSamePcieRoot) {
  bench::dra::WorkloadOptions o{.nodes = 2, .gpus_per_node = 4, .pods = 8, .match_nic = true};
  sim::SimulationResult r = RunWorkload(o);
  EXPECT_EQ(r.scheduled, 8);
  for (const auto& [claim, devs] : r.allocations) {
    ASSERT_EQ(devs.size(), 2u);
    // gpu-i and nic-j share pcieRoot pci<i/2>.
    EXPECT_EQ((devs[0].device.back() - '0') / 2, (devs[1].device.back() - '0') / 2) << claim;
  }
}

TEST(DraSimulation, BindingConditionsAreReportedBySimulatedDrivers) {
  // A device with binding conditions: the simulated driver sets them after
  // the slice's delay (PreBind waits in virtual time), or fails the first
  // binding of each device (the pod is retried and then binds).
  constexpr std::string_view kObjects = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  schedulerName: gantry-scheduler
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: main, resources: {claims: [{name: gpu}]}}]
---
)";
  auto slice = [](const std::string& annotations) {
    return "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: n0-gpus\n  "
           "annotations: {" +
           annotations +
           "}\nspec:\n  driver: gpu.example.com\n  pool: {name: n0, generation: 1, "
           "resourceSliceCount: 1}\n"
           "  nodeName: n0\n  devices:\n  - {name: gpu-0, bindsToNode: true, bindingConditions: "
           "[Attached], "
           "bindingFailureConditions: [AttachFailed]}\n";
  };
  struct Case {
    const char* name;
    std::string annotations;
    int64_t min_attempts;
    double min_virtual_seconds;
  } cases[] = {
      {"ready after the delay", "gantry.dev/binding-delay-seconds: \"30\"", 1, 30},
      {"ready at once", "", 1, 0},
      {"first binding fails", "gantry.dev/binding-outcome: failure", 2, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    sim::SimulationResult r = RunYaml(std::string(kObjects) + slice(c.annotations));
    EXPECT_EQ(r.scheduled, 1) << (r.failures.empty() ? "" : r.failures.begin()->second);
    EXPECT_GE(r.attempts, c.min_attempts);
    EXPECT_GE(r.virtual_seconds, c.min_virtual_seconds);
    ASSERT_EQ(r.allocations.size(), 1u);
    EXPECT_EQ(r.allocations.begin()->second[0].device, "gpu-0");
  }
}

TEST(DraSimulation, DeterministicClaimNames) {
  bench::dra::WorkloadOptions o{.nodes = 1, .gpus_per_node = 2, .pods = 2};
  EXPECT_EQ(RunWorkload(o).allocations.begin()->first, RunWorkload(o).allocations.begin()->first);
}

// ---- Extended resources backed by DRA ------------------------------------------

constexpr std::string_view kGpuClassServingExtendedResource = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
  extendedResourceName: example.com/gpu
---
)";

// A node with `gpus` DRA devices (a ResourceSlice, no device plugin), or
// with `plugin_gpus` example.com/gpu in its allocatable (a device plugin).
std::string GpuNode(const std::string& name, int gpus, int plugin_gpus = 0) {
  std::string y =
      "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
      "}\nstatus: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"" +
      (plugin_gpus > 0 ? ", example.com/gpu: \"" + std::to_string(plugin_gpus) + "\"" : "") +
      "}}\n---\n";
  if (gpus == 0) return y;
  y += "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + name +
       "-gpus}\nspec:\n  driver: gpu.example.com\n  pool: {name: " + name +
       ", generation: 1, resourceSliceCount: 1}\n  nodeName: " + name + "\n  devices:\n";
  for (int i = 0; i < gpus; ++i) y += "  - {name: gpu-" + std::to_string(i) + "}\n";
  return y + "---\n";
}

std::string GpuPod(const std::string& name, int gpus, const std::string& extra_meta = "",
                   const std::string& extra_spec = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default" +
         extra_meta + "}\nspec:\n  schedulerName: gantry-scheduler\n" + extra_spec +
         "  containers:\n  - name: main\n" +
         "    resources: {requests: {cpu: 100m, example.com/gpu: \"" + std::to_string(gpus) +
         "\"}}\n---\n";
}

TEST(DraSimulation, ExtendedResourcesAreServedThroughTheDeviceClassWhereNoDevicePluginIs) {
  // Two nodes publish GPUs only as DRA devices, one through a device plugin.
  // Seven pods ask for two example.com/gpu each: six fit. Those on the DRA
  // nodes get a claim created for them, with devices of their node; those
  // on the device-plugin node get none.
  std::string y = std::string(kGpuClassServingExtendedResource) + GpuNode("dra-0", 4) +
                  GpuNode("dra-1", 4) + GpuNode("plugin-0", 0, 4);
  for (int i = 0; i < 7; ++i) y += GpuPod("p" + std::to_string(i), 2);
  sim::SimulationResult r = RunYaml(y);
  EXPECT_EQ(r.scheduled, 6);
  EXPECT_EQ(r.unschedulable, 1);
  std::set<std::string> devices;
  int on_plugin = 0;
  for (const auto& [pod, node] : r.placements) {
    auto ext = r.extended_resource_claims.find(pod);
    if (node == "plugin-0") {
      ++on_plugin;
      EXPECT_EQ(ext, r.extended_resource_claims.end())
          << pod << " needs no claim on a device-plugin node";
      continue;
    }
    ASSERT_NE(ext, r.extended_resource_claims.end()) << pod;
    const std::string pod_name = pod.substr(pod.find('/') + 1);
    EXPECT_EQ(ext->second.resource_claim_name.rfind(pod_name + "-extended-resources-", 0), 0u)
        << ext->second.resource_claim_name;
    ASSERT_EQ(ext->second.request_mappings.size(), 1u);
    EXPECT_EQ(ext->second.request_mappings[0].container_name, "main");
    EXPECT_EQ(ext->second.request_mappings[0].resource_name, "example.com/gpu");
    EXPECT_EQ(ext->second.request_mappings[0].request_name, "container-0-request-1");
    const auto& devs = r.allocations["default/" + ext->second.resource_claim_name];
    ASSERT_EQ(devs.size(), 2u);
    for (const auto& d : devs) {
      EXPECT_EQ(d.request, "container-0-request-1");
      EXPECT_EQ(d.pool, node) << "devices of the pod's node";
      EXPECT_TRUE(devices.insert(d.pool + "/" + d.device).second) << "device allocated twice";
    }
  }
  EXPECT_EQ(on_plugin, 2);
  EXPECT_EQ(r.allocations.size(), 4u);
  for (const auto& [pod, msg] : r.failures) {
    EXPECT_NE(msg.find("0/3 nodes are available"), std::string::npos) << msg;
  }
}

TEST(DraSimulation, ExtendedResourceDevicesAreFreedWhenThePodFinishes) {
  // One node of 4 DRA GPUs, three pods of 4 GPUs that run 10 s each: each
  // finished pod's claim is released, so the next pod gets the devices.
  std::string y = std::string(kGpuClassServingExtendedResource) + GpuNode("n0", 4);
  for (int i = 0; i < 3; ++i) {
    y += GpuPod("p" + std::to_string(i), 4,
                ", annotations: {gantry.dev/run-duration-seconds: \"10\"}");
  }
  sim::SimulationResult r = RunYaml(y);
  EXPECT_EQ(r.scheduled, 3);
  EXPECT_EQ(r.completed, 3);
  EXPECT_EQ(r.extended_resource_claims.size(), 3u);
  EXPECT_GE(r.virtual_seconds, 20);
}

TEST(DraSimulation, PreemptionFreesTheDevicesOfExtendedResources) {
  // A running low-priority pod holds all 4 DRA GPUs through the claim an
  // earlier scheduler created for its extended resources (recorded in its
  // status); a high-priority pod asking for 2 preempts it and gets devices.
  std::string y = std::string(kGpuClassServingExtendedResource) + GpuNode("n0", 4) +
                  "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: "
                  "high}\nvalue: 1000\n---\n"
                  R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: low-extended-resources-bcdfg
  namespace: default
  uid: low-claim
  annotations: {resource.kubernetes.io/extended-resource-claim: "true"}
  ownerReferences: [{apiVersion: v1, kind: Pod, name: low, uid: low-uid, controller: true}]
spec:
  devices:
    requests: [{name: container-0-request-1, exactly: {deviceClassName: gpu.example.com, count: 4}}]
status:
  allocation:
    devices:
      results:
      - {request: container-0-request-1, driver: gpu.example.com, pool: n0, device: gpu-0}
      - {request: container-0-request-1, driver: gpu.example.com, pool: n0, device: gpu-1}
      - {request: container-0-request-1, driver: gpu.example.com, pool: n0, device: gpu-2}
      - {request: container-0-request-1, driver: gpu.example.com, pool: n0, device: gpu-3}
  reservedFor: [{resource: pods, name: low, uid: low-uid}]
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: default, uid: low-uid}
spec:
  schedulerName: gantry-scheduler
  nodeName: n0
  containers:
  - name: main
    resources: {requests: {cpu: 100m, example.com/gpu: "4"}}
status:
  phase: Running
  extendedResourceClaimStatus:
    resourceClaimName: low-extended-resources-bcdfg
    requestMappings: [{containerName: main, resourceName: example.com/gpu, requestName: container-0-request-1}]
---
)" + GpuPod("high", 2, "", "  priorityClassName: high\n");
  sim::SimulationResult r = RunYaml(y);
  ASSERT_EQ(r.evictions.size(), 1u);
  EXPECT_EQ(r.evictions[0].pod, "default/low");
  EXPECT_EQ(r.placements["default/high"], "n0");
  ASSERT_EQ(r.extended_resource_claims.count("default/high"), 1u);
  EXPECT_EQ(
      r.allocations["default/" + r.extended_resource_claims["default/high"].resource_claim_name]
          .size(),
      2u);
  EXPECT_EQ(r.allocations.count("default/low-extended-resources-bcdfg"), 0u)
      << "deleted with its pod";
}

// DynamicResources reuses per-node outcomes between pods of one claim spec
// (src/dra/node_memo.h): every decision must be the one made without it.
TEST(DraSimulation, NodeMemoChangesNoDecision) {
  auto without_timing = [](sim::SimulationResult r) {
    nlohmann::json j = sim::ResultJson(r);
    for (const char* k :
         {"loop_seconds", "cpu_seconds", "pods_per_second", "attempt_latency_micros"})
      j.erase(k);
    return j;
  };
  // Extended resources on DRA and device-plugin nodes, pods that finish and
  // free their devices for later ones.
  std::string extended = std::string(kGpuClassServingExtendedResource) + GpuNode("dra-0", 4) +
                         GpuNode("dra-1", 3) + GpuNode("plugin-0", 0, 4);
  for (int i = 0; i < 12; ++i) {
    extended += GpuPod("p" + std::to_string(i), 1 + i % 2,
                       i % 3 == 0 ? ", annotations: {gantry.dev/run-duration-seconds: \"5\"}" : "");
  }
  struct Case {
    const char* name;
    std::string yaml;
  } cases[] = {
      {"one GPU per pod", bench::dra::WorkloadYaml({.nodes = 12, .gpus_per_node = 4, .pods = 56})},
      {"GPU + NIC, matchAttribute",
       bench::dra::WorkloadYaml({.nodes = 12, .gpus_per_node = 8, .pods = 104, .match_nic = true})},
      {"firstAvailable",
       bench::dra::WorkloadYaml(
           {.nodes = 12, .gpus_per_node = 4, .pods = 56, .first_available = true})},
      {"partitionable halves",
       bench::dra::WorkloadYaml(
           {.nodes = 6, .gpus_per_node = 4, .pods = 56, .partitionable = true})},
      {"extended resources, pods finishing", extended},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    setenv("GANTRY_DRA_NODE_MEMO", "off", 1);
    const nlohmann::json off = without_timing(RunYaml(c.yaml));
    unsetenv("GANTRY_DRA_NODE_MEMO");
    const nlohmann::json on = without_timing(RunYaml(c.yaml));
    EXPECT_EQ(on, off) << "memo on:\n" << on.dump(1) << "\nmemo off:\n" << off.dump(1);
    EXPECT_GT(off["unschedulable"].get<int64_t>() + off["completed"].get<int64_t>(), 0)
        << "a case that fills up";
  }
}

// ---- Per-node result reuse (engine) x node memo (DynamicResources) ---------

nlohmann::json WithoutTiming(const sim::SimulationResult& r) {
  nlohmann::json j = sim::ResultJson(r);
  for (const char* k : {"loop_seconds", "cpu_seconds", "pods_per_second", "attempt_latency_micros"})
    j.erase(k);
  return j;
}

api::ObjectSet Load(const std::string& yaml) {
  api::ObjectSet objects;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText("phase", yaml, false, &objects, &stats);
  EXPECT_TRUE(st.ok()) << st;
  return objects;
}

// Runs `phases` one after the other on one scheduler (each until nothing can
// change), calling `between(i, scheduler)` before phase i > 0; returns every
// phase's report. `memo`: DynamicResources' node memo, `reuse`: the
// engine's per-node result reuse.
nlohmann::json RunPhases(const std::vector<std::string>& phases,
                         const std::function<void(size_t, scheduler::Scheduler&)>& between,
                         bool memo, bool reuse,
                         framework::NodeResultCache::Counters* hits = nullptr) {
  if (memo) {
    unsetenv("GANTRY_DRA_NODE_MEMO");
  } else {
    setenv("GANTRY_DRA_NODE_MEMO", "off", 1);
  }
  framework::Registry registry;
  EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  auto cfg = config::DefaultConfig(registry);
  EXPECT_TRUE(cfg.ok()) << cfg.status();
  FakeClock clock(1'700'000'000'000'000);
  state::ClusterState cluster(clock);
  sim::InMemoryWriter writer;
  auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  unsetenv("GANTRY_DRA_NODE_MEMO");
  scheduler::Scheduler& sched = *bundle->scheduler;
  sched.SetNodeResultReuse(reuse);
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < phases.size(); ++i) {
    if (i > 0) between(i, sched);
    out.push_back(WithoutTiming(sim::RunSimulation(Load(phases[i]), sched, writer, clock, 7)));
  }
  if (hits != nullptr) *hits = sched.node_results().counters();
  return out;
}

// `count` pods "<prefix>-<i>" with the workload's template claim; every
// third one finishes after `run_seconds` (freeing its devices).
std::string TemplatePods(const std::string& prefix, int count, int run_seconds) {
  std::string y;
  for (int i = 0; i < count; ++i) {
    const std::string name = prefix + "-" + std::to_string(i);
    y += "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         ", namespace: default, uid: " + name +
         (i % 3 == 0 ? ", annotations: {gantry.dev/run-duration-seconds: \"" +
                           std::to_string(run_seconds + i % 5) + "\"}"
                     : std::string()) +
         "}\nspec: {schedulerName: gantry-scheduler, containers: [{name: c, resources: {requests: "
         "{cpu: 100m}}}], resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]}\n---\n";
  }
  return y;
}

// The workload's objects without its pods (the template included).
std::string WithoutPods(const std::string& yaml) {
  return yaml.substr(0, yaml.find("apiVersion: v1\nkind: Pod\n"));
}

// A claim of no pod in the cluster (another scheduler's, say) named
// `name`, holding the first `gpus` GPUs of `node`.
std::string ExternalClaim(const bench::dra::WorkloadOptions& o, const std::string& name,
                          const std::string& node, int gpus) {
  std::string results;
  for (int g = 0; g < gpus; ++g) {
    results += "{request: gpu, driver: gpu.example.com, pool: " + node + ", device: gpu-" +
               std::to_string(g) + (o.partitionable ? "-full" : "") + "}, ";
  }
  results.resize(results.size() - 2);
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
         ", namespace: default, uid: " + name +
         "}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, "
         "allocationMode: All}}]}}\nstatus: {allocation: {devices: {results: [" +
         results + "]}}}\n---\n";
}

// Every combination of the engine's per-node result reuse and the node memo
// places, allocates and fails exactly as neither does, on DRA pod streams
// where pods finish and free their devices between pods, and a
// ResourceSlice, a DeviceClass and (alone, so that only DynamicResources
// sees it) a claim of no pod change between phases of the stream.
TEST(DraSimulation, NodeResultReuseAndMemoChangeNoDecision) {
  struct Case {
    const char* name;
    bench::dra::WorkloadOptions o;
  } cases[] = {
      {"one GPU per pod", {.nodes = 12, .gpus_per_node = 4, .pods = 0}},
      {"GPU + NIC, matchAttribute",
       {.nodes = 10, .gpus_per_node = 6, .pods = 0, .match_nic = true}},
      {"firstAvailable", {.nodes = 10, .gpus_per_node = 4, .pods = 0, .first_available = true}},
      {"partitionable halves", {.nodes = 6, .gpus_per_node = 3, .pods = 0, .partitionable = true}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string base = bench::dra::WorkloadYaml(c.o);
    const std::string tmpl = bench::dra::ClaimTemplateYaml(c.o);
    const int capacity = c.o.nodes * c.o.gpus_per_node * (c.o.partitionable ? 2 : 1);
    // Claims of no pod hold all of node-0's GPUs and one of node-3's.
    const std::string externals = ExternalClaim(c.o, "external-0", "node-0", c.o.gpus_per_node) +
                                  ExternalClaim(c.o, "external-3", "node-3", 1);
    const std::vector<std::string> phases = {
        WithoutPods(base) + externals + TemplatePods("a", capacity + 6, 30),
        tmpl + TemplatePods("b", capacity / 2, 20),
        tmpl + TemplatePods("c", capacity / 2, 10),
        tmpl + TemplatePods("d", capacity / 2, 10),
    };
    // Before phase 1: node-1's GPUs go away, node-2 publishes one more (a
    // new pool generation). Before phase 2: the GPU class keeps only devices
    // with 80Gi of memory (no partitionable halves any more). Before phase 3:
    // the external claims go, node-0's and node-3's GPUs are free, and no
    // NodeInfo changes (a cache that missed node-0's change would send the
    // first pod to node-3, the only other node with room).
    const api::ObjectSet initial = Load(base);
    const api::ObjectSet external = Load(externals);
    ASSERT_EQ(external.resource_claims.size(), 2u);
    auto between = [&](size_t phase, scheduler::Scheduler& sched) {
      if (phase == 3) {
        for (const api::ResourceClaim& claim : external.resource_claims)
          sched.events().OnResourceClaimDelete(std::make_shared<const api::ResourceClaim>(claim));
      } else if (phase == 1) {
        for (const api::ResourceSlice& sl : initial.resource_slices) {
          if (sl.meta.name == "node-1-gpu") {
            sched.events().OnResourceSliceDelete(std::make_shared<const api::ResourceSlice>(sl));
          } else if (sl.meta.name == "node-2-gpu") {
            auto more = std::make_shared<api::ResourceSlice>(sl);
            more->spec.pool.generation = 2;
            api::Device extra = more->spec.devices.back();
            extra.name = api::Symbol::Intern("gpu-extra");
            more->spec.devices.push_back(std::move(extra));
            sched.events().OnResourceSlice(std::make_shared<const api::ResourceSlice>(sl),
                                           std::move(more));
          }
        }
      } else {
        for (const api::DeviceClass& cls : initial.device_classes) {
          if (cls.meta.name != "gpu.example.com") continue;
          const api::ObjectSet narrowed = Load(
              "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: "
              "gpu.example.com}\nspec: {selectors: [{cel: {expression: 'device.driver == "
              "\"gpu.example.com\" && device.capacity[\"gpu.example.com\"].memory.compareTo("
              "quantity(\"80Gi\")) >= 0'}}]}\n");
          sched.events().OnDeviceClass(
              std::make_shared<const api::DeviceClass>(cls),
              std::make_shared<const api::DeviceClass>(narrowed.device_classes[0]));
        }
      }
    };
    const nlohmann::json plain = RunPhases(phases, between, /*memo=*/false, /*reuse=*/false);
    ASSERT_EQ(plain.size(), 4u);
    int64_t failed = 0, completed = 0, placed = 0;
    for (const nlohmann::json& p : plain) {
      failed += p["unschedulable"].get<int64_t>();
      completed += p["completed"].get<int64_t>();
      placed += p["scheduled"].get<int64_t>();
    }
    EXPECT_GT(failed, 0) << "the stream should fill the nodes";
    EXPECT_GT(completed, 0) << "pods should free devices";
    EXPECT_GT(placed, capacity) << "freed devices should be used again";
    for (bool memo : {false, true}) {
      for (bool reuse : {false, true}) {
        if (!memo && !reuse) continue;
        SCOPED_TRACE(std::string("memo ") + (memo ? "on" : "off") + ", reuse " +
                     (reuse ? "on" : "off"));
        framework::NodeResultCache::Counters counters;
        const nlohmann::json got = RunPhases(phases, between, memo, reuse, &counters);
        EXPECT_EQ(got, plain) << "got:\n" << got.dump(1) << "\nwithout either:\n" << plain.dump(1);
        if (reuse && memo) {
          // Pods with claims are served (DynamicResources is a NodeTrackedPlugin
          // while the memo is on): most nodes are not searched again.
          EXPECT_GT(counters.filter_hits, 2 * counters.filter_misses);
        } else if (reuse) {
          EXPECT_EQ(counters.filter_hits, 0) << "without the memo no pod with claims is served";
        }
      }
    }
  }
}

}  // namespace
}  // namespace gantry
