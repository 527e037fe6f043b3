// Planner and tree-walking evaluator. See cel.h.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "absl/strings/str_join.h"
#include "re2/re2.h"
#include "src/cel/cel.h"
#include "src/cel/checker.h"
#include "src/cel/dra_env.h"
#include "src/cel/functions.h"

namespace gantry::cel {

enum class Op : uint8_t {
  kConst, kSlot, kSelect, kHas, kCall, kAnd, kOr, kNot, kCond, kIndex, kOptIndex,
  kList, kMap, kComp, kRegex,
  kDraLookup,  // device.attributes["d"].id / device.capacity["d"].id fused
};

struct Node {
  Op op = Op::kConst;
  bool optional = false;     // kSelect: `.?`
  bool has_filter = false;   // kComp
  MacroKind macro = MacroKind::kAll;
  uint8_t regex_kind = 0;    // kRegex: 0 matches, 1 find, 2 findAll
  int32_t slot = -1;
  int32_t slot2 = -1;
  Value constant;            // kConst; kSelect: field name (string)
  std::string name;          // function name (kCall) or field name
  Fn fn = nullptr;
  std::vector<std::unique_ptr<Node>> kids;
  std::vector<bool> optional_elems;
  std::shared_ptr<const re2::RE2> re;
  std::string storage;       // bytes of a string/bytes constant (kConst)

  // Stores a constant; strings and bytes are kept in `storage` and borrowed
  // so that evaluating the constant never touches a reference count.
  void SetConst(Value v) {
    op = Op::kConst;
    if (v.kind() == Kind::kString || v.kind() == Kind::kBytes) {
      storage = std::string(v.str());
      constant = v.kind() == Kind::kString ? Value::StringView(storage) : Value::BytesView(storage);
    } else {
      constant = std::move(v);
    }
  }
};

Value CostLimitError() { return Value::Error("operation cancelled: actual cost limit exceeded"); }

namespace {

// ------------------------------------------------------------------ planner

class Planner {
 public:
  Planner(const Env& env) : env_(env) {
    for (const auto& [name, type] : env.variables()) {
      vars_.emplace(name, static_cast<int>(vars_.size()));
    }
    next_slot_ = static_cast<int>(vars_.size());
  }

  int num_slots() const { return next_slot_; }

  std::unique_ptr<Node> Plan(const Expr* e) {
    auto n = std::make_unique<Node>();
    switch (e->kind) {
      case ExprKind::kConst:
        n->SetConst(ConstValue(e->constant));
        return n;
      case ExprKind::kIdent:
        return PlanIdent(e);
      case ExprKind::kSelect:
        if (!e->test_only) {
          if (auto fused = TryDraLookup(e, e->target.get(), e->name, e->optional_select)) return fused;
        }
        n->op = e->test_only ? Op::kHas : Op::kSelect;
        n->optional = e->optional_select;
        n->name = e->name;
        n->constant = Value::StringView(n->name);
        n->kids.push_back(Plan(e->target.get()));
        n->constant = Value::StringView(n->name);
        return n;
      case ExprKind::kList:
        n->op = Op::kList;
        for (const auto& a : e->args) n->kids.push_back(Plan(a.get()));
        n->optional_elems = e->optional_elems;
        return Fold(std::move(n));
      case ExprKind::kMap:
        n->op = Op::kMap;
        for (const auto& a : e->args) n->kids.push_back(Plan(a.get()));
        n->optional_elems = e->optional_elems;
        return Fold(std::move(n));
      case ExprKind::kCall:
        return PlanCall(e);
      case ExprKind::kComprehension: {
        n->op = Op::kComp;
        n->macro = e->macro;
        n->has_filter = e->has_filter;
        n->kids.push_back(Plan(e->target.get()));
        n->slot = next_slot_++;
        scopes_.emplace_back(e->iter_var, n->slot);
        if (!e->iter_var2.empty()) {
          n->slot2 = next_slot_++;
          scopes_.emplace_back(e->iter_var2, n->slot2);
        }
        for (const auto& a : e->args) n->kids.push_back(Plan(a.get()));
        scopes_.pop_back();
        if (!e->iter_var2.empty()) scopes_.pop_back();
        return n;
      }
    }
    return n;
  }

 private:
  static Value ConstValue(const Constant& c) {
    switch (c.kind) {
      case ConstKind::kNull: return Value::Null();
      case ConstKind::kBool: return Value::Bool(c.bool_value);
      case ConstKind::kInt: return Value::Int(c.int_value);
      case ConstKind::kUint: return Value::Uint(c.uint_value);
      case ConstKind::kDouble: return Value::Double(c.double_value);
      case ConstKind::kString: return Value::String(c.string_value);
      case ConstKind::kBytes: return Value::Bytes(c.string_value);
    }
    return Value();
  }

  // Recognises `device.attributes[<const>].id` (also `["id"]`, `.?id`) on a
  // DRADevice variable and plans one fused lookup, keeping the generic plan
  // as a fallback for non-device values.
  std::unique_ptr<Node> TryDraLookup(const Expr* whole, const Expr* index, const std::string& id,
                                     bool optional) {
    if (index->kind != ExprKind::kCall || index->name != "_[_]" || index->target || index->args.size() != 2) {
      return nullptr;
    }
    const Expr* sel = index->args[0].get();
    const Expr* key = index->args[1].get();
    if (key->kind != ExprKind::kConst || key->constant.kind != ConstKind::kString) return nullptr;
    if (sel->kind != ExprKind::kSelect || sel->test_only || sel->optional_select ||
        (sel->name != "attributes" && sel->name != "capacity")) {
      return nullptr;
    }
    const Expr* dev = sel->target.get();
    if (dev->kind != ExprKind::kIdent || dev->absolute) return nullptr;
    for (const auto& s : scopes_) {
      if (s.first == dev->name) return nullptr;
    }
    auto v = vars_.find(dev->name);
    if (v == vars_.end()) return nullptr;
    auto t = env_.variable_types().find(dev->name);
    if (t == env_.variable_types().end() || t->second.kind != TypeKind::kObject) return nullptr;
    auto n = std::make_unique<Node>();
    n->op = Op::kDraLookup;
    n->slot = v->second;
    n->slot2 = sel->name == "capacity" ? 1 : 0;
    n->optional = optional;
    n->storage = key->constant.string_value;
    n->name = id;
    // Generic plan of the same expression, used when the variable is not a device.
    auto generic = std::make_unique<Node>();
    generic->op = Op::kSelect;
    generic->optional = optional;
    generic->name = id;
    generic->constant = Value::StringView(generic->name);
    generic->kids.push_back(Plan(index));
    if (whole->kind == ExprKind::kCall) generic->op = optional ? Op::kOptIndex : Op::kIndex;
    if (whole->kind == ExprKind::kCall) {
      generic->kids.clear();
      generic->kids.push_back(Plan(index));
      generic->kids.push_back(Plan(whole->args[1].get()));
    }
    n->kids.push_back(std::move(generic));
    return n;
  }

  std::unique_ptr<Node> PlanIdent(const Expr* e) {
    auto n = std::make_unique<Node>();
    if (!e->absolute) {
      for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
        if (it->first == e->name) {
          n->op = Op::kSlot;
          n->slot = it->second;
          return n;
        }
      }
    }
    auto v = vars_.find(e->name);
    if (v != vars_.end()) {
      n->op = Op::kSlot;
      n->slot = v->second;
      return n;
    }
    static const std::pair<std::string_view, TypeTag> kTypes[] = {
        {"int", TypeTag::kInt},         {"uint", TypeTag::kUint},     {"double", TypeTag::kDouble},
        {"bool", TypeTag::kBool},       {"string", TypeTag::kString}, {"bytes", TypeTag::kBytes},
        {"null_type", TypeTag::kNull},  {"list", TypeTag::kList},     {"map", TypeTag::kMap},
        {"type", TypeTag::kType},       {"optional_type", TypeTag::kOptional}};
    for (const auto& [name, tag] : kTypes) {
      if (e->name == name) {
        n->op = Op::kConst;
        n->constant = Value::Type(tag);
        return n;
      }
    }
    n->op = Op::kConst;
    n->constant = Value::Error(StrCat("no such attribute: ", e->name));
    return n;
  }

  std::unique_ptr<Node> PlanCall(const Expr* e) {
    auto n = std::make_unique<Node>();
    n->name = e->name;
    if (e->target) n->kids.push_back(Plan(e->target.get()));
    for (const auto& a : e->args) n->kids.push_back(Plan(a.get()));
    const std::string& f = e->name;
    if (f == "_&&_") { n->op = Op::kAnd; return n; }
    if (f == "_||_") { n->op = Op::kOr; return n; }
    if (f == "!_" && n->kids.size() == 1) { n->op = Op::kNot; return Fold(std::move(n)); }
    if (f == "_?_:_" && n->kids.size() == 3) { n->op = Op::kCond; return n; }
    if ((f == "_[_]" || f == "_[?_]") && !e->target && e->args.size() == 2 &&
        e->args[1]->kind == ExprKind::kConst && e->args[1]->constant.kind == ConstKind::kString) {
      if (auto fused = TryDraLookup(e, e->args[0].get(), e->args[1]->constant.string_value, f == "_[?_]")) {
        return fused;
      }
    }
    if (f == "_[_]" && n->kids.size() == 2) { n->op = Op::kIndex; return Fold(std::move(n)); }
    if (f == "_[?_]" && n->kids.size() == 2) { n->op = Op::kOptIndex; return Fold(std::move(n)); }
    // Constant regex patterns are compiled once.
    if ((f == "matches" || f == "find" || f == "findAll") && n->kids.size() >= 2 &&
        n->kids[1]->op == Op::kConst && n->kids[1]->constant.kind() == Kind::kString &&
        (f != "findAll" || n->kids.size() <= 3)) {
      std::string err;
      auto re = CompileRegex(n->kids[1]->constant.str(), &err);
      if (re != nullptr) {
        n->op = Op::kRegex;
        n->re = std::move(re);
        n->regex_kind = f == "matches" ? 0 : (f == "find" ? 1 : 2);
        return n;
      }
    }
    n->op = Op::kCall;
    const FunctionDef* def = Functions().Find(f);
    if (def == nullptr || def->fn == nullptr) {
      n->op = Op::kConst;
      n->constant = Value::Error(StrCat("no such overload: ", f));
      n->kids.clear();
      return n;
    }
    n->fn = def->fn;
    return Fold(std::move(n));
  }

  // Evaluates nodes whose children are all constants at plan time (all
  // library functions are pure). Errors are left for run time.
  std::unique_ptr<Node> Fold(std::unique_ptr<Node> n);

  const Env& env_;
  absl::flat_hash_map<std::string, int> vars_;
  std::vector<std::pair<std::string, int>> scopes_;
  int next_slot_ = 0;
};

// ---------------------------------------------------------------- evaluator

class Evaluator {
 public:
  Evaluator(Value* slots, EvalContext& ctx) : slots_(slots), ctx_(ctx) {}

  Value Eval(const Node* n);

 private:
  bool Exceeded() const { return ctx_.cost > ctx_.cost_limit; }

  Value EvalSelect(const Node* n);
  Value EvalIndex(const Node* n, bool optional);
  Value EvalComp(const Node* n);
  Value EvalCall(const Node* n);

  Value* slots_;
  EvalContext& ctx_;
};

Value TypeError(std::string_view fn) { return NoSuchOverload(fn); }

std::string_view GoTypeName(const Value& v) {
  switch (v.kind()) {
    case Kind::kInt: return "types.Int";
    case Kind::kUint: return "types.Uint";
    case Kind::kDouble: return "types.Double";
    case Kind::kString: return "types.String";
    case Kind::kBytes: return "types.Bytes";
    case Kind::kBool: return "types.Bool";
    case Kind::kNull: return "types.Null";
    case Kind::kSemver: return "cel.Semver";
    case Kind::kQuantity: return "cel.Quantity";
    case Kind::kOptional: return "*types.Optional";
    case Kind::kType: return "*types.Type";
    default: return TypeName(v);
  }
}

Value SelectField(const Value& t, const Value& field, bool optional) {
  switch (t.kind()) {
    case Kind::kMap: {
      std::optional<Value> v = MapFind(t, field);
      if (!v) return optional ? Value::OptionalNone() : NoSuchKey(field);
      if (optional) return Value::OptionalOf(*v);
      return *v;
    }
    case Kind::kObject: {
      const DeviceInput* d = t.device();
      std::string_view f = field.str();
      Value v;
      if (f == "driver") v = Value::StringView(d->driver);
      else if (f == "attributes") v = Value::DraView(Kind::kMap, Rep::kDraDomains, d, "", 0);
      else if (f == "capacity") v = Value::DraView(Kind::kMap, Rep::kDraDomains, d, "", 1);
      else if (f == "allowMultipleAllocations") v = Value::Bool(d->allow_multiple_allocations);
      else return optional ? Value::OptionalNone() : Value::Error(StrCat("no such field: ", f));
      return optional ? Value::OptionalOf(v) : v;
    }
    case Kind::kOptional:
      if (!t.has_value()) return t;
      return SelectField(t.optional_value(), field, true);
    case Kind::kError:
      return t;
    default:
      return Value::Error(StrCat("type '", TypeName(t), "' does not support field selection"));
  }
}

Value Evaluator::EvalSelect(const Node* n) {
  ctx_.cost += 1;
  Value t = Eval(n->kids[0].get());
  if (n->op == Op::kHas) {
    switch (t.kind()) {
      case Kind::kMap: return Value::Bool(MapContains(t, n->constant));
      case Kind::kObject: {
        std::string_view f = n->constant.str();
        if (f == "driver" || f == "attributes" || f == "capacity" || f == "allowMultipleAllocations") {
          return Value::Bool(true);
        }
        return Value::Error(StrCat("no such field: ", f));
      }
      case Kind::kError: return t;
      case Kind::kOptional:
        if (!t.has_value()) return Value::Bool(false);
        if (t.optional_value().kind() == Kind::kMap) return Value::Bool(MapContains(t.optional_value(), n->constant));
        return TypeError("has");
      default: return TypeError("has");
    }
  }
  return SelectField(t, n->constant, n->optional);
}

Value IndexValue(const Value& c, const Value& k, bool optional) {
  if (c.is_error()) return c;
  if (k.is_error()) return k;
  if (c.kind() == Kind::kOptional) {
    if (!c.has_value()) return c;
    return IndexValue(c.optional_value(), k, true);
  }
  if (c.kind() == Kind::kList) {
    int64_t i;
    if (k.kind() == Kind::kInt) {
      i = k.int_value();
    } else if (k.kind() == Kind::kUint) {
      i = k.uint_value() > static_cast<uint64_t>(INT64_MAX) ? -1 : static_cast<int64_t>(k.uint_value());
    } else if (k.kind() == Kind::kDouble) {
      double d = k.double_value();
      if (d != std::trunc(d) || !(d > -9.3e18 && d < 9.3e18)) {
        return Value::Error(StrCat("unsupported index value: ", DebugString(k)));
      }
      i = static_cast<int64_t>(d);
    } else {
      return NoSuchOverload("_[_]");
    }
    size_t n = ListSize(c);
    if (i < 0 || static_cast<uint64_t>(i) >= n) {
      if (optional) return Value::OptionalNone();
      return Value::Error(StrCat("index out of bounds: ", i));
    }
    Value v = ListGet(c, static_cast<size_t>(i));
    return optional ? Value::OptionalOf(std::move(v)) : v;
  }
  if (c.kind() == Kind::kMap) {
    switch (k.kind()) {
      case Kind::kString: case Kind::kInt: case Kind::kUint: case Kind::kBool: case Kind::kDouble:
        break;
      default:
        return NoSuchOverload("_[_]");
    }
    std::optional<Value> v = MapFind(c, k);
    if (!v) return optional ? Value::OptionalNone() : NoSuchKey(k);
    return optional ? Value::OptionalOf(std::move(*v)) : *v;
  }
  return NoSuchOverload("_[_]");
}

Value Evaluator::EvalIndex(const Node* n, bool optional) {
  ctx_.cost += 1;
  Value c = Eval(n->kids[0].get());
  if (c.is_error()) return c;
  Value k = Eval(n->kids[1].get());
  return IndexValue(c, k, optional);
}

Value Evaluator::EvalCall(const Node* n) {
  ctx_.cost += 1;
  size_t argc = n->kids.size();
  if (argc <= 4) {
    // Arguments live in raw stack storage; only `argc` values are built.
    alignas(Value) unsigned char buf[4 * sizeof(Value)];
    Value* args = reinterpret_cast<Value*>(buf);
    for (size_t built = 0; built < argc; ++built) {
      new (&args[built]) Value(Eval(n->kids[built].get()));
      if (args[built].is_error()) {
        Value err(std::move(args[built]));
        for (size_t i = 0; i <= built; ++i) args[i].~Value();
        return err;
      }
    }
    Value r = n->fn(ctx_, args, argc);
    for (size_t i = 0; i < argc; ++i) args[i].~Value();
    if (Exceeded()) [[unlikely]] return CostLimitError();
    return r;
  }
  std::vector<Value> args(argc);
  for (size_t i = 0; i < argc; ++i) {
    args[i] = Eval(n->kids[i].get());
    if (args[i].is_error()) return args[i];
  }
  Value r = n->fn(ctx_, args.data(), argc);
  if (Exceeded()) return CostLimitError();
  return r;
}

// Iteration helper over lists and maps.
struct Range {
  const Value& v;
  bool is_map;
  size_t size;
};

Value Evaluator::EvalComp(const Node* n) {
  Value range = Eval(n->kids[0].get());
  if (range.is_error()) return range;
  Value* s1 = &slots_[n->slot];
  Value* s2 = n->slot2 >= 0 ? &slots_[n->slot2] : nullptr;
  switch (n->macro) {
    case MacroKind::kBind:
      *s1 = std::move(range);
      return Eval(n->kids[1].get());
    case MacroKind::kOptMap:
    case MacroKind::kOptFlatMap: {
      if (range.kind() != Kind::kOptional) {
        return NoSuchOverload(n->macro == MacroKind::kOptMap ? "optMap" : "optFlatMap");
      }
      if (!range.has_value()) return range;
      *s1 = range.optional_value();
      Value r = Eval(n->kids[1].get());
      if (r.is_error()) return r;
      if (n->macro == MacroKind::kOptMap) return Value::OptionalOf(std::move(r));
      if (r.kind() != Kind::kOptional) return NoSuchOverload("optFlatMap");
      return r;
    }
    default:
      break;
  }
  bool is_map;
  if (range.kind() == Kind::kList) {
    is_map = false;
  } else if (range.kind() == Kind::kMap) {
    is_map = true;
  } else {
    return Value::Error(StrCat("got '", GoTypeName(range), "', expected iterable type"));
  }
  size_t size = is_map ? MapSize(range) : ListSize(range);
  auto bind = [&](size_t i) {
    if (s2 != nullptr) {
      if (is_map) {
        *s1 = MapKeyAt(range, i);
        *s2 = MapValueAt(range, i);
      } else {
        *s1 = Value::Int(static_cast<int64_t>(i));
        *s2 = ListGet(range, i);
      }
    } else {
      *s1 = is_map ? MapKeyAt(range, i) : ListGet(range, i);
    }
  };
  const Node* body0 = n->kids[1].get();
  switch (n->macro) {
    case MacroKind::kAll:
    case MacroKind::kExists: {
      bool want = n->macro == MacroKind::kExists;  // value that short-circuits
      Value err;
      bool have_err = false;
      for (size_t i = 0; i < size; ++i) {
        if (!ctx_.Charge(1)) return CostLimitError();
        bind(i);
        Value r = Eval(body0);
        if (Exceeded()) return CostLimitError();
        if (r.kind() == Kind::kBool) {
          if (r.bool_value() == want) return Value::Bool(want);
        } else if (!have_err) {
          have_err = true;
          err = r.is_error() ? r : NoSuchOverload(want ? "exists" : "all");
        }
      }
      if (have_err) return err;
      return Value::Bool(!want);
    }
    case MacroKind::kExistsOne: {
      int64_t count = 0;
      for (size_t i = 0; i < size; ++i) {
        if (!ctx_.Charge(1)) return CostLimitError();
        bind(i);
        Value r = Eval(body0);
        if (r.is_error()) return r;
        if (r.kind() != Kind::kBool) return NoSuchOverload("exists_one");
        if (r.bool_value()) ++count;
      }
      return Value::Bool(count == 1);
    }
    case MacroKind::kMap:
    case MacroKind::kMapFilter:
    case MacroKind::kFilter:
    case MacroKind::kTransformList: {
      std::vector<Value> out;
      bool filtered = n->macro == MacroKind::kMapFilter || n->macro == MacroKind::kFilter ||
                      (n->macro == MacroKind::kTransformList && n->has_filter);
      const Node* f = n->kids.back().get();
      for (size_t i = 0; i < size; ++i) {
        if (!ctx_.Charge(1)) return CostLimitError();
        bind(i);
        if (filtered) {
          Value p = Eval(body0);
          if (p.is_error()) return p;
          if (p.kind() != Kind::kBool) return NoSuchOverload("filter");
          if (!p.bool_value()) continue;
        }
        if (n->macro == MacroKind::kFilter) {
          out.push_back(is_map ? MapKeyAt(range, i) : ListGet(range, i));
          continue;
        }
        Value r = Eval(f);
        if (r.is_error()) return r;
        out.push_back(std::move(r));
      }
      ctx_.cost += out.size();
      return Value::List(std::move(out));
    }
    case MacroKind::kTransformMap:
    case MacroKind::kTransformMapEntry: {
      auto data = std::make_shared<MapData>();
      const Node* f = n->kids.back().get();
      for (size_t i = 0; i < size; ++i) {
        if (!ctx_.Charge(1)) return CostLimitError();
        bind(i);
        if (n->has_filter) {
          Value p = Eval(body0);
          if (p.is_error()) return p;
          if (p.kind() != Kind::kBool) return NoSuchOverload("transformMap");
          if (!p.bool_value()) continue;
        }
        Value r = Eval(f);
        if (r.is_error()) return r;
        if (n->macro == MacroKind::kTransformMap) {
          data->entries.emplace_back(is_map ? MapKeyAt(range, i) : Value::Int(static_cast<int64_t>(i)),
                                     std::move(r));
          continue;
        }
        if (r.kind() != Kind::kMap) return NoSuchOverload("transformMapEntry");
        if (!ctx_.Charge(data->entries.size() / 8 + 1)) return CostLimitError();
        size_t m = MapSize(r);
        for (size_t j = 0; j < m; ++j) {
          Value k = MapKeyAt(r, j);
          for (const auto& e : data->entries) {
            if (Equal(e.first, k)) {
              return Value::Error(StrCat("insert failed: key ", DebugString(k), " already exists"));
            }
          }
          data->entries.emplace_back(k, MapValueAt(r, j));
        }
      }
      data->BuildIndex();
      return Value::Map(std::move(data));
    }
    case MacroKind::kSortBy: {
      std::vector<std::pair<Value, Value>> keyed;
      for (size_t i = 0; i < size; ++i) {
        if (!ctx_.Charge(1)) return CostLimitError();
        bind(i);
        Value k = Eval(body0);
        if (k.is_error()) return k;
        keyed.emplace_back(std::move(k), is_map ? MapKeyAt(range, i) : ListGet(range, i));
      }
      bool bad = false;
      std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
        bool unordered;
        auto c = Compare(a.first, b.first, &unordered);
        if (!c) {
          bad = true;
          return false;
        }
        return *c < 0;
      });
      if (bad) return Value::Error("sortBy: keys are not comparable");
      std::vector<Value> out;
      for (auto& p : keyed) out.push_back(std::move(p.second));
      return Value::List(std::move(out));
    }
    default:
      return Value::Error("unsupported comprehension");
  }
}

Value Evaluator::Eval(const Node* n) {
  switch (n->op) {
    case Op::kConst:
      return n->constant;
    case Op::kSlot:
      return slots_[n->slot];
    case Op::kSelect:
    case Op::kHas:
      return EvalSelect(n);
    case Op::kIndex:
      return EvalIndex(n, false);
    case Op::kOptIndex:
      return EvalIndex(n, true);
    case Op::kCall:
      return EvalCall(n);
    case Op::kAnd:
    case Op::kOr: {
      bool stop = n->op == Op::kOr;  // value that decides the result
      Value err;
      bool have_err = false;
      for (const auto& k : n->kids) {
        Value v = Eval(k.get());
        if (v.kind() == Kind::kBool) {
          if (v.bool_value() == stop) return v;
          continue;
        }
        if (Exceeded()) return CostLimitError();
        if (!have_err) {
          have_err = true;
          err = v.is_error() ? std::move(v) : NoSuchOverload(stop ? "_||_" : "_&&_");
        }
      }
      if (have_err) return err;
      return Value::Bool(!stop);
    }
    case Op::kNot: {
      Value v = Eval(n->kids[0].get());
      if (v.kind() == Kind::kBool) return Value::Bool(!v.bool_value());
      if (v.is_error()) return v;
      return NoSuchOverload("!_");
    }
    case Op::kCond: {
      Value c = Eval(n->kids[0].get());
      if (c.kind() == Kind::kBool) return Eval(n->kids[c.bool_value() ? 1 : 2].get());
      if (c.is_error()) return c;
      return NoSuchOverload("_?_:_");
    }
    case Op::kList: {
      std::vector<Value> elems;
      elems.reserve(n->kids.size());
      for (size_t i = 0; i < n->kids.size(); ++i) {
        Value v = Eval(n->kids[i].get());
        if (v.is_error()) return v;
        if (n->optional_elems[i]) {
          if (v.kind() != Kind::kOptional) return NoSuchOverload("optional list element");
          if (!v.has_value()) continue;
          elems.push_back(v.optional_value());
          continue;
        }
        elems.push_back(std::move(v));
      }
      ctx_.cost += 1;
      return Value::List(std::move(elems));
    }
    case Op::kMap: {
      auto data = std::make_shared<MapData>();
      for (size_t i = 0; i + 1 < n->kids.size(); i += 2) {
        Value k = Eval(n->kids[i].get());
        if (k.is_error()) return k;
        switch (k.kind()) {
          case Kind::kString: case Kind::kInt: case Kind::kUint: case Kind::kBool: break;
          default: return Value::Error(StrCat("unsupported key type: ", TypeName(k)));
        }
        Value v = Eval(n->kids[i + 1].get());
        if (v.is_error()) return v;
        if (n->optional_elems[i / 2]) {
          if (v.kind() != Kind::kOptional) return NoSuchOverload("optional map entry");
          if (!v.has_value()) continue;
          v = Value(v.optional_value());
        }
        for (const auto& e : data->entries) {
          if (Equal(e.first, k)) return Value::Error(StrCat("Failed with repeated key: ", DebugString(k)));
        }
        data->entries.emplace_back(std::move(k), std::move(v));
      }
      data->BuildIndex();
      ctx_.cost += 1;
      return Value::Map(std::move(data));
    }
    case Op::kComp:
      return EvalComp(n);
    case Op::kDraLookup: {
      const Value& dev = slots_[n->slot];
      if (dev.kind() != Kind::kObject) return Eval(n->kids[0].get());
      ctx_.cost += 3;
      Value v = LookupDra(*dev.device(), n->slot2 == 1, n->storage, n->name);
      if (v.kind() == Kind::kNull) [[unlikely]] {
        return n->optional ? Value::OptionalNone() : NoSuchKey(Value::StringView(n->name));
      }
      if (n->optional && !v.is_error()) return Value::OptionalOf(std::move(v));
      return v;
    }
    case Op::kRegex: {
      ctx_.cost += 1;
      Value s = Eval(n->kids[0].get());
      if (s.is_error()) return s;
      if (s.kind() != Kind::kString) return NoSuchOverload(n->name);
      ctx_.cost += s.str().size() / 10;
      switch (n->regex_kind) {
        case 0: return RegexMatches(*n->re, s.str());
        case 1: return RegexFind(*n->re, s.str());
        default: {
          int64_t limit = -1;
          if (n->kids.size() == 3) {
            Value l = Eval(n->kids[2].get());
            if (l.is_error()) return l;
            if (l.kind() != Kind::kInt) return NoSuchOverload("findAll");
            limit = l.int_value();
          }
          return RegexFindAll(*n->re, s.str(), limit);
        }
      }
    }
  }
  return Value::Error("invalid program");
}

// Deep copy that owns every string (folded constants must not borrow from
// the child nodes they replace).
Value Own(const Value& v) {
  switch (v.kind()) {
    case Kind::kString: return Value::String(std::string(v.str()));
    case Kind::kBytes: return Value::Bytes(std::string(v.str()));
    case Kind::kSemver: return Value::Semver(std::string(v.str()));
    case Kind::kOptional: return v.has_value() ? Value::OptionalOf(Own(v.optional_value())) : v;
    case Kind::kList: {
      std::vector<Value> out;
      size_t n = ListSize(v);
      for (size_t i = 0; i < n; ++i) out.push_back(Own(ListGet(v, i)));
      return Value::List(std::move(out));
    }
    case Kind::kMap: {
      auto data = std::make_shared<MapData>();
      size_t n = MapSize(v);
      for (size_t i = 0; i < n; ++i) data->entries.emplace_back(Own(MapKeyAt(v, i)), Own(MapValueAt(v, i)));
      data->BuildIndex();
      return Value::Map(std::move(data));
    }
    default: return v;
  }
}

std::unique_ptr<Node> Planner::Fold(std::unique_ptr<Node> n) {
  for (const auto& k : n->kids) {
    if (k->op != Op::kConst) return n;
  }
  EvalContext ctx;
  Evaluator ev(nullptr, ctx);
  Value v = ev.Eval(n.get());
  if (v.is_error()) return n;
  auto c = std::make_unique<Node>();
  c->SetConst(Own(v));
  return c;
}

}  // namespace

// ------------------------------------------------------------------ program

Env Env::Standard() { return Env(); }

Env& Env::AddVariable(std::string name, Type type) {
  variable_types_[name] = type;
  variables_.emplace_back(std::move(name), std::move(type));
  return *this;
}

Program::~Program() = default;

Value Program::Evaluate(std::span<const Value> vars, EvalStats* stats) const {
  alignas(Value) unsigned char small[8 * sizeof(Value)];
  std::vector<Value> big;
  Value* slots;
  if (num_slots_ > 8) {
    big.resize(num_slots_);
    slots = big.data();
  } else {
    slots = reinterpret_cast<Value*>(small);
    size_t nv0 = std::min<size_t>(vars.size(), static_cast<size_t>(num_vars_));
    for (int i = 0; i < num_slots_; ++i) {
      if (static_cast<size_t>(i) < nv0) new (&slots[i]) Value(vars[i]);
      else new (&slots[i]) Value();
    }
  }
  struct Destroy {
    Value* s;
    int n;
    ~Destroy() {
      for (int i = 0; i < n; ++i) s[i].~Value();
    }
  } destroy{slots, num_slots_ > 8 ? 0 : num_slots_};
  size_t nv = std::min<size_t>(vars.size(), static_cast<size_t>(num_vars_));
  if (num_slots_ > 8) {
    for (size_t i = 0; i < nv; ++i) slots[i] = vars[i];
  }
  for (size_t i = nv; i < static_cast<size_t>(num_vars_); ++i) {
    slots[i] = Value::Error("no such attribute: unbound variable");
  }
  EvalContext ctx;
  ctx.cost_limit = cost_limit_;
  Evaluator ev(slots, ctx);
  Value r = ev.Eval(root_.get());
  if (stats != nullptr) stats->cost = ctx.cost;
  if (ctx.cost > ctx.cost_limit) return CostLimitError();
  return r;
}

absl::StatusOr<std::shared_ptr<const Program>> Compile(std::string_view source, const Env& env) {
  auto parsed = Parse(source, env.parse);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(StrCat(env.error_prefix, parsed.status().message()));
  }
  ExprPtr root = std::move(parsed).value();
  CheckOptions copts;
  copts.homogeneous_literals = env.homogeneous_literals;
  copts.validate_regex_literals = env.validate_regex_literals;
  copts.container = env.container;
  copts.variables = &env.variable_types();
  copts.objects = &env.objects;
  CheckResult checked = Check(root.get(), source, copts);
  if (env.check && !checked.errors.empty()) {
    return absl::InvalidArgumentError(StrCat(env.error_prefix, absl::StrJoin(checked.errors, "\n")));
  }
  if (env.check && env.require_bool_result && checked.type.kind != TypeKind::kBool &&
      checked.type.kind != TypeKind::kDyn) {
    return absl::InvalidArgumentError(StrCat(
        env.error_prefix, "must evaluate to bool or the unknown type, not ", FormatType(checked.type)));
  }
  auto program = std::shared_ptr<Program>(new Program());
  program->source_ = std::string(source);
  program->result_type_ = env.check ? checked.type : Type::Dyn();
  Planner planner(env);
  program->root_ = planner.Plan(root.get());
  program->num_slots_ = planner.num_slots();
  program->num_vars_ = static_cast<int>(env.variables().size());
  program->cost_limit_ = env.cost_limit;
  return std::shared_ptr<const Program>(std::move(program));
}

absl::StatusOr<std::shared_ptr<const Program>> ProgramCache::Get(std::string_view source) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(AsAbsl(source));
  if (it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }
  auto compiled = Compile(source, env_);
  lru_.emplace_front(std::string(source), compiled);
  index_[lru_.front().first] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return compiled;
}

absl::Status ErrorToStatus(const Value& v) {
  if (!v.is_error()) return absl::OkStatus();
  return absl::InvalidArgumentError(v.error_message());
}

}  // namespace gantry::cel
