// CEL type checker. See checker.h.
#include "src/cel/checker.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "absl/strings/str_join.h"
#include "src/cel/functions.h"
#include "src/cel/parser.h"

namespace gantry::cel {
namespace {

using Subst = absl::flat_hash_map<std::string, Type>;

bool IsAssignable(const Type& decl, const Type& actual, Subst& s);

Type Substitute(const Type& t, const Subst& s) {
  if (t.kind == TypeKind::kParam) {
    auto it = s.find(t.name);
    return it == s.end() ? Type::Dyn() : Substitute(it->second, s);
  }
  Type out = t;
  for (auto& p : out.params) p = Substitute(p, s);
  return out;
}

bool IsAssignable(const Type& decl, const Type& actual, Subst& s) {
  if (actual.kind == TypeKind::kError || decl.kind == TypeKind::kError) return true;
  if (decl.kind == TypeKind::kParam) {
    auto it = s.find(decl.name);
    if (it == s.end()) {
      s[decl.name] = actual;
      return true;
    }
    Type bound = it->second;
    if (IsAssignable(bound, actual, s)) return true;
    Subst tmp = s;
    if (IsAssignable(actual, bound, tmp)) {
      s[decl.name] = actual;
      return true;
    }
    return false;
  }
  if (decl.kind == TypeKind::kDyn || actual.kind == TypeKind::kDyn) return true;
  if (actual.kind == TypeKind::kParam) return true;
  if (decl.kind != actual.kind) return false;
  switch (decl.kind) {
    case TypeKind::kType: return true;
    case TypeKind::kList:
    case TypeKind::kMap:
    case TypeKind::kOptional:
      for (size_t i = 0; i < decl.params.size(); ++i) {
        if (!IsAssignable(decl.params[i], actual.params[i], s)) return false;
      }
      return true;
    case TypeKind::kOpaque:
    case TypeKind::kObject: return decl.name == actual.name;
    default: return true;
  }
}

bool IsTypeName(std::string_view n, Type* t) {
  static const std::pair<std::string_view, TypeKind> kNames[] = {
      {"int", TypeKind::kInt},       {"uint", TypeKind::kUint},     {"double", TypeKind::kDouble},
      {"bool", TypeKind::kBool},     {"string", TypeKind::kString}, {"bytes", TypeKind::kBytes},
      {"null_type", TypeKind::kNull}};
  for (const auto& [name, kind] : kNames) {
    if (n == name) {
      *t = Type::TypeOf(Type::Of(kind));
      return true;
    }
  }
  if (n == "list") { *t = Type::TypeOf(Type::List(Type::Dyn())); return true; }
  if (n == "map") { *t = Type::TypeOf(Type::Map(Type::Dyn(), Type::Dyn())); return true; }
  if (n == "type") { *t = Type::TypeOf(Type::TypeOf(Type::Dyn())); return true; }
  if (n == "optional_type") { *t = Type::TypeOf(Type::Optional(Type::Dyn())); return true; }
  return false;
}

class Checker {
 public:
  Checker(std::string_view source, const CheckOptions& opts) : source_(source), opts_(opts) {}

  CheckResult Run(Expr* root) {
    CheckResult r;
    r.type = CheckExpr(root);
    r.errors = std::move(errors_);
    r.types = std::move(types_);
    return r;
  }

 private:
  void Error(const Expr* e, std::string msg) {
    if (errors_.size() < 20) errors_.push_back(FormatDiagnostic(source_, e->offset, msg));
  }

  Type Set(const Expr* e, Type t) {
    types_[e->id] = t;
    return t;
  }

  std::optional<Type> FindLocal(std::string_view name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->first == name) return it->second;
    }
    return std::nullopt;
  }

  // Resolves `name` against declared variables using the container rules.
  // Returns the declared (full) name.
  std::optional<std::string> ResolveVariable(std::string_view name, bool absolute) const {
    if (opts_.variables == nullptr) return std::nullopt;
    if (!absolute && !opts_.container.empty()) {
      std::string prefix = opts_.container;
      while (true) {
        std::string candidate = StrCat(prefix, ".", name);
        if (opts_.variables->contains(candidate)) return candidate;
        size_t dot = prefix.rfind('.');
        if (dot == std::string::npos) break;
        prefix.resize(dot);
      }
    }
    if (opts_.variables->contains(AsAbsl(name))) return std::string(name);
    return std::nullopt;
  }

  // If `e` is a chain of selections rooted at an identifier (a.b.c), returns
  // the dotted name and the root ident.
  static bool QualifiedName(const Expr* e, std::string* out, const Expr** root) {
    if (e->kind == ExprKind::kIdent) {
      *out = e->name;
      *root = e;
      return true;
    }
    if (e->kind == ExprKind::kSelect && !e->test_only && !e->optional_select) {
      if (!QualifiedName(e->target.get(), out, root)) return false;
      StrAppend(out, ".", e->name);
      return true;
    }
    return false;
  }

  // Tries to turn a select chain into a qualified variable reference.
  bool TryQualifiedIdent(Expr* e) {
    std::string qname;
    const Expr* root = nullptr;
    if (!QualifiedName(e, &qname, &root)) return false;
    if (!root->absolute && FindLocal(root->name)) return false;
    std::optional<std::string> var = ResolveVariable(qname, root->absolute);
    if (!var) return false;
    bool absolute = root->absolute;
    e->kind = ExprKind::kIdent;
    e->name = *var;
    e->absolute = absolute;
    e->target.reset();
    e->depth = 1;
    return true;
  }

  Type CheckExpr(Expr* e) {
    switch (e->kind) {
      case ExprKind::kConst: return Set(e, ConstType(e->constant));
      case ExprKind::kIdent: return Set(e, CheckIdent(e));
      case ExprKind::kSelect: return Set(e, CheckSelect(e));
      case ExprKind::kCall: return Set(e, CheckCall(e));
      case ExprKind::kList: return Set(e, CheckList(e));
      case ExprKind::kMap: return Set(e, CheckMap(e));
      case ExprKind::kComprehension: return Set(e, CheckComprehension(e));
    }
    return Type::Error();
  }

  static Type ConstType(const Constant& c) {
    switch (c.kind) {
      case ConstKind::kNull: return Type::Of(TypeKind::kNull);
      case ConstKind::kBool: return Type::Of(TypeKind::kBool);
      case ConstKind::kInt: return Type::Of(TypeKind::kInt);
      case ConstKind::kUint: return Type::Of(TypeKind::kUint);
      case ConstKind::kDouble: return Type::Of(TypeKind::kDouble);
      case ConstKind::kString: return Type::Of(TypeKind::kString);
      case ConstKind::kBytes: return Type::Of(TypeKind::kBytes);
    }
    return Type::Dyn();
  }

  Type CheckIdent(Expr* e) {
    if (!e->absolute) {
      if (auto t = FindLocal(e->name)) return *t;
    }
    if (auto var = ResolveVariable(e->name, e->absolute)) {
      e->name = *var;
      return opts_.variables->at(*var);
    }
    Type t;
    if (IsTypeName(e->name, &t)) return t;
    Error(e, StrCat("undeclared reference to '", e->name, "' (in container '", opts_.container, "')"));
    return Type::Error();
  }

  Type FieldType(const Expr* e, const Type& operand, const std::string& field) {
    switch (operand.kind) {
      case TypeKind::kMap: return operand.params[1];
      case TypeKind::kDyn:
      case TypeKind::kError:
      case TypeKind::kParam: return Type::Dyn();
      case TypeKind::kObject: {
        if (opts_.objects != nullptr) {
          auto it = opts_.objects->find(operand.name);
          if (it != opts_.objects->end()) {
            auto f = it->second.find(field);
            if (f != it->second.end()) return f->second;
          }
        }
        Error(e, StrCat("undefined field '", field, "'"));
        return Type::Error();
      }
      default:
        Error(e, StrCat("type '", FormatType(operand), "' does not support field selection"));
        return Type::Error();
    }
  }

  Type CheckSelect(Expr* e) {
    if (!e->test_only && !e->optional_select && TryQualifiedIdent(e)) return CheckIdent(e);
    Type operand = CheckExpr(e->target.get());
    bool wrap = false;
    if (operand.kind == TypeKind::kOptional) {
      operand = operand.params[0];
      wrap = true;
    }
    Type ft = FieldType(e, operand, e->name);
    if (e->test_only) return Type::Of(TypeKind::kBool);
    if (e->optional_select || wrap) {
      return Type::Optional(ft);
    }
    return ft;
  }

  Type Join(const Expr* e, const std::optional<Type>& prev, const Type& cur) {
    if (!prev) return cur;
    Subst s;
    if (IsAssignable(*prev, cur, s)) {
      Subst s2;
      // Most general of the two.
      if (prev->kind == TypeKind::kDyn || cur.kind == TypeKind::kError) return *prev;
      if (cur.kind == TypeKind::kDyn) return cur;
      return *prev;
    }
    if (!opts_.homogeneous_literals || in_format_ > 0) return Type::Dyn();
    Error(e, StrCat("expected type '", FormatType(*prev), "' but found '", FormatType(cur), "'"));
    return *prev;
  }

  Type CheckList(Expr* e) {
    std::optional<Type> elem;
    for (size_t i = 0; i < e->args.size(); ++i) {
      Type t = CheckExpr(e->args[i].get());
      if (e->optional_elems[i]) {
        if (t.kind == TypeKind::kOptional) {
          t = t.params[0];
        } else if (t.kind != TypeKind::kDyn && t.kind != TypeKind::kError) {
          Error(e->args[i].get(), StrCat("expected type 'optional_type' but found '", FormatType(t), "'"));
        }
      }
      elem = Join(e->args[i].get(), elem, t);
    }
    return Type::List(elem ? *elem : Type::Dyn());
  }

  Type CheckMap(Expr* e) {
    std::optional<Type> key, val;
    for (size_t i = 0; i + 1 < e->args.size(); i += 2) {
      Type k = CheckExpr(e->args[i].get());
      Type v = CheckExpr(e->args[i + 1].get());
      switch (k.kind) {
        case TypeKind::kString: case TypeKind::kInt: case TypeKind::kUint: case TypeKind::kBool:
        case TypeKind::kDyn: case TypeKind::kError: case TypeKind::kParam:
          break;
        default:
          Error(e->args[i].get(), StrCat("unsupported map key type: ", FormatType(k)));
      }
      if (e->optional_elems[i / 2]) {
        if (v.kind == TypeKind::kOptional) {
          v = v.params[0];
        } else if (v.kind != TypeKind::kDyn && v.kind != TypeKind::kError) {
          Error(e->args[i + 1].get(), StrCat("expected type 'optional_type' but found '", FormatType(v), "'"));
        }
      }
      key = Join(e->args[i].get(), key, k);
      val = Join(e->args[i + 1].get(), val, v);
    }
    return Type::Map(key ? *key : Type::Dyn(), val ? *val : Type::Dyn());
  }

  std::string ArgList(const std::vector<Type>& types, bool member) {
    std::vector<std::string> parts;
    for (size_t i = member ? 1 : 0; i < types.size(); ++i) parts.push_back(FormatType(types[i]));
    std::string args = StrCat("(", absl::StrJoin(parts, ", "), ")");
    if (member) return StrCat(FormatType(types[0]), ".", args);
    return args;
  }

  void ValidateRegex(Expr* e) {
    if (!opts_.validate_regex_literals) return;
    const Expr* pattern = nullptr;
    if ((e->name == "matches" || e->name == "find" || e->name == "findAll")) {
      if (e->target && !e->args.empty()) pattern = e->args[0].get();
      else if (!e->target && e->args.size() == 2 && e->name == "matches") pattern = e->args[1].get();
    }
    if (pattern == nullptr || pattern->kind != ExprKind::kConst ||
        pattern->constant.kind != ConstKind::kString) {
      return;
    }
    std::string err;
    if (CompileRegex(pattern->constant.string_value, &err) == nullptr) {
      Error(pattern, StrCat("invalid regex pattern: ", err));
    }
  }

  Type CheckCall(Expr* e) {
    // `a.b.f(x)` where `a.b.f` is a global function (e.g. optional.of).
    if (e->target) {
      std::string qname;
      const Expr* root = nullptr;
      if (QualifiedName(e->target.get(), &qname, &root) && !FindLocal(root->name) &&
          !ResolveVariable(qname, root->absolute)) {
        std::string fname = StrCat(qname, ".", e->name);
        if (Functions().Find(fname) != nullptr) {
          e->name = fname;
          e->target.reset();
        }
      }
    }
    std::vector<Type> arg_types;
    if (e->target) arg_types.push_back(CheckExpr(e->target.get()));
    // Literals inside string format() arguments may mix types (cel-go exempts them).
    bool is_format = e->name == "format" && e->target != nullptr;
    if (is_format) ++in_format_;
    for (auto& a : e->args) arg_types.push_back(CheckExpr(a.get()));
    if (is_format) --in_format_;
    ValidateRegex(e);

    if (e->name == "_&&_" || e->name == "_||_") {
      Subst s;
      for (size_t i = 0; i < arg_types.size(); ++i) {
        if (!IsAssignable(Type::Of(TypeKind::kBool), arg_types[i], s)) {
          Error(e, StrCat("found no matching overload for '", e->name, "' applied to '",
                                ArgList(arg_types, false), "'"));
          return Type::Error();
        }
      }
      return Type::Of(TypeKind::kBool);
    }
    const FunctionDef* def = Functions().Find(e->name);
    if (def == nullptr) {
      Error(e, StrCat("undeclared reference to '", e->name, "' (in container '", opts_.container, "')"));
      return Type::Error();
    }
    bool member = e->target != nullptr;
    std::optional<Type> result;
    bool any = false;
    for (const Signature& sig : def->overloads) {
      if (sig.member != member || sig.args.size() != arg_types.size()) continue;
      Subst s;
      bool ok = true;
      for (size_t i = 0; i < arg_types.size() && ok; ++i) ok = IsAssignable(sig.args[i], arg_types[i], s);
      if (!ok) continue;
      Type r = Substitute(sig.result, s);
      if (!any) {
        result = r;
        any = true;
      } else if (*result != r) {
        result = Type::Dyn();
      }
    }
    if (!any) {
      Error(e, StrCat("found no matching overload for '", e->name, "' applied to '",
                            ArgList(arg_types, member), "'"));
      return Type::Error();
    }
    return *result;
  }

  Type CheckComprehension(Expr* e) {
    Type range = CheckExpr(e->target.get());
    Type v1, v2;
    bool two = !e->iter_var2.empty();
    switch (e->macro) {
      case MacroKind::kBind: {
        scopes_.emplace_back(e->iter_var, range);
        Type body = CheckExpr(e->args[0].get());
        scopes_.pop_back();
        return body;
      }
      case MacroKind::kOptMap:
      case MacroKind::kOptFlatMap: {
        Type inner = Type::Dyn();
        if (range.kind == TypeKind::kOptional) {
          inner = range.params[0];
        } else if (range.kind != TypeKind::kDyn && range.kind != TypeKind::kError) {
          Error(e, StrCat("found no matching overload for '", e->macro == MacroKind::kOptMap ? "optMap" : "optFlatMap",
                                "' applied to '", FormatType(range), "'"));
          return Type::Error();
        }
        scopes_.emplace_back(e->iter_var, inner);
        Type body = CheckExpr(e->args[0].get());
        scopes_.pop_back();
        if (e->macro == MacroKind::kOptMap) return Type::Optional(body);
        if (body.kind == TypeKind::kOptional || body.kind == TypeKind::kDyn || body.kind == TypeKind::kError) {
          return body.kind == TypeKind::kOptional ? body : Type::Optional(Type::Dyn());
        }
        Error(e->args[0].get(), StrCat("expected type 'optional_type' but found '", FormatType(body), "'"));
        return Type::Error();
      }
      default: break;
    }
    switch (range.kind) {
      case TypeKind::kList:
        if (two) {
          v1 = Type::Of(TypeKind::kInt);
          v2 = range.params[0];
        } else {
          v1 = range.params[0];
        }
        break;
      case TypeKind::kMap:
        v1 = range.params[0];
        v2 = range.params[1];
        break;
      case TypeKind::kDyn:
      case TypeKind::kError:
        break;
      default:
        Error(e->target.get(), StrCat("expression of type '", FormatType(range),
                                            "' cannot be range of a comprehension (must be list, map, or dynamic)"));
        range = Type::Error();
    }
    scopes_.emplace_back(e->iter_var, v1);
    if (two) scopes_.emplace_back(e->iter_var2, v2);
    std::vector<Type> body;
    for (auto& a : e->args) body.push_back(CheckExpr(a.get()));
    scopes_.pop_back();
    if (two) scopes_.pop_back();
    auto require_bool = [&](size_t i) {
      Subst s;
      if (!IsAssignable(Type::Of(TypeKind::kBool), body[i], s)) {
        Error(e->args[i].get(), StrCat("expected type 'bool' but found '", FormatType(body[i]), "'"));
      }
    };
    switch (e->macro) {
      case MacroKind::kAll:
      case MacroKind::kExists:
      case MacroKind::kExistsOne:
        require_bool(0);
        return Type::Of(TypeKind::kBool);
      case MacroKind::kMap:
        return Type::List(body[0]);
      case MacroKind::kMapFilter:
        require_bool(0);
        return Type::List(body[1]);
      case MacroKind::kFilter:
        require_bool(0);
        return Type::List(v1);
      case MacroKind::kTransformList:
        if (e->has_filter) require_bool(0);
        return Type::List(body.back());
      case MacroKind::kTransformMap:
        if (e->has_filter) require_bool(0);
        return Type::Map(range.kind == TypeKind::kList ? Type::Of(TypeKind::kInt) : v1, body.back());
      case MacroKind::kTransformMapEntry: {
        if (e->has_filter) require_bool(0);
        const Type& t = body.back();
        if (t.kind == TypeKind::kMap) return t;
        if (t.kind != TypeKind::kDyn && t.kind != TypeKind::kError) {
          Error(e->args.back().get(), StrCat("expected type 'map' but found '", FormatType(t), "'"));
        }
        return Type::Map(Type::Dyn(), Type::Dyn());
      }
      case MacroKind::kSortBy:
        return range.kind == TypeKind::kList ? range : Type::List(Type::Dyn());
      default:
        return Type::Dyn();
    }
  }

  std::string_view source_;
  const CheckOptions& opts_;
  std::vector<std::string> errors_;
  absl::flat_hash_map<int, Type> types_;
  std::vector<std::pair<std::string, Type>> scopes_;
  int in_format_ = 0;
};

}  // namespace

CheckResult Check(Expr* root, std::string_view source, const CheckOptions& options) {
  Checker c(source, options);
  return c.Run(root);
}

}  // namespace gantry::cel
