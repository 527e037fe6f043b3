// YAML input for the object decoders.
//
// Every decoder reads JSON (a simdjson DOM). YAML documents are converted to
// JSON text here, resolving plain scalars by the YAML 1.2 core schema (null,
// true/false, integers incl. 0x/0o, floats incl. .inf/.nan); quoted scalars
// always stay strings. The parsed YAML tree is kept so that a decode error's
// field path can be mapped back to a line and column in the source file.
//
// Every YAML input Gantry reads (snapshots, the scheduler configuration,
// kubeconfig files, what-if objects) goes through this file, which enforces
// an expansion budget (YamlLimits): aliases let a few hundred bytes stand
// for billions of nodes ("billion laughs"), so the number of aliases, the
// nodes and bytes they expand to, and the nesting depth are bounded before
// anything is expanded.
//
// yaml-cpp throws; no exception leaves this file.
#ifndef GANTRY_SRC_API_YAML_H_
#define GANTRY_SRC_API_YAML_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "src/api/decode.h"

namespace gantry::api {

// 1-based source position.
struct SourcePosition {
  int line = 0;
  int column = 0;
};

// The expansion budget of one YAML stream. The defaults leave room for any
// real snapshot or configuration; they are not meant to be tuned.
struct YamlLimits {
  // Alias nodes (`*name`) in the stream.
  int64_t max_aliases = 100'000;
  // Nodes and scalar bytes that aliases stand for, summed over every alias
  // use with nested aliases expanded (the document's own text is bounded by
  // its size already).
  int64_t max_alias_nodes = 1'000'000;
  int64_t max_alias_bytes = 64LL << 20;
  // Nesting of maps and sequences, with aliases expanded.
  int max_depth = 200;
};

// Checks `text` against `limits` without expanding any alias. The error is
// InvalidArgument "line:column: ..." naming the alias (or the node) that
// went past the budget, and the limit; a syntax error is reported the same
// way. Readers that parse YAML themselves (kubeconfig) call this first.
absl::Status CheckYamlBudget(std::string_view text, const YamlLimits& limits = {});

// One parsed YAML document with its JSON rendering.
class YamlDocument {
 public:
  ~YamlDocument();
  YamlDocument(YamlDocument&&) noexcept;
  YamlDocument& operator=(YamlDocument&&) noexcept;

  // The document rendered as JSON text ("null" for an empty document).
  const std::string& json() const { return json_; }
  bool empty() const { return empty_; }
  // Position of the document's first node.
  SourcePosition start() const { return start_; }
  // Position of the deepest node reachable along `path` (its value node).
  SourcePosition Resolve(const std::vector<PathSegment>& path) const;

 private:
  friend absl::StatusOr<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text,
                                                                      const YamlLimits& limits);
  YamlDocument();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string json_;
  bool empty_ = false;
  SourcePosition start_;
};

// Parses a multi-document YAML stream within `limits` (CheckYamlBudget).
// Syntax and budget errors are InvalidArgument with "line:column: message".
absl::StatusOr<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text,
                                                             const YamlLimits& limits = {});

// Maps a field path to a position in JSON source text (used only on the
// error path, so it re-parses `json_text`). Returns {0,0} when unknown.
SourcePosition ResolveJsonPosition(std::string_view json_text, const std::vector<PathSegment>& path);

// Converts a byte offset in `text` to a 1-based line and column.
SourcePosition OffsetToPosition(std::string_view text, size_t offset);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_YAML_H_
