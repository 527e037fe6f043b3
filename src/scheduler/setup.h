// Wiring shared by live and offline runs: turns a loaded configuration into
// a Scheduler with one framework per profile.
#ifndef GANTRY_SRC_SCHEDULER_SETUP_H_
#define GANTRY_SRC_SCHEDULER_SETUP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "gantry/registry.h"
#include "src/config/config.h"
#include "src/framework/framework.h"
#include "src/framework/parallelize.h"
#include "src/scheduler/scheduler.h"

namespace gantry::scheduler {

// The framework's view of one configured profile.
absl::StatusOr<framework::ProfileSpec> ToProfileSpec(const config::Profile& profile);

// Everything a running scheduler owns besides the cluster state and the writer.
struct SchedulerBundle {
  std::unique_ptr<framework::WorkerPool> pool;
  std::unique_ptr<Scheduler> scheduler;
};

// Builds every profile's framework, then the scheduler and its queue.
// `binding_workers` 0 binds inline (offline); `seed` drives tie-breaks.
absl::StatusOr<SchedulerBundle> BuildScheduler(const config::Configuration& config,
                                               const framework::Registry& registry,
                                               state::ClusterState& state,
                                               framework::ClusterWriter& writer, const Clock& clock,
                                               uint64_t seed, int binding_workers);

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_SETUP_H_
