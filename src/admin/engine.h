// Explain and what-if over a copy of a cluster: the same engine the live
// scheduler runs (BuildScheduler: same configuration, same plugins), driven
// offline with an in-memory writer and a virtual clock, so nothing is bound
// or written anywhere.
//
// `cluster` is either a snapshot file's objects (gantry explain/whatif
// --cluster) or a fresh listing of the live cluster (the admin service).
// Errors are absl::Status with the code the admin service returns:
// InvalidArgument (malformed request or objects; names object and field,
// line:column for YAML), NotFound (unknown pod or group), AlreadyExists
// (a what-if object that exists in the cluster), ResourceExhausted (too many
// objects).
#ifndef GANTRY_SRC_ADMIN_ENGINE_H_
#define GANTRY_SRC_ADMIN_ENGINE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "gantry/admin/v1/admin.pb.h"
#include "gantry/registry.h"
#include "src/admin/diagnosis.h"
#include "src/api/objects.h"
#include "src/config/config.h"

namespace gantry::admin {

// Most objects a what-if request may carry.
inline constexpr size_t kMaxWhatIfObjects = 10'000;

struct EngineOptions {
  const config::Configuration* config = nullptr;
  const framework::Registry* registry = nullptr;
  uint64_t seed = 1;
  // "live" or "snapshot": copied into responses.
  std::string source = "snapshot";
};

// Explains a pod or PodGroup of `cluster`.
//
// Without `live`, replays `cluster` (every pending pod, as `gantry simulate`
// would) and reports the target's attempt in that replay. With `live` (the
// running scheduler's records), the last attempt comes from `live` and the
// replay only places the target (and its group's members) on the bound pods
// of `cluster`, for the candidates' scores and when nothing is recorded yet.
absl::StatusOr<v1::ExplainResponse> Explain(const v1::ExplainRequest& request,
                                            const api::ObjectSet& cluster,
                                            const EngineOptions& options,
                                            const DiagnosisStore* live = nullptr);

// Parses `request.objects` (Pods, PodGroups, CompositePodGroups, Workloads,
// ResourceClaims, ResourceClaimTemplates) and places them on the bound pods
// of `cluster`. Pending pods of `cluster` are left out: they hold nothing.
absl::StatusOr<v1::WhatIfResponse> WhatIf(const v1::WhatIfRequest& request,
                                          const api::ObjectSet& cluster,
                                          const EngineOptions& options);

}  // namespace gantry::admin

#endif  // GANTRY_SRC_ADMIN_ENGINE_H_
