// Gang scheduling and topology placement through the real engine offline
// (config defaults, built-in plugins, sim driver with virtual time).
#include <algorithm>
#include <random>
#include <sstream>

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/scheduler/group_status.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry {
namespace {

std::string Node(const std::string& name, const std::string& rack, int gpus) {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Node\nmetadata:\n  name: " << name << "\n  labels: {example.com/rack: " << rack
    << "}\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \"" << gpus
    << "\"}\n---\n";
  return o.str();
}

std::string Group(const std::string& name, int min_count, bool topology) {
  std::ostringstream o;
  o << "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " << name
    << ", namespace: ml}\nspec:\n  schedulingPolicy:\n    gang: {minCount: " << min_count << "}\n";
  if (topology) o << "  schedulingConstraints:\n    topology:\n    - key: example.com/rack\n";
  return o.str() + "---\n";
}

std::string Pod(const std::string& name, const std::string& group, int gpus, double run_seconds = -1,
                const std::string& scheduler = "gantry-scheduler") {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " << name << "\n  namespace: ml\n";
  if (run_seconds >= 0) o << "  annotations: {gantry.dev/run-duration-seconds: \"" << run_seconds << "\"}\n";
  o << "spec:\n  schedulerName: " << scheduler << "\n";
  if (!group.empty()) o << "  schedulingGroup: {podGroupName: " << group << "}\n";
  o << "  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \""
    << gpus << "\"}\n---\n";
  return o.str();
}

std::string ZoneNode(const std::string& name, const std::string& zone, const std::string& rack, int gpus) {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Node\nmetadata:\n  name: " << name << "\n  labels: {example.com/zone: " << zone
    << ", example.com/rack: " << rack
    << "}\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \"" << gpus
    << "\"}\n---\n";
  return o.str();
}

// A CompositePodGroup (gang of `min_groups` children), optionally under
// `parent` and confined to one value of `topology_key`.
std::string Composite(const std::string& name, int min_groups, const std::string& topology_key = "",
                      const std::string& parent = "") {
  std::ostringstream o;
  o << "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: " << name
    << ", namespace: ml}\nspec:\n  workloadRef: {workloadName: w, templateName: " << name << "}\n";
  if (!parent.empty()) o << "  parentCompositePodGroupName: " << parent << "\n";
  o << "  schedulingPolicy:\n    gang: {minGroupCount: " << min_groups << "}\n";
  if (!topology_key.empty()) o << "  schedulingConstraints:\n    topology:\n    - key: " << topology_key << "\n";
  return o.str() + "---\n";
}

// A leaf PodGroup under CompositePodGroup `parent`.
std::string Leaf(const std::string& name, int min_count, const std::string& parent,
                 const std::string& topology_key = "") {
  std::ostringstream o;
  o << "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " << name
    << ", namespace: ml}\nspec:\n  workloadRef: {workloadName: w, templateName: " << name
    << "}\n  parentCompositePodGroupName: " << parent << "\n  schedulingPolicy:\n    gang: {minCount: " << min_count
    << "}\n";
  if (!topology_key.empty()) o << "  schedulingConstraints:\n    topology:\n    - key: " << topology_key << "\n";
  return o.str() + "---\n";
}

std::string BoundPod(const std::string& name, const std::string& node, int gpus) {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Pod\nmetadata: {name: " << name << ", namespace: ml}\nspec:\n  nodeName: " << node
    << "\n  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \""
    << gpus << "\"}\nstatus: {phase: Running}\n---\n";
  return o.str();
}

struct SimRun {
  sim::SimulationResult result;
};

api::ObjectSet Load(const std::string& yaml) {
  api::ObjectSet objects;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText("test.yaml", yaml, false, &objects, &stats);
  EXPECT_TRUE(st.ok()) << st;
  return objects;
}

// A scheduler over the default configuration, offline, that can be driven
// in several phases (events between them).
class Engine {
 public:
  explicit Engine(uint64_t seed = 1) : clock_(1'000'000'000), cluster_(clock_) {
    EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry_).ok());
    auto cfg = config::DefaultConfig(registry_);
    EXPECT_TRUE(cfg.ok()) << cfg.status();
    auto bundle = scheduler::BuildScheduler(*cfg, registry_, cluster_, writer_, clock_, seed, 0);
    EXPECT_TRUE(bundle.ok()) << bundle.status();
    bundle_ = std::move(*bundle);
  }
  // Feeds `yaml` and schedules until nothing can change.
  sim::SimulationResult Run(const std::string& yaml) { return Run(Load(yaml)); }
  sim::SimulationResult Run(const api::ObjectSet& objects) {
    return sim::RunSimulation(objects, *bundle_.scheduler, writer_, clock_);
  }
  scheduler::Scheduler& sched() { return *bundle_.scheduler; }
  sim::InMemoryWriter& writer() { return writer_; }

 private:
  framework::Registry registry_;
  FakeClock clock_;
  state::ClusterState cluster_;
  sim::InMemoryWriter writer_;
  scheduler::SchedulerBundle bundle_;
};

SimRun Simulate(const std::string& yaml, uint64_t seed = 1) {
  Engine engine(seed);
  return SimRun{engine.Run(yaml)};
}

int PlacedWithPrefix(const sim::SimulationResult& r, const std::string& prefix) {
  int n = 0;
  for (const auto& [pod, node] : r.placements) n += pod.rfind(prefix, 0) == 0;
  return n;
}

TEST(GangTest, AllOrNothingUnderContention) {
  // 2 nodes x 8 GPUs; gang A needs 4x4 = 16 GPUs (fits alone), gang B 3x4.
  std::string y = Node("n0", "r0", 8) + Node("n1", "r0", 8) + Group("a", 4, false) + Group("b", 3, false);
  for (int i = 0; i < 4; ++i) y += Pod("a-" + std::to_string(i), "a", 4);
  for (int i = 0; i < 3; ++i) y += Pod("b-" + std::to_string(i), "b", 4);
  SimRun r = Simulate(y);
  ASSERT_EQ(r.result.podgroups.count("ml/a"), 1u);
  ASSERT_EQ(r.result.podgroups.count("ml/b"), 1u);
  const bool a = r.result.podgroups["ml/a"].scheduled, b = r.result.podgroups["ml/b"].scheduled;
  EXPECT_NE(a, b) << "exactly one gang fits";
  // Never a half-placed gang: count placed members per group.
  int placed_a = 0, placed_b = 0;
  for (const auto& [pod, node] : r.result.placements) {
    placed_a += pod.rfind("ml/a-", 0) == 0;
    placed_b += pod.rfind("ml/b-", 0) == 0;
  }
  EXPECT_TRUE(placed_a == 0 || placed_a == 4) << placed_a;
  EXPECT_TRUE(placed_b == 0 || placed_b == 3) << placed_b;
}

TEST(GangTest, TopologyKeepsGroupInOneRack) {
  std::string y;
  for (int r = 0; r < 3; ++r) {
    for (int n = 0; n < 2; ++n) y += Node("n" + std::to_string(r) + std::to_string(n), "r" + std::to_string(r), 8);
  }
  y += Group("g", 4, true);
  for (int i = 0; i < 4; ++i) y += Pod("g-" + std::to_string(i), "g", 4);
  y += Group("big", 5, true);
  for (int i = 0; i < 5; ++i) y += Pod("big-" + std::to_string(i), "big", 4);
  SimRun r = Simulate(y);
  ASSERT_TRUE(r.result.podgroups["ml/g"].scheduled);
  std::set<char> racks;
  for (int i = 0; i < 4; ++i) racks.insert(r.result.placements["ml/g-" + std::to_string(i)][1]);
  EXPECT_EQ(racks.size(), 1u) << "all members in one rack";
  EXPECT_FALSE(r.result.podgroups["ml/big"].scheduled) << "20 GPUs never fit one 16-GPU rack";
  EXPECT_NE(r.result.podgroups["ml/big"].message.find("4 of minCount 5 members fit"), std::string::npos)
      << r.result.podgroups["ml/big"].message;
}

TEST(GangTest, WaitsForMembersAndRejectsMixedSchedulers) {
  std::string y = Node("n0", "r0", 8) + Group("short", 3, false) + Pod("s-0", "short", 1) + Pod("s-1", "short", 1) +
                  Group("mixed", 2, false) + Pod("m-0", "mixed", 1) + Pod("m-1", "mixed", 1, -1, "other-scheduler");
  SimRun r = Simulate(y);
  EXPECT_FALSE(r.result.podgroups["ml/short"].scheduled);
  EXPECT_NE(r.result.failures["ml/s-0"].find("2 of minCount 3 members exist"), std::string::npos)
      << r.result.failures["ml/s-0"];
  // The other scheduler's member is never touched; the group is rejected.
  EXPECT_EQ(r.result.placements.count("ml/m-1"), 0u);
  EXPECT_EQ(r.result.placements.count("ml/m-0"), 0u);
  EXPECT_NE(r.result.failures["ml/m-0"].find("members use different schedulerNames (gantry-scheduler, other-scheduler)"),
            std::string::npos)
      << r.result.failures["ml/m-0"];
}

TEST(GangTest, InterleavedGangsAndPodsNeverDeadlock) {
  // 2 nodes x 8 GPUs, 60 jobs of 1-8 GPUs (gangs of 2 and single pods)
  // arriving together and finishing over time: every job eventually runs.
  std::mt19937 rng(7);
  std::string y = Node("n0", "r0", 8) + Node("n1", "r0", 8);
  int pods = 0;
  for (int j = 0; j < 60; ++j) {
    const int gpus = 1 + static_cast<int>(rng() % 8);
    const double run = 10 + static_cast<double>(rng() % 50);
    if (j % 3 == 0 && gpus <= 8) {
      const std::string g = "job" + std::to_string(j);
      y += Group(g, 2, false);
      y += Pod(g + "-0", g, std::min(gpus, 8), run) + Pod(g + "-1", g, std::min(gpus, 8), run);
      pods += 2;
    } else {
      y += Pod("job" + std::to_string(j), "", gpus, run);
      pods += 1;
    }
  }
  SimRun r = Simulate(y);
  EXPECT_EQ(r.result.completed, pods) << "scheduled " << r.result.scheduled << ", pending " << r.result.unschedulable;
  EXPECT_TRUE(r.result.failures.empty());
}

TEST(GangTest, SameSeedSamePlacements) {
  std::string y;
  for (int r = 0; r < 4; ++r) {
    for (int n = 0; n < 3; ++n) y += Node("n" + std::to_string(r) + std::to_string(n), "r" + std::to_string(r), 8);
  }
  for (int g = 0; g < 5; ++g) {
    y += Group("g" + std::to_string(g), 3, true);
    for (int i = 0; i < 3; ++i) y += Pod("g" + std::to_string(g) + "-" + std::to_string(i), "g" + std::to_string(g), 2);
  }
  EXPECT_EQ(Simulate(y, 3).result.placements, Simulate(y, 3).result.placements);
}


// ---- PodGroupInitiallyScheduled ---------------------------------------------

const sim::InMemoryWriter::GroupCondition* Cond(const sim::SimulationResult& r, const std::string& key) {
  auto it = r.group_conditions.find(key);
  return it == r.group_conditions.end() ? nullptr : &it->second;
}

TEST(GangStatusTest, ConditionSaysScheduledOrHowManyFitWhere) {
  std::string y;
  for (int r = 0; r < 2; ++r) {
    for (int n = 0; n < 2; ++n) y += Node("n" + std::to_string(r) + std::to_string(n), "r" + std::to_string(r), 8);
  }
  y += Group("fits", 4, true);
  for (int i = 0; i < 4; ++i) y += Pod("fits-" + std::to_string(i), "fits", 4);
  y += Group("big", 5, true);
  for (int i = 0; i < 5; ++i) y += Pod("big-" + std::to_string(i), "big", 4);
  Engine e;
  SimRun r{e.Run(y)};
  const auto* fits = Cond(r.result, "PodGroup ml/fits");
  ASSERT_NE(fits, nullptr);
  EXPECT_EQ(fits->condition.type, "PodGroupInitiallyScheduled");
  EXPECT_EQ(fits->condition.status, "True");
  EXPECT_EQ(fits->condition.reason, "Scheduled");
  EXPECT_NE(fits->condition.message.find("4 members scheduled (minCount 4) in example.com/rack="), std::string::npos)
      << fits->condition.message;
  EXPECT_EQ(fits->group.api_group, "scheduling.k8s.io");
  const auto* big = Cond(r.result, "PodGroup ml/big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->condition.status, "False");
  EXPECT_EQ(big->condition.reason, "Unschedulable");
  EXPECT_NE(big->condition.message.find("4 of minCount 5 members fit (best domain example.com/rack=r"),
            std::string::npos)
      << big->condition.message;
  // Events on the member pods: a Scheduled per bound member (4) and a
  // FailedScheduling per member of the failed group (5).
  EXPECT_GE(e.writer().events_recorded(), 9);
}

TEST(GangStatusTest, MixedSchedulerNamesRejectTheGroupWithACondition) {
  std::string y = Node("n0", "r0", 8) + Group("mixed", 2, false) + Pod("m-0", "mixed", 1) +
                  Pod("m-1", "mixed", 1, -1, "other-scheduler");
  SimRun r = Simulate(y);
  const auto* c = Cond(r.result, "PodGroup ml/mixed");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->condition.status, "False");
  EXPECT_EQ(c->condition.reason, "Unschedulable");
  EXPECT_NE(c->condition.message.find("pod group ml/mixed is rejected: its members use different schedulerNames "
                                      "(gantry-scheduler, other-scheduler); all members must use one"),
            std::string::npos)
      << c->condition.message;
  EXPECT_TRUE(r.result.placements.empty());
}

// A member served by another scheduler rejects the group only while it
// exists: once deleted it is forgotten (the bookkeeping is per pod, so it
// never grows beyond the live foreign pods), and the group schedules.
TEST(GangStatusTest, ForeignMemberIsForgottenWhenDeleted) {
  Engine e;
  const std::string foreign = Pod("m-1", "mixed", 1, -1, "other-scheduler");
  sim::SimulationResult first =
      e.Run(Node("n0", "r0", 8) + Group("mixed", 2, false) + Pod("m-0", "mixed", 1) + foreign);
  EXPECT_TRUE(first.placements.empty());
  api::ObjectSet gone = Load(foreign);
  ASSERT_EQ(gone.pods.size(), 1u);
  gone.pods[0].meta.uid = "sim-ml/m-1";  // the UID the simulator gave it
  e.sched().events().OnPodDelete(std::make_shared<const api::Pod>(gone.pods[0]));
  sim::SimulationResult second = e.Run(Pod("m-2", "mixed", 1));
  EXPECT_EQ(PlacedWithPrefix(second, "ml/m-"), 2);
}

TEST(GangStatusTest, CoschedulingGroupIsReportedUnderItsOwnApiGroup) {
  std::string y = Node("n0", "r0", 8) +
                  "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: cg, namespace: ml}\n"
                  "spec: {minMember: 3}\n---\n";
  for (int i = 0; i < 3; ++i) {
    y += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: cg-" + std::to_string(i) +
         "\n  namespace: ml\n  labels: {scheduling.x-k8s.io/pod-group: cg}\nspec:\n  schedulerName: gantry-scheduler\n"
         "  containers:\n  - name: c\n    resources:\n      requests: {nvidia.com/gpu: \"4\"}\n---\n";
  }
  SimRun r = Simulate(y);
  const auto* c = Cond(r.result, "PodGroup.scheduling.x-k8s.io ml/cg");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->group.api_group, "scheduling.x-k8s.io");
  EXPECT_EQ(c->condition.status, "False");
  EXPECT_NE(c->condition.message.find("2 of minCount 3 members fit"), std::string::npos) << c->condition.message;
}

// Records condition writes.
class RecordingWriter final : public framework::ClusterWriter {
 public:
  absl::Status BindPod(const api::Pod&, std::string_view) override { return absl::OkStatus(); }
  absl::Status UpdatePodScheduledCondition(const api::Pod&, const framework::PodScheduledCondition&,
                                           const std::string*) override {
    return absl::OkStatus();
  }
  absl::Status DeletePodForPreemption(const api::Pod&, const api::Pod&, std::string_view) override {
    return absl::OkStatus();
  }
  void RecordEvent(const framework::EventRecord&) override {}
  absl::Status UpdatePodGroupCondition(const framework::PodGroupRef& g,
                                       const framework::PodGroupCondition& c) override {
    writes.push_back(g.kind + " " + g.namespace_ + "/" + g.name + " " + c.type + "=" + c.status + "/" + c.reason);
    return absl::OkStatus();
  }
  // This writer serves no DRA: the group status tests write no claims.
  absl::StatusOr<std::string> AddResourceClaimFinalizer(const api::ResourceClaim&,
                                                        std::string_view) override {
    return absl::UnimplementedError("RecordingWriter writes no claims");
  }
  absl::StatusOr<std::string> UpdateResourceClaimStatus(
      const api::ResourceClaim&, const api::AllocationResult&,
      const std::vector<api::ResourceClaimConsumerReference>&) override {
    return absl::UnimplementedError("RecordingWriter writes no claims");
  }
  absl::StatusOr<std::string> DeallocateResourceClaim(const api::ResourceClaim&) override {
    return absl::UnimplementedError("RecordingWriter writes no claims");
  }
  absl::StatusOr<api::ResourceClaim> CreateResourceClaim(const api::ResourceClaim&,
                                                         std::string_view) override {
    return absl::UnimplementedError("RecordingWriter writes no claims");
  }
  absl::Status DeleteResourceClaim(const api::ResourceClaim&) override {
    return absl::UnimplementedError("RecordingWriter writes no claims");
  }
  absl::Status UpdatePodExtendedResourceClaimStatus(
      const api::Pod&, const framework::ExtendedResourceClaimStatus&) override {
    return absl::UnimplementedError("RecordingWriter writes no claims");
  }
  std::vector<std::string> writes;
};

TEST(GangStatusTest, TrueIsTerminalAndRepeatsAreNotRewritten) {
  state::GroupInfo g;
  g.key = "ml/g";
  g.gang = true;
  g.min_count = 2;
  state::GroupInfo seen_true = g;
  seen_true.key = "ml/done";
  seen_true.initially_scheduled = true;  // observed True on the object
  state::GroupInfo composite = g;
  composite.key = "ml/root";
  composite.composite = true;
  struct Step {
    const state::GroupInfo* group;
    bool scheduled;
    std::string message;
  };
  const std::vector<Step> steps = {
      {&g, false, "1 of minCount 2 members fit"},
      {&g, false, "1 of minCount 2 members fit"},  // same: not rewritten
      {&g, false, "0 of minCount 2 members fit"},  // changed: rewritten
      {&g, true, "2 members scheduled"},
      {&g, false, "0 of minCount 2 members fit"},  // after True: never
      {&g, true, "2 members scheduled"},           // True once
      {&seen_true, false, "x"},                    // observed True: never
      {&composite, false, "y"},
  };
  RecordingWriter w;
  scheduler::GroupStatusWriter status(w);
  for (const Step& s : steps) {
    if (s.scheduled) {
      status.Scheduled(*s.group, s.message);
    } else {
      status.Failed(*s.group, "Unschedulable", s.message);
    }
  }
  EXPECT_EQ(w.writes, (std::vector<std::string>{
                          "PodGroup ml/g PodGroupInitiallyScheduled=False/Unschedulable",
                          "PodGroup ml/g PodGroupInitiallyScheduled=False/Unschedulable",
                          "PodGroup ml/g PodGroupInitiallyScheduled=True/Scheduled",
                          "CompositePodGroup ml/root CompositePodGroupInitiallyScheduled=False/Unschedulable",
                      }));
  EXPECT_TRUE(status.IsScheduled("ml/g"));
  EXPECT_TRUE(status.IsScheduled("ml/done"));
  EXPECT_FALSE(status.IsScheduled("ml/root"));
}

// ---- minCount changes at runtime ---------------------------------------------

state::GroupInfo GangInfo(const std::string& key, int32_t min_count) {
  state::GroupInfo g;
  g.key = key;
  g.gang = true;
  g.min_count = min_count;
  return g;
}

TEST(GangMinCountTest, LoweringQuorumSchedulesAQueuedGroup) {
  // 1 node x 8 GPUs; 3 members of 4 GPUs: only 2 fit, minCount 3 fails.
  Engine e;
  std::string y = Node("n0", "r0", 8) + Group("g", 3, false);
  for (int i = 0; i < 3; ++i) y += Pod("g-" + std::to_string(i), "g", 4);
  sim::SimulationResult first = e.Run(y);
  EXPECT_TRUE(first.placements.empty());
  EXPECT_NE(first.failures["ml/g-0"].find("2 of minCount 3 members fit"), std::string::npos)
      << first.failures["ml/g-0"];
  // The PodGroup is updated to minCount 2: the queued group is re-evaluated.
  e.sched().events().OnPodGroup(GangInfo("ml/g", 2));
  sim::SimulationResult second = e.Run(api::ObjectSet{});
  EXPECT_EQ(PlacedWithPrefix(second, "ml/g-"), 2);
  EXPECT_TRUE(second.podgroups["ml/g"].scheduled);
  const auto conds = e.writer().GroupConditions();
  ASSERT_TRUE(conds.contains("PodGroup ml/g"));
  EXPECT_EQ(conds.at("PodGroup ml/g").condition.status, "True");
}

TEST(GangMinCountTest, RaisingQuorumMakesAQueuedGroupWaitForMoreMembers) {
  // No GPU node yet: the gang of 2 cannot fit.
  Engine e;
  std::string y = Node("cpu", "r0", 0) + Group("g", 2, false) + Pod("g-0", "g", 4) + Pod("g-1", "g", 4);
  sim::SimulationResult first = e.Run(y);
  EXPECT_TRUE(first.placements.empty());
  EXPECT_NE(first.failures["ml/g-0"].find("0 of minCount 2 members fit"), std::string::npos)
      << first.failures["ml/g-0"];
  // minCount goes up to 3, then capacity arrives: 2 members are not enough.
  e.sched().events().OnPodGroup(GangInfo("ml/g", 3));
  sim::SimulationResult second = e.Run(Node("gpu", "r0", 16));
  EXPECT_TRUE(second.placements.empty());
  EXPECT_NE(second.failures["ml/g-0"].find("2 of minCount 3 members exist; waiting for the rest"), std::string::npos)
      << second.failures["ml/g-0"];
  // The third member arrives: the raised quorum is met.
  sim::SimulationResult third = e.Run(Pod("g-2", "g", 2));
  EXPECT_EQ(PlacedWithPrefix(third, "ml/g-"), 3);
}

// ---- CompositePodGroup trees -----------------------------------------------

std::map<std::string, std::string> NodeLabel(const std::string& yaml, const std::string& label) {
  std::map<std::string, std::string> out;
  for (const api::Node& n : Load(yaml).nodes) {
    if (auto v = api::FindLabel(n.meta.labels, label)) out[n.meta.name] = v->str();
  }
  return out;
}

std::string TwoZones() {
  // 2 zones x 2 racks x 2 nodes x 8 GPUs: a rack holds 16 GPUs, a zone 32.
  std::string y;
  for (const char* z : {"za", "zb"}) {
    for (int r = 0; r < 2; ++r) {
      for (int n = 0; n < 2; ++n) {
        const std::string rack = std::string(z) + "-r" + std::to_string(r);
        y += ZoneNode(rack + "-n" + std::to_string(n), z, rack, 8);
      }
    }
  }
  return y;
}

TEST(GangCompositeTest, MultiLevelTopologyResolvesZoneThenRack) {
  // zb-r0 already runs 4 GPUs, so zone zb cannot hold two 16-GPU racks:
  // the root must pick za, and each leaf a whole rack inside it.
  std::string y = TwoZones() + BoundPod("busy", "zb-r0-n0", 4);
  y += Composite("root", 2, "example.com/zone");
  for (const char* leaf : {"a", "b"}) {
    y += Leaf(leaf, 4, "root", "example.com/rack");
    for (int i = 0; i < 4; ++i) y += Pod(std::string(leaf) + "-" + std::to_string(i), leaf, 4);
  }
  SimRun r = Simulate(y);
  const auto zone = NodeLabel(y, "example.com/zone");
  const auto rack = NodeLabel(y, "example.com/rack");
  std::set<std::string> zones, racks_a, racks_b;
  for (int i = 0; i < 4; ++i) {
    const std::string na = r.result.placements["ml/a-" + std::to_string(i)];
    const std::string nb = r.result.placements["ml/b-" + std::to_string(i)];
    ASSERT_FALSE(na.empty() || nb.empty()) << r.result.failures["ml/a-0"] << r.result.failures["ml/b-0"];
    zones.insert(zone.at(na));
    zones.insert(zone.at(nb));
    racks_a.insert(rack.at(na));
    racks_b.insert(rack.at(nb));
  }
  EXPECT_EQ(zones, std::set<std::string>{"za"});
  EXPECT_EQ(racks_a.size(), 1u);
  EXPECT_EQ(racks_b.size(), 1u);
  EXPECT_NE(*racks_a.begin(), *racks_b.begin());
  EXPECT_EQ(r.result.podgroups["ml/root"].domain, "example.com/zone=za");
  EXPECT_TRUE(r.result.podgroups["ml/a"].scheduled);
  const auto* root = Cond(r.result, "CompositePodGroup ml/root");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->condition.type, "CompositePodGroupInitiallyScheduled");
  EXPECT_EQ(root->condition.status, "True");
  ASSERT_NE(Cond(r.result, "PodGroup ml/b"), nullptr);
  EXPECT_EQ(Cond(r.result, "PodGroup ml/b")->condition.status, "True");
}

TEST(GangCompositeTest, TreeIsAllOrNothingAcrossLeaves) {
  // Root needs both leaves in one zone (32 GPUs); leaves want 16 + 20 GPUs.
  std::string y = TwoZones() + Composite("root", 2, "example.com/zone");
  y += Leaf("a", 4, "root", "example.com/rack");
  for (int i = 0; i < 4; ++i) y += Pod("a-" + std::to_string(i), "a", 4);
  y += Leaf("b", 5, "root", "example.com/rack");
  for (int i = 0; i < 5; ++i) y += Pod("b-" + std::to_string(i), "b", 4);
  SimRun r = Simulate(y);
  EXPECT_TRUE(r.result.placements.empty()) << "leaf b never fits a rack, so leaf a must not bind either";
  EXPECT_FALSE(r.result.podgroups["ml/root"].scheduled);
  const std::string& msg = r.result.failures["ml/a-0"];
  EXPECT_NE(msg.find("composite pod group ml/root: 1 of minGroupCount 2 child groups fit"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pod group ml/b: 4 of minCount 5 members fit"), std::string::npos) << msg;
  const auto* a = Cond(r.result, "PodGroup ml/a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->condition.status, "False");
}

TEST(GangCompositeTest, QueuedOnlyOnceMinGroupCountChildrenAreReady) {
  std::string y = TwoZones() + Composite("root", 2);
  y += Leaf("a", 2, "root") + Pod("a-0", "a", 1) + Pod("a-1", "a", 1);
  y += Leaf("b", 3, "root") + Pod("b-0", "b", 1);  // 1 of 3 members exist
  y += Leaf("c", 3, "root") + Pod("c-0", "c", 1) + Pod("c-1", "c", 1);  // 2 of 3
  SimRun r = Simulate(y);
  EXPECT_TRUE(r.result.placements.empty());
  const std::string& msg = r.result.failures["ml/a-0"];
  EXPECT_NE(msg.find("composite pod group ml/root: 1 of minGroupCount 2 child groups are ready"), std::string::npos)
      << msg;
}

TEST(GangCompositeTest, SatisfiedRootBindsReadyChildrenOnly) {
  // minGroupCount 1 of 2 children: a fits, b (3 x 20 GPUs) never does.
  std::string y = TwoZones() + Composite("root", 1);
  y += Leaf("a", 2, "root") + Pod("a-0", "a", 4) + Pod("a-1", "a", 4);
  y += Leaf("b", 3, "root");
  for (int i = 0; i < 3; ++i) y += Pod("b-" + std::to_string(i), "b", 20);
  SimRun r = Simulate(y);
  EXPECT_EQ(PlacedWithPrefix(r.result, "ml/a-"), 2);
  EXPECT_EQ(PlacedWithPrefix(r.result, "ml/b-"), 0);
  EXPECT_TRUE(r.result.podgroups["ml/root"].scheduled);
  EXPECT_FALSE(r.result.podgroups["ml/b"].scheduled);
}

TEST(GangCompositeTest, WaitsForMissingParentAndRejectsTooDeepTrees) {
  struct Case {
    std::string name;
    std::string yaml;
    std::string want;
  };
  std::string deep = TwoZones() + Composite("c1", 1) + Composite("c2", 1, "", "c1") + Composite("c3", 1, "", "c2") +
                     Composite("c4", 1, "", "c3") + Leaf("leaf", 1, "c4") + Pod("leaf-0", "leaf", 1);
  std::string ok4 = TwoZones() + Composite("c2", 1) + Composite("c3", 1, "", "c2") + Composite("c4", 1, "", "c3") +
                    Leaf("leaf", 1, "c4") + Pod("leaf-0", "leaf", 1);
  const std::vector<Case> cases = {
      {"missing parent", TwoZones() + Leaf("orphan", 1, "nowhere") + Pod("orphan-0", "orphan", 1),
       "pod group ml/orphan waits for its CompositePodGroup ml/nowhere"},
      {"depth 5", deep, "is in an invalid CompositePodGroup tree: deeper than 4 levels at ml/c1"},
      {"depth 4", ok4, ""},
  };
  for (const Case& c : cases) {
    SimRun r = Simulate(c.yaml);
    if (c.want.empty()) {
      EXPECT_EQ(r.result.placements.size(), 1u) << c.name;
      continue;
    }
    ASSERT_EQ(r.result.failures.size(), 1u) << c.name;
    EXPECT_NE(r.result.failures.begin()->second.find(c.want), std::string::npos)
        << c.name << ": " << r.result.failures.begin()->second;
  }
}

TEST(GangTopologyTest, LateMembersStayInTheRunningMembersDomain) {
  // 2 racks x 1 node x 16 GPUs; minCount 2 of 3 members x 8 GPUs: two fit
  // one rack, the third must not spill into the other rack.
  std::string y = Node("a", "r0", 16) + Node("b", "r1", 16) + Group("g", 2, true);
  for (int i = 0; i < 3; ++i) y += Pod("g-" + std::to_string(i), "g", 8);
  SimRun r = Simulate(y);
  EXPECT_EQ(PlacedWithPrefix(r.result, "ml/g-"), 2);
  EXPECT_EQ(r.result.placements["ml/g-0"], r.result.placements["ml/g-1"]);
  EXPECT_EQ(r.result.placements.count("ml/g-2"), 0u);
}

TEST(GangTopologyTest, PrefersTheDomainTheGroupFillsMostTightly) {
  // Racks of 16 GPUs; r1 already runs 8 and r2 runs 4. A gang of 2 x 4 GPUs
  // fits everywhere and should go to r1 (fills it to 100%).
  std::string y;
  for (int r = 0; r < 3; ++r) {
    for (int n = 0; n < 2; ++n) y += Node("n" + std::to_string(r) + std::to_string(n), "r" + std::to_string(r), 8);
  }
  y += BoundPod("busy1", "n10", 8) + BoundPod("busy2", "n20", 4);
  y += Group("g", 2, true) + Pod("g-0", "g", 4) + Pod("g-1", "g", 4);
  SimRun r = Simulate(y);
  EXPECT_EQ(r.result.podgroups["ml/g"].domain, "example.com/rack=r1");
  EXPECT_EQ(r.result.placements["ml/g-0"], "n11");
  EXPECT_EQ(r.result.placements["ml/g-1"], "n11");
}

// ---- PodGroup-level DRA claims ------------------------------------------------

constexpr std::string_view kFabric = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fabric}
spec:
  selectors: [{cel: {expression: 'device.driver == "fabric.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: fabric, namespace: ml}
spec:
  spec:
    devices:
      requests: [{name: link, exactly: {deviceClassName: fabric}}]
---
)";

// A fabric device reachable from the nodes of `rack` (network-attached), or
// from node `node` only.
std::string FabricSlice(const std::string& name, const std::string& rack,
                        const std::string& node = "") {
  std::ostringstream o;
  o << "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " << name
    << "}\nspec:\n  driver: fabric.example.com\n  pool: {name: " << name
    << ", generation: 1, resourceSliceCount: 1}\n";
  if (node.empty()) {
    o << "  nodeSelector:\n    nodeSelectorTerms: [{matchExpressions: [{key: example.com/rack, "
         "operator: In, values: ["
      << rack << "]}]}]\n";
  } else {
    o << "  nodeName: " << node << "\n";
  }
  o << "  devices: [{name: link-0}]\n---\n";
  return o.str();
}

// A gang whose PodGroup (and every member) names the claim template "fabric".
std::string GangWithFabric(const std::string& name, int members, int gpus) {
  std::ostringstream o;
  o << "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " << name
    << ", namespace: ml}\nspec:\n  schedulingPolicy:\n    gang: {minCount: " << members
    << "}\n  resourceClaims: [{name: fabric, resourceClaimTemplateName: fabric}]\n---\n";
  for (int i = 0; i < members; ++i) {
    o << "apiVersion: v1\nkind: Pod\nmetadata: {name: " << name << "-" << i
      << ", namespace: ml}\nspec:\n  schedulerName: gantry-scheduler\n  schedulingGroup: "
         "{podGroupName: "
      << name
      << "}\n  resourceClaims: [{name: fabric, resourceClaimTemplateName: fabric}]\n  "
         "containers:\n  - name: c\n"
      << "    resources:\n      requests: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \"" << gpus
      << "\"}\n"
      << "      claims: [{name: fabric}]\n---\n";
  }
  return o.str();
}

TEST(GangClaimTest, OneSharedAllocationReservedForTheGroupKeepsMembersWhereItIsReachable) {
  // Racks r0 and r1 of 2 x 8 GPUs, one fabric link per rack. Each gang of
  // 4 x 4 GPUs shares one link: all its members must land in that link's
  // rack, and the claim is created, allocated and reserved once per group.
  std::string y =
      std::string(kFabric) + FabricSlice("fabric-r0", "r0") + FabricSlice("fabric-r1", "r1");
  for (int r = 0; r < 2; ++r) {
    for (int n = 0; n < 2; ++n)
      y += Node("n" + std::to_string(r) + std::to_string(n), "r" + std::to_string(r), 8);
  }
  y += GangWithFabric("a", 4, 4) + GangWithFabric("b", 4, 4);
  Engine engine;
  sim::SimulationResult r = engine.Run(y);
  ASSERT_TRUE(r.podgroups["ml/a"].scheduled) << r.podgroups["ml/a"].message;
  ASSERT_TRUE(r.podgroups["ml/b"].scheduled) << r.podgroups["ml/b"].message;
  ASSERT_EQ(r.allocations.size(), 2u) << "one claim per group";
  std::set<std::string> pools;
  for (const std::string g : {"a", "b"}) {
    std::string claim_key;
    for (const auto& [key, devs] : r.allocations) {
      if (key.rfind("ml/" + g + "-fabric-", 0) == 0) claim_key = key;
    }
    ASSERT_FALSE(claim_key.empty()) << g;
    const auto& devs = r.allocations[claim_key];
    ASSERT_EQ(devs.size(), 1u);
    pools.insert(devs[0].pool);
    const char rack = devs[0].pool.back();  // fabric-r<k>
    for (int i = 0; i < 4; ++i) {
      const std::string& node = r.placements["ml/" + g + "-" + std::to_string(i)];
      EXPECT_EQ(node[1], rack) << g << "-" << i << " on " << node << ", link in " << devs[0].pool;
    }
    auto claim = engine.sched().dra().GetClaim("ml", claim_key.substr(3));
    ASSERT_NE(claim, nullptr);
    ASSERT_EQ(claim->status.reserved_for.size(), 1u);
    const api::ResourceClaimConsumerReference& ref = claim->status.reserved_for[0];
    EXPECT_EQ(ref.api_group.view(), "scheduling.k8s.io");
    EXPECT_EQ(ref.resource.view(), "podgroups");
    EXPECT_EQ(ref.name, g);
    EXPECT_EQ(ref.uid, "sim-podgroup-ml/" + g);
    ASSERT_EQ(claim->meta.owner_references.size(), 1u);
    EXPECT_EQ(claim->meta.owner_references[0].kind.view(), "PodGroup");
    EXPECT_NE(claim->meta.FindAnnotation(sim::kPodGroupClaimNameAnnotation), nullptr);
  }
  EXPECT_EQ(pools.size(), 2u) << "the groups got different links";
  EXPECT_EQ(engine.sched().dra().Stats().in_flight, 0);
}

TEST(GangClaimTest, GroupThatCannotFitWhereItsClaimIsReachableKeepsNothing) {
  // The only fabric link is local to n0 (8 GPUs); 3 members x 4 GPUs must
  // all run on n0, so the gang cannot be placed although n1 is free.
  std::string y = std::string(kFabric) + FabricSlice("fabric-n0", "", "n0") + Node("n0", "r0", 8) +
                  Node("n1", "r0", 8) + GangWithFabric("g", 3, 4);
  Engine engine;
  sim::SimulationResult r = engine.Run(y);
  EXPECT_FALSE(r.podgroups["ml/g"].scheduled);
  EXPECT_EQ(PlacedWithPrefix(r, "ml/g-"), 0);
  EXPECT_TRUE(r.allocations.empty()) << "the claim is never written";
  EXPECT_EQ(engine.sched().dra().Stats().in_flight, 0)
      << "the trial released the shared allocation";
  EXPECT_NE(r.podgroups["ml/g"].message.find("2 of minCount 3 members fit"), std::string::npos)
      << r.podgroups["ml/g"].message;
}

TEST(GangReportTest, SimulateReportListsPodGroups) {
  std::string y = Node("n0", "r0", 8) + Node("n1", "r1", 8) + Group("g", 2, true) +
                  Pod("g-0", "g", 4) + Pod("g-1", "g", 4) + Group("big", 3, false);
  for (int i = 0; i < 3; ++i) y += Pod("big-" + std::to_string(i), "big", 8);
  nlohmann::json j = sim::ResultJson(Simulate(y).result);
  ASSERT_TRUE(j.contains("podgroups")) << j.dump();
  const nlohmann::json& g = j["podgroups"]["ml/g"];
  EXPECT_EQ(g["scheduled"], true);
  EXPECT_EQ(g["placed"], 2);
  EXPECT_EQ(g["domain"].get<std::string>().rfind("example.com/rack=r", 0), 0u) << g.dump();
  EXPECT_EQ(j["podgroups"]["ml/big"]["scheduled"], false);
}

// ---- Per-node result reuse (framework::NodeResultCache) ---------------------

// Reusing Filter / Score results between members of one spec never changes a
// placement, a failure or a group outcome, and the cases do reuse.
TEST(GangReuseTest, SamePlacementsWithAndWithoutNodeResultReuse) {
  struct Case {
    std::string name;
    std::string yaml;
  };
  std::vector<Case> cases;
  {
    // Racks under contention: gangs of 3-5 with and without topology, some
    // too big, members finishing over time so later cycles see freed nodes.
    std::string y;
    for (int r = 0; r < 4; ++r) {
      for (int n = 0; n < 3; ++n)
        y += Node("n" + std::to_string(r) + std::to_string(n), "r" + std::to_string(r), 8);
    }
    for (int g = 0; g < 16; ++g) {
      const std::string name = "g" + std::to_string(g);
      const int size = 3 + g % 3;
      y += Group(name, size, g % 2 == 0);
      for (int i = 0; i < size; ++i)
        y += Pod(name + "-" + std::to_string(i), name, 1 + g % 4, 20 + 10 * (g % 3));
    }
    cases.push_back({"racks under contention", y});
  }
  {
    // A zone / rack tree and a gang whose leader has another spec.
    std::string y = TwoZones() + Composite("root", 2, "example.com/zone");
    for (const char* leaf : {"a", "b"}) {
      y += Leaf(leaf, 3, "root", "example.com/rack");
      for (int i = 0; i < 3; ++i) y += Pod(std::string(leaf) + "-" + std::to_string(i), leaf, 2);
    }
    y += Group("job", 6, false) + Pod("job-leader", "job", 1);
    for (int i = 0; i < 5; ++i) y += Pod("job-w" + std::to_string(i), "job", 3);
    for (int i = 0; i < 6; ++i) y += Pod("loose-" + std::to_string(i), "", 1);
    cases.push_back({"tree, leader and workers, loose pods", y});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Engine on(5), off(5);
    off.sched().SetNodeResultReuse(false);
    const sim::SimulationResult a = on.Run(c.yaml);
    const sim::SimulationResult b = off.Run(c.yaml);
    EXPECT_GT(a.scheduled, 0);
    EXPECT_EQ(a.placements, b.placements);
    EXPECT_EQ(a.failures, b.failures);
    EXPECT_EQ(a.scheduled, b.scheduled);
    ASSERT_EQ(a.podgroups.size(), b.podgroups.size());
    for (const auto& [key, g] : a.podgroups) {
      const auto& h = b.podgroups.at(key);
      EXPECT_EQ(g.scheduled, h.scheduled) << key;
      EXPECT_EQ(g.placed, h.placed) << key;
      EXPECT_EQ(g.domain, h.domain) << key;
      EXPECT_EQ(g.message, h.message) << key;
    }
    const framework::NodeResultCache::Counters& used = on.sched().node_results().counters();
    EXPECT_GT(used.filter_hits, 0);
    EXPECT_GT(used.score_hits, 0);
    const framework::NodeResultCache::Counters& none = off.sched().node_results().counters();
    EXPECT_EQ(none.filter_hits + none.filter_misses, 0);
  }
}

// ---- Binding a gang -------------------------------------------------------------

// Members with a claim of their own each (template "fabric", one link per
// member on the node-local slice of n0).
std::string GangWithOwnClaims(const std::string& name, int members) {
  std::ostringstream o;
  o << kFabric
    << "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: links}\nspec:\n"
    << "  driver: fabric.example.com\n  pool: {name: links, generation: 1, resourceSliceCount: 1}\n"
    << "  nodeName: n0\n  devices: [";
  for (int i = 0; i < members; ++i) o << (i ? ", " : "") << "{name: link-" << i << "}";
  o << "]\n---\n" << Node("n0", "r0", 8) << Group(name, members, false);
  for (int i = 0; i < members; ++i) {
    o << "apiVersion: v1\nkind: Pod\nmetadata: {name: " << name << "-" << i
      << ", namespace: ml}\nspec:\n  schedulerName: gantry-scheduler\n  schedulingGroup: "
         "{podGroupName: "
      << name
      << "}\n  resourceClaims: [{name: link, resourceClaimTemplateName: fabric}]\n  containers:\n  "
         "- name: c\n"
      << "    resources:\n      requests: {cpu: \"1\", memory: 1Gi}\n      claims: [{name: "
         "link}]\n---\n";
  }
  return o.str();
}

// Every member's PreBind runs before any member's Bind: a member whose claim
// cannot be written leaves the whole gang unbound (never below quorum).
TEST(GangBindingTest, APreBindFailureBindsNoMember) {
  Engine e;
  std::vector<std::string> ops;  // "bind ns/pod", "claim ns/claim", "FAIL ns/claim"
  int binds_when_failed = -1;
  e.writer().SetFaultHook([&](std::string_view op, const std::string& key) {
    if (op == "claim-status" && key.rfind("ml/g-1-", 0) == 0 && binds_when_failed < 0) {
      binds_when_failed = static_cast<int>(std::count_if(
          ops.begin(), ops.end(), [](const std::string& o) { return o.rfind("bind ", 0) == 0; }));
      ops.push_back("FAIL " + key);
      return absl::UnavailableError("injected: claim status write failed");
    }
    ops.push_back(gantry::StrCat(op == "bind" ? "bind " : "claim ", key));
    return absl::OkStatus();
  });
  sim::SimulationResult r = e.Run(GangWithOwnClaims("g", 3));
  ASSERT_GE(binds_when_failed, 0) << "the fault was injected";
  EXPECT_EQ(binds_when_failed, 0) << "no member may bind before every member's PreBind succeeded";
  int binds_after = 0;
  bool after_failure = false;
  for (const std::string& o : ops) {
    after_failure |= o.rfind("FAIL ", 0) == 0;
    binds_after += after_failure && o.rfind("bind ", 0) == 0;
  }
  EXPECT_EQ(binds_after, 3) << "the retried gang binds whole";
  EXPECT_EQ(PlacedWithPrefix(r, "ml/g-"), 3);
}

TEST(GangBindingTest, RetriableBindFailuresAreRetriedInPlace) {
  Engine e;
  int failures_left = 2;
  e.writer().SetFaultHook([&](std::string_view op, const std::string& key) {
    if (op == "bind" && key == "ml/g-1" && failures_left > 0) {
      --failures_left;
      return absl::UnavailableError("injected: connection reset");
    }
    return absl::OkStatus();
  });
  std::string y = Node("n0", "r0", 8) + Group("g", 3, false);
  for (int i = 0; i < 3; ++i) y += Pod("g-" + std::to_string(i), "g", 2);
  sim::SimulationResult r = e.Run(y);
  EXPECT_EQ(PlacedWithPrefix(r, "ml/g-"), 3);
  EXPECT_EQ(failures_left, 0);
  EXPECT_FALSE(r.failures.contains("ml/g-1")) << r.failures["ml/g-1"];
  EXPECT_FALSE(e.writer().GroupConditions()["PodGroup ml/g"].below_quorum.has_value());
}

TEST(GangBindingTest, AGangLeftBelowQuorumIsReportedUntilItCompletes) {
  Engine e;
  int denials_left = 1;  // an admission policy refuses g-1's first binding
  e.writer().SetFaultHook([&](std::string_view op, const std::string& key) {
    if (op == "bind" && key == "ml/g-1" && denials_left > 0) {
      --denials_left;
      return absl::PermissionDeniedError("injected: denied by admission policy");
    }
    return absl::OkStatus();
  });
  std::string y = Node("n0", "r0", 8) + Group("g", 3, false);
  for (int i = 0; i < 3; ++i) y += Pod("g-" + std::to_string(i), "g", 2);
  sim::SimulationResult r = e.Run(y);
  EXPECT_EQ(denials_left, 0);
  // A refusal is not retried in place: g-0 and g-2 bound, g-1 requeued, and
  // the gang below quorum was reported on its PodGroup...
  std::vector<framework::EventRecord> events;
  for (const framework::EventRecord& ev : e.writer().GroupEvents()) {
    if (ev.reason == "BoundBelowQuorum") events.push_back(ev);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].regarding_kind, "PodGroup");
  EXPECT_EQ(events[0].name, "g");
  EXPECT_EQ(events[0].type, "Warning");
  EXPECT_NE(events[0].note.find(
                "2 of minCount 3 members are bound; 1 failed to bind (injected: denied by "
                "admission policy)"),
            std::string::npos)
      << events[0].note;
  // ...until g-1's retry completed it.
  EXPECT_EQ(PlacedWithPrefix(r, "ml/g-"), 3);
  auto conds = e.writer().GroupConditions();
  ASSERT_TRUE(conds["PodGroup ml/g"].below_quorum.has_value());
  EXPECT_EQ(conds["PodGroup ml/g"].below_quorum->type, framework::kPodGroupBoundBelowQuorum);
  EXPECT_EQ(conds["PodGroup ml/g"].below_quorum->status, "False");
  EXPECT_EQ(conds["PodGroup ml/g"].below_quorum->reason, "QuorumReached");
  EXPECT_EQ(conds["PodGroup ml/g"].condition.status, "True")
      << "PodGroupInitiallyScheduled is untouched";
}

}  // namespace
}  // namespace gantry
