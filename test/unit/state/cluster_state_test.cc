// Tests of ClusterState: assume/forget/expiry, confirmation by the event
// source, incremental snapshots and priority resolution.
#include "src/state/cluster_state.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/testing/objects.h"

namespace gantry::state {
namespace {

using gantry::testing::SimpleNode;
using gantry::testing::SimplePod;

std::shared_ptr<const api::Pod> Bound(api::Pod pod, std::string_view node) {
  pod.node_name = api::Symbol::Intern(node);
  return std::make_shared<const api::Pod>(std::move(pod));
}

class ClusterStateTest : public ::testing::Test {
 protected:
  FakeClock clock_{1'000'000};
  ClusterState state_{clock_, 30'000'000};
  Snapshot snapshot_;

  void SetUp() override {
    state_.AddOrUpdateNode(std::make_shared<const api::Node>(SimpleNode("a", 4000, 1 << 30)));
    state_.AddOrUpdateNode(std::make_shared<const api::Node>(SimpleNode("b", 4000, 1 << 30)));
  }
  int64_t Requested(std::string_view node) {
    state_.UpdateSnapshot(&snapshot_);
    return snapshot_.Get(node)->requested().milli_cpu;
  }
};

TEST_F(ClusterStateTest, AssumeForgetAndConfirm) {
  auto pod = state_.MakePodInfo(std::make_shared<const api::Pod>(SimplePod("p", 500, 0)));
  ASSERT_TRUE(state_.Assume(pod, "a").ok());
  EXPECT_TRUE(state_.IsAssumed(pod->uid()));
  EXPECT_EQ(Requested("a"), 500);
  EXPECT_FALSE(state_.Assume(pod, "b").ok()) << "a pod is assumed once";
  ASSERT_TRUE(state_.Forget(pod->uid()).ok());
  EXPECT_EQ(Requested("a"), 0);
  EXPECT_FALSE(state_.Forget(pod->uid()).ok());

  ASSERT_TRUE(state_.Assume(pod, "a").ok());
  state_.FinishBinding(pod->uid());
  state_.AddOrUpdateBoundPod(Bound(SimplePod("p", 500, 0), "a"));  // informer confirms
  EXPECT_FALSE(state_.IsAssumed(pod->uid()));
  EXPECT_EQ(Requested("a"), 500);
  EXPECT_FALSE(state_.Forget(pod->uid()).ok()) << "a bound pod cannot be forgotten";
  clock_.Advance(60'000'000);
  EXPECT_TRUE(state_.CleanupExpiredAssumedPods().empty());
  EXPECT_EQ(Requested("a"), 500);
}

// The cache-size gauges (scheduler_cache_size) read these counts.
TEST_F(ClusterStateTest, CountsFollowAssumeConfirmAndRemove) {
  struct Step {
    std::string what;
    std::function<void()> apply;
    size_t nodes, pods, assumed, groups;
  };
  auto group = [](std::string key, bool composite) {
    GroupInfo g;
    g.key = std::move(key);
    g.composite = composite;
    return g;
  };
  auto p = state_.MakePodInfo(std::make_shared<const api::Pod>(SimplePod("p", 500, 0)));
  auto q = state_.MakePodInfo(std::make_shared<const api::Pod>(SimplePod("q", 500, 0)));
  const std::vector<Step> steps = {
      {"start", [] {}, 2, 0, 0, 0},
      {"assume p", [&] { ASSERT_TRUE(state_.Assume(p, "a").ok()); }, 2, 1, 1, 0},
      {"assume q", [&] { ASSERT_TRUE(state_.Assume(q, "b").ok()); }, 2, 2, 2, 0},
      {"p bound and confirmed",
       [&] {
         state_.FinishBinding(p->uid());
         state_.AddOrUpdateBoundPod(Bound(SimplePod("p", 500, 0), "a"));
       },
       2, 2, 1, 0},
      {"forget q", [&] { ASSERT_TRUE(state_.Forget(q->uid()).ok()); }, 2, 1, 0, 0},
      {"p deleted", [&] { state_.RemovePod(p->uid()); }, 2, 0, 0, 0},
      {"a PodGroup and a CompositePodGroup",
       [&] {
         state_.SetGroup(group("default/g", false));
         state_.SetCompositeGroup(group("default/cg", true));
       },
       2, 0, 0, 2},
      {"the PodGroup deleted", [&] { state_.RemoveGroup("default/g"); }, 2, 0, 0, 1},
      {"node c added",
       [&] {
         state_.AddOrUpdateNode(std::make_shared<const api::Node>(SimpleNode("c", 1000, 1 << 30)));
       },
       3, 0, 0, 1},
  };
  for (const Step& step : steps) {
    step.apply();
    EXPECT_EQ(state_.NodeCount(), step.nodes) << step.what;
    EXPECT_EQ(state_.PodCount(), step.pods) << step.what;
    EXPECT_EQ(state_.AssumedPodCount(), step.assumed) << step.what;
    EXPECT_EQ(state_.GroupCount(), step.groups) << step.what;
  }
}

TEST_F(ClusterStateTest, ExpiresUnconfirmedAssumedPods) {
  auto pod = state_.MakePodInfo(std::make_shared<const api::Pod>(SimplePod("p", 700, 0)));
  ASSERT_TRUE(state_.Assume(pod, "b").ok());
  clock_.Advance(60'000'000);
  EXPECT_TRUE(state_.CleanupExpiredAssumedPods().empty()) << "binding not finished: never expires";
  state_.FinishBinding(pod->uid());
  clock_.Advance(29'000'000);
  EXPECT_TRUE(state_.CleanupExpiredAssumedPods().empty());
  clock_.Advance(2'000'000);
  EXPECT_EQ(state_.CleanupExpiredAssumedPods(), std::vector<std::string>{"default/p"});
  EXPECT_EQ(Requested("b"), 0);
}

// Upstream never expires a bound assumed pod (durationToExpireAssumedPod = 0):
// with the default TTL a pod whose binding finished keeps its capacity however
// long the pod watch lags, until the informer confirms or removes it.
TEST(ClusterStateDefaultsTest, BoundAssumedPodsNeverExpire) {
  FakeClock clock{1'000'000};
  ClusterState state{clock};
  state.AddOrUpdateNode(std::make_shared<const api::Node>(SimpleNode("a", 4000, 1 << 30)));
  auto pod = state.MakePodInfo(std::make_shared<const api::Pod>(SimplePod("p", 700, 0)));
  ASSERT_TRUE(state.Assume(pod, "a").ok());
  state.FinishBinding(pod->uid());
  Snapshot snapshot;
  for (int minute = 1; minute <= 60; ++minute) {
    clock.Advance(60'000'000);
    EXPECT_TRUE(state.CleanupExpiredAssumedPods().empty()) << "minute " << minute;
  }
  state.UpdateSnapshot(&snapshot);
  EXPECT_EQ(snapshot.Get("a")->requested().milli_cpu, 700);
  EXPECT_TRUE(state.IsAssumed(pod->uid()));
  state.RemovePod(pod->uid());  // the informer's delete ends it
  state.UpdateSnapshot(&snapshot);
  EXPECT_EQ(snapshot.Get("a")->requested().milli_cpu, 0);
}

TEST_F(ClusterStateTest, SnapshotCopiesOnlyChangedNodes) {
  state_.UpdateSnapshot(&snapshot_);
  ASSERT_EQ(snapshot_.size(), 2u);
  const framework::NodeInfo* a_before = snapshot_.Get("a");
  uint64_t gen_a = a_before->generation();
  uint64_t gen_b = snapshot_.Get("b")->generation();
  state_.AddOrUpdateBoundPod(Bound(SimplePod("x", 100, 0), "b"));
  state_.UpdateSnapshot(&snapshot_);
  EXPECT_EQ(snapshot_.Get("a")->generation(), gen_a);
  EXPECT_NE(snapshot_.Get("b")->generation(), gen_b);
  EXPECT_EQ(snapshot_.Get("b")->pods().size(), 1u);
  state_.RemovePod("uid-default/x");
  state_.RemoveNode("a");
  state_.UpdateSnapshot(&snapshot_);
  EXPECT_EQ(snapshot_.size(), 1u);
  EXPECT_EQ(snapshot_.Get("a"), nullptr);
  EXPECT_TRUE(snapshot_.Get("b")->pods().empty());
}

// Snapshot::Generations() must equal every listed NodeInfo's generation
// after each kind of change: pod updates copied in, direct mutations of a
// snapshot NodeInfo, nodes added and removed; copies never write into it.
TEST_F(ClusterStateTest, SnapshotMirrorsGenerationsByPosition) {
  auto expect_mirrored = [&](const char* step) {
    const auto& list = snapshot_.NodeInfos();
    ASSERT_EQ(snapshot_.Generations().size(), list.size()) << step;
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(snapshot_.Generations()[i], list[i]->generation()) << step << ", node " << list[i]->name();
    }
  };
  state_.UpdateSnapshot(&snapshot_);
  expect_mirrored("first snapshot");
  state_.AddOrUpdateBoundPod(Bound(SimplePod("x", 100, 0), "b"));
  state_.UpdateSnapshot(&snapshot_);
  expect_mirrored("pod bound to b");

  framework::NodeInfo* b = snapshot_.GetMutable("b");
  const uint64_t before = snapshot_.Generations()[1];
  framework::NodeInfo copy = *b;
  copy.AddPod(state_.MakePodInfo(std::make_shared<const api::Pod>(SimplePod("what-if", 100, 0))));
  EXPECT_EQ(snapshot_.Generations()[1], before) << "a copy's mutation must not reach the snapshot";
  b->AddPod(state_.MakePodInfo(std::make_shared<const api::Pod>(SimplePod("nominated", 100, 0))));
  EXPECT_NE(snapshot_.Generations()[1], before);
  expect_mirrored("snapshot NodeInfo mutated in place");

  state_.AddOrUpdateNode(std::make_shared<const api::Node>(SimpleNode("c", 1000, 1 << 30)));
  state_.UpdateSnapshot(&snapshot_);
  expect_mirrored("node c added");
  state_.RemoveNode("a");
  state_.UpdateSnapshot(&snapshot_);
  expect_mirrored("node a removed");
  state_.AddOrUpdateBoundPod(Bound(SimplePod("y", 100, 0), "c"));
  state_.UpdateSnapshot(&snapshot_);
  expect_mirrored("pod bound to c after the rebuild");
}

TEST_F(ClusterStateTest, PodOnUnknownNodeCountsOnceNodeArrives) {
  state_.AddOrUpdateBoundPod(Bound(SimplePod("early", 300, 0), "c"));
  state_.UpdateSnapshot(&snapshot_);
  EXPECT_EQ(snapshot_.Get("c"), nullptr) << "no Node object yet: not schedulable";
  state_.AddOrUpdateNode(std::make_shared<const api::Node>(SimpleNode("c", 1000, 1 << 30)));
  EXPECT_EQ(Requested("c"), 300);
  EXPECT_EQ(snapshot_.NodeInfos().size(), 3u);
}

TEST_F(ClusterStateTest, ResolvesPriority) {
  state_.SetPriorityClass(api::Symbol::Intern("high"), PriorityClassInfo{1000, false, std::nullopt});
  api::Pod explicit_prio = SimplePod("e", 1, 0);
  explicit_prio.priority = 7;
  explicit_prio.priority_class_name = api::Symbol::Intern("high");
  api::Pod by_class = SimplePod("c", 1, 0);
  by_class.priority_class_name = api::Symbol::Intern("high");
  api::Pod missing = SimplePod("m", 1, 0);
  missing.priority_class_name = api::Symbol::Intern("nope");
  api::Pod none = SimplePod("n", 1, 0);
  EXPECT_EQ(state_.ResolvePriority(explicit_prio), 7);
  EXPECT_EQ(state_.ResolvePriority(by_class), 1000);
  EXPECT_EQ(state_.ResolvePriority(missing), 0);
  EXPECT_EQ(state_.ResolvePriority(none), 0);
  state_.SetPriorityClass(api::Symbol::Intern("default"), PriorityClassInfo{50, true, std::nullopt});
  EXPECT_EQ(state_.ResolvePriority(none), 50);
}

}  // namespace
}  // namespace gantry::state
