// Snapshot files in Gantry's binary format (proto/gantry/snapshot/v1) and
// export to YAML/JSON.
//
// A `.pb` snapshot is a sequence of length-delimited `Chunk` messages whose
// objects carry their Kubernetes JSON; `LoadClusterPath` (loader.h) reads it
// like any other snapshot. `SnapshotWriter` writes all three formats from
// raw objects, so `gantry record`, `gantry snapshot convert` and the admin
// service's GetSnapshot share one encoder.
#ifndef GANTRY_SRC_SIM_SNAPSHOT_FILE_H_
#define GANTRY_SRC_SIM_SNAPSHOT_FILE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gantry/snapshot/v1/snapshot.pb.h"

namespace gantry::sim {

inline constexpr uint32_t kSnapshotFormatVersion = 1;
// Objects per chunk when writing (keeps each message small for streaming).
inline constexpr int kObjectsPerChunk = 256;
// A single chunk larger than this is rejected as corrupt.
inline constexpr int64_t kMaxChunkBytes = int64_t{512} << 20;

// One Kubernetes object as JSON text with its type and identity.
struct RawObject {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string json;  // minified, includes apiVersion and kind
};

// Builds a RawObject from JSON text: fills in `api_version`/`kind` when the
// text lacks them (typed list items), drops metadata.managedFields and
// minifies. Errors name `source`.
absl::StatusOr<RawObject> MakeRawObject(std::string_view source, std::string_view json,
                                        std::string_view default_api_version = "",
                                        std::string_view default_kind = "");

enum class SnapshotFormat { kProto, kYaml, kJson };
// By extension: .pb -> proto, .json -> JSON, .yaml/.yml -> YAML; else an error.
absl::StatusOr<SnapshotFormat> SnapshotFormatForPath(std::string_view path);

// True when `bytes` starts like a Gantry .pb snapshot (a chunk whose first
// field is the header), used to sniff files without the .pb extension.
bool LooksLikeSnapshotProto(std::string_view bytes);

// Calls `on_header` for the header and `on_object` for each object of the
// .pb snapshot `bytes`, in order. Rejects unknown format versions, a
// missing header and truncated or corrupt framing; `source` prefixes errors.
absl::Status ReadSnapshotProto(
    std::string_view source, std::string_view bytes,
    const std::function<absl::Status(const gantry::snapshot::v1::Header&)>& on_header,
    const std::function<absl::Status(const gantry::snapshot::v1::Object&, int64_t index)>&
        on_object);

// Renders one JSON document as block-style YAML (strings that a YAML 1.1 or
// 1.2 reader could take for another type are double-quoted).
absl::StatusOr<std::string> JsonToYaml(std::string_view json);

// Encodes `objects` into chunks: header first, kObjectsPerChunk objects each.
std::vector<gantry::snapshot::v1::Chunk> EncodeChunks(const gantry::snapshot::v1::Header& header,
                                                      const std::vector<RawObject>& objects);

// Writes `objects` to `path` in `format` (.pb: header + chunks; YAML:
// multi-document with `---`; JSON: a kubectl-style `List`).
absl::Status WriteSnapshot(std::string_view path, SnapshotFormat format,
                           const gantry::snapshot::v1::Header& header,
                           const std::vector<RawObject>& objects);

}  // namespace gantry::sim

#endif  // GANTRY_SRC_SIM_SNAPSHOT_FILE_H_
