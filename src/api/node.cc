#include "src/api/node.h"

namespace gantry::api {

Node DecodeNode(Decoder& d, JsonValue root) {
  Node node;
  bool has_allocatable = false;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &node.meta);
    } else if (key == "spec") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "unschedulable") {
          node.unschedulable = d.Bool(val);
        } else if (k == "taints") {
          d.ForEachItem(val, [&](size_t, JsonValue item) {
            node.taints.push_back(DecodeTaint(d, item));
          });
        }
      });
    } else if (key == "status") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "allocatable") {
          node.allocatable = DecodeResourceList(d, val);
          has_allocatable = true;
        } else if (k == "capacity") {
          node.capacity = DecodeResourceList(d, val);
        } else if (k == "conditions") {
          d.ForEachItem(val, [&](size_t, JsonValue item) {
            NodeCondition c;
            d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
              if (f == "type") {
                c.type = d.Sym(fv);
              } else if (f == "status") {
                c.status = d.Sym(fv);
              }
            });
            node.conditions.push_back(c);
          });
        } else if (k == "images") {
          d.ForEachItem(val, [&](size_t, JsonValue item) {
            ContainerImage img;
            d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
              if (f == "names") {
                img.names = d.SymbolList(fv);
              } else if (f == "sizeBytes") {
                img.size_bytes = d.Int(fv);
              }
            });
            node.images.push_back(std::move(img));
          });
        }
      });
    }
  });
  if (d.ok() && node.meta.name.empty()) d.FailAt("metadata", "name: Required value");
  if (!has_allocatable) node.allocatable = node.capacity;
  return node;
}

absl::StatusOr<Node> DecodeNode(JsonValue root) {
  Decoder d("Node");
  Node node = DecodeNode(d, root);
  if (!d.ok()) return d.Finish(root);
  return node;
}

}  // namespace gantry::api
