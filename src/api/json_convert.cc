#include "src/api/json_convert.h"

#include <exception>
#include <string>

#include "gantry/util/strings.h"
#include "src/api/yaml.h"

namespace gantry::api {

nlohmann::json ToNlohmann(JsonValue v) {
  switch (v.type()) {
    case simdjson::dom::element_type::ARRAY: {
      nlohmann::json out = nlohmann::json::array();
      JsonArray arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) return out;
      for (JsonValue item : arr) out.push_back(ToNlohmann(item));
      return out;
    }
    case simdjson::dom::element_type::OBJECT: {
      nlohmann::json out = nlohmann::json::object();
      JsonObject obj;
      if (v.get_object().get(obj) != simdjson::SUCCESS) return out;
      for (auto [key, value] : obj) out[std::string(key)] = ToNlohmann(value);
      return out;
    }
    case simdjson::dom::element_type::INT64:
      return v.get_int64().value_unsafe();
    case simdjson::dom::element_type::UINT64:
      return v.get_uint64().value_unsafe();
    case simdjson::dom::element_type::DOUBLE:
      return v.get_double().value_unsafe();
    case simdjson::dom::element_type::STRING:
      return std::string(v.get_string().value_unsafe());
    case simdjson::dom::element_type::BOOL:
      return v.get_bool().value_unsafe();
    case simdjson::dom::element_type::NULL_VALUE:
      return nullptr;
  }
  return nullptr;
}

absl::Status JsonSyntaxError(std::string_view source, std::string_view text,
                             simdjson::error_code err) {
  try {
    nlohmann::json probe = nlohmann::json::parse(text.begin(), text.end());
    (void)probe;
  } catch (const nlohmann::json::parse_error& e) {
    const SourcePosition pos = OffsetToPosition(text, e.byte > 0 ? e.byte - 1 : 0);
    return absl::InvalidArgumentError(
        gantry::StrCat(source, ":", pos.line, ":", pos.column, ": invalid JSON: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(gantry::StrCat(source, ": invalid JSON: ", e.what()));
  }
  return absl::InvalidArgumentError(
      gantry::StrCat(source, ": invalid JSON: ", simdjson::error_message(err)));
}

}  // namespace gantry::api
