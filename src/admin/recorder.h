// Recording a live cluster: lists every object kind Gantry uses from the API
// server (only the APIs the server serves) into raw objects for a snapshot
// (src/sim/snapshot_file.h). Used by `gantry record` and by the admin
// service's GetSnapshot. Every object is redacted (src/admin/redact.h):
// a recording keeps only what scheduling reads.
#ifndef GANTRY_SRC_ADMIN_RECORDER_H_
#define GANTRY_SRC_ADMIN_RECORDER_H_

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "src/client/http.h"
#include "src/sim/snapshot_file.h"

namespace gantry::admin {

// One kind Gantry reads: its API group/versions in order of preference and
// its resource (plural) name.
struct RecordedKind {
  std::string kind;
  std::vector<std::string> group_versions;
  std::string resource;
  std::string field_selector;  // pods: non-terminal only, as the scheduler lists them
};

// Every kind the loader decodes (api::KindFromTypeMeta), in recording order.
const std::vector<RecordedKind>& RecordedKinds();

struct Recording {
  std::vector<sim::RawObject> objects;
  // "v1 Pod" -> count, for every kind listed; kinds whose API is not served are absent.
  std::map<std::string, int64_t> counts;
  std::vector<std::string> not_served;  // "resource.k8s.io DeviceClass", ...
  std::string server;
  int64_t recorded_at_unix_micros = 0;
};

// Lists all recorded kinds (chunked LIST, `page_size` per page). Each kind
// is one consistent list; different kinds are listed one after the other,
// so the snapshot is not a single point in time. `stop` aborts.
absl::StatusOr<Recording> RecordCluster(client::HttpClient& client, int64_t page_size = 500,
                                        const std::atomic<bool>* stop = nullptr);

// The snapshot header for a recording.
snapshot::v1::Header RecordingHeader(const Recording& rec, std::string_view generator);

}  // namespace gantry::admin

#endif  // GANTRY_SRC_ADMIN_RECORDER_H_
