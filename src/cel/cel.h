// Public entry point of Gantry's CEL engine (library gantry_cel).
//
//   Env env = Env::Standard();                 // or DraSelectorEnv()
//   env.AddVariable("x", Type::Of(TypeKind::kInt));
//   auto program = Compile("x + 1 > 2", env);  // parse + check + plan
//   Value v = (*program)->Evaluate({Value::Int(3)});
//
// Compile() parses (size and depth limited), type-checks (always, unless the
// Env disables it for conformance tests) and plans the expression: names are
// resolved to slots, constant sub-expressions such as `quantity("40Gi")` are
// folded, and constant regex patterns are compiled once. A Program is
// immutable and thread-safe; Evaluate() allocates nothing for typical
// selectors. Runtime cost is tracked and bounded by Env::cost_limit.
#ifndef GANTRY_SRC_CEL_CEL_H_
#define GANTRY_SRC_CEL_CEL_H_

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "src/cel/parser.h"
#include "src/cel/types.h"
#include "src/cel/value.h"

namespace gantry::cel {

struct Node;  // planned expression (program.cc)

// Compile-time environment: declared variables and options.
class Env {
 public:
  // Plain CEL with every library Gantry supports and Kubernetes' options
  // (homogeneous aggregate literals, regex literal validation, cost limit
  // 1,000,000).
  static Env Standard();

  // Declares a variable. Variables are bound by position at evaluation, in
  // declaration order.
  Env& AddVariable(std::string name, Type type);

  ParseOptions parse;
  bool check = true;                 // false: type errors are ignored
  bool homogeneous_literals = true;
  bool validate_regex_literals = true;
  bool require_bool_result = false;  // DRA: result must be bool or dyn
  std::string error_prefix;          // e.g. "compilation failed: "
  std::string container;
  uint64_t cost_limit = 1000000;

  const std::vector<std::pair<std::string, Type>>& variables() const { return variables_; }
  const absl::flat_hash_map<std::string, Type>& variable_types() const { return variable_types_; }
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, Type>> objects;

 private:
  std::vector<std::pair<std::string, Type>> variables_;
  absl::flat_hash_map<std::string, Type> variable_types_;
};

struct EvalStats {
  uint64_t cost = 0;
};

class Program {
 public:
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Evaluates with `vars` bound to the Env's variables in declaration order
  // (missing trailing variables evaluate to an error when referenced).
  // Runtime failures come back as an error Value.
  Value Evaluate(std::span<const Value> vars, EvalStats* stats = nullptr) const;

  const Type& result_type() const { return result_type_; }
  const std::string& source() const { return source_; }
  uint64_t cost_limit() const { return cost_limit_; }

 private:
  friend absl::StatusOr<std::shared_ptr<const Program>> Compile(std::string_view, const Env&);
  Program() = default;

  std::string source_;
  Type result_type_;
  std::unique_ptr<Node> root_;
  int num_slots_ = 0;
  int num_vars_ = 0;
  uint64_t cost_limit_ = 0;
};

// Parses, checks and plans `source`. Errors are InvalidArgument with
// cel-go style diagnostics (line:column and a caret line).
absl::StatusOr<std::shared_ptr<const Program>> Compile(std::string_view source, const Env& env);

// Thread-safe LRU cache of compiled programs keyed by expression text
// (compile errors are cached too). All programs share one Env.
class ProgramCache {
 public:
  ProgramCache(Env env, size_t capacity = 256) : env_(std::move(env)), capacity_(capacity) {}
  absl::StatusOr<std::shared_ptr<const Program>> Get(std::string_view source);
  const Env& env() const { return env_; }

 private:
  using Entry = std::pair<std::string, absl::StatusOr<std::shared_ptr<const Program>>>;
  Env env_;
  size_t capacity_;
  std::mutex mu_;
  std::list<Entry> lru_;  // most recent first
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> index_;
};

// Converts an error Value to a Status (InvalidArgument with its message);
// non-error values give OkStatus.
absl::Status ErrorToStatus(const Value& v);

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_CEL_H_
