// CEL type checker.
//
// Besides computing types, the checker resolves names in place: qualified
// identifiers written as selections (`a.b.c`) become one kIdent with the
// declared name, container-relative names get their full name, and calls
// such as `optional.of(x)` become global calls. The evaluator relies on this,
// so Check() runs even when type errors are to be ignored
// (conformance tests with `disable_check`).
#ifndef GANTRY_SRC_CEL_CHECKER_H_
#define GANTRY_SRC_CEL_CHECKER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/cel/ast.h"
#include "src/cel/types.h"

namespace gantry::cel {

struct CheckOptions {
  // Kubernetes' HomogeneousAggregateLiterals: list/map literal elements must
  // share one type (otherwise the elements join to dyn).
  bool homogeneous_literals = true;
  // Kubernetes' ValidateRegexLiterals: constant patterns must compile.
  bool validate_regex_literals = true;
  std::string container;
  const absl::flat_hash_map<std::string, Type>* variables = nullptr;
  // Object types with their fields (e.g. kubernetes.DRADevice).
  const absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, Type>>* objects = nullptr;
};

struct CheckResult {
  Type type;
  std::vector<std::string> errors;  // formatted diagnostics, empty on success
  // Type of every expression by Expr::id (used by the planner, e.g. for
  // distinguishing type identifiers).
  absl::flat_hash_map<int, Type> types;
};

CheckResult Check(Expr* root, std::string_view source, const CheckOptions& options);

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_CHECKER_H_
