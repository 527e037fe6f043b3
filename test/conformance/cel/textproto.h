// Minimal schema-less reader for protobuf text format, enough for the
// cel-spec conformance files (cel.expr.conformance.test.SimpleTestFile).
// Produces a tree of named fields; scalars keep their decoded text.
#ifndef GANTRY_TEST_CONFORMANCE_CEL_TEXTPROTO_H_
#define GANTRY_TEST_CONFORMANCE_CEL_TEXTPROTO_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::cel::testing {

struct TextNode {
  std::string name;
  bool is_message = false;
  bool is_string = false;   // scalar was a quoted string (bytes, already unescaped)
  std::string scalar;       // identifier, number or string bytes
  std::vector<TextNode> children;

  // First child with `name`, or null.
  const TextNode* Get(std::string_view field) const;
  std::vector<const TextNode*> All(std::string_view field) const;
  std::string_view Str(std::string_view field) const;  // "" when absent
  bool Bool(std::string_view field) const;
};

// Parses a whole text-format message. Errors carry the line number.
absl::StatusOr<TextNode> ParseTextProto(std::string_view text);

}  // namespace gantry::cel::testing

#endif  // GANTRY_TEST_CONFORMANCE_CEL_TEXTPROTO_H_
