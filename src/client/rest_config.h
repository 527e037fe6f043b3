// Where the API server is and how to authenticate to it: kubeconfig files,
// in-cluster service-account configuration, and the credential provider
// that turns them into per-request credentials (static tokens, token files
// re-read as they rotate, exec credential plugins with expiry).
//
// Exception boundary for yaml-cpp and nlohmann::json: nothing throws out.
// Secrets (tokens, keys) never appear in Status messages or logs.
#ifndef GANTRY_SRC_CLIENT_REST_CONFIG_H_
#define GANTRY_SRC_CLIENT_REST_CONFIG_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/clock.h"

namespace gantry::client {

// users[].user.exec (client.authentication.k8s.io/v1 ExecCredential plugin).
struct ExecConfig {
  std::string api_version = "client.authentication.k8s.io/v1";
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  bool provide_cluster_info = false;
  std::string interactive_mode;  // Never | IfAvailable | Always (Gantry never has a TTY)
};

struct RestConfig {
  std::string server;             // https://host:port (no trailing slash)
  std::string ca_pem;             // trusted CA bundle (PEM); empty: system trust store
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string token;              // static bearer token
  std::string token_file;         // bearer token file, re-read periodically
  std::string username, password; // basic auth (discouraged)
  std::optional<ExecConfig> exec;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;    // SNI / verification name override
  std::string source;             // "kubeconfig <path> context <name>", "in-cluster", for logs
};

// Parses kubeconfig text. Relative file paths resolve against `base_dir`.
// `context` empty: current-context. `master` non-empty overrides the server.
absl::StatusOr<RestConfig> ParseKubeconfig(std::string_view text, std::string_view base_dir,
                                           std::string_view context = "",
                                           std::string_view master = "");
absl::StatusOr<RestConfig> LoadKubeconfig(std::string_view path, std::string_view master = "",
                                          std::string_view context = "");

// In-cluster configuration from KUBERNETES_SERVICE_HOST/PORT and the service
// account directory (token and ca.crt). `sa_dir` is overridable for tests.
absl::StatusOr<RestConfig> InClusterConfig(
    std::string_view sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// kube-scheduler's rules: kubeconfig if given (master overrides its server);
// only master: that server without credentials; neither: in-cluster.
absl::StatusOr<RestConfig> ResolveRestConfig(std::string_view kubeconfig, std::string_view master);

// Where a command-line tool (`gantry record`) finds its cluster, in kubectl's
// order: `kubeconfig` (the --kubeconfig flag); else the first file of the
// KUBECONFIG list (`kubeconfig_env`, ':'-separated) that exists (the files
// are not merged); else `home`/.kube/config when it exists; else --master
// alone, or in-cluster. `context` (--context) picks a context other than the
// current one; `master` overrides the server.
struct ClientConfigSources {
  std::string kubeconfig;
  std::string kubeconfig_env;  // $KUBECONFIG
  std::string home;            // $HOME
  std::string context;
  std::string master;
};
absl::StatusOr<RestConfig> ResolveClientRestConfig(const ClientConfigSources& sources);

// Per-request credentials. Thread-safe.
struct Credentials {
  std::string bearer_token;  // empty: none
  std::string client_cert_pem;
  std::string client_key_pem;
};

class CredentialProvider {
 public:
  // `token_file_refresh_micros`: how long a token file read stays fresh.
  explicit CredentialProvider(RestConfig config, const Clock* clock = nullptr,
                              int64_t token_file_refresh_micros = 60'000'000);

  absl::StatusOr<Credentials> Get();
  // The server answered 401: re-read token files and re-run exec plugins
  // on the next Get(). Returns false when nothing could change (static
  // credentials), so retrying the request is pointless.
  bool Invalidate();
  // How many times the exec plugin ran (tests).
  int exec_runs() const;

 private:
  absl::Status RunExec();

  RestConfig config_;
  const Clock* clock_;
  int64_t refresh_micros_;
  mutable std::mutex mu_;
  std::string file_token_;
  int64_t file_read_micros_ = -1;
  bool exec_valid_ = false;
  std::optional<int64_t> exec_expiry_micros_;
  Credentials exec_creds_;
  int exec_runs_ = 0;
};

// Base64 decoding (kubeconfig *-data fields); nullopt on invalid input.
std::optional<std::string> Base64Decode(std::string_view in);
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_REST_CONFIG_H_
