// ObjectMeta and the small value types every Kubernetes object shares.
#ifndef GANTRY_SRC_API_META_H_
#define GANTRY_SRC_API_META_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/api/decode.h"
#include "src/api/intern.h"

namespace gantry::api {

// Sorted-by-key label set. Keys and values are interned.
using Labels = std::vector<std::pair<Symbol, Symbol>>;

// Returns the value of `key`, or nullopt. `labels` must be sorted by key.
std::optional<Symbol> FindLabel(const Labels& labels, Symbol key);
std::optional<Symbol> FindLabel(const Labels& labels, std::string_view key);

struct OwnerReference {
  Symbol api_version;
  Symbol kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

struct ObjectMeta {
  std::string name;
  Symbol namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  Labels labels;
  // Annotations except `kubectl.kubernetes.io/last-applied-configuration`,
  // which can be large and is never read by the scheduler.
  std::vector<std::pair<Symbol, std::string>> annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;
  int64_t creation_micros = 0;                 // creationTimestamp
  std::optional<int64_t> deletion_micros;      // deletionTimestamp

  // "namespace/name" for namespaced objects, "name" otherwise.
  std::string Key() const;
  const std::string* FindAnnotation(std::string_view key) const;
  const OwnerReference* ControllerRef() const;
};

// Upstream's bounds on metadata: names (DNS subdomains) and label key
// prefixes at most 253 characters, label key names and values at most 63,
// and all annotations together (keys and values) at most 256 KiB.
inline constexpr size_t kMaxNameLength = 253;
inline constexpr size_t kMaxLabelNameLength = 63;
inline constexpr size_t kMaxLabelPrefixLength = 253;
inline constexpr size_t kMaxLabelValueLength = 63;
inline constexpr size_t kMaxAnnotationsBytes = 256 * 1024;

// A label map (metadata.labels, spec.nodeSelector) with upstream's length
// bounds on keys and values, sorted by key.
Labels DecodeLabels(Decoder& d, JsonValue v);

void DecodeObjectMeta(Decoder& d, JsonValue v, ObjectMeta* out);

// intstr.IntOrString.
struct IntOrString {
  bool is_string = false;
  int64_t int_value = 0;
  std::string str_value;

  // Resolves a percentage ("10%") against `total`, rounding up when
  // `round_up`; plain ints are returned as-is. Error text for bad strings.
  absl::StatusOr<int64_t> Scaled(int64_t total, bool round_up) const;
};
IntOrString DecodeIntOrString(Decoder& d, JsonValue v);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_META_H_
