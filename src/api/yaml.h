// YAML input for the object decoders.
//
// Every decoder reads JSON (a simdjson DOM). YAML documents are converted to
// JSON text here, resolving plain scalars by the YAML 1.2 core schema (null,
// true/false, integers incl. 0x/0o, floats incl. .inf/.nan); quoted scalars
// always stay strings. The parsed YAML tree is kept so that a decode error's
// field path can be mapped back to a line and column in the source file.
//
// yaml-cpp throws; no exception leaves this file.
#ifndef GANTRY_SRC_API_YAML_H_
#define GANTRY_SRC_API_YAML_H_

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
  friend absl::StatusOr<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text);
  YamlDocument();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string json_;
  bool empty_ = false;
  SourcePosition start_;
};

// Parses a multi-document YAML stream. Syntax errors are InvalidArgument
// with "line:column: message".
absl::StatusOr<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text);

// Maps a field path to a position in JSON source text (used only on the
// error path, so it re-parses `json_text`). Returns {0,0} when unknown.
SourcePosition ResolveJsonPosition(std::string_view json_text, const std::vector<PathSegment>& path);

// Converts a byte offset in `text` to a 1-based line and column.
SourcePosition OffsetToPosition(std::string_view text, size_t offset);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_YAML_H_
