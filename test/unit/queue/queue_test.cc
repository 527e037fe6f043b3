// Tests of the scheduling queue, all in virtual time (FakeClock).
#include "src/queue/scheduling_queue.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/testing/objects.h"

namespace gantry::queue {
namespace {

using framework::ClusterEvent;
using framework::ClusterEventWithHint;
using framework::EventResource;
using framework::QueueingHint;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kSecond = 1'000'000;
constexpr std::string_view kFit = "NodeResourcesFit";
constexpr std::string_view kAffinity = "InterPodAffinity";
constexpr std::string_view kGates = "SchedulingGates";
constexpr std::string_view kClaims = "DynamicResources";

std::string Uid(std::string_view name) {
  std::string uid = "uid-default/";
  uid.append(name);
  return uid;
}

api::Pod MakePod(std::string_view name, int32_t priority = 0) {
  api::Pod pod = testing::SimplePod(name, 100, 0);
  pod.priority = priority;
  return pod;
}

PodInfoPtr Info(std::string_view name, int32_t priority = 0) {
  return testing::MakePodInfo(MakePod(name, priority));
}

ClusterEvent Event(EventResource r, uint32_t actions, std::string label = "Test") {
  return ClusterEvent{r, actions, std::move(label)};
}

ClusterEvent NodeAdd() { return Event(EventResource::kNode, framework::kAdd, "NodeAdd"); }
ClusterEvent NodeLabel() {
  return Event(EventResource::kNode, framework::kUpdateNodeLabel, "NodeUpdate");
}

// SchedulingGates-like PreEnqueue: rejects pods with gates.
class GatesPlugin : public framework::PreEnqueuePlugin {
 public:
  std::string_view Name() const override { return kGates; }
  framework::Status PreEnqueue(const framework::PodInfo& pod) override {
    ++calls;
    if (pod.p().IsGated()) return framework::Status::Unresolvable("waiting for scheduling gates");
    return framework::Status();
  }
  int calls = 0;
};

// Rejects every pod until `ready` (e.g. a claim that does not exist yet).
class ClaimsPlugin : public framework::PreEnqueuePlugin {
 public:
  std::string_view Name() const override { return kClaims; }
  framework::Status PreEnqueue(const framework::PodInfo&) override {
    return ready ? framework::Status() : framework::Status::Unresolvable("claim missing");
  }
  bool ready = false;
};

class QueueTest : public ::testing::Test {
 protected:
  QueueTest() {
    // Fit: helped by node adds/allocatable changes and assigned pod deletes.
    options_.events[std::string(kFit)] = {
        {Event(EventResource::kNode, framework::kAdd | framework::kUpdateNodeAllocatable), nullptr},
        {Event(EventResource::kAssignedPod, framework::kDelete), nullptr},
        {Event(EventResource::kUnscheduledPod, framework::kUpdatePodScaleDown), nullptr},
    };
    // Affinity: helped by assigned pods appearing or relabelled, and node label changes.
    options_.events[std::string(kAffinity)] = {
        {Event(EventResource::kAssignedPod, framework::kAdd | framework::kUpdatePodLabel), nullptr},
        {Event(EventResource::kNode, framework::kAdd | framework::kUpdateNodeLabel), nullptr},
    };
    options_.events[std::string(kGates)] = {
        {Event(EventResource::kUnscheduledPod, framework::kUpdatePodSchedulingGatesEliminated),
         nullptr},
    };
    options_.events[std::string(kClaims)] = {
        {Event(EventResource::kResourceClaim, framework::kAdd), nullptr},
    };
    options_.events["NeverHelped"] = {};  // registered, but for nothing
    options_.profiles["gantry-scheduler"].pre_enqueue = {&gates_, &claims_};
    claims_.ready = true;
  }

  SchedulingQueue& q() {
    if (!queue_) queue_ = std::make_unique<SchedulingQueue>(clock_, options_);
    return *queue_;
  }

  // Pops `name` (must be next) and fails it with `plugins` (empty: Error).
  void PopAndFail(std::string_view name, std::vector<std::string> plugins,
                  std::vector<std::string> pending = {}) {
    std::optional<QueuedPodInfo> qpi = q().TryPop();
    ASSERT_TRUE(qpi.has_value());
    ASSERT_EQ(qpi->pod_info->p().meta.name, name);
    int64_t cycle = q().SchedulingCycle();
    for (auto& p : plugins) qpi->unschedulable_plugins.insert(p);
    for (auto& p : pending) qpi->pending_plugins.insert(p);
    ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*qpi), cycle).ok());
    q().Done(Uid(name));
  }

  std::optional<QueueName> Where(std::string_view name) { return q().Where(Uid(name)); }

  std::vector<std::string> DrainNames() {
    std::vector<std::string> out;
    while (auto qpi = q().TryPop()) {
      out.push_back(qpi->pod_info->p().meta.name);
      q().Done(qpi->pod_info->uid());
    }
    return out;
  }

  FakeClock clock_{1'000 * kSecond};
  QueueOptions options_;
  GatesPlugin gates_;
  ClaimsPlugin claims_;
  std::unique_ptr<SchedulingQueue> queue_;
};

// ---- Ordering --------------------------------------------------------------

TEST_F(QueueTest, ActiveQOrder) {
  struct PodSpec {
    std::string name;
    int32_t priority;
    int64_t add_after_micros;  // clock advance before adding
  };
  struct TestCase {
    std::string name;
    std::vector<PodSpec> pods;
    std::vector<std::string> want;
  };
  const std::vector<TestCase> cases = {
      {"priority desc", {{"low", 1, 0}, {"high", 100, 0}, {"mid", 10, 0}}, {"high", "mid", "low"}},
      {"fifo within priority", {{"a", 5, 0}, {"b", 5, 10}, {"c", 5, 10}}, {"a", "b", "c"}},
      {"same timestamp keeps insertion order", {{"z", 0, 0}, {"y", 0, 0}, {"x", 0, 0}},
       {"z", "y", "x"}},
      {"priority beats age", {{"old", 0, 0}, {"new", 1, 1000}}, {"new", "old"}},
      {"negative priority last", {{"neg", -5, 0}, {"zero", 0, 5}}, {"zero", "neg"}},
  };
  for (const TestCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    queue_.reset();
    for (const PodSpec& p : tc.pods) {
      clock_.Advance(p.add_after_micros);
      q().Add(Info(p.name, p.priority));
    }
    EXPECT_EQ(DrainNames(), tc.want);
  }
}

TEST_F(QueueTest, QueueSortPluginOrdersActiveQ) {
  // Reverse-name order, to prove the plugin (not the default) is used.
  class ByNameDesc : public framework::QueueSortPlugin {
   public:
    std::string_view Name() const override { return "ByNameDesc"; }
    bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
      return a.pod_info->p().meta.name > b.pod_info->p().meta.name;
    }
  } plugin;
  options_.less = LessFromPlugin(&plugin);
  for (std::string_view n : {"b", "d", "a", "c"}) q().Add(Info(n));
  EXPECT_THAT(DrainNames(), ElementsAre("d", "c", "b", "a"));
}

TEST_F(QueueTest, PrioritySortPluginUsesFastPath) {
  class PrioritySort : public framework::QueueSortPlugin {
   public:
    std::string_view Name() const override { return "PrioritySort"; }
    bool Less(const QueuedPodInfo&, const QueuedPodInfo&) const override { return false; }
  } plugin;
  EXPECT_FALSE(static_cast<bool>(LessFromPlugin(&plugin)));
  EXPECT_FALSE(static_cast<bool>(LessFromPlugin(nullptr)));
  // The fast path and DefaultLess agree.
  options_.less = DefaultLess();
  for (int i = 0; i < 50; ++i) {
    clock_.Advance(i % 3);
    q().Add(Info("p" + std::to_string(i), (i * 7) % 5));
  }
  std::vector<std::string> with_fn = DrainNames();
  options_.less = nullptr;
  queue_.reset();
  clock_.Set(1'000 * kSecond);
  for (int i = 0; i < 50; ++i) {
    clock_.Advance(i % 3);
    q().Add(Info("p" + std::to_string(i), (i * 7) % 5));
  }
  EXPECT_EQ(DrainNames(), with_fn);
}

TEST_F(QueueTest, UpdateReordersActiveQ) {
  q().Add(Info("a", 1));
  q().Add(Info("b", 2));
  q().Update(Info("a", 3));  // priority rises (upstream forbids it, but the heap must cope)
  EXPECT_THAT(DrainNames(), ElementsAre("a", "b"));
}

TEST_F(QueueTest, DeleteFromEachQueue) {
  q().Add(Info("active"));
  q().Add(Info("x"));
  q().Add(Info("y"));
  PopAndFail("active", {});  // -> backoff... re-add order: x, y popped next
  PopAndFail("x", {std::string(kFit)});
  api::Pod gated = MakePod("gated");
  gated.scheduling_gates.push_back(api::Symbol::Intern("g"));
  q().Add(testing::MakePodInfo(gated));
  EXPECT_EQ(Where("active"), QueueName::kBackoff);
  EXPECT_EQ(Where("x"), QueueName::kUnschedulable);
  EXPECT_EQ(Where("y"), QueueName::kActive);
  EXPECT_EQ(Where("gated"), QueueName::kGated);
  for (std::string_view n : {"active", "x", "y", "gated"}) q().Delete(Uid(n));
  PendingPods p = q().Pending();
  EXPECT_EQ(p.active + p.backoff + p.unschedulable + p.gated + p.in_flight, 0);
  for (std::string_view n : {"active", "x", "y", "gated"}) EXPECT_EQ(Where(n), std::nullopt);
}

// ---- Backoff ---------------------------------------------------------------

TEST_F(QueueTest, BackoffDurationDoublesAndCaps) {
  struct TestCase {
    int64_t initial, max;
    int32_t attempts;
    int64_t want;
  };
  const std::vector<TestCase> cases = {
      {1, 10, 0, 0},  {1, 10, 1, 1},   {1, 10, 2, 2},   {1, 10, 3, 4},  {1, 10, 4, 8},
      {1, 10, 5, 10}, {1, 10, 6, 10},  {1, 10, 1000, 10}, {3, 5, 1, 3}, {3, 5, 2, 5},
      {2, 2, 7, 2},   {1, 1 << 30, 31, 1 << 30},
  };
  for (const TestCase& tc : cases) {
    SCOPED_TRACE(::testing::PrintToString(std::vector<int64_t>{tc.initial, tc.max, tc.attempts}));
    options_.pod_initial_backoff_micros = tc.initial * kSecond;
    options_.pod_max_backoff_micros = tc.max * kSecond;
    SchedulingQueue queue(clock_, options_);
    EXPECT_EQ(queue.BackoffDurationMicros(tc.attempts), tc.want * kSecond);
  }
}

TEST_F(QueueTest, ErrorBacksOffWithDoublingInVirtualTime) {
  q().Add(Info("p"));
  // attempt n waits 1, 2, 4, 8, 10, 10 s.
  for (int64_t want : {1, 2, 4, 8, 10, 10}) {
    SCOPED_TRACE(want);
    PopAndFail("p", {});  // Error: no rejecting plugin
    EXPECT_EQ(Where("p"), QueueName::kBackoff);
    EXPECT_EQ(q().NextBackoffExpiryMicros(), clock_.NowMicros() + want * kSecond);
    clock_.Advance(want * kSecond - 1);
    q().FlushBackoffQCompleted();
    EXPECT_EQ(Where("p"), QueueName::kBackoff);
    EXPECT_FALSE(q().TryPop().has_value());
    clock_.Advance(1);
    q().FlushBackoffQCompleted();
    EXPECT_EQ(Where("p"), QueueName::kActive);
  }
}

TEST_F(QueueTest, BackoffQFlushesInExpiryOrder) {
  for (std::string_view n : {"a", "b", "c"}) q().Add(Info(n));
  PopAndFail("a", {});
  PopAndFail("b", {});
  PopAndFail("c", {});
  // Same attempt count and failure time: equal expiry, FIFO among them.
  clock_.Advance(kSecond);
  q().FlushBackoffQCompleted();
  EXPECT_THAT(DrainNames(), ElementsAre("a", "b", "c"));
  EXPECT_FALSE(q().NextBackoffExpiryMicros().has_value());
}

// ---- Unschedulable and events ---------------------------------------------

TEST_F(QueueTest, UnschedulableMovesOnMatchingEventOnly) {
  struct TestCase {
    std::string name;
    std::vector<std::string> rejectors;
    ClusterEvent event;
    bool moves;
  };
  const std::vector<TestCase> cases = {
      {"fit: node add", {std::string(kFit)}, NodeAdd(), true},
      {"fit: node label is not enough", {std::string(kFit)}, NodeLabel(), false},
      {"fit: assigned pod delete",
       {std::string(kFit)},
       Event(EventResource::kAssignedPod, framework::kDelete),
       true},
      {"fit: pod-level delete matches assigned delete registration? no (resource differs)",
       {std::string(kFit)},
       Event(EventResource::kPod, framework::kDelete),
       false},
      {"fit: assigned pod add", {std::string(kFit)},
       Event(EventResource::kAssignedPod, framework::kAdd), false},
      {"affinity: node label", {std::string(kAffinity)}, NodeLabel(), true},
      {"two rejectors, one helped",
       {std::string(kFit), std::string(kAffinity)},
       NodeLabel(),
       true},
      {"wildcard moves everything", {std::string(kFit)},
       Event(EventResource::kWildcard, framework::kAll), true},
      {"unregistered plugin: every event", {"Unknown"},
       Event(EventResource::kDeviceClass, framework::kUpdateOther), true},
      {"registered for nothing", {"NeverHelped"}, NodeAdd(), false},
      {"claim add", {std::string(kClaims)},
       Event(EventResource::kResourceClaim, framework::kAdd), true},
  };
  for (const TestCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    queue_.reset();
    q().Add(Info("p"));
    PopAndFail("p", tc.rejectors);
    ASSERT_EQ(Where("p"), QueueName::kUnschedulable);
    q().MoveAllToActiveOrBackoffQueue(tc.event, nullptr, nullptr);
    if (tc.moves) {
      EXPECT_EQ(Where("p"), QueueName::kBackoff) << "still backing off after 0 s";
    } else {
      EXPECT_EQ(Where("p"), QueueName::kUnschedulable);
    }
  }
}

TEST_F(QueueTest, MovedPodGoesToActiveOnceBackoffExpired) {
  q().Add(Info("p"));
  PopAndFail("p", {std::string(kFit)});
  clock_.Advance(kSecond);  // attempt 1 backoff is 1 s
  q().MoveAllToActiveOrBackoffQueue(NodeAdd(), nullptr, nullptr);
  EXPECT_EQ(Where("p"), QueueName::kActive);
}

TEST_F(QueueTest, PreCheckFiltersPods) {
  q().Add(Info("a"));
  q().Add(Info("b"));
  PopAndFail("a", {std::string(kFit)});
  PopAndFail("b", {std::string(kFit)});
  q().MoveAllToActiveOrBackoffQueue(NodeAdd(), nullptr, nullptr,
                                    [](const api::Pod& p) { return p.meta.name == "b"; });
  EXPECT_EQ(Where("a"), QueueName::kUnschedulable);
  EXPECT_EQ(Where("b"), QueueName::kBackoff);
}

TEST_F(QueueTest, QueueingHintSkipVersusQueue) {
  // Fit is helped by a node add only if the node has label gpu=true.
  options_.events[std::string(kFit)] = {
      {Event(EventResource::kNode, framework::kAdd),
       [](const api::Pod&, const ClusterEvent&, const void*, const void* new_obj) {
         const auto* node = static_cast<const api::Node*>(new_obj);
         if (node && api::FindLabel(node->meta.labels, "gpu").has_value()) {
           return QueueingHint::kQueue;
         }
         return QueueingHint::kSkip;
       }},
  };
  struct TestCase {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;
    bool moves;
  };
  const std::vector<TestCase> cases = {
      {"hint skip", {{"zone", "a"}}, false},
      {"hint queue", {{"gpu", "true"}}, true},
  };
  for (const TestCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    queue_.reset();
    q().Add(Info("p"));
    PopAndFail("p", {std::string(kFit)});
    auto node = std::make_shared<const api::Node>(testing::SimpleNode("n", 1000, 1000, 110, tc.labels));
    q().MoveAllToActiveOrBackoffQueue(NodeAdd(), nullptr, node);
    EXPECT_EQ(Where("p"), tc.moves ? QueueName::kBackoff : QueueName::kUnschedulable);
  }
}

TEST_F(QueueTest, HintSeesObjectsWhoseLastReferenceWasHandedOver) {
  // An informer replaces its stored object and passes the old one (its last
  // reference) to the handler: the hints must still be able to read it.
  bool deleted = false;
  bool alive_in_hint = false;
  options_.events[std::string(kFit)] = {
      {Event(EventResource::kNode, framework::kUpdate),
       [&](const api::Pod&, const ClusterEvent&, const void* old_obj, const void*) {
         alive_in_hint = old_obj != nullptr && !deleted;
         return QueueingHint::kQueue;
       }},
  };
  queue_.reset();
  q().Add(Info("p"));
  PopAndFail("p", {std::string(kFit)});
  std::shared_ptr<const api::Node> old_node(new api::Node(testing::SimpleNode("n", 1000, 1000, 110)),
                                            [&deleted](const api::Node* n) {
                                              deleted = true;
                                              delete n;
                                            });
  auto new_node = std::make_shared<const api::Node>(testing::SimpleNode("n", 2000, 1000, 110));
  q().MoveAllToActiveOrBackoffQueue(Event(EventResource::kNode, framework::kUpdateNodeAllocatable),
                                    std::move(old_node), new_node);
  EXPECT_TRUE(alive_in_hint);
  EXPECT_TRUE(deleted);  // released once the queue is done with it
  EXPECT_EQ(Where("p"), QueueName::kBackoff);
}

TEST_F(QueueTest, PendingPluginSkipsBackoff) {
  q().Add(Info("p"));
  PopAndFail("p", {std::string(kClaims)}, {std::string(kClaims)});
  EXPECT_EQ(Where("p"), QueueName::kUnschedulable);
  q().MoveAllToActiveOrBackoffQueue(Event(EventResource::kResourceClaim, framework::kAdd), nullptr,
                                    nullptr);
  EXPECT_EQ(Where("p"), QueueName::kActive);
}

TEST_F(QueueTest, AssignedPodHooks) {
  q().Add(Info("aff"));
  q().Add(Info("fit"));
  PopAndFail("aff", {std::string(kAffinity)});
  PopAndFail("fit", {std::string(kFit)});
  PodInfoPtr bound = Info("bound");
  q().AssignedPodAdded(bound);  // affinity registered AssignedPod add; fit did not
  EXPECT_EQ(Where("aff"), QueueName::kBackoff);
  EXPECT_EQ(Where("fit"), QueueName::kUnschedulable);

  // A status-only update of a bound pod is no event at all.
  api::Pod status_only = bound->p();
  status_only.phase = api::PodPhase::kRunning;
  q().AssignedPodUpdated(bound, testing::MakePodInfo(status_only));
  EXPECT_EQ(Where("fit"), QueueName::kUnschedulable);

  q().AssignedPodDeleted(bound);  // fit registered AssignedPod delete
  EXPECT_EQ(Where("fit"), QueueName::kBackoff);
}

TEST_F(QueueTest, AssignedPodLabelUpdateMovesAffinityPods) {
  q().Add(Info("aff"));
  PopAndFail("aff", {std::string(kAffinity)});
  api::Pod old_pod = MakePod("bound");
  api::Pod new_pod = old_pod;
  new_pod.meta.labels.emplace_back(api::Symbol::Intern("app"), api::Symbol::Intern("web"));
  q().AssignedPodUpdated(testing::MakePodInfo(old_pod), testing::MakePodInfo(new_pod));
  EXPECT_EQ(Where("aff"), QueueName::kBackoff);
}

TEST_F(QueueTest, UpdateOfUnschedulablePod) {
  struct TestCase {
    std::string name;
    std::function<void(api::Pod&)> change;
    std::optional<QueueName> want;
  };
  const std::vector<TestCase> cases = {
      {"status only stays", [](api::Pod& p) { p.phase = api::PodPhase::kPending;
                                              p.conditions.push_back({}); },
       QueueName::kUnschedulable},
      {"scale down helps fit", [](api::Pod& p) {
         p.requests.Set(api::ResourceNames::Get().cpu, 50); },
       QueueName::kBackoff},
      {"label change does not help fit", [](api::Pod& p) {
         p.meta.labels.emplace_back(api::Symbol::Intern("a"), api::Symbol::Intern("b")); },
       QueueName::kUnschedulable},
      {"other spec change always requeues", [](api::Pod& p) { p.meta.generation++; },
       QueueName::kBackoff},
  };
  for (const TestCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    queue_.reset();
    q().Add(Info("p"));
    PopAndFail("p", {std::string(kFit)});
    api::Pod pod = MakePod("p");
    tc.change(pod);
    q().Update(testing::MakePodInfo(pod));
    EXPECT_EQ(Where("p"), tc.want);
    // The stored pod is the new version either way.
    EXPECT_EQ(q().Get(Uid("p"))->pod_info->p().conditions.size(), pod.conditions.size());
  }
}

TEST_F(QueueTest, FlushUnschedulableLeftover) {
  q().Add(Info("p"));
  PopAndFail("p", {"NeverHelped"});
  EXPECT_EQ(q().NextUnschedulableTimeoutMicros(), clock_.NowMicros() + 300 * kSecond + 1);
  clock_.Advance(300 * kSecond);  // exactly 5 min: not yet (strictly longer)
  q().FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Where("p"), QueueName::kUnschedulable);
  clock_.Advance(1);
  q().FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Where("p"), QueueName::kActive);  // backoff (1 s) long over
  QueueMetrics m = q().Metrics();
  bool found = false;
  for (const IncomingPods& in : m.incoming) {
    if (in.queue == "active" && in.event == "UnschedulableTimeout") found = in.count == 1;
  }
  EXPECT_TRUE(found);
}

// ---- Gated pods ------------------------------------------------------------

TEST_F(QueueTest, GatedUntilGatesRemoved) {
  api::Pod pod = MakePod("g");
  pod.scheduling_gates.push_back(api::Symbol::Intern("example.com/wait"));
  q().Add(testing::MakePodInfo(pod));
  EXPECT_EQ(Where("g"), QueueName::kGated);
  EXPECT_EQ(q().Get(Uid("g"))->gating_plugin, kGates);
  EXPECT_FALSE(q().TryPop().has_value());
  EXPECT_EQ(q().Pending().gated, 1);

  // Unrelated events and a flush leave it gated.
  q().MoveAllToActiveOrBackoffQueue(NodeAdd(), nullptr, nullptr);
  clock_.Advance(301 * kSecond);
  q().FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Where("g"), QueueName::kGated);

  // An update that keeps the gate: still gated.
  pod.meta.labels.emplace_back(api::Symbol::Intern("x"), api::Symbol::Intern("y"));
  q().Update(testing::MakePodInfo(pod));
  EXPECT_EQ(Where("g"), QueueName::kGated);

  // Gates removed: straight to activeQ (never attempted, so no backoff).
  pod.scheduling_gates.clear();
  q().Update(testing::MakePodInfo(pod));
  EXPECT_EQ(Where("g"), QueueName::kActive);
  EXPECT_EQ(q().Get(Uid("g"))->gating_plugin, "");
  EXPECT_THAT(DrainNames(), ElementsAre("g"));
}

TEST_F(QueueTest, GatedPodRecheckedOnRegisteredEvent) {
  claims_.ready = false;
  q().Add(Info("c"));
  EXPECT_EQ(Where("c"), QueueName::kGated);
  EXPECT_EQ(q().Get(Uid("c"))->gating_plugin, kClaims);
  claims_.ready = true;
  q().MoveAllToActiveOrBackoffQueue(NodeAdd(), nullptr, nullptr);  // not registered by Claims
  EXPECT_EQ(Where("c"), QueueName::kGated);
  q().MoveAllToActiveOrBackoffQueue(Event(EventResource::kResourceClaim, framework::kAdd), nullptr,
                                    nullptr);
  EXPECT_EQ(Where("c"), QueueName::kActive);
}

TEST_F(QueueTest, PreEnqueueRunsAgainOnRequeue) {
  q().Add(Info("p"));
  PopAndFail("p", {std::string(kFit)});
  claims_.ready = false;  // a claim went away meanwhile
  q().MoveAllToActiveOrBackoffQueue(NodeAdd(), nullptr, nullptr);
  EXPECT_EQ(Where("p"), QueueName::kGated);
}

// ---- In flight -------------------------------------------------------------

TEST_F(QueueTest, InFlightEventIsNotLost) {
  struct TestCase {
    std::string name;
    bool event_before_pop;
    ClusterEvent event;
    std::optional<QueueName> want;
  };
  const std::vector<TestCase> cases = {
      {"relevant event during attempt", false, NodeAdd(), QueueName::kBackoff},
      {"irrelevant event during attempt", false, NodeLabel(), QueueName::kUnschedulable},
      {"event before the pop does not count", true, NodeAdd(), QueueName::kUnschedulable},
  };
  for (const TestCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    queue_.reset();
    q().Add(Info("p"));
    q().Add(Info("other"));
    std::optional<QueuedPodInfo> other;
    if (tc.event_before_pop) {
      other = q().TryPop();  // keep something in flight so events are recorded
      q().MoveAllToActiveOrBackoffQueue(tc.event, nullptr, nullptr);
    }
    std::optional<QueuedPodInfo> qpi = q().TryPop();
    ASSERT_TRUE(qpi.has_value());
    int64_t cycle = q().SchedulingCycle();
    if (!tc.event_before_pop) q().MoveAllToActiveOrBackoffQueue(tc.event, nullptr, nullptr);
    qpi->unschedulable_plugins.insert(std::string(kFit));
    std::string uid = qpi->pod_info->uid();
    ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*qpi), cycle).ok());
    q().Done(uid);
    EXPECT_EQ(q().Where(uid), tc.want);
  }
}

TEST_F(QueueTest, InFlightHintSeesEventObjects) {
  int hint_calls = 0;
  options_.events[std::string(kFit)] = {
      {Event(EventResource::kNode, framework::kAdd),
       [&hint_calls](const api::Pod&, const ClusterEvent&, const void*, const void* n) {
         ++hint_calls;
         const auto* node = static_cast<const api::Node*>(n);
         return node && node->meta.name == "big" ? QueueingHint::kQueue : QueueingHint::kSkip;
       }},
  };
  q().Add(Info("p"));
  std::optional<QueuedPodInfo> qpi = q().TryPop();
  // Owned objects outlive the call: the hint runs later, when the pod returns.
  q().MoveAllToActiveOrBackoffQueue(
      NodeAdd(), nullptr, std::make_shared<const api::Node>(testing::SimpleNode("small", 1, 1)));
  q().MoveAllToActiveOrBackoffQueue(
      NodeAdd(), nullptr, std::make_shared<const api::Node>(testing::SimpleNode("big", 1, 1)));
  EXPECT_EQ(hint_calls, 0);
  qpi->unschedulable_plugins.insert(std::string(kFit));
  ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*qpi), 1).ok());
  q().Done(Uid("p"));
  EXPECT_EQ(hint_calls, 2);
  EXPECT_EQ(Where("p"), QueueName::kBackoff);
}

TEST_F(QueueTest, BorrowedEventDuringFlightIsConservative) {
  options_.events[std::string(kFit)] = {
      {Event(EventResource::kNode, framework::kAdd),
       [](const api::Pod&, const ClusterEvent&, const void*, const void*) {
         return QueueingHint::kSkip;
       }},
  };
  q().Add(Info("p"));
  std::optional<QueuedPodInfo> qpi = q().TryPop();
  api::Node node = testing::SimpleNode("n", 1, 1);
  q().MoveAllToActiveOrBackoffQueueBorrowed(NodeAdd(), nullptr, &node);
  qpi->unschedulable_plugins.insert(std::string(kFit));
  ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*qpi), 1).ok());
  EXPECT_EQ(Where("p"), QueueName::kBackoff);  // hint could not run: requeued
}

TEST_F(QueueTest, UpdateWhileInFlightIsKeptAndCounts) {
  q().Add(Info("p"));
  std::optional<QueuedPodInfo> qpi = q().TryPop();
  EXPECT_EQ(Where("p"), QueueName::kInFlight);
  api::Pod smaller = MakePod("p");
  smaller.requests.Set(api::ResourceNames::Get().cpu, 10);  // scale down helps Fit
  q().Update(testing::MakePodInfo(smaller));
  qpi->unschedulable_plugins.insert(std::string(kFit));
  ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*qpi), 1).ok());
  q().Done(Uid("p"));
  EXPECT_EQ(Where("p"), QueueName::kBackoff);
  EXPECT_EQ(q().Get(Uid("p"))->pod_info->p().requests.Get(api::ResourceNames::Get().cpu), 10);
}

TEST_F(QueueTest, DeleteWhileInFlight) {
  q().Add(Info("p"));
  std::optional<QueuedPodInfo> qpi = q().TryPop();
  q().Delete(Uid("p"));
  EXPECT_EQ(Where("p"), std::nullopt);
  qpi->unschedulable_plugins.insert(std::string(kFit));
  EXPECT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*qpi), 1).ok());
  q().Done(Uid("p"));
  EXPECT_EQ(Where("p"), std::nullopt);
  PendingPods p = q().Pending();
  EXPECT_EQ(p.active + p.backoff + p.unschedulable + p.gated + p.in_flight, 0);
  // A later event does not resurrect it.
  q().MoveAllToActiveOrBackoffQueue(Event(EventResource::kWildcard, framework::kAll), nullptr,
                                    nullptr);
  EXPECT_FALSE(q().TryPop().has_value());
}

TEST_F(QueueTest, DoneAfterSuccessForgetsPod) {
  q().Add(Info("p"));
  std::optional<QueuedPodInfo> qpi = q().TryPop();
  EXPECT_EQ(qpi->attempts, 1);
  EXPECT_EQ(qpi->initial_attempt_micros, clock_.NowMicros());
  q().Done(Uid("p"));
  EXPECT_EQ(Where("p"), std::nullopt);
  EXPECT_EQ(q().Pending().in_flight, 0);
}

TEST_F(QueueTest, LateDoneOfRequeuedAttemptDoesNotEndNewAttempt) {
  q().Add(Info("p"));
  std::optional<QueuedPodInfo> first = q().TryPop();
  first->unschedulable_plugins.insert(std::string(kFit));
  ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*first), 1).ok());
  clock_.Advance(kSecond);
  q().Activate(Uid("p"));
  std::optional<QueuedPodInfo> second = q().TryPop();  // popped before the first Done
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->attempts, 2);
  q().Done(Uid("p"));  // the first attempt's Done arrives late
  EXPECT_EQ(Where("p"), QueueName::kInFlight);
  q().MoveAllToActiveOrBackoffQueue(NodeAdd(), nullptr, nullptr);
  second->unschedulable_plugins.insert(std::string(kFit));
  ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*second), 2).ok());
  EXPECT_EQ(Where("p"), QueueName::kBackoff);
  q().Done(Uid("p"));
  EXPECT_EQ(Where("p"), QueueName::kBackoff);
}

TEST_F(QueueTest, AddUnschedulableRejectsQueuedPod) {
  q().Add(Info("p"));
  QueuedPodInfo copy = *q().Get(Uid("p"));
  EXPECT_EQ(q().AddUnschedulableIfNotPresent(copy, 0).code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(QueueTest, NotInFlightFallsBackToMoveRequestCycle) {
  q().Add(Info("a"));
  std::optional<QueuedPodInfo> qpi = q().TryPop();
  int64_t cycle = q().SchedulingCycle();
  q().Done(Uid("a"));  // Done before the requeue (caller bug, but must not lose the event)
  q().MoveAllToActiveOrBackoffQueue(NodeLabel(), nullptr, nullptr);
  qpi->unschedulable_plugins.insert(std::string(kFit));
  ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*qpi), cycle).ok());
  EXPECT_EQ(Where("a"), QueueName::kBackoff);
}

TEST_F(QueueTest, ActivateWhileInFlight) {
  q().Add(Info("p"));
  std::optional<QueuedPodInfo> qpi = q().TryPop();
  q().Activate(Uid("p"));
  qpi->unschedulable_plugins.insert(std::string(kFit));
  ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*qpi), 1).ok());
  EXPECT_EQ(Where("p"), QueueName::kActive);
}

// ---- Group index (PopGroups) ---------------------------------------------

api::Pod GroupPod(std::string_view name, std::string_view group, int32_t priority = 0) {
  api::Pod pod = MakePod(name, priority);
  if (!group.empty())
    pod.meta.labels = {{api::Symbol::Intern("group"), api::Symbol::Intern(group)}};
  return pod;
}

std::string GroupOf(const api::Pod& pod) {
  std::optional<api::Symbol> v = api::FindLabel(pod.meta.labels, std::string_view("group"));
  return v ? v->str() : "";
}

// Fills the queue with members of groups a, b and c in every state:
// a5 in flight, a3 unschedulable, a4 gated, a6 deleted, c1 moved to group a
// by an update, n1 in no group.
void FillGroups(SchedulingQueue& q) {
  q.Add(framework::PodInfo::Create(std::make_shared<const api::Pod>(GroupPod("a5", "a", 10)), 10));
  ASSERT_EQ(q.TryPop()->pod_info->p().meta.name, "a5");
  q.Add(framework::PodInfo::Create(std::make_shared<const api::Pod>(GroupPod("a3", "a", 7)), 7));
  std::optional<QueuedPodInfo> a3 = q.TryPop();
  ASSERT_EQ(a3->pod_info->p().meta.name, "a3");
  a3->unschedulable_plugins.insert(std::string(kFit));
  ASSERT_TRUE(q.AddUnschedulableIfNotPresent(std::move(*a3), q.SchedulingCycle()).ok());
  q.Done(Uid("a3"));
  api::Pod gated = GroupPod("a4", "a");
  gated.scheduling_gates.push_back(api::Symbol::Intern("example.com/wait"));
  q.Add(testing::MakePodInfo(gated));
  q.Add(testing::MakePodInfo(GroupPod("a1", "a")));
  q.Add(testing::MakePodInfo(GroupPod("a2", "a", 5)));
  q.Add(testing::MakePodInfo(GroupPod("a6", "a")));
  q.Delete(Uid("a6"));
  q.Add(testing::MakePodInfo(GroupPod("b1", "b")));
  q.Add(testing::MakePodInfo(GroupPod("c1", "c")));
  q.Update(testing::MakePodInfo(GroupPod("c1", "a")));
  q.Add(testing::MakePodInfo(GroupPod("n1", "")));
}

TEST_F(QueueTest, PopGroupsTakesQueuedMembersInActiveOrder) {
  options_.group_of = GroupOf;
  struct Case {
    std::vector<std::string> groups;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {{"a"}, {"a3", "a2", "a1", "c1"}},
      {{"b"}, {"b1"}},
      {{"a", "b", "a"}, {"a3", "a2", "a1", "b1", "c1"}},
      {{"c"}, {}},
      {{"none"}, {}},
      {{""}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.groups));
    // PopGroups through the index, and PopMatching scanning with the same test.
    SchedulingQueue by_index(clock_, options_), by_scan(clock_, options_);
    FillGroups(by_index);
    FillGroups(by_scan);
    std::vector<std::string> got, scanned;
    for (const QueuedPodInfo& m : by_index.PopGroups(c.groups)) {
      got.push_back(m.pod_info->p().meta.name);
      EXPECT_EQ(by_index.Where(m.pod_info->uid()), QueueName::kInFlight);
    }
    for (const QueuedPodInfo& m : by_scan.PopMatching([&](const framework::PodInfo& p) {
           const std::string g = GroupOf(p.p());
           return !g.empty() && std::find(c.groups.begin(), c.groups.end(), g) != c.groups.end();
         })) {
      scanned.push_back(m.pod_info->p().meta.name);
    }
    EXPECT_EQ(got, c.want);
    EXPECT_EQ(scanned, c.want);
    // A second call finds nothing: the members are in flight.
    EXPECT_THAT(by_index.PopGroups(c.groups), IsEmpty());
  }
}

TEST_F(QueueTest, PopGroupsSeesRequeuedMembersAndForgetsDoneOnes) {
  options_.group_of = GroupOf;
  q().Add(testing::MakePodInfo(GroupPod("m1", "g")));
  q().Add(testing::MakePodInfo(GroupPod("m2", "g")));
  std::vector<QueuedPodInfo> first = q().PopGroups({"g"});
  ASSERT_EQ(first.size(), 2u);
  // m1 is bound (Done), m2 fails and comes back.
  q().Done(Uid("m1"));
  first[1].unschedulable_plugins.insert(std::string(kFit));
  ASSERT_TRUE(q().AddUnschedulableIfNotPresent(std::move(first[1]), q().SchedulingCycle()).ok());
  q().Done(Uid("m2"));
  std::vector<QueuedPodInfo> second = q().PopGroups({"g"});
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].pod_info->p().meta.name, "m2");
}

TEST_F(QueueTest, PopGroupsWithoutGroupOfPopsNothing) {
  q().Add(testing::MakePodInfo(GroupPod("m1", "g")));
  EXPECT_THAT(q().PopGroups({"g"}), IsEmpty());
  EXPECT_EQ(Where("m1"), QueueName::kActive);
}

// ---- Nominated pods --------------------------------------------------------

TEST_F(QueueTest, NominatedPods) {
  api::Pod with_status = MakePod("s");
  with_status.nominated_node_name = api::Symbol::Intern("n1");
  q().Add(testing::MakePodInfo(with_status));
  q().Add(Info("a"));
  q().AddNominatedPod(Info("a"), "n1");
  q().AddNominatedPod(Info("b"), "n2");
  auto names = [&](std::string_view node) {
    std::vector<std::string> out;
    for (const PodInfoPtr& p : q().NominatedPodsForNode(node)) out.push_back(p->p().meta.name);
    return out;
  };
  EXPECT_THAT(names("n1"), ElementsAre("s", "a"));
  EXPECT_THAT(names("n2"), ElementsAre("b"));

  // An update without nominatedNodeName right after nomination keeps it.
  api::Pod a2 = MakePod("a");
  a2.meta.labels.emplace_back(api::Symbol::Intern("v"), api::Symbol::Intern("2"));
  q().Update(testing::MakePodInfo(a2));
  EXPECT_THAT(names("n1"), ElementsAre("s", "a"));
  EXPECT_EQ(q().NominatedPodsForNode("n1")[1]->p().meta.labels.size(), 1u);

  // Re-nominated elsewhere, then cleared by an empty override, then deleted.
  q().AddNominatedPod(Info("a"), "n2");
  EXPECT_THAT(names("n2"), ElementsAre("b", "a"));
  q().AddNominatedPod(Info("b"), "");
  EXPECT_THAT(names("n2"), ElementsAre("a"));
  q().Delete(Uid("a"));
  EXPECT_THAT(names("n2"), IsEmpty());
  EXPECT_EQ(q().NominatedNodeFor(Uid("s")), "n1");
  q().AssignedPodAdded(testing::MakePodInfo(with_status));  // bound: nomination done
  EXPECT_THAT(names("n1"), IsEmpty());
}

// ---- Metrics ---------------------------------------------------------------

TEST_F(QueueTest, MetricsCountPendingAndIncoming) {
  q().Add(Info("a"));
  q().Add(Info("b"));
  api::Pod gated = MakePod("g");
  gated.scheduling_gates.push_back(api::Symbol::Intern("x"));
  q().Add(testing::MakePodInfo(gated));
  PopAndFail("a", {std::string(kFit)});
  QueueMetrics m = q().Metrics();
  EXPECT_EQ(m.pending.active, 1);
  EXPECT_EQ(m.pending.unschedulable, 1);
  EXPECT_EQ(m.pending.gated, 1);
  EXPECT_EQ(m.pending.backoff, 0);
  std::vector<std::string> series;
  for (const IncomingPods& in : m.incoming) {
    std::string s = in.queue;
    s.append("/").append(in.event).append("=").append(std::to_string(in.count));
    series.push_back(std::move(s));
  }
  EXPECT_THAT(series, ElementsAre("active/PodAdd=2", "unschedulable/PodAdd=1",
                                  "unschedulable/ScheduleAttemptFailure=1"));
}

// ---- Threads ---------------------------------------------------------------

TEST_F(QueueTest, ConcurrentAddersAndOnePopper) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::atomic<int> popped{0};
  std::set<std::string> seen;
  SchedulingQueue& queue = q();  // created before the threads start
  (void)queue;
  std::thread popper([&] {
    while (auto qpi = q().Pop()) {
      seen.insert(qpi->pod_info->uid());
      // Fail every tenth pod once with an Error so backoff/flush run concurrently too.
      if (qpi->attempts == 1 && seen.size() % 10 == 0) {
        std::string uid = qpi->pod_info->uid();
        EXPECT_TRUE(q().AddUnschedulableIfNotPresent(std::move(*qpi), 0).ok());
        q().Done(uid);
        continue;
      }
      q().Done(qpi->pod_info->uid());
      popped.fetch_add(1);
    }
  });
  std::vector<std::thread> adders;
  for (int t = 0; t < kThreads; ++t) {
    adders.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string name = "p";
        name.append(std::to_string(t)).append("-").append(std::to_string(i));
        q().Add(Info(name, i % 7));
        if (i % 100 == 0) q().MoveAllToActiveOrBackoffQueue(NodeAdd(), nullptr, nullptr);
      }
    });
  }
  for (auto& th : adders) th.join();
  // Drive virtual time until the failed ones have come back and been popped.
  for (int i = 0; i < 200 && popped.load() < kThreads * kPerThread; ++i) {
    clock_.Advance(kSecond);
    q().FlushBackoffQCompleted();
    std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  q().Close();
  popper.join();
  EXPECT_EQ(popped.load(), kThreads * kPerThread);
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kPerThread));
  PendingPods p = q().Pending();
  EXPECT_EQ(p.active + p.backoff + p.unschedulable + p.gated + p.in_flight, 0);
}

TEST_F(QueueTest, CloseWakesBlockedPop) {
  std::atomic<bool> returned{false};
  SchedulingQueue& queue = q();
  (void)queue;
  std::thread t([&] {
    EXPECT_FALSE(q().Pop().has_value());
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(returned.load());
  q().Close();
  t.join();
  EXPECT_TRUE(returned.load());
  EXPECT_TRUE(q().closed());
}

TEST_F(QueueTest, PodUpdateActionsTable) {
  api::Pod base = MakePod("p");
  base.scheduling_gates.push_back(api::Symbol::Intern("g"));
  struct TestCase {
    std::string name;
    std::function<void(api::Pod&)> change;
    uint32_t want;
  };
  const std::vector<TestCase> cases = {
      {"nothing", [](api::Pod&) {}, 0},
      {"status", [](api::Pod& p) { p.phase = api::PodPhase::kRunning; }, 0},
      {"labels", [](api::Pod& p) {
         p.meta.labels.emplace_back(api::Symbol::Intern("k"), api::Symbol::Intern("v")); },
       framework::kUpdatePodLabel},
      {"scale down", [](api::Pod& p) { p.requests.Set(api::ResourceNames::Get().cpu, 1); },
       framework::kUpdatePodScaleDown},
      {"scale up is other", [](api::Pod& p) {
         p.requests.Set(api::ResourceNames::Get().cpu, 1000);
         p.meta.generation++; },
       framework::kUpdateOther},
      {"toleration", [](api::Pod& p) { p.tolerations.push_back({}); },
       framework::kUpdatePodToleration},
      {"gates removed", [](api::Pod& p) { p.scheduling_gates.clear(); p.meta.generation++; },
       framework::kUpdatePodSchedulingGatesEliminated},
      {"claim status", [](api::Pod& p) { p.resource_claim_statuses.push_back({}); },
       framework::kUpdatePodGeneratedResourceClaim},
  };
  for (const TestCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    api::Pod changed = base;
    tc.change(changed);
    EXPECT_EQ(PodUpdateActions(base, changed), tc.want);
  }
}

}  // namespace
}  // namespace gantry::queue
