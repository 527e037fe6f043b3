// The gRPC admin service (proto/gantry/admin/v1/admin.proto): Explain,
// WhatIf and GetSnapshot over an AdminBackend, and the server that listens
// for it.
//
// Explain and WhatIf evaluate a copy of the objects the backend's caches
// hold; GetSnapshot lists the cluster through the backend. Answering never
// takes a lock the scheduling loop holds; the only shared state is the
// DiagnosisStore's short mutex and the caches' copy. Work runs on gRPC's
// threads. The live backend is runtime::LiveAdmin (src/runtime).
//
// Security: the server listens on a loopback address by default, where
// plaintext, TLS and mutual TLS are all allowed. A non-loopback address
// needs mutual TLS: a certificate, its key and a client CA; every client
// must present a certificate that CA signed. There is no other mode there.
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
#include "src/metrics/metrics.h"

namespace grpc {
class Server;
}

namespace gantry::server {

// Default admin address (loopback; the port follows kube-scheduler's 10259).
inline constexpr char kDefaultAdminAddress[] = "127.0.0.1:10260";
// Largest request the service accepts (RESOURCE_EXHAUSTED above it).
inline constexpr int64_t kDefaultAdminMaxRequestBytes = int64_t{8} << 20;
// Most calls served at once (RESOURCE_EXHAUSTED beyond it). Each call holds
// a copy of the cluster and runs the engine, so this bounds the memory and
// CPU the admin API can take from the scheduler.
inline constexpr int kDefaultAdminMaxConcurrentCalls = 4;
inline constexpr int kMaxAdminConcurrentCalls = 1024;

// What the service reads from the process it runs in.
class AdminBackend {
 public:
  virtual ~AdminBackend() = default;
  // OK when `method` ("Explain", "WhatIf", "GetSnapshot") can be answered
  // now; FailedPrecondition saying why not (caches not synced, not leader).
  virtual absl::Status CheckReady(std::string_view method) const = 0;
  // The cluster's objects as the scheduler's caches hold them now (no call
  // to the API server): what Explain and WhatIf evaluate against.
  virtual absl::StatusOr<api::ObjectSet> CachedObjects() = 0;
  // A recording of the cluster's objects as the API server serves them now
  // (paged LISTs, redacted): what GetSnapshot streams. Unavailable when they
  // cannot be listed.
  virtual absl::StatusOr<admin::Recording> Record(const std::atomic<bool>* stop) = 0;
  // The running scheduler's records; nullptr when there is no scheduling loop.
  virtual const admin::DiagnosisStore* store() const = 0;
  virtual admin::EngineOptions engine() const = 0;
};

// The admin service's metrics; either may be null (not counted).
struct AdminMetrics {
  // gantry_admin_requests_total{method, code}: every call by its outcome.
  metrics::CounterFamily* requests = nullptr;
  // gantry_admin_calls_rejected_busy_total{method}: calls refused because
  // the concurrency limit was reached (also counted in `requests` as
  // RESOURCE_EXHAUSTED).
  metrics::CounterFamily* rejected_busy = nullptr;
};

// Registers the admin metrics in `registry` (once per registry: call it
// once and keep the result).
AdminMetrics RegisterAdminMetrics(metrics::Registry& registry);

// Decodes recorded objects into an ObjectSet. Objects that do not decode
// are skipped (as the reflectors skip them) and counted in `*skipped`.
api::ObjectSet DecodeRecording(const admin::Recording& rec, int64_t* skipped);

class AdminService final : public gantry::admin::v1::Admin::Service {
 public:
  // `metrics` (each optional) count calls (RegisterAdminMetrics). At most
  // `max_concurrent_calls` calls are served at once; one beyond that is
  // answered RESOURCE_EXHAUSTED at once.
  AdminService(AdminBackend& backend, AdminMetrics metrics,
               int64_t max_request_bytes = kDefaultAdminMaxRequestBytes,
               int max_concurrent_calls = kDefaultAdminMaxConcurrentCalls)
      : backend_(backend),
        metrics_(metrics),
        max_request_bytes_(max_request_bytes),
        max_concurrent_calls_(max_concurrent_calls) {}

  // Calls being served now.
  int in_flight() const { return in_flight_.load(); }

  grpc::Status Explain(grpc::ServerContext* ctx, const gantry::admin::v1::ExplainRequest* req,
                       gantry::admin::v1::ExplainResponse* resp) override;
  grpc::Status WhatIf(grpc::ServerContext* ctx, const gantry::admin::v1::WhatIfRequest* req,
                      gantry::admin::v1::WhatIfResponse* resp) override;
  grpc::Status GetSnapshot(grpc::ServerContext* ctx,
                           const gantry::admin::v1::GetSnapshotRequest* req,
                           grpc::ServerWriter<gantry::snapshot::v1::Chunk>* writer) override;

 private:
  // Holds one of the max_concurrent_calls slots while alive.
  class Slot {
   public:
    explicit Slot(std::atomic<int>* in_flight) : in_flight_(in_flight) {}
    ~Slot() {
      if (in_flight_ != nullptr) in_flight_->fetch_sub(1);
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    std::atomic<int>* in_flight_;
  };
  // Takes a slot, or ResourceExhausted (counted) when all are taken.
  absl::StatusOr<std::unique_ptr<Slot>> Admit(std::string_view method);
  // Checks the request's size and the backend's readiness.
  absl::Status Check(std::string_view method, size_t request_bytes);
  grpc::Status Finish(std::string_view method, const absl::Status& st);

  AdminBackend& backend_;
  AdminMetrics metrics_;
  int64_t max_request_bytes_;
  int max_concurrent_calls_;
  std::atomic<int> in_flight_{0};
};

struct AdminServerOptions {
  std::string address = kDefaultAdminAddress;  // host:port; port 0 picks a free one
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string tls_client_ca_file;  // require client certificates signed by this CA
  int64_t max_request_bytes = kDefaultAdminMaxRequestBytes;
  int max_concurrent_calls = kDefaultAdminMaxConcurrentCalls;  // in [1, kMaxAdminConcurrentCalls]
};

// True for 127.0.0.0/8, ::1 and "localhost" (the host part of host:port).
bool IsLoopbackAddress(std::string_view address);
// Rejects a non-loopback address without mutual TLS (certificate, key and
// client CA), half a TLS pair, a client CA without a certificate, and an
// empty address. Errors name the flag to set.
absl::Status ValidateAdminServerOptions(const AdminServerOptions& options);

class AdminServer {
 public:
  // Binds and serves on gRPC's threads. `backend` and the metrics must outlive it.
  static absl::StatusOr<std::unique_ptr<AdminServer>> Start(const AdminServerOptions& options,
                                                            AdminBackend& backend,
                                                            AdminMetrics metrics);
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

}  // namespace gantry::server

#endif  // GANTRY_SRC_SERVER_ADMIN_SERVER_H_
