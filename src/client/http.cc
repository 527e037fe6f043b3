#include "src/client/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "gantry/util/strings.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "nlohmann/json.hpp"
#include "simdjson.h"
#include "spdlog/spdlog.h"
#include "src/client/client_metrics.h"

namespace gantry::client {
namespace {

int64_t MonoMicros() { return MonotonicMicros(); }

std::once_flag g_curl_init;

struct ShareLocks {
  std::mutex mu[CURL_LOCK_DATA_LAST];
};

void ShareLockFn(CURL*, curl_lock_data data, curl_lock_access, void* userptr) {
  static_cast<ShareLocks*>(userptr)->mu[data].lock();
}
void ShareUnlockFn(CURL*, curl_lock_data data, void* userptr) {
  static_cast<ShareLocks*>(userptr)->mu[data].unlock();
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

// ---- RateLimiter ----------------------------------------------------------------

RateLimiter::RateLimiter(double qps, int burst)
    : qps_(qps),
      burst_(std::max(1, burst)),
      tokens_(std::max(1, burst)),
      last_micros_(MonoMicros()) {}

int64_t RateLimiter::Reserve(bool take_if_available) {
  if (qps_ <= 0) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = MonoMicros();
  tokens_ = std::min(burst_, tokens_ + static_cast<double>(now - last_micros_) * qps_ / 1e6);
  last_micros_ = now;
  if (tokens_ >= 1.0) {
    if (take_if_available) tokens_ -= 1.0;
    return 0;
  }
  return std::max<int64_t>(1, static_cast<int64_t>((1.0 - tokens_) * 1e6 / qps_));
}

bool RateLimiter::TryAccept() { return Reserve(true) == 0; }

bool RateLimiter::Wait(const std::atomic<bool>* stop, int64_t deadline_micros) {
  bool waited = false;
  while (true) {
    if (stop != nullptr && stop->load()) return false;
    int64_t wait = Reserve(true);
    if (wait == 0) {
      if (waited) waits_.fetch_add(1);
      return true;
    }
    if (deadline_micros > 0 && MonoMicros() + wait >= deadline_micros) return false;
    waited = true;
    std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(wait, 100'000)));
  }
}

// ---- Backoff -----------------------------------------------------------------------

Backoff::Backoff(int64_t initial_millis, int64_t max_millis, double factor, double jitter,
                 uint64_t seed)
    : initial_(initial_millis),
      max_(max_millis),
      factor_(factor),
      jitter_(jitter),
      rng_(seed != 0 ? seed : static_cast<uint64_t>(MonoMicros())) {}

int64_t Backoff::NextMillis() {
  const int64_t now = MonoMicros();
  if (reset_after_micros_ > 0 && last_micros_ != 0 && now - last_micros_ > reset_after_micros_) {
    current_ = 0;
  }
  last_micros_ = now;
  current_ =
      current_ == 0 ? static_cast<double>(initial_) : std::min<double>(current_ * factor_, max_);
  std::uniform_real_distribution<double> dist(0.0, jitter_);
  double d = current_ * (1.0 + dist(rng_));
  if (jitter_within_max_) d = std::min<double>(d, static_cast<double>(max_));
  return static_cast<int64_t>(d);
}

bool SleepFor(int64_t millis, const std::atomic<bool>* stop) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(millis);
  while (std::chrono::steady_clock::now() < deadline) {
    if (stop != nullptr && stop->load()) return false;
    auto left = deadline - std::chrono::steady_clock::now();
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(50)));
  }
  return stop == nullptr || !stop->load();
}

bool IsMutating(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

namespace {

absl::Status HttpErrorFromParts(long status, std::string_view what, const std::string& message,
                                const std::string& reason);

// The length-delimited field `want` of a protobuf message (the last one, as
// protobuf merges), or nullopt; `*ok` becomes false on malformed input.
std::optional<std::string_view> BytesField(std::string_view msg, uint32_t want, bool* ok) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(msg.data()),
                                            static_cast<int>(msg.size()));
  std::optional<std::string_view> out;
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) {
      // 0 is the end of the input, or a malformed tag.
      if (!in.ConsumedEntireMessage()) break;
      return out;
    }
    if (WireFormatLite::GetTagFieldNumber(tag) == static_cast<int>(want) &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t len = 0;
      if (!in.ReadVarint32(&len) || !in.Skip(static_cast<int>(len))) break;
      out = msg.substr(static_cast<size_t>(in.CurrentPosition()) - len, len);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      break;
    }
  }
  *ok = false;
  return std::nullopt;
}

}  // namespace

bool DecodeProtobufStatus(std::string_view body, std::string* message, std::string* reason) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (!body.starts_with(kMagic)) return false;
  bool ok = true;
  // runtime.Unknown: 1 typeMeta {1 apiVersion, 2 kind}, 2 raw.
  const std::string_view unknown = body.substr(kMagic.size());
  std::optional<std::string_view> type_meta = BytesField(unknown, 1, &ok);
  std::optional<std::string_view> raw = BytesField(unknown, 2, &ok);
  if (!ok || !raw) return false;
  if (type_meta) {
    std::optional<std::string_view> kind = BytesField(*type_meta, 2, &ok);
    if (!ok || (kind && *kind != "Status")) return false;
  }
  // meta/v1 Status: 3 message, 4 reason.
  std::optional<std::string_view> m = BytesField(*raw, 3, &ok);
  std::optional<std::string_view> rs = BytesField(*raw, 4, &ok);
  if (!ok) return false;
  *message = m ? std::string(*m) : std::string();
  *reason = rs ? std::string(*rs) : std::string();
  return true;
}

std::string ResponseResourceVersion(const HttpResponse& resp) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (std::string_view body = resp.body; body.starts_with(kMagic)) {
    // runtime.Unknown{2 raw: the object {1 metadata: ObjectMeta{6 resourceVersion}}}.
    bool ok = true;
    std::optional<std::string_view> raw = BytesField(body.substr(kMagic.size()), 2, &ok);
    std::optional<std::string_view> meta = ok && raw ? BytesField(*raw, 1, &ok) : std::nullopt;
    std::optional<std::string_view> rv = ok && meta ? BytesField(*meta, 6, &ok) : std::nullopt;
    return ok && rv ? std::string(*rv) : std::string();
  }
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  std::string_view rv;
  if (parser.parse(resp.body).get(root) != simdjson::SUCCESS ||
      root["metadata"]["resourceVersion"].get(rv) != simdjson::SUCCESS) {
    return std::string();
  }
  return std::string(rv);
}

absl::Status HttpError(const HttpResponse& resp, std::string_view what) {
  std::string message;
  std::string reason;
  if (resp.content_type.starts_with("application/vnd.kubernetes.protobuf") &&
      DecodeProtobufStatus(resp.body, &message, &reason)) {
    return HttpErrorFromParts(resp.status, what, message, reason);
  }
  try {
    nlohmann::json j = nlohmann::json::parse(resp.body);
    if (j.is_object()) {
      message = j.value("message", "");
      reason = j.value("reason", "");
    }
  } catch (const std::exception&) {
  }
  if (message.empty()) message = resp.body.substr(0, 300);
  return HttpErrorFromParts(resp.status, what, message, reason);
}

namespace {

absl::Status HttpErrorFromParts(long status, std::string_view what, const std::string& message,
                                const std::string& reason) {
  std::string text = StrCat(what, ": HTTP ", status, message.empty() ? "" : ": ", message);
  switch (status) {
    case 400:
    case 422:
      return absl::InvalidArgumentError(text);
    case 401:
      return absl::UnauthenticatedError(text);
    case 403:
      return absl::PermissionDeniedError(text);
    case 404:
      return absl::NotFoundError(text);
    case 409:
      return reason == "AlreadyExists" ? absl::AlreadyExistsError(text) : absl::AbortedError(text);
    case 410:
      return absl::OutOfRangeError(text);  // Gone: resource version too old
    case 429:
      return absl::ResourceExhaustedError(text);
    default:
      break;
  }
  if (status >= 500) return absl::UnavailableError(text);
  return absl::UnknownError(text);
}

}  // namespace

// ---- HttpClient --------------------------------------------------------------------

struct HttpClient::Transfer {
  HttpResponse resp;
  const std::function<bool(std::string_view)>* on_line = nullptr;
  std::string pending;  // partial line
  bool streaming = false;
  bool stopped_by_callback = false;
  const std::atomic<bool>* stop = nullptr;
  int64_t last_data_micros = 0;
  int64_t idle_timeout_micros = 0;
  bool idle_timed_out = false;
  void* handle = nullptr;
  // Caps: a body longer than max_body is dropped (body_too_large); a line
  // longer than max_line is skipped to its end, then the stream ends
  // (oversized_line_bytes = its length).
  size_t max_body = 0;
  bool body_too_large = false;
  size_t max_line = 0;
  bool skipping_line = false;
  size_t skipped_bytes = 0;
  size_t oversized_line_bytes = 0;
  // Checked again right before the request goes out (prereq callback).
  const WriteFence* fence = nullptr;
  absl::Status fence_refusal;
};

namespace {

size_t HeaderCb(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<HttpResponse*>(user);
  std::string_view line(data, size * n);
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name = ToLower(line.substr(0, colon));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.remove_suffix(1);
    if (name == "retry-after") {
      int64_t v = 0;
      bool ok = !value.empty();
      for (char c : value) {
        if (c < '0' || c > '9') {
          ok = false;
          break;
        }
        v = v * 10 + (c - '0');
      }
      if (ok) x->retry_after_seconds = v;
    } else if (name == "content-type") {
      x->content_type = std::string(value);
    }
  } else if (line.rfind("HTTP/", 0) == 0) {
    // A new response (redirect, 100-continue): reset what we captured.
    x->retry_after_seconds.reset();
  }
  return size * n;
}

}  // namespace

static size_t WriteCb(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<HttpClient::Transfer*>(user);
  const size_t len = size * n;
  x->last_data_micros = MonoMicros();
  if (!x->streaming) {
    if (x->max_body > 0 && x->resp.body.size() + len > x->max_body) {
      x->body_too_large = true;
      x->resp.body.clear();
      x->resp.body.shrink_to_fit();
      return 0;  // aborts the transfer
    }
    x->resp.body.append(data, len);
    return len;
  }
  // Streaming: only 2xx bodies are split into lines; others are kept whole.
  if (x->resp.status == 0) {
    long code = 0;
    curl_easy_getinfo(static_cast<CURL*>(x->handle), CURLINFO_RESPONSE_CODE, &code);
    x->resp.status = code;
  }
  if (x->resp.status < 200 || x->resp.status >= 300 || x->on_line == nullptr) {
    if (x->resp.body.size() < (1u << 20)) x->resp.body.append(data, len);
    return len;
  }
  std::string_view chunk(data, len);
  if (x->skipping_line) {
    // Inside a line over the cap: count it, keep nothing, end at its newline.
    const size_t nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      x->skipped_bytes += len;
      return len;
    }
    x->oversized_line_bytes = x->skipped_bytes + nl;
    return 0;  // aborts the transfer
  }
  x->pending.append(chunk);
  size_t start = 0;
  while (true) {
    size_t nl = x->pending.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(x->pending.data() + start, nl - start);
    start = nl + 1;
    if (x->max_line > 0 && line.size() > x->max_line) {
      x->oversized_line_bytes = line.size();
      x->pending.clear();
      return 0;  // aborts the transfer
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (!(*x->on_line)(line)) {
      x->stopped_by_callback = true;
      return 0;  // aborts the transfer
    }
  }
  x->pending.erase(0, start);
  if (x->max_line > 0 && x->pending.size() > x->max_line) {
    x->skipping_line = true;
    x->skipped_bytes = x->pending.size();
    x->pending.clear();
    x->pending.shrink_to_fit();
  }
  return len;
}

// Runs once the connection is ready, right before the request is sent.
static int PrereqCb(void* user, char*, char*, int, int) {
  auto* x = static_cast<HttpClient::Transfer*>(user);
  if (x->fence == nullptr) return CURL_PREREQFUNC_OK;
  absl::Status st = x->fence->Check();
  if (st.ok()) return CURL_PREREQFUNC_OK;
  x->fence_refusal = std::move(st);
  return CURL_PREREQFUNC_ABORT;
}

static int ProgressCb(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* x = static_cast<HttpClient::Transfer*>(user);
  if (x->stop != nullptr && x->stop->load()) return 1;
  if (x->idle_timeout_micros > 0 && MonoMicros() - x->last_data_micros > x->idle_timeout_micros) {
    x->idle_timed_out = true;
    return 1;
  }
  return 0;
}

HttpClient::HttpClient(RestConfig config, ClientOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      creds_(config_),
      limiter_(options_.qps, options_.burst) {}

absl::StatusOr<std::unique_ptr<HttpClient>> HttpClient::Create(RestConfig config,
                                                               ClientOptions options) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (config.server.empty()) return absl::InvalidArgumentError("no API server address");
  std::unique_ptr<HttpClient> c(new HttpClient(std::move(config), std::move(options)));
  // Parse scheme://host[:port][/prefix] to apply tls-server-name via CONNECT_TO.
  const std::string& server = c->config_.server;
  size_t scheme_end = server.find("://");
  if (scheme_end == std::string::npos) {
    return absl::InvalidArgumentError(StrCat("API server address \"", server, "\" has no scheme"));
  }
  const std::string scheme = server.substr(0, scheme_end);
  if (scheme != "https" && scheme != "http") {
    return absl::InvalidArgumentError(
        StrCat("API server address \"", server, "\": scheme must be http or https"));
  }
  size_t host_start = scheme_end + 3;
  size_t path_start = server.find('/', host_start);
  std::string hostport = server.substr(
      host_start, path_start == std::string::npos ? std::string::npos : path_start - host_start);
  std::string prefix = path_start == std::string::npos ? "" : server.substr(path_start);
  std::string host = hostport, port = scheme == "https" ? "443" : "80";
  size_t colon = hostport.rfind(':');
  if (colon != std::string::npos && hostport.find(']', colon) == std::string::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  if (!c->config_.tls_server_name.empty() && scheme == "https") {
    std::string bare = host;
    if (!bare.empty() && bare.front() == '[') bare = bare.substr(1, bare.size() - 2);
    c->connect_to_ = StrCat(c->config_.tls_server_name, ":", port, ":", bare, ":", port);
    c->base_url_ = StrCat(scheme, "://", c->config_.tls_server_name, ":", port, prefix);
  } else {
    c->base_url_ = server;
  }
  auto* locks = new ShareLocks();
  c->share_locks_ = locks;
  CURLSH* share = curl_share_init();
  curl_share_setopt(share, CURLSHOPT_LOCKFUNC, ShareLockFn);
  curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, ShareUnlockFn);
  curl_share_setopt(share, CURLSHOPT_USERDATA, locks);
  curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  c->share_ = share;
  return c;
}

HttpClient::~HttpClient() {
  for (void* h : pool_) curl_easy_cleanup(static_cast<CURL*>(h));
  if (share_ != nullptr) curl_share_cleanup(static_cast<CURLSH*>(share_));
  delete static_cast<ShareLocks*>(share_locks_);
}

void* HttpClient::AcquireHandle() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      void* h = pool_.back();
      pool_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void HttpClient::ReleaseHandle(void* h) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  if (pool_.size() < options_.max_idle_connections) {
    pool_.push_back(h);
  } else {
    curl_easy_cleanup(static_cast<CURL*>(h));
  }
}

WriteFence* HttpClient::FenceFor(const HttpRequest& req) const {
  if (options_.write_fence == nullptr || req.fence_exempt || !IsMutating(req.method)) {
    return nullptr;
  }
  return options_.write_fence.get();
}

absl::Status HttpClient::Refused(const HttpRequest& req, absl::Status why) const {
  options_.write_fence->CountRefused();
  const std::string resource = ResourceOfPath(req.path);
  if (options_.metrics != nullptr) options_.metrics->writes_fenced.With({resource}).Inc();
  // A deposed leader may refuse thousands of queued writes: log a sample.
  const int64_t n = options_.write_fence->refused();
  if (n == 1 || n % 1000 == 0) {
    spdlog::warn("{} {}: {} ({} writes refused so far)", req.method,
                 req.path.substr(0, req.path.find('?')), Msg(why), n);
  }
  return why;
}

absl::StatusOr<HttpResponse> HttpClient::Perform(const HttpRequest& req, Transfer* xfer,
                                                 bool stream, const std::atomic<bool>* stop,
                                                 int64_t timeout_millis) {
  absl::StatusOr<Credentials> creds = creds_.Get();
  if (!creds.ok()) return creds.status();
  CURL* h = static_cast<CURL*>(AcquireHandle());
  if (h == nullptr) return absl::InternalError("curl_easy_init failed");
  curl_easy_reset(h);
  const std::string url = base_url_ + req.path;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_SHARE, static_cast<CURLSH*>(share_));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(h, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10'000L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip etc. when offered
  curl_slist* connect_to = nullptr;
  if (!connect_to_.empty()) {
    connect_to = curl_slist_append(nullptr, connect_to_.c_str());
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to);
  }
  // TLS.
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  }
  curl_blob ca{const_cast<char*>(config_.ca_pem.data()), config_.ca_pem.size(), CURL_BLOB_NOCOPY};
  if (!config_.ca_pem.empty()) curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
  curl_blob cert{const_cast<char*>(creds->client_cert_pem.data()), creds->client_cert_pem.size(),
                 CURL_BLOB_COPY};
  curl_blob key{const_cast<char*>(creds->client_key_pem.data()), creds->client_key_pem.size(),
                CURL_BLOB_COPY};
  if (!creds->client_cert_pem.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  }
  // Headers.
  curl_slist* headers = nullptr;
  const std::string accept = "Accept: " + req.accept;
  headers = curl_slist_append(headers, accept.c_str());
  std::string auth;
  if (!creds->bearer_token.empty()) {
    auth = "Authorization: Bearer " + creds->bearer_token;
    headers = curl_slist_append(headers, auth.c_str());
  } else if (!config_.username.empty()) {
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(h, CURLOPT_USERNAME, config_.username.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, config_.password.c_str());
  }
  std::string ct;
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    ct = "Content-Type: " + req.content_type;
    headers = curl_slist_append(headers, ct.c_str());
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  // Method and body.
  if (req.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  }
  // Callbacks.
  xfer->resp = HttpResponse{};
  xfer->pending.clear();
  xfer->streaming = stream;
  xfer->stop = stop;
  xfer->handle = h;
  xfer->last_data_micros = MonoMicros();
  xfer->body_too_large = false;
  xfer->skipping_line = false;
  xfer->skipped_bytes = 0;
  xfer->oversized_line_bytes = 0;
  xfer->fence_refusal = absl::OkStatus();
  if (xfer->fence != nullptr) {
    curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, PrereqCb);
    curl_easy_setopt(h, CURLOPT_PREREQDATA, xfer);
  }
  if (!stream && xfer->max_body > 0) {
    // Refuses at once a body whose Content-Length is over the cap.
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(xfer->max_body));
  }
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, HeaderCb);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &xfer->resp);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, WriteCb);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, xfer);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, ProgressCb);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, xfer);
  if (!stream) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_millis));

  requests_.fetch_add(1);
  CURLcode rc = curl_easy_perform(h);
  long code = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  long version = 0;
  curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &version);
  long connects = 0;
  if (curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0) {
    connects_.fetch_add(connects);
  }
  curl_slist_free_all(headers);
  curl_slist_free_all(connect_to);
  xfer->resp.status = code;
  xfer->resp.http_version = version == CURL_HTTP_VERSION_2_0   ? "2"
                            : version == CURL_HTTP_VERSION_1_0 ? "1.0"
                                                               : "1.1";
  // Reuse the handle (and its live connection) unless the transfer was cut.
  if (rc == CURLE_OK) {
    ReleaseHandle(h);
  } else {
    curl_easy_cleanup(h);
  }
  if (rc != CURLE_OK) {
    if (!xfer->fence_refusal.ok()) return xfer->fence_refusal;
    if (xfer->body_too_large || rc == CURLE_FILESIZE_EXCEEDED) {
      if (options_.metrics != nullptr)
        options_.metrics->responses_too_large.With({ResourceOfPath(req.path)}).Inc();
      return absl::ResourceExhaustedError(StrCat(req.method, " ", req.path,
                                                 ": response body over the limit of ",
                                                 xfer->max_body, " bytes, dropped"));
    }
    if (stream && xfer->oversized_line_bytes > 0) {
      return absl::ResourceExhaustedError(
          StrCat(req.method, " ", req.path, ": a watch event of ", xfer->oversized_line_bytes,
                 " bytes is over the limit of ", xfer->max_line, " bytes"));
    }
    if (stream && xfer->idle_timed_out && !xfer->stopped_by_callback &&
        (stop == nullptr || !stop->load())) {
      return absl::DeadlineExceededError(StrCat(req.method, " ", req.path, ": no data for ",
                                                xfer->idle_timeout_micros / 1000, " ms"));
    }
    if (stream &&
        (xfer->stopped_by_callback || (stop != nullptr && stop->load()) || xfer->idle_timed_out)) {
      return std::move(xfer->resp);  // ended on purpose
    }
    if (stream && code >= 200 && code < 300 &&
        (rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_HTTP2_STREAM ||
         rc == CURLE_HTTP2)) {
      return absl::UnavailableError(
          StrCat(req.method, " ", req.path, ": stream dropped: ", curl_easy_strerror(rc)));
    }
    return absl::UnavailableError(StrCat(req.method, " ", req.path, ": ", curl_easy_strerror(rc)));
  }
  return std::move(xfer->resp);
}

absl::StatusOr<HttpResponse> HttpClient::Do(const HttpRequest& req, const std::atomic<bool>* stop) {
  WriteFence* fence = FenceFor(req);
  const int64_t deadline = req.deadline_micros;
  auto past_deadline = [&] {
    return absl::DeadlineExceededError(
        StrCat(req.method, " ", req.path.substr(0, req.path.find('?')), ": deadline exceeded"));
  };
  bool reauthed = false;
  for (int attempt = 0;; ++attempt) {
    if (!limiter_.Wait(stop, deadline)) {
      if (stop != nullptr && stop->load()) return absl::CancelledError("stopping");
      return past_deadline();
    }
    // This attempt's timeout: the request's, cut at the call's deadline and,
    // for a fenced write, at the fence's expiry.
    int64_t timeout_millis = req.timeout_millis;
    if (deadline > 0) {
      const int64_t left = deadline - MonoMicros();
      if (left <= 0) return past_deadline();
      timeout_millis = std::min<int64_t>(timeout_millis, std::max<int64_t>(1, left / 1000));
    }
    Transfer xfer;
    xfer.max_body = options_.max_response_bytes;
    if (fence != nullptr) {
      if (absl::Status st = fence->Check(); !st.ok()) return Refused(req, std::move(st));
      const int64_t left = fence->RemainingMicros();
      timeout_millis = std::min<int64_t>(timeout_millis, std::max<int64_t>(1, left / 1000));
      xfer.fence = fence;
    }
    absl::StatusOr<HttpResponse> r = Perform(req, &xfer, /*stream=*/false, stop, timeout_millis);
    if (!xfer.fence_refusal.ok()) return Refused(req, xfer.fence_refusal);
    if (!r.ok()) return r;
    if (r->status == 401 && !reauthed && creds_.Invalidate()) {
      reauthed = true;
      continue;
    }
    if ((r->status == 429 || r->status >= 500) && r->retry_after_seconds &&
        attempt < options_.max_retries) {
      int64_t ms =
          std::min<int64_t>(*r->retry_after_seconds * 1000, options_.max_retry_after_millis);
      if (deadline > 0 && MonoMicros() + ms * 1000 >= deadline) {
        spdlog::debug("{} {}: HTTP {} with Retry-After {} s: past the deadline, not retrying",
                      req.method, req.path, r->status, *r->retry_after_seconds);
        return r;
      }
      spdlog::debug("{} {}: HTTP {}, retrying after {} ms", req.method, req.path, r->status, ms);
      if (!SleepFor(ms, stop)) return absl::CancelledError("stopping");
      continue;
    }
    return r;
  }
}

absl::StatusOr<HttpResponse> HttpClient::Stream(
    const HttpRequest& req, const std::function<bool(std::string_view)>& on_line,
    const std::atomic<bool>* stop, int64_t idle_timeout_millis) {
  bool reauthed = false;
  while (true) {
    if (!limiter_.Wait(stop)) return absl::CancelledError("stopping");
    Transfer xfer;
    xfer.on_line = &on_line;
    xfer.idle_timeout_micros = idle_timeout_millis * 1000;
    xfer.max_line = options_.max_line_bytes;
    absl::StatusOr<HttpResponse> r =
        Perform(req, &xfer, /*stream=*/true, stop, /*timeout_millis=*/0);
    if (!r.ok()) return r;
    if (r->status == 401 && !reauthed && creds_.Invalidate()) {
      reauthed = true;
      continue;
    }
    return r;
  }
}

}  // namespace gantry::client
