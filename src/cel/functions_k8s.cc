// Kubernetes CEL libraries used by DRA selectors: Regex (find, findAll via
// RE2), Quantity, Semver and the DRA `includes` function.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "re2/re2.h"
#include "src/cel/functions.h"
#include "src/cel/semver.h"

namespace gantry::cel {

// --------------------------------------------------------------------- regex

std::shared_ptr<const re2::RE2> CompileRegex(std::string_view pattern, std::string* error) {
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(8 << 20);
  auto re = std::make_shared<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), opts);
  if (!re->ok()) {
    if (error != nullptr) *error = re->error();
    return nullptr;
  }
  return re;
}

Value RegexMatches(const re2::RE2& re, std::string_view text) {
  return Value::Bool(re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), re));
}

Value RegexFind(const re2::RE2& re, std::string_view text) {
  re2::StringPiece input(text.data(), text.size());
  re2::StringPiece match;
  if (!re.Match(input, 0, input.size(), re2::RE2::UNANCHORED, &match, 1)) return Value::StringView("");
  return Value::String(std::string(match.data(), match.size()));
}

Value RegexFindAll(const re2::RE2& re, std::string_view text, int64_t limit) {
  std::vector<Value> out;
  re2::StringPiece input(text.data(), text.size());
  size_t pos = 0;
  while (pos <= input.size() && (limit < 0 || static_cast<int64_t>(out.size()) < limit)) {
    re2::StringPiece match;
    if (!re.Match(input, pos, input.size(), re2::RE2::UNANCHORED, &match, 1)) break;
    out.push_back(Value::String(std::string(match.data(), match.size())));
    size_t end = static_cast<size_t>(match.data() - input.data()) + match.size();
    pos = match.empty() ? end + 1 : end;
  }
  return Value::List(std::move(out));
}

namespace {

Value RegexCall(EvalContext& ctx, const Value* a, size_t n, int kind) {
  static constexpr const char* kNames[] = {"matches", "find", "findAll"};
  if (n < 2 || a[0].kind() != Kind::kString || a[1].kind() != Kind::kString ||
      (n == 3 && (kind != 2 || a[2].kind() != Kind::kInt)) || n > 3) {
    return NoSuchOverload(kNames[kind]);
  }
  ctx.cost += a[0].str().size() / 10 + a[1].str().size();
  std::string err;
  auto re = CompileRegex(a[1].str(), &err);
  if (re == nullptr) return Value::Error(StrCat("invalid regex pattern: ", err));
  if (kind == 1) return RegexFind(*re, a[0].str());
  return RegexFindAll(*re, a[0].str(), n == 3 ? a[2].int_value() : -1);
}

Value FnFind(EvalContext& ctx, const Value* a, size_t n) { return RegexCall(ctx, a, n, 1); }
Value FnFindAll(EvalContext& ctx, const Value* a, size_t n) { return RegexCall(ctx, a, n, 2); }

// ------------------------------------------------------------------ quantity

Value FnQuantity(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kString) return NoSuchOverload("quantity");
  auto q = api::Quantity::Parse(a[0].str());
  if (!q.ok()) return Value::Error(std::string(q.status().message()));
  return Value::Quantity(*q);
}

Value FnIsQuantity(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kString) return NoSuchOverload("isQuantity");
  return Value::Bool(api::Quantity::Parse(a[0].str()).ok());
}

Value FnSign(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kQuantity) return NoSuchOverload("sign");
  return Value::Int(a[0].quantity().Sign());
}

bool ParsedSemver(const Value& v, SemverParts* p) { return ParseSemver(v.str(), p); }

// Shared by Quantity and Semver: 0 compareTo, 1 isGreaterThan, 2 isLessThan.
template <int kOp>
Value FnCompare(EvalContext&, const Value* a, size_t n) {
  static constexpr const char* kNames[] = {"compareTo", "isGreaterThan", "isLessThan"};
  if (n != 2 || a[0].kind() != a[1].kind()) return NoSuchOverload(kNames[kOp]);
  int c;
  if (a[0].kind() == Kind::kQuantity) {
    c = a[0].quantity().Compare(a[1].quantity());
  } else if (a[0].kind() == Kind::kSemver) {
    SemverParts x, y;
    if (!ParsedSemver(a[0], &x) || !ParsedSemver(a[1], &y)) return Value::Error("invalid semver");
    c = CompareSemver(x, y);
  } else {
    return NoSuchOverload(kNames[kOp]);
  }
  switch (kOp) {
    case 0: return Value::Int(c < 0 ? -1 : (c > 0 ? 1 : 0));
    case 1: return Value::Bool(c > 0);
    default: return Value::Bool(c < 0);
  }
}

Value FnAsApproximateFloat(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kQuantity) return NoSuchOverload("asApproximateFloat");
  return Value::Double(a[0].quantity().AsApproximateFloat());
}

Value FnAsInteger(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kQuantity) return NoSuchOverload("asInteger");
  auto v = a[0].quantity().AsInt64();
  if (!v.ok()) return Value::Error("cannot convert value to integer");
  return Value::Int(*v);
}

Value FnIsInteger(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kQuantity) return NoSuchOverload("isInteger");
  return Value::Bool(a[0].quantity().IsInteger());
}

template <bool kAdd>
Value FnAddSub(EvalContext&, const Value* a, size_t n) {
  const char* name = kAdd ? "add" : "sub";
  if (n != 2 || a[0].kind() != Kind::kQuantity) return NoSuchOverload(name);
  api::Quantity rhs;
  if (a[1].kind() == Kind::kQuantity) {
    rhs = a[1].quantity();
  } else if (a[1].kind() == Kind::kInt) {
    rhs = api::Quantity::FromInt64(a[1].int_value());
  } else {
    return NoSuchOverload(name);
  }
  auto r = kAdd ? a[0].quantity().Add(rhs) : a[0].quantity().Sub(rhs);
  if (!r.ok()) return Value::Error(std::string(r.status().message()));
  return Value::Quantity(*r);
}

// -------------------------------------------------------------------- semver

Value SemverFrom(std::string_view text, bool normalize) {
  std::string normalized;
  if (normalize) {
    auto n = NormalizeSemver(text);
    if (!n.ok()) return Value::Error(std::string(n.status().message()));
    normalized = *n;
    text = normalized;
  }
  std::string err;
  if (!ParseSemver(text, nullptr, &err)) return Value::Error(StrCat("could not parse semver: ", err));
  return Value::Semver(std::string(text));
}

Value FnSemver(EvalContext&, const Value* a, size_t n) {
  if ((n != 1 && n != 2) || a[0].kind() != Kind::kString || (n == 2 && a[1].kind() != Kind::kBool)) {
    return NoSuchOverload("semver");
  }
  return SemverFrom(a[0].str(), n == 2 && a[1].bool_value());
}

Value FnIsSemver(EvalContext&, const Value* a, size_t n) {
  if ((n != 1 && n != 2) || a[0].kind() != Kind::kString || (n == 2 && a[1].kind() != Kind::kBool)) {
    return NoSuchOverload("isSemver");
  }
  return Value::Bool(!SemverFrom(a[0].str(), n == 2 && a[1].bool_value()).is_error());
}

template <int kPart>
Value FnSemverPart(EvalContext&, const Value* a, size_t n) {
  static constexpr const char* kNames[] = {"major", "minor", "patch"};
  if (n != 1 || a[0].kind() != Kind::kSemver) return NoSuchOverload(kNames[kPart]);
  SemverParts p;
  if (!ParsedSemver(a[0], &p)) return Value::Error("invalid semver");
  uint64_t v = kPart == 0 ? p.major : (kPart == 1 ? p.minor : p.patch);
  if (v > static_cast<uint64_t>(INT64_MAX)) return Value::Error("semver component out of range");
  return Value::Int(static_cast<int64_t>(v));
}

// ---------------------------------------------------------------- includes

constexpr size_t kMaxListAttributeValues = 48;  // ResourceSliceMaxAttributeValuesPerDevice

Value FnIncludes(EvalContext&, const Value* a, size_t n) {
  if (n != 2) return NoSuchOverload("includes");
  if (a[0].kind() == Kind::kList) {
    size_t sz = ListSize(a[0]);
    for (size_t i = 0; i < sz; ++i) {
      if (i >= kMaxListAttributeValues) {
        return Value::Error("'includes' function cannot be applied to lists longer than 48 values");
      }
      if (Equal(ListGet(a[0], i), a[1])) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  return Value::Bool(Equal(a[0], a[1]));
}

}  // namespace

void RegisterRegexLibrary(FunctionRegistry& r) {
  r.Add("find", "string.(string) -> string", FnFind);
  r.Add("findAll", "string.(string) -> list(string)", FnFindAll);
  r.Add("findAll", "string.(string, int) -> list(string)", FnFindAll);
}

void RegisterKubernetesLibrary(FunctionRegistry& r) {
  r.Add("quantity", "(string) -> Quantity", FnQuantity);
  r.Add("isQuantity", "(string) -> bool", FnIsQuantity);
  r.Add("sign", "(Quantity) -> int", FnSign);
  r.Add("compareTo", "Quantity.(Quantity) -> int", FnCompare<0>);
  r.Add("isGreaterThan", "Quantity.(Quantity) -> bool", FnCompare<1>);
  r.Add("isLessThan", "Quantity.(Quantity) -> bool", FnCompare<2>);
  r.Add("asApproximateFloat", "Quantity.() -> double", FnAsApproximateFloat);
  r.Add("asInteger", "Quantity.() -> int", FnAsInteger);
  r.Add("isInteger", "Quantity.() -> bool", FnIsInteger);
  r.Add("add", "Quantity.(Quantity) -> Quantity", FnAddSub<true>);
  r.Add("add", "Quantity.(int) -> Quantity", nullptr);
  r.Add("sub", "Quantity.(Quantity) -> Quantity", FnAddSub<false>);
  r.Add("sub", "Quantity.(int) -> Quantity", nullptr);
  r.Add("semver", "(string) -> Semver", FnSemver);
  r.Add("semver", "(string, bool) -> Semver", nullptr);
  r.Add("isSemver", "(string) -> bool", FnIsSemver);
  r.Add("isSemver", "(string, bool) -> bool", nullptr);
  r.Add("compareTo", "Semver.(Semver) -> int", nullptr);
  r.Add("isGreaterThan", "Semver.(Semver) -> bool", nullptr);
  r.Add("isLessThan", "Semver.(Semver) -> bool", nullptr);
  r.Add("major", "Semver.() -> int", FnSemverPart<0>);
  r.Add("minor", "Semver.() -> int", FnSemverPart<1>);
  r.Add("patch", "Semver.() -> int", FnSemverPart<2>);
  r.Add("includes", "dyn.(dyn) -> bool", FnIncludes);
}

}  // namespace gantry::cel
