// The pods that workload controllers would create, for what-if questions
// ("would this JobSet fit?"): Deployment, ReplicaSet and StatefulSet
// (apps), Job (batch), JobSet (jobset.x-k8s.io) and LeaderWorkerSet
// (leaderworkerset.x-k8s.io). Each controller's pod template is expanded to
// its replica count with the names and the labels the controller gives its
// pods, so selectors in the templates (affinity, topology spread) see what
// they would see in the cluster. Nothing else of the controllers is
// modelled (no rollout, no suspension, no Workload objects).
#ifndef GANTRY_SRC_SIM_WORKLOADS_H_
#define GANTRY_SRC_SIM_WORKLOADS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/api/decode.h"

namespace gantry::sim {

// One pod template of a workload and the pods made from it.
struct TemplatePods {
  // Path from the workload object to the PodTemplateSpec ({metadata, spec}).
  std::vector<api::PathSegment> path;
  struct PodName {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;  // added by the controller
  };
  std::vector<PodName> pods;
};

// Whether `api_version`/`kind` is one of the workload kinds above.
bool IsExpandableWorkload(std::string_view api_version, std::string_view kind);

// The templates of workload `obj` and the pods made from each. At most
// `max_pods` pods in all; beyond that, or on a count that is not a
// non-negative integer or a template that is missing, `*error` says which
// field (its path relative to `obj`) and false is returned.
bool PlanWorkloadPods(api::JsonValue obj, std::string_view kind, int64_t max_pods,
                      std::vector<TemplatePods>* out, api::DecodeError* error);

}  // namespace gantry::sim

#endif  // GANTRY_SRC_SIM_WORKLOADS_H_
