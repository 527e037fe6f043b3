// Tests of the framework runtime: profile expansion, the per-pod algorithm,
// percentageOfNodesToScore, FitError messages and determinism.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/framework/framework.h"
#include "src/framework/parallelize.h"
#include "src/framework/schedule_pod.h"
#include "src/state/cluster_state.h"
#include "test/testing/objects.h"
#include "test/unit/framework/fake_plugins.h"

namespace gantry::framework {
namespace {

using gantry::testing::FakeProfile;
using gantry::testing::MakePodInfo;
using gantry::testing::SimpleNode;
using gantry::testing::SimplePod;

struct Fixture {
  Registry registry;
  gantry::testing::FakeHandle writer;
  FakeClock clock;
  WorkerPool pool{1};
  state::ClusterState cluster{clock};
  state::Snapshot snapshot;
  std::unique_ptr<Framework> fw;

  explicit Fixture(ProfileSpec spec = FakeProfile(), int parallelism = 1) : pool(parallelism) {
    gantry::testing::RegisterFakePlugins(registry);
    auto created = Framework::Create(spec, registry, writer, clock, pool);
    EXPECT_TRUE(created.ok()) << created.status();
    if (created.ok()) fw = *std::move(created);
  }
  void AddNode(std::string name, int64_t cpu, std::string score = "0") {
    cluster.AddOrUpdateNode(std::make_shared<const api::Node>(
        SimpleNode(name, cpu, 1LL << 34, 110, {{"score", score}})));
  }
  void Refresh() {
    cluster.UpdateSnapshot(&snapshot);
    fw->SetSnapshot(&snapshot);
  }
};

TEST(FrameworkTest, ExpandsMultiPointToImplementedPoints) {
  Fixture f;
  EXPECT_EQ(f.fw->PluginNames(ExtensionPoint::kQueueSort), std::vector<std::string>{"FakeSort"});
  EXPECT_EQ(f.fw->PluginNames(ExtensionPoint::kPreFilter), std::vector<std::string>{"FakeFit"});
  EXPECT_EQ(f.fw->PluginNames(ExtensionPoint::kFilter), std::vector<std::string>{"FakeFit"});
  EXPECT_EQ(f.fw->PluginNames(ExtensionPoint::kScore), std::vector<std::string>{"FakeLabelScore"});
  EXPECT_EQ(f.fw->PluginNames(ExtensionPoint::kBind), std::vector<std::string>{"FakeBinder"});
  EXPECT_TRUE(f.fw->PluginNames(ExtensionPoint::kReserve).empty());
  EXPECT_EQ(f.fw->EventsToRegister().count("FakeFit"), 1u);
}

TEST(FrameworkTest, CreateErrors) {
  struct Case {
    std::string name;
    std::function<void(ProfileSpec&)> mutate;
    std::string want;
  };
  std::vector<Case> cases = {
      {"unknown plugin", [](ProfileSpec& s) { s.plugins.push_back({"Nope", 1, ""}); },
       "plugin \"Nope\" does not exist"},
      {"explicit point not implemented",
       [](ProfileSpec& s) { s.points[ExtensionPoint::kScore].push_back({"FakeFit", false}); },
       "plugin \"FakeFit\" does not extend score plugin"},
      {"multiPoint entry not implemented is dropped, explicit duplicate is not",
       [](ProfileSpec& s) { s.points[ExtensionPoint::kFilter].push_back({"FakeFit", false}); },
       "plugin \"FakeFit\" already registered as \"filter\""},
      {"no queue sort", [](ProfileSpec& s) { s.points.erase(ExtensionPoint::kQueueSort); },
       "no queueSort plugin is enabled"},
      {"no binder", [](ProfileSpec& s) { s.points.erase(ExtensionPoint::kBind); }, "at least one bind plugin"},
      {"negative weight", [](ProfileSpec& s) { s.plugins[2].weight = -1; }, "negative weight"},
      {"listed twice", [](ProfileSpec& s) { s.plugins.push_back(s.plugins[0]); }, "listed twice"},
      {"bad args JSON", [](ProfileSpec& s) { s.plugins[0].args_json = "{"; }, "args are not valid JSON"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Registry registry;
    gantry::testing::RegisterFakePlugins(registry);
    gantry::testing::FakeHandle writer;
    FakeClock clock;
    WorkerPool pool(1);
    ProfileSpec spec = FakeProfile();
    c.mutate(spec);
    auto fw = Framework::Create(spec, registry, writer, clock, pool);
    ASSERT_FALSE(fw.ok());
    EXPECT_NE(std::string(fw.status().message()).find(c.want), std::string::npos) << fw.status();
  }
}

TEST(FrameworkTest, ExplicitEntriesComeFirst) {
  ProfileSpec spec = FakeProfile();
  spec.points[ExtensionPoint::kScore] = {{"FakeLabelScore", false}};
  Fixture f(spec);
  EXPECT_EQ(f.fw->PluginNames(ExtensionPoint::kScore), std::vector<std::string>{"FakeLabelScore"});
  spec.points[ExtensionPoint::kScore].clear();
  Fixture g(spec);
  EXPECT_TRUE(g.fw->PluginNames(ExtensionPoint::kScore).empty());
}

// Records what the framework reports per extension point.
class RecordingObserver : public ExtensionPointObserver {
 public:
  void ObserveExtensionPoint(std::string_view point, std::string_view status, std::string_view profile,
                             double seconds) override {
    seen.push_back(std::string(point) + " " + std::string(status) + " " + std::string(profile));
    EXPECT_GE(seconds, 0.0);
  }
  std::vector<std::string> seen;
};

TEST(FrameworkTest, ExtensionPointObserverSeesEachPointWithItsStatus) {
  Fixture f;
  f.AddNode("n", 1000);
  f.Refresh();
  RecordingObserver obs;
  const std::string profile(f.fw->SchedulerName());
  // Without an observer nothing is timed.
  CycleState state;
  PreFilterResult pre;
  auto pod = MakePodInfo(SimplePod("p", 500, 0));
  ASSERT_TRUE(f.fw->RunPreFilterPlugins(state, *pod, &pre).IsSuccess());
  f.fw->SetExtensionPointObserver(&obs);
  ASSERT_TRUE(f.fw->RunPreFilterPlugins(state, *pod, &pre).IsSuccess());
  std::vector<const NodeInfo*> nodes(f.snapshot.NodeInfos().begin(), f.snapshot.NodeInfos().end());
  ASSERT_TRUE(f.fw->RunPreScorePlugins(state, *pod, nodes).IsSuccess());
  std::vector<int64_t> totals;
  ASSERT_TRUE(f.fw->RunScorePlugins(state, *pod, nodes, &totals).IsSuccess());
  ASSERT_TRUE(f.fw->RunReservePlugins(state, *pod, "n").IsSuccess());
  f.fw->RunUnreservePlugins(state, *pod, "n");
  ASSERT_TRUE(f.fw->RunPermitPlugins(state, *pod, "n").IsSuccess());
  ASSERT_TRUE(f.fw->RunPreBindPlugins(state, *pod, "n").IsSuccess());
  ASSERT_TRUE(f.fw->RunBindPlugins(state, *pod, "n").IsSuccess());
  f.fw->RunPostBindPlugins(state, *pod, "n");
  // A pod that does not fit: PreFilter reports the plugin's code.
  auto big = MakePodInfo(SimplePod("big", 5000, 0));
  CycleState big_state;
  Status st = f.fw->RunPreFilterPlugins(big_state, *big, &pre);
  f.fw->SetExtensionPointObserver(nullptr);
  ASSERT_TRUE(f.fw->RunPreFilterPlugins(state, *pod, &pre).IsSuccess());
  std::vector<std::string> want = {"PreFilter Success", "PreScore Success", "Score Success", "Reserve Success",
                                   "Unreserve Success", "Permit Success",   "PreBind Success", "Bind Success",
                                   "PostBind Success",  std::string("PreFilter ") + std::string(CodeName(st.code()))};
  for (std::string& w : want) w += " " + profile;
  EXPECT_EQ(obs.seen, want);
}

TEST(NumFeasibleNodesToFindTest, UpstreamFormula) {
  struct Case {
    int nodes;
    int32_t pct;
    int want;
  };
  for (const Case& c : std::vector<Case>{{50, 0, 50},
                                         {99, 0, 99},
                                         {100, 0, 100},
                                         {1000, 0, 420},
                                         {5000, 0, 500},
                                         {10000, 0, 500},
                                         {50000, 0, 2500},
                                         {5000, 100, 5000},
                                         {5000, 1, 100},
                                         {5000, 30, 1500}}) {
    EXPECT_EQ(NumFeasibleNodesToFind(c.nodes, c.pct), c.want) << c.nodes << " nodes at " << c.pct << "%";
  }
}

TEST(PodSchedulerTest, PicksHighestScoringFeasibleNode) {
  Fixture f;
  f.AddNode("small", 1000, "90");
  f.AddNode("medium", 2000, "10");
  f.AddNode("large", 4000, "50");
  f.Refresh();
  PodScheduler algo(0, 1);
  CycleState state;
  ScheduleResult result;
  FitError fit;
  auto pod = MakePodInfo(SimplePod("p", 1500, 0));
  Status st = algo.Schedule(*f.fw, state, *pod, f.snapshot, &result, &fit);
  ASSERT_TRUE(st.IsSuccess()) << st.Message();
  EXPECT_EQ(result.suggested_host, "large");
  EXPECT_EQ(result.feasible_nodes, 2);
  EXPECT_EQ(result.evaluated_nodes, 3);
}

TEST(PodSchedulerTest, FitErrorMessages) {
  struct Case {
    std::string name;
    api::Pod pod;
    std::string want;
  };
  api::Pod rejected = SimplePod("r", 100, 0);
  rejected.meta.labels = {{api::Symbol::Intern("reject"), api::Symbol::Intern("prefilter")}};
  api::Pod narrowed = SimplePod("n", 3000, 0);
  narrowed.meta.labels = {{api::Symbol::Intern("only-node"), api::Symbol::Intern("a")}};
  std::vector<Case> cases = {
      {"all insufficient", SimplePod("big", 5000, 0), "0/3 nodes are available: 3 Insufficient cpu."},
      {"prefilter rejection", rejected, "0/3 nodes are available: pod asked to be rejected."},
      {"narrowed then filtered", narrowed,
       "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [FakeFit]."},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f;
    f.AddNode("a", 1000);
    f.AddNode("b", 2000);
    f.AddNode("c", 2000);
    f.Refresh();
    PodScheduler algo(0, 1);
    CycleState state;
    ScheduleResult result;
    FitError fit;
    Status st = algo.Schedule(*f.fw, state, *MakePodInfo(c.pod), f.snapshot, &result, &fit);
    EXPECT_TRUE(st.IsRejected());
    EXPECT_EQ(fit.Message(), c.want);
  }
}

TEST(PodSchedulerTest, StopsAfterEnoughFeasibleNodesAndRotates) {
  Fixture f;
  for (int i = 0; i < 1000; ++i) f.AddNode("n" + std::to_string(i), 4000);
  f.Refresh();
  PodScheduler algo(0, 7);
  auto pod = MakePodInfo(SimplePod("p", 100, 0));
  CycleState s1, s2;
  ScheduleResult r1, r2;
  FitError e1, e2;
  ASSERT_TRUE(algo.Schedule(*f.fw, s1, *pod, f.snapshot, &r1, &e1).IsSuccess());
  EXPECT_EQ(r1.feasible_nodes, 420);
  EXPECT_EQ(r1.evaluated_nodes, 420);
  ASSERT_TRUE(algo.Schedule(*f.fw, s2, *pod, f.snapshot, &r2, &e2).IsSuccess());
  EXPECT_EQ(r2.evaluated_nodes, 420);
  // Second attempt starts where the first stopped: the chosen nodes differ.
  auto* fake = dynamic_cast<gantry::testing::FakeFit*>(f.fw->FindPlugin("FakeFit"));
  ASSERT_NE(fake, nullptr);
  EXPECT_EQ(fake->calls.load(), 840);
}

TEST(PodSchedulerTest, DeterministicAcrossParallelismAndRuns) {
  auto run = [](int parallelism) {
    Fixture f(FakeProfile(), parallelism);
    for (int i = 0; i < 300; ++i) f.AddNode("n" + std::to_string(i), 1000 + (i % 7) * 500, std::to_string(i % 3));
    f.Refresh();
    PodScheduler algo(0, 42);
    std::vector<std::string> hosts;
    for (int k = 0; k < 50; ++k) {
      CycleState state;
      ScheduleResult result;
      FitError fit;
      auto pod = MakePodInfo(SimplePod("p" + std::to_string(k), 1200, 0));
      EXPECT_TRUE(algo.Schedule(*f.fw, state, *pod, f.snapshot, &result, &fit).IsSuccess());
      hosts.push_back(result.suggested_host);
    }
    return hosts;
  };
  std::vector<std::string> serial = run(1);
  EXPECT_EQ(serial, run(1));
  EXPECT_EQ(serial, run(2));
}

TEST(WorkerPoolTest, RunsEveryIndexOnce) {
  WorkerPool pool(4);
  for (int n : {0, 1, 31, 32, 1000, 5000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.Until(n, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); });
    for (int i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << n << " " << i;
  }
}

// A worker that wakes for a job the caller already finished alone must not
// take part in the next one with that job's chunk size or count (such a
// worker claimed one chunk size and ran another: indices of the next job
// ran twice or never). Jobs of alternating sizes, each short enough for the
// caller to finish before a worker wakes, make that interleaving frequent.
TEST(WorkerPoolTest, LateWorkerDoesNotMixJobs) {
  WorkerPool pool(4);
  if (pool.parallelism() < 2) GTEST_SKIP() << "needs two hardware threads";
  std::vector<std::atomic<int>> hits(1000);
  for (int round = 0; round < 20000; ++round) {
    const int n = round % 2 == 0 ? 1000 : 40;
    for (int i = 0; i < n; ++i) hits[static_cast<size_t>(i)].store(0);
    pool.Until(n, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); });
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "round " << round << " index " << i;
  }
}

}  // namespace
}  // namespace gantry::framework
