// Reflectors keep a local copy of one API resource: a chunked LIST
// (limit/continue), then a WATCH from the list's resourceVersion with
// bookmarks. A 410 Gone (on a continue token or a watch) relists; a dropped,
// failed or stalled (silent past stall_timeout_millis) watch reconnects from
// the last seen resourceVersion after an exponential backoff with jitter; a
// watch event over the client's line limit is skipped and relists. Watch
// events are newline-delimited JSON objects {"type": ..., "object": ...}.
//
// An `Informer<T>` is the typed sink: it decodes objects with the src/api
// decoders, keeps them by key, and calls add/update/delete handlers. A bad
// object is logged with its name, counted and skipped; it never stops the
// stream.
#ifndef GANTRY_SRC_CLIENT_REFLECTOR_H_
#define GANTRY_SRC_CLIENT_REFLECTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "src/api/decode.h"
#include "src/api/pod.h"
#include "src/client/http.h"

namespace gantry::client {

// Receives decoded JSON objects from a reflector (on its thread).
class ObjectSink {
 public:
  virtual ~ObjectSink() = default;
  // A (re)list starts; ListItem for each object; EndList when complete (the
  // sink drops objects it holds that were not listed). BeginList may come
  // again before EndList when a list restarts (its continue token expired):
  // the sink then forgets what the abandoned attempt listed, so EndList
  // compares against the restarted list only.
  virtual void BeginList() = 0;
  virtual void ListItem(api::JsonValue object) = 0;
  virtual void EndList() = 0;
  // A watch event: "ADDED", "MODIFIED" or "DELETED".
  virtual void Apply(std::string_view type, api::JsonValue object) = 0;
};

struct ReflectorOptions {
  std::string name;            // for logs: "pods", "nodes"
  std::string path;            // collection path: "/api/v1/pods"
  std::string field_selector;  // optional
  std::string label_selector;  // optional
  // LIST limit; halved (for the rest of that list) while a page is over
  // the client's response size limit.
  int64_t page_size = 500;
  int64_t min_watch_seconds = 300;  // watch timeoutSeconds is random in [min, 2*min)
  // A watch that delivers no line (event or bookmark) for this long is
  // restarted: the API server sends a bookmark about every minute to
  // watches that allow them, so this is two intervals and some slack.
  int64_t stall_timeout_millis = 130'000;
  // Reconnect and relist backoff, as client-go's reflector: 800 ms doubling
  // to 30 s (here the jittered wait stays within 30 s too), starting over
  // after 2 min without a backoff.
  int64_t backoff_initial_millis = 800;
  int64_t backoff_max_millis = 30'000;
  int64_t backoff_reset_after_millis = 120'000;
};

struct ReflectorStats {
  std::atomic<int64_t> lists{0};
  std::atomic<int64_t> relists_gone{0};
  std::atomic<int64_t> watches{0};
  std::atomic<int64_t> watch_errors{0};
  std::atomic<int64_t> events{0};
  std::atomic<int64_t> bad_events{0};        // unparsable lines / ERROR events
  std::atomic<int64_t> stalls{0};            // watches silent for stall_timeout_millis
  std::atomic<int64_t> events_too_large{0};  // events over the client's line limit
  std::atomic<int64_t> restarts{0};          // watches ended other than by timeoutSeconds
};

class Reflector {
 public:
  Reflector(HttpClient& client, ReflectorOptions options, ObjectSink* sink);

  // Runs until *stop becomes true.
  void Run(const std::atomic<bool>* stop);
  // True once the first complete list was handed to the sink.
  bool HasSynced() const { return synced_.load(); }
  const ReflectorStats& stats() const { return stats_; }
  const std::string& name() const { return options_.name; }
  std::string last_resource_version() const;

 private:
  enum class WatchEnd { kTimeout, kGone, kError, kStalled, kEventTooLarge, kStopped };
  absl::Status List(const std::atomic<bool>* stop);
  WatchEnd Watch(const std::atomic<bool>* stop);
  std::string Query(bool watch, std::string_view extra) const;
  // Counts a watch restart in stats and gantry_watch_restarts_total.
  void CountRestart(const char* reason);

  HttpClient& client_;
  ReflectorOptions options_;
  ObjectSink* sink_;
  std::atomic<bool> synced_{false};
  mutable std::mutex rv_mu_;
  std::string resource_version_;
  ReflectorStats stats_;
};

// "namespace/name" or "name" of a raw object.
std::string RawObjectKey(api::JsonValue object);

// Typed store + handlers over the src/api decoders. Types need `meta`.
template <typename T>
class Informer final : public ObjectSink {
 public:
  using DecodeFn = T (*)(api::Decoder&, api::JsonValue);
  using Ptr = std::shared_ptr<const T>;
  struct Handlers {
    std::function<void(Ptr)> add;
    std::function<void(Ptr old_obj, Ptr new_obj)> update;
    std::function<void(Ptr)> del;
  };

  Informer(std::string kind, DecodeFn decode, Handlers handlers)
      : kind_(std::move(kind)), decode_(decode), handlers_(std::move(handlers)) {}

  void BeginList() override { listed_.clear(); }
  void ListItem(api::JsonValue object) override {
    std::string key = RawObjectKey(object);
    listed_.insert(key);
    Upsert(std::move(key), object, /*from_list=*/true);
  }
  void EndList() override {
    std::vector<std::string> gone;
    {
      std::lock_guard<std::mutex> lock(items_mu_);
      for (const auto& [key, obj] : items_) {
        if (!listed_.contains(key)) gone.push_back(key);
      }
    }
    for (const std::string& key : gone) Remove(key);
    listed_.clear();
  }
  void Apply(std::string_view type, api::JsonValue object) override {
    std::string key = RawObjectKey(object);
    if (type == "DELETED") {
      Remove(key);
    } else {
      Upsert(std::move(key), object, /*from_list=*/false);
    }
  }

  // Readers may run on any thread; the reflector's thread is the only writer.
  size_t size() const {
    std::lock_guard<std::mutex> lock(items_mu_);
    return items_.size();
  }
  int64_t decode_errors() const { return decode_errors_.load(); }
  Ptr Get(const std::string& key) const {
    std::lock_guard<std::mutex> lock(items_mu_);
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second;
  }
  // Every object held now (shared, immutable), in no particular order.
  std::vector<Ptr> Items() const {
    std::lock_guard<std::mutex> lock(items_mu_);
    std::vector<Ptr> out;
    out.reserve(items_.size());
    for (const auto& [key, obj] : items_) out.push_back(obj);
    return out;
  }

 private:
  void Upsert(std::string key, api::JsonValue object, bool from_list) {
    api::Decoder d(kind_);
    T decoded = decode_(d, object);
    if (!d.ok()) {
      decode_errors_.fetch_add(1);
      LogBadObject(kind_, Msg(d.Finish(object)));
      if constexpr (std::is_same_v<T, api::Pod>) {
        // A pending pod whose update cannot be read is not scheduled from its
        // stale copy: it leaves the cache until a readable version arrives. A
        // bound pod keeps its copy (it must keep counting on its node; bound
        // pods of newer API levels decode tolerantly anyway).
        Ptr held = Get(key);
        if (held != nullptr && !held->IsBound()) Remove(key);
      }
      return;  // otherwise keep whatever we had for this key
    }
    auto obj = std::make_shared<const T>(std::move(decoded));
    Ptr old;
    {
      std::lock_guard<std::mutex> lock(items_mu_);
      auto it = items_.find(key);
      if (it == items_.end()) {
        items_.emplace(std::move(key), obj);
      } else {
        if (from_list && it->second->meta.resource_version == obj->meta.resource_version) return;
        old = std::move(it->second);
        it->second = obj;
      }
    }
    // Handlers run outside the lock, so they may read this informer.
    if (old == nullptr) {
      if (handlers_.add) handlers_.add(std::move(obj));
    } else if (handlers_.update) {
      handlers_.update(std::move(old), std::move(obj));
    }
  }
  void Remove(const std::string& key) {
    Ptr old;
    {
      std::lock_guard<std::mutex> lock(items_mu_);
      auto it = items_.find(key);
      if (it == items_.end()) return;
      old = std::move(it->second);
      items_.erase(it);
    }
    if (handlers_.del) handlers_.del(std::move(old));
  }
  static void LogBadObject(const std::string& kind, std::string_view message);

  std::string kind_;
  DecodeFn decode_;
  Handlers handlers_;
  mutable std::mutex items_mu_;
  absl::flat_hash_map<std::string, Ptr> items_;  // guarded by items_mu_
  absl::flat_hash_set<std::string> listed_;      // the reflector's thread only
  std::atomic<int64_t> decode_errors_{0};
};

void LogBadObjectImpl(const std::string& kind, std::string_view message);
template <typename T>
void Informer<T>::LogBadObject(const std::string& kind, std::string_view message) {
  LogBadObjectImpl(kind, message);
}

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_REFLECTOR_H_
