#include "src/client/rest_config.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string TempDir() {
  char tmpl[] = "/tmp/gantry-client-test-XXXXXX";
  return mkdtemp(tmpl);
}

void WriteFile(const std::string& path, const std::string& text, mode_t mode = 0600) {
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
}

TEST(Kubeconfig, CurrentContextWithDataAndFiles) {
  const std::string dir = TempDir();
  WriteFile(dir + "/ca.crt", "CA-PEM");
  // "CERT" / "KEY" base64.
  const std::string text = R"(apiVersion: v1
kind: Config
current-context: b
clusters:
- name: c1
  cluster: {server: "https://10.0.0.1:6443/", certificate-authority: ca.crt, tls-server-name: kubernetes}
- name: c2
  cluster: {server: "https://other", insecure-skip-tls-verify: true}
users:
- name: u1
  user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ, token: s3cret}
contexts:
- name: a
  context: {cluster: c2, user: u1}
- name: b
  context: {cluster: c1, user: u1}
)";
  absl::StatusOr<RestConfig> cfg = ParseKubeconfig(text, dir);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->server, "https://10.0.0.1:6443");
  EXPECT_EQ(cfg->ca_pem, "CA-PEM");
  EXPECT_EQ(cfg->client_cert_pem, "CERT");
  EXPECT_EQ(cfg->client_key_pem, "KEY");
  EXPECT_EQ(cfg->token, "s3cret");
  EXPECT_EQ(cfg->tls_server_name, "kubernetes");
  EXPECT_FALSE(cfg->insecure_skip_tls_verify);

  absl::StatusOr<RestConfig> other = ParseKubeconfig(text, dir, "a", "https://master:1");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->server, "https://master:1");
  EXPECT_TRUE(other->insecure_skip_tls_verify);
}

TEST(Kubeconfig, ErrorsAreStatusesAndNeverShowTokens) {
  EXPECT_FALSE(ParseKubeconfig("{{{ not yaml", "/").ok());
  EXPECT_FALSE(ParseKubeconfig("- a\n- b\n", "/").ok());
  absl::StatusOr<RestConfig> r = ParseKubeconfig(R"(current-context: x
contexts: [{name: x, context: {cluster: nope, user: u}}]
users: [{name: u, user: {token: topsecret}}]
)", "/");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cluster \"nope\" not found"));
  EXPECT_THAT(std::string(r.status().message()), Not(HasSubstr("topsecret")));
  r = ParseKubeconfig(R"(current-context: x
contexts: [{name: x, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://s", certificate-authority: /nonexistent/ca}}]
)", "/");
  EXPECT_FALSE(r.ok());
}

TEST(Kubeconfig, ExecPluginConfig) {
  absl::StatusOr<RestConfig> r = ParseKubeconfig(R"(current-context: x
contexts: [{name: x, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://s"}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin
      args: [get-token]
      env: [{name: A, value: b}]
      provideClusterInfo: true
      interactiveMode: Never
)", "/etc/kube");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->exec.has_value());
  EXPECT_EQ(r->exec->command, "/etc/kube/./plugin");
  EXPECT_EQ(r->exec->args, std::vector<std::string>{"get-token"});
  EXPECT_TRUE(r->exec->provide_cluster_info);
}

TEST(InCluster, EnvAndServiceAccountFiles) {
  const std::string dir = TempDir();
  WriteFile(dir + "/token", "tok1\n");
  WriteFile(dir + "/ca.crt", "CA");
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(InClusterConfig(dir).status().code(), absl::StatusCode::kFailedPrecondition);
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  absl::StatusOr<RestConfig> cfg = InClusterConfig(dir);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->server, "https://[fd00::1]:443");
  EXPECT_EQ(cfg->ca_pem, "CA");
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");

  // The token file is re-read as it rotates.
  CredentialProvider creds(*cfg, nullptr, /*token_file_refresh_micros=*/0);
  EXPECT_EQ(creds.Get()->bearer_token, "tok1");
  WriteFile(dir + "/token", "tok2");
  EXPECT_EQ(creds.Get()->bearer_token, "tok2");
}

TEST(Credentials, ExecPluginRunsUntilExpiryAndOnInvalidate) {
  const std::string dir = TempDir();
  const std::string plugin = dir + "/plugin.sh";
  // Counts its runs; prints a token that expires far in the future.
  WriteFile(plugin, "#!/bin/sh\nn=$(cat " + dir + "/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > " + dir +
                        "/n\n[ -n \"$KUBERNETES_EXEC_INFO\" ] || exit 3\n"
                        "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                        "\"status\":{\"token\":\"exec-'$n'\",\"expirationTimestamp\":\"2999-01-01T00:00:00Z\"}}'\n",
            0700);
  RestConfig cfg;
  cfg.server = "https://s";
  cfg.exec = ExecConfig{};
  cfg.exec->command = plugin;
  CredentialProvider creds(cfg);
  EXPECT_EQ(creds.Get()->bearer_token, "exec-1");
  EXPECT_EQ(creds.Get()->bearer_token, "exec-1");  // cached until expiry
  EXPECT_TRUE(creds.Invalidate());
  EXPECT_EQ(creds.Get()->bearer_token, "exec-2");
  EXPECT_EQ(creds.exec_runs(), 2);

  // Expired credentials are refreshed on every use.
  WriteFile(plugin, "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                    "\"status\":{\"token\":\"old\",\"expirationTimestamp\":\"2000-01-01T00:00:00Z\"}}'\n",
            0700);
  CredentialProvider expiring(cfg);
  ASSERT_TRUE(expiring.Get().ok());
  ASSERT_TRUE(expiring.Get().ok());
  EXPECT_EQ(expiring.exec_runs(), 2);

  // A failing plugin is an Unauthenticated error.
  WriteFile(plugin, "#!/bin/sh\nexit 1\n", 0700);
  CredentialProvider failing(cfg);
  EXPECT_EQ(failing.Get().status().code(), absl::StatusCode::kUnauthenticated);

  // Static credentials cannot change on a 401.
  RestConfig fixed;
  fixed.token = "t";
  CredentialProvider st(fixed);
  EXPECT_FALSE(st.Invalidate());
}

}  // namespace
}  // namespace gantry::client
