// Tests of the scheduling loop with small fake plugins: binding, failure
// handling upstream's way, requeue on events, other schedulers' pods.
#include "src/scheduler/scheduler.h"

#include "gtest/gtest.h"
#include "src/framework/parallelize.h"
#include "test/testing/objects.h"
#include "test/unit/framework/fake_plugins.h"

namespace gantry::scheduler {
namespace {

using gantry::testing::SimpleNode;
using gantry::testing::SimplePod;

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gantry::testing::RegisterFakePlugins(registry_);
    auto fw = framework::Framework::Create(gantry::testing::FakeProfile(), registry_, writer_,
                                           clock_, pool_);
    ASSERT_TRUE(fw.ok()) << fw.status();
    sched_.AddProfile(*std::move(fw));
    sched_.Start(1'000'000, 10'000'000);
  }
  void AddNode(std::string name, int64_t cpu) {
    sched_.OnNodeAdd(std::make_shared<const api::Node>(SimpleNode(name, cpu, 1LL << 34)));
  }
  std::shared_ptr<const api::Pod> AddPod(std::string name, int64_t cpu,
                                         std::string scheduler = "gantry-scheduler") {
    api::Pod pod = SimplePod(name, cpu, 0);
    pod.scheduler_name = api::Symbol::Intern(scheduler);
    auto ptr = std::make_shared<const api::Pod>(std::move(pod));
    sched_.OnPodAdd(ptr);
    return ptr;
  }
  // Runs the loop and confirms bindings the way the API server's watch would.
  void Drain() {
    while (true) {
      sched_.queue().FlushBackoffQCompleted();
      if (!sched_.ScheduleOne(false)) break;
      ConfirmBindings();
    }
  }
  void ConfirmBindings() {
    for (; confirmed_ < writer_.bindings.size(); ++confirmed_) {
      const auto& [key, node] = writer_.bindings[confirmed_];
      auto it = pods_.find(key);
      if (it == pods_.end()) continue;
      auto bound = std::make_shared<api::Pod>(*it->second);
      bound->node_name = api::Symbol::Intern(node);
      sched_.OnPodUpdate(it->second, bound);
      pods_[key] = bound;
    }
  }
  void Track(const std::shared_ptr<const api::Pod>& p) { pods_[p->meta.Key()] = p; }
  std::string BoundTo(std::string key) {
    for (const auto& [k, n] : writer_.bindings) {
      if (k == key) return n;
    }
    return "";
  }

  framework::Registry registry_;
  gantry::testing::FakeHandle writer_;
  FakeClock clock_{1'000'000'000};
  framework::WorkerPool pool_{1};
  state::ClusterState state_{clock_};
  Scheduler sched_{state_, writer_, clock_, SchedulerOptions{}};
  size_t confirmed_ = 0;
  std::map<std::string, std::shared_ptr<const api::Pod>> pods_;
};

TEST_F(SchedulerTest, BindsWhatFitsAndReportsTheRest) {
  AddNode("a", 1000);
  AddNode("b", 1000);
  for (std::string n : {"p1", "p2", "p3"}) Track(AddPod(n, 600));
  Drain();
  EXPECT_EQ(writer_.bindings.size(), 2u);
  EXPECT_NE(BoundTo("default/p1"), BoundTo("default/p2"));
  EXPECT_EQ(BoundTo("default/p3"), "");
  ASSERT_FALSE(writer_.events.empty());
  const framework::EventRecord& last = writer_.events.back();
  EXPECT_EQ(last.reason, "FailedScheduling");
  EXPECT_EQ(last.type, "Warning");
  EXPECT_EQ(last.name, "p3");
  EXPECT_EQ(last.note, "0/2 nodes are available: 2 Insufficient cpu.");
  EXPECT_EQ(last.reporting_controller, "gantry-scheduler");
  int scheduled_events = 0;
  for (const auto& e : writer_.events) scheduled_events += e.reason == "Scheduled";
  EXPECT_EQ(scheduled_events, 2);

  // A new node is an event FakeFit registered for: p3 is retried after backoff.
  AddNode("c", 1000);
  Drain();
  EXPECT_EQ(BoundTo("default/p3"), "") << "still backing off";
  clock_.Advance(2'000'000);
  Drain();
  EXPECT_EQ(BoundTo("default/p3"), "c");
}

TEST_F(SchedulerTest, DeletedPodFreesRoomForWaitingPod) {
  AddNode("a", 1000);
  auto p1 = AddPod("p1", 800);
  Track(p1);
  Track(AddPod("p2", 800));
  Drain();
  ASSERT_EQ(BoundTo("default/p1"), "a");
  ASSERT_EQ(BoundTo("default/p2"), "");
  sched_.OnPodDelete(pods_["default/p1"]);
  clock_.Advance(2'000'000);
  Drain();
  EXPECT_EQ(BoundTo("default/p2"), "a");
}

TEST_F(SchedulerTest, NeverTouchesOtherSchedulersPods) {
  AddNode("a", 1000);
  AddPod("theirs", 100, "default-scheduler");
  Drain();
  EXPECT_TRUE(writer_.bindings.empty());
  EXPECT_TRUE(writer_.events.empty());
}

TEST_F(SchedulerTest, ExistingLoadCounts) {
  AddNode("a", 1000);
  api::Pod existing = SimplePod("existing", 900, 0);
  existing.node_name = api::Symbol::Intern("a");
  existing.scheduler_name = api::Symbol::Intern("default-scheduler");
  sched_.OnPodAdd(std::make_shared<const api::Pod>(existing));
  Track(AddPod("p", 200));
  Drain();
  EXPECT_EQ(BoundTo("default/p"), "");
  EXPECT_EQ(writer_.events.back().note, "0/1 nodes are available: 1 Insufficient cpu.");
}

TEST_F(SchedulerTest, PodsWithVolumeClaimsAreNeverBoundBlindly) {
  AddNode("a", 1000);
  api::Pod pod = SimplePod("db", 100, 0);
  pod.pvc_names = {"data"};
  sched_.OnPodAdd(std::make_shared<const api::Pod>(pod));
  Drain();
  EXPECT_TRUE(writer_.bindings.empty());
  ASSERT_FALSE(writer_.events.empty());
  EXPECT_EQ(writer_.events.back().note,
            "0/1 nodes are available: pod has PersistentVolumeClaim volumes (data) and volume "
            "binding is not "
            "supported by this build of Gantry (VolumeBinding is not built in).");
}

}  // namespace
}  // namespace gantry::scheduler
