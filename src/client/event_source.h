// The live event source: one reflector thread per resource the scheduler
// needs (and the server serves), feeding a state::ClusterEventHandler (the
// Scheduler). Handler calls are serialized.
//
// Resources: pods (all namespaces, upstream field selector
// status.phase!=Succeeded,status.phase!=Failed), nodes, namespaces,
// priorityclasses (scheduling.k8s.io/v1), poddisruptionbudgets (policy/v1),
// PodGroups (scheduling.k8s.io/v1beta1, scheduling.x-k8s.io/v1alpha1) and
// CompositePodGroups (v1alpha3), and the DRA objects (resource.k8s.io/v1),
// each only when the API server serves it (see docs/client.md).
#ifndef GANTRY_SRC_CLIENT_EVENT_SOURCE_H_
#define GANTRY_SRC_CLIENT_EVENT_SOURCE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "src/api/objects.h"
#include "src/client/discovery.h"
#include "src/client/http.h"
#include "src/client/reflector.h"
#include "src/state/event_handler.h"

namespace gantry::client {

// The field selector kube-scheduler's pod informer uses.
inline constexpr char kPodFieldSelector[] = "status.phase!=Succeeded,status.phase!=Failed";

struct EventSourceStats {
  int64_t decode_errors = 0;
  int64_t relists = 0;
  int64_t watch_errors = 0;
  int64_t events = 0;
};

class EventSource {
 public:
  EventSource(HttpClient& client, const Discovery& discovery, state::ClusterEventHandler& handler);
  ~EventSource();
  EventSource(const EventSource&) = delete;
  EventSource& operator=(const EventSource&) = delete;

  void Start();
  void Stop();
  // Every started reflector finished its initial list.
  bool HasSynced() const;
  // Waits for HasSynced; false on timeout or when *stop became true.
  bool WaitForSync(const std::atomic<bool>* stop, int64_t timeout_millis) const;
  EventSourceStats Stats() const;
  // Objects skipped because they could not be decoded, per kind (e.g.
  // "Pod", "PodGroup.scheduling.x-k8s.io"); kinds without errors are left out.
  std::vector<std::pair<std::string, int64_t>> DecodeErrorsByKind() const;
  std::vector<std::string> ResourceNames() const;
  // Copies of the objects the informers hold now: what the scheduler's
  // caches were built from, without asking the API server. Each kind is as
  // current as its own watch; kinds are not taken at one instant.
  api::ObjectSet CachedObjects() const;

 private:
  struct Entry {
    std::unique_ptr<ObjectSink> sink;
    std::unique_ptr<Reflector> reflector;
    std::function<int64_t()> decode_errors;
    std::function<void(api::ObjectSet*)> copy_to;  // appends the informer's objects
    std::string kind;
  };
  template <typename T>
  void Add(std::string name, std::string path, std::string field_selector, std::string kind,
           T (*decode)(api::Decoder&, api::JsonValue), typename Informer<T>::Handlers handlers);

  HttpClient& client_;
  state::ClusterEventHandler& scheduler_;
  std::mutex handler_mu_;  // serializes handler calls across reflector threads
  std::vector<Entry> entries_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
};

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_EVENT_SOURCE_H_
