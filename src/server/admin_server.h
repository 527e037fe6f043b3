// The gRPC admin service (proto/gantry/admin/v1/admin.proto): Explain,
// WhatIf and GetSnapshot over an AdminBackend, and the server that listens
// for it.
//
// Every call lists the cluster afresh through the backend (live: from the
// API server, each kind one consistent LIST), so answering never takes a
// lock the scheduling loop holds; the only shared state is the
// DiagnosisStore's short mutex. Work runs on gRPC's threads.
//
// Security: the server listens on a loopback address by default. A
// non-loopback address needs TLS (certificate and key; with a client CA,
// clients must present a certificate it signed) unless `allow_insecure`
// says otherwise explicitly.
#ifndef GANTRY_SRC_SERVER_ADMIN_SERVER_H_
#define GANTRY_SRC_SERVER_ADMIN_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gantry/admin/v1/admin.grpc.pb.h"
#include "src/admin/diagnosis.h"
#include "src/admin/engine.h"
#include "src/admin/recorder.h"
#include "src/client/live.h"
#include "src/server/metrics.h"

namespace grpc {
class Server;
}

namespace gantry::server {

// Default admin address (loopback; the port follows kube-scheduler's 10259).
inline constexpr char kDefaultAdminAddress[] = "127.0.0.1:10260";
// Largest request the service accepts (RESOURCE_EXHAUSTED above it).
inline constexpr int64_t kDefaultAdminMaxRequestBytes = int64_t{8} << 20;

// What the service reads from the process it runs in.
class AdminBackend {
 public:
  virtual ~AdminBackend() = default;
  // OK when `method` ("Explain", "WhatIf", "GetSnapshot") can be answered
  // now; FailedPrecondition saying why not (caches not synced, not leader).
  virtual absl::Status CheckReady(std::string_view method) const = 0;
  // The cluster's objects now. Unavailable when they cannot be listed.
  virtual absl::StatusOr<admin::Recording> Record(const std::atomic<bool>* stop) = 0;
  // The running scheduler's records; nullptr when there is no scheduling loop.
  virtual const admin::DiagnosisStore* store() const = 0;
  virtual admin::EngineOptions engine() const = 0;
};

// Registers gantry_admin_requests_total{method, code} in `registry` (once
// per registry: call it once and keep the reference).
CounterFamily& AdminRequestsCounter(Registry& registry);

// Decodes recorded objects into an ObjectSet. Objects that do not decode
// are skipped (as the reflectors skip them) and counted in `*skipped`.
api::ObjectSet DecodeRecording(const admin::Recording& rec, int64_t* skipped);

class AdminService final : public gantry::admin::v1::Admin::Service {
 public:
  // `requests` (optional) counts calls by method and code (AdminRequestsCounter).
  AdminService(AdminBackend& backend, CounterFamily* requests,
               int64_t max_request_bytes = kDefaultAdminMaxRequestBytes)
      : backend_(backend), requests_(requests), max_request_bytes_(max_request_bytes) {}

  grpc::Status Explain(grpc::ServerContext* ctx, const gantry::admin::v1::ExplainRequest* req,
                       gantry::admin::v1::ExplainResponse* resp) override;
  grpc::Status WhatIf(grpc::ServerContext* ctx, const gantry::admin::v1::WhatIfRequest* req,
                      gantry::admin::v1::WhatIfResponse* resp) override;
  grpc::Status GetSnapshot(grpc::ServerContext* ctx,
                           const gantry::admin::v1::GetSnapshotRequest* req,
                           grpc::ServerWriter<gantry::snapshot::v1::Chunk>* writer) override;

 private:
  // Checks readiness and size, lists the cluster.
  absl::StatusOr<admin::Recording> Prepare(std::string_view method, size_t request_bytes);
  grpc::Status Finish(std::string_view method, const absl::Status& st);

  AdminBackend& backend_;
  CounterFamily* requests_;
  int64_t max_request_bytes_;
};

struct AdminServerOptions {
  std::string address = kDefaultAdminAddress;  // host:port; port 0 picks a free one
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string tls_client_ca_file;  // require client certificates signed by this CA
  bool allow_insecure = false;     // plaintext on a non-loopback address
  int64_t max_request_bytes = kDefaultAdminMaxRequestBytes;
};

// True for 127.0.0.0/8, ::1 and "localhost" (the host part of host:port).
bool IsLoopbackAddress(std::string_view address);
// Rejects a non-loopback address without TLS (unless allow_insecure), half
// a TLS pair, and an empty address.
absl::Status ValidateAdminServerOptions(const AdminServerOptions& options);

class AdminServer {
 public:
  // Binds and serves on gRPC's threads. `backend` and `requests` must outlive it.
  static absl::StatusOr<std::unique_ptr<AdminServer>> Start(const AdminServerOptions& options,
                                                            AdminBackend& backend,
                                                            CounterFamily* requests);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  int port() const { return port_; }
  // Cancels calls in flight and stops. Idempotent.
  void Stop();

 private:
  AdminServer() = default;
  std::unique_ptr<AdminService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// The admin service of a live run: records the attempts of the scheduler it
// is attached to (a DiagnosisStore observer) and lists the cluster through
// the context's client. Explain needs this replica to lead (a standby has no
// attempts) and its caches synced; WhatIf and GetSnapshot need the sync.
class LiveAdmin final : public AdminBackend {
 public:
  static absl::StatusOr<std::unique_ptr<LiveAdmin>> Start(const client::LiveContext& context,
                                                          const AdminServerOptions& options,
                                                          CounterFamily* requests);
  // Stops the server, then detaches from the scheduler.
  ~LiveAdmin() override;
  LiveAdmin(const LiveAdmin&) = delete;
  LiveAdmin& operator=(const LiveAdmin&) = delete;

  absl::Status CheckReady(std::string_view method) const override;
  absl::StatusOr<admin::Recording> Record(const std::atomic<bool>* stop) override;
  const admin::DiagnosisStore* store() const override { return store_.get(); }
  admin::EngineOptions engine() const override;
  int port() const { return server_ ? server_->port() : 0; }

 private:
  explicit LiveAdmin(const client::LiveContext& context);
  client::LiveContext context_;
  std::unique_ptr<admin::DiagnosisStore> store_;
  std::unique_ptr<AdminServer> server_;
};

}  // namespace gantry::server

#endif  // GANTRY_SRC_SERVER_ADMIN_SERVER_H_
