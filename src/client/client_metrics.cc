#include "src/client/client_metrics.h"

#include <vector>

namespace gantry::client {

ClientMetrics::ClientMetrics(metrics::Registry& r)
    : writes_fenced(r.AddCounter(
          "gantry_writes_fenced_total",
          "Mutating requests (bindings, status patches, claim writes, evictions, events) refused "
          "before they were sent because leadership was lost or its lease renewal deadline "
          "passed, by resource.",
          {"resource"})),
      watch_stalls(r.AddCounter(
          "gantry_watch_stalls_total",
          "Watches that delivered neither an event nor a bookmark for the stall timeout and were "
          "restarted, by resource.",
          {"resource"})),
      watch_restarts(r.AddCounter(
          "gantry_watch_restarts_total",
          "Watches restarted for another reason than their timeoutSeconds ending them, by resource "
          "and reason (stall, error, gone, event_too_large).",
          {"resource", "reason"})),
      watch_events_too_large(r.AddCounter(
          "gantry_watch_events_too_large_total",
          "Watch events larger than the event size limit, skipped (the reflector relists), by "
          "resource.",
          {"resource"})),
      responses_too_large(r.AddCounter(
          "gantry_responses_too_large_total",
          "Responses whose body exceeded the response size limit and was dropped, by resource.",
          {"resource"})) {}

std::string ResourceOfPath(std::string_view path) {
  path = path.substr(0, path.find('?'));
  std::vector<std::string_view> seg;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) seg.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  size_t i = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    i = 2;  // api/v1
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    i = 3;  // apis/group/version
  } else {
    return "";
  }
  // namespaces/<ns>/<resource>... addresses a namespaced resource.
  if (seg.size() > i + 2 && seg[i] == "namespaces") i += 2;
  if (i >= seg.size()) return "";
  std::string out(seg[i]);
  if (i + 2 < seg.size()) {
    out += "/";
    out += seg[i + 2];
  }
  return out;
}

}  // namespace gantry::client
