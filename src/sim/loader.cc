#include "src/sim/loader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gantry/util/status_macros.h"
#include "gantry/util/strings.h"
#include "simdjson.h"
#include "src/api/json_convert.h"
#include "src/api/yaml.h"
#include "src/sim/workloads.h"

namespace gantry::sim {
namespace {

namespace fs = std::filesystem;

// Counts the pod just appended when it was loaded undecodable.
void CountUndecodable(api::Kind kind, const api::ObjectSet& set, LoadStats* stats) {
  if (kind != api::Kind::kPod || set.pods.empty() || !set.pods.back().Undecodable()) return;
  if (stats->undecodable_pods++ == 0) stats->first_undecodable = set.pods.back().decode_error;
}

// Returns the position of a decode error, given how to map paths in this source.
template <typename Resolver>
std::string FormatError(std::string_view source, const api::DecodeError& e, Resolver&& resolve,
                        const std::vector<api::PathSegment>& prefix) {
  std::vector<api::PathSegment> full = prefix;
  full.insert(full.end(), e.path.begin(), e.path.end());
  api::SourcePosition pos = resolve(full);
  if (pos.line > 0) return gantry::StrCat(source, ":", pos.line, ":", pos.column, ": ", e.ToString());
  return gantry::StrCat(source, ": ", e.ToString());
}

std::string_view StringField(api::JsonValue v, const char* key) {
  std::string_view s;
  if (!v.is_object()) return {};
  if (v[key].get_string().get(s) != simdjson::SUCCESS) return {};
  return s;
}

// Sets `key` to `value` in a label set kept in key order.
void SetLabel(api::Labels* labels, std::string_view key, std::string_view value) {
  auto it = std::lower_bound(labels->begin(), labels->end(), key,
                             [](const auto& kv, std::string_view k) { return kv.first.view() < k; });
  if (it != labels->end() && it->first.view() == key) {
    it->second = api::Symbol::Intern(value);
  } else {
    labels->insert(it, {api::Symbol::Intern(key), api::Symbol::Intern(value)});
  }
}

// Appends the pods a workload controller would create (sim/workloads.h);
// errors name the workload and the field (the template's, for a template
// that does not decode as a pod).
template <typename Resolver>
absl::Status ExpandWorkload(std::string_view source, api::JsonValue obj,
                            const std::vector<api::PathSegment>& path, std::string_view kind,
                            Resolver&& resolve, api::ObjectSet* out, LoadStats* stats) {
  std::vector<TemplatePods> plan;
  api::DecodeError error{std::string(kind), api::ObjectIdentity(obj), {}, ""};
  const int64_t room = stats->expand_workloads_up_to - stats->expanded_pods;
  if (!PlanWorkloadPods(obj, kind, room, &plan, &error)) {
    return absl::InvalidArgumentError(FormatError(source, error, resolve, path));
  }
  std::string_view ns = "default";
  api::JsonValue v;
  std::string_view s;
  if (obj["metadata"].get(v) == simdjson::SUCCESS && v["namespace"].get_string().get(s) == simdjson::SUCCESS &&
      !s.empty()) {
    ns = s;
  }
  for (const TemplatePods& tp : plan) {
    api::JsonValue t = obj;
    for (const api::PathSegment& seg : tp.path) {
      // PlanWorkloadPods found the template at this path.
      const simdjson::error_code err = std::holds_alternative<std::string>(seg)
                                           ? t[std::get<std::string>(seg)].get(t)
                                           : t.at(std::get<size_t>(seg)).get(t);
      if (err != simdjson::SUCCESS) return absl::InternalError("workload template path");
    }
    api::Decoder d("Pod");
    api::Pod pod = api::DecodePodTemplate(d, t);
    if (auto err = d.TakeError(t)) {
      api::DecodeError e{std::string(kind), api::ObjectIdentity(obj), tp.path, err->message};
      e.path.insert(e.path.end(), err->path.begin(), err->path.end());
      return absl::InvalidArgumentError(FormatError(source, e, resolve, path));
    }
    pod.meta.namespace_ = api::Symbol::Intern(ns);
    for (const TemplatePods::PodName& name : tp.pods) {
      api::Pod p = pod;
      p.meta.name = name.name;
      for (const auto& [key, value] : name.labels) SetLabel(&p.meta.labels, key, value);
      out->pods.push_back(std::move(p));
      stats->objects++;
      stats->expanded_pods++;
    }
  }
  return absl::OkStatus();
}

// Decodes one object of a known or defaulted kind into `out`; `path` is the
// object's path within its document (for error positions).
template <typename Resolver>
absl::Status DecodeObject(std::string_view source, api::JsonValue obj, const std::vector<api::PathSegment>& path,
                          std::string_view default_api_version, std::string_view default_kind,
                          Resolver&& resolve, api::ObjectSet* out, LoadStats* stats,
                          std::vector<RawObject>* raw) {
  if (!obj.is_object()) {
    api::DecodeError e{"object", "", {}, gantry::StrCat("expected an object, got ", api::JsonTypeName(obj))};
    return absl::InvalidArgumentError(FormatError(source, e, resolve, path));
  }
  std::string_view api_version = StringField(obj, "apiVersion");
  std::string_view kind = StringField(obj, "kind");
  if (api_version.empty()) api_version = default_api_version;
  if (kind.empty()) kind = default_kind;
  if (kind.empty()) {
    api::DecodeError e{"object", api::ObjectIdentity(obj), {std::string("kind")}, "Required value: every object needs apiVersion and kind"};
    return absl::InvalidArgumentError(FormatError(source, e, resolve, path));
  }
  api::Kind k = api::KindFromTypeMeta(api_version, kind);
  if (k == api::Kind::kUnknown && stats->expand_workloads_up_to > 0 &&
      IsExpandableWorkload(api_version, kind)) {
    return ExpandWorkload(source, obj, path, kind, resolve, out, stats);
  }
  if (k == api::Kind::kUnknown) {
    stats->skipped_kinds[gantry::StrCat(api_version, " ", kind)]++;
    return absl::OkStatus();
  }
  api::Decoder d(kind);
  api::DecodeInto(k, d, obj, out);
  if (auto err = d.TakeError(obj)) {
    return absl::InvalidArgumentError(FormatError(source, *err, resolve, path));
  }
  CountUndecodable(k, *out, stats);
  stats->objects++;
  if (raw != nullptr) {
    absl::StatusOr<RawObject> r = MakeRawObject(source, simdjson::minify(obj), api_version, kind);
    if (!r.ok()) return r.status();
    raw->push_back(std::move(*r));
  }
  return absl::OkStatus();
}

// Decodes one top-level JSON value: an object, a List of objects, or an
// array of objects. `prefix` is the value's path within its document.
template <typename Resolver>
absl::Status DecodeValue(std::string_view source, api::JsonValue root,
                         const std::vector<api::PathSegment>& prefix, Resolver&& resolve,
                         api::ObjectSet* out, LoadStats* stats, std::vector<RawObject>* raw) {
  auto decode_one = [&](api::JsonValue obj, const std::vector<api::PathSegment>& path,
                        std::string_view default_api_version,
                        std::string_view default_kind) -> absl::Status {
    return DecodeObject(source, obj, path, default_api_version, default_kind, resolve, out, stats, raw);
  };

  if (root.is_null()) return absl::OkStatus();
  if (root.is_array()) {
    size_t i = 0;
    api::JsonArray arr;
    if (root.get_array().get(arr) != simdjson::SUCCESS) return absl::InternalError("array access");
    for (api::JsonValue item : arr) {
      std::vector<api::PathSegment> path = prefix;
      path.emplace_back(i++);
      if (auto st = decode_one(item, path, "", ""); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  std::string_view kind = StringField(root, "kind");
  api::JsonValue items;
  if (kind.ends_with("List") && root.is_object() &&
      root["items"].get(items) == simdjson::SUCCESS) {
    // Typed lists (PodList) may omit kind on items; kubectl's List keeps it.
    std::string_view item_kind = kind == "List" ? std::string_view() : kind.substr(0, kind.size() - 4);
    std::string_view item_api_version = kind == "List" ? std::string_view() : StringField(root, "apiVersion");
    if (items.is_null()) return absl::OkStatus();
    if (!items.is_array()) {
      api::DecodeError e{std::string(kind), "", {std::string("items")}, gantry::StrCat("expected an array, got ", api::JsonTypeName(items))};
      return absl::InvalidArgumentError(FormatError(source, e, resolve, prefix));
    }
    size_t i = 0;
    api::JsonArray arr;
    if (items.get_array().get(arr) != simdjson::SUCCESS) return absl::InternalError("array access");
    for (api::JsonValue item : arr) {
      std::vector<api::PathSegment> path = prefix;
      path.emplace_back(std::string("items"));
      path.emplace_back(i++);
      if (auto st = decode_one(item, path, item_api_version, item_kind); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  return decode_one(root, prefix, "", "");
}

// The items of a top-level JSON array of objects, or of a List object, as
// text inside the document.
struct SplitDocument {
  bool is_list = false;
  std::string item_kind;         // PodList -> Pod; empty for a plain List or an array
  std::string item_api_version;  // the typed List's apiVersion
  std::vector<std::string_view> items;
};

bool CollectObjectTexts(simdjson::ondemand::array arr, std::vector<std::string_view>* items) {
  for (auto element : arr) {
    simdjson::ondemand::object obj;
    std::string_view text;
    if (element.get_object().get(obj) != simdjson::SUCCESS) return false;
    if (obj.raw_json().get(text) != simdjson::SUCCESS) return false;
    items->push_back(text);
  }
  return true;
}

// Finds each item's text with simdjson's on-demand parser, which builds no
// tape: decoding the items one DOM at a time keeps a large snapshot's peak
// memory near the size of its text plus the decoded objects. Returns false
// when the text has another shape or a syntax error; the caller then parses
// it whole, which also reports errors with their position.
bool SplitTopLevel(const simdjson::padded_string& padded, SplitDocument* out) {
  // Trailing content is caught later: DecodeItems parses the text around
  // the items, up to its end.
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) return false;
  simdjson::ondemand::json_type type;
  if (doc.type().get(type) != simdjson::SUCCESS) return false;
  if (type == simdjson::ondemand::json_type::array) {
    simdjson::ondemand::array arr;
    if (doc.get_array().get(arr) != simdjson::SUCCESS) return false;
    return CollectObjectTexts(arr, &out->items);
  }
  if (type != simdjson::ondemand::json_type::object) return false;
  simdjson::ondemand::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return false;
  std::string kind, api_version;
  bool have_items = false;
  for (auto field : root) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return false;
    if (key == "kind" || key == "apiVersion") {
      std::string_view v;
      if (field.value().get_string().get(v) != simdjson::SUCCESS) return false;
      (key == "kind" ? kind : api_version) = std::string(v);
    } else if (key == "items") {
      simdjson::ondemand::array arr;
      if (have_items || field.value().get_array().get(arr) != simdjson::SUCCESS) return false;
      if (!CollectObjectTexts(arr, &out->items)) return false;
      have_items = true;
    }
  }
  if (!have_items || !std::string_view(kind).ends_with("List")) return false;
  out->is_list = true;
  if (kind != "List") {
    out->item_kind = kind.substr(0, kind.size() - 4);
    out->item_api_version = api_version;
  }
  return true;
}

// Decodes the items of `split` (from SplitTopLevel over `text`) one DOM at a time.
template <typename Resolver>
absl::Status DecodeItems(std::string_view source, std::string_view text, const SplitDocument& split,
                         Resolver&& resolve, api::ObjectSet* out, LoadStats* stats, std::vector<RawObject>* raw) {
  // The on-demand pass does not validate what it skips: check the document
  // with each item replaced by {} (small), and each item below. Both valid
  // means the whole text is valid JSON.
  std::string skeleton;
  size_t from = 0;
  for (std::string_view item : split.items) {
    const auto at = static_cast<size_t>(item.data() - text.data());
    skeleton.append(text.substr(from, at - from)).append("{}");
    from = at + item.size();
  }
  skeleton.append(text.substr(from));
  simdjson::dom::parser parser;
  api::JsonValue obj;
  if (auto err = parser.parse(skeleton).get(obj); err != simdjson::SUCCESS)
    return api::JsonSyntaxError(source, text, err);
  for (size_t i = 0; i < split.items.size(); ++i) {
    const std::string_view item = split.items[i];
    // The item lies inside the padded buffer, so the padding the parser
    // reads past its end is there.
    if (auto err = parser.parse(item.data(), item.size(), false).get(obj); err != simdjson::SUCCESS) {
      return api::JsonSyntaxError(source, text, err);
    }
    std::vector<api::PathSegment> path;
    if (split.is_list) path.emplace_back(std::string("items"));
    path.emplace_back(i);
    GANTRY_RETURN_IF_ERROR(
        DecodeObject(source, obj, path, split.item_api_version, split.item_kind, resolve, out, stats, raw));
  }
  return absl::OkStatus();
}

// Parses JSON that already sits in simdjson's padded buffer (no copy). A
// List or array is decoded an item at a time (see SplitTopLevel); any other
// value through one DOM of the whole text.
absl::Status LoadPaddedJson(std::string_view source, const simdjson::padded_string& padded, api::ObjectSet* out,
                            LoadStats* stats, std::vector<RawObject>* raw) {
  const std::string_view text(padded.data(), padded.size());
  auto resolve = [&](const std::vector<api::PathSegment>& path) {
    return api::ResolveJsonPosition(text, path);
  };
  SplitDocument split;
  if (SplitTopLevel(padded, &split)) {
    absl::Status st = DecodeItems(source, text, split, resolve, out, stats, raw);
    if (st.ok()) return st;
    // Report what parsing the whole text reports: a syntax error anywhere in
    // the document comes before a decode error in an earlier item.
    api::ObjectSet scratch;
    LoadStats scratch_stats;
    simdjson::dom::parser parser;
    api::JsonValue root;
    if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS)
      return api::JsonSyntaxError(source, text, err);
    absl::Status whole = DecodeValue(source, root, {}, resolve, &scratch, &scratch_stats, nullptr);
    return whole.ok() ? st : whole;
  }
  simdjson::dom::parser parser;
  api::JsonValue root;
  if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS)
    return api::JsonSyntaxError(source, text, err);
  return DecodeValue(source, root, {}, resolve, out, stats, raw);
}

absl::Status LoadJson(std::string_view source, std::string_view text, api::ObjectSet* out,
                      LoadStats* stats, std::vector<RawObject>* raw) {
  return LoadPaddedJson(source, simdjson::padded_string(text), out, stats, raw);
}

absl::Status LoadYaml(std::string_view source, std::string_view text, api::ObjectSet* out,
                      LoadStats* stats, std::vector<RawObject>* raw) {
  auto docs = api::ParseYamlDocuments(text);
  if (!docs.ok()) {
    return absl::InvalidArgumentError(gantry::StrCat(source, ":", AsStd(docs.status().message())));
  }
  simdjson::dom::parser parser;
  for (const api::YamlDocument& doc : *docs) {
    if (doc.empty()) continue;
    api::JsonValue root;
    if (auto err = parser.parse(doc.json()).get(root); err != simdjson::SUCCESS) {
      return absl::InternalError(gantry::StrCat(source, ":", doc.start().line, ": YAML converted to invalid JSON: ",
                                                simdjson::error_message(err)));
    }
    auto resolve = [&](const std::vector<api::PathSegment>& path) { return doc.Resolve(path); };
    if (auto st = DecodeValue(source, root, {}, resolve, out, stats, raw); !st.ok()) return st;
  }
  return absl::OkStatus();
}

bool LooksLikeJson(std::string_view path, std::string_view text) {
  if (path.ends_with(".json")) return true;
  if (path.ends_with(".yaml") || path.ends_with(".yml")) return false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

}  // namespace

absl::Status LoadClusterText(std::string_view source_name, std::string_view text, bool is_json,
                             api::ObjectSet* out, LoadStats* stats, std::vector<RawObject>* raw) {
  stats->bytes += static_cast<int64_t>(text.size());
  return is_json ? LoadJson(source_name, text, out, stats, raw) : LoadYaml(source_name, text, out, stats, raw);
}

absl::Status LoadClusterProto(std::string_view source_name, std::string_view bytes, api::ObjectSet* out,
                              LoadStats* stats, std::vector<RawObject>* raw) {
  stats->bytes += static_cast<int64_t>(bytes.size());
  simdjson::dom::parser parser;
  auto on_object = [&](const gantry::snapshot::v1::Object& obj, int64_t index) -> absl::Status {
    auto where = [&] {
      return gantry::StrCat(source_name, ": object ", index, " (", obj.kind(), " ",
                            obj.namespace_().empty() ? "" : obj.namespace_() + "/", obj.name(), ")");
    };
    if (obj.kind().empty()) return absl::InvalidArgumentError(gantry::StrCat(where(), ": kind: Required value"));
    api::Kind k = api::KindFromTypeMeta(obj.api_version(), obj.kind());
    if (k == api::Kind::kUnknown) {
      stats->skipped_kinds[gantry::StrCat(obj.api_version(), " ", obj.kind())]++;
      return absl::OkStatus();
    }
    api::JsonValue root;
    if (auto err = parser.parse(obj.json().data(), obj.json().size()).get(root); err != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(gantry::StrCat(where(), ": json: invalid JSON: ", simdjson::error_message(err)));
    }
    if (!root.is_object()) {
      return absl::InvalidArgumentError(gantry::StrCat(where(), ": json: expected an object, got ", api::JsonTypeName(root)));
    }
    api::Decoder d(obj.kind());
    api::DecodeInto(k, d, root, out);
    if (auto err = d.TakeError(root)) return absl::InvalidArgumentError(gantry::StrCat(source_name, ": object ", index, ": ", err->ToString()));
    CountUndecodable(k, *out, stats);
    stats->objects++;
    if (raw != nullptr) {
      raw->push_back(RawObject{obj.api_version(), obj.kind(), obj.namespace_(), obj.name(), obj.json()});
    }
    return absl::OkStatus();
  };
  return ReadSnapshotProto(source_name, bytes, nullptr, on_object);
}

absl::Status LoadClusterPath(std::string_view path, api::ObjectSet* out, LoadStats* stats,
                             std::vector<RawObject>* raw) {
  std::error_code ec;
  fs::path p{std::string(path)};
  fs::file_status st = fs::status(p, ec);
  if (ec || !fs::exists(st)) {
    return absl::NotFoundError(gantry::StrCat(path, ": no such file or directory"));
  }
  std::vector<fs::path> files;
  if (fs::is_directory(st)) {
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      std::string ext = it->path().extension().string();
      if (ext == ".yaml" || ext == ".yml" || ext == ".json" || ext == ".pb") files.push_back(it->path());
    }
    if (ec) return absl::UnavailableError(gantry::StrCat(path, ": ", ec.message()));
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(p);
  }
  for (const fs::path& file : files) {
    // Read straight into simdjson's padded buffer: one copy of the file in
    // memory (a std::string grown while reading plus a padded copy for the
    // parser held up to three), which bounds the peak RSS of large loads.
    simdjson::padded_string buffer;
    if (simdjson::padded_string::load(file.string()).get(buffer) != simdjson::SUCCESS) {
      return absl::UnavailableError(gantry::StrCat(file.string(), ": cannot read file"));
    }
    const std::string_view text(buffer.data(), buffer.size());
    stats->files.push_back(file.string());
    const std::string name = file.string();
    const bool text_name = name.ends_with(".json") || name.ends_with(".yaml") || name.ends_with(".yml");
    if (name.ends_with(".pb") || (!text_name && LooksLikeSnapshotProto(text))) {
      GANTRY_RETURN_IF_ERROR(LoadClusterProto(name, text, out, stats, raw));
      continue;
    }
    stats->bytes += static_cast<int64_t>(text.size());
    if (LooksLikeJson(name, text)) {
      GANTRY_RETURN_IF_ERROR(LoadPaddedJson(name, buffer, out, stats, raw));
    } else {
      GANTRY_RETURN_IF_ERROR(LoadYaml(name, text, out, stats, raw));
    }
  }
  return absl::OkStatus();
}

}  // namespace gantry::sim
