// gantry-live-e2e: runs client::RunLiveScheduler in-process for the
// end-to-end suites (until the real `gantry` binary grows its live mode).
//
//   gantry-live-e2e --kubeconfig PATH [--config FILE] [--no-leader-elect]
//
// Prints "READY" once caches synced and "LEADER true|false" on leadership
// changes (line-buffered); stops gracefully on SIGTERM/SIGINT.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "gantry/registry.h"
#include "gantry/util/strings.h"
#include "plugins/registry/registry.h"
#include "spdlog/spdlog.h"
#include "src/client/live.h"
#include "src/config/config.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }
}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig, config_file;
  bool leader_elect = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--kubeconfig" && i + 1 < argc) {
      kubeconfig = argv[++i];
    } else if (a == "--config" && i + 1 < argc) {
      config_file = argv[++i];
    } else if (a == "--no-leader-elect") {
      leader_elect = false;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  spdlog::set_level(spdlog::level::info);
  gantry::framework::Registry registry;
  if (absl::Status s = gantry::plugins::RegisterBuiltinPlugins(registry); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  absl::StatusOr<gantry::config::Configuration> cfg =
      config_file.empty() ? gantry::config::DefaultConfig(registry)
                          : gantry::config::LoadConfigFile(config_file, registry);
  if (!cfg.ok()) {
    std::fprintf(stderr, "config: %s\n", std::string(cfg.status().message()).c_str());
    return 1;
  }
  if (!leader_elect) cfg->leader_election.leader_elect = false;
  gantry::client::LiveOptions opts;
  opts.kubeconfig_override = kubeconfig;
  opts.stop = &g_stop;
  opts.on_ready = [](bool r) {
    if (r) std::printf("READY\n");
    std::fflush(stdout);
  };
  opts.on_leader = [](bool l) {
    std::printf("LEADER %s\n", l ? "true" : "false");
    std::fflush(stdout);
  };
  absl::Status s = gantry::client::RunLiveScheduler(*cfg, registry, opts);
  if (!s.ok()) {
    std::fprintf(stderr, "gantry-live-e2e: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
