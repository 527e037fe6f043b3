// Decoding infrastructure shared by every Kubernetes object decoder.
//
// Objects arrive as JSON (API server, snapshot files) or YAML (converted to
// JSON text first, see yaml.h) and are parsed into a simdjson DOM. Decoders
// walk the DOM once, field by field, and build compact immutable structs.
// Decoding is tolerant where Kubernetes is (unknown fields are ignored) and
// strict where it matters: a wrong type or an invalid value is an error that
// names the field path, e.g. `spec.containers[0].resources.requests.cpu`.
//
// A `Decoder` collects the first error; decoders keep going after an error
// (their results are discarded), which keeps the field code free of early
// returns. `Decoder::Finish()` turns the error into an absl::Status of the
// form `Pod default/web-0: spec.priority: expected an integer, got string`.
#ifndef GANTRY_SRC_API_DECODE_H_
#define GANTRY_SRC_API_DECODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "simdjson.h"
#include "src/api/intern.h"
#include "src/api/quantity.h"

namespace gantry::api {

using JsonValue = simdjson::dom::element;
using JsonObject = simdjson::dom::object;
using JsonArray = simdjson::dom::array;

// Bounds on what one object may hold, for the lists, maps and strings that
// have no tighter bound of their own (see docs/snapshots.md for the table).
// Checked before a list or map is read, so oversized input costs nothing.
inline constexpr size_t kMaxListItems = 10'000;
inline constexpr size_t kMaxMapEntries = 10'000;
inline constexpr size_t kMaxStringBytes = size_t{1} << 20;

// One step of a field path: an object key or an array index.
using PathSegment = std::variant<std::string, size_t>;

// Renders `a.b[2].c`; keys that are not identifiers are quoted: `labels["x/y"]`.
std::string FormatFieldPath(const std::vector<PathSegment>& path);

// The error of a failed decode, with enough context to point at the source.
struct DecodeError {
  std::string kind;
  std::string object;  // "namespace/name", "name" or "" when unknown
  std::vector<PathSegment> path;
  std::string message;

  std::string ToString() const;
};

class Decoder {
 public:
  // `kind` names the object type in error messages ("Pod", "ResourceSlice").
  explicit Decoder(std::string_view kind) : kind_(kind) {}

  bool ok() const { return !error_.has_value(); }

  // Records an error at the current path (only the first error is kept).
  void Fail(std::string message);
  void FailAt(std::string_view field, std::string message);

  // RAII scope that appends one path segment while it lives.
  class Field {
   public:
    Field(Decoder& d, std::string_view key) : d_(d) { d_.path_.emplace_back(std::string(key)); }
    Field(Decoder& d, size_t index) : d_(d) { d_.path_.emplace_back(index); }
    ~Field() { d_.path_.pop_back(); }
    Field(const Field&) = delete;
    Field& operator=(const Field&) = delete;

   private:
    Decoder& d_;
  };

  // Calls `f(key, value)` for each member of an object, with the key on the
  // path. A JSON null is treated as an empty object (as Kubernetes does).
  // More than `max_entries` members is an error ("Too many").
  template <typename F>
  void ForEachField(JsonValue v, size_t max_entries, F&& f) {
    if (v.is_null()) return;
    JsonObject obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS) {
      Fail(TypeMismatch("an object", v));
      return;
    }
    if (!CheckCount(obj.size(), max_entries)) return;
    for (auto [key, value] : obj) {
      if (!ok()) return;
      Field scope(*this, key);
      f(key, value);
    }
  }
  template <typename F>
  void ForEachField(JsonValue v, F&& f) {
    ForEachField(v, kMaxMapEntries, std::forward<F>(f));
  }

  // Calls `f(index, value)` for each element of an array (null = empty).
  // More than `max_items` elements is an error ("Too many").
  template <typename F>
  void ForEachItem(JsonValue v, size_t max_items, F&& f) {
    if (v.is_null()) return;
    JsonArray arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS) {
      Fail(TypeMismatch("an array", v));
      return;
    }
    if (!CheckCount(arr.size(), max_items)) return;
    size_t i = 0;
    for (JsonValue item : arr) {
      if (!ok()) return;
      Field scope(*this, i);
      f(i, item);
      ++i;
    }
  }
  template <typename F>
  void ForEachItem(JsonValue v, F&& f) {
    ForEachItem(v, kMaxListItems, std::forward<F>(f));
  }

  // Fails with upstream's "Too many: N: must have at most M items" when
  // `n > max`; returns whether `n` is within the bound.
  bool CheckCount(size_t n, size_t max);

  // Scalars. A JSON null yields the zero value (Kubernetes' omitempty).
  // Strings longer than `max_bytes` (kMaxStringBytes unless given) are an
  // error ("Too long").
  std::string_view String(JsonValue v, size_t max_bytes = kMaxStringBytes);
  Symbol Sym(JsonValue v) { return Symbol::Intern(String(v)); }
  int64_t Int(JsonValue v);
  // An int that must lie in [lo, hi].
  int64_t IntInRange(JsonValue v, int64_t lo, int64_t hi);
  double Double(JsonValue v);
  bool Bool(JsonValue v);
  Quantity Qty(JsonValue v);
  // RFC 3339 timestamp as microseconds since the Unix epoch (0 for null).
  int64_t TimeMicros(JsonValue v);
  // string → string map (labels, annotations, nodeSelector), sorted by key.
  std::vector<std::pair<Symbol, Symbol>> SymbolMap(JsonValue v);
  std::vector<Symbol> SymbolList(JsonValue v);
  std::vector<std::string> StringList(JsonValue v);

  // Builds the final status; `root` is the object's top-level JSON, used to
  // name it (metadata.namespace/name) in the message.
  absl::Status Finish(JsonValue root) const;
  const std::optional<DecodeError>& error() const { return error_; }
  // Like Finish but keeps the structured error (for file positions).
  std::optional<DecodeError> TakeError(JsonValue root);

  std::string TypeMismatch(std::string_view want, JsonValue got) const;

 private:
  std::string kind_;
  std::vector<PathSegment> path_;
  std::optional<DecodeError> error_;
};

// "namespace/name" or "name" from an object's metadata (empty if absent).
std::string ObjectIdentity(JsonValue root);

// JSON type name as Kubernetes reports it ("string", "number", "object", ...).
std::string_view JsonTypeName(JsonValue v);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_DECODE_H_
