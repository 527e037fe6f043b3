// The HTTPS endpoint kube-scheduler serves on --secure-port (10259):
//   /healthz, /livez  liveness checks (200 "ok" or 500 with the failed checks)
//   /readyz           readiness checks: 503 with the reasons until every check
//                     passes (e.g. "sched-handler-sync: waiting for handlers
//                     to sync" before the informers' initial list, and
//                     "shutdown" once termination started)
//   /metrics          Prometheus text format 0.0.4 of a Registry
// `?verbose` lists every check ("[+]name ok" / "[-]name failed: reason").
//
// TLS: --tls-cert-file/--tls-private-key-file; else <cert-dir>/gantry.{crt,key}
// (generated and written there when absent); else a self-signed certificate
// made in memory at start (as upstream). TLS 1.2 minimum.
//
// /metrics is served without authentication (upstream delegates authn/authz
// to the API server); restrict access with a NetworkPolicy (docs/operations.md).
#ifndef GANTRY_SRC_SERVER_HEALTH_SERVER_H_
#define GANTRY_SRC_SERVER_HEALTH_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/metrics/metrics.h"

namespace httplib {
class Server;
}

namespace gantry::server {

struct ServingOptions {
  std::string bind_address = "0.0.0.0";
  int secure_port = 10259;  // 0: any free port (tests)
  std::string cert_dir;
  std::string tls_cert_file;
  std::string tls_private_key_file;
};

// Named checks. A check returns std::nullopt when healthy, else the reason.
// Thread-safe; checks run on server threads and must be cheap.
class HealthChecks {
 public:
  using Check = std::function<std::optional<std::string>()>;

  HealthChecks();
  // Liveness (/healthz and /livez); also part of /readyz, as upstream.
  void AddLivenessCheck(std::string name, Check check);
  // Readiness only (/readyz).
  void AddReadinessCheck(std::string name, Check check);

  // Built-in readiness checks: "sched-handler-sync" (initial sync done) and
  // "shutdown" (not terminating).
  void SetSynced(bool synced);
  void SetShuttingDown();

  struct Result {
    bool ok = true;
    std::string body;  // "ok", or the per-check report
  };
  Result RunLiveness(bool verbose) const;
  Result RunReadiness(bool verbose) const;

 private:
  Result Run(bool readiness, bool verbose, std::string_view what) const;

  mutable std::mutex mu_;
  std::vector<std::pair<std::string, Check>> liveness_;
  std::vector<std::pair<std::string, Check>> readiness_;
  std::atomic<bool> synced_{false};
  std::atomic<bool> shutting_down_{false};
};

// PEM-encoded certificate and private key.
struct TlsMaterial {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed certificate for "localhost", 127.0.0.1, ::1 and `host` (an
// IP or DNS name; ignored when empty or 0.0.0.0/::), valid for one year.
absl::StatusOr<TlsMaterial> GenerateSelfSigned(std::string_view host);
// What ServingOptions select (see the header comment).
absl::StatusOr<TlsMaterial> LoadOrCreateTls(const ServingOptions& options);

class HealthServer {
 public:
  // Binds, then serves on a background thread. `metrics` and `checks` must
  // outlive the server.
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(const ServingOptions& options,
                                                             const metrics::Registry* metrics,
                                                             const HealthChecks* checks);
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  int port() const { return port_; }
  // Stops accepting and waits for the server thread. Idempotent.
  void Stop();

 private:
  HealthServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace gantry::server

#endif  // GANTRY_SRC_SERVER_HEALTH_SERVER_H_
