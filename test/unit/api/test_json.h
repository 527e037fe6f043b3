// Test helpers: a parsed JSON document that owns its simdjson parser, and
// label sets built from literals.
#ifndef GANTRY_TEST_UNIT_API_TEST_JSON_H_
#define GANTRY_TEST_UNIT_API_TEST_JSON_H_

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "gtest/gtest.h"
#include "simdjson.h"
#include "src/api/decode.h"
#include "src/api/meta.h"

namespace gantry::api::testing_util {

// A JSON document parsed once; `root()` stays valid while this object lives.
class Json {
 public:
  explicit Json(std::string_view text)
      : parser_(std::make_unique<simdjson::dom::parser>()), padded_(text) {
    auto err = parser_->parse(padded_).get(root_);
    EXPECT_EQ(err, simdjson::SUCCESS) << "bad test JSON: " << text;
  }
  JsonValue root() const { return root_; }

 private:
  std::unique_ptr<simdjson::dom::parser> parser_;
  simdjson::padded_string padded_;
  JsonValue root_;
};

// A sorted label set from {{"key", "value"}, ...}.
inline Labels MakeLabels(std::initializer_list<std::pair<std::string_view, std::string_view>> kv) {
  Labels out;
  for (const auto& [k, v] : kv) out.emplace_back(Symbol::Intern(k), Symbol::Intern(v));
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first.view() < b.first.view(); });
  return out;
}

// Runs `decode(Decoder&, JsonValue)` on `text` and returns the decoder's
// final status (its message names the field path on error).
template <typename F>
absl::Status DecodeStatus(std::string_view kind, std::string_view text, F&& decode) {
  Json json(text);
  Decoder d(kind);
  decode(d, json.root());
  return d.Finish(json.root());
}

}  // namespace gantry::api::testing_util

#endif  // GANTRY_TEST_UNIT_API_TEST_JSON_H_
