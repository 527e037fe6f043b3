// Generic value operations: equality, ordering, container access, printing.
#include "src/cel/value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "src/cel/dra_env.h"
#include "src/cel/semver.h"

namespace gantry::cel {

std::string_view TypeTagName(TypeTag t) {
  switch (t) {
    case TypeTag::kNull: return "null_type";
    case TypeTag::kBool: return "bool";
    case TypeTag::kInt: return "int";
    case TypeTag::kUint: return "uint";
    case TypeTag::kDouble: return "double";
    case TypeTag::kString: return "string";
    case TypeTag::kBytes: return "bytes";
    case TypeTag::kList: return "list";
    case TypeTag::kMap: return "map";
    case TypeTag::kType: return "type";
    case TypeTag::kOptional: return "optional_type";
    case TypeTag::kQuantity: return "kubernetes.Quantity";
    case TypeTag::kSemver: return "kubernetes.Semver";
    case TypeTag::kDevice: return "kubernetes.DRADevice";
    case TypeTag::kDyn: return "dyn";
    case TypeTag::kError: return "error";
  }
  return "unknown";
}

Value Value::List(std::vector<Value> elems) {
  Value v(Kind::kList);
  v.rep_ = Rep::kVec;
  v.owner_ = std::make_shared<const std::vector<Value>>(std::move(elems));
  return v;
}

Value Value::Map(std::shared_ptr<const MapData> data) {
  Value v(Kind::kMap);
  v.rep_ = Rep::kMapData;
  v.owner_ = std::move(data);
  return v;
}

Value Value::OptionalOf(Value inner) {
  Value v(Kind::kOptional);
  v.owner_ = std::make_shared<const Value>(std::move(inner));
  return v;
}

Value Value::Error(std::string message) {
  Value v(Kind::kError);
  v.owner_ = std::make_shared<const std::string>(std::move(message));
  return v;
}

Value NoSuchOverload(std::string_view fn) {
  return Value::Error(StrCat("no such overload: ", fn));
}

Value NoSuchKey(const Value& key) {
  std::string k = key.kind() == Kind::kString ? std::string(key.str()) : DebugString(key);
  return Value::Error(StrCat("no such key: ", k));
}

TypeTag TypeOf(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull: return TypeTag::kNull;
    case Kind::kBool: return TypeTag::kBool;
    case Kind::kInt: return TypeTag::kInt;
    case Kind::kUint: return TypeTag::kUint;
    case Kind::kDouble: return TypeTag::kDouble;
    case Kind::kString: return TypeTag::kString;
    case Kind::kBytes: return TypeTag::kBytes;
    case Kind::kList: return TypeTag::kList;
    case Kind::kMap: return TypeTag::kMap;
    case Kind::kType: return TypeTag::kType;
    case Kind::kOptional: return TypeTag::kOptional;
    case Kind::kQuantity: return TypeTag::kQuantity;
    case Kind::kSemver: return TypeTag::kSemver;
    case Kind::kObject: return TypeTag::kDevice;
    case Kind::kError: return TypeTag::kError;
  }
  return TypeTag::kError;
}

std::string_view TypeName(const Value& v) { return TypeTagName(TypeOf(v)); }

// ---------------------------------------------------------------- DRA views

namespace {

// Splits a qualified name; names without '/' belong to `driver`.
void SplitName(std::string_view name, std::string_view driver, std::string_view* domain,
               std::string_view* id) {
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) {
    *domain = driver;
    *id = name;
  } else {
    *domain = name.substr(0, slash);
    *id = name.substr(slash + 1);
  }
}

Value AttrToValue(const DeviceAttribute& attr) {
  using T = AttributeValue::Type;
  const AttributeValue& a = attr.value;
  switch (a.type) {
    case T::kInt: return Value::Int(a.int_value);
    case T::kBool: return Value::Bool(a.bool_value);
    case T::kString: return Value::StringView(a.string_value);
    case T::kVersion: {
      std::string err;
      if (!ParseSemver(a.string_value, nullptr, &err)) {
        return Value::Error(StrCat("attribute ", attr.name, ": parse semantic version: ", err));
      }
      return Value::SemverView(a.string_value);
    }
    case T::kInts: return Value::ListView(Rep::kDraInts, a.ints.data(), a.ints.size());
    case T::kBools: return Value::ListView(Rep::kDraBools, a.bools.data(), a.bools.size());
    case T::kStrings: return Value::ListView(Rep::kDraStrings, a.strings.data(), a.strings.size());
    case T::kVersions: return Value::ListView(Rep::kDraVersions, a.strings.data(), a.strings.size());
  }
  return Value();
}

template <typename Fn>
void ForEachName(const Value& m, Fn&& fn) {
  const DeviceInput* d = m.device();
  bool capacity = m.rep() == Rep::kDraCapDomain || (m.rep() == Rep::kDraDomains && m.ref_n() == 1);
  if (capacity) {
    for (size_t i = 0; i < d->capacity.size(); ++i) {
      if (!fn(d->capacity[i].name, i)) return;
    }
  } else {
    for (size_t i = 0; i < d->attributes.size(); ++i) {
      if (!fn(d->attributes[i].name, i)) return;
    }
  }
}

// Finds the entry index of `id` within a domain view; -1 if absent.
long DomainFind(const Value& m, std::string_view id) {
  std::string_view want = m.ref_str();
  std::string_view driver = m.device()->driver;
  long found = -1;
  ForEachName(m, [&](std::string_view name, size_t i) {
    std::string_view dom, key;
    SplitName(name, driver, &dom, &key);
    if (dom == want && key == id) {
      found = static_cast<long>(i);
      return false;
    }
    return true;
  });
  return found;
}

Value DomainEntryValue(const Value& m, size_t i) {
  const DeviceInput* d = m.device();
  if (m.rep() == Rep::kDraCapDomain) return Value::Quantity(d->capacity[i].value);
  return AttrToValue(d->attributes[i]);
}

// Entry index of the n-th key in a domain view, or of the n-th distinct domain.
long NthEntry(const Value& m, size_t n, std::string_view* key_out) {
  std::string_view driver = m.device()->driver;
  long found = -1;
  size_t count = 0;
  if (m.rep() == Rep::kDraDomains) {
    ForEachName(m, [&](std::string_view name, size_t i) {
      std::string_view dom, key;
      SplitName(name, driver, &dom, &key);
      // First occurrence of this domain?
      bool first = true;
      ForEachName(m, [&](std::string_view prev, size_t j) {
        if (j >= i) return false;
        std::string_view pd, pk;
        SplitName(prev, driver, &pd, &pk);
        if (pd == dom) {
          first = false;
          return false;
        }
        return true;
      });
      if (!first) return true;
      if (count++ == n) {
        found = static_cast<long>(i);
        *key_out = dom;
        return false;
      }
      return true;
    });
    return found;
  }
  std::string_view want = m.ref_str();
  ForEachName(m, [&](std::string_view name, size_t i) {
    std::string_view dom, key;
    SplitName(name, driver, &dom, &key);
    if (dom != want) return true;
    if (count++ == n) {
      found = static_cast<long>(i);
      *key_out = key;
      return false;
    }
    return true;
  });
  return found;
}

bool IsNumber(const Value& v) {
  return v.kind() == Kind::kInt || v.kind() == Kind::kUint || v.kind() == Kind::kDouble;
}

// Compares two numbers of any numeric kinds. NaN -> unordered.
int CompareNumbers(const Value& a, const Value& b, bool* unordered) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  Kind ka = a.kind(), kb = b.kind();
  if (ka == Kind::kInt && kb == Kind::kInt) return cmp(a.int_value(), b.int_value());
  if (ka == Kind::kUint && kb == Kind::kUint) return cmp(a.uint_value(), b.uint_value());
  if (ka == Kind::kInt && kb == Kind::kUint) {
    if (a.int_value() < 0) return -1;
    return cmp(static_cast<uint64_t>(a.int_value()), b.uint_value());
  }
  if (ka == Kind::kUint && kb == Kind::kInt) {
    if (b.int_value() < 0) return 1;
    return cmp(a.uint_value(), static_cast<uint64_t>(b.int_value()));
  }
  // Like cel-go, integers are converted to double for mixed comparisons.
  auto as_d = [](const Value& v) -> double {
    switch (v.kind()) {
      case Kind::kInt: return static_cast<double>(v.int_value());
      case Kind::kUint: return static_cast<double>(v.uint_value());
      default: return v.double_value();
    }
  };
  double x = as_d(a), y = as_d(b);
  if (std::isnan(x) || std::isnan(y)) {
    *unordered = true;
    return 0;
  }
  return cmp(x, y);
}

void SemverOf(const Value& v, SemverParts* p) {
  if (!ParseSemver(v.str(), p)) *p = SemverParts{};
}

}  // namespace

// ---------------------------------------------------------------- containers

namespace {

inline bool NameMatches(std::string_view name, std::string_view driver, std::string_view domain,
                        std::string_view id) {
  if (name.size() == domain.size() + 1 + id.size() && name[domain.size()] == '/' &&
      name.compare(0, domain.size(), domain) == 0 && name.compare(domain.size() + 1, id.size(), id) == 0) {
    return true;
  }
  return name == id && domain == driver && name.find('/') == std::string_view::npos;
}

}  // namespace

Value LookupDra(const DeviceInput& d, bool capacity, std::string_view domain, std::string_view id) {
  if (capacity) {
    for (const DeviceCapacity& c : d.capacity) {
      if (NameMatches(c.name, d.driver, domain, id)) return Value::Quantity(c.value);
    }
    return Value();
  }
  for (const DeviceAttribute& a : d.attributes) {
    if (NameMatches(a.name, d.driver, domain, id)) return AttrToValue(a);
  }
  return Value();
}

size_t ListSize(const Value& list) {
  switch (list.rep()) {
    case Rep::kVec: return list.vec().size();
    case Rep::kDraInts: case Rep::kDraBools: case Rep::kDraStrings: case Rep::kDraVersions:
      return list.ref_n();
    default: return 0;
  }
}

Value ListGet(const Value& list, size_t i) {
  switch (list.rep()) {
    case Rep::kVec: return list.vec()[i];
    case Rep::kDraInts: return Value::Int(static_cast<const int64_t*>(list.ref_ptr())[i]);
    case Rep::kDraBools: return Value::Bool(static_cast<const bool*>(list.ref_ptr())[i]);
    case Rep::kDraStrings: return Value::StringView(static_cast<const std::string_view*>(list.ref_ptr())[i]);
    case Rep::kDraVersions: return Value::SemverView(static_cast<const std::string_view*>(list.ref_ptr())[i]);
    default: return Value();
  }
}

namespace {

// Canonical key encoding used by the map index; numbers of different
// kinds with the same value encode alike. Returns false for keys that can
// never be present (fractional doubles, invalid key types).
bool EncodeKey(const Value& k, std::string* out) {
  switch (k.kind()) {
    case Kind::kString: *out = StrCat("s", k.str()); return true;
    case Kind::kBool: *out = k.bool_value() ? "b1" : "b0"; return true;
    case Kind::kInt: *out = StrCat("n", k.int_value()); return true;
    case Kind::kUint: *out = StrCat("n", k.uint_value()); return true;
    case Kind::kDouble: {
      double d = k.double_value();
      if (d != std::trunc(d) || std::isinf(d) || std::isnan(d)) return false;
      if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        *out = StrCat("n", static_cast<int64_t>(d));
        return true;
      }
      if (d >= 0 && d < 18446744073709551616.0) {
        *out = StrCat("n", static_cast<uint64_t>(d));
        return true;
      }
      return false;
    }
    default: return false;
  }
}

bool KeyEqual(const Value& a, const Value& b) {
  if (a.kind() == Kind::kString && b.kind() == Kind::kString) return a.str() == b.str();
  if (a.kind() == Kind::kBool && b.kind() == Kind::kBool) return a.bool_value() == b.bool_value();
  if (IsNumber(a) && IsNumber(b)) {
    bool unordered = false;
    return CompareNumbers(a, b, &unordered) == 0 && !unordered;
  }
  return false;
}

}  // namespace

void MapData::BuildIndex() {
  sorted_index.clear();
  if (entries.size() <= 16) return;
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string k;
    if (EncodeKey(entries[i].first, &k)) sorted_index.emplace_back(std::move(k), i);
  }
  std::sort(sorted_index.begin(), sorted_index.end());
}

size_t MapSize(const Value& map) {
  switch (map.rep()) {
    case Rep::kMapData: return map.map_data().entries.size();
    case Rep::kDraDomains: case Rep::kDraAttrDomain: case Rep::kDraCapDomain: {
      size_t n = 0;
      std::string_view k;
      while (NthEntry(map, n, &k) >= 0) ++n;
      return n;
    }
    default: return 0;
  }
}

std::optional<Value> MapFind(const Value& map, const Value& key) {
  switch (map.rep()) {
    case Rep::kMapData: {
      const MapData& d = map.map_data();
      if (!d.sorted_index.empty()) {
        std::string k;
        if (!EncodeKey(key, &k)) return std::nullopt;
        auto it = std::lower_bound(d.sorted_index.begin(), d.sorted_index.end(),
                                   std::make_pair(k, size_t{0}));
        if (it != d.sorted_index.end() && it->first == k) return d.entries[it->second].second;
        return std::nullopt;
      }
      for (const auto& e : d.entries) {
        if (KeyEqual(e.first, key)) return e.second;
      }
      return std::nullopt;
    }
    case Rep::kDraDomains: {
      if (key.kind() != Kind::kString) return std::nullopt;
      // Unknown domains give an empty map (Kubernetes' mapper default).
      Kind k = Kind::kMap;
      Rep r = map.ref_n() == 1 ? Rep::kDraCapDomain : Rep::kDraAttrDomain;
      Value v = Value::DraView(k, r, map.device(), key.str());
      v.ShareOwner(key);
      return v;
    }
    case Rep::kDraAttrDomain:
    case Rep::kDraCapDomain: {
      if (key.kind() != Kind::kString) return std::nullopt;
      long i = DomainFind(map, key.str());
      if (i < 0) return std::nullopt;
      return DomainEntryValue(map, static_cast<size_t>(i));
    }
    default: return std::nullopt;
  }
}

bool MapContains(const Value& map, const Value& key) {
  if (map.rep() == Rep::kDraDomains) {
    if (key.kind() != Kind::kString) return false;
    std::string_view driver = map.device()->driver;
    bool found = false;
    ForEachName(map, [&](std::string_view name, size_t) {
      std::string_view dom, id;
      SplitName(name, driver, &dom, &id);
      if (dom == key.str()) {
        found = true;
        return false;
      }
      return true;
    });
    return found;
  }
  return MapFind(map, key).has_value();
}

Value MapKeyAt(const Value& map, size_t i) {
  if (map.rep() == Rep::kMapData) return map.map_data().entries[i].first;
  std::string_view k;
  NthEntry(map, i, &k);
  return Value::StringView(k);
}

Value MapValueAt(const Value& map, size_t i) {
  if (map.rep() == Rep::kMapData) return map.map_data().entries[i].second;
  std::string_view k;
  long e = NthEntry(map, i, &k);
  if (map.rep() == Rep::kDraDomains) {
    Value v = Value::DraView(Kind::kMap, map.ref_n() == 1 ? Rep::kDraCapDomain : Rep::kDraAttrDomain,
                             map.device(), k);
    return v;
  }
  return DomainEntryValue(map, static_cast<size_t>(e));
}

// ---------------------------------------------------------------- equality

bool Equal(const Value& a, const Value& b) {
  if (IsNumber(a) && IsNumber(b)) {
    bool unordered = false;
    int c = CompareNumbers(a, b, &unordered);
    return !unordered && c == 0;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kNull: return true;
    case Kind::kBool: return a.bool_value() == b.bool_value();
    case Kind::kString:
    case Kind::kBytes: return a.str() == b.str();
    case Kind::kType: return a.type_tag() == b.type_tag();
    case Kind::kQuantity: return a.quantity().Compare(b.quantity()) == 0;
    case Kind::kSemver: {
      SemverParts pa, pb;
      SemverOf(a, &pa);
      SemverOf(b, &pb);
      return CompareSemver(pa, pb) == 0;
    }
    case Kind::kOptional:
      if (a.has_value() != b.has_value()) return false;
      return !a.has_value() || Equal(a.optional_value(), b.optional_value());
    case Kind::kObject: return a.device() == b.device();
    case Kind::kList: {
      size_t n = ListSize(a);
      if (n != ListSize(b)) return false;
      for (size_t i = 0; i < n; ++i) {
        if (!Equal(ListGet(a, i), ListGet(b, i))) return false;
      }
      return true;
    }
    case Kind::kMap: {
      size_t n = MapSize(a);
      if (n != MapSize(b)) return false;
      for (size_t i = 0; i < n; ++i) {
        Value k = MapKeyAt(a, i);
        std::optional<Value> other = MapFind(b, k);
        if (!other || other->is_error()) return false;
        if (!Equal(MapValueAt(a, i), *other)) return false;
      }
      return true;
    }
    default: return false;
  }
}

std::optional<int> Compare(const Value& a, const Value& b, bool* unordered) {
  *unordered = false;
  if (IsNumber(a) && IsNumber(b)) return CompareNumbers(a, b, unordered);
  if (a.kind() != b.kind()) return std::nullopt;
  switch (a.kind()) {
    case Kind::kBool: return static_cast<int>(a.bool_value()) - static_cast<int>(b.bool_value());
    case Kind::kString:
    case Kind::kBytes: {
      int c = a.str().compare(b.str());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default: return std::nullopt;
  }
}

// ---------------------------------------------------------------- printing

namespace {

std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Shortest representation that round-trips.
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

}  // namespace

std::string DebugString(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull: return "null";
    case Kind::kBool: return v.bool_value() ? "true" : "false";
    case Kind::kInt: return StrCat(v.int_value());
    case Kind::kUint: return StrCat(v.uint_value(), "u");
    case Kind::kDouble: return FormatDouble(v.double_value());
    case Kind::kString: return StrCat("\"", absl::CEscape(AsAbsl(v.str())), "\"");
    case Kind::kBytes: return StrCat("b\"", absl::CEscape(AsAbsl(v.str())), "\"");
    case Kind::kType: return std::string(TypeTagName(v.type_tag()));
    case Kind::kQuantity: return StrCat("quantity(\"", v.quantity().ToString(), "\")");
    case Kind::kSemver: return StrCat("semver(\"", v.str(), "\")");
    case Kind::kObject: return "device";
    case Kind::kError: return StrCat("error(", v.error_message(), ")");
    case Kind::kOptional:
      return v.has_value() ? StrCat("optional.of(", DebugString(v.optional_value()), ")")
                           : "optional.none()";
    case Kind::kList: {
      std::string out = "[";
      size_t n = ListSize(v);
      for (size_t i = 0; i < n; ++i) {
        if (i) out += ", ";
        out += DebugString(ListGet(v, i));
      }
      return out + "]";
    }
    case Kind::kMap: {
      std::string out = "{";
      size_t n = MapSize(v);
      for (size_t i = 0; i < n; ++i) {
        if (i) out += ", ";
        out += DebugString(MapKeyAt(v, i)) + ": " + DebugString(MapValueAt(v, i));
      }
      return out + "}";
    }
  }
  return "?";
}

}  // namespace gantry::cel
