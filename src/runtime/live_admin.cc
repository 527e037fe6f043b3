#include "src/runtime/live_admin.h"

#include <string>
#include <utility>

#include "gantry/util/strings.h"

namespace gantry::runtime {

LiveAdmin::LiveAdmin(const LiveContext& context)
    : context_(context), store_(std::make_unique<admin::DiagnosisStore>(context.clock)) {}

absl::StatusOr<std::unique_ptr<LiveAdmin>> LiveAdmin::Start(
    const LiveContext& context, const server::AdminServerOptions& options,
    server::AdminMetrics metrics) {
  std::unique_ptr<LiveAdmin> a(new LiveAdmin(context));
  context.scheduler.AddObserver(a->store_.get());
  absl::StatusOr<std::unique_ptr<server::AdminServer>> s =
      server::AdminServer::Start(options, *a, metrics);
  if (!s.ok()) return s.status();  // ~LiveAdmin detaches the store
  a->server_ = std::move(*s);
  return a;
}

LiveAdmin::~LiveAdmin() {
  if (server_) server_->Stop();
  context_.scheduler.RemoveObserver(store_.get());
}

absl::Status LiveAdmin::CheckReady(std::string_view method) const {
  if (!context_.synced()) {
    return absl::FailedPreconditionError(
        gantry::StrCat(method, ": the scheduler's caches are not synced yet; retry shortly"));
  }
  if (method == "Explain" && !context_.leading()) {
    return absl::FailedPreconditionError(
        "Explain: this replica is a standby (not the leader): it runs no scheduling attempts; ask "
        "the leader");
  }
  return absl::OkStatus();
}

absl::StatusOr<api::ObjectSet> LiveAdmin::CachedObjects() {
  if (!context_.cached_objects) {
    return absl::UnavailableError("the scheduler's object caches are not available in this run");
  }
  return context_.cached_objects();
}

absl::StatusOr<admin::Recording> LiveAdmin::Record(const std::atomic<bool>* stop) {
  absl::StatusOr<admin::Recording> rec = admin::RecordCluster(context_.client, 500, stop);
  if (!rec.ok()) {
    return absl::UnavailableError(gantry::StrCat("listing the cluster from the API server failed: ",
                                                 std::string(rec.status().message())));
  }
  return rec;
}

admin::EngineOptions LiveAdmin::engine() const {
  admin::EngineOptions o;
  o.config = &context_.config;
  o.registry = &context_.registry;
  o.source = "live";
  return o;
}

}  // namespace gantry::runtime
