#include "src/client/leader_election.h"

#include <unistd.h>

#include <chrono>
#include <random>

#include "absl/time/time.h"
#include "gantry/util/strings.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"
#include "src/client/api_writer.h"

namespace gantry::client {
namespace {

int64_t Mono() { return MonotonicMicros(); }
int64_t Wall() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t ParseMicroTime(const std::string& s) {
  if (s.empty()) return 0;
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, s, &t, &err)) return 0;
  return absl::ToUnixMicros(t);
}

}  // namespace

std::string Hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string DefaultIdentity() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(Mono()));
  uint8_t b[16];
  for (int i = 0; i < 16; i += 8) {
    uint64_t v = rng();
    for (int k = 0; k < 8; ++k) b[i + k] = static_cast<uint8_t>(v >> (8 * k));
  }
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  char uuid[40];
  std::snprintf(uuid, sizeof(uuid),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return StrCat(Hostname(), "_", uuid);
}

LeaderElector::LeaderElector(HttpClient& client, LeaderElectionConfig config, WriteFence* fence)
    : client_(client), config_(std::move(config)), fence_(fence) {
  if (config_.identity.empty()) config_.identity = DefaultIdentity();
}

std::string LeaderElector::LeasePath(bool collection) const {
  std::string p = StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                         UrlEncode(config_.lease_namespace), "/leases");
  if (!collection) p += StrCat("/", UrlEncode(config_.lease_name));
  return p;
}

absl::StatusOr<LeaseRecord> LeaderElector::Get(bool* not_found, int64_t deadline_micros) {
  *not_found = false;
  HttpRequest req;
  req.path = LeasePath(false);
  req.timeout_millis = config_.renew_deadline_millis;
  req.deadline_micros = deadline_micros;
  req.fence_exempt = true;
  absl::StatusOr<HttpResponse> r = client_.Do(req);
  if (!r.ok()) return r.status();
  if (r->status == 404) {
    *not_found = true;
    return LeaseRecord{};
  }
  if (r->status != 200) return HttpError(*r, "get lease");
  try {
    nlohmann::json j = nlohmann::json::parse(r->body);
    LeaseRecord rec;
    const nlohmann::json spec = j.value("spec", nlohmann::json::object());
    rec.holder = spec.value("holderIdentity", "");
    rec.lease_duration_seconds = spec.value("leaseDurationSeconds", 0);
    rec.acquire_micros = ParseMicroTime(spec.value("acquireTime", ""));
    rec.renew_micros = ParseMicroTime(spec.value("renewTime", ""));
    rec.transitions = spec.value("leaseTransitions", 0);
    rec.resource_version = j["metadata"].value("resourceVersion", "");
    std::string raw = spec.dump();
    if (raw != observed_raw_) {
      observed_raw_ = raw;
      observed_at_micros_ = Mono();
    }
    observed_ = rec;
    return rec;
  } catch (const std::exception& e) {
    return absl::DataLossError(StrCat("lease: ", e.what()));
  }
}

bool LeaderElector::Write(const LeaseRecord& rec, bool create, int64_t deadline_micros) {
  nlohmann::json spec = {{"holderIdentity", rec.holder},
                         {"leaseDurationSeconds", rec.lease_duration_seconds},
                         {"acquireTime", ApiClusterWriter::FormatMicroTime(rec.acquire_micros)},
                         {"renewTime", ApiClusterWriter::FormatMicroTime(rec.renew_micros)},
                         {"leaseTransitions", rec.transitions}};
  nlohmann::json meta = {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}};
  if (!create) meta["resourceVersion"] = rec.resource_version;
  nlohmann::json body = {{"apiVersion", "coordination.k8s.io/v1"},
                         {"kind", "Lease"},
                         {"metadata", meta},
                         {"spec", spec}};
  HttpRequest req;
  req.method = create ? "POST" : "PUT";
  req.path = LeasePath(create);
  req.body = body.dump();
  req.timeout_millis = config_.renew_deadline_millis;
  req.deadline_micros = deadline_micros;
  req.fence_exempt = true;
  absl::StatusOr<HttpResponse> r = client_.Do(req);
  if (!r.ok()) {
    spdlog::info("lease {}/{}: {}", config_.lease_namespace, config_.lease_name, Msg(r.status()));
    return false;
  }
  if (r->status >= 300) {
    if (r->status != 409) spdlog::info("{}", Msg(HttpError(*r, "write lease")));
    return false;
  }
  try {
    nlohmann::json j = nlohmann::json::parse(r->body);
    observed_raw_ = j.value("spec", nlohmann::json::object()).dump();
    observed_ = rec;
    observed_.resource_version = j["metadata"].value("resourceVersion", "");
    observed_at_micros_ = Mono();
  } catch (const std::exception&) {
  }
  return true;
}

bool LeaderElector::TryAcquireOrRenew() {
  return TryAcquireOrRenewBy(Mono() + config_.renew_deadline_millis * 1000);
}

bool LeaderElector::HeldByOther() const {
  return !observed_.holder.empty() && observed_.holder != config_.identity;
}

bool LeaderElector::TryAcquireOrRenewBy(int64_t deadline) {
  const int64_t now = Wall();
  LeaseRecord want;
  want.holder = config_.identity;
  want.lease_duration_seconds = std::max<int64_t>(1, config_.lease_duration_millis / 1000);
  want.acquire_micros = now;
  want.renew_micros = now;
  // Fast path: we are the leader and our last write is still valid.
  if (leader_.load() && observed_.holder == config_.identity &&
      Mono() < observed_at_micros_ + config_.lease_duration_millis * 1000) {
    LeaseRecord rec = want;
    rec.acquire_micros = observed_.acquire_micros;
    rec.transitions = observed_.transitions;
    rec.resource_version = observed_.resource_version;
    if (Write(rec, false, deadline)) return true;
  }
  bool not_found = false;
  absl::StatusOr<LeaseRecord> cur = Get(&not_found, deadline);
  if (!cur.ok()) {
    spdlog::info("lease {}/{}: {}", config_.lease_namespace, config_.lease_name, Msg(cur.status()));
    return false;
  }
  if (not_found) return Write(want, /*create=*/true, deadline);
  const int64_t duration_micros =
      (cur->lease_duration_seconds > 0 ? cur->lease_duration_seconds * 1'000'000
                                       : config_.lease_duration_millis * 1000);
  if (!cur->holder.empty() && cur->holder != config_.identity &&
      observed_at_micros_ + duration_micros > Mono()) {
    return false;  // held by someone else and not expired
  }
  if (cur->holder == config_.identity) {
    want.acquire_micros = cur->acquire_micros;
    want.transitions = cur->transitions;
  } else {
    want.transitions = cur->transitions + 1;
  }
  want.resource_version = cur->resource_version;
  return Write(want, /*create=*/false, deadline);
}

void LeaderElector::Release() {
  if (observed_.holder != config_.identity) return;
  LeaseRecord rec = observed_;
  rec.holder = "";
  rec.lease_duration_seconds = 1;
  rec.renew_micros = Wall();
  if (Write(rec, false, Mono() + config_.renew_deadline_millis * 1000)) {
    spdlog::info("released lease {}/{}", config_.lease_namespace, config_.lease_name);
  }
}

bool LeaderElector::Run(const std::atomic<bool>* stop, const std::function<void()>& on_started,
                        const std::function<void()>& on_stopped) {
  std::mt19937_64 rng(static_cast<uint64_t>(Mono()));
  std::uniform_real_distribution<double> jitter(0.0, 1.2);
  const int64_t renew_deadline = config_.renew_deadline_millis * 1000;
  spdlog::info("attempting to acquire leader lease {}/{} as {}", config_.lease_namespace,
               config_.lease_name, config_.identity);
  // Acquire. `valid_until`: renewDeadline after the start of the last
  // successful acquisition or renewal; the fence closes then at the latest.
  int64_t valid_until = 0;
  while (true) {
    const int64_t start = Mono();
    if (TryAcquireOrRenewBy(start + renew_deadline) &&
        (fence_ == nullptr || fence_->Extend(start + renew_deadline))) {
      valid_until = start + renew_deadline;
      break;
    }
    const int64_t wait = static_cast<int64_t>(static_cast<double>(config_.retry_period_millis) *
                                              (1.0 + jitter(rng)));
    if (!SleepFor(wait, stop)) return true;
  }
  leader_.store(true);
  spdlog::info("acquired lease {}/{}", config_.lease_namespace, config_.lease_name);
  if (on_started) on_started();
  // Renew every retryPeriod; a failed round is retried every retryPeriod
  // until valid_until.
  std::string why;
  while (true) {
    const int64_t left_millis = (valid_until - Mono()) / 1000;
    if (!SleepFor(std::min<int64_t>(config_.retry_period_millis, std::max<int64_t>(0, left_millis)),
                  stop)) {
      break;
    }
    const int64_t start = Mono();
    if (start >= valid_until) {
      why = StrCat("failed to renew within the renew deadline (", config_.renew_deadline_millis,
                   " ms)");
      break;
    }
    if (TryAcquireOrRenewBy(valid_until)) {
      if (fence_ != nullptr && !fence_->Extend(start + renew_deadline)) {
        why = "renewed after the renew deadline had passed";
        break;
      }
      valid_until = start + renew_deadline;
      continue;
    }
    if (HeldByOther()) {
      why = StrCat("the lease is held by ", observed_.holder);
      break;
    }
  }
  const bool lost = !why.empty();
  if (fence_ != nullptr) fence_->Trip(lost ? why : "leadership given up: stopping");
  leader_.store(false);
  if (lost) {
    spdlog::error("lost leader lease {}/{}: {}", config_.lease_namespace, config_.lease_name, why);
  } else if (config_.release_on_stop) {
    Release();
  }
  if (on_stopped) on_stopped();
  return !lost;
}

}  // namespace gantry::client
