#include "src/sim/snapshot_file.h"

#include <cctype>
#include <fstream>

#include "gantry/util/strings.h"
#include "nlohmann/json.hpp"

namespace gantry::sim {
namespace {

using Json = nlohmann::ordered_json;
namespace pb = gantry::snapshot::v1;

// Reads a base-128 varint at `*pos`; false when truncated or longer than 10 bytes.
bool ReadVarint(std::string_view bytes, size_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= bytes.size()) return false;
    const uint8_t b = static_cast<uint8_t>(bytes[(*pos)++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

void WriteVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool IsReservedWord(std::string_view s) {
  static const char* const kWords[] = {"true", "false", "yes", "no", "on", "off", "y", "n", "null"};
  for (const char* w : kWords) {
    std::string_view word(w);
    if (s.size() != word.size()) continue;
    bool same = true;
    for (size_t i = 0; i < s.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(s[i])) == word[i];
    }
    if (same) return true;
  }
  return false;
}

// A string that every YAML reader takes as that same string when unquoted.
bool IsPlainSafe(std::string_view s) {
  if (s.empty() || IsReservedWord(s)) return false;
  const unsigned char first = static_cast<unsigned char>(s[0]);
  if (!std::isalpha(first) && first != '_' && first != '/') return false;
  for (unsigned char c : s) {
    if (!std::isalnum(c) && c != '_' && c != '.' && c != '/' && c != '-') return false;
  }
  return true;
}

void EmitScalar(const Json& v, std::string* out) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (IsPlainSafe(s)) {
      out->append(s);
    } else {
      out->append(v.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    return;
  }
  if (v.is_object()) {
    out->append("{}");
    return;
  }
  if (v.is_array()) {
    out->append("[]");
    return;
  }
  out->append(v.dump());  // number, bool, null
}

bool IsBlock(const Json& v) { return (v.is_object() || v.is_array()) && !v.empty(); }

void EmitKey(const std::string& key, std::string* out) {
  if (IsPlainSafe(key)) {
    out->append(key);
  } else {
    out->append(Json(key).dump(-1, ' ', false, Json::error_handler_t::replace));
  }
}

void EmitBlock(const Json& v, int indent, bool first_inline, std::string* out);

// `key: value` lines of a map at `indent`; the first line's indentation is
// already written when `first_inline`.
void EmitMap(const Json& obj, int indent, bool first_inline, std::string* out) {
  bool first = true;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!(first && first_inline)) out->append(static_cast<size_t>(indent), ' ');
    first = false;
    EmitKey(it.key(), out);
    out->push_back(':');
    const Json& val = it.value();
    if (!IsBlock(val)) {
      out->push_back(' ');
      EmitScalar(val, out);
      out->push_back('\n');
    } else if (val.is_object()) {
      out->push_back('\n');
      EmitMap(val, indent + 2, false, out);
    } else {
      out->push_back('\n');
      EmitBlock(val, indent, false, out);  // sequences sit at the key's indentation
    }
  }
}

void EmitBlock(const Json& v, int indent, bool first_inline, std::string* out) {
  if (v.is_object()) {
    EmitMap(v, indent, first_inline, out);
    return;
  }
  bool first = true;
  for (const Json& item : v) {
    if (!(first && first_inline)) out->append(static_cast<size_t>(indent), ' ');
    first = false;
    out->append("- ");
    if (!IsBlock(item)) {
      EmitScalar(item, out);
      out->push_back('\n');
    } else if (item.is_object()) {
      EmitMap(item, indent + 2, true, out);
    } else {
      EmitBlock(item, indent + 2, true, out);
    }
  }
}

}  // namespace

absl::StatusOr<RawObject> MakeRawObject(std::string_view source, std::string_view json,
                                        std::string_view default_api_version,
                                        std::string_view default_kind) {
  Json obj = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded())
    return absl::InvalidArgumentError(gantry::StrCat(source, ": invalid JSON object"));
  if (!obj.is_object())
    return absl::InvalidArgumentError(gantry::StrCat(source, ": expected a JSON object"));
  RawObject raw;
  auto str = [](const Json& o, const char* key) -> std::string {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  raw.api_version = str(obj, "apiVersion");
  raw.kind = str(obj, "kind");
  if (raw.api_version.empty() && !default_api_version.empty()) {
    raw.api_version = std::string(default_api_version);
    obj["apiVersion"] = raw.api_version;
  }
  if (raw.kind.empty() && !default_kind.empty()) {
    raw.kind = std::string(default_kind);
    obj["kind"] = raw.kind;
  }
  if (raw.kind.empty()) {
    return absl::InvalidArgumentError(gantry::StrCat(source, ": object without kind"));
  }
  if (auto meta = obj.find("metadata"); meta != obj.end() && meta->is_object()) {
    meta->erase("managedFields");
    raw.namespace_ = str(*meta, "namespace");
    raw.name = str(*meta, "name");
  }
  raw.json = obj.dump(-1, ' ', false, Json::error_handler_t::replace);
  return raw;
}

absl::StatusOr<SnapshotFormat> SnapshotFormatForPath(std::string_view path) {
  if (path.ends_with(".pb")) return SnapshotFormat::kProto;
  if (path.ends_with(".json")) return SnapshotFormat::kJson;
  if (path.ends_with(".yaml") || path.ends_with(".yml")) return SnapshotFormat::kYaml;
  return absl::InvalidArgumentError(
      gantry::StrCat(path, ": unknown snapshot format; use a .pb, .yaml, .yml or .json file name"));
}

bool LooksLikeSnapshotProto(std::string_view bytes) {
  size_t pos = 0;
  uint64_t chunk_len = 0;
  if (!ReadVarint(bytes, &pos, &chunk_len) || chunk_len == 0) return false;
  if (pos >= bytes.size() || bytes[pos] != 0x0a) return false;  // Chunk.header, length-delimited
  ++pos;
  uint64_t header_len = 0;
  if (!ReadVarint(bytes, &pos, &header_len) || header_len == 0) return false;
  return pos < bytes.size() && bytes[pos] == 0x08;  // Header.format_version, varint
}

absl::Status ReadSnapshotProto(
    std::string_view source, std::string_view bytes,
    const std::function<absl::Status(const pb::Header&)>& on_header,
    const std::function<absl::Status(const pb::Object&, int64_t index)>& on_object) {
  size_t pos = 0;
  int64_t chunk_index = 0;
  int64_t object_index = 0;
  pb::Chunk chunk;
  while (pos < bytes.size()) {
    const size_t chunk_start = pos;
    uint64_t len = 0;
    if (!ReadVarint(bytes, &pos, &len)) {
      return absl::InvalidArgumentError(gantry::StrCat(source, ": byte ", chunk_start, ": chunk ",
                                                       chunk_index, ": truncated length prefix"));
    }
    if (len > static_cast<uint64_t>(kMaxChunkBytes) || len > bytes.size() - pos) {
      return absl::InvalidArgumentError(gantry::StrCat(
          source, ": byte ", chunk_start, ": chunk ", chunk_index, ": length ", len,
          " exceeds the ", bytes.size() - pos, " bytes left (truncated or not a .pb snapshot)"));
    }
    if (!chunk.ParseFromArray(bytes.data() + pos, static_cast<int>(len))) {
      return absl::InvalidArgumentError(gantry::StrCat(
          source, ": byte ", chunk_start, ": chunk ", chunk_index, ": not a valid snapshot chunk"));
    }
    pos += len;
    if (chunk_index == 0) {
      if (!chunk.has_header()) {
        return absl::InvalidArgumentError(
            gantry::StrCat(source, ": first chunk has no header (not a Gantry snapshot)"));
      }
      if (chunk.header().format_version() != kSnapshotFormatVersion) {
        return absl::InvalidArgumentError(gantry::StrCat(
            source, ": snapshot format version ", chunk.header().format_version(),
            " is not supported (this Gantry reads version ", kSnapshotFormatVersion, ")"));
      }
      if (on_header) {
        if (absl::Status st = on_header(chunk.header()); !st.ok()) return st;
      }
    } else if (chunk.has_header()) {
      return absl::InvalidArgumentError(
          gantry::StrCat(source, ": chunk ", chunk_index, ": a second header"));
    }
    for (const pb::Object& obj : chunk.objects()) {
      if (absl::Status st = on_object(obj, object_index++); !st.ok()) return st;
    }
    ++chunk_index;
  }
  if (chunk_index == 0)
    return absl::InvalidArgumentError(gantry::StrCat(source, ": empty file (no snapshot header)"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> JsonToYaml(std::string_view json) {
  Json v = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return absl::InvalidArgumentError("JsonToYaml: invalid JSON");
  std::string out;
  if (IsBlock(v)) {
    EmitBlock(v, 0, false, &out);
  } else {
    EmitScalar(v, &out);
    out.push_back('\n');
  }
  return out;
}

std::vector<pb::Chunk> EncodeChunks(const pb::Header& header,
                                    const std::vector<RawObject>& objects) {
  std::vector<pb::Chunk> chunks;
  chunks.emplace_back();
  *chunks.back().mutable_header() = header;
  chunks.back().mutable_header()->set_format_version(kSnapshotFormatVersion);
  chunks.back().mutable_header()->set_object_count(static_cast<int64_t>(objects.size()));
  for (const RawObject& raw : objects) {
    if (chunks.back().objects_size() >= kObjectsPerChunk) chunks.emplace_back();
    pb::Object* o = chunks.back().add_objects();
    o->set_api_version(raw.api_version);
    o->set_kind(raw.kind);
    o->set_namespace_(raw.namespace_);
    o->set_name(raw.name);
    o->set_json(raw.json);
  }
  return chunks;
}

absl::Status WriteSnapshot(std::string_view path, SnapshotFormat format, const pb::Header& header,
                           const std::vector<RawObject>& objects) {
  std::string out;
  switch (format) {
    case SnapshotFormat::kProto:
      for (const pb::Chunk& chunk : EncodeChunks(header, objects)) {
        std::string bytes;
        if (!chunk.SerializeToString(&bytes))
          return absl::InternalError("snapshot chunk does not serialize");
        WriteVarint(bytes.size(), &out);
        out.append(bytes);
      }
      break;
    case SnapshotFormat::kYaml:
      out.append(gantry::StrCat("# Gantry snapshot: ", objects.size(), " object(s)",
                                header.source().empty() ? "" : " from ", header.source(), "\n"));
      for (const RawObject& raw : objects) {
        absl::StatusOr<std::string> yaml = JsonToYaml(raw.json);
        if (!yaml.ok()) {
          return absl::InternalError(gantry::StrCat(raw.kind, " ", raw.namespace_, "/", raw.name,
                                                    ": ", yaml.status().message()));
        }
        out.append("---\n");
        out.append(*yaml);
      }
      break;
    case SnapshotFormat::kJson:
      out.append("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
      for (size_t i = 0; i < objects.size(); ++i) {
        if (i > 0) out.append(",\n");
        out.append(objects[i].json);
      }
      out.append("]}\n");
      break;
  }
  std::ofstream f{std::string(path), std::ios::binary | std::ios::trunc};
  if (!f) return absl::UnavailableError(gantry::StrCat(path, ": cannot open for writing"));
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.close();
  if (!f) return absl::UnavailableError(gantry::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

}  // namespace gantry::sim
