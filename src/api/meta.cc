#include "src/api/meta.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "gantry/util/strings.h"

namespace gantry::api {

std::optional<Symbol> FindLabel(const Labels& labels, Symbol key) {
  // Label sets are usually small: integer compares beat a binary search
  // that compares text.
  if (labels.size() <= 16) {
    for (const auto& [k, v] : labels) {
      if (k == key) return v;
    }
    return std::nullopt;
  }
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& kv, Symbol k) { return kv.first.view() < k.view(); });
  if (it != labels.end() && it->first == key) return it->second;
  return std::nullopt;
}

std::optional<Symbol> FindLabel(const Labels& labels, std::string_view key) {
  auto sym = Symbol::Find(key);
  if (!sym) return std::nullopt;
  return FindLabel(labels, *sym);
}

std::string ObjectMeta::Key() const {
  if (namespace_.empty()) return name;
  return gantry::StrCat(namespace_.view(), "/", name);
}

const std::string* ObjectMeta::FindAnnotation(std::string_view key) const {
  for (const auto& [k, v] : annotations) {
    if (k.view() == key) return &v;
  }
  return nullptr;
}

const OwnerReference* ObjectMeta::ControllerRef() const {
  for (const auto& ref : owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

// `s` for an error message, cut to 80 bytes so that errors stay small.
std::string Excerpt(std::string_view s) {
  if (s.size() <= 80) return std::string(s);
  return gantry::StrCat(s.substr(0, 80), "...");
}

Labels DecodeLabels(Decoder& d, JsonValue v) {
  Labels out;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    const size_t slash = key.find('/');
    const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
    if (name.size() > kMaxLabelNameLength) {
      d.Fail(gantry::StrCat("Invalid value: \"", Excerpt(key),
                            "\": name part must be no more than ", kMaxLabelNameLength,
                            " characters"));
    } else if (slash != std::string_view::npos && slash > kMaxLabelPrefixLength) {
      d.Fail(gantry::StrCat("Invalid value: \"", Excerpt(key),
                            "\": prefix part must be no more than ", kMaxLabelPrefixLength,
                            " characters"));
    }
    std::string_view s = d.String(value);
    if (d.ok() && s.size() > kMaxLabelValueLength) {
      d.Fail(gantry::StrCat("Invalid value: \"", Excerpt(s), "\": must be no more than ",
                            kMaxLabelValueLength, " characters"));
    }
    out.emplace_back(Symbol::Intern(key), Symbol::Intern(s));
  });
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first.view() < b.first.view(); });
  return out;
}

void DecodeObjectMeta(Decoder& d, JsonValue v, ObjectMeta* out) {
  size_t annotation_bytes = 0;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "name") {
      out->name = std::string(d.String(value, kMaxNameLength));
    } else if (key == "namespace") {
      out->namespace_ = Symbol::Intern(d.String(value, kMaxLabelValueLength));
    } else if (key == "uid") {
      out->uid = std::string(d.String(value));
    } else if (key == "resourceVersion") {
      out->resource_version = std::string(d.String(value));
    } else if (key == "generation") {
      out->generation = d.Int(value);
    } else if (key == "labels") {
      out->labels = DecodeLabels(d, value);
    } else if (key == "annotations") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        std::string_view s;
        if (val.get_string().get(s) == simdjson::SUCCESS) annotation_bytes += k.size() + s.size();
        if (annotation_bytes > kMaxAnnotationsBytes) {
          d.Fail(gantry::StrCat("Too long: all annotations together may not be more than ",
                                kMaxAnnotationsBytes, " bytes"));
          return;
        }
        if (k == "kubectl.kubernetes.io/last-applied-configuration") return;
        out->annotations.emplace_back(Symbol::Intern(k), std::string(d.String(val)));
      });
    } else if (key == "ownerReferences") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        OwnerReference ref;
        d.ForEachField(item, [&](std::string_view k, JsonValue val) {
          if (k == "apiVersion") {
            ref.api_version = d.Sym(val);
          } else if (k == "kind") {
            ref.kind = d.Sym(val);
          } else if (k == "name") {
            ref.name = std::string(d.String(val));
          } else if (k == "uid") {
            ref.uid = std::string(d.String(val));
          } else if (k == "controller") {
            ref.controller = d.Bool(val);
          }
        });
        out->owner_references.push_back(std::move(ref));
      });
    } else if (key == "finalizers") {
      out->finalizers = d.StringList(value);
    } else if (key == "creationTimestamp") {
      out->creation_micros = d.TimeMicros(value);
    } else if (key == "deletionTimestamp") {
      if (!value.is_null()) out->deletion_micros = d.TimeMicros(value);
    }
  });
}

IntOrString DecodeIntOrString(Decoder& d, JsonValue v) {
  IntOrString out;
  if (v.is_string()) {
    out.is_string = true;
    out.str_value = std::string(d.String(v));
  } else {
    out.int_value = d.Int(v);
  }
  return out;
}

absl::StatusOr<int64_t> IntOrString::Scaled(int64_t total, bool round_up) const {
  if (!is_string) return int_value;
  std::string_view s = str_value;
  int64_t pct = 0;
  if (s.size() < 2 || s.back() != '%' || !absl::SimpleAtoi(gantry::AsAbsl(s.substr(0, s.size() - 1)), &pct)) {
    return absl::InvalidArgumentError(gantry::StrCat("invalid value for IntOrString: invalid type: string is not a percentage: \"", s, "\""));
  }
  __int128 v = static_cast<__int128>(pct) * total;
  if (round_up) return static_cast<int64_t>((v + 99) / 100);
  return static_cast<int64_t>(v / 100);
}

}  // namespace gantry::api
