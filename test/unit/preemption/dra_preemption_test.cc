// Preemption with GPUs as DRA devices, offline through the real engine
// (default configuration, built-in plugins, the simulator's virtual clock and
// its ResourceClaim controller): the dry run sees the devices of the victims'
// claims as free, for a single pod (DefaultPreemption through the
// DynamicResources PreFilterExtensions) and for a PodGroup (the group cycle's
// released-claims view), and the preemptor then gets exactly those devices.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "src/sim/simulation.h"
#include "test/testing/simulate.h"

namespace gantry {
namespace {

// A cluster of 4-GPU nodes (one ResourceSlice each, devices gpu-0..3, pool =
// node name) and the objects the cases add.
struct DraWorld {
  std::string yaml =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
      "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n---\n";
  std::map<std::string, int> priority;  // pod key -> priority

  void Node(const std::string& name) {
    yaml +=
        gantry::StrCat("apiVersion: v1\nkind: Node\nmetadata: {name: ", name,
                       "}\nstatus: {allocatable: {cpu: '64', memory: 512Gi, pods: '110'}}\n---\n");
    std::string devs;
    for (int g = 0; g < 4; ++g) devs += gantry::StrCat("  - {name: gpu-", g, "}\n");
    yaml += gantry::StrCat("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ",
                           name, "-gpu}\nspec:\n  driver: gpu.example.com\n  pool: {name: ", name,
                           ", generation: 1, resourceSliceCount: 1}\n  nodeName: ", name,
                           "\n  devices:\n", devs, "---\n");
  }
  // A claim allocated to `devices` of `node`, reserved for the pods `holders`.
  void HeldClaim(const std::string& name, const std::string& node, const std::vector<int>& devices,
                 const std::vector<std::string>& holders) {
    std::string reserved;
    for (const std::string& h : holders)
      reserved += gantry::StrCat("  - {resource: pods, name: ", h, ", uid: ", h, "}\n");
    Claim(name, node, devices, reserved);
  }
  // A claim allocated to `devices` of `node`, reserved for the PodGroup `group`.
  void GroupClaim(const std::string& name, const std::string& node, const std::vector<int>& devices,
                  const std::string& group) {
    Claim(name, node, devices,
          gantry::StrCat("  - {apiGroup: scheduling.k8s.io, resource: podgroups, name: ", group,
                         ", uid: ", group, "-uid}\n"));
  }
  // A claim allocated to `devices` of `node` with the reservedFor entries `reserved` (YAML).
  void Claim(const std::string& name, const std::string& node, const std::vector<int>& devices,
             const std::string& reserved) {
    std::string results;
    for (int d : devices) {
      results += gantry::StrCat("      - {request: gpu, driver: gpu.example.com, pool: ", node,
                                ", device: gpu-", d, "}\n");
    }
    ClaimWithResults(name, node, devices.size(), results, reserved);
  }
  // A claim of `count` devices allocated to `results` (YAML list items) on
  // `node`, with the reservedFor entries `reserved` (YAML).
  void ClaimWithResults(const std::string& name, const std::string& node, size_t count,
                        const std::string& results, const std::string& reserved) {
    yaml += gantry::StrCat(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: ", name,
        ", namespace: ml, uid: ", name,
        "}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, "
        "count: ",
        count, "}}]}}\nstatus:\n  allocation:\n    devices:\n      results:\n", results,
        "    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, "
        "values: [",
        node, "]}]}]}\n  reservedFor:\n", reserved, "---\n");
  }
  // A claim template for `count` GPUs.
  void Template(const std::string& name, int count) {
    yaml += gantry::StrCat(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: ", name,
        ", namespace: ml}\nspec: {spec: {devices: {requests: [{name: gpu, exactly: "
        "{deviceClassName: gpu.example.com, count: ",
        count, "}}]}}}\n---\n");
  }
  // A PodGroup; with `claim`, its spec.resourceClaims names that claim
  // (entry "gpu"), with `all` its disruptionMode is `all`.
  void Group(const std::string& name, int min_count, int prio, const std::string& claim = "",
             bool all = false) {
    yaml += gantry::StrCat(
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: ", name,
        ", namespace: ml, uid: ", name, "-uid}\nspec:\n  priority: ", prio,
        "\n  schedulingPolicy:\n    gang: {minCount: ", min_count, "}\n");
    if (all) yaml += "  disruptionMode: {all: {}}\n";
    if (!claim.empty())
      yaml += gantry::StrCat("  resourceClaims: [{name: gpu, resourceClaimName: ", claim, "}]\n");
    yaml += "---\n";
  }
  // A pod using claim `claim` (bound to `node` when set) or, with `tmpl`, a
  // claim generated from that template.
  // `start`: status.startTime in seconds after 2026-01-01T00:00:00Z (bound pods).
  // `grace`: terminationGracePeriodSeconds; `never`: preemptionPolicy Never.
  void Pod(const std::string& name, const std::string& node, int prio, const std::string& claim,
           const std::string& tmpl = "", const std::string& group = "", int start = 0,
           int grace = 30, bool never = false) {
    std::string s = gantry::StrCat(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: ", name, ", namespace: ml, uid: ", name,
        "}\nspec:\n  schedulerName: gantry-scheduler\n  priority: ", prio,
        "\n  terminationGracePeriodSeconds: ", grace, "\n");
    if (never) s += "  preemptionPolicy: Never\n";
    if (!group.empty()) s += gantry::StrCat("  schedulingGroup: {podGroupName: ", group, "}\n");
    if (!node.empty()) s += gantry::StrCat("  nodeName: ", node, "\n");
    s += "  containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n";
    if (!tmpl.empty()) {
      s += gantry::StrCat("  resourceClaims: [{name: gpu, resourceClaimTemplateName: ", tmpl,
                          "}]\n");
    } else if (!claim.empty()) {
      s += gantry::StrCat("  resourceClaims: [{name: gpu, resourceClaimName: ", claim, "}]\n");
    }
    if (!node.empty())
      s +=
          gantry::StrCat("status: {phase: Running, startTime: '2026-01-01T00:00:0", start, "Z'}\n");
    yaml += s + "---\n";
    priority["ml/" + name] = prio;
  }
  // Node `node` full: four prio-0 pods, each holding one GPU through its own
  // claim; low-<node>-<d> holds gpu-<d>, started at second d and has the
  // grace period grace[d].
  void FullNode(const std::string& node, const std::vector<int>& grace = {30, 30, 30, 30}) {
    Node(node);
    for (int d = 0; d < 4; ++d) {
      const std::string pod = gantry::StrCat("low-", node, "-", d);
      HeldClaim(pod + "-gpu", node, {d}, {pod});
      Pod(pod, node, 0, pod + "-gpu", "", "", d, grace[static_cast<size_t>(d)]);
    }
  }
  // Node `node` with one partitionable GPU (pool = node name): counter set
  // gpu-0 (mem 4) drawn on by `whole` (4), `half-0` and `half-1` (2 each),
  // `quarter-0..3` (1 each); and `shared` (allowMultipleAllocations,
  // capacity bw 4, no counters). Each device's attribute `kind` is its
  // name without the index.
  void PartitionedNode(const std::string& node) {
    yaml +=
        gantry::StrCat("apiVersion: v1\nkind: Node\nmetadata: {name: ", node,
                       "}\nstatus: {allocatable: {cpu: '64', memory: 512Gi, pods: '110'}}\n---\n");
    const std::string pool =
        gantry::StrCat("  driver: gpu.example.com\n  pool: {name: ", node,
                       ", generation: 1, resourceSliceCount: 2}\n  nodeName: ", node, "\n");
    yaml += gantry::StrCat(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ", node,
        "-counters}\nspec:\n", pool,
        "  sharedCounters: [{name: gpu-0, counters: {mem: {value: '4'}}}]\n---\n");
    auto partition = [](const std::string& name, const std::string& kind, int mem) {
      return gantry::StrCat("  - {name: ", name, ", attributes: {kind: {string: ", kind,
                            "}}, consumesCounters: [{counterSet: gpu-0, counters: {mem: {value: '",
                            mem, "'}}}]}\n");
    };
    std::string devs = partition("whole", "whole", 4);
    for (int i = 0; i < 2; ++i) devs += partition(gantry::StrCat("half-", i), "half", 2);
    for (int i = 0; i < 4; ++i) devs += partition(gantry::StrCat("quarter-", i), "quarter", 1);
    devs +=
        "  - {name: shared, attributes: {kind: {string: shared}}, allowMultipleAllocations: true, "
        "capacity: {bw: {value: '4'}}}\n";
    yaml += gantry::StrCat("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ",
                           node, "-devices}\nspec:\n", pool, "  devices:\n", devs, "---\n");
  }
  // Pod `pod` (priority 0, started at second `start`) bound to `node`,
  // holding through its own claim <pod>-gpu the device `device` of a
  // PartitionedNode; with `bw` > 0 a share of it consuming that much bw.
  void PartitionHolder(const std::string& pod, const std::string& node, const std::string& device,
                       int start, int bw = 0) {
    std::string result = gantry::StrCat(
        "      - {request: gpu, driver: gpu.example.com, pool: ", node, ", device: ", device);
    if (bw > 0) {
      result += gantry::StrCat(", shareID: 00000000-0000-0000-0000-00000000000", start,
                               ", consumedCapacity: {bw: '", bw, "'}");
    }
    ClaimWithResults(pod + "-gpu", node, 1, result + "}\n",
                     gantry::StrCat("  - {resource: pods, name: ", pod, ", uid: ", pod, "}\n"));
    Pod(pod, node, 0, pod + "-gpu", "", "", start);
  }
  // A claim template for one device of attribute `kind`; with `bw` > 0 it
  // asks for that much of capacity bw.
  void KindTemplate(const std::string& name, const std::string& kind, int bw = 0) {
    std::string request = gantry::StrCat(
        "{deviceClassName: gpu.example.com, count: 1, selectors: [{cel: {expression: "
        "'device.attributes[\"gpu.example.com\"].kind == \"",
        kind, "\"'}}]");
    if (bw > 0) request += gantry::StrCat(", capacity: {requests: {bw: '", bw, "'}}");
    request += "}";
    yaml += gantry::StrCat(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: ", name,
        ", namespace: ml}\nspec: {spec: {devices: {requests: [{name: gpu, exactly: ", request,
        "}]}}}\n---\n");
  }
  // Node `node` full with the PodGroup `low` (priority 0, two members on the
  // node) whose group-level claim low-gpu holds all four GPUs; `all` sets
  // its disruptionMode.
  void NodeOfOneGroup(const std::string& node, bool all) {
    Node(node);
    Group("low", 2, 0, "low-gpu", all);
    GroupClaim("low-gpu", node, {0, 1, 2, 3}, "low");
    Pod("low-0", node, 0, "low-gpu", "", "low", 0);
    Pod("low-1", node, 0, "low-gpu", "", "low", 1);
  }
};

sim::SimulationResult Simulate(const std::string& yaml) { return testing::SimulateYaml(yaml); }

// "pool/device" of every device allocated to claims generated for `pod`.
std::set<std::string> DevicesOf(const sim::SimulationResult& r, const std::string& pod) {
  std::set<std::string> out;
  for (const auto& [claim, devs] : r.allocations) {
    if (claim.rfind(pod + "-gpu-", 0) != 0) continue;
    for (const auto& d : devs) out.insert(d.pool + "/" + d.device);
  }
  return out;
}

// One 4-GPU node: gpu-0,1 are the claim of low-a alone, gpu-2,3 a claim shared
// by low-b and vip (priority 5000); "high" (priority 1000) wants `gpus`.
DraWorld SharedClaimWorld(int gpus) {
  DraWorld w;
  w.Node("n0");
  w.HeldClaim("a-gpu", "n0", {0, 1}, {"low-a"});
  w.HeldClaim("shared-gpu", "n0", {2, 3}, {"low-b", "vip"});
  w.Pod("low-a", "n0", 0, "a-gpu");
  w.Pod("low-b", "n0", 0, "shared-gpu");
  w.Pod("vip", "n0", 5000, "shared-gpu");
  w.Template("want", gpus);
  w.Pod("high", "", 1000, "", "want");
  return w;
}

struct Case {
  std::string name;
  std::function<DraWorld()> build;
  std::vector<std::string>
      preemptors;  // pod keys that must end up placed (none: nothing may be evicted)
  int preemptor_priority;
  std::set<std::string> want_evicted;  // exact
  // pod key -> its devices afterwards ("pool/device"), exact.
  std::map<std::string, std::set<std::string>> want_devices;
};

class DraPreemptionTest : public ::testing::TestWithParam<Case> {};

TEST_P(DraPreemptionTest, Run) {
  const Case& c = GetParam();
  DraWorld w = c.build();
  sim::SimulationResult r = Simulate(w.yaml);
  const std::string dump = sim::ResultJson(r).dump(1);
  std::set<std::string> evicted;
  for (const auto& e : r.evictions) {
    evicted.insert(e.pod);
    EXPECT_LT(w.priority[e.pod], c.preemptor_priority) << e.pod;  // never an equal or higher victim
  }
  EXPECT_EQ(evicted.size(), r.evictions.size()) << "a pod evicted twice\n" << dump;
  EXPECT_EQ(evicted, c.want_evicted) << dump;
  for (const std::string& p : c.preemptors)
    EXPECT_EQ(r.placements.count(p), 1u) << p << "\n" << dump;
  for (const auto& [pod, devices] : c.want_devices)
    EXPECT_EQ(DevicesOf(r, pod), devices) << pod << "\n" << dump;
  // No device is allocated twice (but a PartitionedNode's `shared`, which
  // allows multiple allocations), and evicted pods' claims were released.
  std::set<std::string> seen;
  for (const auto& [claim, devs] : r.allocations) {
    for (const auto& d : devs) {
      if (d.device == "shared") continue;
      EXPECT_TRUE(seen.insert(d.pool + "/" + d.device).second) << d.device << "\n" << dump;
    }
    for (const std::string& v : evicted)
      EXPECT_NE(claim, v + "-gpu") << "claim of an evicted pod still allocated";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DraPreemptionTest,
    ::testing::Values(
        Case{"PodGetsTheVictimsDevices",
             [] {
               DraWorld w;
               w.FullNode("n0");
               w.Template("two", 2);
               w.Pod("high", "", 1000, "", "two");
               return w;
             },
             {"ml/high"},
             1000,
             {"ml/low-n0-2",
              "ml/low-n0-3"},  // reprieve keeps the earlier-started (more important) two
             {{"ml/high", {"n0/gpu-2", "n0/gpu-3"}}}},
        Case{"PodThatWouldStillNotFitEvictsNothing",
             [] {
               DraWorld w;
               w.FullNode("n0");
               w.Template("five", 5);
               w.Pod("high", "", 1000, "", "five");
               return w;
             },
             {},
             1000,
             {},
             {}},
        Case{"ClaimSharedWithAProtectedPodIsNotFreed",
             [] { return SharedClaimWorld(2); },
             {"ml/high"},
             1000,
             {"ml/low-a"},
             {{"ml/high", {"n0/gpu-0", "n0/gpu-1"}}}},
        Case{"ClaimSharedWithAProtectedPodLimitsThePreemptor",
             [] { return SharedClaimWorld(3); },
             {},
             1000,
             {},
             {}},
        Case{"GangGetsTheVictimsDevices",
             [] {
               // Two members of 4 GPUs each need both full nodes.
               DraWorld w;
               w.FullNode("n0");
               w.FullNode("n1");
               w.Template("four", 4);
               w.Group("big", 2, 1000);
               w.Pod("big-0", "", 0, "", "four", "big");
               w.Pod("big-1", "", 0, "", "four", "big");
               return w;
             },
             {"ml/big-0", "ml/big-1"},
             1000,
             {"ml/low-n0-0", "ml/low-n0-1", "ml/low-n0-2", "ml/low-n0-3", "ml/low-n1-0",
              "ml/low-n1-1", "ml/low-n1-2", "ml/low-n1-3"},
             {}},
        Case{"GangEvictsOnlyTheDevicesItNeeds",
             [] {
               // One member of 2 GPUs: two victims on one node, the rest reprieved.
               DraWorld w;
               w.FullNode("n0");
               w.FullNode("n1");
               w.Template("two", 2);
               w.Group("big", 1, 1000);
               w.Pod("big-0", "", 0, "", "two", "big");
               return w;
             },
             {"ml/big-0"},
             1000,
             // Least important first (latest start, then by UID): n1-3, n0-3, n1-2 make room on
             // n1; reprieve puts n0-3 back.
             {"ml/low-n1-2", "ml/low-n1-3"},
             {{"ml/big-0", {"n1/gpu-2", "n1/gpu-3"}}}},
        Case{"WholeGroupVictimFreesItsGroupClaim",
             [] {
               DraWorld w;
               w.NodeOfOneGroup("n0", /*all=*/true);
               w.Template("two", 2);
               w.Pod("high", "", 1000, "", "two");
               return w;
             },
             {"ml/high"},
             1000,
             {"ml/low-0", "ml/low-1"},
             {{"ml/high", {"n0/gpu-0", "n0/gpu-1"}}}},
        Case{"SingleGroupVictimsDoNotFreeTheGroupClaim",
             [] {
               // The PodGroup outlives its members (disruptionMode single): its
               // claim stays, so evicting the members would not help.
               DraWorld w;
               w.NodeOfOneGroup("n0", /*all=*/false);
               w.Template("two", 2);
               w.Pod("high", "", 1000, "", "two");
               return w;
             },
             {},
             1000,
             {},
             {}},
        Case{"GangGetsTheGroupClaimOfAWholeGroupVictim",
             [] {
               DraWorld w;
               w.NodeOfOneGroup("n0", /*all=*/true);
               w.Template("four", 4);
               w.Group("big", 1, 1000);
               w.Pod("big-0", "", 0, "", "four", "big");
               return w;
             },
             {"ml/big-0"},
             1000,
             {"ml/low-0", "ml/low-1"},
             {{"ml/big-0", {"n0/gpu-0", "n0/gpu-1", "n0/gpu-2", "n0/gpu-3"}}}},
        Case{"NominatedDevicesAreNotTakenByALowerPriorityPod",
             [] {
               // high evicts low-n0-2 (gone after 30 s) and low-n0-3 (60 s). When
               // gpu-2 is free, mid (priority 500, never preempts) must not take
               // it: high's nominated room includes the devices it waits for.
               DraWorld w;
               w.FullNode("n0", {30, 30, 30, 60});
               w.Template("two", 2);
               w.Template("one", 1);
               w.Pod("high", "", 1000, "", "two");
               w.Pod("mid", "", 500, "", "one", "", 0, 30, /*never=*/true);
               return w;
             },
             {"ml/high"},
             1000,
             {"ml/low-n0-2", "ml/low-n0-3"},
             {{"ml/high", {"n0/gpu-2", "n0/gpu-3"}}, {"ml/mid", {}}}},
        // The victims' devices are partitions of one GPU (shared counters):
        // a member's partition takes their counters although it is another
        // device, so a victim whose partition no longer fits is not reprieved.
        Case{"GangEvictsThePartitionsThatShareItsCounters",
             [] {
               DraWorld w;
               w.PartitionedNode("n0");
               for (int i = 0; i < 3; ++i)
                 w.PartitionHolder(gantry::StrCat("low-", i), "n0", gantry::StrCat("quarter-", i),
                                   i);
               w.KindTemplate("whole", "whole");
               w.Group("big", 1, 1000);
               w.Pod("big-0", "", 0, "", "whole", "big");
               return w;
             },
             {"ml/big-0"},
             1000,
             {"ml/low-0", "ml/low-1", "ml/low-2"},
             {{"ml/big-0", {"n0/whole"}}}},
        Case{"GangEvictsOnlyThePartitionsItNeeds",
             [] {
               // All four quarters held; a half needs two of them back: the
               // two least important go, the other two keep their counters.
               DraWorld w;
               w.PartitionedNode("n0");
               for (int i = 0; i < 4; ++i)
                 w.PartitionHolder(gantry::StrCat("low-", i), "n0", gantry::StrCat("quarter-", i),
                                   i);
               w.KindTemplate("half", "half");
               w.Group("big", 1, 1000);
               w.Pod("big-0", "", 0, "", "half", "big");
               return w;
             },
             {"ml/big-0"},
             1000,
             {"ml/low-2", "ml/low-3"},
             {{"ml/big-0", {"n0/half-0"}}}},
        Case{"GangEvictsTheSharesItsShareNeedsRoomOf",
             [] {
               // Three shares of bw 1 each; a share of bw 3 needs two of them
               // gone: the two least important go.
               DraWorld w;
               w.PartitionedNode("n0");
               for (int i = 0; i < 3; ++i)
                 w.PartitionHolder(gantry::StrCat("low-", i), "n0", "shared", i, /*bw=*/1);
               w.KindTemplate("bw3", "shared", 3);
               w.Group("big", 1, 1000);
               w.Pod("big-0", "", 0, "", "bw3", "big");
               return w;
             },
             {"ml/big-0"},
             1000,
             {"ml/low-1", "ml/low-2"},
             {{"ml/big-0", {"n0/shared"}}}},
        Case{"GangThatWouldStillNotFitEvictsNothing",
             [] {
               DraWorld w;
               w.FullNode("n0");
               w.Template("four", 4);
               w.Group("big", 2, 1000);
               w.Pod("big-0", "", 0, "", "four", "big");
               w.Pod("big-1", "", 0, "", "four", "big");
               return w;
             },
             {},
             1000,
             {},
             {}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace gantry
