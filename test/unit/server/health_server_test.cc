#include "src/server/health_server.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace gantry::server {
namespace {

using ::testing::HasSubstr;

std::filesystem::path TempDir(std::string_view name) {
  auto dir = std::filesystem::temp_directory_path() /
             (std::string("gantry_server_test_") + std::string(name) + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

class HealthServerTest : public ::testing::Test {
 protected:
  void StartServer(ServingOptions opts = {}) {
    opts.bind_address = "127.0.0.1";
    opts.secure_port = 0;
    auto s = HealthServer::Start(opts, &registry_, &checks_);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *std::move(s);
    ASSERT_GT(server_->port(), 0);
  }
  httplib::Result Get(const std::string& path) {
    httplib::SSLClient cli("127.0.0.1", server_->port());
    cli.enable_server_certificate_verification(false);
    cli.set_connection_timeout(5, 0);
    return cli.Get(path.c_str());
  }

  metrics::Registry registry_;
  HealthChecks checks_;
  std::unique_ptr<HealthServer> server_;
};

TEST_F(HealthServerTest, HealthzLivezAlwaysOk) {
  StartServer();
  for (const char* path : {"/healthz", "/livez"}) {
    auto res = Get(path);
    ASSERT_TRUE(res) << path << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->body, "ok");
  }
  auto verbose = Get("/healthz?verbose");
  ASSERT_TRUE(verbose);
  EXPECT_EQ(verbose->body, "[+]ping ok\nhealthz check passed\n");
}

TEST_F(HealthServerTest, ReadyzWaitsForSyncAndFailsOnShutdown) {
  StartServer();
  auto before = Get("/readyz");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 503);
  EXPECT_THAT(before->body, HasSubstr("[-]sched-handler-sync failed: waiting for handlers to sync"));
  EXPECT_THAT(before->body, HasSubstr("readyz check failed"));

  checks_.SetSynced(true);
  auto after = Get("/readyz");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
  EXPECT_EQ(after->body, "ok");

  checks_.SetShuttingDown();
  auto down = Get("/readyz");
  ASSERT_TRUE(down);
  EXPECT_EQ(down->status, 503);
  EXPECT_THAT(down->body, HasSubstr("[-]shutdown failed"));
  // Liveness is unaffected.
  EXPECT_EQ(Get("/livez")->status, 200);
}

TEST_F(HealthServerTest, FailedLivenessCheckIs500) {
  checks_.AddLivenessCheck("leaderElection", [] { return std::optional<std::string>("lease not renewed"); });
  StartServer();
  auto res = Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  EXPECT_THAT(res->body, HasSubstr("[-]leaderElection failed: lease not renewed"));
}

TEST_F(HealthServerTest, MetricsInTextFormat) {
  registry_.AddCounter("demo_total", "demo").Get().Inc(3);
  StartServer();
  auto res = Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(res->body, HasSubstr("demo_total 3\n"));
  EXPECT_EQ(Get("/nope")->status, 404);
}

TEST_F(HealthServerTest, CertificateFilesAreServedAndVerify) {
  auto tls = GenerateSelfSigned("127.0.0.1");
  ASSERT_TRUE(tls.ok()) << tls.status();
  auto dir = TempDir("files");
  WriteFile(dir / "tls.crt", tls->cert_pem);
  WriteFile(dir / "tls.key", tls->key_pem);
  ServingOptions opts;
  opts.tls_cert_file = (dir / "tls.crt").string();
  opts.tls_private_key_file = (dir / "tls.key").string();
  StartServer(opts);
  httplib::SSLClient cli("127.0.0.1", server_->port());
  cli.set_ca_cert_path((dir / "tls.crt").c_str());
  cli.enable_server_certificate_verification(true);
  auto res = cli.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  std::filesystem::remove_all(dir);
}

TEST_F(HealthServerTest, CertDirIsPopulatedThenReused) {
  auto dir = TempDir("certdir");
  ServingOptions opts;
  opts.cert_dir = (dir / "certs").string();
  auto first = LoadOrCreateTls(opts);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(std::filesystem::exists(dir / "certs" / "gantry.crt"));
  ASSERT_TRUE(std::filesystem::exists(dir / "certs" / "gantry.key"));
  auto perms = std::filesystem::status(dir / "certs" / "gantry.key").permissions();
  EXPECT_EQ(perms & std::filesystem::perms::group_read, std::filesystem::perms::none);
  auto second = LoadOrCreateTls(opts);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->cert_pem, second->cert_pem);
  StartServer(opts);
  EXPECT_EQ(Get("/livez")->status, 200);
  std::filesystem::remove_all(dir);
}

TEST(HealthServerErrorsTest, BadTlsInputs) {
  metrics::Registry registry;
  HealthChecks checks;
  ServingOptions only_cert;
  only_cert.bind_address = "127.0.0.1";
  only_cert.secure_port = 0;
  only_cert.tls_cert_file = "/nonexistent.crt";
  auto s = HealthServer::Start(only_cert, &registry, &checks);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("must be given together"));

  auto a = GenerateSelfSigned("");
  auto b = GenerateSelfSigned("");
  ASSERT_TRUE(a.ok() && b.ok());
  auto dir = TempDir("mismatch");
  WriteFile(dir / "a.crt", a->cert_pem);
  WriteFile(dir / "b.key", b->key_pem);
  ServingOptions mismatch = only_cert;
  mismatch.tls_cert_file = (dir / "a.crt").string();
  mismatch.tls_private_key_file = (dir / "b.key").string();
  s = HealthServer::Start(mismatch, &registry, &checks);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("do not match"));

  ServingOptions bad_port;
  bad_port.secure_port = 70000;
  s = HealthServer::Start(bad_port, &registry, &checks);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("--secure-port"));
  std::filesystem::remove_all(dir);
}

TEST(HealthServerErrorsTest, PortInUse) {
  metrics::Registry registry;
  HealthChecks checks;
  ServingOptions o;
  o.bind_address = "127.0.0.1";
  o.secure_port = 0;
  auto first = HealthServer::Start(o, &registry, &checks);
  ASSERT_TRUE(first.ok());
  o.secure_port = (*first)->port();
  auto second = HealthServer::Start(o, &registry, &checks);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("cannot listen on 127.0.0.1"));
  (*first)->Stop();
  (*first)->Stop();  // idempotent
}

}  // namespace
}  // namespace gantry::server
