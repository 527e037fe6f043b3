// The CEL standard library: operators, size, string predicates,
// conversions, type(), dyn(), optionals. Also the registry itself.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "absl/strings/match.h"
#include "src/cel/functions.h"
#include "src/cel/unicode.h"

namespace gantry::cel {

// ------------------------------------------------------------------ registry

void FunctionRegistry::Add(std::string_view name, std::string_view signature, Fn fn) {
  auto& def = defs_[std::string(name)];
  if (!def) {
    def = std::make_unique<FunctionDef>();
    def->name = std::string(name);
  }
  def->overloads.push_back(ParseSignature(signature));
  if (fn != nullptr) def->fn = fn;
}

const FunctionDef* FunctionRegistry::Find(std::string_view name) const {
  auto it = defs_.find(AsAbsl(name));
  return it == defs_.end() ? nullptr : it->second.get();
}

const FunctionRegistry& Functions() {
  static const FunctionRegistry* registry = [] {
    auto* r = new FunctionRegistry();
    RegisterStandardLibrary(*r);
    RegisterStringsLibrary(*r);
    RegisterListsLibrary(*r);
    RegisterRegexLibrary(*r);
    RegisterKubernetesLibrary(*r);
    return r;
  }();
  return *registry;
}

namespace {

constexpr double kTwo63 = 9223372036854775808.0;
constexpr double kTwo64 = 18446744073709551616.0;

Value Overflow() { return Value::Error("return error for overflow"); }

// ---------------------------------------------------------------- operators

Value FnEq(EvalContext&, const Value* a, size_t n) {
  if (n != 2) return NoSuchOverload("_==_");
  return Value::Bool(Equal(a[0], a[1]));
}
Value FnNe(EvalContext&, const Value* a, size_t n) {
  if (n != 2) return NoSuchOverload("_!=_");
  return Value::Bool(!Equal(a[0], a[1]));
}

template <int kOp>  // 0 <, 1 <=, 2 >, 3 >=
Value FnRel(EvalContext&, const Value* a, size_t n) {
  static constexpr const char* kNames[] = {"_<_", "_<=_", "_>_", "_>=_"};
  if (n != 2) return NoSuchOverload(kNames[kOp]);
  bool unordered = false;
  std::optional<int> c = Compare(a[0], a[1], &unordered);
  if (!c) return NoSuchOverload(kNames[kOp]);
  if (unordered) return Value::Bool(false);
  switch (kOp) {
    case 0: return Value::Bool(*c < 0);
    case 1: return Value::Bool(*c <= 0);
    case 2: return Value::Bool(*c > 0);
    default: return Value::Bool(*c >= 0);
  }
}

Value FnAdd(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 2 || a[0].kind() != a[1].kind()) return NoSuchOverload("_+_");
  switch (a[0].kind()) {
    case Kind::kInt: {
      int64_t r;
      if (__builtin_add_overflow(a[0].int_value(), a[1].int_value(), &r)) return Overflow();
      return Value::Int(r);
    }
    case Kind::kUint: {
      uint64_t r;
      if (__builtin_add_overflow(a[0].uint_value(), a[1].uint_value(), &r)) return Overflow();
      return Value::Uint(r);
    }
    case Kind::kDouble: return Value::Double(a[0].double_value() + a[1].double_value());
    case Kind::kString:
    case Kind::kBytes: {
      // Charged before allocating so that doubling chains hit the cost limit.
      if (!ctx.Charge((a[0].str().size() + a[1].str().size()) / 10)) return CostLimitError();
      std::string s = StrCat(a[0].str(), a[1].str());
      return a[0].kind() == Kind::kString ? Value::String(std::move(s)) : Value::Bytes(std::move(s));
    }
    case Kind::kList: {
      size_t n0 = ListSize(a[0]), n1 = ListSize(a[1]);
      if (n1 == 0) return a[0];
      if (n0 == 0) return a[1];
      if (!ctx.Charge(n0 + n1)) return CostLimitError();
      std::vector<Value> out;
      out.reserve(n0 + n1);
      for (size_t i = 0; i < n0; ++i) out.push_back(ListGet(a[0], i));
      for (size_t i = 0; i < n1; ++i) out.push_back(ListGet(a[1], i));
      return Value::List(std::move(out));
    }
    default: return NoSuchOverload("_+_");
  }
}

Value FnSub(EvalContext&, const Value* a, size_t n) {
  if (n != 2 || a[0].kind() != a[1].kind()) return NoSuchOverload("_-_");
  switch (a[0].kind()) {
    case Kind::kInt: {
      int64_t r;
      if (__builtin_sub_overflow(a[0].int_value(), a[1].int_value(), &r)) return Overflow();
      return Value::Int(r);
    }
    case Kind::kUint: {
      uint64_t r;
      if (__builtin_sub_overflow(a[0].uint_value(), a[1].uint_value(), &r)) return Overflow();
      return Value::Uint(r);
    }
    case Kind::kDouble: return Value::Double(a[0].double_value() - a[1].double_value());
    default: return NoSuchOverload("_-_");
  }
}

Value FnMul(EvalContext&, const Value* a, size_t n) {
  if (n != 2 || a[0].kind() != a[1].kind()) return NoSuchOverload("_*_");
  switch (a[0].kind()) {
    case Kind::kInt: {
      int64_t r;
      if (__builtin_mul_overflow(a[0].int_value(), a[1].int_value(), &r)) return Overflow();
      return Value::Int(r);
    }
    case Kind::kUint: {
      uint64_t r;
      if (__builtin_mul_overflow(a[0].uint_value(), a[1].uint_value(), &r)) return Overflow();
      return Value::Uint(r);
    }
    case Kind::kDouble: return Value::Double(a[0].double_value() * a[1].double_value());
    default: return NoSuchOverload("_*_");
  }
}

Value FnDiv(EvalContext&, const Value* a, size_t n) {
  if (n != 2 || a[0].kind() != a[1].kind()) return NoSuchOverload("_/_");
  switch (a[0].kind()) {
    case Kind::kInt: {
      int64_t x = a[0].int_value(), y = a[1].int_value();
      if (y == 0) return Value::Error("divide by zero");
      if (x == INT64_MIN && y == -1) return Overflow();
      return Value::Int(x / y);
    }
    case Kind::kUint: {
      if (a[1].uint_value() == 0) return Value::Error("divide by zero");
      return Value::Uint(a[0].uint_value() / a[1].uint_value());
    }
    case Kind::kDouble: return Value::Double(a[0].double_value() / a[1].double_value());
    default: return NoSuchOverload("_/_");
  }
}

Value FnMod(EvalContext&, const Value* a, size_t n) {
  if (n != 2 || a[0].kind() != a[1].kind()) return NoSuchOverload("_%_");
  switch (a[0].kind()) {
    case Kind::kInt: {
      int64_t x = a[0].int_value(), y = a[1].int_value();
      if (y == 0) return Value::Error("modulus by zero");
      if (x == INT64_MIN && y == -1) return Overflow();
      return Value::Int(x % y);
    }
    case Kind::kUint: {
      if (a[1].uint_value() == 0) return Value::Error("modulus by zero");
      return Value::Uint(a[0].uint_value() % a[1].uint_value());
    }
    default: return NoSuchOverload("_%_");
  }
}

Value FnNeg(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("-_");
  if (a[0].kind() == Kind::kInt) {
    if (a[0].int_value() == INT64_MIN) return Overflow();
    return Value::Int(-a[0].int_value());
  }
  if (a[0].kind() == Kind::kDouble) return Value::Double(-a[0].double_value());
  return NoSuchOverload("-_");
}

Value FnNot(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kBool) return NoSuchOverload("!_");
  return Value::Bool(!a[0].bool_value());
}

Value FnIn(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 2) return NoSuchOverload("@in");
  if (a[1].kind() == Kind::kList) {
    size_t sz = ListSize(a[1]);
    ctx.cost += sz / 10;
    for (size_t i = 0; i < sz; ++i) {
      if (Equal(a[0], ListGet(a[1], i))) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  if (a[1].kind() == Kind::kMap) return Value::Bool(MapContains(a[1], a[0]));
  return NoSuchOverload("@in");
}

Value FnSize(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("size");
  switch (a[0].kind()) {
    case Kind::kString: return Value::Int(static_cast<int64_t>(CodePointCount(a[0].str())));
    case Kind::kBytes: return Value::Int(static_cast<int64_t>(a[0].str().size()));
    case Kind::kList: return Value::Int(static_cast<int64_t>(ListSize(a[0])));
    case Kind::kMap: return Value::Int(static_cast<int64_t>(MapSize(a[0])));
    default: return NoSuchOverload("size");
  }
}

template <int kOp>  // 0 contains, 1 startsWith, 2 endsWith
Value FnStrPred(EvalContext& ctx, const Value* a, size_t n) {
  static constexpr const char* kNames[] = {"contains", "startsWith", "endsWith"};
  if (n != 2 || a[0].kind() != Kind::kString || a[1].kind() != Kind::kString) {
    return NoSuchOverload(kNames[kOp]);
  }
  ctx.cost += a[0].str().size() / 10;
  switch (kOp) {
    case 0: return Value::Bool(absl::StrContains(AsAbsl(a[0].str()), AsAbsl(a[1].str())));
    case 1: return Value::Bool(absl::StartsWith(AsAbsl(a[0].str()), AsAbsl(a[1].str())));
    default: return Value::Bool(absl::EndsWith(AsAbsl(a[0].str()), AsAbsl(a[1].str())));
  }
}

Value FnMatches(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 2 || a[0].kind() != Kind::kString || a[1].kind() != Kind::kString) {
    return NoSuchOverload("matches");
  }
  ctx.cost += a[0].str().size() / 10 + a[1].str().size();
  std::string err;
  auto re = CompileRegex(a[1].str(), &err);
  if (re == nullptr) return Value::Error(StrCat("invalid regex pattern: ", err));
  return RegexMatches(*re, a[0].str());
}

// -------------------------------------------------------------- conversions

Value FnInt(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("int");
  switch (a[0].kind()) {
    case Kind::kInt: return a[0];
    case Kind::kUint:
      if (a[0].uint_value() > static_cast<uint64_t>(INT64_MAX)) return Value::Error("range error");
      return Value::Int(static_cast<int64_t>(a[0].uint_value()));
    case Kind::kDouble: {
      double d = a[0].double_value();
      if (!(d > -kTwo63 && d < kTwo63)) return Value::Error("range error");
      return Value::Int(static_cast<int64_t>(d));
    }
    case Kind::kString: {
      int64_t v;
      if (!absl::SimpleAtoi(AsAbsl(a[0].str()), &v) || a[0].str().empty() ||
          a[0].str().front() == '+' || a[0].str().front() == ' ' || a[0].str().back() == ' ') {
        return Value::Error(StrCat("cannot convert string '", a[0].str(), "' to int"));
      }
      return Value::Int(v);
    }
    default: return NoSuchOverload("int");
  }
}

Value FnUint(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("uint");
  switch (a[0].kind()) {
    case Kind::kUint: return a[0];
    case Kind::kInt:
      if (a[0].int_value() < 0) return Value::Error("range error");
      return Value::Uint(static_cast<uint64_t>(a[0].int_value()));
    case Kind::kDouble: {
      double d = a[0].double_value();
      if (!(d > -1 && d < kTwo64)) return Value::Error("range error");
      return Value::Uint(static_cast<uint64_t>(d));
    }
    case Kind::kString: {
      uint64_t v;
      std::string_view s = a[0].str();
      if (s.empty() || s.front() == '+' || s.front() == '-' || s.front() == ' ' || s.back() == ' ' ||
          !absl::SimpleAtoi(AsAbsl(s), &v)) {
        return Value::Error(StrCat("cannot convert string '", s, "' to uint"));
      }
      return Value::Uint(v);
    }
    default: return NoSuchOverload("uint");
  }
}

Value FnDouble(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("double");
  switch (a[0].kind()) {
    case Kind::kDouble: return a[0];
    case Kind::kInt: return Value::Double(static_cast<double>(a[0].int_value()));
    case Kind::kUint: return Value::Double(static_cast<double>(a[0].uint_value()));
    case Kind::kString: {
      std::string s(a[0].str());
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || std::isspace(static_cast<unsigned char>(s[0]))) {
        return Value::Error(StrCat("cannot convert string '", s, "' to double"));
      }
      return Value::Double(d);
    }
    default: return NoSuchOverload("double");
  }
}

Value FnBytes(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("bytes");
  if (a[0].kind() == Kind::kBytes) return a[0];
  if (a[0].kind() == Kind::kString) return Value::Bytes(std::string(a[0].str()));
  return NoSuchOverload("bytes");
}

Value FnBool(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("bool");
  if (a[0].kind() == Kind::kBool) return a[0];
  if (a[0].kind() == Kind::kString) {
    std::string_view s = a[0].str();
    if (s == "1" || s == "t" || s == "true" || s == "TRUE" || s == "True") return Value::Bool(true);
    if (s == "0" || s == "f" || s == "false" || s == "FALSE" || s == "False") return Value::Bool(false);
    return Value::Error(StrCat("type conversion error from 'string' to 'bool'"));
  }
  return NoSuchOverload("bool");
}

Value FnString(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("string");
  return StringValueOf(a[0]);
}

Value FnDyn(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("dyn");
  return a[0];
}

Value FnType(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("type");
  return Value::Type(TypeOf(a[0]));
}

// ---------------------------------------------------------------- optionals

bool IsZeroValue(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull: return true;
    case Kind::kBool: return !v.bool_value();
    case Kind::kInt: return v.int_value() == 0;
    case Kind::kUint: return v.uint_value() == 0;
    case Kind::kDouble: return v.double_value() == 0;
    case Kind::kString: case Kind::kBytes: return v.str().empty();
    case Kind::kList: return ListSize(v) == 0;
    case Kind::kMap: return MapSize(v) == 0;
    case Kind::kOptional: return !v.has_value();
    default: return false;
  }
}

Value FnOptOf(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("optional.of");
  return Value::OptionalOf(a[0]);
}
Value FnOptOfNonZero(EvalContext&, const Value* a, size_t n) {
  if (n != 1) return NoSuchOverload("optional.ofNonZeroValue");
  if (IsZeroValue(a[0])) return Value::OptionalNone();
  return Value::OptionalOf(a[0]);
}
Value FnOptNone(EvalContext&, const Value*, size_t n) {
  if (n != 0) return NoSuchOverload("optional.none");
  return Value::OptionalNone();
}
Value FnHasValue(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kOptional) return NoSuchOverload("hasValue");
  return Value::Bool(a[0].has_value());
}
Value FnValue(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kOptional) return NoSuchOverload("value");
  if (!a[0].has_value()) return Value::Error("optional.none() dereference");
  return a[0].optional_value();
}
Value FnOrValue(EvalContext&, const Value* a, size_t n) {
  if (n != 2 || a[0].kind() != Kind::kOptional) return NoSuchOverload("orValue");
  return a[0].has_value() ? a[0].optional_value() : a[1];
}
Value FnOr(EvalContext&, const Value* a, size_t n) {
  if (n != 2 || a[0].kind() != Kind::kOptional || a[1].kind() != Kind::kOptional) {
    return NoSuchOverload("or");
  }
  return a[0].has_value() ? a[0] : a[1];
}

Value FnTernary(EvalContext&, const Value* a, size_t n) {
  if (n != 3 || a[0].kind() != Kind::kBool) return NoSuchOverload("_?_:_");
  return a[0].bool_value() ? a[1] : a[2];
}

Value FnIndexFallback(EvalContext&, const Value*, size_t) { return NoSuchOverload("_[_]"); }

}  // namespace

// Go's strconv.FormatFloat(d, 'g', -1, 64), which cel-go uses for string(double).
std::string FormatDoubleGo(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  int prec = 1;
  for (; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  const char* e = std::strchr(buf, 'e');
  int exp = std::atoi(e + 1);
  if (exp < -4 || exp >= 6) {
    // Mantissa without trailing zeros; exponent with at least two digits.
    std::string mant(buf, static_cast<size_t>(e - buf));
    return StrCat(mant, "e", exp < 0 ? "-" : "+", std::abs(exp) < 10 ? "0" : "", std::abs(exp));
  }
  int decimals = std::max(prec - 1 - exp, 0);
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, d);
  return buf;
}

Value StringValueOf(const Value& v) {
  switch (v.kind()) {
    case Kind::kString: return v;
    case Kind::kInt: return Value::String(StrCat(v.int_value()));
    case Kind::kUint: return Value::String(StrCat(v.uint_value()));
    case Kind::kDouble: return Value::String(FormatDoubleGo(v.double_value()));
    case Kind::kBool: return Value::StringView(v.bool_value() ? "true" : "false");
    case Kind::kBytes:
      if (!IsValidUtf8(v.str())) return Value::Error("invalid UTF-8 in bytes, cannot convert to string");
      return Value::String(std::string(v.str()));
    case Kind::kNull: return Value::StringView("null");
    case Kind::kType: return Value::StringView(TypeTagName(v.type_tag()));
    case Kind::kQuantity: return Value::String(v.quantity().ToString());
    case Kind::kSemver: return Value::String(std::string(v.str()));
    default: return NoSuchOverload("string");
  }
}

void RegisterStandardLibrary(FunctionRegistry& r) {
  r.Add("_==_", "(A, A) -> bool", FnEq);
  r.Add("_!=_", "(A, A) -> bool", FnNe);
  const char* kRel[] = {"_<_", "_<=_", "_>_", "_>=_"};
  Fn rel_fns[] = {FnRel<0>, FnRel<1>, FnRel<2>, FnRel<3>};
  for (int i = 0; i < 4; ++i) {
    for (const char* t : {"bool", "int", "uint", "double", "string", "bytes"}) {
      r.Add(kRel[i], StrCat("(", t, ", ", t, ") -> bool"), rel_fns[i]);
    }
    for (const char* t : {"(int, uint)", "(int, double)", "(uint, int)", "(uint, double)",
                          "(double, int)", "(double, uint)"}) {
      r.Add(kRel[i], StrCat(t, " -> bool"), rel_fns[i]);
    }
  }
  for (const char* t : {"int", "uint", "double", "string", "bytes", "list(A)"}) {
    r.Add("_+_", StrCat("(", t, ", ", t, ") -> ", t), FnAdd);
  }
  for (const char* t : {"int", "uint", "double"}) {
    r.Add("_-_", StrCat("(", t, ", ", t, ") -> ", t), FnSub);
    r.Add("_*_", StrCat("(", t, ", ", t, ") -> ", t), FnMul);
    r.Add("_/_", StrCat("(", t, ", ", t, ") -> ", t), FnDiv);
  }
  r.Add("_%_", "(int, int) -> int", FnMod);
  r.Add("_%_", "(uint, uint) -> uint", FnMod);
  r.Add("-_", "(int) -> int", FnNeg);
  r.Add("-_", "(double) -> double", FnNeg);
  r.Add("!_", "(bool) -> bool", FnNot);
  r.Add("_?_:_", "(bool, A, A) -> A", FnTernary);
  r.Add("@in", "(A, list(A)) -> bool", FnIn);
  r.Add("@in", "(A, map(A, B)) -> bool", FnIn);
  r.Add("_[_]", "(list(A), int) -> A", FnIndexFallback);
  r.Add("_[_]", "(map(K, V), K) -> V", nullptr);
  r.Add("_[_]", "(optional(list(A)), int) -> optional(A)", nullptr);
  r.Add("_[_]", "(optional(map(K, V)), K) -> optional(V)", nullptr);
  r.Add("_[?_]", "(list(A), int) -> optional(A)", FnIndexFallback);
  r.Add("_[?_]", "(map(K, V), K) -> optional(V)", nullptr);
  r.Add("_[?_]", "(optional(list(A)), int) -> optional(A)", nullptr);
  r.Add("_[?_]", "(optional(map(K, V)), K) -> optional(V)", nullptr);
  for (const char* t : {"string", "bytes", "list(A)", "map(K, V)"}) {
    r.Add("size", StrCat("(", t, ") -> int"), FnSize);
    r.Add("size", StrCat(t, ".() -> int"), FnSize);
  }
  r.Add("contains", "string.(string) -> bool", FnStrPred<0>);
  r.Add("startsWith", "string.(string) -> bool", FnStrPred<1>);
  r.Add("endsWith", "string.(string) -> bool", FnStrPred<2>);
  r.Add("matches", "string.(string) -> bool", FnMatches);
  r.Add("matches", "(string, string) -> bool", FnMatches);
  for (const char* t : {"int", "uint", "double", "string"}) {
    r.Add("int", StrCat("(", t, ") -> int"), FnInt);
    r.Add("uint", StrCat("(", t, ") -> uint"), FnUint);
    r.Add("double", StrCat("(", t, ") -> double"), FnDouble);
  }
  for (const char* t : {"int", "uint", "double", "string", "bytes", "bool"}) {
    r.Add("string", StrCat("(", t, ") -> string"), FnString);
  }
  r.Add("bytes", "(bytes) -> bytes", FnBytes);
  r.Add("bytes", "(string) -> bytes", FnBytes);
  r.Add("bool", "(bool) -> bool", FnBool);
  r.Add("bool", "(string) -> bool", FnBool);
  r.Add("dyn", "(A) -> dyn", FnDyn);
  r.Add("type", "(A) -> type(A)", FnType);
  r.Add("optional.of", "(A) -> optional(A)", FnOptOf);
  r.Add("optional.ofNonZeroValue", "(A) -> optional(A)", FnOptOfNonZero);
  r.Add("optional.none", "() -> optional(dyn)", FnOptNone);
  r.Add("hasValue", "optional(A).() -> bool", FnHasValue);
  r.Add("value", "optional(A).() -> A", FnValue);
  r.Add("orValue", "optional(A).(A) -> A", FnOrValue);
  r.Add("or", "optional(A).(optional(A)) -> optional(A)", FnOr);
}

}  // namespace gantry::cel
