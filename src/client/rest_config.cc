#include "src/client/rest_config.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/time/time.h"
#include "gantry/util/strings.h"
#include "nlohmann/json.hpp"
#include "src/api/yaml.h"
#include "yaml-cpp/yaml.h"

extern char** environ;

namespace gantry::client {
namespace {

std::string JoinPath(std::string_view base, const std::string& p) {
  if (p.empty() || p[0] == '/' || base.empty()) return p;
  std::string out(base);
  if (out.back() != '/') out.push_back('/');
  return out + p;
}

std::string Str(const YAML::Node& n, const char* key) {
  YAML::Node v = n[key];
  if (!v || v.IsNull()) return "";
  return v.as<std::string>();
}

const YAML::Node FindNamed(const YAML::Node& list, const std::string& name, const char* inner) {
  if (list && list.IsSequence()) {
    for (const YAML::Node& item : list) {
      if (Str(item, "name") == name) return item[inner];
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// Reads PEM either from `<key>-data` (base64) or `<key>` (a file path).
absl::Status LoadPem(const YAML::Node& n, const std::string& key, std::string_view base_dir,
                     std::string* out) {
  std::string data = Str(n, (key + "-data").c_str());
  if (!data.empty()) {
    std::optional<std::string> decoded = Base64Decode(data);
    if (!decoded) return absl::InvalidArgumentError(StrCat(key, "-data is not valid base64"));
    *out = std::move(*decoded);
    return absl::OkStatus();
  }
  std::string file = Str(n, key.c_str());
  if (file.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> content = ReadFileToString(JoinPath(base_dir, file));
  if (!content.ok()) return absl::InvalidArgumentError(StrCat(key, ": ", content.status().message()));
  *out = std::move(*content);
  return absl::OkStatus();
}

int64_t NowMicros(const Clock* clock) {
  if (clock != nullptr) return clock->NowMicros();
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string TrimSpace(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::optional<std::string> Base64Decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    int v = val(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(StrCat("cannot read ", path));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

absl::StatusOr<RestConfig> ParseKubeconfig(std::string_view text, std::string_view base_dir,
                                           std::string_view context_override, std::string_view master) {
  if (absl::Status st = api::CheckYamlBudget(text); !st.ok()) {
    return absl::InvalidArgumentError(StrCat("kubeconfig:", st.message()));
  }
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root || !root.IsMap()) return absl::InvalidArgumentError("kubeconfig: not a YAML mapping");
    std::string ctx_name = context_override.empty() ? Str(root, "current-context") : std::string(context_override);
    if (ctx_name.empty()) return absl::InvalidArgumentError("kubeconfig: no current-context");
    YAML::Node ctx = FindNamed(root["contexts"], ctx_name, "context");
    if (!ctx) return absl::InvalidArgumentError(StrCat("kubeconfig: context \"", ctx_name, "\" not found"));
    const std::string cluster_name = Str(ctx, "cluster");
    const std::string user_name = Str(ctx, "user");
    YAML::Node cluster = FindNamed(root["clusters"], cluster_name, "cluster");
    if (!cluster) return absl::InvalidArgumentError(StrCat("kubeconfig: cluster \"", cluster_name, "\" not found"));
    YAML::Node user = FindNamed(root["users"], user_name, "user");
    if (!user_name.empty() && !user) {
      return absl::InvalidArgumentError(StrCat("kubeconfig: user \"", user_name, "\" not found"));
    }

    RestConfig cfg;
    cfg.source = StrCat("kubeconfig context ", ctx_name);
    cfg.server = master.empty() ? Str(cluster, "server") : std::string(master);
    while (!cfg.server.empty() && cfg.server.back() == '/') cfg.server.pop_back();
    if (cfg.server.empty()) return absl::InvalidArgumentError(StrCat("kubeconfig: cluster \"", cluster_name, "\" has no server"));
    if (YAML::Node v = cluster["insecure-skip-tls-verify"]; v && !v.IsNull()) cfg.insecure_skip_tls_verify = v.as<bool>();
    cfg.tls_server_name = Str(cluster, "tls-server-name");
    if (absl::Status s = LoadPem(cluster, "certificate-authority", base_dir, &cfg.ca_pem); !s.ok()) {
      return absl::InvalidArgumentError(StrCat("kubeconfig: cluster \"", cluster_name, "\": ", s.message()));
    }
    if (user) {
      auto prefix = [&](const absl::Status& s) {
        return absl::InvalidArgumentError(StrCat("kubeconfig: user \"", user_name, "\": ", s.message()));
      };
      if (absl::Status s = LoadPem(user, "client-certificate", base_dir, &cfg.client_cert_pem); !s.ok()) return prefix(s);
      if (absl::Status s = LoadPem(user, "client-key", base_dir, &cfg.client_key_pem); !s.ok()) return prefix(s);
      cfg.token = Str(user, "token");
      std::string tf = Str(user, "tokenFile");
      if (!tf.empty()) cfg.token_file = JoinPath(base_dir, tf);
      cfg.username = Str(user, "username");
      cfg.password = Str(user, "password");
      if (YAML::Node ex = user["exec"]; ex && ex.IsMap()) {
        ExecConfig e;
        if (std::string v = Str(ex, "apiVersion"); !v.empty()) e.api_version = v;
        if (e.api_version != "client.authentication.k8s.io/v1" &&
            e.api_version != "client.authentication.k8s.io/v1beta1") {
          return absl::InvalidArgumentError(StrCat("kubeconfig: user \"", user_name,
                                                   "\": exec apiVersion ", e.api_version, " is not supported"));
        }
        e.command = Str(ex, "command");
        if (e.command.empty()) return absl::InvalidArgumentError(StrCat("kubeconfig: user \"", user_name, "\": exec has no command"));
        if (e.command.find('/') != std::string::npos && e.command[0] != '/') e.command = JoinPath(base_dir, e.command);
        if (YAML::Node a = ex["args"]; a && a.IsSequence()) {
          for (const YAML::Node& x : a) e.args.push_back(x.as<std::string>());
        }
        if (YAML::Node en = ex["env"]; en && en.IsSequence()) {
          for (const YAML::Node& x : en) e.env.emplace_back(Str(x, "name"), Str(x, "value"));
        }
        if (YAML::Node p = ex["provideClusterInfo"]; p && !p.IsNull()) e.provide_cluster_info = p.as<bool>();
        e.interactive_mode = Str(ex, "interactiveMode");
        if (e.interactive_mode == "Always") {
          return absl::InvalidArgumentError(StrCat("kubeconfig: user \"", user_name,
                                                   "\": exec interactiveMode Always needs a terminal"));
        }
        cfg.exec = std::move(e);
      }
    }
    if (!cfg.client_cert_pem.empty() != !cfg.client_key_pem.empty()) {
      return absl::InvalidArgumentError(StrCat("kubeconfig: user \"", user_name,
                                               "\": client certificate and key must be given together"));
    }
    return cfg;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(StrCat("kubeconfig: ", e.what()));
  }
}

absl::StatusOr<RestConfig> LoadKubeconfig(std::string_view path, std::string_view master,
                                          std::string_view context) {
  absl::StatusOr<std::string> text = ReadFileToString(std::string(path));
  if (!text.ok()) return text.status();
  std::string p(path);
  size_t slash = p.rfind('/');
  std::string dir = slash == std::string::npos ? "." : p.substr(0, slash == 0 ? 1 : slash);
  absl::StatusOr<RestConfig> cfg = ParseKubeconfig(*text, dir, context, master);
  if (!cfg.ok()) return absl::Status(cfg.status().code(), StrCat(path, ": ", cfg.status().message()));
  cfg->source = StrCat(path, " (", cfg->source, ")");
  return cfg;
}

absl::StatusOr<RestConfig> InClusterConfig(std::string_view sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == 0 || *port == 0) {
    return absl::FailedPreconditionError(
        "not running in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set); "
        "give a kubeconfig");
  }
  RestConfig cfg;
  std::string h(host);
  if (h.find(':') != std::string::npos) h = StrCat("[", h, "]");
  cfg.server = StrCat("https://", h, ":", port);
  std::string dir(sa_dir);
  cfg.token_file = dir + "/token";
  if (access(cfg.token_file.c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(StrCat("in-cluster: cannot read service account token ", cfg.token_file));
  }
  absl::StatusOr<std::string> ca = ReadFileToString(dir + "/ca.crt");
  if (ca.ok()) cfg.ca_pem = std::move(*ca);
  cfg.source = "in-cluster service account";
  return cfg;
}

absl::StatusOr<RestConfig> ResolveRestConfig(std::string_view kubeconfig, std::string_view master) {
  if (!kubeconfig.empty()) return LoadKubeconfig(kubeconfig, master);
  if (!master.empty()) {
    // Like upstream, --master alone means that server without credentials.
    RestConfig cfg;
    cfg.server = std::string(master);
    while (!cfg.server.empty() && cfg.server.back() == '/') cfg.server.pop_back();
    cfg.source = StrCat("--master ", master);
    return cfg;
  }
  return InClusterConfig();
}

absl::StatusOr<RestConfig> ResolveClientRestConfig(const ClientConfigSources& s) {
  auto exists = [](const std::string& path) {
    struct stat st;
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  std::string path = s.kubeconfig;
  if (path.empty()) {
    std::string_view list = s.kubeconfig_env;
    while (path.empty() && !list.empty()) {
      const size_t colon = list.find(':');
      std::string entry(list.substr(0, colon));
      list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
      if (exists(entry)) path = std::move(entry);
    }
    if (path.empty() && !s.kubeconfig_env.empty() && s.master.empty()) {
      return absl::NotFoundError(
          StrCat("KUBECONFIG=", s.kubeconfig_env, ": none of its files exists"));
    }
  }
  if (path.empty() && s.kubeconfig_env.empty() && !s.home.empty()) {
    std::string home_config = StrCat(s.home, "/.kube/config");
    if (exists(home_config)) path = std::move(home_config);
  }
  if (!path.empty()) return LoadKubeconfig(path, s.master, s.context);
  if (!s.context.empty()) {
    return absl::InvalidArgumentError(
        StrCat("--context ", s.context, ": no kubeconfig (--kubeconfig, KUBECONFIG or ",
               "~/.kube/config) to take it from"));
  }
  return ResolveRestConfig("", s.master);
}

// ---- CredentialProvider ------------------------------------------------------

CredentialProvider::CredentialProvider(RestConfig config, const Clock* clock, int64_t token_file_refresh_micros)
    : config_(std::move(config)), clock_(clock), refresh_micros_(token_file_refresh_micros) {}

int CredentialProvider::exec_runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exec_runs_;
}

bool CredentialProvider::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  bool can_change = false;
  if (config_.exec) {
    exec_valid_ = false;
    can_change = true;
  }
  if (!config_.token_file.empty()) {
    file_read_micros_ = -1;
    can_change = true;
  }
  return can_change;
}

absl::StatusOr<Credentials> CredentialProvider::Get() {
  std::lock_guard<std::mutex> lock(mu_);
  Credentials c;
  c.client_cert_pem = config_.client_cert_pem;
  c.client_key_pem = config_.client_key_pem;
  c.bearer_token = config_.token;
  const int64_t now = NowMicros(clock_);
  if (!config_.token_file.empty()) {
    if (file_read_micros_ < 0 || now - file_read_micros_ >= refresh_micros_) {
      absl::StatusOr<std::string> t = ReadFileToString(config_.token_file);
      if (t.ok()) {
        file_token_ = TrimSpace(*t);
        file_read_micros_ = now;
      } else if (file_token_.empty()) {
        return absl::UnauthenticatedError(StrCat("cannot read token file ", config_.token_file));
      }
      // else: keep the last good token (the file may be mid-rotation).
    }
    if (!file_token_.empty()) c.bearer_token = file_token_;
  }
  if (config_.exec) {
    if (!exec_valid_ || (exec_expiry_micros_ && now >= *exec_expiry_micros_)) {
      if (absl::Status s = RunExec(); !s.ok()) return s;
    }
    if (!exec_creds_.bearer_token.empty()) c.bearer_token = exec_creds_.bearer_token;
    if (!exec_creds_.client_cert_pem.empty()) {
      c.client_cert_pem = exec_creds_.client_cert_pem;
      c.client_key_pem = exec_creds_.client_key_pem;
    }
  }
  return c;
}

absl::Status CredentialProvider::RunExec() {
  const ExecConfig& e = *config_.exec;
  ++exec_runs_;
  nlohmann::json info = {{"apiVersion", e.api_version},
                         {"kind", "ExecCredential"},
                         {"spec", {{"interactive", false}}}};
  if (e.provide_cluster_info) {
    nlohmann::json cluster = {{"server", config_.server}};
    if (!config_.tls_server_name.empty()) cluster["tls-server-name"] = config_.tls_server_name;
    if (config_.insecure_skip_tls_verify) cluster["insecure-skip-tls-verify"] = true;
    if (!config_.ca_pem.empty()) {
      static const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      std::string b64;
      const std::string& in = config_.ca_pem;
      for (size_t i = 0; i < in.size(); i += 3) {
        uint32_t n = static_cast<uint8_t>(in[i]) << 16;
        if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
        if (i + 2 < in.size()) n |= static_cast<uint8_t>(in[i + 2]);
        b64.push_back(kB64[(n >> 18) & 63]);
        b64.push_back(kB64[(n >> 12) & 63]);
        b64.push_back(i + 1 < in.size() ? kB64[(n >> 6) & 63] : '=');
        b64.push_back(i + 2 < in.size() ? kB64[n & 63] : '=');
      }
      cluster["certificate-authority-data"] = b64;
    }
    info["spec"]["cluster"] = cluster;
  }

  std::vector<std::string> env_strings;
  for (char** p = environ; p != nullptr && *p != nullptr; ++p) {
    std::string_view kv(*p);
    if (kv.rfind("KUBERNETES_EXEC_INFO=", 0) == 0) continue;
    bool overridden = false;
    for (const auto& [k, v] : e.env) {
      if (kv.size() > k.size() && kv.substr(0, k.size()) == k && kv[k.size()] == '=') overridden = true;
    }
    if (!overridden) env_strings.emplace_back(kv);
  }
  for (const auto& [k, v] : e.env) env_strings.push_back(k + "=" + v);
  env_strings.push_back("KUBERNETES_EXEC_INFO=" + info.dump());
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{e.command};
  argv_strings.insert(argv_strings.end(), e.args.begin(), e.args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return absl::InternalError("exec plugin: pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, e.command.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(out_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    return absl::UnauthenticatedError(StrCat("exec plugin: cannot run ", e.command, ": ", strerror(rc)));
  }
  std::string out;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool timed_out = false;
  while (true) {
    pollfd pfd{out_pipe[0], POLLIN, 0};
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    if (left <= 0) {
      timed_out = true;
      break;
    }
    int pr = poll(&pfd, 1, left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) {
      timed_out = pr == 0;
      break;
    }
    ssize_t n = read(out_pipe[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (1u << 20)) break;
  }
  close(out_pipe[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return absl::UnauthenticatedError(StrCat("exec plugin ", e.command, " timed out"));
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::UnauthenticatedError(StrCat("exec plugin ", e.command, " failed (exit status ",
                                             WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, ")"));
  }
  try {
    nlohmann::json j = nlohmann::json::parse(out);
    if (j.value("kind", "") != "ExecCredential") {
      return absl::UnauthenticatedError(StrCat("exec plugin ", e.command, ": output is not an ExecCredential"));
    }
    if (j.contains("apiVersion") && j["apiVersion"] != e.api_version) {
      return absl::UnauthenticatedError(StrCat("exec plugin ", e.command, ": apiVersion ",
                                               j["apiVersion"].get<std::string>(), " does not match ",
                                               e.api_version));
    }
    const nlohmann::json& st = j.at("status");
    Credentials c;
    c.bearer_token = st.value("token", "");
    c.client_cert_pem = st.value("clientCertificateData", "");
    c.client_key_pem = st.value("clientKeyData", "");
    if (c.bearer_token.empty() && c.client_cert_pem.empty()) {
      return absl::UnauthenticatedError(StrCat("exec plugin ", e.command, ": status has neither token nor certificate"));
    }
    if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
      return absl::UnauthenticatedError(StrCat("exec plugin ", e.command,
                                               ": clientCertificateData and clientKeyData must be given together"));
    }
    exec_expiry_micros_.reset();
    if (std::string exp = st.value("expirationTimestamp", ""); !exp.empty()) {
      absl::Time t;
      std::string err;
      if (!absl::ParseTime(absl::RFC3339_full, exp, &t, &err)) {
        return absl::UnauthenticatedError(StrCat("exec plugin ", e.command, ": bad expirationTimestamp ", exp));
      }
      exec_expiry_micros_ = absl::ToUnixMicros(t);
    }
    exec_creds_ = std::move(c);
    exec_valid_ = true;
    return absl::OkStatus();
  } catch (const std::exception& ex) {
    return absl::UnauthenticatedError(StrCat("exec plugin ", e.command, ": invalid output: ", ex.what()));
  }
}

}  // namespace gantry::client
