// JSON helpers shared by the readers of files and objects: conversion of a
// parsed (simdjson) value into nlohmann::json (for code that keeps or
// rewrites a piece of decoded input: plugin args), and the positioned error
// for text simdjson rejected.
#ifndef GANTRY_SRC_API_JSON_CONVERT_H_
#define GANTRY_SRC_API_JSON_CONVERT_H_

#include <string_view>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "simdjson.h"
#include "src/api/decode.h"

namespace gantry::api {

// A deep copy of `v` (numbers keep their int64 / uint64 / double kind).
// Depth is bounded by the parser's own nesting limit.
nlohmann::json ToNlohmann(JsonValue v);

// InvalidArgument for `text` (read from `source`), which simdjson rejected
// with `err`: "source:line:col: invalid JSON: ..." at the first byte that
// breaks the syntax (simdjson reports no position, so a second parser finds
// it), or "source: invalid JSON: ..." when no position is known.
absl::Status JsonSyntaxError(std::string_view source, std::string_view text,
                             simdjson::error_code err);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_JSON_CONVERT_H_
