// Workload-aware preemption through the real engine offline (default
// configuration, built-in plugins, the simulator's virtual clock): a table of
// scenarios, each checked against the safety rules that must always hold,
// plus the nominated-room overlay on a bare Scheduler.
#include "src/scheduler/group_preemption.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"
#include "test/testing/simulate.h"

namespace gantry {
namespace {

// Builds a cluster as YAML and remembers what the safety checks need.
struct World {
  std::string yaml;
  std::map<std::string, int> priority;                   // pod key -> effective priority
  std::map<std::string, std::string> all_group;          // pod key -> its `all` group
  std::map<std::string, std::set<std::string>> members;  // group -> bound pod keys
  std::map<std::string, int> group_priority;
  std::set<std::string> all_groups;

  void Node(const std::string& name, int gpus) {
    std::ostringstream o;
    o << "apiVersion: v1\nkind: Node\nmetadata: {name: " << name
      << "}\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \""
      << gpus << "\"}\n---\n";
    yaml += o.str();
  }
  // `priority` nullopt: the group has none (members keep their own).
  void Group(const std::string& name, int min_count, std::optional<int> priority, bool all,
             const std::string& policy = "", const std::string& priority_class = "") {
    std::ostringstream o;
    o << "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " << name
      << ", namespace: ml}\nspec:\n  schedulingPolicy:\n    gang: {minCount: " << min_count
      << "}\n";
    if (priority) o << "  priority: " << *priority << "\n";
    if (all) o << "  disruptionMode: {all: {}}\n";
    if (!policy.empty()) o << "  preemptionPolicy: " << policy << "\n";
    if (!priority_class.empty()) o << "  priorityClassName: " << priority_class << "\n";
    yaml += o.str() + "---\n";
    if (priority) group_priority["ml/" + name] = *priority;
    if (all) all_groups.insert("ml/" + name);
  }
  void PriorityClass(const std::string& name, int value, const std::string& policy) {
    yaml += "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + name +
            "}\nvalue: " + std::to_string(value) + "\npreemptionPolicy: " + policy + "\n---\n";
  }
  // A pod; bound when `node` is set. `gated` adds a scheduling gate.
  void Pod(const std::string& name, const std::string& node, int gpus, int prio,
           const std::string& group = "", int grace = 30, bool gated = false, int64_t start = 0) {
    std::ostringstream o;
    o << "apiVersion: v1\nkind: Pod\nmetadata: {name: " << name << ", namespace: ml}\nspec:\n"
      << "  schedulerName: gantry-scheduler\n  priority: " << prio
      << "\n  terminationGracePeriodSeconds: " << grace << "\n";
    if (!group.empty()) o << "  schedulingGroup: {podGroupName: " << group << "}\n";
    if (!node.empty()) o << "  nodeName: " << node << "\n";
    if (gated) o << "  schedulingGates: [{name: example.com/hold}]\n";
    o << "  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"1\", memory: 1Gi, "
         "nvidia.com/gpu: \""
      << gpus << "\"}\n";
    if (!node.empty()) {
      o << "status: {phase: Running";
      if (start > 0)
        o << ", startTime: \"2026-01-01T00:00:" << (start < 10 ? "0" : "") << start << "Z\"";
      o << "}\n";
    }
    yaml += o.str() + "---\n";
    const std::string key = "ml/" + name;
    int eff = prio;
    if (!group.empty()) {
      auto it = group_priority.find("ml/" + group);
      if (it != group_priority.end()) eff = it->second;
      if (all_groups.contains("ml/" + group)) all_group[key] = "ml/" + group;
      if (!node.empty()) members["ml/" + group].insert(key);
    }
    priority[key] = eff;
  }
};

sim::SimulationResult Simulate(const std::string& yaml) { return testing::SimulateYaml(yaml); }

// `group` ("ns/name") carries DisruptionTarget=True (PreemptionByScheduler)
// exactly when `want`, written once, and the scheduling condition is kept.
void ExpectDisruptionTarget(const sim::SimulationResult& r, const std::string& group, bool want,
                            const std::string& message) {
  auto it = r.group_conditions.find("PodGroup " + group);
  const bool has = it != r.group_conditions.end() && it->second.disruption_target.has_value();
  EXPECT_EQ(has, want) << group;
  if (!has || !want) return;
  const framework::PodGroupCondition& c = *it->second.disruption_target;
  EXPECT_EQ(c.type, "DisruptionTarget");
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "PreemptionByScheduler");
  EXPECT_EQ(c.message, "gantry-scheduler: preempting to accommodate " + message) << group;
  EXPECT_EQ(it->second.disruption_writes, 1) << group;
  EXPECT_EQ(it->second.group.kind, "PodGroup");
  EXPECT_EQ(it->second.group.name, group.substr(group.find('/') + 1));
  nlohmann::json j = sim::ResultJson(r);
  EXPECT_EQ(j["podgroups"][group]["disruptionTarget"]["reason"], "PreemptionByScheduler");
}

struct Case {
  std::string name;
  std::function<World()> build;
  std::string preemptor;  // group key, e.g. "ml/big"
  int preemptor_priority = 0;
  bool want_scheduled = false;
  int want_evictions = 0;              // exact count (no eviction storms)
  std::set<std::string> want_evicted;  // exact set when non-empty
  std::string want_message;            // substring of the group's failure message
};

class GroupPreemptionTest : public ::testing::TestWithParam<Case> {};

TEST_P(GroupPreemptionTest, Run) {
  const Case& c = GetParam();
  World w = c.build();
  sim::SimulationResult r = Simulate(w.yaml);
  const std::string dump = sim::ResultJson(r).dump(1);
  ASSERT_EQ(r.podgroups.count(c.preemptor), 1u) << dump;
  EXPECT_EQ(r.podgroups[c.preemptor].scheduled, c.want_scheduled) << dump;
  EXPECT_EQ(static_cast<int>(r.evictions.size()), c.want_evictions) << dump;
  std::set<std::string> evicted;
  for (const auto& e : r.evictions) evicted.insert(e.pod);
  EXPECT_EQ(evicted.size(), r.evictions.size()) << "a pod evicted twice\n" << dump;
  if (!c.want_evicted.empty()) {
    EXPECT_EQ(evicted, c.want_evicted) << dump;
  }
  if (!c.want_message.empty()) {
    EXPECT_NE(r.podgroups[c.preemptor].message.find(c.want_message), std::string::npos)
        << r.podgroups[c.preemptor].message;
  }

  // ---- Safety rules, for every case ----
  for (const auto& e : r.evictions) {
    ASSERT_TRUE(w.priority.contains(e.pod)) << e.pod;
    // Never an equal- or higher-priority victim.
    EXPECT_LT(w.priority[e.pod], c.preemptor_priority) << e.pod;
    // Evictions name the preemptor group's member.
    EXPECT_EQ(e.preemptor.rfind(c.preemptor + "-", 0), 0u) << e.preemptor;
  }
  // Never part of an `all` group.
  for (const auto& [group, pods] : w.members) {
    if (!w.all_groups.contains(group)) continue;
    size_t n = 0;
    for (const std::string& p : pods) n += evicted.count(p);
    EXPECT_TRUE(n == 0 || n == pods.size())
        << group << ": " << n << " of " << pods.size() << " evicted";
  }
  // Exactly the `all` groups evicted whole carry DisruptionTarget on their PodGroup.
  for (const std::string& group : w.all_groups) {
    const auto& pods = w.members[group];
    size_t n = 0;
    for (const std::string& p : pods) n += evicted.count(p);
    const bool whole = !pods.empty() && n == pods.size();
    ExpectDisruptionTarget(r, group, whole, "a higher priority pod group");
  }
  // Never preempt for a group that does not end up scheduled.
  if (!r.podgroups[c.preemptor].scheduled) {
    EXPECT_TRUE(r.evictions.empty()) << dump;
  }
  // Victims leave only after their grace period of virtual time.
  if (!r.evictions.empty()) {
    EXPECT_GE(r.virtual_seconds, 30.0);
  }
}

// Three 8-GPU nodes full of 1-GPU prio-0 pods (started in node order).
World FullOfSingles(int nodes = 3) {
  World w;
  for (int n = 0; n < nodes; ++n) {
    w.Node("n" + std::to_string(n), 8);
    for (int i = 0; i < 8; ++i)
      w.Pod("low-" + std::to_string(n) + "-" + std::to_string(i), "n" + std::to_string(n), 1, 0);
  }
  return w;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GroupPreemptionTest,
    ::testing::Values(
        Case{"GangEvictsExactlyWhatItNeeds",
             [] {
               World w = FullOfSingles();
               w.Group("big", 2, 1000, false);
               for (int i = 0; i < 2; ++i) w.Pod("big-" + std::to_string(i), "", 4, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             true,
             8,
             {},
             ""},
        Case{"LowestPriorityLevelFirst",
             [] {
               // n0 holds prio-100 pods, n1 prio-10 pods: only the prio-10 level is touched.
               World w;
               w.Node("n0", 8);
               w.Node("n1", 8);
               for (int i = 0; i < 8; ++i) w.Pod("mid-" + std::to_string(i), "n0", 1, 100);
               for (int i = 0; i < 8; ++i) w.Pod("lo-" + std::to_string(i), "n1", 1, 10);
               w.Group("big", 2, 1000, false);
               for (int i = 0; i < 2; ++i) w.Pod("big-" + std::to_string(i), "", 4, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             true,
             8,
             {"ml/lo-0", "ml/lo-1", "ml/lo-2", "ml/lo-3", "ml/lo-4", "ml/lo-5", "ml/lo-6",
              "ml/lo-7"},
             ""},
        Case{"AllGroupIsEvictedWhole",
             [] {
               // Each node: 2 members (2 GPUs each) of the `all` group v, plus 4 lone pods.
               // A member needing a whole node evicts v on every node.
               World w;
               w.Group("v", 4, 0, true);
               for (int n = 0; n < 2; ++n) {
                 w.Node("n" + std::to_string(n), 8);
                 for (int i = 0; i < 2; ++i)
                   w.Pod("v-" + std::to_string(n) + std::to_string(i), "n" + std::to_string(n), 2,
                         0, "v");
                 for (int i = 0; i < 4; ++i)
                   w.Pod("lone-" + std::to_string(n) + std::to_string(i), "n" + std::to_string(n),
                         1, 0);
               }
               w.Group("big", 1, 1000, false);
               w.Pod("big-0", "", 8, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             true,
             8,
             {},
             ""},
        Case{"SingleGroupMembersAreIndividualVictims",
             [] {
               World w;
               w.Group("s", 4, 0, false);
               for (int n = 0; n < 2; ++n) {
                 w.Node("n" + std::to_string(n), 8);
                 for (int i = 0; i < 2; ++i)
                   w.Pod("s-" + std::to_string(n) + std::to_string(i), "n" + std::to_string(n), 4,
                         0, "s");
               }
               w.Group("big", 1, 1000, false);
               w.Pod("big-0", "", 4, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             true,
             1,
             {},
             ""},
        Case{"GroupPriorityProtectsItsMembers",
             [] {
               // Members have pod priority 0, but their group's 2000 replaces it.
               World w;
               w.Group("vip", 2, 2000, false);
               w.Node("n0", 8);
               for (int i = 0; i < 2; ++i) w.Pod("vip-" + std::to_string(i), "n0", 4, 0, "vip");
               w.Group("big", 1, 1000, false);
               w.Pod("big-0", "", 4, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             false,
             0,
             {},
             "no lower-priority pods or pod groups to preempt"},
        Case{"GroupPriorityLetsLowPodsPreempt",
             [] {
               // The preemptor's members have pod priority 0; the group's 1000 counts.
               World w = FullOfSingles(1);
               w.Group("big", 1, 1000, false);
               w.Pod("big-0", "", 4, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             true,
             4,
             {},
             ""},
        Case{"EqualPriorityIsNeverAVictim",
             [] {
               World w;
               w.Node("n0", 8);
               for (int i = 0; i < 8; ++i) w.Pod("peer-" + std::to_string(i), "n0", 1, 1000);
               w.Group("big", 1, 1000, false);
               w.Pod("big-0", "", 4, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             false,
             0,
             {},
             "no lower-priority pods or pod groups to preempt"},
        Case{"AllGroupWithHigherPriorityIsNeverTouched",
             [] {
               World w;
               w.Group("v", 2, 5000, true);
               w.Node("n0", 8);
               w.Pod("v-0", "n0", 4, 0, "v");
               w.Pod("v-1", "n0", 2, 0, "v");
               w.Pod("lone", "n0", 2, 0);
               w.Group("big", 1, 1000, false);
               w.Pod("big-0", "", 8, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             false,
             0,
             {},
             "would not reach quorum even without every lower-priority pod"},
        Case{"StillWouldNotFit",
             [] {
               World w = FullOfSingles(2);
               w.Group("big", 3, 1000, false);
               for (int i = 0; i < 3; ++i) w.Pod("big-" + std::to_string(i), "", 8, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             false,
             0,
             {},
             "would not reach quorum"},
        Case{"PreemptionPolicyNever",
             [] {
               World w = FullOfSingles(1);
               w.Group("big", 1, 1000, false, "Never");
               w.Pod("big-0", "", 4, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             false,
             0,
             {},
             "not eligible due to preemptionPolicy=Never."},
        Case{"PreemptionPolicyNeverFromPriorityClass",
             [] {
               World w = FullOfSingles(1);
               w.PriorityClass("polite", 1000, "Never");
               w.Group("big", 1, std::nullopt, false, "", "polite");
               w.Pod("big-0", "", 4, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             false,
             0,
             {},
             "not eligible due to preemptionPolicy=Never."},
        Case{"GatedMemberMeansNoQuorumAndNoEviction",
             [] {
               World w = FullOfSingles(1);
               w.Group("big", 2, 1000, false);
               w.Pod("big-0", "", 4, 0, "big");
               w.Pod("big-1", "", 4, 0, "big", 30, /*gated=*/true);
               return w;
             },
             "ml/big",
             1000,
             false,
             0,
             {},
             "members exist"},
        Case{"TopologyDomainWithFewestVictims",
             [] {
               // Rack r0 is full of prio-0 pods, rack r1 has 4 free GPUs per node:
               // the gang (2 x 8 GPUs, one rack) evicts only in r1.
               World w;
               for (int n = 0; n < 2; ++n) {
                 w.yaml += "apiVersion: v1\nkind: Node\nmetadata:\n  name: a" + std::to_string(n) +
                           "\n  labels: {rack: r0}\nstatus:\n  allocatable: {cpu: \"64\", memory: "
                           "512Gi, pods: \"110\", "
                           "nvidia.com/gpu: \"8\"}\n---\n";
                 w.yaml += "apiVersion: v1\nkind: Node\nmetadata:\n  name: b" + std::to_string(n) +
                           "\n  labels: {rack: r1}\nstatus:\n  allocatable: {cpu: \"64\", memory: "
                           "512Gi, pods: \"110\", "
                           "nvidia.com/gpu: \"8\"}\n---\n";
                 for (int i = 0; i < 8; ++i)
                   w.Pod("a" + std::to_string(n) + "-" + std::to_string(i), "a" + std::to_string(n),
                         1, 0);
                 for (int i = 0; i < 4; ++i)
                   w.Pod("b" + std::to_string(n) + "-" + std::to_string(i), "b" + std::to_string(n),
                         1, 0);
               }
               w.yaml +=
                   "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: big, "
                   "namespace: ml}\n"
                   "spec:\n  priority: 1000\n  schedulingPolicy:\n    gang: {minCount: 2}\n"
                   "  schedulingConstraints:\n    topology:\n    - key: rack\n---\n";
               w.group_priority["ml/big"] = 1000;
               for (int i = 0; i < 2; ++i) w.Pod("big-" + std::to_string(i), "", 8, 0, "big");
               return w;
             },
             "ml/big",
             1000,
             true,
             8,
             {"ml/b0-0", "ml/b0-1", "ml/b0-2", "ml/b0-3", "ml/b1-0", "ml/b1-1", "ml/b1-2",
              "ml/b1-3"},
             ""}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(GroupPreemptionSimTest, ManyGangsDoNotCauseAnEvictionStorm) {
  // Four gangs of 2 x 4 GPUs arrive against four full nodes: exactly the 32
  // GPUs they need are evicted, each victim once, and every gang runs.
  World w = FullOfSingles(4);
  for (int g = 0; g < 4; ++g) {
    const std::string name = "g" + std::to_string(g);
    w.Group(name, 2, 1000 + g, false);
    for (int i = 0; i < 2; ++i) w.Pod(name + "-" + std::to_string(i), "", 4, 0, name);
  }
  sim::SimulationResult r = Simulate(w.yaml);
  for (int g = 0; g < 4; ++g) EXPECT_TRUE(r.podgroups["ml/g" + std::to_string(g)].scheduled) << g;
  EXPECT_EQ(r.evictions.size(), 32u) << sim::ResultJson(r).dump(1);
  nlohmann::json j = sim::ResultJson(r);
  ASSERT_EQ(j["evictions"].size(), 32u);
  EXPECT_TRUE(j["evictions"][0].contains("pod") && j["evictions"][0].contains("node") &&
              j["evictions"][0].contains("preemptor"));
  EXPECT_GE(r.virtual_seconds, 30.0);
}

TEST(GroupPreemptionSimTest, GatedPodNeverPreempts) {
  // A gated pod never reaches the queue, so it never preempts, whatever its priority.
  World w = FullOfSingles(1);
  w.Pod("high", "", 4, 1000, "", 30, /*gated=*/true);
  sim::SimulationResult r = Simulate(w.yaml);
  EXPECT_TRUE(r.evictions.empty()) << sim::ResultJson(r).dump(1);
  EXPECT_EQ(r.placements.count("ml/high"), 0u);
}

TEST(GroupPreemptionSimTest, AdmissionCopiesNeverFromPriorityClassForPods) {
  // The pod names a Never class and has no spec.preemptionPolicy (as in an
  // offline snapshot): it must not preempt, like a pod that passed admission.
  World w = FullOfSingles(1);
  w.PriorityClass("polite", 1000, "Never");
  w.yaml +=
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  schedulerName: "
      "gantry-scheduler\n"
      "  priorityClassName: polite\n  containers:\n  - name: c\n    resources:\n      requests: "
      "{cpu: \"1\", "
      "memory: 1Gi, nvidia.com/gpu: \"4\"}\n---\n";
  sim::SimulationResult r = Simulate(w.yaml);
  EXPECT_TRUE(r.evictions.empty());
  EXPECT_NE(r.failures["ml/p"].find("not eligible due to preemptionPolicy=Never."),
            std::string::npos)
      << r.failures["ml/p"];
}

// ---- A single-pod preemptor against PodGroup victims (DefaultPreemption) ----------

struct SingleCase {
  std::string name;
  int victim_group_priority;  // of the `all` group v
  std::set<std::string> want_evicted;
};

class SinglePodVictimUnitsTest : public ::testing::TestWithParam<SingleCase> {};

TEST_P(SinglePodVictimUnitsTest, Run) {
  // n0 and n1 each hold one 8-GPU member of the `all` group v; n2 holds eight
  // 1-GPU lone pods. A lone 8-GPU prio-1000 pod needs a whole node.
  const SingleCase& c = GetParam();
  World w;
  w.Group("v", 2, c.victim_group_priority, true);
  for (int n = 0; n < 3; ++n) w.Node("n" + std::to_string(n), 8);
  w.Pod("v-0", "n0", 8, 0, "v");
  w.Pod("v-1", "n1", 8, 0, "v");
  for (int i = 0; i < 8; ++i) w.Pod("lone-" + std::to_string(i), "n2", 1, 0);
  w.Pod("high", "", 8, 1000);
  sim::SimulationResult r = Simulate(w.yaml);
  const std::string dump = sim::ResultJson(r).dump(1);
  EXPECT_EQ(r.placements.count("ml/high"), 1u) << dump;
  std::set<std::string> evicted;
  for (const auto& e : r.evictions) {
    evicted.insert(e.pod);
    EXPECT_EQ(e.preemptor, "ml/high");
    EXPECT_LT(w.priority[e.pod], 1000) << e.pod;
  }
  EXPECT_EQ(evicted, c.want_evicted) << dump;
  EXPECT_EQ(evicted.size(), r.evictions.size());
  ExpectDisruptionTarget(r, "ml/v", evicted.contains("ml/v-0"), "a higher priority pod");
}

INSTANTIATE_TEST_SUITE_P(Cases, SinglePodVictimUnitsTest,
                         ::testing::Values(
                             // Evicting v (one unit, two pods, on two nodes) beats eight lone pods.
                             SingleCase{"AllGroupEvictedWholeAcrossNodes", 0, {"ml/v-0", "ml/v-1"}},
                             // v's group priority 5000 replaces its members' 0: it is not a victim.
                             SingleCase{"GroupPriorityProtects",
                                        5000,
                                        {"ml/lone-0", "ml/lone-1", "ml/lone-2", "ml/lone-3",
                                         "ml/lone-4", "ml/lone-5", "ml/lone-6", "ml/lone-7"}}),
                         [](const ::testing::TestParamInfo<SingleCase>& info) {
                           return info.param.name;
                         });

// ---- CompositePodGroup subtrees as victims ----------------------------------------

struct TreeCase {
  std::string name;
  bool all;                            // the root composite's disruptionMode
  std::optional<int> priority;         // the root composite's priority
  bool group_preemptor;                // a 1-member PodGroup instead of a lone pod
  bool lone_pods;                      // n2 holds eight 1-GPU lone pods
  std::set<std::string> want_evicted;  // exact; empty: exactly `want_count` of the tree's pods
  int want_count;
};

class CompositeVictimTest : public ::testing::TestWithParam<TreeCase> {};

TEST_P(CompositeVictimTest, Run) {
  // Composite ml/tree with leaves a (a-0 on n0) and b (b-0 on n1), 8 GPUs each;
  // the preemptor (priority 1000) needs a whole 8-GPU node.
  const TreeCase& c = GetParam();
  World w;
  std::string tree =
      "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: tree, "
      "namespace: ml}\n"
      "spec:\n  workloadRef: {workloadName: w, templateName: tree}\n  schedulingPolicy:\n    gang: "
      "{minGroupCount: "
      "2}\n";
  if (c.all) tree += "  disruptionMode: {all: {}}\n";
  if (c.priority) tree += "  priority: " + std::to_string(*c.priority) + "\n";
  w.yaml += tree + "---\n";
  for (const std::string leaf : {"a", "b"}) {
    w.yaml += "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " + leaf +
              ", namespace: ml}\nspec:\n  workloadRef: {workloadName: w, templateName: " + leaf +
              "}\n  parentCompositePodGroupName: tree\n  schedulingPolicy:\n    gang: {minCount: "
              "1}\n---\n";
  }
  for (int n = 0; n < 3; ++n) w.Node("n" + std::to_string(n), 8);
  w.Pod("a-0", "n0", 8, 0, "a");
  w.Pod("b-0", "n1", 8, 0, "b");
  if (c.lone_pods) {
    for (int i = 0; i < 8; ++i) w.Pod("lone-" + std::to_string(i), "n2", 1, 0);
  } else {
    w.Pod("other", "n2", 8, 2000);  // n2 is not an option
  }
  if (c.group_preemptor) {
    w.Group("big", 1, 1000, false);
    w.Pod("big-0", "", 8, 0, "big");
  } else {
    w.Pod("high", "", 8, 1000);
  }
  sim::SimulationResult r = Simulate(w.yaml);
  const std::string dump = sim::ResultJson(r).dump(1);
  EXPECT_EQ(r.placements.count(c.group_preemptor ? "ml/big-0" : "ml/high"), 1u) << dump;
  std::set<std::string> evicted;
  for (const auto& e : r.evictions) evicted.insert(e.pod);
  EXPECT_EQ(evicted.size(), r.evictions.size()) << dump;
  if (!c.want_evicted.empty()) {
    EXPECT_EQ(evicted, c.want_evicted) << dump;
  } else {
    EXPECT_EQ(static_cast<int>(evicted.size()), c.want_count) << dump;
    for (const std::string& v : evicted) EXPECT_TRUE(v == "ml/a-0" || v == "ml/b-0") << v;
  }
  // A tree in mode all goes whole or not at all.
  if (c.all) {
    EXPECT_EQ(evicted.count("ml/a-0"), evicted.count("ml/b-0")) << dump;
  }
  // DisruptionTarget on the composite exactly when the tree went as a unit.
  const bool whole = c.all && evicted.contains("ml/a-0");
  auto it = r.group_conditions.find("CompositePodGroup ml/tree");
  const bool has = it != r.group_conditions.end() && it->second.disruption_target.has_value();
  EXPECT_EQ(has, whole) << dump;
  if (has) {
    EXPECT_EQ(it->second.disruption_target->reason, "PreemptionByScheduler");
    EXPECT_EQ(it->second.group.kind, "CompositePodGroup");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CompositeVictimTest,
    ::testing::Values(
        // Pod preemptor: the tree (one unit of 2 pods) beats eight lone pods by the sum of
        // priorities.
        TreeCase{"PodEvictsTreeWhole", true, std::nullopt, false, true, {"ml/a-0", "ml/b-0"}, 0},
        // Mode single: children go independently, one pod is enough.
        TreeCase{"PodEvictsOneChildOfSingleTree", false, std::nullopt, false, true, {}, 1},
        // The composite's priority protects its whole tree (members have priority 0).
        TreeCase{"CompositePriorityProtectsTree",
                 true,
                 5000,
                 false,
                 true,
                 {"ml/lone-0", "ml/lone-1", "ml/lone-2", "ml/lone-3", "ml/lone-4", "ml/lone-5",
                  "ml/lone-6", "ml/lone-7"},
                 0},
        // Group preemptor: the tree is one victim unit.
        TreeCase{"GroupEvictsTreeWhole", true, std::nullopt, true, false, {"ml/a-0", "ml/b-0"}, 0},
        TreeCase{"GroupEvictsOneChildOfSingleTree", false, std::nullopt, true, false, {}, 1}),
    [](const ::testing::TestParamInfo<TreeCase>& info) { return info.param.name; });

// ---- A CompositePodGroup tree as the preemptor ------------------------------------

// Composite ml/job (gang of its 2 leaves, priority 1000): leaf w (minCount
// `workers`, one 8-GPU member each) and leaf ps (one 8-GPU member). The
// cluster: `low_nodes` 8-GPU nodes full of 1-GPU prio-0 pods and one node
// with an 8-GPU prio-2000 pod.
World TreePreemptor(int workers, int low_nodes) {
  World w = FullOfSingles(low_nodes);
  w.Node("vip-node", 8);
  w.Pod("vip", "vip-node", 8, 2000);
  w.yaml +=
      "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: job, "
      "namespace: ml}\nspec:\n  workloadRef: {workloadName: j, templateName: job}\n  "
      "schedulingPolicy:\n    gang: {minGroupCount: 2}\n  priority: 1000\n---\n";
  for (const auto& [leaf, count] : {std::pair<std::string, int>{"w", workers}, {"ps", 1}}) {
    w.yaml += "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " + leaf +
              ", namespace: ml}\nspec:\n  workloadRef: {workloadName: j, templateName: " + leaf +
              "}\n  parentCompositePodGroupName: job\n  schedulingPolicy:\n    gang: {minCount: " +
              std::to_string(count) + "}\n---\n";
    for (int i = 0; i < count; ++i) w.Pod(leaf + "-" + std::to_string(i), "", 8, 0, leaf);
  }
  return w;
}

TEST(CompositePreemptorTest, TreeEvictsWhatTheWholeTreeNeeds) {
  // Two workers and the ps need three whole nodes: the 24 low pods go, the
  // prio-2000 pod stays, and the tree binds once they left.
  World w = TreePreemptor(2, 3);
  sim::SimulationResult r = Simulate(w.yaml);
  const std::string dump = sim::ResultJson(r).dump(1);
  EXPECT_EQ(r.evictions.size(), 24u) << dump;
  std::set<std::string> evicted;
  for (const auto& e : r.evictions) {
    evicted.insert(e.pod);
    EXPECT_LT(w.priority[e.pod], 1000) << e.pod;
  }
  EXPECT_EQ(evicted.size(), r.evictions.size()) << "a pod evicted twice";
  EXPECT_FALSE(evicted.contains("ml/vip"));
  for (const std::string m : {"ml/w-0", "ml/w-1", "ml/ps-0"})
    EXPECT_EQ(r.placements.count(m), 1u) << m << "\n" << dump;
  EXPECT_TRUE(r.podgroups["ml/job"].scheduled) << dump;
  EXPECT_GE(r.virtual_seconds, 30.0);
}

TEST(CompositePreemptorTest, TreeThatWouldStillNotFitEvictsNothing) {
  // Three workers and the ps need four nodes; only three hold lower-priority pods.
  World w = TreePreemptor(3, 3);
  sim::SimulationResult r = Simulate(w.yaml);
  const std::string dump = sim::ResultJson(r).dump(1);
  EXPECT_TRUE(r.evictions.empty()) << dump;
  EXPECT_EQ(r.placements.count("ml/ps-0"), 0u) << dump;
  ASSERT_EQ(r.podgroups.count("ml/job"), 1u) << dump;
  EXPECT_FALSE(r.podgroups["ml/job"].scheduled);
  EXPECT_NE(r.podgroups["ml/job"].message.find("even without every lower-priority pod"),
            std::string::npos)
      << r.podgroups["ml/job"].message;
}

// ---- Nominated room on a bare scheduler ------------------------------------------

struct RoomCase {
  std::string name;
  int nominated_priority;
  int pod_priority;
  bool want_bound;  // the incoming pod takes the nominated room
};

class NominatedRoomTest : public ::testing::TestWithParam<RoomCase> {};

// A scheduler with the default configuration, fed by hand (no simulation loop).
struct BareScheduler {
  BareScheduler() {
    EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
    cfg = config::DefaultConfig(registry);
    EXPECT_TRUE(cfg.ok()) << cfg.status();
    if (cfg.ok()) bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 1, 0);
    EXPECT_TRUE(bundle.ok()) << bundle.status();
  }
  bool ok() const { return bundle.ok(); }
  scheduler::Scheduler& s() { return *bundle->scheduler; }
  // Loads `w` and adds its nodes; pods are left to the test.
  api::ObjectSet Load(const World& w) {
    api::ObjectSet objects;
    sim::LoadStats stats;
    EXPECT_TRUE(sim::LoadClusterText("t.yaml", w.yaml, false, &objects, &stats).ok());
    for (const api::Node& n : objects.nodes)
      s().events().OnNodeAdd(std::make_shared<const api::Node>(n));
    return objects;
  }

  framework::Registry registry;
  absl::StatusOr<config::Configuration> cfg;
  FakeClock clock{1'000'000'000};
  state::ClusterState cluster{clock};
  sim::InMemoryWriter writer;
  absl::StatusOr<scheduler::SchedulerBundle> bundle = absl::UnknownError("not built");
};

TEST_P(NominatedRoomTest, Run) {
  const RoomCase& c = GetParam();
  BareScheduler bare;
  ASSERT_TRUE(bare.ok());
  scheduler::Scheduler& s = bare.s();
  World w;
  w.Node("n0", 8);
  w.Pod("nominee", "", 8, c.nominated_priority);
  w.Pod("incoming", "", 4, c.pod_priority);
  const api::ObjectSet objects = bare.Load(w);
  ASSERT_EQ(objects.pods.size(), 2u);
  // The nominee waits for its victims with n0 nominated (as after preemption).
  auto nominee = std::make_shared<api::Pod>(objects.pods[0]);
  nominee->meta.uid = "uid-nominee";
  s.queue().AddNominatedPod(bare.cluster.MakePodInfo(nominee), "n0");
  auto incoming = std::make_shared<api::Pod>(objects.pods[1]);
  incoming->meta.uid = "uid-incoming";
  s.events().OnPodAdd(incoming);
  ASSERT_TRUE(s.ScheduleOne(false));
  std::vector<sim::InMemoryWriter::Binding> bound = bare.writer.TakeBindings();
  EXPECT_EQ(!bound.empty(), c.want_bound);
}

TEST(NominatedNodeTest, NominatedPodTriesItsNodeFirst) {
  // n0 is half used, n1 empty: scoring alone would pick n1, but a pod
  // nominated to n0 (after preempting there) goes to n0 while it fits
  // (upstream evaluateNominatedNode); without a nomination it goes to n1.
  for (const bool nominated : {true, false}) {
    SCOPED_TRACE(nominated ? "nominated to n0" : "not nominated");
    BareScheduler bare;
    ASSERT_TRUE(bare.ok());
    scheduler::Scheduler& s = bare.s();
    World w;
    w.Node("n0", 8);
    w.Node("n1", 8);
    w.Pod("resident", "n0", 4, 0);
    w.Pod("p", "", 2, 1000);
    const api::ObjectSet objects = bare.Load(w);
    ASSERT_EQ(objects.pods.size(), 2u);
    auto resident = std::make_shared<api::Pod>(objects.pods[0]);
    resident->meta.uid = "uid-resident";
    s.events().OnPodAdd(resident);
    auto p = std::make_shared<api::Pod>(objects.pods[1]);
    p->meta.uid = "uid-p";
    s.events().OnPodAdd(p);
    // As after a preemption: the queue holds the nomination of the pending pod.
    if (nominated) s.queue().AddNominatedPod(bare.cluster.MakePodInfo(p), "n0");
    ASSERT_TRUE(s.ScheduleOne(false));
    std::vector<sim::InMemoryWriter::Binding> bound = bare.writer.TakeBindings();
    ASSERT_EQ(bound.size(), 1u);
    EXPECT_EQ(bound[0].node, nominated ? "n0" : "n1");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NominatedRoomTest,
    ::testing::Values(RoomCase{"LowerPriorityCannotTakeTheRoom", 1000, 10, false},
                      RoomCase{"EqualPriorityCannotTakeTheRoom", 1000, 1000, false},
                      RoomCase{"HigherPriorityMayTakeTheRoom", 1000, 2000, true}),
    [](const ::testing::TestParamInfo<RoomCase>& info) { return info.param.name; });

}  // namespace
}  // namespace gantry
