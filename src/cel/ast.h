// Abstract syntax tree of a parsed CEL expression.
//
// The parser produces a tree of `Expr` nodes; macros (has, all, exists,
// exists_one, map, filter, two-variable comprehensions, cel.bind, optMap, ...)
// are expanded at parse time into `kComprehension` nodes tagged with the macro
// kind, so the checker and the evaluator never see macro calls. Operators are
// calls with CEL's internal names (`_+_`, `_&&_`, `@in`, ...). `_&&_` and
// `_||_` are n-ary so that long chains stay shallow.
#ifndef GANTRY_SRC_CEL_AST_H_
#define GANTRY_SRC_CEL_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gantry::cel {

enum class ConstKind : uint8_t { kNull, kBool, kInt, kUint, kDouble, kString, kBytes };

struct Constant {
  ConstKind kind = ConstKind::kNull;
  bool bool_value = false;
  int64_t int_value = 0;
  uint64_t uint_value = 0;
  double double_value = 0;
  std::string string_value;  // string (UTF-8) or bytes payload
};

enum class ExprKind : uint8_t {
  kConst,
  kIdent,   // name (possibly dotted after resolution), `absolute` for `.x`
  kSelect,  // target.name; test_only for has(); optional for `.?`
  kCall,    // name(args) or target.name(args)
  kList,    // args = elements; optional_elems marks `?e`
  kMap,     // args = k0, v0, k1, v1 ...; optional_elems[i] marks entry i `?k: v`
  kComprehension,
};

// Macro comprehensions. Semantics are implemented directly by the evaluator.
enum class MacroKind : uint8_t {
  kAll,             // range.all(x, p)  /  all(k, v, p)
  kExists,          // range.exists(x, p)
  kExistsOne,       // range.exists_one(x, p) / existsOne
  kMap,             // range.map(x, f)
  kMapFilter,       // range.map(x, p, f)
  kFilter,          // range.filter(x, p)
  kTransformList,   // range.transformList(i, v, f) or (i, v, p, f)
  kTransformMap,    // range.transformMap(k, v, f) or (k, v, p, f)
  kTransformMapEntry,
  kBind,            // cel.bind(x, init, body): iter_var = x, args = {init, body}
  kOptMap,          // opt.optMap(x, f)
  kOptFlatMap,      // opt.optFlatMap(x, f)
  kSortBy,          // list.sortBy(x, key)
};

struct Expr {
  ExprKind kind = ExprKind::kConst;
  int32_t offset = 0;    // byte offset in the source, for error locations
  int32_t depth = 1;     // height of the subtree (1 for leaves)
  int32_t id = 0;        // unique per expression, assigned by the parser
  Constant constant;     // kConst
  std::string name;      // ident / select field / function name
  bool test_only = false;        // kSelect inside has()
  bool optional_select = false;  // kSelect `.?name`
  bool absolute = false;         // kIdent written with a leading dot
  std::unique_ptr<Expr> target;  // select operand, receiver, or comprehension range
  std::vector<std::unique_ptr<Expr>> args;
  std::vector<bool> optional_elems;  // kList / kMap
  // kComprehension
  MacroKind macro = MacroKind::kAll;
  std::string iter_var;
  std::string iter_var2;  // two-variable forms; empty otherwise
  bool has_filter = false;  // map(x, p, f), transformList(i, v, p, f), ...
};

using ExprPtr = std::unique_ptr<Expr>;

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_AST_H_
