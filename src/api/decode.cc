#include "src/api/decode.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "gantry/util/strings.h"
#include "absl/time/time.h"

namespace gantry::api {
namespace {

bool IsIdentifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return !std::isdigit(static_cast<unsigned char>(s[0]));
}

}  // namespace

std::string FormatFieldPath(const std::vector<PathSegment>& path) {
  std::string out;
  for (const PathSegment& seg : path) {
    if (const size_t* index = std::get_if<size_t>(&seg)) {
      gantry::StrAppend(&out, "[", *index, "]");
      continue;
    }
    // Keys come from input: a long one is cut so that errors stay small.
    const std::string& full = std::get<std::string>(seg);
    const std::string key = full.size() <= 80 ? full : full.substr(0, 80) + "...";
    if (IsIdentifier(key)) {
      if (!out.empty()) out.push_back('.');
      out += key;
    } else {
      gantry::StrAppend(&out, "[\"", key, "\"]");
    }
  }
  return out;
}

std::string DecodeError::ToString() const {
  std::string out = kind;
  if (!object.empty()) gantry::StrAppend(&out, " ", object);
  if (!path.empty()) gantry::StrAppend(&out, ": ", FormatFieldPath(path));
  gantry::StrAppend(&out, ": ", message);
  return out;
}

std::string_view JsonTypeName(JsonValue v) {
  switch (v.type()) {
    case simdjson::dom::element_type::ARRAY: return "array";
    case simdjson::dom::element_type::OBJECT: return "object";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: return "number";
    case simdjson::dom::element_type::STRING: return "string";
    case simdjson::dom::element_type::BOOL: return "boolean";
    case simdjson::dom::element_type::NULL_VALUE: return "null";
  }
  return "unknown";
}

std::string Decoder::TypeMismatch(std::string_view want, JsonValue got) const {
  return gantry::StrCat("expected ", want, ", got ", JsonTypeName(got));
}

void Decoder::Fail(std::string message) {
  if (error_) return;
  error_ = DecodeError{kind_, "", path_, std::move(message)};
}

void Decoder::FailAt(std::string_view field, std::string message) {
  Field scope(*this, field);
  Fail(std::move(message));
}

bool Decoder::CheckCount(size_t n, size_t max) {
  if (n <= max) return true;
  Fail(gantry::StrCat("Too many: ", n, ": must have at most ", max, " items"));
  return false;
}

std::string_view Decoder::String(JsonValue v, size_t max_bytes) {
  if (v.is_null()) return {};
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS) {
    Fail(TypeMismatch("a string", v));
    return {};
  }
  if (s.size() > max_bytes) {
    Fail(gantry::StrCat("Too long: may not be more than ", max_bytes, " bytes"));
    return {};
  }
  return s;
}

int64_t Decoder::Int(JsonValue v) {
  if (v.is_null()) return 0;
  int64_t i;
  if (v.get_int64().get(i) == simdjson::SUCCESS) return i;
  double d;
  // Integral doubles (1e3, 4.0) are accepted as Kubernetes' JSON decoder does.
  if (v.get_double().get(d) == simdjson::SUCCESS && std::trunc(d) == d &&
      d >= static_cast<double>(std::numeric_limits<int64_t>::min()) &&
      d < static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(d);
  }
  if (v.is_number()) {
    Fail("expected an integer, got a number that is not a 64-bit integer");
  } else {
    Fail(TypeMismatch("an integer", v));
  }
  return 0;
}

int64_t Decoder::IntInRange(JsonValue v, int64_t lo, int64_t hi) {
  int64_t i = Int(v);
  if (ok() && (i < lo || i > hi)) {
    Fail(gantry::StrCat("Invalid value: ", i, ": must be between ", lo, " and ", hi, ", inclusive"));
  }
  return i;
}

double Decoder::Double(JsonValue v) {
  if (v.is_null()) return 0;
  double d;
  if (v.get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i;
  if (v.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  uint64_t u;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  Fail(TypeMismatch("a number", v));
  return 0;
}

bool Decoder::Bool(JsonValue v) {
  if (v.is_null()) return false;
  bool b;
  if (v.get_bool().get(b) != simdjson::SUCCESS) {
    Fail(TypeMismatch("a boolean", v));
    return false;
  }
  return b;
}

Quantity Decoder::Qty(JsonValue v) {
  if (v.is_null()) return Quantity();
  std::string text;
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) {
    text = std::string(s);
  } else if (v.is_int64()) {
    text = gantry::StrCat(v.get_int64().value());
  } else if (v.is_uint64()) {
    text = gantry::StrCat(v.get_uint64().value());
  } else if (v.is_double()) {
    // Numbers are accepted as Kubernetes accepts them (e.g. `cpu: 0.5`). The
    // shortest round-trip form keeps every digit (StrCat keeps only six).
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v.get_double().value());
    text = ec == std::errc() ? std::string(buf, end) : std::string("NaN");
  } else {
    Fail(TypeMismatch("a quantity string", v));
    return Quantity();
  }
  auto q = Quantity::Parse(text);
  if (!q.ok()) {
    Fail(gantry::StrCat("Invalid value: \"", text, "\": ", q.status().message()));
    return Quantity();
  }
  return *q;
}

int64_t Decoder::TimeMicros(JsonValue v) {
  std::string_view s = String(v);
  if (s.empty()) return 0;
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, gantry::AsAbsl(s), &t, &err)) {
    Fail(gantry::StrCat("Invalid value: \"", s, "\": not an RFC 3339 timestamp"));
    return 0;
  }
  return absl::ToUnixMicros(t);
}

std::vector<std::pair<Symbol, Symbol>> Decoder::SymbolMap(JsonValue v) {
  std::vector<std::pair<Symbol, Symbol>> out;
  ForEachField(v, [&](std::string_view key, JsonValue value) {
    out.emplace_back(Symbol::Intern(key), Sym(value));
  });
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first.view() < b.first.view(); });
  return out;
}

std::vector<Symbol> Decoder::SymbolList(JsonValue v) {
  std::vector<Symbol> out;
  ForEachItem(v, [&](size_t, JsonValue item) { out.push_back(Sym(item)); });
  return out;
}

std::vector<std::string> Decoder::StringList(JsonValue v) {
  std::vector<std::string> out;
  ForEachItem(v, [&](size_t, JsonValue item) { out.emplace_back(String(item)); });
  return out;
}

std::string ObjectIdentity(JsonValue root) {
  JsonObject obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) return "";
  JsonValue meta;
  if (obj["metadata"].get(meta) != simdjson::SUCCESS) return "";
  std::string_view ns, name;
  if (meta["namespace"].get_string().get(ns) != simdjson::SUCCESS) ns = {};
  if (meta["name"].get_string().get(name) != simdjson::SUCCESS) name = {};
  if (name.empty() && meta["generateName"].get_string().get(name) != simdjson::SUCCESS) {
    name = {};
  }
  // Identities come from input: overlong ones are cut so that errors stay small.
  constexpr size_t kMax = 253;
  const std::string n =
      name.size() <= kMax ? std::string(name) : gantry::StrCat(name.substr(0, kMax), "...");
  if (ns.empty()) return n;
  if (ns.size() > kMax) return gantry::StrCat(ns.substr(0, kMax), ".../", n);
  return gantry::StrCat(ns, "/", n);
}

std::optional<DecodeError> Decoder::TakeError(JsonValue root) {
  if (!error_) return std::nullopt;
  DecodeError e = std::move(*error_);
  error_.reset();
  e.object = ObjectIdentity(root);
  return e;
}

absl::Status Decoder::Finish(JsonValue root) const {
  if (!error_) return absl::OkStatus();
  DecodeError e = *error_;
  e.object = ObjectIdentity(root);
  return absl::InvalidArgumentError(e.ToString());
}

}  // namespace gantry::api
