// Tests of the scheduling loop with small fake plugins: binding, failure
// handling upstream's way, requeue on events, other schedulers' pods.
#include "src/scheduler/scheduler.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include "gantry/util/strings.h"
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
    sched_.events().OnNodeAdd(std::make_shared<const api::Node>(SimpleNode(name, cpu, 1LL << 34)));
  }
  std::shared_ptr<const api::Pod> AddPod(std::string name, int64_t cpu,
                                         std::string scheduler = "gantry-scheduler") {
    api::Pod pod = SimplePod(name, cpu, 0);
    pod.scheduler_name = api::Symbol::Intern(scheduler);
    auto ptr = std::make_shared<const api::Pod>(std::move(pod));
    sched_.events().OnPodAdd(ptr);
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
      sched_.events().OnPodUpdate(it->second, bound);
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
  sched_.events().OnPodDelete(pods_["default/p1"]);
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
  sched_.events().OnPodAdd(std::make_shared<const api::Pod>(existing));
  Track(AddPod("p", 200));
  Drain();
  EXPECT_EQ(BoundTo("default/p"), "");
  EXPECT_EQ(writer_.events.back().note, "0/1 nodes are available: 1 Insufficient cpu.");
}

// Without VolumeBinding, a pod whose volumes need a PersistentVolumeClaim
// (a generic ephemeral volume is one that kube-controller-manager creates as
// "<pod>-<volume>") is never bound blindly.
TEST_F(SchedulerTest, PodsWithVolumeClaimsAreNeverBoundBlindly) {
  struct Case {
    const char* pod;
    std::vector<std::string> pvcs, ephemeral;
    const char* claims;  // as the message names them
  };
  const Case cases[] = {
      {"db", {"data"}, {}, "data"},
      {"train", {}, {"scratch"}, "train-scratch"},
  };
  AddNode("a", 1000);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pod);
    api::Pod pod = SimplePod(c.pod, 100, 0);
    pod.pvc_names = c.pvcs;
    pod.ephemeral_volume_names = c.ephemeral;
    sched_.events().OnPodAdd(std::make_shared<const api::Pod>(pod));
    Drain();
    EXPECT_TRUE(writer_.bindings.empty());
    ASSERT_FALSE(writer_.events.empty());
    EXPECT_EQ(writer_.events.back().note,
              std::string("0/1 nodes are available: pod has PersistentVolumeClaim volumes (") +
                  c.claims +
                  ") and volume binding is not supported by this build of Gantry "
                  "(VolumeBinding is not built in).");
  }
}

// ---- Binding workers (live mode) ------------------------------------------------------

// A writer whose BindPod calls wait at a gate (so bindings overlap), fail
// for the pods in `fail_bind`, and are counted; thread-safe where binding
// workers call it.
class GatedWriter : public gantry::testing::FakeHandle {
 public:
  absl::Status BindPod(const api::Pod& pod, std::string_view node) override {
    std::unique_lock<std::mutex> lock(mu);
    ++waiting;
    max_concurrent = std::max(max_concurrent, waiting);
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
    --waiting;
    if (fail_bind.contains(pod.meta.name))
      return absl::UnavailableError("injected: connection reset");
    bindings.emplace_back(pod.meta.Key(), std::string(node));
    return absl::OkStatus();
  }
  absl::Status UpdatePodScheduledCondition(const api::Pod& pod,
                                           const framework::PodScheduledCondition& c,
                                           const std::string*) override {
    std::lock_guard<std::mutex> lock(mu);
    conditions.emplace_back(pod.meta.name, c.reason);
    return absl::OkStatus();
  }
  void RecordEvent(const framework::EventRecord& event) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(event);
  }
  // Waits (bounded, so a broken pool fails instead of hanging) until `n`
  // BindPod calls are waiting at the gate.
  bool AwaitWaiting(int n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return waiting >= n; });
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu);
      open = true;
    }
    cv.notify_all();
  }

  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int waiting = 0;
  int max_concurrent = 0;
  std::set<std::string> fail_bind;
  std::vector<std::pair<std::string, std::string>> conditions;  // pod name -> reason
};

// Reserve / Unreserve / PreBind probe: records which pods were reserved and
// unreserved; PreBind fails for pods labelled fail=prebind (as a failed
// claim write in DynamicResources PreBind does).
struct ProbeLog {
  std::mutex mu;
  std::multiset<std::string> reserved, unreserved, prebound;
};
class ProbePlugin final : public framework::ReservePlugin, public framework::PreBindPlugin {
 public:
  explicit ProbePlugin(ProbeLog* log) : log_(log) {}
  std::string_view Name() const override { return "Probe"; }
  framework::Status Reserve(framework::CycleState&, const framework::PodInfo& pod,
                            std::string_view) override {
    std::lock_guard<std::mutex> lock(log_->mu);
    log_->reserved.insert(pod.p().meta.name);
    return framework::Status();
  }
  void Unreserve(framework::CycleState&, const framework::PodInfo& pod, std::string_view) override {
    std::lock_guard<std::mutex> lock(log_->mu);
    log_->unreserved.insert(pod.p().meta.name);
  }
  framework::Status PreBind(framework::CycleState&, const framework::PodInfo& pod,
                            std::string_view) override {
    std::lock_guard<std::mutex> lock(log_->mu);
    log_->prebound.insert(pod.p().meta.name);
    if (auto v = api::FindLabel(pod.p().meta.labels, "fail"); v && v->view() == "prebind") {
      return framework::Status::Error("injected: claim status write failed");
    }
    return framework::Status();
  }

 private:
  ProbeLog* log_;
};

struct BindingCase {
  std::string name;
  int workers;
  int pods;
  std::set<std::string> fail_bind;     // BindPod fails (transport error)
  std::set<std::string> fail_prebind;  // PreBind fails: Bind must never run
};

class BindingPoolTest : public ::testing::TestWithParam<BindingCase> {};

TEST_P(BindingPoolTest, OverlappingBindingsFailAlone) {
  const BindingCase& tc = GetParam();
  framework::Registry registry;
  gantry::testing::RegisterFakePlugins(registry);
  ProbeLog log;
  ASSERT_TRUE(registry
                  .Register(framework::PluginRegistration{
                      "Probe",
                      [&log](api::Decoder&, api::JsonValue, framework::FrameworkHandle&)
                          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
                        return std::unique_ptr<framework::Plugin>(new ProbePlugin(&log));
                      },
                      nullptr, ""})
                  .ok());
  GatedWriter writer;
  writer.fail_bind = tc.fail_bind;
  FakeClock clock{1'000'000'000};
  framework::WorkerPool pool{1};
  state::ClusterState state{clock};
  SchedulerOptions opts;
  opts.binding_workers = tc.workers;
  Scheduler sched{state, writer, clock, opts};
  auto fw = framework::Framework::Create(
      framework::ProfileSpec::MultiPoint(
          "gantry-scheduler",
          {{"FakeSort", 1, ""}, {"FakeFit", 1, ""}, {"Probe", 1, ""}, {"FakeBinder", 1, ""}}),
      registry, writer, clock, pool);
  ASSERT_TRUE(fw.ok()) << fw.status();
  sched.AddProfile(*std::move(fw));
  sched.Start(1'000'000, 10'000'000);
  sched.events().OnNodeAdd(
      std::make_shared<const api::Node>(SimpleNode("a", 1'000'000, 1LL << 40)));
  std::vector<std::string> uids;
  for (int i = 0; i < tc.pods; ++i) {
    api::Pod pod = SimplePod(gantry::StrCat("p", i), 100, 0);
    pod.scheduler_name = api::Symbol::Intern("gantry-scheduler");
    if (tc.fail_prebind.contains(pod.meta.name)) {
      pod.meta.labels = {{api::Symbol::Intern("fail"), api::Symbol::Intern("prebind")}};
    }
    uids.push_back(pod.meta.uid);
    sched.events().OnPodAdd(std::make_shared<const api::Pod>(std::move(pod)));
  }
  for (int i = 0; i < tc.pods; ++i) ASSERT_TRUE(sched.ScheduleOne(false));

  // Every scheduled pod is in flight; as many as the pool allows wait at the gate at once.
  const int binders = tc.pods - static_cast<int>(tc.fail_prebind.size());
  const int overlap = std::min(tc.workers, binders);
  ASSERT_TRUE(writer.AwaitWaiting(overlap));
  // Pods whose PreBind fails may be done already; every other one is still in flight.
  BindingPoolStats during = sched.BindingStats();
  EXPECT_GE(during.in_flight, binders);
  EXPECT_LE(during.in_flight, tc.pods);
  EXPECT_GE(during.threads, overlap);
  EXPECT_LE(during.threads, std::min(tc.workers, tc.pods));
  writer.Open();
  sched.WaitForBindings();

  BindingPoolStats after = sched.BindingStats();
  EXPECT_EQ(after.in_flight, 0);
  EXPECT_EQ(after.started, tc.pods);
  EXPECT_LE(after.threads, tc.workers);
  EXPECT_EQ(writer.max_concurrent, overlap) << "the pool neither overlaps nor exceeds its limit";
  std::set<std::string> bound;
  for (const auto& [key, node] : writer.bindings) bound.insert(key.substr(key.find('/') + 1));
  std::multiset<std::string> want_unreserved;
  for (int i = 0; i < tc.pods; ++i) {
    const std::string name = gantry::StrCat("p", i);
    const bool fails = tc.fail_bind.contains(name) || tc.fail_prebind.contains(name);
    SCOPED_TRACE(name);
    EXPECT_EQ(bound.contains(name), !fails);
    EXPECT_EQ(log.reserved.count(name), 1u);
    EXPECT_EQ(log.unreserved.count(name), fails ? 1u : 0u)
        << "exactly the failed pods are unreserved";
    EXPECT_EQ(state.IsAssumed(uids[static_cast<size_t>(i)]), !fails)
        << "a failed pod is forgotten, the others stay assumed until their binding is observed";
    // A failed pod goes back to the queue; a bound one is gone from it.
    EXPECT_EQ(sched.queue().Where(uids[static_cast<size_t>(i)]).has_value(), fails);
    if (fails) want_unreserved.insert(name);
  }
  EXPECT_EQ(log.unreserved, want_unreserved);
  for (const std::string& name : tc.fail_prebind) {
    EXPECT_FALSE(bound.contains(name)) << name << ": bound although PreBind failed";
  }
  std::set<std::string> error_conditions;
  for (const auto& [name, reason] : writer.conditions) {
    if (reason == "SchedulerError") error_conditions.insert(name);
  }
  std::set<std::string> want_errors = tc.fail_bind;
  want_errors.insert(tc.fail_prebind.begin(), tc.fail_prebind.end());
  EXPECT_EQ(error_conditions, want_errors);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BindingPoolTest,
    ::testing::Values(BindingCase{"AllSucceedOnePerPod", 16, 12, {}, {}},
                      BindingCase{"PoolCapsConcurrency", 4, 12, {}, {}},
                      BindingCase{"OneBindFailsAmongMany", 16, 12, {"p5"}, {}},
                      BindingCase{"PreBindFailureNeverBinds", 16, 12, {}, {"p2", "p9"}},
                      BindingCase{"MixedFailuresSmallPool", 3, 10, {"p0", "p7"}, {"p4"}},
                      BindingCase{"SingleWorker", 1, 5, {"p1"}, {}}),
    [](const ::testing::TestParamInfo<BindingCase>& i) { return i.param.name; });

}  // namespace
}  // namespace gantry::scheduler
