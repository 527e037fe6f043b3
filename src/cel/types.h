// Static types used by the CEL type checker, and a tiny parser for the
// signature strings with which library functions declare their overloads
// ("string.(string, int) -> bool", "(list(A)) -> int", "map(K, V)").
#ifndef GANTRY_SRC_CEL_TYPES_H_
#define GANTRY_SRC_CEL_TYPES_H_

#include <string>
#include <string_view>
#include <vector>

namespace gantry::cel {

enum class TypeKind : uint8_t {
  kDyn, kNull, kBool, kInt, kUint, kDouble, kString, kBytes,
  kList,      // params[0] = element
  kMap,       // params[0] = key, params[1] = value
  kType,      // params[0] = the type it denotes (dyn when unknown)
  kOptional,  // params[0]
  kOpaque,    // name: kubernetes.Quantity, kubernetes.Semver
  kObject,    // name: kubernetes.DRADevice
  kParam,     // name: type parameter in overload signatures
  kError,     // a type error was already reported for this expression
};

struct Type {
  TypeKind kind = TypeKind::kDyn;
  std::string name;
  std::vector<Type> params;

  static Type Dyn() { return {}; }
  static Type Of(TypeKind k) { return Type{k, {}, {}}; }
  static Type List(Type e) { return Type{TypeKind::kList, {}, {std::move(e)}}; }
  static Type Map(Type k, Type v) { return Type{TypeKind::kMap, {}, {std::move(k), std::move(v)}}; }
  static Type TypeOf(Type t) { return Type{TypeKind::kType, {}, {std::move(t)}}; }
  static Type Optional(Type t) { return Type{TypeKind::kOptional, {}, {std::move(t)}}; }
  static Type Opaque(std::string n) { return Type{TypeKind::kOpaque, std::move(n), {}}; }
  static Type Object(std::string n) { return Type{TypeKind::kObject, std::move(n), {}}; }
  static Type Param(std::string n) { return Type{TypeKind::kParam, std::move(n), {}}; }
  static Type Error() { return Of(TypeKind::kError); }

  bool is_dyn() const { return kind == TypeKind::kDyn; }
};

bool operator==(const Type& a, const Type& b);
inline bool operator!=(const Type& a, const Type& b) { return !(a == b); }

// cel-go's spelling: "int", "list(int)", "map(string, dyn)", "optional_type(int)",
// "type(int)", "null_type", "kubernetes.Quantity".
std::string FormatType(const Type& t);

// Parses "int", "list(A)", "map(string, V)", "Quantity", "Semver", ...
// (single upper-case letters are type parameters). Aborts on a malformed
// built-in declaration (programming error, never user input).
Type ParseTypeSpec(std::string_view spec);

struct Signature {
  bool member = false;       // receiver-style: args[0] is the receiver
  std::vector<Type> args;
  Type result;
};

// Parses "string.(string, int) -> bool" (member) or "(int) -> string" (global).
Signature ParseSignature(std::string_view spec);

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_TYPES_H_
