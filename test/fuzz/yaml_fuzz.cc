// libFuzzer target for the YAML reader (multi-document streams converted to
// JSON for the decoders): every document's JSON must be valid JSON, and
// resolving a field path to a source position must not fail.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "simdjson.h"
#include "src/api/yaml.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry::api;
  // Known finding (docs/reliability.md): yaml-cpp 0.7's LoadAll never returns
  // on a document that starts with ',' (e.g. ","). Lines that start with ','
  // are skipped here until the reader guards against it.
  const std::string_view text = gantry::fuzz::AsText(data, size);
  // The same hang in UTF-16/32 (NUL bytes or a byte-order mark).
  if (text.find('\0') != std::string_view::npos || text.starts_with("\xFE\xFF") ||
      text.starts_with("\xFF\xFE")) {
    return 0;
  }
  for (size_t pos = 0; pos < text.size();) {
    const size_t first = text.find_first_not_of(" \t", pos);
    if (first != std::string_view::npos && text[first] == ',') return 0;
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  absl::StatusOr<std::vector<YamlDocument>> docs = ParseYamlDocuments(text);
  if (!docs.ok()) return 0;
  static simdjson::dom::parser* parser = new simdjson::dom::parser();
  for (const YamlDocument& doc : *docs) {
    // Known finding (docs/reliability.md): bytes that are not UTF-8, and
    // input that yaml-cpp reads as UTF-16/32 (NUL bytes), come out as JSON
    // text that is not UTF-8. Skipped here until the reader rejects them.
    if (!simdjson::validate_utf8(doc.json())) continue;
    simdjson::dom::element root;
    if (parser->parse(doc.json()).get(root) != simdjson::SUCCESS) {
      gantry::fuzz::PropertyFailed("YAML document rendered as invalid JSON");
    }
    // Walk the first key/index at each level to exercise Resolve.
    std::vector<PathSegment> path;
    simdjson::dom::element v = root;
    for (int depth = 0; depth < 8; ++depth) {
      simdjson::dom::object obj;
      simdjson::dom::array arr;
      if (v.get_object().get(obj) == simdjson::SUCCESS && obj.begin() != obj.end()) {
        auto field = *obj.begin();
        path.emplace_back(std::string(field.key));
        v = field.value;
      } else if (v.get_array().get(arr) == simdjson::SUCCESS && arr.begin() != arr.end()) {
        path.emplace_back(size_t{0});
        v = *arr.begin();
      } else {
        break;
      }
      (void)doc.Resolve(path);
    }
    (void)doc.Resolve({std::string("no-such-key"), size_t{7}});
  }
  return 0;
}
