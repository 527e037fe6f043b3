// Leader election under a slow or throttling API server, and the write
// fence that keeps a deposed leader from writing.
#include "src/client/leader_election.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/client/client_metrics.h"
#include "src/client/http.h"
#include "src/client/write_fence.h"
#include "test/unit/client/test_server.h"

namespace gantry::client {
namespace {

using testing::Running;
using Clock = std::chrono::steady_clock;

double MillisSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// A Lease endpoint whose renewals (PUT) can be made to fail: answered 429
// with a long Retry-After, or held for a long time before answering. Also
// serves a pods/binding endpoint and counts what reaches it.
class FaultyLeases {
 public:
  enum class Mode { kNormal, kThrottle, kHang };

  FaultyLeases() {
    auto srv = std::make_unique<httplib::Server>();
    const std::string path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
    srv->Get(path + "/gantry", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu);
      if (lease.is_null()) {
        res.status = 404;
        return;
      }
      res.set_content(lease.dump(), "application/json");
    });
    srv->Post(path, [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu);
      lease = nlohmann::json::parse(req.body);
      lease["metadata"]["resourceVersion"] = std::to_string(++rv);
      last_renew = Clock::now();
      res.status = 201;
      res.set_content(lease.dump(), "application/json");
    });
    srv->Put(path + "/gantry", [this](const httplib::Request& req, httplib::Response& res) {
      const Mode m = mode.load();
      if (m == Mode::kThrottle) {
        res.status = 429;
        res.set_header("Retry-After", "60");
        res.set_content(R"({"kind":"Status","reason":"TooManyRequests","code":429})",
                        "application/json");
        return;
      }
      if (m == Mode::kHang) {
        // Answers (too late) only when the test ends.
        while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        res.status = 503;
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      nlohmann::json j = nlohmann::json::parse(req.body);
      if (j["metadata"]["resourceVersion"] != lease["metadata"]["resourceVersion"]) {
        res.status = 409;
        res.set_content(R"({"reason":"Conflict"})", "application/json");
        return;
      }
      lease = j;
      lease["metadata"]["resourceVersion"] = std::to_string(++rv);
      last_renew = Clock::now();
      res.set_content(lease.dump(), "application/json");
    });
    srv->Post(R"(/api/v1/namespaces/d/pods/([^/]+)/binding)",
              [this](const httplib::Request&, httplib::Response& res) {
                bindings.fetch_add(1);
                res.status = 201;
                res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
              });
    server = std::make_unique<Running<httplib::Server>>(std::move(srv));
  }
  ~FaultyLeases() { release.store(true); }

  Clock::time_point LastRenew() {
    std::lock_guard<std::mutex> lock(mu);
    return last_renew;
  }
  RestConfig Config() const {
    RestConfig cfg;
    cfg.server = "http://127.0.0.1:" + std::to_string(server->port());
    return cfg;
  }

  std::mutex mu;
  nlohmann::json lease;
  int rv = 0;
  Clock::time_point last_renew;
  std::atomic<Mode> mode{Mode::kNormal};
  std::atomic<bool> release{false};
  std::atomic<int> bindings{0};
  std::unique_ptr<Running<httplib::Server>> server;
};

HttpRequest Binding(const std::string& pod) {
  HttpRequest req;
  req.method = "POST";
  req.path = "/api/v1/namespaces/d/pods/" + pod + "/binding";
  req.body = R"({"target":{"kind":"Node","name":"n1"}})";
  return req;
}

// The client metrics the fenced clients below count through.
ClientMetrics& TestClientMetrics() {
  static metrics::Registry* registry = new metrics::Registry();
  static ClientMetrics* m = new ClientMetrics(*registry);
  return *m;
}
double FencedWrites() { return TestClientMetrics().writes_fenced.With({"pods/binding"}).Value(); }

struct LossCase {
  std::string name;
  FaultyLeases::Mode mode;
};

class LeaseLoss : public ::testing::TestWithParam<LossCase> {};

// Renewals stop succeeding (throttled with Retry-After: 60, or hanging):
// the elector gives up within renewDeadline of the last successful renewal
// (plus scheduling slack), and from that moment the same client refuses
// writes that are not the lease's own; the server never sees them.
TEST_P(LeaseLoss, LosesWithinRenewDeadlineAndFencesWrites) {
  FaultyLeases fake;
  auto fence = std::make_shared<WriteFence>();
  ClientOptions opts;
  opts.write_fence = fence;
  opts.metrics = &TestClientMetrics();
  auto client = HttpClient::Create(fake.Config(), opts);
  ASSERT_TRUE(client.ok()) << client.status();
  LeaderElectionConfig lc;
  lc.lease_name = "gantry";
  lc.identity = "a_1";
  lc.lease_duration_millis = 1500;
  lc.renew_deadline_millis = 1000;
  lc.retry_period_millis = 100;
  LeaderElector elector(**client, lc, fence.get());

  // Before the lease is held: writes are refused.
  absl::StatusOr<HttpResponse> r = (*client)->Do(Binding("early"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();

  std::atomic<bool> started{false}, stopped{false}, done{false};
  bool result = true;
  std::thread t([&] {
    result = elector.Run(
        nullptr, [&] { started = true; }, [&] { stopped = true; });
    done = true;
  });
  const auto wait_until = [](std::atomic<bool>& flag, int millis) {
    const auto end = Clock::now() + std::chrono::milliseconds(millis);
    while (!flag.load() && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return flag.load();
  };
  ASSERT_TRUE(wait_until(started, 5000));
  std::this_thread::sleep_for(std::chrono::milliseconds(350));  // a few renewals
  r = (*client)->Do(Binding("while-leading"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(fake.bindings.load(), 1);

  fake.mode.store(GetParam().mode);
  const double fenced_before = FencedWrites();
  // Right after the renew deadline (measured from the last renewal the
  // server accepted, so later than the elector's own start of it), before
  // the elector necessarily noticed: the write is refused.
  std::this_thread::sleep_until(fake.LastRenew() + std::chrono::milliseconds(1000 + 20));
  r = (*client)->Do(Binding("after-deadline"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(std::string(r.status().message()).find("leadership lost: write refused"),
            std::string::npos)
      << r.status();

  ASSERT_TRUE(wait_until(done, 5000)) << "the elector did not give up";
  const double lost_after = MillisSince(fake.LastRenew());
  t.join();
  EXPECT_FALSE(result);
  EXPECT_TRUE(stopped.load());
  EXPECT_FALSE(elector.IsLeader());
  // renewDeadline (1000 ms) after the elector started its last successful
  // renewal, which is before the server accepted it; 400 ms of slack for
  // a loaded machine.
  EXPECT_LT(lost_after, 1000 + 400);
  EXPECT_TRUE(fence->tripped());

  r = (*client)->Do(Binding("after-loss"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_EQ(fake.bindings.load(), 1) << "a fenced write reached the server";
  EXPECT_EQ(FencedWrites() - fenced_before, 2);
  EXPECT_GE(fence->refused(), 3);  // "early" too
}

INSTANTIATE_TEST_SUITE_P(Faults, LeaseLoss,
                         ::testing::Values(LossCase{"Throttled", FaultyLeases::Mode::kThrottle},
                                           LossCase{"Hanging", FaultyLeases::Mode::kHang}),
                         [](const ::testing::TestParamInfo<LossCase>& i) { return i.param.name; });

// The fence on its own: closed until opened, open until its deadline,
// never reopened once expired or tripped.
TEST(WriteFence, OpensExpiresAndNeverReopens) {
  WriteFence f;
  EXPECT_EQ(f.Check().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(f.Extend(MonotonicMicros() - 1)) << "a deadline in the past opens nothing";
  EXPECT_FALSE(f.tripped());
  ASSERT_TRUE(f.Extend(MonotonicMicros() + 50'000));
  EXPECT_TRUE(f.Check().ok());
  EXPECT_GT(f.RemainingMicros(), 0);
  ASSERT_TRUE(f.Extend(MonotonicMicros() + 60'000));
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_EQ(f.Check().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(f.Extend(MonotonicMicros() + 1'000'000)) << "an expired fence must not reopen";
  EXPECT_TRUE(f.tripped());
  EXPECT_FALSE(f.Check().ok());

  WriteFence g;
  ASSERT_TRUE(g.Extend(MonotonicMicros() + 1'000'000));
  g.Trip("test");
  EXPECT_EQ(std::string(g.Check().message()), "leadership lost: write refused (test)");
  EXPECT_FALSE(g.Extend(MonotonicMicros() + 1'000'000));
}

// Which requests the fence stops: mutating ones, not reads, not the
// lease's own (fence_exempt); a retry after Retry-After is checked again.
TEST(WriteFence, ChecksEveryMutatingAttempt) {
  auto srv = std::make_unique<httplib::Server>();
  std::atomic<int> posts{0}, gets{0}, exempt{0};
  srv->Post("/api/v1/namespaces/d/pods/p/binding",
            [&](const httplib::Request&, httplib::Response& res) {
              posts.fetch_add(1);
              res.status = 503;
              res.set_header("Retry-After", "1");
            });
  srv->Get("/api/v1/pods", [&](const httplib::Request&, httplib::Response& res) {
    gets.fetch_add(1);
    res.set_content(R"({"items":[]})", "application/json");
  });
  srv->Put("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l",
           [&](const httplib::Request&, httplib::Response& res) {
             exempt.fetch_add(1);
             res.set_content("{}", "application/json");
           });
  Running<httplib::Server> server(std::move(srv));
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  auto fence = std::make_shared<WriteFence>();
  ClientOptions opts;
  opts.write_fence = fence;
  auto client = HttpClient::Create(cfg, opts);
  ASSERT_TRUE(client.ok());

  // Open for 400 ms: the first attempt goes out, its retry (after 1 s) not.
  ASSERT_TRUE(fence->Extend(MonotonicMicros() + 400'000));
  absl::StatusOr<HttpResponse> r = (*client)->Do(Binding("p"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_EQ(posts.load(), 1);

  HttpRequest get;
  get.path = "/api/v1/pods";
  r = (*client)->Do(get);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(gets.load(), 1);

  HttpRequest lease;
  lease.method = "PUT";
  lease.path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l";
  lease.body = "{}";
  lease.fence_exempt = true;
  r = (*client)->Do(lease);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(exempt.load(), 1);
  lease.fence_exempt = false;
  EXPECT_EQ((*client)->Do(lease).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(exempt.load(), 1);
}

// A Retry-After that would carry a call past its deadline is not waited for.
TEST(HttpClient, DeadlineBoundsRetryAfter) {
  auto srv = std::make_unique<httplib::Server>();
  std::atomic<int> calls{0};
  srv->Get("/slow", [&](const httplib::Request&, httplib::Response& res) {
    calls.fetch_add(1);
    res.status = 429;
    res.set_header("Retry-After", "30");
  });
  Running<httplib::Server> server(std::move(srv));
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  auto client = HttpClient::Create(cfg, ClientOptions{});
  ASSERT_TRUE(client.ok());
  HttpRequest req;
  req.path = "/slow";
  req.deadline_micros = MonotonicMicros() + 500'000;
  const auto t0 = Clock::now();
  absl::StatusOr<HttpResponse> r = (*client)->Do(req);
  EXPECT_LT(MillisSince(t0), 500);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(calls.load(), 1);
  req.deadline_micros = MonotonicMicros() - 1;
  EXPECT_EQ((*client)->Do(req).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(calls.load(), 1);
}

TEST(ResourceOfPath, NamesResourceAndSubresource) {
  EXPECT_EQ(ResourceOfPath("/api/v1/namespaces/d/pods/p/binding"), "pods/binding");
  EXPECT_EQ(ResourceOfPath("/api/v1/namespaces/d/pods/p/status?fieldValidation=Ignore"),
            "pods/status");
  EXPECT_EQ(ResourceOfPath("/api/v1/pods?watch=1"), "pods");
  EXPECT_EQ(ResourceOfPath("/api/v1/namespaces/d"), "namespaces");
  EXPECT_EQ(ResourceOfPath("/apis/resource.k8s.io/v1/resourceslices"), "resourceslices");
  EXPECT_EQ(ResourceOfPath("/apis/events.k8s.io/v1/namespaces/d/events/e"), "events");
  EXPECT_EQ(ResourceOfPath("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"), "leases");
  EXPECT_EQ(ResourceOfPath("/api"), "");
  EXPECT_EQ(ResourceOfPath("/apis"), "");
}

}  // namespace
}  // namespace gantry::client
