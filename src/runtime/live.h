// Live operation: connect to the API server, keep caches in sync, elect a
// leader, and run the scheduling loop while leading.
#ifndef GANTRY_SRC_RUNTIME_LIVE_H_
#define GANTRY_SRC_RUNTIME_LIVE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gantry/clock.h"
#include "gantry/registry.h"
#include "src/api/objects.h"
#include "src/client/client_metrics.h"
#include "src/config/config.h"
#include "src/metrics/metrics.h"
#include "src/scheduler/scheduler.h"

namespace gantry::client {
class HttpClient;  // src/client/http.h
}  // namespace gantry::client

namespace gantry::runtime {

// What an add-on (the admin service) may use of a live run. Everything here
// outlives the add-on; `synced` and `leading` are thread-safe.
struct LiveContext {
  scheduler::Scheduler& scheduler;
  client::HttpClient& client;  // a client of its own (same limits), for listing the cluster
  const config::Configuration& config;
  const framework::Registry& registry;
  const Clock& clock;             // the scheduler's wall clock
  std::function<bool()> synced;   // every informer finished its initial list
  std::function<bool()> leading;  // this replica runs the scheduling loop
  // Copies of the objects the informers hold (EventSource::CachedObjects).
  std::function<api::ObjectSet()> cached_objects;
};

struct LiveOptions {
  std::string kubeconfig_override;          // --kubeconfig (wins over clientConnection.kubeconfig)
  std::string master;                       // --master
  std::function<void(bool)> on_ready;       // true once every informer finished its initial list
  std::function<void(bool)> on_leader;      // true when scheduling starts, false when it stops
  const std::atomic<bool>* stop = nullptr;  // graceful stop when it becomes true
  // The most binding cycles in flight at once (scheduler::SchedulerOptions::
  // binding_workers): each waits on its API writes, so the live binding rate
  // is at most binding_workers / (writes per pod x round trip). The binding
  // client keeps that many connections for reuse.
  int binding_workers = 64;
  // Event writing (WriterOptions::event_workers / event_queue_capacity).
  int event_workers = 32;
  size_t event_queue_capacity = 10'000;
  // Called once the scheduler is built, before the reflectors start. What it
  // returns is destroyed before the scheduler (an error stops the run).
  std::function<absl::StatusOr<std::shared_ptr<void>>(const LiveContext&)> attach;
  // Where the run records (required; both on the registry /metrics serves,
  // owned by the caller and outliving the run).
  metrics::SchedulerMetrics* metrics = nullptr;
  client::ClientMetrics* client_metrics = nullptr;
};

// Blocks until *opts.stop becomes true (returns OK after a graceful
// shutdown) or the leader lease is lost (logs "Leaderelection lost" and
// returns Aborted: the process should exit non-zero, as kube-scheduler
// does). With leader election on, every write but the lease's own goes
// through a WriteFence: none leaves before the lease is acquired, nor once
// renewDeadline passed since the start of the last successful renewal, nor
// after loss or release. Configuration and connection errors are returned
// at once.
absl::Status RunLiveScheduler(const config::Configuration& cfg, const framework::Registry& registry,
                              const LiveOptions& opts);

}  // namespace gantry::runtime

#endif  // GANTRY_SRC_RUNTIME_LIVE_H_
