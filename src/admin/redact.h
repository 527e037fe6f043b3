// What a snapshot keeps of a recorded object: only what scheduling reads.
//
// Recording (`gantry record`, the admin service's GetSnapshot) passes every
// object through RedactForSnapshot before it is stored or sent, so a
// snapshot never carries container environment (env, envFrom), command
// lines (command, args), probes or lifecycle hooks, or annotations that no
// decoder or plugin reads. Secrets and ConfigMaps are never recorded: they
// are refused here even though no recorded kind lists them.
//
// The kept container fields and annotation keys are the ones the src/api
// decoders and the simulator read; a decoder that starts reading another
// field must add it here (admin_redact_test checks that a redacted cluster
// schedules as the original does).
#ifndef GANTRY_SRC_ADMIN_REDACT_H_
#define GANTRY_SRC_ADMIN_REDACT_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "src/sim/snapshot_file.h"

namespace gantry::admin {

// Annotation keys a snapshot keeps (every other annotation is dropped).
const std::vector<std::string_view>& KeptAnnotations();
// Container fields a snapshot keeps, in spec.containers, initContainers and
// ephemeralContainers of a Pod.
const std::vector<std::string_view>& KeptContainerFields();
// Kinds a snapshot never holds: Secret, ConfigMap.
bool IsNeverRecordedKind(std::string_view kind);

// `raw` without what scheduling does not read (see above). InvalidArgument
// for a never-recorded kind or JSON that is not an object; errors name the
// object.
absl::StatusOr<sim::RawObject> RedactForSnapshot(sim::RawObject raw);

}  // namespace gantry::admin

#endif  // GANTRY_SRC_ADMIN_REDACT_H_
