// Kind dispatch for decoded Kubernetes objects and the `ObjectSet` that
// holds a whole cluster's worth of them (a snapshot file, or the initial
// lists of a live sync).
#ifndef GANTRY_SRC_API_OBJECTS_H_
#define GANTRY_SRC_API_OBJECTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/api/decode.h"
#include "src/api/node.h"
#include "src/api/pod.h"

namespace gantry::api {

enum class Kind : uint8_t {
  kUnknown,
  kPod,
  kNode,
};

// Maps apiVersion + kind to a Kind (kUnknown for kinds Gantry does not use).
// The group must match; the version is accepted when Gantry decodes it.
Kind KindFromTypeMeta(std::string_view api_version, std::string_view kind);
std::string_view KindName(Kind kind);

struct ObjectSet {
  std::vector<Pod> pods;
  std::vector<Node> nodes;

  size_t TotalObjects() const { return pods.size() + nodes.size(); }
};

// Decodes `root` as `kind` and appends it to `out`. On error the decoder
// holds the structured error and nothing is appended.
void DecodeInto(Kind kind, Decoder& d, JsonValue root, ObjectSet* out);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_OBJECTS_H_
