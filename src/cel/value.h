// Runtime values of the CEL evaluator.
//
// A Value is a small tagged union (48 bytes). Scalars, strings, bytes and
// quantities live inline; strings can either borrow their bytes (from the
// compiled program's constants or from the evaluated input, which must
// outlive the value) or own them through `owner_`. Lists and maps have
// several representations (owned vectors, or zero-copy views over a
// DeviceInput for the DRA environment), selected by `rep()`. Copying a
// borrowed Value never allocates; this keeps typical selector evaluation
// allocation-free.
//
// Errors are values too (kind kError) so that `&&`, `||` and the macros can
// absorb them as CEL requires.
#ifndef GANTRY_SRC_CEL_VALUE_H_
#define GANTRY_SRC_CEL_VALUE_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/api/quantity.h"

namespace gantry::cel {

struct DeviceInput;

enum class Kind : uint8_t {
  kNull, kBool, kInt, kUint, kDouble, kString, kBytes,
  kList, kMap, kType, kOptional, kQuantity, kSemver, kObject, kError,
};

// Runtime type tags used by type() and type values.
enum class TypeTag : uint8_t {
  kNull, kBool, kInt, kUint, kDouble, kString, kBytes, kList, kMap, kType,
  kOptional, kQuantity, kSemver, kDevice, kDyn, kError,
};
std::string_view TypeTagName(TypeTag t);

// Representations of lists and maps.
enum class Rep : uint8_t {
  kNone,
  kVec,           // list: std::vector<Value>
  kDraInts,       // list views over DeviceInput list attributes
  kDraBools,
  kDraStrings,
  kDraVersions,
  kMapData,       // map: MapData
  kDraDomains,    // device.attributes / device.capacity (n: 0 attrs, 1 capacity)
  kDraAttrDomain, // device.attributes[d]: p = DeviceInput, str = domain
  kDraCapDomain,  // device.capacity[d]
  kDevice,        // kObject: the `device` variable
};

class Value;
struct MapData;

class Value {
 public:
  Value() : kind_(Kind::kNull) { u_.ref = {}; }

  static Value Null() { return Value(); }
  static Value Bool(bool b) { Value v(Kind::kBool); v.u_.b = b; return v; }
  static Value Int(int64_t i) { Value v(Kind::kInt); v.u_.i = i; return v; }
  static Value Uint(uint64_t u) { Value v(Kind::kUint); v.u_.u = u; return v; }
  static Value Double(double d) { Value v(Kind::kDouble); v.u_.d = d; return v; }
  // Borrowed string: `s` must outlive the value (and its copies).
  static Value StringView(std::string_view s) { return Text(Kind::kString, s); }
  static Value BytesView(std::string_view s) { return Text(Kind::kBytes, s); }
  static Value String(std::string s) { return OwnedText(Kind::kString, std::move(s)); }
  static Value Bytes(std::string s) { return OwnedText(Kind::kBytes, std::move(s)); }
  static Value SemverView(std::string_view s) { return Text(Kind::kSemver, s); }
  static Value Semver(std::string s) { return OwnedText(Kind::kSemver, std::move(s)); }
  static Value Quantity(const api::Quantity& q) {
    Value v(Kind::kQuantity);
    std::memcpy(v.u_.qbytes, &q, sizeof(q));
    return v;
  }
  static Value Type(TypeTag t) { Value v(Kind::kType); v.u_.i = static_cast<int64_t>(t); return v; }
  static Value List(std::vector<Value> elems);
  static Value Map(std::shared_ptr<const MapData> data);
  static Value ListView(Rep rep, const void* data, size_t n) {
    Value v(Kind::kList);
    v.rep_ = rep;
    v.u_.ref = {data, nullptr, n};
    return v;
  }
  static Value DraView(Kind k, Rep rep, const DeviceInput* d, std::string_view s, size_t n = 0) {
    Value v(k);
    v.rep_ = rep;
    v.u_.ref = {d, s.data(), s.empty() ? n : s.size()};
    return v;
  }
  static Value OptionalNone() { Value v(Kind::kOptional); return v; }
  static Value OptionalOf(Value inner);
  static Value Error(std::string message);

  Kind kind() const { return kind_; }
  Rep rep() const { return rep_; }
  bool is_error() const { return kind_ == Kind::kError; }
  bool bool_value() const { return u_.b; }
  int64_t int_value() const { return u_.i; }
  uint64_t uint_value() const { return u_.u; }
  double double_value() const { return u_.d; }
  std::string_view str() const { return {u_.str.data, u_.str.size}; }
  api::Quantity quantity() const {
    api::Quantity q;
    std::memcpy(&q, u_.qbytes, sizeof(q));
    return q;
  }
  TypeTag type_tag() const { return static_cast<TypeTag>(u_.i); }
  const std::string& error_message() const { return *static_cast<const std::string*>(owner_.get()); }
  bool has_value() const { return owner_ != nullptr; }  // optional: some
  const Value& optional_value() const { return *static_cast<const Value*>(owner_.get()); }
  const std::vector<Value>& vec() const { return *static_cast<const std::vector<Value>*>(owner_.get()); }
  const MapData& map_data() const { return *static_cast<const MapData*>(owner_.get()); }
  const void* ref_ptr() const { return u_.ref.p; }
  const void* ref_ptr2() const { return u_.ref.p2; }
  size_t ref_n() const { return u_.ref.n; }
  const DeviceInput* device() const { return static_cast<const DeviceInput*>(u_.ref.p); }
  std::string_view ref_str() const { return {static_cast<const char*>(u_.ref.p2), u_.ref.n}; }

  // Lets a view value keep another value's storage alive (e.g. a domain
  // map that borrows the key string of a computed index).
  void ShareOwner(const Value& other) {
    if (kind_ != Kind::kList && kind_ != Kind::kMap) owner_ = other.owner_;
    else if (!owner_) owner_ = other.owner_;
  }

 private:
  explicit Value(Kind k) : kind_(k) { u_.ref = {}; }
  static Value Text(Kind k, std::string_view s) {
    Value v(k);
    v.u_.str = {s.data(), s.size()};
    return v;
  }
  static Value OwnedText(Kind k, std::string s) {
    auto p = std::make_shared<const std::string>(std::move(s));
    Value v(k);
    v.u_.str = {p->data(), p->size()};
    v.owner_ = std::move(p);
    return v;
  }

  Kind kind_;
  Rep rep_ = Rep::kNone;
  union {
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    struct {
      const char* data;
      size_t size;
    } str;
    alignas(api::Quantity) unsigned char qbytes[sizeof(api::Quantity)];
    struct {
      const void* p;
      const void* p2;
      size_t n;
    } ref;
  } u_;
  std::shared_ptr<const void> owner_;
};

// Entries of an owned map, in insertion order. Lookups are linear for small
// maps and use `index` (built once) for larger ones.
struct MapData {
  std::vector<std::pair<Value, Value>> entries;
  std::vector<std::pair<std::string, size_t>> sorted_index;  // empty when small
  void BuildIndex();
};

// ---- generic operations (value.cc) ----

// Name of the value's runtime type, as CEL prints it ("int", "list", "map",
// "kubernetes.Quantity", ...).
std::string_view TypeName(const Value& v);
TypeTag TypeOf(const Value& v);

// CEL equality. Numbers compare across int/uint/double; lists and maps
// compare structurally; values of different types are unequal. Returns an
// error value only for comparisons that CEL defines as errors (none today).
bool Equal(const Value& a, const Value& b);

// Ordering for <, <=, >, >=: -1/0/1, or nullopt when the types are not
// ordered against each other (a "no such overload" error). NaN compares as
// unordered: `*unordered` is set and the comparison result is false.
std::optional<int> Compare(const Value& a, const Value& b, bool* unordered);

size_t ListSize(const Value& list);
Value ListGet(const Value& list, size_t i);

size_t MapSize(const Value& map);
// Finds `key`; nullopt when absent, an error Value for invalid key types.
std::optional<Value> MapFind(const Value& map, const Value& key);
// True when `key` is present (DRA domains: the domain has entries).
bool MapContains(const Value& map, const Value& key);
// The i-th key in iteration order.
Value MapKeyAt(const Value& map, size_t i);
Value MapValueAt(const Value& map, size_t i);

// Direct DRA lookups (device.attributes[domain][id], device.capacity[...]).
// Return false when absent; an invalid version attribute yields an error value.
// Returns a null Value when absent (attribute values are never null).
Value LookupDra(const DeviceInput& d, bool capacity, std::string_view domain, std::string_view id);

// Human-readable rendering used in tests and by string()/format.
std::string DebugString(const Value& v);

// Error helpers with cel-go wording.
Value NoSuchOverload(std::string_view fn);
Value NoSuchKey(const Value& key);

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_VALUE_H_
