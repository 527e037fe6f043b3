// The live client's own metric families (gantry_ namespace). The owner of the
// registry creates one ClientMetrics and hands it to every HttpClient it makes
// (ClientOptions::metrics); the client's reflectors count through it too:
//
//   gantry_writes_fenced_total{resource}            writes refused by the WriteFence
//   gantry_watch_stalls_total{resource}             watches silent past the stall timeout
//   gantry_watch_restarts_total{resource, reason}   watches ended other than by their timeout
//   gantry_watch_events_too_large_total{resource}   watch events over the event size cap
//   gantry_responses_too_large_total{resource}      response bodies over the body size cap
//
// `resource` is the API resource of the request path ("pods",
// "pods/binding", "leases", "resourceclaims/status"), or the reflector's name.
#ifndef GANTRY_SRC_CLIENT_CLIENT_METRICS_H_
#define GANTRY_SRC_CLIENT_CLIENT_METRICS_H_

#include <string>
#include <string_view>

#include "src/metrics/metrics.h"

namespace gantry::client {

struct ClientMetrics {
  explicit ClientMetrics(metrics::Registry& registry);

  metrics::CounterFamily& writes_fenced;           // {resource}
  metrics::CounterFamily& watch_stalls;            // {resource}
  metrics::CounterFamily& watch_restarts;          // {resource, reason}
  metrics::CounterFamily& watch_events_too_large;  // {resource}
  metrics::CounterFamily& responses_too_large;     // {resource}
};

// The resource (and subresource) a request path addresses, for metric
// labels: "/api/v1/namespaces/d/pods/p/binding?x=1" -> "pods/binding",
// "/apis/resource.k8s.io/v1/resourceslices" -> "resourceslices",
// "/api/v1/namespaces/d" -> "namespaces"; "" for other paths ("/api").
std::string ResourceOfPath(std::string_view path);

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_CLIENT_METRICS_H_
