// DefaultPreemption: plugin-level safety tests (FakeHandle + NodeResourcesFit
// as the only filter), args, and an offline end-to-end run through
// sim::RunSimulation with the default configuration.
#include "plugins/default_preemption/default_preemption.h"

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "plugins/node_resources_fit/node_resources_fit.h"
#include "plugins/registry/registry.h"
#include "src/sim/simulation.h"
#include "test/testing/objects.h"
#include "test/testing/simulate.h"

namespace gantry::plugins::default_preemption {
namespace {

using framework::Code;
using framework::CycleState;
using framework::PodInfoPtr;
using framework::Status;

constexpr int64_t kGi = 1024LL * 1024 * 1024;

// A FakeHandle whose filter is NodeResourcesFit.
class TestHandle : public testing::FakeHandle {
 public:
  TestHandle() : fit_(node_resources_fit::NodeResourcesFitArgs{}) {}
  Status RunFilterPluginsWithState(const CycleState& state, const framework::PodInfo& pod,
                                   const framework::NodeInfo& node) override {
    return fit_.Filter(state, pod, node).WithPlugin(fit_.Name());
  }
  Status RunPreFilterExtensionAddPod(CycleState&, const framework::PodInfo&, const framework::PodInfo&,
                                     const framework::NodeInfo&) override {
    return Status();
  }
  Status RunPreFilterExtensionRemovePod(CycleState&, const framework::PodInfo&, const framework::PodInfo&,
                                        const framework::NodeInfo&) override {
    return Status();
  }
  const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& PodDisruptionBudgets() const override {
    return pdbs;
  }
  std::vector<PodInfoPtr> NominatedPodsForNode(std::string_view node) const override {
    std::vector<PodInfoPtr> out;
    for (const auto& [n, p] : nominated) {
      if (n == node) out.push_back(p);
    }
    return out;
  }

  // Runs PreFilter + Filter on every node and then the plugin's PostFilter.
  framework::PostFilterResult Preempt(DefaultPreemption& plugin, const framework::PodInfo& pod) {
    CycleState state;
    framework::PreFilterResult pre;
    EXPECT_TRUE(fit_.PreFilter(state, pod, NodeInfos(), &pre).IsSuccess());
    framework::NodeToStatus filtered;
    for (const framework::NodeInfo* n : NodeInfos()) {
      Status st = RunFilterPluginsWithState(state, pod, *n);
      EXPECT_FALSE(st.IsSuccess()) << "test setup: pod fits " << n->name() << " without preemption";
      filtered.emplace(std::string(n->name()), st);
    }
    return plugin.PostFilter(state, pod, filtered);
  }

  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs;
  std::vector<std::pair<std::string, PodInfoPtr>> nominated;

 private:
  node_resources_fit::NodeResourcesFit fit_;
};

struct PodSpec {
  PodSpec(std::string n, int64_t cpu, int32_t prio, int64_t st = 0, std::string a = "")
      : name(std::move(n)), milli_cpu(cpu), priority(prio), start(st), app(std::move(a)) {}
  std::string name;
  int64_t milli_cpu;
  int32_t priority;
  int64_t start = 0;
  std::string app;  // label app=<app> when set
};

api::Pod MakePod(const PodSpec& s) {
  api::Pod p = testing::SimplePod(s.name, s.milli_cpu, 0);
  p.priority = s.priority;
  p.start_micros = s.start;
  if (!s.app.empty()) p.meta.labels = {{api::Symbol::Intern("app"), api::Symbol::Intern(s.app)}};
  return p;
}

struct NodeSpec {
  std::string name;
  int64_t milli_cpu;
  std::vector<PodSpec> pods;
};

struct Case {
  std::string name;
  std::vector<NodeSpec> nodes;
  PodSpec preemptor;
  bool never = false;
  // PDB over app=<pdb_app> with this many disruptions allowed ("" = none).
  std::string pdb_app;
  int32_t pdb_allowed = 0;
  // Expectations: "" = no nomination.
  std::string want_node;
  std::vector<std::string> want_victims;  // "default/<name>", any order
  std::string want_message_substr;
};

std::shared_ptr<const api::PodDisruptionBudget> Pdb(const std::string& app, int32_t allowed) {
  auto pdb = std::make_shared<api::PodDisruptionBudget>();
  pdb->meta.name = "pdb-" + app;
  pdb->meta.namespace_ = api::Symbol::Intern("default");
  api::LabelSelector sel;
  sel.requirements.push_back(api::Requirement{api::Symbol::Intern("app"), api::SelectorOp::kIn,
                                              {api::Symbol::Intern(app)}, 0});
  pdb->spec.selector = sel;
  pdb->status.disruptions_allowed = allowed;
  return pdb;
}

class DefaultPreemptionTableTest : public ::testing::TestWithParam<Case> {};

TEST_P(DefaultPreemptionTableTest, Run) {
  const Case& c = GetParam();
  TestHandle h;
  for (const NodeSpec& n : c.nodes) {
    std::vector<api::Pod> pods;
    for (const PodSpec& p : n.pods) pods.push_back(MakePod(p));
    h.AddNode(testing::MakeNodeInfo(testing::SimpleNode(n.name, n.milli_cpu, 64 * kGi), pods));
  }
  if (!c.pdb_app.empty()) h.pdbs.push_back(Pdb(c.pdb_app, c.pdb_allowed));
  api::Pod pod = MakePod(c.preemptor);
  if (c.never) pod.preemption_policy = api::PreemptionPolicy::kNever;
  PodInfoPtr info = testing::MakePodInfo(pod);
  DefaultPreemption plugin(DefaultPreemptionArgs{}, h);
  framework::PostFilterResult r = h.Preempt(plugin, *info);
  if (c.want_node.empty()) {
    EXPECT_FALSE(r.status.IsSuccess());
    EXPECT_FALSE(r.nominated_node_name.has_value());
    EXPECT_TRUE(h.deleted.empty());
  } else {
    ASSERT_TRUE(r.status.IsSuccess()) << r.message;
    ASSERT_TRUE(r.nominated_node_name.has_value());
    EXPECT_EQ(*r.nominated_node_name, c.want_node);
    std::vector<std::string> got = h.deleted, want = c.want_victims;
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
  }
  if (!c.want_message_substr.empty()) {
    EXPECT_NE(r.message.find(c.want_message_substr), std::string::npos) << r.message;
  }
  // Safety: never a victim of equal or higher priority.
  for (const std::string& v : h.deleted) {
    for (const NodeSpec& n : c.nodes) {
      for (const PodSpec& p : n.pods) {
        if ("default/" + p.name == v) {
          EXPECT_LT(p.priority, c.preemptor.priority) << v;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DefaultPreemptionTableTest,
    ::testing::Values(
        Case{"EvictsLowerPriority",
             {{"n1", 2000, {{"low", 1500, 0}}}},
             {"high", 1000, 100},
             false, "", 0, "n1", {"default/low"}, ""},
        Case{"NeverEvictsEqualOrHigherPriority",
             {{"n1", 2000, {{"same", 1000, 100}, {"higher", 1000, 200}}}},
             {"p", 1000, 100},
             false, "", 0, "", {}, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
        Case{"StillDoesNotFitAfterEvictingAll",
             // Node n1: the high-priority pod alone leaves no room for the preemptor.
             {{"n1", 2000, {{"low", 500, 0}, {"high", 1800, 1000}}}},
             {"p", 1000, 100},
             false, "", 0, "", {}, "preemption: 0/1 nodes are available: 1 Insufficient cpu."},
        Case{"UnresolvableNodesAreNotHelpful",
             // Preemptor asks more than any node's allocatable.
             {{"n1", 2000, {{"low", 500, 0}}}, {"n2", 2000, {{"low2", 500, 0}}}},
             {"p", 4000, 100},
             false, "", 0, "", {}, "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."},
        Case{"PreemptionPolicyNever",
             {{"n1", 2000, {{"low", 1500, 0}}}},
             {"p", 1000, 100},
             true, "", 0, "", {}, "not eligible due to preemptionPolicy=Never."},
        Case{"FewestVictims",
             {{"n1", 2000, {{"a", 700, 0}, {"b", 700, 0}, {"c", 600, 0}}},
              {"n2", 2000, {{"d", 1500, 0}, {"e", 500, 0}}}},
             {"p", 1200, 100},
             false, "", 0, "n2", {"default/d"}, ""},
        Case{"ReprievesHighestPriorityFirst",
             // Either victim frees enough; the more important one (prio 50) is kept.
             {{"n1", 2000, {{"mid", 1000, 50}, {"lo", 1000, 10}}}},
             {"p", 1000, 100},
             false, "", 0, "n1", {"default/lo"}, ""},
        Case{"PrefersNodeWithoutPdbViolation",
             // n1's victim is protected by a PDB with no disruptions left.
             {{"n1", 2000, {{"guarded", 1500, 0, 0, "db"}}}, {"n2", 2000, {{"free", 1500, 0, 0, "web"}}}},
             {"p", 1000, 100},
             false, "db", 0, "n2", {"default/free"}, ""},
        Case{"PdbViolationAllowedWhenNothingElse",
             {{"n1", 2000, {{"guarded", 1500, 0, 0, "db"}}}},
             {"p", 1000, 100},
             false, "db", 0, "n1", {"default/guarded"}, ""},
        Case{"LowestHighestVictimPriority",
             {{"n1", 2000, {{"v50", 1500, 50}}}, {"n2", 2000, {{"v10", 1500, 10}}}},
             {"p", 1000, 100},
             false, "", 0, "n2", {"default/v10"}, ""},
        Case{"LatestStartTimeWins",
             {{"n1", 2000, {{"old", 1500, 10, 1000}}}, {"n2", 2000, {{"new", 1500, 10, 5000}}}},
             {"p", 1000, 100},
             false, "", 0, "n2", {"default/new"}, ""}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(DefaultPreemptionTest, NotEligibleWhileVictimTerminatingOnNominatedNode) {
  TestHandle h;
  api::Pod victim = MakePod({"low", 1500, 0});
  victim.meta.deletion_micros = 1;
  h.AddNode(testing::MakeNodeInfo(testing::SimpleNode("n1", 2000, 64 * kGi), {victim}));
  api::Pod pod = MakePod({"p", 1000, 100});
  pod.nominated_node_name = api::Symbol::Intern("n1");
  DefaultPreemption plugin(DefaultPreemptionArgs{}, h);
  framework::PostFilterResult r = h.Preempt(plugin, *testing::MakePodInfo(pod));
  EXPECT_FALSE(r.status.IsSuccess());
  EXPECT_EQ(r.message, "preemption: not eligible due to a terminating pod on the nominated node.");
  EXPECT_TRUE(h.deleted.empty());
}

TEST(DefaultPreemptionTest, NominatedHigherPriorityPodsAreAccountedFor) {
  // Another preemptor (prio 200) is already nominated to n1 and will take
  // the room evicting "low" frees: n1 does not help, n2 does.
  TestHandle h;
  h.AddNode(testing::MakeNodeInfo(testing::SimpleNode("n1", 2000, 64 * kGi), {MakePod({"low", 1500, 0})}));
  h.AddNode(testing::MakeNodeInfo(testing::SimpleNode("n2", 2000, 64 * kGi), {MakePod({"low2", 1500, 5})}));
  h.nominated.emplace_back("n1", testing::MakePodInfo(MakePod({"other", 1500, 200})));
  DefaultPreemption plugin(DefaultPreemptionArgs{}, h);
  framework::PostFilterResult r = h.Preempt(plugin, *testing::MakePodInfo(MakePod({"p", 1000, 100})));
  ASSERT_TRUE(r.status.IsSuccess()) << r.message;
  EXPECT_EQ(*r.nominated_node_name, "n2");
  EXPECT_EQ(h.deleted, std::vector<std::string>{"default/low2"});
}

TEST(DefaultPreemptionTest, NumCandidates) {
  TestHandle h;
  DefaultPreemption plugin(DefaultPreemptionArgs{}, h);
  EXPECT_EQ(plugin.NumCandidates(50), 50);
  EXPECT_EQ(plugin.NumCandidates(500), 100);
  EXPECT_EQ(plugin.NumCandidates(5000), 500);
  DefaultPreemption small(DefaultPreemptionArgs{0, 3}, h);
  EXPECT_EQ(small.NumCandidates(5000), 3);
}

TEST(DefaultPreemptionArgsTest, DefaultsAndValidation) {
  EXPECT_EQ(DefaultPreemptionArgs{}.ToJson().dump(),
            R"({"minCandidateNodesAbsolute":100,"minCandidateNodesPercentage":10})");
  EXPECT_TRUE(DefaultPreemptionArgs{}.Validate().ok());
  EXPECT_FALSE((DefaultPreemptionArgs{101, 100}.Validate().ok()));
  EXPECT_FALSE((DefaultPreemptionArgs{10, -1}.Validate().ok()));
  absl::Status both = DefaultPreemptionArgs{0, 0}.Validate();
  EXPECT_FALSE(both.ok());
  EXPECT_NE(std::string(both.message()).find("cannot be zero at the same time"), std::string::npos) << both;
}

TEST(DefaultPreemptionArgsTest, RegisteredWithDefaultedJson) {
  framework::Registry registry;
  ASSERT_TRUE(RegisterBuiltinPlugins(registry).ok());
  const framework::PluginRegistration* reg = registry.Find(kName);
  ASSERT_NE(reg, nullptr);
  EXPECT_EQ(reg->args_kind, kArgsKind);
}

// ---- Offline end-to-end --------------------------------------------------------

std::string Node(const std::string& name, const std::string& cpu) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\nstatus:\n  allocatable: {cpu: \"" + cpu +
         "\", memory: 64Gi, pods: \"110\"}\n---\n";
}

std::string Pod(const std::string& name, const std::string& cpu, int priority, const std::string& node = "",
                int grace = 30) {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Pod\nmetadata: {name: " << name << ", namespace: default}\nspec:\n"
    << "  schedulerName: gantry-scheduler\n  priority: " << priority << "\n  terminationGracePeriodSeconds: " << grace
    << "\n";
  if (!node.empty()) o << "  nodeName: " << node << "\n";
  o << "  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"" << cpu << "\", memory: 1Gi}\n";
  if (!node.empty()) o << "status: {phase: Running}\n";
  return o.str() + "---\n";
}

TEST(DefaultPreemptionSimTest, PreemptorBindsAfterVictimsLeave) {
  // Two 4-cpu nodes full of 1-cpu low-priority pods; one 2-cpu high-priority pod.
  std::string y = Node("n1", "4") + Node("n2", "4");
  for (int i = 0; i < 4; ++i) {
    y += Pod("a" + std::to_string(i), "1", 0, "n1");
    y += Pod("b" + std::to_string(i), "1", 0, "n2");
  }
  y += Pod("high", "2", 1000);
  sim::SimulationResult r = gantry::testing::SimulateYaml(y);
  ASSERT_EQ(r.placements.count("default/high"), 1u) << (r.failures.count("default/high") ? r.failures["default/high"] : "");
  // Exactly the two victims needed, both on the node the preemptor landed on.
  ASSERT_EQ(r.evictions.size(), 2u);
  for (const auto& e : r.evictions) {
    EXPECT_EQ(e.node, r.placements["default/high"]);
    EXPECT_EQ(e.preemptor, "default/high");
  }
  // The victims left after their grace period (30s of virtual time).
  EXPECT_GE(r.virtual_seconds, 30.0);
  nlohmann::json j = sim::ResultJson(r);
  ASSERT_TRUE(j.contains("evictions"));
  EXPECT_EQ(j["evictions"].size(), 2u);
  EXPECT_EQ(j["evictions"][0]["preemptor"], "default/high");
}

TEST(DefaultPreemptionSimTest, RepeatedCyclesDoNotEvictMoreThanNeeded) {
  // Many preemptors against many low-priority pods: every eviction is used
  // by a preemptor (victims needed == preemptors * 2 cpu / 1 cpu).
  std::string y;
  for (int n = 0; n < 4; ++n) {
    y += Node("n" + std::to_string(n), "8");
    for (int i = 0; i < 8; ++i) y += Pod("low-" + std::to_string(n) + "-" + std::to_string(i), "1", 0, "n" + std::to_string(n), 10);
  }
  for (int i = 0; i < 6; ++i) y += Pod("high-" + std::to_string(i), "2", 1000);
  // An equal-priority pod that must not preempt the preemptors (nominated
  // pods of >= priority keep their room), and a Never-policy pod that needs a
  // whole node and must not preempt anyone.
  y += Pod("peer", "8", 1000);
  y += "apiVersion: v1\nkind: Pod\nmetadata: {name: polite, namespace: default}\nspec:\n  schedulerName: gantry-scheduler\n"
       "  priority: 2000\n  preemptionPolicy: Never\n  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"8\", memory: 1Gi}\n---\n";
  sim::SimulationResult r = gantry::testing::SimulateYaml(y);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.placements.count("default/high-" + std::to_string(i)), 1u) << i;
  EXPECT_EQ(r.evictions.size(), 12u) << sim::ResultJson(r).dump(1);
  for (const auto& e : r.evictions) EXPECT_EQ(e.pod.rfind("default/low-", 0), 0u) << e.pod;
  EXPECT_EQ(r.placements.count("default/polite"), 0u);
  EXPECT_EQ(r.placements.count("default/peer"), 0u);
  EXPECT_NE(r.failures["default/polite"].find("not eligible due to preemptionPolicy=Never."), std::string::npos);
}

}  // namespace
}  // namespace gantry::plugins::default_preemption
