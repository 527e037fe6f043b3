// `gantry [flags]` with no subcommand: run the scheduler against the API
// server, as `kube-scheduler --config ...` does. Wires flags, logging, the
// HTTPS health/metrics endpoint, signals and runtime::RunLiveScheduler.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/main/commands.h"
#include "src/main/flags.h"
#include "src/metrics/metrics.h"
#include "src/runtime/live.h"
#include "src/runtime/live_admin.h"
#include "src/server/admin_server.h"
#include "src/server/health_server.h"
#include "src/server/log.h"

namespace gantry::cmd {
namespace {

std::atomic<bool> g_stop{false};
// Readiness turns 503 as soon as a signal arrives (a lock-free atomic store).
std::atomic<server::HealthChecks*> g_checks{nullptr};

extern "C" void OnTerminationSignal(int) {
  if (g_stop.exchange(true)) {
    // Second signal: the operator insists.
    static const char kMsg[] = "gantry: second termination signal, exiting now\n";
    (void)!write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
    _exit(1);
  }
  if (server::HealthChecks* c = g_checks.load()) c->SetShuttingDown();
}

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnTerminationSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

std::string Msg(const absl::Status& st) { return std::string(st.message()); }

std::set<std::string> SubcommandNames(const CLI::App& app) {
  std::set<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.insert(sub->get_name());
  return names;
}

int RunLive(const RunFlags& flags) {
  // 1. Logging first, so everything after goes through it.
  server::LogOptions log_opts;
  log_opts.verbosity = flags.verbosity;
  if (absl::Status st = server::ParseLogFormat(flags.logging_format, &log_opts.format); !st.ok()) {
    std::fprintf(stderr, "gantry: %s\n", Msg(st).c_str());
    return 2;
  }
  if (absl::Status st = server::SetupLogging(log_opts); !st.ok()) {
    std::fprintf(stderr, "gantry: %s\n", Msg(st).c_str());
    return 2;
  }
  absl::StatusOr<std::map<std::string, bool>> gates = ParseFeatureGates(flags.feature_gates);
  if (!gates.ok()) {
    GANTRY_LOG_ERROR("{}", Msg(gates.status()));
    return 2;
  }

  // 2. Configuration: file or defaults, then flags (upstream precedence).
  framework::Registry registry;
  if (absl::Status st = plugins::RegisterBuiltinPlugins(registry); !st.ok()) {
    GANTRY_LOG_ERROR("registering plugins: {}", Msg(st));
    return 1;
  }
  const bool from_file = !flags.config.empty();
  absl::StatusOr<config::Configuration> cfg =
      from_file ? config::LoadConfigFile(flags.config, registry) : config::DefaultConfig(registry);
  if (!cfg.ok()) {
    GANTRY_LOG_ERROR("{}", Msg(cfg.status()));
    return 2;
  }
  std::vector<std::string> warnings = cfg->warnings;
  if (absl::Status st = ApplyFlags(flags, from_file, &*cfg, &warnings); !st.ok()) {
    GANTRY_LOG_ERROR("{}", Msg(st));
    return 2;
  }
  for (const std::string& w : warnings) GANTRY_LOG_WARNING("{}", w);

  if (!flags.write_config_to.empty()) {
    std::ofstream out(flags.write_config_to, std::ios::trunc);
    out << config::WriteConfig(*cfg);
    out.close();
    if (!out) {
      GANTRY_LOG_ERROR("--write-config-to: cannot write {}", flags.write_config_to);
      return 1;
    }
    GANTRY_LOG_INFO("wrote configuration to {}", flags.write_config_to);
    return 0;
  }

  std::string profiles;
  for (const config::Profile& p : cfg->profiles) profiles += (profiles.empty() ? "" : ", ") + p.scheduler_name;
  GANTRY_LOG_INFO("gantry v0.1.0 starting: profiles [{}], leader election {}", profiles,
                  cfg->leader_election.leader_elect
                      ? cfg->leader_election.resource_namespace + "/" + cfg->leader_election.resource_name
                      : std::string("off"));
  for (const auto& [gate, on] : *gates) GANTRY_VLOG(1, "feature gate {}={}", gate, on);

  // 3. Signals, metrics and the HTTPS endpoint.
  InstallSignalHandlers();
  // The one registry /metrics serves: process, scheduler and client families.
  metrics::Registry metrics_registry;
  metrics::RegisterProcessMetrics(metrics_registry);
  metrics::SchedulerMetrics metrics(metrics_registry);
  client::ClientMetrics client_metrics(metrics_registry);
  const std::string lease_name = cfg->leader_election.resource_name;
  if (cfg->leader_election.leader_elect) metrics.SetLeader(lease_name, false);
  server::HealthChecks checks;
  g_checks.store(&checks);
  std::unique_ptr<server::HealthServer> http;
  if (flags.serving.secure_port == 0) {
    GANTRY_LOG_INFO("--secure-port=0: not serving /healthz, /readyz, /metrics");
  } else {
    absl::StatusOr<std::unique_ptr<server::HealthServer>> s =
        server::HealthServer::Start(flags.serving, &metrics.registry, &checks);
    if (!s.ok()) {
      GANTRY_LOG_ERROR("serving: {}", Msg(s.status()));
      return 1;
    }
    http = *std::move(s);
    GANTRY_LOG_INFO("serving HTTPS on {}:{}", flags.serving.bind_address, http->port());
  }

  // 4. Live scheduling until SIGTERM/SIGINT or loss of the lease.
  runtime::LiveOptions live;
  live.metrics = &metrics;
  live.client_metrics = &client_metrics;
  live.kubeconfig_override = from_file ? std::string() : flags.kubeconfig;
  live.master = flags.master;
  live.stop = &g_stop;
  live.binding_workers = flags.binding_workers;
  live.event_workers = flags.event_workers;
  live.event_queue_capacity = static_cast<size_t>(flags.event_queue_size);
  live.on_ready = [&checks](bool ready) { checks.SetSynced(ready); };
  const bool le_on = cfg->leader_election.leader_elect;
  live.on_leader = [&metrics, lease_name, le_on](bool leading) {
    if (le_on) metrics.SetLeader(lease_name, leading);
  };
  if (flags.admin_address.empty()) {
    GANTRY_LOG_INFO("--admin-address empty: not serving the admin API");
  } else {
    server::AdminServerOptions admin;
    admin.address = flags.admin_address;
    admin.tls_cert_file = flags.admin_tls_cert_file;
    admin.tls_private_key_file = flags.admin_tls_private_key_file;
    admin.tls_client_ca_file = flags.admin_tls_client_ca_file;
    admin.max_concurrent_calls = flags.admin_max_concurrent_calls;
    if (flags.admin_insecure) {
      GANTRY_LOG_ERROR(
          "--admin-insecure is no longer accepted: a non-loopback --admin-address needs mutual TLS "
          "(--admin-tls-cert-file, --admin-tls-private-key-file, --admin-tls-client-ca-file)");
      return 2;
    }
    if (absl::Status st = server::ValidateAdminServerOptions(admin); !st.ok()) {
      GANTRY_LOG_ERROR("{}", Msg(st));
      return 2;
    }
    const bool explicit_address = flags.IsSet("admin-address");
    const server::AdminMetrics admin_metrics = server::RegisterAdminMetrics(metrics.registry);
    live.attach = [admin, explicit_address, admin_metrics](
                      const runtime::LiveContext& ctx) -> absl::StatusOr<std::shared_ptr<void>> {
      absl::StatusOr<std::unique_ptr<runtime::LiveAdmin>> a =
          runtime::LiveAdmin::Start(ctx, admin, admin_metrics);
      if (!a.ok() && !explicit_address && absl::IsUnavailable(a.status())) {
        // The default port is taken (another scheduler on this host): schedule anyway.
        GANTRY_LOG_WARNING("{}; the admin API is off (set --admin-address to choose another port)",
                           Msg(a.status()));
        return std::shared_ptr<void>();
      }
      if (!a.ok()) return a.status();
      GANTRY_LOG_INFO("serving the admin API (gRPC) on {} ({}), port {}", admin.address,
                      admin.tls_cert_file.empty()        ? "plaintext"
                      : admin.tls_client_ca_file.empty() ? "TLS"
                                                         : "mutual TLS",
                      (*a)->port());
      return std::shared_ptr<void>(std::move(*a));
    };
  }
  absl::Status st = runtime::RunLiveScheduler(*cfg, registry, live);
  checks.SetShuttingDown();
  if (le_on) metrics.SetLeader(lease_name, false);
  if (http) http->Stop();
  g_checks.store(nullptr);
  if (st.ok()) {
    GANTRY_LOG_INFO("stopped");
    spdlog::default_logger()->flush();
    return 0;
  }
  if (absl::IsAborted(st)) {
    GANTRY_LOG_ERROR("{}: exiting so that a restarted instance rejoins as a standby", Msg(st));
  } else {
    GANTRY_LOG_ERROR("{}", Msg(st));
  }
  spdlog::default_logger()->flush();
  return 1;
}

}  // namespace

void RegisterRun(CLI::App& app, RunFn* run) {
  auto flags = std::make_shared<RunFlags>();
  AddRunFlags(app, flags.get());
  CLI::App* app_ptr = &app;
  *run = [flags, app_ptr] {
    RecordExplicitFlags(*app_ptr, flags.get());
    return RunLive(*flags);
  };
}

int ParseCommandLine(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::set<std::string> subs = SubcommandNames(app);
  if (absl::Status st = CheckRemovedFlags(args, subs); !st.ok()) {
    std::fprintf(stderr, "gantry: %s\n", Msg(st).c_str());
    return 2;
  }
  args = NormalizeArgs(args, subs);
  std::reverse(args.begin(), args.end());  // CLI11 consumes from the back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return -1;
}

}  // namespace gantry::cmd
