// Loads a cluster from files: a `kubectl get ... -o yaml|json` List,
// multi-document YAML, a JSON object or array, or a directory of such files
// (walked recursively in name order).
//
// Errors fail the whole load with `file:line:col: Kind ns/name: field: msg`;
// callers must not report partial results. The exception is a bound pod
// that does not decode whole: it is loaded as an undecodable pod that keeps
// its node (see api::DecodePod) and counted in LoadStats. Kinds Gantry does not use are
// skipped and counted per kind so the caller can warn once per kind.
#ifndef GANTRY_SRC_SIM_LOADER_H_
#define GANTRY_SRC_SIM_LOADER_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "src/api/objects.h"
#include "src/sim/snapshot_file.h"

namespace gantry::sim {

struct LoadStats {
  std::vector<std::string> files;              // files read, in order
  std::map<std::string, int64_t> skipped_kinds;  // "apps/v1 Deployment" -> count
  int64_t objects = 0;
  int64_t bytes = 0;
  // Bound pods loaded without their whole spec (api::Pod::decode_error): they
  // count on their nodes with the requests that could be read.
  int64_t undecodable_pods = 0;
  std::string first_undecodable;  // the first one's decode error
  // Input, set by the caller before loading: when positive, workload
  // controllers (sim/workloads.h: Deployment, ReplicaSet, StatefulSet, Job,
  // JobSet, LeaderWorkerSet) are not skipped but expanded into the pods they
  // would create, at most this many in all (what-if). Counted in
  // `expanded_pods`.
  int64_t expand_workloads_up_to = 0;
  int64_t expanded_pods = 0;
};

// Loads `path` (a file or a directory; directories are walked recursively,
// files ending in .yaml, .yml, .json or .pb, in lexical order) into `out`.
// `.pb` files are Gantry's binary snapshots (snapshot_file.h); other names
// are sniffed. When `raw` is set, every decoded object is also appended to
// it as JSON (skipped kinds are not), for conversion between formats.
absl::Status LoadClusterPath(std::string_view path, api::ObjectSet* out, LoadStats* stats,
                             std::vector<RawObject>* raw = nullptr);

// Loads one in-memory document stream; `source_name` prefixes errors.
// `is_json` selects the JSON parser; otherwise YAML.
absl::Status LoadClusterText(std::string_view source_name, std::string_view text, bool is_json,
                             api::ObjectSet* out, LoadStats* stats, std::vector<RawObject>* raw = nullptr);

// Loads one in-memory .pb snapshot (see snapshot_file.h).
absl::Status LoadClusterProto(std::string_view source_name, std::string_view bytes, api::ObjectSet* out,
                              LoadStats* stats, std::vector<RawObject>* raw = nullptr);

}  // namespace gantry::sim

#endif  // GANTRY_SRC_SIM_LOADER_H_
