// The admin service's backend in a live run (LiveAdmin): what binds the
// gRPC admin endpoint (src/server) to a running scheduler and its caches.
#ifndef GANTRY_SRC_RUNTIME_LIVE_ADMIN_H_
#define GANTRY_SRC_RUNTIME_LIVE_ADMIN_H_

#include <atomic>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/admin/diagnosis.h"
#include "src/admin/engine.h"
#include "src/admin/recorder.h"
#include "src/runtime/live.h"
#include "src/server/admin_server.h"

namespace gantry::runtime {

// The admin service of a live run: records the attempts of the scheduler it
// is attached to (a DiagnosisStore observer), answers Explain and WhatIf from
// the informers' objects and lists the cluster for GetSnapshot through the
// context's client. Explain needs this replica to lead (a standby has no
// attempts) and its caches synced; WhatIf and GetSnapshot need the sync.
class LiveAdmin final : public server::AdminBackend {
 public:
  static absl::StatusOr<std::unique_ptr<LiveAdmin>> Start(const LiveContext& context,
                                                          const server::AdminServerOptions& options,
                                                          server::AdminMetrics metrics);
  // Stops the server, then detaches from the scheduler.
  ~LiveAdmin() override;
  LiveAdmin(const LiveAdmin&) = delete;
  LiveAdmin& operator=(const LiveAdmin&) = delete;

  absl::Status CheckReady(std::string_view method) const override;
  absl::StatusOr<api::ObjectSet> CachedObjects() override;
  absl::StatusOr<admin::Recording> Record(const std::atomic<bool>* stop) override;
  const admin::DiagnosisStore* store() const override { return store_.get(); }
  admin::EngineOptions engine() const override;
  int port() const { return server_ ? server_->port() : 0; }

 private:
  explicit LiveAdmin(const LiveContext& context);
  LiveContext context_;
  std::unique_ptr<admin::DiagnosisStore> store_;
  std::unique_ptr<server::AdminServer> server_;
};

}  // namespace gantry::runtime

#endif  // GANTRY_SRC_RUNTIME_LIVE_ADMIN_H_
