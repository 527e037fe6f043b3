// Live operation: connect to the API server, keep caches in sync, elect a
// leader, and run the scheduling loop while leading.
#ifndef GANTRY_SRC_CLIENT_LIVE_H_
#define GANTRY_SRC_CLIENT_LIVE_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "gantry/registry.h"
#include "src/config/config.h"

namespace gantry::client {

struct LiveOptions {
  std::string kubeconfig_override;  // --kubeconfig (wins over clientConnection.kubeconfig)
  std::string master;               // --master
  std::function<void(bool)> on_ready;   // true once every informer finished its initial list
  std::function<void(bool)> on_leader;  // true when scheduling starts, false when it stops
  const std::atomic<bool>* stop = nullptr;  // graceful stop when it becomes true
  int binding_workers = 16;
};

// Blocks until *opts.stop becomes true (returns OK after a graceful
// shutdown) or the leader lease is lost (returns Aborted: the process should
// exit, as kube-scheduler does). Configuration and connection errors are
// returned at once.
absl::Status RunLiveScheduler(const config::Configuration& cfg, const framework::Registry& registry,
                              const LiveOptions& opts);

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_LIVE_H_
