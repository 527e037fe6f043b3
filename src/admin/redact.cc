#include "src/admin/redact.h"

#include <algorithm>
#include <string>

#include "gantry/util/strings.h"
#include "nlohmann/json.hpp"
#include "src/api/dra.h"
#include "src/sim/simulation.h"

namespace gantry::admin {
namespace {

using Json = nlohmann::ordered_json;

bool Contains(const std::vector<std::string_view>& list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// Keeps only KeptAnnotations() of `meta` (an ObjectMeta); drops an
// annotations map left empty.
void FilterAnnotations(Json& meta) {
  if (!meta.is_object()) return;
  auto it = meta.find("annotations");
  if (it == meta.end()) return;
  if (it->is_object()) {
    Json kept = Json::object();
    for (auto& [key, value] : it->items()) {
      if (Contains(KeptAnnotations(), key)) kept[key] = std::move(value);
    }
    if (!kept.empty()) {
      *it = std::move(kept);
      return;
    }
  }
  meta.erase(it);
}

void FilterContainers(Json& spec, const char* list) {
  auto it = spec.find(list);
  if (it == spec.end() || !it->is_array()) return;
  for (Json& container : *it) {
    if (!container.is_object()) continue;
    Json kept = Json::object();
    for (auto& [key, value] : container.items()) {
      if (Contains(KeptContainerFields(), key)) kept[key] = std::move(value);
    }
    container = std::move(kept);
  }
}

}  // namespace

const std::vector<std::string_view>& KeptAnnotations() {
  static const std::vector<std::string_view> keys = {
      api::kPodClaimNameAnnotation,           // claims made from a pod's template
      api::kExtendedResourceClaimAnnotation,  // claims backing extended resources
      sim::kPodGroupClaimNameAnnotation,      // claims made from a PodGroup's template
      sim::kRunDurationAnnotation,            // simulated pod run time
      sim::kBindingDelayAnnotation,           // simulated DRA binding conditions
      sim::kBindingOutcomeAnnotation,
  };
  return keys;
}

const std::vector<std::string_view>& KeptContainerFields() {
  // What api::DecodePod reads of a container.
  static const std::vector<std::string_view> fields = {"name", "image", "resources",
                                                       "restartPolicy", "ports"};
  return fields;
}

bool IsNeverRecordedKind(std::string_view kind) { return kind == "Secret" || kind == "ConfigMap"; }

absl::StatusOr<sim::RawObject> RedactForSnapshot(sim::RawObject raw) {
  const std::string what =
      gantry::StrCat(raw.kind, " ", raw.namespace_.empty() ? "" : raw.namespace_ + "/", raw.name);
  if (IsNeverRecordedKind(raw.kind)) {
    return absl::InvalidArgumentError(
        gantry::StrCat(what, ": ", raw.kind, "s are never recorded in a snapshot"));
  }
  Json obj = Json::parse(raw.json, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded() || !obj.is_object())
    return absl::InvalidArgumentError(gantry::StrCat(what, ": not a JSON object"));
  if (auto meta = obj.find("metadata"); meta != obj.end()) {
    FilterAnnotations(*meta);
    if (meta->is_object()) meta->erase("managedFields");
  }
  auto spec = obj.find("spec");
  if (spec != obj.end() && spec->is_object()) {
    if (raw.kind == "Pod") {
      for (const char* list : {"containers", "initContainers", "ephemeralContainers"})
        FilterContainers(*spec, list);
    } else if (raw.kind == "ResourceClaimTemplate") {
      // The template's metadata becomes the claim's.
      if (auto meta = spec->find("metadata"); meta != spec->end()) FilterAnnotations(*meta);
    }
  }
  raw.json = obj.dump(-1, ' ', false, Json::error_handler_t::replace);
  return raw;
}

}  // namespace gantry::admin
