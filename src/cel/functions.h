// Registry of CEL functions: checker signatures plus one runtime dispatcher
// per function name. Libraries (standard, strings, lists, sets, regex,
// quantity, semver, DRA) register themselves into the process-wide registry
// on first use. Dispatchers switch on argument kinds at run time and return
// a "no such overload" error value when none applies.
#ifndef GANTRY_SRC_CEL_FUNCTIONS_H_
#define GANTRY_SRC_CEL_FUNCTIONS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/cel/types.h"
#include "src/cel/value.h"

namespace re2 {
class RE2;
}

namespace gantry::cel {

// Per-evaluation state shared with library functions.
struct EvalContext {
  uint64_t cost = 0;
  uint64_t cost_limit = UINT64_MAX;
  // Adds `n` to the cost; false (and an error is due) once over the limit.
  bool Charge(uint64_t n) {
    cost += n;
    return cost <= cost_limit;
  }
};

Value CostLimitError();

using Fn = Value (*)(EvalContext& ctx, const Value* args, size_t n);

struct FunctionDef {
  std::string name;
  std::vector<Signature> overloads;
  Fn fn = nullptr;
};

class FunctionRegistry {
 public:
  // Adds an overload (signature in the types.h mini-language). All overloads
  // of one name share the dispatcher `fn` (the last non-null one wins).
  void Add(std::string_view name, std::string_view signature, Fn fn);
  const FunctionDef* Find(std::string_view name) const;

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<FunctionDef>> defs_;
};

// The process-wide registry with every library Gantry supports.
const FunctionRegistry& Functions();

// Library registration (one per source file).
void RegisterStandardLibrary(FunctionRegistry& r);
void RegisterStringsLibrary(FunctionRegistry& r);
void RegisterListsLibrary(FunctionRegistry& r);
void RegisterRegexLibrary(FunctionRegistry& r);
void RegisterKubernetesLibrary(FunctionRegistry& r);  // quantity, semver, includes

// Regex helpers shared by the planner (constant patterns are compiled once).
// Returns null and sets *error when `pattern` is not valid RE2 syntax.
std::shared_ptr<const re2::RE2> CompileRegex(std::string_view pattern, std::string* error);
Value RegexMatches(const re2::RE2& re, std::string_view text);
Value RegexFind(const re2::RE2& re, std::string_view text);
Value RegexFindAll(const re2::RE2& re, std::string_view text, int64_t limit);

// Shared helpers for library implementations.
Value StringValueOf(const Value& v);  // string() conversion

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_FUNCTIONS_H_
