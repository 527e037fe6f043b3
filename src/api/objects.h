// Kind dispatch for decoded Kubernetes objects and the `ObjectSet` that
// holds a whole cluster's worth of them (a snapshot file, or the initial
// lists of a live sync).
#ifndef GANTRY_SRC_API_OBJECTS_H_
#define GANTRY_SRC_API_OBJECTS_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "src/api/decode.h"
#include "src/api/dra.h"
#include "src/api/node.h"
#include "src/api/pod.h"
#include "src/api/policy.h"
#include "src/api/workload.h"

namespace gantry::api {

enum class Kind : uint8_t {
  kUnknown,
  kPod,
  kNode,
  kNamespace,
  kPriorityClass,
  kPodDisruptionBudget,
  kDeviceClass,
  kResourceSlice,
  kResourceClaim,
  kResourceClaimTemplate,
  kDeviceTaintRule,
  kWorkload,
  kPodGroup,
  kCompositePodGroup,
  kCoschedulingPodGroup,
};

// Maps apiVersion + kind to a Kind (kUnknown for kinds Gantry does not use).
// The group must match; the version is accepted when Gantry decodes it.
Kind KindFromTypeMeta(std::string_view api_version, std::string_view kind);
std::string_view KindName(Kind kind);

struct ObjectSet {
  // A deque, so that a consumer can release the pods as it takes them (see
  // sim::RunSimulation(ObjectSet&&, ...)): the largest snapshots are mostly pods.
  std::deque<Pod> pods;
  std::vector<Node> nodes;
  std::vector<Namespace> namespaces;
  std::vector<PriorityClass> priority_classes;
  std::vector<PodDisruptionBudget> pdbs;
  std::vector<DeviceClass> device_classes;
  std::vector<ResourceSlice> resource_slices;
  std::vector<ResourceClaim> resource_claims;
  std::vector<ResourceClaimTemplate> resource_claim_templates;
  std::vector<DeviceTaintRule> device_taint_rules;
  std::vector<Workload> workloads;
  std::vector<PodGroup> pod_groups;
  std::vector<CompositePodGroup> composite_pod_groups;
  std::vector<CoschedulingPodGroup> coscheduling_pod_groups;

  size_t TotalObjects() const {
    return pods.size() + nodes.size() + namespaces.size() + priority_classes.size() + pdbs.size() + device_classes.size() + resource_slices.size() + resource_claims.size() + resource_claim_templates.size() + device_taint_rules.size() + workloads.size() + pod_groups.size() + composite_pod_groups.size() + coscheduling_pod_groups.size();
  }
};

// Decodes `root` as `kind` and appends it to `out`. On error the decoder
// holds the structured error and nothing is appended.
void DecodeInto(Kind kind, Decoder& d, JsonValue root, ObjectSet* out);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_OBJECTS_H_
