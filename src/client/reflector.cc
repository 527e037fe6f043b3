#include "src/client/reflector.h"

#include <chrono>
#include <random>

#include "gantry/util/strings.h"
#include "spdlog/spdlog.h"
#include "src/client/client_metrics.h"

namespace gantry::client {

void LogBadObjectImpl(const std::string& kind, std::string_view message) {
  spdlog::warn("skipping {} that cannot be decoded: {}", kind, message);
}

std::string RawObjectKey(api::JsonValue object) { return api::ObjectIdentity(object); }

namespace {

std::string_view StringAt(api::JsonValue v, std::string_view a, std::string_view b) {
  std::string_view out;
  if (v[a][b].get_string().get(out) != simdjson::SUCCESS) return "";
  return out;
}

}  // namespace

Reflector::Reflector(HttpClient& client, ReflectorOptions options, ObjectSink* sink)
    : client_(client), options_(std::move(options)), sink_(sink) {}

std::string Reflector::last_resource_version() const {
  std::lock_guard<std::mutex> lock(rv_mu_);
  return resource_version_;
}

std::string Reflector::Query(bool watch, std::string_view extra) const {
  std::string q = options_.path + "?";
  if (watch) q += "watch=1&allowWatchBookmarks=true&";
  if (!options_.field_selector.empty())
    q += "fieldSelector=" + UrlEncode(options_.field_selector) + "&";
  if (!options_.label_selector.empty())
    q += "labelSelector=" + UrlEncode(options_.label_selector) + "&";
  q += std::string(extra);
  if (q.back() == '&' || q.back() == '?') q.pop_back();
  return q;
}

absl::Status Reflector::List(const std::atomic<bool>* stop) {
  stats_.lists.fetch_add(1);
  simdjson::dom::parser parser;
  std::string cont;
  bool begun = false;
  int64_t limit = std::max<int64_t>(1, options_.page_size);
  while (true) {
    HttpRequest req;
    req.path =
        Query(false, StrCat("limit=", limit, cont.empty() ? "" : "&continue=", UrlEncode(cont)));
    req.timeout_millis = 60'000;
    absl::StatusOr<HttpResponse> r = client_.Do(req, stop);
    if (!r.ok() && absl::IsResourceExhausted(r.status()) && limit > 1) {
      // The page is over the client's response size limit: ask for the same
      // page in smaller pieces (for the rest of this list).
      const int64_t smaller = limit / 2;
      spdlog::warn("{}: {}; asking for pages of {} instead of {}", options_.name, Msg(r.status()),
                   smaller, limit);
      limit = smaller;
      continue;
    }
    if (!r.ok()) return r.status();
    if (r->status == 410 && !cont.empty()) {
      // The continue token expired: start the list over as a fresh replace,
      // so objects listed by the abandoned attempt but gone by the new one
      // are deleted when it ends.
      stats_.relists_gone.fetch_add(1);
      spdlog::info("{}: continue token expired, restarting the list", options_.name);
      cont.clear();
      begun = false;
      continue;
    }
    if (r->status != 200) return HttpError(*r, StrCat("list ", options_.name));
    simdjson::dom::element root;
    if (auto err = parser.parse(r->body).get(root); err) {
      return absl::DataLossError(
          StrCat("list ", options_.name, ": invalid JSON: ", simdjson::error_message(err)));
    }
    if (!begun) {
      sink_->BeginList();
      begun = true;
    }
    simdjson::dom::array items;
    if (root["items"].get_array().get(items) == simdjson::SUCCESS) {
      for (simdjson::dom::element item : items) sink_->ListItem(item);
    }
    std::string_view next = StringAt(root, "metadata", "continue");
    std::string_view rv = StringAt(root, "metadata", "resourceVersion");
    if (next.empty()) {
      sink_->EndList();
      std::lock_guard<std::mutex> lock(rv_mu_);
      resource_version_ = std::string(rv);
      break;
    }
    cont = std::string(next);
  }
  return absl::OkStatus();
}

Reflector::WatchEnd Reflector::Watch(const std::atomic<bool>* stop) {
  stats_.watches.fetch_add(1);
  const auto started = std::chrono::steady_clock::now();
  int64_t lines = 0;
  static thread_local std::mt19937_64 rng(std::random_device{}());
  const int64_t timeout = options_.min_watch_seconds +
                          static_cast<int64_t>(rng() % static_cast<uint64_t>(std::max<int64_t>(
                                                           1, options_.min_watch_seconds)));
  HttpRequest req;
  req.path = Query(true, StrCat("resourceVersion=", UrlEncode(last_resource_version()),
                                "&timeoutSeconds=", timeout));
  simdjson::dom::parser parser;
  bool gone = false;
  bool error_event = false;
  auto on_line = [&](std::string_view line) -> bool {
    ++lines;
    simdjson::dom::element ev;
    if (parser.parse(line.data(), line.size(), true).get(ev) != simdjson::SUCCESS) {
      stats_.bad_events.fetch_add(1);
      spdlog::warn("{} watch: skipping an event that is not valid JSON ({} bytes)", options_.name,
                   line.size());
      return true;
    }
    std::string_view type;
    if (ev["type"].get_string().get(type) != simdjson::SUCCESS) {
      stats_.bad_events.fetch_add(1);
      return true;
    }
    simdjson::dom::element obj;
    if (ev["object"].get(obj) != simdjson::SUCCESS) {
      stats_.bad_events.fetch_add(1);
      return true;
    }
    if (type == "ERROR") {
      int64_t code = 0;
      if (obj["code"].get_int64().get(code) != simdjson::SUCCESS) code = 0;
      std::string_view msg;
      if (obj["message"].get_string().get(msg) != simdjson::SUCCESS) msg = {};
      if (code == 410) {
        gone = true;
      } else {
        error_event = true;
        stats_.bad_events.fetch_add(1);
        spdlog::warn("{} watch: error event {}: {}", options_.name, code, msg);
      }
      return false;
    }
    stats_.events.fetch_add(1);
    std::string_view rv = StringAt(obj, "metadata", "resourceVersion");
    if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
      sink_->Apply(type, obj);
    } else if (type != "BOOKMARK") {
      stats_.bad_events.fetch_add(1);
      return true;
    }
    if (!rv.empty()) {
      std::lock_guard<std::mutex> lock(rv_mu_);
      resource_version_ = std::string(rv);
    }
    return true;
  };
  // Bookmarks arrive about every minute: a watch silent for the stall
  // timeout is dead even if its connection looks alive.
  absl::StatusOr<HttpResponse> r =
      client_.Stream(req, on_line, stop, options_.stall_timeout_millis);
  if (stop != nullptr && stop->load()) return WatchEnd::kStopped;
  if (!r.ok() && absl::IsDeadlineExceeded(r.status())) {
    spdlog::warn("{} watch: no event or bookmark for {} ms, restarting it", options_.name,
                 options_.stall_timeout_millis);
    return WatchEnd::kStalled;
  }
  if (!r.ok() && absl::IsResourceExhausted(r.status())) {
    spdlog::warn("{} watch: skipping an event that is too large ({}); relisting", options_.name,
                 Msg(r.status()));
    return WatchEnd::kEventTooLarge;
  }
  if (!r.ok()) {
    spdlog::info("{} watch: {}", options_.name, Msg(r.status()));
    return WatchEnd::kError;
  }
  if (gone || r->status == 410) return WatchEnd::kGone;
  if (error_event) return WatchEnd::kError;
  if (r->status != 200) {
    spdlog::warn("{}", Msg(HttpError(*r, StrCat("watch ", options_.name))));
    return WatchEnd::kError;
  }
  if (lines == 0 && std::chrono::steady_clock::now() - started < std::chrono::seconds(1)) {
    // Ended at once without a line: back off rather than spin (as
    // client-go treats a "very short watch").
    spdlog::info("{} watch: ended at once without any event", options_.name);
    return WatchEnd::kError;
  }
  return WatchEnd::kTimeout;
}

void Reflector::CountRestart(const char* reason) {
  stats_.restarts.fetch_add(1);
  if (ClientMetrics* m = client_.metrics()) m->watch_restarts.With({options_.name, reason}).Inc();
}

void Reflector::Run(const std::atomic<bool>* stop) {
  Backoff backoff(options_.backoff_initial_millis, options_.backoff_max_millis);
  backoff.set_reset_after_millis(options_.backoff_reset_after_millis);
  backoff.set_jitter_within_max(true);
  bool need_list = true;
  while (stop == nullptr || !stop->load()) {
    if (need_list) {
      absl::Status s = List(stop);
      if (!s.ok()) {
        if (stop != nullptr && stop->load()) return;
        int64_t ms = backoff.NextMillis();
        spdlog::warn("{}: list failed ({}), retrying in {} ms", options_.name, Msg(s), ms);
        SleepFor(ms, stop);
        continue;
      }
      need_list = false;
      if (!synced_.exchange(true)) spdlog::info("{}: initial list synced", options_.name);
    }
    switch (Watch(stop)) {
      case WatchEnd::kStopped:
        return;
      case WatchEnd::kTimeout:
        backoff.Reset();  // a healthy watch ran its course
        break;
      case WatchEnd::kGone:
        stats_.relists_gone.fetch_add(1);
        CountRestart("gone");
        spdlog::info("{}: resource version too old, relisting", options_.name);
        need_list = true;
        break;
      case WatchEnd::kStalled:
        stats_.stalls.fetch_add(1);
        if (ClientMetrics* m = client_.metrics()) m->watch_stalls.With({options_.name}).Inc();
        CountRestart("stall");
        SleepFor(backoff.NextMillis(), stop);
        break;
      case WatchEnd::kEventTooLarge:
        // The skipped event may have changed the cache: relist.
        stats_.events_too_large.fetch_add(1);
        if (ClientMetrics* m = client_.metrics())
          m->watch_events_too_large.With({options_.name}).Inc();
        CountRestart("event_too_large");
        need_list = true;
        break;
      case WatchEnd::kError: {
        stats_.watch_errors.fetch_add(1);
        CountRestart("error");
        SleepFor(backoff.NextMillis(), stop);
        break;
      }
    }
  }
}

}  // namespace gantry::client
