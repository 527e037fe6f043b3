// `gantry simulate`: schedules a recorded or generated cluster offline with
// the real engine (in-memory binder, virtual clock) and reports the outcome.
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/main/commands.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/progress.h"
#include "src/sim/report.h"
#include "src/sim/simulation.h"

namespace gantry::cmd {
namespace {

struct SimulateOptions {
  std::string cluster;
  std::string config;
  std::string report;
  uint64_t seed = 1;
  std::vector<std::string> scheduler_names;
  bool node_result_reuse = true;
};

std::string Msg(const absl::Status& st) { return std::string(st.message()); }

int TerminalWidth() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

// A progress line redrawn in place while the loop runs, only when stdout is
// a terminal (never in files or pipes); erased before the summary.
sim::ProgressFn TerminalProgress() {
  if (isatty(STDOUT_FILENO) == 0) return nullptr;
  const int width = TerminalWidth() - 1;
  return [width](const sim::SimulationProgress& p) {
    if (p.done) {
      std::fputs("\r\x1b[K", stdout);
    } else {
      std::fprintf(stdout, "\r%s\x1b[K", sim::RenderProgressLine(p, width).c_str());
    }
    std::fflush(stdout);
  };
}

int RunSimulate(const SimulateOptions& opts) {
  framework::Registry registry;
  if (absl::Status st = plugins::RegisterBuiltinPlugins(registry); !st.ok()) {
    std::fprintf(stderr, "gantry simulate: %s\n", Msg(st).c_str());
    return 1;
  }
  absl::StatusOr<config::Configuration> cfg =
      opts.config.empty() ? config::DefaultConfig(registry) : config::LoadConfigFile(opts.config, registry);
  if (!cfg.ok()) {
    std::fprintf(stderr, "gantry simulate: %s\n", Msg(cfg.status()).c_str());
    return 2;
  }
  for (const std::string& w : cfg->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());

  api::ObjectSet objects;
  sim::LoadStats stats;
  auto load_start = std::chrono::steady_clock::now();
  if (absl::Status st = sim::LoadClusterPath(opts.cluster, &objects, &stats); !st.ok()) {
    std::fprintf(stderr, "gantry simulate: %s\n", Msg(st).c_str());
    return 1;
  }
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  for (const auto& [kind, count] : stats.skipped_kinds) {
    std::fprintf(stderr, "warning: skipped %lld object(s) of kind %s (not used by the scheduler)\n",
                 static_cast<long long>(count), kind.c_str());
  }
  if (stats.undecodable_pods > 0) {
    std::fprintf(stderr,
                 "warning: %lld bound pod(s) kept on their nodes with only the requests that could "
                 "be read; first: %s\n",
                 static_cast<long long>(stats.undecodable_pods), stats.first_undecodable.c_str());
  }
  std::vector<std::string> names = opts.scheduler_names;
  if (names.empty()) {
    for (const config::Profile& p : cfg->profiles) names.push_back(p.scheduler_name);
  }
  sim::Inventory inv = sim::TakeInventory(objects, names);

  FakeClock clock(1'700'000'000'000'000);
  state::ClusterState cluster(clock);
  sim::InMemoryWriter writer;
  absl::StatusOr<scheduler::SchedulerBundle> bundle =
      scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, opts.seed, /*binding_workers=*/0);
  if (!bundle.ok()) {
    std::fprintf(stderr, "gantry simulate: %s\n", Msg(bundle.status()).c_str());
    return 2;
  }
  bundle->scheduler->SetNodeResultReuse(opts.node_result_reuse);
  // The run takes the pods over (held once, not copied): keep what the
  // utilisation report needs first.
  const sim::UtilisationBase utilisation = sim::TakeUtilisationBase(objects);
  sim::SimulationResult result =
      sim::RunSimulation(std::move(objects), *bundle->scheduler, writer, clock, opts.seed, TerminalProgress());

  nlohmann::json report = sim::InventoryJson(inv);
  report.update(sim::ResultJson(result));
  report["seed"] = opts.seed;
  report["load_seconds"] = load_seconds;
  report["utilisation"] = sim::UtilisationJson(utilisation, result);

  std::printf("Cluster %s: %lld node(s), %lld pending pod(s), %lld bound pod(s); loaded in %.3f s\n",
              opts.cluster.c_str(), static_cast<long long>(inv.nodes),
              static_cast<long long>(inv.pods_pending), static_cast<long long>(inv.pods_bound), load_seconds);
  std::printf("Scheduled %lld, unschedulable %lld, in %lld attempt(s); %.0f pods/s (loop %.3f s, virtual %.1f s)\n",
              static_cast<long long>(result.scheduled), static_cast<long long>(result.unschedulable),
              static_cast<long long>(result.attempts),
              report["pods_per_second"].get<double>(), result.loop_seconds, result.virtual_seconds);
  for (const auto& [res, u] : report["utilisation"].items()) {
    std::printf("  %-22s %6.1f%% requested\n", res.c_str(), 100.0 * u["ratio"].get<double>());
  }
  if (!result.placements.empty()) {
    std::map<std::string, std::vector<std::string>> by_node;
    for (const auto& [pod, node] : result.placements) by_node[node].push_back(pod);
    std::printf("Placements:\n");
    for (const auto& [node, pods] : by_node) {
      std::string list;
      for (const std::string& p : pods) list += (list.empty() ? "" : ", ") + p;
      std::printf("  %-20s %s\n", node.c_str(), list.c_str());
    }
  }
  if (!result.failures.empty()) {
    std::printf("Unschedulable:\n");
    for (const auto& [pod, msg] : result.failures) std::printf("  %s: %s\n", pod.c_str(), msg.c_str());
  }

  if (!opts.report.empty()) {
    std::ofstream out(opts.report);
    if (!out) {
      std::fprintf(stderr, "gantry simulate: cannot write report %s\n", opts.report.c_str());
      return 1;
    }
    out << report.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

void RegisterSimulate(CLI::App& app, RunFn* run) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* sub = app.add_subcommand("simulate", "Schedule a recorded or generated cluster offline");
  sub->add_option("--cluster", opts->cluster, "Snapshot file or directory (YAML/JSON)")->required();
  sub->add_option("--config", opts->config, "KubeSchedulerConfiguration file (default: built-in defaults)");
  sub->add_option("--seed", opts->seed, "Seed for tie-breaking (same seed, same placements)");
  sub->add_option("--report", opts->report, "Write the JSON report here");
  sub->add_flag(
      "!--no-node-result-reuse", opts->node_result_reuse,
      "Evaluate every node for every pod (no per-node result reuse between pods of one spec; "
      "the placements are the same)");
  sub->add_option("--scheduler-name", opts->scheduler_names,
                  "Scheduler names counted as ours in the inventory (default: the profiles')");
  sub->callback([opts, run] { *run = [opts] { return RunSimulate(*opts); }; });
}

}  // namespace gantry::cmd
