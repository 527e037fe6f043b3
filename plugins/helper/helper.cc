#include "plugins/helper/helper.h"

#include <cctype>

#include "gantry/util/strings.h"

namespace gantry::plugins::helper {

void DefaultNormalizeScore(int64_t max_priority, bool reverse,
                           std::vector<framework::NodeScore>& scores) {
  int64_t max_count = 0;
  for (const framework::NodeScore& s : scores) max_count = std::max(max_count, s.score);
  if (max_count == 0) {
    if (reverse) {
      for (framework::NodeScore& s : scores) s.score = max_priority;
    }
    return;
  }
  for (framework::NodeScore& s : scores) {
    int64_t v = max_priority * s.score / max_count;
    s.score = reverse ? max_priority - v : v;
  }
}

bool IsNull(api::JsonValue v) { return v.is_null(); }

void DecodeArgsObject(api::Decoder& d, api::JsonValue v, std::string_view kind,
                      const std::function<bool(std::string_view, api::JsonValue)>& on_field) {
  d.ForEachField(v, [&](std::string_view key, api::JsonValue value) {
    if (key == "apiVersion") {
      std::string_view got = d.String(value);
      if (d.ok() && !got.empty() && got != kArgsApiVersion) {
        d.Fail(gantry::StrCat("Unsupported value: \"", got, "\": supported values: \"",
                              kArgsApiVersion, "\""));
      }
    } else if (key == "kind") {
      std::string_view got = d.String(value);
      if (d.ok() && !got.empty() && got != kind) {
        d.Fail(gantry::StrCat("Unsupported value: \"", got, "\": supported values: \"", kind, "\""));
      }
    } else if (!on_field(key, value) && d.ok()) {
      d.Fail(gantry::StrCat("unknown field \"", key, "\""));
    }
  });
}

std::vector<ResourceSpec> DefaultResourceSpecs() {
  return {ResourceSpec{"cpu", 1}, ResourceSpec{"memory", 1}};
}

std::vector<ResourceSpec> DecodeResourceSpecs(api::Decoder& d, api::JsonValue v) {
  std::vector<ResourceSpec> out;
  d.ForEachItem(v, [&](size_t, api::JsonValue item) {
    ResourceSpec spec;
    d.ForEachField(item, [&](std::string_view key, api::JsonValue value) {
      if (key == "name") {
        spec.name = std::string(d.String(value));
      } else if (key == "weight") {
        spec.weight = d.Int(value);
      } else if (d.ok()) {
        d.Fail(gantry::StrCat("unknown field \"", key, "\""));
      }
    });
    out.push_back(std::move(spec));
  });
  return out;
}

nlohmann::json ResourceSpecsToJson(const std::vector<ResourceSpec>& specs) {
  nlohmann::json out = nlohmann::json::array();
  for (const ResourceSpec& s : specs) out.push_back({{"name", s.name}, {"weight", s.weight}});
  return out;
}

absl::Status DecoderStatus(const api::Decoder& d) {
  if (d.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(d.error()->ToString());
}

namespace {

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool ValidNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool ValidDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || label.size() > 63) return false;
    auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    for (char c : label) {
      if (!lower_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

}  // namespace

std::string ValidateQualifiedName(std::string_view value) {
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      return gantry::StrCat("Invalid value: \"", value, "\": prefix part must be non-empty");
    }
    if (!ValidDnsSubdomain(prefix)) {
      return gantry::StrCat("Invalid value: \"", value,
                            "\": prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                            "alphanumeric characters, '-' or '.', and must start and end with an "
                            "alphanumeric character");
    }
  }
  if (name.empty()) return gantry::StrCat("Invalid value: \"", value, "\": name part must be non-empty");
  if (name.size() > 63) {
    return gantry::StrCat("Invalid value: \"", value, "\": name part must be no more than 63 characters");
  }
  if (!ValidNamePart(name)) {
    return gantry::StrCat("Invalid value: \"", value,
                          "\": name part must consist of alphanumeric characters, '-', '_' or '.', and "
                          "must start and end with an alphanumeric character");
  }
  return "";
}

}  // namespace gantry::plugins::helper
