#include "src/client/http.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "src/client/client_metrics.h"
#include "test/unit/client/test_server.h"

namespace gantry::client {
namespace {

using testing::Running;

RestConfig Plain(int port) {
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(port);
  return cfg;
}

TEST(RateLimiter, BurstThenQps) {
  RateLimiter rl(20, 3);
  EXPECT_TRUE(rl.TryAccept());
  EXPECT_TRUE(rl.TryAccept());
  EXPECT_TRUE(rl.TryAccept());
  EXPECT_FALSE(rl.TryAccept());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(rl.Wait());
  EXPECT_TRUE(rl.Wait());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(ms, 60);  // two tokens at 20/s ≈ 100 ms
  RateLimiter unlimited(0, 1);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(unlimited.TryAccept());
}

TEST(Backoff, GrowsWithJitterAndCaps) {
  Backoff b(100, 1000, 2.0, 0.5, /*seed=*/7);
  int64_t first = b.NextMillis();
  EXPECT_GE(first, 100);
  EXPECT_LT(first, 150);
  int64_t second = b.NextMillis();
  EXPECT_GE(second, 200);
  EXPECT_LT(second, 300);
  for (int i = 0; i < 10; ++i) b.NextMillis();
  int64_t capped = b.NextMillis();
  EXPECT_GE(capped, 1000);
  EXPECT_LT(capped, 1500);
  b.Reset();
  EXPECT_LT(b.NextMillis(), 150);
}

TEST(Backoff, ResetsAfterAStablePeriodAndCanKeepJitterWithinMax) {
  Backoff b(100, 400, 2.0, 1.0, /*seed=*/3);
  b.set_jitter_within_max(true);
  b.set_reset_after_millis(50);
  for (int i = 0; i < 20; ++i) EXPECT_LE(b.NextMillis(), 400) << "call " << i;
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_LT(b.NextMillis(), 200) << "no backoff for 80 ms: starts over";
  Backoff unclamped(100, 400, 2.0, 1.0, /*seed=*/3);
  int64_t most = 0;
  for (int i = 0; i < 20; ++i) most = std::max(most, unclamped.NextMillis());
  EXPECT_GT(most, 400) << "without the clamp the jitter stretches past max";
}

// Bodies over max_response_bytes are dropped whether the server declares
// their length (refused from the header) or streams them chunked.
struct BodyCapCase {
  std::string name;
  bool chunked;
  size_t size;
  bool ok;
};

class BodyCap : public ::testing::TestWithParam<BodyCapCase> {};

TEST_P(BodyCap, DropsBodiesOverTheLimit) {
  const BodyCapCase& tc = GetParam();
  auto srv = std::make_unique<httplib::Server>();
  srv->Get("/api/v1/nodes", [&](const httplib::Request&, httplib::Response& res) {
    const std::string body(tc.size, 'x');
    if (!tc.chunked) {
      res.set_content(body, "application/json");
      return;
    }
    res.set_chunked_content_provider("application/json",
                                     [body](size_t offset, httplib::DataSink& sink) {
                                       if (offset >= body.size()) {
                                         sink.done();
                                         return true;
                                       }
                                       const size_t n = std::min<size_t>(512, body.size() - offset);
                                       sink.write(body.data() + offset, n);
                                       return true;
                                     });
  });
  Running<httplib::Server> server(std::move(srv));
  metrics::Registry registry;
  ClientMetrics counted(registry);
  ClientOptions opts;
  opts.max_response_bytes = 4096;
  opts.metrics = &counted;
  auto client = HttpClient::Create(Plain(server.port()), opts);
  ASSERT_TRUE(client.ok());
  HttpRequest req;
  req.path = "/api/v1/nodes?limit=500";
  absl::StatusOr<HttpResponse> r = (*client)->Do(req);
  if (tc.ok) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->body.size(), tc.size);
    EXPECT_EQ(counted.responses_too_large.With({"nodes"}).Value(), 0);
  } else {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
    EXPECT_NE(std::string(r.status().message()).find("over the limit of 4096 bytes"),
              std::string::npos)
        << r.status();
    EXPECT_EQ(counted.responses_too_large.With({"nodes"}).Value(), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Http, BodyCap,
                         ::testing::Values(BodyCapCase{"DeclaredUnder", false, 4000, true},
                                           BodyCapCase{"DeclaredOver", false, 5000, false},
                                           BodyCapCase{"ChunkedUnder", true, 4096, true},
                                           BodyCapCase{"ChunkedOver", true, 100'000, false}),
                         [](const ::testing::TestParamInfo<BodyCapCase>& i) {
                           return i.param.name;
                         });

// A watch line over max_line_bytes is not kept: the lines before it are
// delivered, it is skipped to its end (its size reported exactly), and the
// stream ends there.
TEST(HttpClient, StreamSkipsAnOversizedLineAndEnds) {
  const std::string big(5000, 'y');
  auto srv = std::make_unique<httplib::Server>();
  srv->Get("/watch", [&](const httplib::Request&, httplib::Response& res) {
    const std::string body = "{\"a\":1}\n" + big + "\n{\"a\":2}\n";
    // Small chunks: the oversized line spans many writes.
    res.set_chunked_content_provider("application/json",
                                     [body](size_t offset, httplib::DataSink& sink) {
                                       if (offset >= body.size()) {
                                         sink.done();
                                         return true;
                                       }
                                       const size_t n = std::min<size_t>(300, body.size() - offset);
                                       sink.write(body.data() + offset, n);
                                       return true;
                                     });
  });
  Running<httplib::Server> server(std::move(srv));
  ClientOptions opts;
  opts.max_line_bytes = 1000;
  auto client = HttpClient::Create(Plain(server.port()), opts);
  ASSERT_TRUE(client.ok());
  std::vector<std::string> lines;
  HttpRequest req;
  req.path = "/watch";
  auto r = (*client)->Stream(
      req,
      [&](std::string_view l) {
        lines.emplace_back(l);
        return true;
      },
      nullptr, 5000);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(std::string(r.status().message()).find("a watch event of 5000 bytes"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}"}));
}

// An idle stream ends with DeadlineExceeded (a stall), not as a normal end.
TEST(HttpClient, StreamIdleTimeoutIsDeadlineExceeded) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto srv = std::make_unique<httplib::Server>();
  srv->Get("/watch", [release](const httplib::Request&, httplib::Response& res) {
    testing::HoldOpenWithoutData(res, release);
  });
  Running<httplib::Server> server(std::move(srv));
  auto client = HttpClient::Create(Plain(server.port()), ClientOptions{});
  ASSERT_TRUE(client.ok());
  HttpRequest req;
  req.path = "/watch";
  auto r = (*client)->Stream(
      req, [](std::string_view) { return true; }, nullptr, 200);
  release->store(true);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
}

// Protobuf wire format, written independently of the decoder under test.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string LenField(uint32_t field, std::string_view value) {
  return Varint(field << 3 | 2) + Varint(value.size()) + std::string(value);
}
std::string VarintField(uint32_t field, uint64_t value) {
  return Varint(field << 3) + Varint(value);
}

// "k8s\0" + runtime.Unknown{typeMeta{v1, kind}, raw: meta/v1 Status}.
std::string ProtobufStatus(std::string_view kind, std::string_view message, std::string_view reason,
                           int code) {
  std::string status = LenField(1, "") + LenField(2, "Failure") + LenField(3, message) +
                       LenField(4, reason) + VarintField(6, static_cast<uint64_t>(code));
  std::string unknown = LenField(1, LenField(1, "v1") + LenField(2, kind)) + LenField(2, status) +
                        LenField(3, "") + LenField(4, "");
  return std::string("k8s\0", 4) + unknown;
}

struct ProtoStatusCase {
  std::string name;
  std::string body;
  bool ok;
  std::string message;
  std::string reason;
};

class ProtoStatusTest : public ::testing::TestWithParam<ProtoStatusCase> {};

TEST_P(ProtoStatusTest, Decodes) {
  const ProtoStatusCase& tc = GetParam();
  std::string message = "unset", reason = "unset";
  EXPECT_EQ(DecodeProtobufStatus(tc.body, &message, &reason), tc.ok);
  if (tc.ok) {
    EXPECT_EQ(message, tc.message);
    EXPECT_EQ(reason, tc.reason);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Http, ProtoStatusTest,
    ::testing::Values(
        ProtoStatusCase{"conflict",
                        ProtobufStatus("Status", "pod ns/p is already assigned to node \"n1\"",
                                       "Conflict", 409),
                        true, "pod ns/p is already assigned to node \"n1\"", "Conflict"},
        ProtoStatusCase{"no_reason", ProtobufStatus("Status", "boom", "", 500), true, "boom", ""},
        ProtoStatusCase{"not_a_status", ProtobufStatus("Pod", "x", "y", 409), false, "", ""},
        ProtoStatusCase{"no_magic", R"({"kind":"Status","message":"m"})", false, "", ""},
        ProtoStatusCase{"truncated",
                        ProtobufStatus("Status", "message", "Conflict", 409).substr(0, 20), false,
                        "", ""},
        ProtoStatusCase{"magic_only", std::string("k8s\0", 4), false, "", ""}),
    [](const ::testing::TestParamInfo<ProtoStatusCase>& info) { return info.param.name; });

TEST(HttpError, ReadsProtobufAndJsonStatus) {
  HttpResponse proto;
  proto.status = 409;
  proto.content_type = "application/vnd.kubernetes.protobuf";
  proto.body = ProtobufStatus("Status", "the object has been modified", "Conflict", 409);
  absl::Status st = HttpError(proto, "patch claim ns/c");
  EXPECT_EQ(st.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(std::string(st.message()), "patch claim ns/c: HTTP 409: the object has been modified");

  proto.body = ProtobufStatus("Status", "events \"e\" already exists", "AlreadyExists", 409);
  EXPECT_EQ(HttpError(proto, "create").code(), absl::StatusCode::kAlreadyExists);

  HttpResponse json;
  json.status = 404;
  json.content_type = "application/json";
  json.body = R"({"kind":"Status","message":"pods \"p\" not found","reason":"NotFound"})";
  st = HttpError(json, "bind");
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(std::string(st.message()), "bind: HTTP 404: pods \"p\" not found");
}

TEST(HttpClient, RetryAfterOn429And5xxIsBounded) {
  auto srv = std::make_unique<httplib::Server>();
  std::atomic<int> calls{0};
  srv->Get("/flaky", [&](const httplib::Request&, httplib::Response& res) {
    if (calls.fetch_add(1) < 2) {
      res.status = calls.load() == 1 ? 429 : 503;
      res.set_header("Retry-After", "0");
      res.set_content(R"({"kind":"Status","message":"slow down"})", "application/json");
      return;
    }
    res.set_content(R"({"ok":true})", "application/json");
  });
  std::atomic<int> always{0};
  srv->Get("/always", [&](const httplib::Request&, httplib::Response& res) {
    always.fetch_add(1);
    res.status = 429;
    res.set_header("Retry-After", "0");
  });
  std::atomic<int> no_header{0};
  srv->Get("/noheader", [&](const httplib::Request&, httplib::Response& res) {
    no_header.fetch_add(1);
    res.status = 500;
    res.set_content(R"({"kind":"Status","message":"boom","reason":"InternalError"})",
                    "application/json");
  });
  Running<httplib::Server> server(std::move(srv));
  ClientOptions opts;
  opts.max_retries = 3;
  auto client = HttpClient::Create(Plain(server.port()), opts);
  ASSERT_TRUE(client.ok()) << client.status();

  HttpRequest req;
  req.path = "/flaky";
  absl::StatusOr<HttpResponse> r = (*client)->Do(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(calls.load(), 3);

  req.path = "/always";
  r = (*client)->Do(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(always.load(), 4);  // first try + 3 retries

  req.path = "/noheader";
  r = (*client)->Do(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(no_header.load(), 1);  // no Retry-After: no retry
  absl::Status err = HttpError(*r, "get");
  EXPECT_EQ(err.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(std::string(err.message()).find("boom"), std::string::npos);
}

// Rounds of `concurrent` overlapping requests (the server answers a round
// only once all of it arrived, so each request holds its own connection):
// the first round opens `concurrent` connections; later rounds reuse the
// idle ones the client kept (at most max_idle_connections) and open the rest.
struct ReuseCase {
  std::string name;
  size_t max_idle;
  int concurrent;
  int rounds;
  int64_t want_connections;
};

class ConnectionReuse : public ::testing::TestWithParam<ReuseCase> {};

TEST_P(ConnectionReuse, KeepsIdleConnectionsUpToTheLimit) {
  const ReuseCase& tc = GetParam();
  auto srv = std::make_unique<httplib::Server>();
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool timed_out = false;
  srv->Get("/gate", [&](const httplib::Request&, httplib::Response& res) {
    std::unique_lock<std::mutex> lock(mu);
    const int mine = ++arrived;
    const int round_end = ((mine - 1) / tc.concurrent + 1) * tc.concurrent;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return arrived >= round_end; })) {
      timed_out = true;
    }
    res.set_content(R"({"ok":true})", "application/json");
  });
  Running<httplib::Server> server(std::move(srv));
  ClientOptions opts;
  opts.max_idle_connections = tc.max_idle;
  auto client = HttpClient::Create(Plain(server.port()), opts);
  ASSERT_TRUE(client.ok()) << client.status();
  for (int round = 0; round < tc.rounds; ++round) {
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < tc.concurrent; ++i) {
      threads.emplace_back([&] {
        HttpRequest req;
        req.path = "/gate";
        absl::StatusOr<HttpResponse> r = (*client)->Do(req);
        if (r.ok() && r->status == 200) ok.fetch_add(1);
      });
    }
    for (std::thread& t : threads) t.join();
    ASSERT_EQ(ok.load(), tc.concurrent) << "round " << round;
  }
  EXPECT_FALSE(timed_out) << "requests of a round did not overlap";
  EXPECT_EQ((*client)->requests_sent(), tc.concurrent * tc.rounds);
  EXPECT_EQ((*client)->connections_opened(), tc.want_connections);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConnectionReuse,
    ::testing::Values(ReuseCase{"AllKept", 32, 6, 3, 6},
                      ReuseCase{"PoolSmallerThanConcurrency", 2, 6, 3, 6 + 4 + 4},
                      ReuseCase{"NoneKept", 0, 4, 2, 8}, ReuseCase{"Sequential", 32, 1, 4, 1}),
    [](const ::testing::TestParamInfo<ReuseCase>& i) { return i.param.name; });

TEST(HttpClient, BearerTokenAnd401ReRunsExecOnce) {
  char tmpl[] = "/tmp/gantry-http-test-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string plugin = dir + "/p.sh";
  {
    FILE* f = fopen(plugin.c_str(), "w");
    fprintf(f,
            "#!/bin/sh\nn=$(cat %s/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > %s/n\n"
            "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
            "\"status\":{\"token\":\"t'$n'\"}}'\n",
            dir.c_str(), dir.c_str());
    fclose(f);
    chmod(plugin.c_str(), 0700);
  }
  auto srv = std::make_unique<httplib::Server>();
  std::atomic<int> calls{0};
  srv->Get("/api", [&](const httplib::Request& req, httplib::Response& res) {
    calls.fetch_add(1);
    if (req.get_header_value("Authorization") != "Bearer t2") {
      res.status = 401;
      return;
    }
    res.set_content(R"({"versions":["v1"]})", "application/json");
  });
  Running<httplib::Server> server(std::move(srv));
  RestConfig cfg = Plain(server.port());
  cfg.exec = ExecConfig{};
  cfg.exec->command = plugin;
  auto client = HttpClient::Create(cfg, ClientOptions{});
  ASSERT_TRUE(client.ok());
  HttpRequest req;
  req.path = "/api";
  absl::StatusOr<HttpResponse> r = (*client)->Do(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(calls.load(), 2);
}

TEST(HttpClient, StreamSplitsLinesAndStops) {
  auto srv = std::make_unique<httplib::Server>();
  srv->Get("/watch", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"a\":1}\n{\"a\":2}\n\n{\"a\":3}\n", "application/json");
  });
  srv->Get("/gone", [](const httplib::Request&, httplib::Response& res) {
    res.status = 410;
    res.set_content(R"({"kind":"Status","code":410})", "application/json");
  });
  Running<httplib::Server> server(std::move(srv));
  auto client = HttpClient::Create(Plain(server.port()), ClientOptions{});
  ASSERT_TRUE(client.ok());
  std::vector<std::string> lines;
  HttpRequest req;
  req.path = "/watch";
  auto r = (*client)->Stream(
      req,
      [&](std::string_view l) {
        lines.emplace_back(l);
        return true;
      },
      nullptr, 5000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"a\":2}", "{\"a\":3}"}));
  lines.clear();
  r = (*client)->Stream(
      req,
      [&](std::string_view l) {
        lines.emplace_back(l);
        return false;
      },
      nullptr, 5000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(lines.size(), 1u);
  req.path = "/gone";
  lines.clear();
  r = (*client)->Stream(
      req,
      [&](std::string_view l) {
        lines.emplace_back(l);
        return true;
      },
      nullptr, 5000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 410);
  EXPECT_TRUE(lines.empty());
}

TEST(HttpClient, TransportErrorIsUnavailable) {
  auto client = HttpClient::Create(Plain(1), ClientOptions{});  // nothing listens on port 1
  ASSERT_TRUE(client.ok());
  HttpRequest req;
  req.path = "/api";
  EXPECT_EQ((*client)->Do(req).status().code(), absl::StatusCode::kUnavailable);
}

// ---- TLS -------------------------------------------------------------------------------------

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v openssl >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "openssl CLI not found";
    char tmpl[] = "/tmp/gantry-tls-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    const std::string cmd = "cd " + dir_ +
                            " && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -keyout ca.key "
                            "-out ca.crt -subj /CN=test-ca "
                            ">/dev/null 2>&1"
                            " && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr "
                            "-subj /CN=kubernetes >/dev/null 2>&1"
                            " && printf 'subjectAltName=DNS:kubernetes.test,IP:127.0.0.1' > ext"
                            " && openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key "
                            "-CAcreateserial -days 1 -extfile ext "
                            "-out srv.crt >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    auto srv = std::make_unique<httplib::SSLServer>((dir_ + "/srv.crt").c_str(),
                                                    (dir_ + "/srv.key").c_str());
    srv->Get("/version", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"gitVersion":"test"})", "application/json");
    });
    server_ = std::make_unique<Running<httplib::SSLServer>>(std::move(srv));
    ca_ = *ReadFileToString(dir_ + "/ca.crt");
  }
  absl::StatusOr<HttpResponse> Get(RestConfig cfg) {
    auto client = HttpClient::Create(std::move(cfg), ClientOptions{});
    if (!client.ok()) return client.status();
    HttpRequest req;
    req.path = "/version";
    return (*client)->Do(req);
  }
  std::string Server() const { return "https://127.0.0.1:" + std::to_string(server_->port()); }

  std::string dir_, ca_;
  std::unique_ptr<Running<httplib::SSLServer>> server_;
};

TEST_F(TlsTest, VerifiesWithCaRejectsWithoutAndHonoursInsecureAndServerName) {
  RestConfig cfg;
  cfg.server = Server();
  cfg.ca_pem = ca_;
  absl::StatusOr<HttpResponse> r = Get(cfg);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);

  RestConfig untrusted;
  untrusted.server = Server();
  EXPECT_FALSE(Get(untrusted).ok()) << "an unknown CA must fail verification";

  RestConfig insecure = untrusted;
  insecure.insecure_skip_tls_verify = true;
  r = Get(insecure);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);

  RestConfig named = cfg;
  named.tls_server_name = "kubernetes.test";
  r = Get(named);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);

  RestConfig wrong_name = cfg;
  wrong_name.tls_server_name = "other.test";
  EXPECT_FALSE(Get(wrong_name).ok()) << "a name the certificate does not carry must fail";
}

}  // namespace
}  // namespace gantry::client
