#include "src/admin/recorder.h"

#include <chrono>
#include <set>

#include "gantry/util/strings.h"
#include "simdjson.h"
#include "src/admin/redact.h"
#include "src/client/discovery.h"

namespace gantry::admin {

const std::vector<RecordedKind>& RecordedKinds() {
  static const std::vector<RecordedKind> kinds = {
      {"Namespace", {"v1"}, "namespaces", ""},
      {"Node", {"v1"}, "nodes", ""},
      {"PriorityClass", {"scheduling.k8s.io/v1"}, "priorityclasses", ""},
      {"PodDisruptionBudget", {"policy/v1"}, "poddisruptionbudgets", ""},
      {"DeviceClass", {"resource.k8s.io/v1"}, "deviceclasses", ""},
      {"ResourceSlice", {"resource.k8s.io/v1"}, "resourceslices", ""},
      {"ResourceClaimTemplate", {"resource.k8s.io/v1"}, "resourceclaimtemplates", ""},
      {"ResourceClaim", {"resource.k8s.io/v1"}, "resourceclaims", ""},
      {"DeviceTaintRule",
       {"resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3"},
       "devicetaintrules",
       ""},
      {"Workload", {"scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"}, "workloads", ""},
      {"PodGroup", {"scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"}, "podgroups", ""},
      {"CompositePodGroup", {"scheduling.k8s.io/v1alpha3"}, "compositepodgroups", ""},
      {"PodGroup", {"scheduling.x-k8s.io/v1alpha1"}, "podgroups", ""},
      {"Pod", {"v1"}, "pods", "status.phase!=Succeeded,status.phase!=Failed"},
  };
  return kinds;
}

namespace {

std::vector<std::string> InterestingGroupVersions() {
  std::set<std::string> gvs;
  for (const RecordedKind& k : RecordedKinds())
    gvs.insert(k.group_versions.begin(), k.group_versions.end());
  return {gvs.begin(), gvs.end()};
}

// Appends the items of one LIST page; returns the continue token.
absl::StatusOr<std::string> AppendPage(std::string_view what, const std::string& body,
                                       const std::string& gv, const std::string& kind,
                                       simdjson::dom::parser& parser,
                                       std::vector<sim::RawObject>* out) {
  simdjson::dom::element root;
  if (auto err = parser.parse(body).get(root); err != simdjson::SUCCESS) {
    return absl::DataLossError(
        gantry::StrCat(what, ": response is not JSON: ", simdjson::error_message(err)));
  }
  simdjson::dom::array items;
  if (root["items"].get_array().get(items) != simdjson::SUCCESS) {
    if (root["items"].is_null()) return std::string();
    return absl::DataLossError(gantry::StrCat(what, ": response has no items array"));
  }
  for (simdjson::dom::element item : items) {
    absl::StatusOr<sim::RawObject> raw = sim::MakeRawObject(what, simdjson::minify(item), gv, kind);
    if (!raw.ok()) return raw.status();
    absl::StatusOr<sim::RawObject> kept = RedactForSnapshot(std::move(*raw));
    if (!kept.ok()) return kept.status();
    out->push_back(std::move(*kept));
  }
  std::string_view cont;
  if (root["metadata"]["continue"].get_string().get(cont) != simdjson::SUCCESS)
    return std::string();
  return std::string(cont);
}

}  // namespace

absl::StatusOr<Recording> RecordCluster(client::HttpClient& client, int64_t page_size,
                                        const std::atomic<bool>* stop) {
  absl::StatusOr<client::Discovery> discovery =
      client::Discovery::Fetch(client, InterestingGroupVersions(), stop);
  if (!discovery.ok()) return discovery.status();
  Recording rec;
  rec.server = client.config().server;
  rec.recorded_at_unix_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
  simdjson::dom::parser parser;
  for (const RecordedKind& k : RecordedKinds()) {
    const std::string* gv = nullptr;
    for (const std::string& candidate : k.group_versions) {
      if (discovery->ServesResource(candidate, k.resource)) {
        gv = &candidate;
        break;
      }
    }
    if (gv == nullptr) {
      rec.not_served.push_back(gantry::StrCat(k.group_versions.front(), " ", k.kind));
      continue;
    }
    const std::string what = gantry::StrCat("list ", k.resource, " (", *gv, ")");
    const size_t before = rec.objects.size();
    std::string cont;
    do {
      if (stop != nullptr && stop->load()) return absl::CancelledError("recording stopped");
      client::HttpRequest req;
      req.path =
          gantry::StrCat(client::Discovery::PathPrefix(*gv), "/", k.resource, "?limit=", page_size);
      if (!k.field_selector.empty())
        req.path += "&fieldSelector=" + client::UrlEncode(k.field_selector);
      if (!cont.empty()) req.path += "&continue=" + client::UrlEncode(cont);
      absl::StatusOr<client::HttpResponse> resp = client.Do(req, stop);
      if (!resp.ok()) return resp.status();
      if (resp->status < 200 || resp->status >= 300) return client::HttpError(*resp, what);
      absl::StatusOr<std::string> next =
          AppendPage(what, resp->body, *gv, k.kind, parser, &rec.objects);
      if (!next.ok()) return next.status();
      cont = std::move(*next);
    } while (!cont.empty());
    rec.counts[gantry::StrCat(*gv, " ", k.kind)] +=
        static_cast<int64_t>(rec.objects.size() - before);
  }
  return rec;
}

snapshot::v1::Header RecordingHeader(const Recording& rec, std::string_view generator) {
  snapshot::v1::Header h;
  h.set_format_version(sim::kSnapshotFormatVersion);
  h.set_generator(std::string(generator));
  h.set_source(rec.server);
  h.set_recorded_at_unix_micros(rec.recorded_at_unix_micros);
  h.set_object_count(static_cast<int64_t>(rec.objects.size()));
  return h;
}

}  // namespace gantry::admin
