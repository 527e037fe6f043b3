#include "src/api/objects.h"

namespace gantry::api {
namespace {

// Splits "group/version" (core objects have no group).
std::string_view GroupOf(std::string_view api_version) {
  size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) return {};
  return api_version.substr(0, slash);
}

}  // namespace

Kind KindFromTypeMeta(std::string_view api_version, std::string_view kind) {
  std::string_view group = GroupOf(api_version);
  if (group.empty()) {
    if (api_version != "v1") return Kind::kUnknown;
    if (kind == "Pod") return Kind::kPod;
    if (kind == "Node") return Kind::kNode;
  }
  return Kind::kUnknown;
}

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kPod: return "Pod";
    case Kind::kNode: return "Node";
    case Kind::kUnknown: return "Unknown";
  }
  return "Unknown";
}

void DecodeInto(Kind kind, Decoder& d, JsonValue root, ObjectSet* out) {
  switch (kind) {
    case Kind::kPod: {
      Pod pod = DecodePod(d, root);
      if (d.ok()) out->pods.push_back(std::move(pod));
      return;
    }
    case Kind::kNode: {
      Node node = DecodeNode(d, root);
      if (d.ok()) out->nodes.push_back(std::move(node));
      return;
    }
    case Kind::kUnknown:
      return;
  }
}

}  // namespace gantry::api
