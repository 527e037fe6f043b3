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
  const std::string_view text = gantry::fuzz::AsText(data, size);
  absl::StatusOr<std::vector<YamlDocument>> docs = ParseYamlDocuments(text);
  if (!docs.ok()) return 0;
  static simdjson::dom::parser* parser = new simdjson::dom::parser();
  for (const YamlDocument& doc : *docs) {
    // The reader refuses scalars that are not UTF-8, so every document's
    // JSON is UTF-8 and parses.
    if (!simdjson::validate_utf8(doc.json())) {
      gantry::fuzz::PropertyFailed("YAML document rendered as JSON that is not UTF-8");
    }
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
