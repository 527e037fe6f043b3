// HTTP(S) transport to the API server over libcurl.
//
// - TLS verification is on unless the config says insecure-skip-tls-verify;
//   CA, client certificate and key are passed as in-memory PEM blobs;
//   tls-server-name is honoured (SNI and verification name).
// - HTTP/2 is negotiated over TLS when the server offers it; curl easy
//   handles are pooled so connections are reused.
// - Every request waits for a token from the client-side token bucket
//   (clientConnection.qps/burst).
// - 429 and 5xx answers carrying a numeric Retry-After are retried after
//   that delay, at most `max_retries` times, never past the request's
//   deadline; a 401 re-reads rotating credentials (token files, exec
//   plugins) and retries once.
// - With a WriteFence (ClientOptions::write_fence), every mutating request
//   that is not `fence_exempt` is checked against it immediately before it
//   is sent (each retry too) and refused with FailedPrecondition when the
//   fence is closed; counted in gantry_writes_fenced_total.
// - Response bodies are capped (ClientOptions::max_response_bytes), and so
//   are watch lines (ClientOptions::max_line_bytes); see Do and Stream.
// - Bearer tokens are never logged.
#ifndef GANTRY_SRC_CLIENT_HTTP_H_
#define GANTRY_SRC_CLIENT_HTTP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "src/client/rest_config.h"
#include "src/client/write_fence.h"

namespace gantry::client {

struct ClientMetrics;  // src/client/client_metrics.h

// Token bucket: `burst` tokens, refilled at `qps` per second. qps <= 0: unlimited.
class RateLimiter {
 public:
  RateLimiter(double qps, int burst);
  // Blocks until a token is available; false when `stop` became true, or
  // the steady-clock `deadline_micros` (0: none) passed, first.
  bool Wait(const std::atomic<bool>* stop = nullptr, int64_t deadline_micros = 0);
  bool TryAccept();
  int64_t waits() const { return waits_.load(); }

 private:
  // Returns 0 when a token was taken, else microseconds until one is due.
  int64_t Reserve(bool take_if_available);
  const double qps_;
  const double burst_;
  std::mutex mu_;
  double tokens_;
  int64_t last_micros_;
  std::atomic<int64_t> waits_{0};
};

// Exponential backoff with jitter: initial * factor^n capped at max, each
// delay stretched by a random factor in [1, 1 + jitter).
class Backoff {
 public:
  Backoff(int64_t initial_millis, int64_t max_millis, double factor = 2.0, double jitter = 1.0,
          uint64_t seed = 0);
  int64_t NextMillis();
  void Reset() { current_ = 0; }

  // Starts over from `initial` when NextMillis was not called for
  // `millis` (a stable period; client-go's reflector uses 2 min). 0: never.
  void set_reset_after_millis(int64_t millis) { reset_after_micros_ = millis * 1000; }
  // Clamps the jittered delay at `max` as well (without: up to max * (1 + jitter)).
  void set_jitter_within_max(bool v) { jitter_within_max_ = v; }

 private:
  int64_t initial_, max_;
  double factor_, jitter_;
  double current_ = 0;
  int64_t reset_after_micros_ = 0;
  bool jitter_within_max_ = false;
  int64_t last_micros_ = 0;
  std::mt19937_64 rng_;
};

// Sleeps up to `millis`, waking early when *stop becomes true. Returns !stopped.
bool SleepFor(int64_t millis, const std::atomic<bool>* stop);

// Accept header for writes whose answer Gantry does not read beyond the
// status code (and the error message): the API server encodes protobuf more
// cheaply than JSON; HttpError reads a protobuf Status as well as JSON.
inline constexpr char kAcceptProtobufOrJson[] =
    "application/vnd.kubernetes.protobuf, application/json";

struct HttpRequest {
  std::string method = "GET";
  std::string path;  // with query string, e.g. "/api/v1/pods?limit=500"
  std::string body;
  std::string content_type = "application/json";
  std::string accept = "application/json";
  int64_t timeout_millis = 30'000;  // each attempt (Do only)
  // Steady-clock deadline (MonotonicMicros()) of the whole call, rate-limit
  // waits, attempts and Retry-After waits together; 0: none (Do only).
  int64_t deadline_micros = 0;
  // Not subject to the client's WriteFence (the lease's own requests).
  bool fence_exempt = false;
};

// True for POST, PUT, PATCH and DELETE.
bool IsMutating(std::string_view method);

struct HttpResponse {
  long status = 0;
  std::string body;
  std::string content_type;
  std::optional<int64_t> retry_after_seconds;
  std::string http_version;  // "1.1", "2"
};

struct ClientOptions {
  double qps = 50;
  int burst = 100;
  int max_retries = 10;  // Retry-After retries
  int64_t max_retry_after_millis = 60'000;
  std::string user_agent = "gantry-scheduler";
  size_t max_idle_connections = 32;
  // Checked before every mutating request that is not fence_exempt; null: no fence.
  std::shared_ptr<WriteFence> write_fence;
  // Largest response body Do keeps: a LIST page of 500 objects of ~130 KiB
  // of JSON each. Longer bodies are dropped (ResourceExhausted).
  size_t max_response_bytes = size_t{64} << 20;
  // Largest watch line (one event) Stream passes on: the biggest object
  // etcd stores (1.5 MiB, --max-request-bytes) encoded as JSON, with room.
  size_t max_line_bytes = size_t{16} << 20;
  // Where this client and the reflectors over it count (fenced writes,
  // oversized responses, watch restarts); null: not counted. Must outlive
  // the client.
  ClientMetrics* metrics = nullptr;
};

// A Status message as std::string (abseil's string_view is not std's here).
inline std::string Msg(const absl::Status& s) {
  return std::string(s.message().data(), s.message().size());
}

// Percent-encodes a query parameter value.
std::string UrlEncode(std::string_view s);

// Reads `message` and `reason` of a meta/v1 Status in the API server's
// protobuf encoding ("k8s\0" + runtime.Unknown{raw: Status}). False when
// `body` is not one.
bool DecodeProtobufStatus(std::string_view body, std::string* message, std::string* reason);

// metadata.resourceVersion of the object a write answered with (protobuf or
// JSON), "" when the answer does not carry one.
std::string ResponseResourceVersion(const HttpResponse& resp);

// Turns a non-2xx response (a JSON or protobuf Status) into a Status with the API server's message:
// 404 NotFound, 409 AlreadyExists/Aborted (conflict), 401/403, 410, 429,
// 5xx Unavailable.
absl::Status HttpError(const HttpResponse& resp, std::string_view what);

class HttpClient {
 public:
  static absl::StatusOr<std::unique_ptr<HttpClient>> Create(RestConfig config,
                                                            ClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One request with the retries described above. A transport failure
  // (connection refused, timeout) is Unavailable; the deadline passing
  // before an attempt could start is DeadlineExceeded (a Retry-After wait
  // that would pass it is not taken: the answer is returned); a write the
  // fence refused is FailedPrecondition; a body over max_response_bytes is
  // ResourceExhausted (only then).
  absl::StatusOr<HttpResponse> Do(const HttpRequest& req, const std::atomic<bool>* stop = nullptr);

  // A long-running GET (watch). For 2xx answers each complete line of the
  // body is passed to `on_line` (without the newline); returning false from
  // it ends the stream. Non-2xx answers are returned with their body (the
  // first MiB). The stream also ends when *stop becomes true (OK), after
  // `idle_timeout_millis` without any byte (DeadlineExceeded), or at a line
  // longer than max_line_bytes, which is skipped, not stored
  // (ResourceExhausted, naming its size).
  absl::StatusOr<HttpResponse> Stream(const HttpRequest& req,
                                      const std::function<bool(std::string_view line)>& on_line,
                                      const std::atomic<bool>* stop, int64_t idle_timeout_millis);

  const RestConfig& config() const { return config_; }
  // ClientOptions::metrics (may be null).
  ClientMetrics* metrics() const { return options_.metrics; }
  RateLimiter& rate_limiter() { return limiter_; }
  int64_t requests_sent() const { return requests_.load(); }
  // Connections opened so far (each a TCP, and for https a TLS, handshake):
  // with reuse working this stays near the peak number of concurrent requests.
  int64_t connections_opened() const { return connects_.load(); }

  struct Transfer;  // internal (curl callbacks)

 private:
  HttpClient(RestConfig config, ClientOptions options);
  void* AcquireHandle();
  void ReleaseHandle(void* h);
  absl::StatusOr<HttpResponse> Perform(const HttpRequest& req, Transfer* xfer, bool stream,
                                       const std::atomic<bool>* stop, int64_t timeout_millis);
  // The fence that applies to `req` (null: none).
  WriteFence* FenceFor(const HttpRequest& req) const;
  absl::Status Refused(const HttpRequest& req, absl::Status why) const;

  RestConfig config_;
  ClientOptions options_;
  CredentialProvider creds_;
  RateLimiter limiter_;
  std::string base_url_;    // scheme://host[:port][/prefix], host replaced by tls-server-name
  std::string connect_to_;  // curl CONNECT_TO entry for tls-server-name, else ""
  std::mutex pool_mu_;
  std::vector<void*> pool_;
  void* share_ = nullptr;
  void* share_locks_ = nullptr;
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> connects_{0};
};

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_HTTP_H_
