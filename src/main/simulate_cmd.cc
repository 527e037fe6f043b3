// `gantry simulate`: loads a cluster snapshot and reports on it.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "src/main/commands.h"
#include "src/sim/loader.h"
#include "src/sim/report.h"

namespace gantry::cmd {
namespace {

struct SimulateOptions {
  std::string cluster;
  std::string config;
  std::string report;
  uint64_t seed = 1;
  std::vector<std::string> scheduler_names;
};

int RunSimulate(const SimulateOptions& opts) {
  api::ObjectSet objects;
  sim::LoadStats stats;
  auto start = std::chrono::steady_clock::now();
  absl::Status st = sim::LoadClusterPath(opts.cluster, &objects, &stats);
  if (!st.ok()) {
    std::fprintf(stderr, "gantry simulate: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& [kind, count] : stats.skipped_kinds) {
    std::fprintf(stderr, "warning: skipped %lld object(s) of kind %s (not used by the scheduler)\n",
                 static_cast<long long>(count), kind.c_str());
  }
  std::vector<std::string> names = opts.scheduler_names;
  if (names.empty()) names.push_back("gantry-scheduler");
  sim::Inventory inv = sim::TakeInventory(objects, names);

  std::printf("Cluster %s: %lld file(s), %lld object(s), loaded in %.3f s\n", opts.cluster.c_str(),
              static_cast<long long>(stats.files.size()), static_cast<long long>(stats.objects),
              load_seconds);
  std::printf("  nodes:                 %lld\n", static_cast<long long>(inv.nodes));
  std::printf("  pods pending (ours):   %lld (%lld gated)\n", static_cast<long long>(inv.pods_pending),
              static_cast<long long>(inv.pods_gated));
  std::printf("  pods bound:            %lld\n", static_cast<long long>(inv.pods_bound));
  std::printf("  pods other scheduler:  %lld\n", static_cast<long long>(inv.pods_other_scheduler));

  if (!opts.report.empty()) {
    nlohmann::json report = sim::InventoryJson(inv);
    report["seed"] = opts.seed;
    report["load_seconds"] = load_seconds;
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
  sub->add_option("--config", opts->config, "KubeSchedulerConfiguration file");
  sub->add_option("--seed", opts->seed, "Seed for tie-breaking");
  sub->add_option("--report", opts->report, "Write the JSON report here");
  sub->add_option("--scheduler-name", opts->scheduler_names,
                  "Scheduler names served (default: the config's profiles, else gantry-scheduler)");
  sub->callback([opts, run] { *run = [opts] { return RunSimulate(*opts); }; });
}

}  // namespace gantry::cmd
