#include "src/client/discovery.h"

#include "gantry/util/strings.h"
#include "nlohmann/json.hpp"

namespace gantry::client {

std::string Discovery::PathPrefix(std::string_view gv) {
  if (gv.find('/') == std::string_view::npos) return StrCat("/api/", gv);
  return StrCat("/apis/", gv);
}

Discovery Discovery::FromLists(std::vector<std::string> group_versions,
                               std::vector<std::pair<std::string, std::string>> resources) {
  Discovery d;
  d.group_versions_.insert(group_versions.begin(), group_versions.end());
  d.resources_.insert(resources.begin(), resources.end());
  return d;
}

bool Discovery::ServesGroupVersion(std::string_view gv) const {
  return group_versions_.count(std::string(gv)) > 0;
}

bool Discovery::ServesResource(std::string_view gv, std::string_view resource) const {
  return resources_.count({std::string(gv), std::string(resource)}) > 0;
}

absl::StatusOr<Discovery> Discovery::Fetch(HttpClient& client, const std::vector<std::string>& interesting,
                                           const std::atomic<bool>* stop) {
  Discovery d;
  auto get = [&](const std::string& path) -> absl::StatusOr<nlohmann::json> {
    HttpRequest req;
    req.path = path;
    absl::StatusOr<HttpResponse> r = client.Do(req, stop);
    if (!r.ok()) return r.status();
    if (r->status != 200) return HttpError(*r, StrCat("GET ", path));
    try {
      return nlohmann::json::parse(r->body);
    } catch (const std::exception& e) {
      return absl::DataLossError(StrCat("GET ", path, ": invalid JSON: ", e.what()));
    }
  };
  absl::StatusOr<nlohmann::json> core = get("/api");
  if (!core.ok()) return core.status();
  try {
    for (const auto& v : core->value("versions", nlohmann::json::array())) d.group_versions_.insert(v.get<std::string>());
  } catch (const std::exception& e) {
    return absl::DataLossError(StrCat("GET /api: ", e.what()));
  }
  absl::StatusOr<nlohmann::json> groups = get("/apis");
  if (!groups.ok()) return groups.status();
  try {
    for (const auto& g : groups->value("groups", nlohmann::json::array())) {
      for (const auto& v : g.value("versions", nlohmann::json::array())) {
        d.group_versions_.insert(v.value("groupVersion", ""));
      }
    }
  } catch (const std::exception& e) {
    return absl::DataLossError(StrCat("GET /apis: ", e.what()));
  }
  for (const std::string& gv : interesting) {
    if (!d.ServesGroupVersion(gv)) continue;
    absl::StatusOr<nlohmann::json> list = get(PathPrefix(gv));
    if (!list.ok()) {
      if (list.status().code() == absl::StatusCode::kNotFound) continue;
      return list.status();
    }
    try {
      for (const auto& r : list->value("resources", nlohmann::json::array())) {
        d.resources_.insert({gv, r.value("name", "")});
      }
    } catch (const std::exception& e) {
      return absl::DataLossError(StrCat("GET ", PathPrefix(gv), ": ", e.what()));
    }
  }
  return d;
}

}  // namespace gantry::client
