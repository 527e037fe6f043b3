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

// A command-line tool finds its cluster as kubectl does: --kubeconfig, the
// first existing file of KUBECONFIG, ~/.kube/config, then --master alone or
// in-cluster; --context picks a context.
TEST(ClientRestConfig, KubectlOrderAndContext) {
  const std::string dir = TempDir();
  auto kubeconfig = [](const std::string& server_a, const std::string& server_b) {
    return "apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters:\n"
           "- {name: ca, cluster: {server: '" + server_a + "'}}\n"
           "- {name: cb, cluster: {server: '" + server_b + "'}}\n"
           "users: [{name: u, user: {token: t}}]\ncontexts:\n"
           "- {name: a, context: {cluster: ca, user: u}}\n"
           "- {name: b, context: {cluster: cb, user: u}}\n";
  };
  WriteFile(dir + "/flag", kubeconfig("https://flag-a", "https://flag-b"));
  WriteFile(dir + "/env", kubeconfig("https://env-a", "https://env-b"));
  mkdir((dir + "/home").c_str(), 0700);
  mkdir((dir + "/home/.kube").c_str(), 0700);
  WriteFile(dir + "/home/.kube/config", kubeconfig("https://home-a", "https://home-b"));
  mkdir((dir + "/empty-home").c_str(), 0700);
  unsetenv("KUBERNETES_SERVICE_HOST");
  struct Case {
    const char* name;
    ClientConfigSources sources;
    std::string want_server;  // empty: an error
    const char* want_error = "";
  };
  const Case cases[] = {
      {"the flag wins", {dir + "/flag", dir + "/env", dir + "/home", "", ""}, "https://flag-a"},
      {"the flag with a context", {dir + "/flag", "", "", "b", ""}, "https://flag-b"},
      {"KUBECONFIG: first existing file", {"", dir + "/nope:" + dir + "/env", dir + "/home", "", ""},
       "https://env-a"},
      {"KUBECONFIG with a context", {"", dir + "/env", "", "b", ""}, "https://env-b"},
      {"KUBECONFIG naming no file", {"", dir + "/nope", dir + "/home", "", ""}, "",
       "none of its files exists"},
      {"~/.kube/config", {"", "", dir + "/home", "", ""}, "https://home-a"},
      {"--master overrides the server", {"", "", dir + "/home", "", "https://m:1"}, "https://m:1"},
      {"--master alone", {"", "", dir + "/empty-home", "", "https://m:2"}, "https://m:2"},
      {"a context with nothing to take it from", {"", "", dir + "/empty-home", "b", ""}, "",
       "--context b: no kubeconfig"},
      {"an unknown context", {dir + "/flag", "", "", "zz", ""}, "", "zz"},
      {"nothing: in-cluster, which needs the service env", {"", "", dir + "/empty-home", "", ""},
       "", "not running in a cluster"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<RestConfig> cfg = ResolveClientRestConfig(c.sources);
    if (c.want_server.empty()) {
      ASSERT_FALSE(cfg.ok());
      EXPECT_THAT(std::string(cfg.status().message()), HasSubstr(c.want_error));
      continue;
    }
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    EXPECT_EQ(cfg->server, c.want_server);
  }
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
