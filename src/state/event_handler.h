// The cluster events the scheduler consumes, as an interface: what the live
// event source (src/client) and the offline driver feed. One call per change
// of a watched object, in the order the changes happened for that object.
// `old_obj` is null for adds. Implementations are called from one thread at a
// time per object kind; scheduler::EventHandlers is the implementation.
#ifndef GANTRY_SRC_STATE_EVENT_HANDLER_H_
#define GANTRY_SRC_STATE_EVENT_HANDLER_H_

#include <memory>
#include <string_view>

#include "src/api/dra.h"
#include "src/api/intern.h"
#include "src/api/node.h"
#include "src/api/pod.h"
#include "src/api/policy.h"
#include "src/state/cluster_state.h"

namespace gantry::state {

class ClusterEventHandler {
 public:
  virtual ~ClusterEventHandler() = default;

  virtual void OnPodAdd(std::shared_ptr<const api::Pod> pod) = 0;
  virtual void OnPodUpdate(std::shared_ptr<const api::Pod> old_pod,
                           std::shared_ptr<const api::Pod> pod) = 0;
  virtual void OnPodDelete(std::shared_ptr<const api::Pod> pod) = 0;
  virtual void OnNodeAdd(std::shared_ptr<const api::Node> node) = 0;
  virtual void OnNodeUpdate(std::shared_ptr<const api::Node> old_node,
                            std::shared_ptr<const api::Node> node) = 0;
  virtual void OnNodeDelete(std::shared_ptr<const api::Node> node) = 0;

  // A namespace added or changed (its labels), or deleted.
  virtual void OnNamespace(api::Symbol name, api::Labels labels) = 0;
  virtual void OnNamespaceDelete(api::Symbol name) = 0;
  virtual void OnPriorityClass(api::Symbol name, PriorityClassInfo info) = 0;
  virtual void OnPriorityClassDelete(api::Symbol name) = 0;
  // A PodDisruptionBudget added or changed; deleted by its "ns/name" key.
  virtual void OnPodDisruptionBudget(std::shared_ptr<const api::PodDisruptionBudget> pdb) = 0;
  virtual void OnPodDisruptionBudgetDelete(std::string_view key) = 0;

  // PodGroups (native or scheduler-plugins) and v1alpha3 CompositePodGroups,
  // deleted by their "ns/name" key.
  virtual void OnPodGroup(GroupInfo group) = 0;
  virtual void OnPodGroupDelete(std::string_view key) = 0;
  virtual void OnCompositePodGroup(GroupInfo group) = 0;
  virtual void OnCompositePodGroupDelete(std::string_view key) = 0;

  // Dynamic Resource Allocation objects.
  virtual void OnResourceSlice(std::shared_ptr<const api::ResourceSlice> old_obj,
                               std::shared_ptr<const api::ResourceSlice> obj) = 0;
  virtual void OnResourceSliceDelete(std::shared_ptr<const api::ResourceSlice> obj) = 0;
  virtual void OnDeviceClass(std::shared_ptr<const api::DeviceClass> old_obj,
                             std::shared_ptr<const api::DeviceClass> obj) = 0;
  virtual void OnDeviceClassDelete(std::shared_ptr<const api::DeviceClass> obj) = 0;
  virtual void OnResourceClaim(std::shared_ptr<const api::ResourceClaim> old_obj,
                               std::shared_ptr<const api::ResourceClaim> obj) = 0;
  virtual void OnResourceClaimDelete(std::shared_ptr<const api::ResourceClaim> obj) = 0;
  virtual void OnResourceClaimTemplate(std::shared_ptr<const api::ResourceClaimTemplate> obj) = 0;
  virtual void OnResourceClaimTemplateDelete(
      std::shared_ptr<const api::ResourceClaimTemplate> obj) = 0;
  virtual void OnDeviceTaintRule(std::shared_ptr<const api::DeviceTaintRule> old_obj,
                                 std::shared_ptr<const api::DeviceTaintRule> obj) = 0;
  virtual void OnDeviceTaintRuleDelete(std::shared_ptr<const api::DeviceTaintRule> obj) = 0;
};

}  // namespace gantry::state

#endif  // GANTRY_SRC_STATE_EVENT_HANDLER_H_
