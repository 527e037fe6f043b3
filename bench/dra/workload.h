// DRA offline workloads shared by bench/dra, gantry-bench --workload and
// test/unit/dra: GPU nodes with one ResourceSlice each (GPUs + NICs sharing
// PCIe roots), a GPU and a NIC DeviceClass, ResourceClaimTemplates and pods
// that use them. Variants: a GPU+NIC matchAttribute claim, a firstAvailable
// claim whose first subrequest never matches, and partitionable GPUs (shared
// counters; the claim takes one half of a GPU).
#ifndef GANTRY_BENCH_DRA_WORKLOAD_H_
#define GANTRY_BENCH_DRA_WORKLOAD_H_

#include <string>
#include <string_view>

#include "gantry/util/strings.h"

namespace gantry::bench::dra {

struct WorkloadOptions {
  int nodes = 500;
  int gpus_per_node = 8;
  int pods = 5000;
  bool match_nic = false;  // claim GPU + NIC on the same pcieRoot
  // The claim's request is firstAvailable: [H200 (no such device), H100].
  bool first_available = false;
  // Each of gpus_per_node physical GPUs has a counter set (memory 80Gi) and is
  // offered as one "full" device (80Gi) and two "half" devices (40Gi each);
  // the claim asks for a half. Capacity: 2 * gpus_per_node pods per node.
  bool partitionable = false;
};

// The ResourceClaimTemplate "gpu" (namespace default) of the workload's
// claim variant, as one YAML document.
inline std::string ClaimTemplateYaml(const WorkloadOptions& o) {
  auto model_is = [](std::string_view model) {
    return gantry::StrCat(
        "selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"].model == \"", model,
        "\"'}}]");
  };
  std::string reqs = gantry::StrCat("[{name: gpu, exactly: {deviceClassName: gpu.example.com, ",
                                    model_is("H100"), "}}");
  if (o.first_available) {
    reqs = gantry::StrCat(
        "[{name: gpu, firstAvailable: [{name: h200, deviceClassName: gpu.example.com, ",
        model_is("H200"), "}, {name: h100, deviceClassName: gpu.example.com, ", model_is("H100"),
        "}]}");
  } else if (o.partitionable) {
    reqs =
        "[{name: gpu, exactly: {deviceClassName: gpu.example.com, selectors: [{cel: {expression: "
        "'device.attributes[\"gpu.example.com\"].profile == \"half\"'}}]}}";
  }
  if (o.match_nic) {
    reqs += ", {name: nic, exactly: {deviceClassName: nic.example.com}}]";
    reqs += ", constraints: [{matchAttribute: resource.kubernetes.io/pcieRoot}]";
  } else {
    reqs += "]";
  }
  return gantry::StrCat(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpu, "
      "namespace: default}\n"
      "spec: {spec: {devices: {requests: ",
      reqs, "}}}\n---\n");
}

// Multi-document YAML of the whole cluster.
inline std::string WorkloadYaml(const WorkloadOptions& o) {
  std::string y;
  y += "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
       "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n---\n";
  y += "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: nic.example.com}\n"
       "spec: {selectors: [{cel: {expression: 'device.driver == \"nic.example.com\"'}}]}\n---\n";
  y += ClaimTemplateYaml(o);
  for (int n = 0; n < o.nodes; ++n) {
    y += gantry::StrCat("apiVersion: v1\nkind: Node\nmetadata: {name: node-", n,
                        "}\nstatus: {allocatable: {cpu: '64', memory: 512Gi, pods: '110'}}\n---\n");
    std::string devs;
    if (o.partitionable) {
      // Counter sets in a slice of their own, devices in a second slice.
      std::string sets;
      for (int g = 0; g < o.gpus_per_node; ++g) {
        sets +=
            gantry::StrCat("  - {name: gpu-", g, "-counters, counters: {memory: {value: 80Gi}}}\n");
        auto part = [&](std::string_view name, std::string_view profile, std::string_view memory) {
          devs += gantry::StrCat(
              "  - {name: gpu-", g, "-", name,
              ", attributes: {model: {string: H100}, profile: {string: ", profile,
              "}}, capacity: {memory: {value: ", memory, "}}, consumesCounters: [{counterSet: gpu-",
              g, "-counters, counters: {memory: {value: ", memory, "}}}]}\n");
        };
        part("full", "full", "80Gi");
        part("half-0", "half", "40Gi");
        part("half-1", "half", "40Gi");
      }
      y += gantry::StrCat(
          "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: node-", n,
          "-gpu-counters}\nspec:\n  driver: gpu.example.com\n  pool: {name: node-", n,
          ", generation: 1, resourceSliceCount: 2}\n  nodeName: node-", n, "\n  sharedCounters:\n",
          sets, "---\n");
    } else {
      for (int g = 0; g < o.gpus_per_node; ++g) {
        devs += gantry::StrCat("  - {name: gpu-", g,
                               ", attributes: {model: {string: H100}, index: {int: ", g,
                               "}, resource.kubernetes.io/pcieRoot: {string: 'pci", g / 2,
                               "'}}, capacity: {memory: {value: 80Gi}}}\n");
      }
    }
    y += gantry::StrCat(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: node-", n,
        "-gpu}\nspec:\n  driver: gpu.example.com\n  pool: {name: node-", n,
        ", generation: 1, resourceSliceCount: ", o.partitionable ? 2 : 1, "}\n  nodeName: node-", n,
        "\n  devices:\n", devs, "---\n");
    if (o.match_nic) {
      std::string nics;
      for (int g = 0; g < o.gpus_per_node; ++g) {
        nics += gantry::StrCat("  - {name: nic-", g,
                               ", attributes: {resource.kubernetes.io/pcieRoot: {string: 'pci",
                               g / 2, "'}}}\n");
      }
      y += gantry::StrCat(
          "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: node-", n,
          "-nic}\nspec:\n  driver: nic.example.com\n  pool: {name: node-", n,
          ", generation: 1, resourceSliceCount: 1}\n  nodeName: node-", n, "\n  devices:\n", nics,
          "---\n");
    }
  }
  for (int p = 0; p < o.pods; ++p) {
    y += gantry::StrCat("apiVersion: v1\nkind: Pod\nmetadata: {name: pod-", p,
                        ", namespace: default, uid: pod-", p,
                        "}\nspec: {schedulerName: gantry-scheduler, containers: [{name: c, "
                        "resources: {requests: {cpu: 100m}}}], "
                        "resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]}\n---\n");
  }
  return y;
}

}  // namespace gantry::bench::dra

#endif  // GANTRY_BENCH_DRA_WORKLOAD_H_
