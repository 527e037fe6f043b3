// The Node as the scheduler sees it: labels, taints, allocatable resources,
// schedulability, readiness conditions and cached images.
#ifndef GANTRY_SRC_API_NODE_H_
#define GANTRY_SRC_API_NODE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "src/api/decode.h"
#include "src/api/meta.h"
#include "src/api/resources.h"
#include "src/api/selectors.h"

namespace gantry::api {

struct NodeCondition {
  Symbol type;
  Symbol status;
};

struct ContainerImage {
  std::vector<Symbol> names;
  int64_t size_bytes = 0;
};

struct Node {
  ObjectMeta meta;
  bool unschedulable = false;
  std::vector<Taint> taints;
  ResourceList allocatable;  // capacity is used when allocatable is absent
  ResourceList capacity;
  std::vector<NodeCondition> conditions;
  std::vector<ContainerImage> images;
};

absl::StatusOr<Node> DecodeNode(JsonValue root);
Node DecodeNode(Decoder& d, JsonValue root);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_NODE_H_
