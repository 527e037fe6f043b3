// Small helpers shared by the built-in plugins.
//
//  - DefaultNormalizeScore: upstream's helper.DefaultNormalizeScore, which
//    rescales raw scores so the highest becomes `max_priority` (optionally
//    reversed so the lowest raw score wins).
//  - Args decoding: strict object walking (unknown fields are errors, as in
//    upstream's strict decoding of plugin args), apiVersion/kind checks, and
//    the shared `resources: [{name, weight}]` list.
#ifndef GANTRY_PLUGINS_HELPER_HELPER_H_
#define GANTRY_PLUGINS_HELPER_HELPER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gantry/types.h"
#include "nlohmann/json.hpp"
#include "src/api/decode.h"
#include "src/api/json_convert.h"

namespace gantry::plugins::helper {

// The apiVersion every plugin args object carries.
inline constexpr std::string_view kArgsApiVersion = "kubescheduler.config.k8s.io/v1";

// Rescales `scores` into [0, max_priority]: score * max / highest. With
// `reverse`, the result is max - scaled. All-zero input becomes all-zero (or
// all-max when reversed).
void DefaultNormalizeScore(int64_t max_priority, bool reverse,
                           std::vector<framework::NodeScore>& scores);

// True if `v` is absent/null (args not given).
bool IsNull(api::JsonValue v);

// Walks an args object strictly: `apiVersion` must be kArgsApiVersion (or
// absent), `kind` must equal `kind` (or be absent), every other key goes to
// `on_field`, which returns false for an unknown key (recorded as
// `unknown field "<key>"`). A null value is an empty object.
void DecodeArgsObject(api::Decoder& d, api::JsonValue v, std::string_view kind,
                      const std::function<bool(std::string_view key, api::JsonValue value)>& on_field);

// One entry of `resources: [{name, weight}]`.
struct ResourceSpec {
  std::string name;
  int64_t weight = 0;

  friend bool operator==(const ResourceSpec&, const ResourceSpec&) = default;
};

// The upstream default: cpu and memory, weight 1 each.
std::vector<ResourceSpec> DefaultResourceSpecs();

// Decodes a `[{name, weight}]` list (strict fields).
std::vector<ResourceSpec> DecodeResourceSpecs(api::Decoder& d, api::JsonValue v);

nlohmann::json ResourceSpecsToJson(const std::vector<ResourceSpec>& specs);

// Converts a parsed JSON value to nlohmann::json (for canonical args output).
using api::ToNlohmann;

// Turns a decoder's first error into InvalidArgument ("<Kind>: path: message").
absl::Status DecoderStatus(const api::Decoder& d);

// metav1validation.ValidateLabelName: a qualified name ("prefix/name" with a
// DNS-subdomain prefix, name of at most 63 [A-Za-z0-9._-] characters starting
// and ending alphanumeric). Returns "" when valid, else the upstream message.
std::string ValidateQualifiedName(std::string_view value);

}  // namespace gantry::plugins::helper

#endif  // GANTRY_PLUGINS_HELPER_HELPER_H_
