// `gantry explain POD|pod/NAME|podgroup/NAME [-n NS] (--server ADDR | --cluster SNAPSHOT)`
// and `gantry whatif -f OBJECTS (--server ADDR | --cluster SNAPSHOT)`: ask a
// running scheduler's admin service (gRPC), or run the same engine offline
// on a snapshot file.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "plugins/registry/registry.h"
#include "src/admin/client.h"
#include "src/admin/engine.h"
#include "src/admin/render.h"
#include "src/config/config.h"
#include "src/main/commands.h"
#include "src/sim/loader.h"

namespace gantry::cmd {
namespace {

struct AdminCommandOptions {
  std::string server;
  std::string cluster;
  std::string config;
  uint64_t seed = 1;
  bool json = false;
  admin::ClientOptions client;
  double timeout_seconds = 120;
};

struct ExplainOptions : AdminCommandOptions {
  std::string target;
  std::string ns = "default";
  int32_t candidates = 10;
};

struct WhatIfOptions : AdminCommandOptions {
  std::string file;
};

std::string CodeName(const absl::Status& st) {
  std::string s = absl::StatusCodeToString(st.code());
  for (char& c : s)
    c = c == ' ' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Exit codes: 0 ok, 1 the answer is an error (not found, invalid ...), 2 usage.
int Fail(const char* cmd, const absl::Status& st) {
  std::fprintf(stderr, "gantry %s: %s: %s\n", cmd, CodeName(st).c_str(),
               std::string(st.message()).c_str());
  return st.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

// Runs `offline` against --cluster, or `online` against --server.
template <typename Resp, typename Offline, typename Online>
int Run(const char* cmd, const AdminCommandOptions& o, Offline&& offline, Online&& online,
        std::string (*render)(const Resp&)) {
  if (o.server.empty() == o.cluster.empty()) {
    std::fprintf(stderr,
                 "gantry %s: exactly one of --server ADDR and --cluster SNAPSHOT is required\n",
                 cmd);
    return 2;
  }
  absl::StatusOr<Resp> resp;
  if (!o.cluster.empty()) {
    framework::Registry registry;
    if (absl::Status st = plugins::RegisterBuiltinPlugins(registry); !st.ok()) return Fail(cmd, st);
    absl::StatusOr<config::Configuration> cfg = o.config.empty()
                                                    ? config::DefaultConfig(registry)
                                                    : config::LoadConfigFile(o.config, registry);
    if (!cfg.ok()) return Fail(cmd, cfg.status());
    api::ObjectSet objects;
    sim::LoadStats stats;
    if (absl::Status st = sim::LoadClusterPath(o.cluster, &objects, &stats); !st.ok())
      return Fail(cmd, st);
    admin::EngineOptions eo;
    eo.config = &*cfg;
    eo.registry = &registry;
    eo.seed = o.seed;
    eo.source = "snapshot";
    resp = offline(objects, eo);
  } else {
    if (!o.config.empty()) {
      std::fprintf(
          stderr,
          "gantry %s: --config applies to --cluster; the server uses its own configuration\n", cmd);
      return 2;
    }
    admin::ClientOptions co = o.client;
    co.address = o.server;
    co.timeout_millis = static_cast<int64_t>(o.timeout_seconds * 1000);
    absl::StatusOr<std::unique_ptr<admin::AdminClient>> client = admin::AdminClient::Connect(co);
    if (!client.ok()) return Fail(cmd, client.status());
    resp = online(**client);
  }
  if (!resp.ok()) return Fail(cmd, resp.status());
  if (o.json) {
    absl::StatusOr<std::string> j = admin::ToJson(*resp);
    if (!j.ok()) return Fail(cmd, j.status());
    std::fputs(j->c_str(), stdout);
    if (!j->ends_with("\n")) std::fputs("\n", stdout);
  } else {
    std::fputs(render(*resp).c_str(), stdout);
  }
  return 0;
}

absl::StatusOr<admin::v1::ExplainRequest> ExplainRequestFor(const ExplainOptions& o) {
  admin::v1::ExplainRequest req;
  std::string name = o.target;
  req.set_kind(admin::v1::ExplainRequest::POD);
  if (size_t slash = name.find('/'); slash != std::string::npos) {
    const std::string kind = name.substr(0, slash);
    name = name.substr(slash + 1);
    if (kind == "podgroup" || kind == "podgroups" || kind == "pg") {
      req.set_kind(admin::v1::ExplainRequest::POD_GROUP);
    } else if (kind != "pod" && kind != "pods" && kind != "po") {
      return absl::InvalidArgumentError(
          gantry::StrCat("target \"", o.target,
                         "\": kind must be pod or podgroup (POD, pod/NAME, podgroup/NAME)"));
    }
  }
  req.set_namespace_(o.ns);
  req.set_name(name);
  req.set_max_candidates(o.candidates);
  return req;
}

void AddConnectionFlags(CLI::App* sub, AdminCommandOptions* o) {
  sub->add_option("--server", o->server,
                  "Admin address of a running gantry (host:port, e.g. 127.0.0.1:10260)");
  sub->add_option("--cluster", o->cluster,
                  "Snapshot file or directory: run the engine offline on it");
  sub->add_option("--config", o->config,
                  "KubeSchedulerConfiguration for --cluster (default: built-in defaults)");
  sub->add_option("--seed", o->seed, "Seed for tie-breaking with --cluster (and what-if)");
  sub->add_flag("--json", o->json, "Print the response as JSON");
  sub->add_option("--tls-ca-file", o->client.tls_ca_file,
                  "CA bundle that signed the server's certificate");
  sub->add_option("--tls-cert-file", o->client.tls_cert_file, "Client certificate (mutual TLS)");
  sub->add_option("--tls-key-file", o->client.tls_key_file, "Client private key (mutual TLS)");
  sub->add_flag("--tls", o->client.tls, "Use TLS even to a loopback address");
  sub->add_flag("--insecure", o->client.insecure, "Plaintext to a non-loopback address");
  sub->add_option("--timeout", o->timeout_seconds, "Seconds to wait for the server (default 120)");
}

}  // namespace

void RegisterExplain(CLI::App& app, RunFn* run) {
  auto opts = std::make_shared<ExplainOptions>();
  CLI::App* sub = app.add_subcommand(
      "explain",
      "Why is a pod or PodGroup pending: per-node reasons, scores, devices, gang domains");
  sub->add_option("target", opts->target, "POD, pod/NAME or podgroup/NAME")->required();
  sub->add_option("-n,--namespace", opts->ns, "Namespace (default \"default\")");
  sub->add_option("--candidates", opts->candidates, "Best feasible nodes to show (default 10)");
  AddConnectionFlags(sub, opts.get());
  sub->callback([opts, run] {
    *run = [opts] {
      absl::StatusOr<admin::v1::ExplainRequest> req = ExplainRequestFor(*opts);
      if (!req.ok()) return Fail("explain", req.status());
      return Run<admin::v1::ExplainResponse>(
          "explain", *opts,
          [&](const api::ObjectSet& objects, const admin::EngineOptions& eo) {
            return admin::Explain(*req, objects, eo);
          },
          [&](admin::AdminClient& c) { return c.Explain(*req); }, &admin::RenderExplain);
    };
  });
}

void RegisterWhatIf(CLI::App& app, RunFn* run) {
  auto opts = std::make_shared<WhatIfOptions>();
  CLI::App* sub = app.add_subcommand(
      "whatif", "Would these pods / PodGroups / claims fit now, and where (nothing is bound)");
  sub->add_option("-f,--filename", opts->file, "Objects to place (YAML or JSON; - for stdin)")
      ->required();
  AddConnectionFlags(sub, opts.get());
  sub->callback([opts, run] {
    *run = [opts] {
      std::string text;
      if (opts->file == "-") {
        std::ostringstream ss;
        ss << std::cin.rdbuf();
        text = ss.str();
      } else {
        std::ifstream in(opts->file, std::ios::binary);
        if (!in)
          return Fail("whatif", absl::InvalidArgumentError(
                                    gantry::StrCat("-f ", opts->file, ": cannot read")));
        std::ostringstream ss;
        ss << in.rdbuf();
        text = ss.str();
      }
      admin::v1::WhatIfRequest req;
      req.set_objects(text);
      req.set_format(opts->file.ends_with(".json") ? "json" : "yaml");
      req.set_seed(opts->seed);
      // Errors about the objects name the file, not the request field.
      const std::string source = opts->file == "-" ? "<stdin>" : opts->file;
      auto renamed = [&](absl::StatusOr<admin::v1::WhatIfResponse> r)
          -> absl::StatusOr<admin::v1::WhatIfResponse> {
        if (r.ok() || r.status().code() != absl::StatusCode::kInvalidArgument) return r;
        std::string msg(r.status().message());
        if (msg.starts_with("objects")) msg = source + msg.substr(7);
        return absl::InvalidArgumentError(msg);
      };
      return Run<admin::v1::WhatIfResponse>(
          "whatif", *opts,
          [&](const api::ObjectSet& objects, const admin::EngineOptions& eo) {
            return renamed(admin::WhatIf(req, objects, eo));
          },
          [&](admin::AdminClient& c) { return renamed(c.WhatIf(req)); }, &admin::RenderWhatIf);
    };
  });
}

}  // namespace gantry::cmd
