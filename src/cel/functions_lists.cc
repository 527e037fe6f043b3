// List functions: Kubernetes' Lists library (isSorted, sum, min, max;
// indexOf/lastIndexOf live with the string functions), ext.Lists v3
// (slice, flatten, sort, lists.range, reverse, distinct; sortBy is a macro)
// and ext.Sets (sets.contains, sets.equivalent, sets.intersects).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "src/cel/functions.h"

namespace gantry::cel {
namespace {

bool IsList(const Value& v) { return v.kind() == Kind::kList; }

std::vector<Value> Elems(const Value& l) {
  std::vector<Value> out;
  size_t n = ListSize(l);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(ListGet(l, i));
  return out;
}

Value FnIsSorted(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 1 || !IsList(a[0])) return NoSuchOverload("isSorted");
  size_t sz = ListSize(a[0]);
  ctx.cost += sz;
  for (size_t i = 1; i < sz; ++i) {
    bool unordered;
    auto c = Compare(ListGet(a[0], i - 1), ListGet(a[0], i), &unordered);
    if (!c) return NoSuchOverload("isSorted");
    if (*c > 0) return Value::Bool(false);
  }
  return Value::Bool(true);
}

Value FnSum(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 1 || !IsList(a[0])) return NoSuchOverload("sum");
  size_t sz = ListSize(a[0]);
  ctx.cost += sz;
  if (sz == 0) return Value::Int(0);
  Value acc = ListGet(a[0], 0);
  for (size_t i = 1; i < sz; ++i) {
    Value e = ListGet(a[0], i);
    if (e.kind() != acc.kind()) return NoSuchOverload("sum");
    switch (acc.kind()) {
      case Kind::kInt: {
        int64_t r;
        if (__builtin_add_overflow(acc.int_value(), e.int_value(), &r)) return Value::Error("integer overflow");
        acc = Value::Int(r);
        break;
      }
      case Kind::kUint: {
        uint64_t r;
        if (__builtin_add_overflow(acc.uint_value(), e.uint_value(), &r)) return Value::Error("unsigned integer overflow");
        acc = Value::Uint(r);
        break;
      }
      case Kind::kDouble: acc = Value::Double(acc.double_value() + e.double_value()); break;
      default: return NoSuchOverload("sum");
    }
  }
  if (acc.kind() != Kind::kInt && acc.kind() != Kind::kUint && acc.kind() != Kind::kDouble) {
    return NoSuchOverload("sum");
  }
  return acc;
}

template <bool kMax>
Value FnMinMax(EvalContext& ctx, const Value* a, size_t n) {
  const char* name = kMax ? "max" : "min";
  if (n != 1 || !IsList(a[0])) return NoSuchOverload(name);
  size_t sz = ListSize(a[0]);
  ctx.cost += sz;
  if (sz == 0) return Value::Error(StrCat(name, " called on empty list"));
  Value best = ListGet(a[0], 0);
  for (size_t i = 1; i < sz; ++i) {
    Value e = ListGet(a[0], i);
    bool unordered;
    auto c = Compare(e, best, &unordered);
    if (!c) return NoSuchOverload(name);
    if (kMax ? *c > 0 : *c < 0) best = e;
  }
  return best;
}

Value FnSlice(EvalContext&, const Value* a, size_t n) {
  if (n != 3 || !IsList(a[0]) || a[1].kind() != Kind::kInt || a[2].kind() != Kind::kInt) {
    return NoSuchOverload("slice");
  }
  int64_t sz = static_cast<int64_t>(ListSize(a[0]));
  int64_t s = a[1].int_value(), e = a[2].int_value();
  if (s < 0 || e < 0) return Value::Error(StrCat("cannot slice(", s, ", ", e, "), negative indexes not supported"));
  if (s > e) return Value::Error(StrCat("cannot slice(", s, ", ", e, "), start index must be less than or equal to end index"));
  if (e > sz) return Value::Error(StrCat("cannot slice(", s, ", ", e, "), list is length ", sz));
  std::vector<Value> out;
  for (int64_t i = s; i < e; ++i) out.push_back(ListGet(a[0], static_cast<size_t>(i)));
  return Value::List(std::move(out));
}

bool Flatten(EvalContext& ctx, const Value& l, int64_t depth, std::vector<Value>* out) {
  size_t sz = ListSize(l);
  for (size_t i = 0; i < sz; ++i) {
    if (!ctx.Charge(1)) return false;
    Value e = ListGet(l, i);
    if (e.kind() == Kind::kList && depth > 0) {
      if (!Flatten(ctx, e, depth - 1, out)) return false;
    } else {
      out->push_back(std::move(e));
    }
  }
  return true;
}

Value FnFlatten(EvalContext& ctx, const Value* a, size_t n) {
  if ((n != 1 && n != 2) || !IsList(a[0]) || (n == 2 && a[1].kind() != Kind::kInt)) {
    return NoSuchOverload("flatten");
  }
  int64_t depth = n == 2 ? a[1].int_value() : 1;
  if (depth < 0) return Value::Error("level must be non-negative");
  if (depth > 100) depth = 100;
  std::vector<Value> out;
  if (!Flatten(ctx, a[0], depth, &out)) return CostLimitError();
  return Value::List(std::move(out));
}

Value FnSort(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 1 || !IsList(a[0])) return NoSuchOverload("sort");
  std::vector<Value> v = Elems(a[0]);
  ctx.cost += v.size();
  for (size_t i = 1; i < v.size(); ++i) {
    bool unordered;
    if (v[i].kind() != v[0].kind() || !Compare(v[0], v[i], &unordered)) {
      return Value::Error("list elements must have the same type");
    }
  }
  if (!v.empty()) {
    bool unordered;
    if (!Compare(v[0], v[0], &unordered)) return Value::Error("list elements must be comparable");
  }
  std::stable_sort(v.begin(), v.end(), [](const Value& x, const Value& y) {
    bool unordered;
    auto c = Compare(x, y, &unordered);
    return c && *c < 0;
  });
  return Value::List(std::move(v));
}

Value FnRange(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 1 || a[0].kind() != Kind::kInt) return NoSuchOverload("lists.range");
  int64_t k = a[0].int_value();
  if (k > 1000000) return CostLimitError();
  std::vector<Value> out;
  for (int64_t i = 0; i < k; ++i) out.push_back(Value::Int(i));
  ctx.cost += out.size();
  return Value::List(std::move(out));
}

Value FnReverse(EvalContext&, const Value* a, size_t n) {
  if (n != 1 || !IsList(a[0])) return NoSuchOverload("reverse");
  std::vector<Value> v = Elems(a[0]);
  std::reverse(v.begin(), v.end());
  return Value::List(std::move(v));
}

Value FnDistinct(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 1 || !IsList(a[0])) return NoSuchOverload("distinct");
  std::vector<Value> out;
  size_t sz = ListSize(a[0]);
  ctx.cost += sz * sz / 10;
  for (size_t i = 0; i < sz; ++i) {
    Value e = ListGet(a[0], i);
    bool seen = false;
    for (const auto& o : out) {
      if (Equal(o, e)) {
        seen = true;
        break;
      }
    }
    if (!seen) out.push_back(std::move(e));
  }
  return Value::List(std::move(out));
}

bool ListHas(const Value& l, const Value& x) {
  size_t sz = ListSize(l);
  for (size_t i = 0; i < sz; ++i) {
    if (Equal(ListGet(l, i), x)) return true;
  }
  return false;
}

bool ContainsAll(const Value& a, const Value& b) {
  size_t sz = ListSize(b);
  for (size_t i = 0; i < sz; ++i) {
    if (!ListHas(a, ListGet(b, i))) return false;
  }
  return true;
}

Value FnSetsContains(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 2 || !IsList(a[0]) || !IsList(a[1])) return NoSuchOverload("sets.contains");
  ctx.cost += ListSize(a[0]) * ListSize(a[1]) / 10;
  return Value::Bool(ContainsAll(a[0], a[1]));
}
Value FnSetsEquivalent(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 2 || !IsList(a[0]) || !IsList(a[1])) return NoSuchOverload("sets.equivalent");
  ctx.cost += ListSize(a[0]) * ListSize(a[1]) / 5;
  return Value::Bool(ContainsAll(a[0], a[1]) && ContainsAll(a[1], a[0]));
}
Value FnSetsIntersects(EvalContext& ctx, const Value* a, size_t n) {
  if (n != 2 || !IsList(a[0]) || !IsList(a[1])) return NoSuchOverload("sets.intersects");
  ctx.cost += ListSize(a[0]) * ListSize(a[1]) / 10;
  size_t sz = ListSize(a[1]);
  for (size_t i = 0; i < sz; ++i) {
    if (ListHas(a[0], ListGet(a[1], i))) return Value::Bool(true);
  }
  return Value::Bool(false);
}

}  // namespace

void RegisterListsLibrary(FunctionRegistry& r) {
  r.Add("isSorted", "list(A).() -> bool", FnIsSorted);
  for (const char* t : {"int", "uint", "double"}) {
    r.Add("sum", StrCat("list(", t, ").() -> ", t), FnSum);
  }
  r.Add("min", "list(A).() -> A", FnMinMax<false>);
  r.Add("max", "list(A).() -> A", FnMinMax<true>);
  r.Add("slice", "list(A).(int, int) -> list(A)", FnSlice);
  r.Add("flatten", "list(dyn).() -> list(dyn)", FnFlatten);
  r.Add("flatten", "list(dyn).(int) -> list(dyn)", FnFlatten);
  r.Add("sort", "list(A).() -> list(A)", FnSort);
  r.Add("lists.range", "(int) -> list(int)", FnRange);
  r.Add("reverse", "list(A).() -> list(A)", FnReverse);
  r.Add("distinct", "list(A).() -> list(A)", FnDistinct);
  r.Add("sets.contains", "(list(A), list(A)) -> bool", FnSetsContains);
  r.Add("sets.equivalent", "(list(A), list(A)) -> bool", FnSetsEquivalent);
  r.Add("sets.intersects", "(list(A), list(A)) -> bool", FnSetsIntersects);
}

}  // namespace gantry::cel
