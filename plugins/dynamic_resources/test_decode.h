// Test-only: API objects of the DynamicResources tests decoded from JSON
// text (a failed decode is a test failure).
#ifndef GANTRY_PLUGINS_DYNAMIC_RESOURCES_TEST_DECODE_H_
#define GANTRY_PLUGINS_DYNAMIC_RESOURCES_TEST_DECODE_H_

#include <memory>
#include <string_view>

#include "gtest/gtest.h"
#include "simdjson.h"
#include "src/api/decode.h"

namespace gantry::plugins::dynamic_resources {

template <typename T>
std::shared_ptr<const T> Decode(std::string_view json, T (*fn)(api::Decoder&, api::JsonValue),
                                std::string_view kind) {
  simdjson::dom::parser parser;
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS) << json;
  api::Decoder d(kind);
  T obj = fn(d, v);
  EXPECT_TRUE(d.ok()) << d.error()->ToString();
  return std::make_shared<const T>(std::move(obj));
}

}  // namespace gantry::plugins::dynamic_resources

#endif  // GANTRY_PLUGINS_DYNAMIC_RESOURCES_TEST_DECODE_H_
