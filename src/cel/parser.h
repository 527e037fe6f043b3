// CEL parser: source text -> AST (src/cel/ast.h), with macro expansion.
//
// Limits protect against hostile input: the source may be at most
// `ParseOptions::max_source_bytes` long (default 10 KiB, Kubernetes'
// CELSelectorExpressionMaxLength) and the AST at most
// `ParseOptions::max_depth` deep. Errors are InvalidArgument statuses whose
// message is formatted like cel-go's:
//
//   ERROR: <input>:1:5: Syntax error: mismatched input ...
//    | a + + b
//    | ....^
#ifndef GANTRY_SRC_CEL_PARSER_H_
#define GANTRY_SRC_CEL_PARSER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "src/cel/ast.h"

namespace gantry::cel {

struct ParseOptions {
  size_t max_source_bytes = 10 * 1024;
  int max_depth = 250;
  bool enable_macros = true;
};

// Parses `source`. On success returns the root; never crashes on any input.
absl::StatusOr<ExprPtr> Parse(std::string_view source, const ParseOptions& options = {});

// Formats one diagnostic at byte `offset` of `source`, cel-go style
// ("ERROR: <input>:L:C: msg" followed by the source line and a caret line).
std::string FormatDiagnostic(std::string_view source, int offset, std::string_view message);

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_PARSER_H_
