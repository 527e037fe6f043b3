#include "src/scheduler/setup.h"

#include "gantry/util/status_macros.h"
#include "gantry/util/strings.h"

namespace gantry::scheduler {

absl::StatusOr<framework::ProfileSpec> ToProfileSpec(const config::Profile& profile) {
  framework::ProfileSpec spec;
  spec.scheduler_name = profile.scheduler_name;
  spec.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score;
  for (const config::ProfilePlugin& p : profile.resolved) {
    spec.plugins.push_back(framework::PluginSpec{p.name, p.weight, p.args.is_null() ? "" : p.args.dump()});
  }
  for (framework::ExtensionPoint point : framework::kAllExtensionPoints) {
    const std::vector<config::PointEntry>& entries = profile.at(point);
    if (entries.empty()) continue;
    if (!framework::FrameworkRuns(point)) {
      // multiPoint expands to every point; no plugin can implement one the
      // framework does not offer, so only explicit entries are an error.
      bool explicit_entry = false;
      for (const config::PointEntry& e : entries) explicit_entry |= !e.via_multi_point;
      if (!explicit_entry) continue;
      return absl::UnimplementedError(gantry::StrCat(
          "profile ", profile.scheduler_name, ": extension point ",
          framework::ExtensionPointName(point),
          " is not supported by this version of Gantry (plugin ", entries.front().name, ")"));
    }
    for (const config::PointEntry& e : entries) {
      spec.points[point].push_back(framework::PointPlugin{e.name, e.via_multi_point});
    }
  }
  return spec;
}

absl::StatusOr<SchedulerBundle> BuildScheduler(const config::Configuration& config,
                                               const framework::Registry& registry,
                                               state::ClusterState& state,
                                               framework::ClusterWriter& writer, const Clock& clock,
                                               uint64_t seed, int binding_workers) {
  SchedulerBundle bundle;
  bundle.pool = std::make_unique<framework::WorkerPool>(config.parallelism);
  SchedulerOptions opts;
  opts.percentage_of_nodes_to_score = config.percentage_of_nodes_to_score;
  opts.seed = seed;
  opts.binding_workers = binding_workers;
  bundle.scheduler = std::make_unique<Scheduler>(state, writer, clock, opts);
  for (const config::Profile& profile : config.profiles) {
    GANTRY_ASSIGN_OR_RETURN(framework::ProfileSpec spec, ToProfileSpec(profile));
    GANTRY_ASSIGN_OR_RETURN(std::unique_ptr<framework::Framework> fw,
                            framework::Framework::Create(spec, registry, writer, clock, *bundle.pool));
    fw->SetDraState(&bundle.scheduler->dra());
    bundle.scheduler->AddProfile(std::move(fw));
  }
  bundle.scheduler->Start(config.pod_initial_backoff_seconds * 1'000'000,
                          config.pod_max_backoff_seconds * 1'000'000);
  return bundle;
}

}  // namespace gantry::scheduler
