// The gRPC admin service end to end in process: a server on a loopback
// port over a fixed backend, called through the CLI's client. Covers the
// status codes (FAILED_PRECONDITION, RESOURCE_EXHAUSTED, NOT_FOUND,
// INVALID_ARGUMENT), GetSnapshot streaming, the request metrics, the
// concurrency limit, address and TLS validation, mutual TLS, and the
// DiagnosisStore's bounds.
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/admin/client.h"
#include "src/admin/diagnosis.h"
#include "src/config/config.h"
#include "src/server/admin_server.h"
#include "src/sim/loader.h"
#include "test/unit/admin/test_certs.h"

namespace gantry::server {
namespace {

namespace v1 = gantry::admin::v1;

constexpr char kCluster[] = R"(apiVersion: v1
kind: Node
metadata: {name: n0}
spec:
  taints: [{key: dedicated, value: "true", effect: NoSchedule}]
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ml, uid: u-big}
spec:
  schedulerName: gantry-scheduler
  containers: [{name: c, resources: {requests: {cpu: "16"}}}]
)";

class FakeBackend final : public AdminBackend {
 public:
  FakeBackend() {
    EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry_).ok());
    auto cfg = config::DefaultConfig(registry_);
    EXPECT_TRUE(cfg.ok());
    config_ = std::move(*cfg);
    api::ObjectSet objects;
    sim::LoadStats stats;
    EXPECT_TRUE(
        sim::LoadClusterText("cluster.yaml", kCluster, false, &objects, &stats, &recording_.objects)
            .ok());
  }
  absl::Status CheckReady(std::string_view method) const override {
    if (!ready)
      return absl::FailedPreconditionError(std::string(method) + ": caches are not synced yet");
    return absl::OkStatus();
  }
  absl::StatusOr<api::ObjectSet> CachedObjects() override {
    std::unique_lock<std::mutex> lock(mu_);
    ++cached_calls;
    WaitWhileHeld(lock);
    return DecodeRecording(recording_, nullptr);
  }
  absl::StatusOr<admin::Recording> Record(const std::atomic<bool>*) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++record_calls;
    WaitWhileHeld(lock);
    return recording_;
  }
  // While `hold` is set, CachedObjects and Record block (inside the handler,
  // holding its slot) until Release().
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    hold = true;
  }
  void WaitHeld(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return held_ >= n; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    hold = false;
    cv_.notify_all();
  }
  const admin::DiagnosisStore* store() const override { return nullptr; }
  admin::EngineOptions engine() const override {
    admin::EngineOptions o;
    o.config = &config_;
    o.registry = &registry_;
    o.source = "live";
    return o;
  }
  bool ready = true;
  int cached_calls = 0;  // CachedObjects calls (the scheduler's caches)
  int record_calls = 0;  // Record calls (LISTs from the API server)

 private:
  void WaitWhileHeld(std::unique_lock<std::mutex>& lock) {
    if (!hold) return;
    ++held_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !hold; });
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold = false;
  int held_ = 0;
  framework::Registry registry_;
  config::Configuration config_;
  admin::Recording recording_;
};

class AdminServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AdminServerOptions o;
    o.address = "127.0.0.1:0";
    o.max_request_bytes = 4096;
    o.max_concurrent_calls = max_concurrent_calls_;
    auto s = AdminServer::Start(o, backend_, metrics_);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    admin::ClientOptions co;
    co.address = "127.0.0.1:" + std::to_string(server_->port());
    auto c = admin::AdminClient::Connect(co);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(*c);
  }
  double Requests(const std::string& method, const std::string& code) {
    return metrics_.requests->With({method, code}).Value();
  }

  int max_concurrent_calls_ = kDefaultAdminMaxConcurrentCalls;
  metrics::Registry registry_;
  AdminMetrics metrics_ = RegisterAdminMetrics(registry_);
  FakeBackend backend_;
  std::unique_ptr<AdminServer> server_;
  std::unique_ptr<admin::AdminClient> client_;
};

TEST_F(AdminServiceTest, ExplainOverGrpc) {
  v1::ExplainRequest req;
  req.set_namespace_("ml");
  req.set_name("big");
  absl::StatusOr<v1::ExplainResponse> r = client_->Explain(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->source(), "live");
  EXPECT_EQ(r->phase(), "Pending");
  // No scheduling loop here: the attempt is run on demand.
  EXPECT_FALSE(r->recorded());
  std::vector<std::string> plugins;
  for (const v1::NodeGroup& g : r->last_attempt().filtered()) plugins.push_back(g.plugin());
  EXPECT_EQ(plugins.size(), 2u);
  EXPECT_EQ(Requests("Explain", "OK"), 1);
}

// Explain and WhatIf are answered from the scheduler's caches; only
// GetSnapshot (a recording of what the API server serves) lists the cluster.
TEST_F(AdminServiceTest, OnlyGetSnapshotListsTheApiServer) {
  v1::ExplainRequest explain;
  explain.set_namespace_("ml");
  explain.set_name("big");
  ASSERT_TRUE(client_->Explain(explain).ok());
  v1::WhatIfRequest whatif;
  whatif.set_objects(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: ml}\n"
      "spec: {schedulerName: gantry-scheduler, containers: [{name: c}]}\n");
  ASSERT_TRUE(client_->WhatIf(whatif).ok());
  EXPECT_EQ(backend_.cached_calls, 2);
  EXPECT_EQ(backend_.record_calls, 0);

  auto stub = v1::Admin::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                                     grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  auto reader = stub->GetSnapshot(&ctx, v1::GetSnapshotRequest());
  gantry::snapshot::v1::Chunk chunk;
  while (reader->Read(&chunk)) {
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(backend_.cached_calls, 2);
  EXPECT_EQ(backend_.record_calls, 1);
}

TEST_F(AdminServiceTest, StatusCodes) {
  struct Case {
    std::string name;
    bool ready;
    std::string pod;
    std::string objects;  // non-empty: a WhatIf call
    absl::StatusCode code;
    std::string method;
  };
  const std::vector<Case> cases = {
      {"unknown pod", true, "nope", "", absl::StatusCode::kNotFound, "Explain"},
      {"bad name", true, "No_Such", "", absl::StatusCode::kInvalidArgument, "Explain"},
      {"not synced", false, "big", "", absl::StatusCode::kFailedPrecondition, "Explain"},
      {"not synced what-if", false, "", "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\n",
       absl::StatusCode::kFailedPrecondition, "WhatIf"},
      {"oversized", true, "", std::string(5000, '#'), absl::StatusCode::kResourceExhausted,
       "WhatIf"},
      {"malformed", true, "",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec: {priority: x}\n",
       absl::StatusCode::kInvalidArgument, "WhatIf"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    backend_.ready = c.ready;
    absl::Status st;
    if (c.objects.empty()) {
      v1::ExplainRequest req;
      req.set_namespace_("ml");
      req.set_name(c.pod);
      st = client_->Explain(req).status();
    } else {
      v1::WhatIfRequest req;
      req.set_objects(c.objects);
      st = client_->WhatIf(req).status();
    }
    EXPECT_EQ(st.code(), c.code) << st;
    EXPECT_FALSE(st.message().empty());
    EXPECT_EQ(Requests(c.method, absl::StatusCodeToString(c.code)), 1) << c.method;
  }
}

TEST_F(AdminServiceTest, GetSnapshotStreamsTheRecording) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::Admin::NewStub(channel);
  grpc::ClientContext ctx;
  v1::GetSnapshotRequest req;
  std::unique_ptr<grpc::ClientReader<gantry::snapshot::v1::Chunk>> reader =
      stub->GetSnapshot(&ctx, req);
  gantry::snapshot::v1::Chunk chunk;
  int chunks = 0, objects = 0;
  bool header_first = false;
  while (reader->Read(&chunk)) {
    if (chunks == 0) header_first = chunk.has_header();
    ++chunks;
    objects += chunk.objects_size();
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_TRUE(header_first);
  EXPECT_EQ(objects, 3);
  EXPECT_EQ(Requests("GetSnapshot", "OK"), 1);
}

class AdminServiceLimitTest : public AdminServiceTest {
 protected:
  void SetUp() override {
    max_concurrent_calls_ = 1;
    AdminServiceTest::SetUp();
  }
};

TEST_F(AdminServiceLimitTest, CallBeyondTheLimitIsResourceExhausted) {
  backend_.Hold();
  absl::Status first;
  std::thread held([&] {
    v1::ExplainRequest req;
    req.set_namespace_("ml");
    req.set_name("big");
    first = client_->Explain(req).status();
  });
  backend_.WaitHeld(1);  // the first call is inside its handler, holding the only slot

  struct Case {
    std::string method;
    absl::Status status;
  };
  std::vector<Case> cases;
  {
    v1::WhatIfRequest req;
    req.set_objects("apiVersion: v1\nkind: Pod\nmetadata: {name: q}\n");
    cases.push_back({"WhatIf", client_->WhatIf(req).status()});
  }
  {
    v1::ExplainRequest req;
    req.set_namespace_("ml");
    req.set_name("big");
    cases.push_back({"Explain", client_->Explain(req).status()});
  }
  {
    auto stub = v1::Admin::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    auto reader = stub->GetSnapshot(&ctx, v1::GetSnapshotRequest());
    gantry::snapshot::v1::Chunk chunk;
    while (reader->Read(&chunk)) {
    }
    grpc::Status st = reader->Finish();
    cases.push_back({"GetSnapshot", absl::Status(static_cast<absl::StatusCode>(st.error_code()),
                                                 st.error_message())});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.method);
    EXPECT_EQ(c.status.code(), absl::StatusCode::kResourceExhausted) << c.status;
    EXPECT_NE(std::string(c.status.message()).find("--admin-max-concurrent-calls"),
              std::string::npos)
        << c.status;
    EXPECT_EQ(metrics_.rejected_busy->With({c.method}).Value(), 1);
    EXPECT_EQ(Requests(c.method, "RESOURCE_EXHAUSTED"), 1);
  }

  backend_.Release();
  held.join();
  EXPECT_TRUE(first.ok()) << first;
  // The slot is free again.
  v1::ExplainRequest req;
  req.set_namespace_("ml");
  req.set_name("big");
  EXPECT_TRUE(client_->Explain(req).ok());
  EXPECT_EQ(Requests("Explain", "OK"), 2);
}

TEST(AdminServerOptionsTest, Validation) {
  struct Case {
    std::string address;
    std::string cert, key, ca;
    bool ok;
    std::string error;  // a part of the message when !ok
  };
  const std::vector<Case> cases = {
      {"127.0.0.1:10260", "", "", "", true, ""},
      {"localhost:1", "", "", "", true, ""},
      {"[::1]:1", "", "", "", true, ""},
      {"127.0.0.1:1", "c.pem", "k.pem", "", true, ""},  // loopback: TLS alone is fine
      {"127.0.0.1:1", "c.pem", "k.pem", "ca.pem", true, ""},
      {"0.0.0.0:10260", "", "", "", false, "--admin-tls-client-ca-file"},
      {"10.0.0.5:10260", "", "", "", false, "--admin-tls-cert-file"},
      // TLS without client authentication off loopback is refused.
      {"10.0.0.5:10260", "c.pem", "k.pem", "", false, "--admin-tls-client-ca-file"},
      {"[::]:10260", "c.pem", "k.pem", "", false, "--admin-tls-client-ca-file"},
      {"10.0.0.5:10260", "c.pem", "k.pem", "ca.pem", true, ""},
      {"10.0.0.5:10260", "c.pem", "", "", false, "go together"},
      {"127.0.0.1:1", "", "", "ca.pem", false, "needs --admin-tls-cert-file"},
      // Names that merely look like loopback addresses are not.
      {"127.0.0.1.example.com:1", "", "", "", false, "not a loopback address"},
      {"localhost.example.com:1", "", "", "", false, "not a loopback address"},
      {"[::ffff:127.0.0.1]:1", "", "", "", true, ""},
      {"", "", "", "", false, "empty"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.address + " cert=" + c.cert + " ca=" + c.ca);
    AdminServerOptions o;
    o.address = c.address;
    o.tls_cert_file = c.cert;
    o.tls_private_key_file = c.key;
    o.tls_client_ca_file = c.ca;
    absl::Status st = ValidateAdminServerOptions(o);
    EXPECT_EQ(st.ok(), c.ok) << st;
    if (!c.ok) {
      EXPECT_NE(std::string(st.message()).find(c.error), std::string::npos) << st;
    }
  }
  for (int n : {0, -1, kMaxAdminConcurrentCalls + 1}) {
    AdminServerOptions o;
    o.max_concurrent_calls = n;
    EXPECT_FALSE(ValidateAdminServerOptions(o).ok()) << n;
  }
}

TEST(AdminServerOptionsTest, StartRefusesAPublicAddressWithoutClientCa) {
  FakeBackend backend;
  for (bool with_cert : {false, true}) {
    SCOPED_TRACE(with_cert ? "TLS without client CA" : "plaintext");
    AdminServerOptions o;
    o.address = "0.0.0.0:0";
    if (with_cert) {
      o.tls_cert_file = "cert.pem";
      o.tls_private_key_file = "key.pem";
    }
    auto s = AdminServer::Start(o, backend, AdminMetrics());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(s.status().message()).find("--admin-tls-client-ca-file"),
              std::string::npos)
        << s.status();
  }
}

// A server with a client CA (on loopback, the only address a test may use)
// serves clients with a certificate that CA signed, and refuses clients
// without one or with one from another CA.
TEST(AdminServerTlsTest, MutualTlsRefusesClientsWithoutACertificateFromTheCa) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "admin-mtls";
  gantry::testing::TestCa ca("gantry-test-ca");
  gantry::testing::TestCa other("someone-else");
  const gantry::testing::PemPair server = ca.Issue("gantry-admin", /*server=*/true);
  const gantry::testing::PemPair client = ca.Issue("operator", /*server=*/false);
  const gantry::testing::PemPair stranger = other.Issue("stranger", /*server=*/false);
  const std::string ca_file = gantry::testing::WriteTestFile(dir, "ca.pem", ca.CertPem());

  FakeBackend backend;
  metrics::Registry registry;
  AdminMetrics metrics = RegisterAdminMetrics(registry);
  AdminServerOptions o;
  o.address = "127.0.0.1:0";
  o.tls_cert_file = gantry::testing::WriteTestFile(dir, "server.crt", server.cert);
  o.tls_private_key_file = gantry::testing::WriteTestFile(dir, "server.key", server.key);
  o.tls_client_ca_file = ca_file;
  auto s = AdminServer::Start(o, backend, metrics);
  ASSERT_TRUE(s.ok()) << s.status();

  struct Case {
    std::string name;
    std::string cert, key;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"no client certificate", "", "", false},
      {"certificate from another CA", stranger.cert, stranger.key, false},
      {"certificate from the client CA", client.cert, client.key, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    admin::ClientOptions co;
    co.address = "127.0.0.1:" + std::to_string((*s)->port());
    co.tls = true;
    co.tls_ca_file = ca_file;
    if (!c.cert.empty()) {
      co.tls_cert_file = gantry::testing::WriteTestFile(dir, c.name + ".crt", c.cert);
      co.tls_key_file = gantry::testing::WriteTestFile(dir, c.name + ".key", c.key);
    }
    co.timeout_millis = 10'000;
    auto client = admin::AdminClient::Connect(co);
    ASSERT_TRUE(client.ok()) << client.status();
    v1::ExplainRequest req;
    req.set_namespace_("ml");
    req.set_name("big");
    absl::Status st = (*client)->Explain(req).status();
    EXPECT_EQ(st.ok(), c.ok) << st;
    if (!c.ok) {
      EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
    }
  }
  // Refused handshakes never reach the service.
  EXPECT_EQ(metrics.requests->With({"Explain", "OK"}).Value(), 1);
}

// ---- DiagnosisStore -----------------------------------------------------------

framework::PodInfoPtr PodInfo(const std::string& name, const std::string& uid) {
  auto pod = std::make_shared<api::Pod>();
  pod->meta.name = name;
  pod->meta.namespace_ = api::Symbol::Intern("ml");
  pod->meta.uid = uid;
  return framework::PodInfo::Create(pod, 0);
}

TEST(DiagnosisStoreTest, KeepsOnlyPendingPodsWithinBounds) {
  FakeClock clock(1);
  admin::DiagnosisStore store(clock, /*max_pods=*/2, /*max_nodes_per_reason=*/2);
  framework::FitError fit;
  fit.num_all_nodes = 4;
  for (const char* n : {"n3", "n1", "n2", "n0"}) {
    fit.diagnosis.node_to_status[n] =
        framework::Status(framework::Code::kUnschedulable, "Insufficient cpu")
            .WithPlugin("NodeResourcesFit");
  }
  auto failed = [&](const std::string& name) {
    scheduler::AttemptOutcome o;
    o.pod = PodInfo(name, "u-" + name);
    o.result = "unschedulable";
    o.message = "0/4 nodes are available: 4 Insufficient cpu.";
    o.fit_error = &fit;
    store.OnAttempt(o);
  };
  failed("a");
  failed("a");
  std::optional<admin::RecordedAttempt> a = store.FindPod("ml/a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->attempts, 2);
  ASSERT_EQ(a->filtered.size(), 1u);
  EXPECT_EQ(a->filtered[0].node_count, 4);
  EXPECT_EQ(a->filtered[0].nodes,
            (std::vector<std::string>{"n0", "n1"}));  // smallest names, sorted

  failed("b");
  failed("c");  // over max_pods: "a" (least recently attempted) goes
  EXPECT_FALSE(store.FindPod("ml/a").has_value());
  EXPECT_EQ(store.pod_count(), 2u);

  scheduler::AttemptOutcome done;
  done.pod = PodInfo("b", "u-b");
  done.result = "scheduled";
  store.OnAttempt(done);
  EXPECT_FALSE(store.FindPod("ml/b").has_value());

  api::Pod other_uid = PodInfo("c", "u-other")->p();
  store.OnPodDeleted(other_uid);  // a different pod of the same name: kept
  EXPECT_TRUE(store.FindPod("ml/c").has_value());
  store.OnPodDeleted(PodInfo("c", "u-c")->p());
  EXPECT_EQ(store.pod_count(), 0u);
}

}  // namespace
}  // namespace gantry::server
