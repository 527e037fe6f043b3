// Cluster events and queueing hints: how plugins tell the queue which
// changes could make a pod they rejected schedulable again.
#ifndef GANTRY_EVENTS_H_
#define GANTRY_EVENTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "src/api/pod.h"

namespace gantry::framework {

enum class EventResource : uint8_t {
  kPod,            // any pod
  kAssignedPod,    // a pod bound to a node (existing load)
  kUnscheduledPod, // a pending pod
  kNode,
  kNamespace,
  kResourceClaim,
  kResourceSlice,
  kDeviceClass,
  kDeviceTaintRule,
  kPodGroup,
  kWorkload,
  kPersistentVolumeClaim,
  kWildcard,       // every resource
};
std::string_view EventResourceName(EventResource r);

// Bit set of what happened.
enum ActionType : uint32_t {
  kAdd = 1u << 0,
  kDelete = 1u << 1,
  kUpdateNodeAllocatable = 1u << 2,
  kUpdateNodeLabel = 1u << 3,
  kUpdateNodeTaint = 1u << 4,
  kUpdateNodeCondition = 1u << 5,
  kUpdateNodeAnnotation = 1u << 6,
  kUpdatePodLabel = 1u << 7,
  kUpdatePodScaleDown = 1u << 8,
  kUpdatePodToleration = 1u << 9,
  kUpdatePodSchedulingGatesEliminated = 1u << 10,
  kUpdatePodGeneratedResourceClaim = 1u << 11,
  kUpdateOther = 1u << 12,  // an update not covered by a finer bit
  kUpdate = kUpdateNodeAllocatable | kUpdateNodeLabel | kUpdateNodeTaint | kUpdateNodeCondition |
            kUpdateNodeAnnotation | kUpdatePodLabel | kUpdatePodScaleDown | kUpdatePodToleration |
            kUpdatePodSchedulingGatesEliminated | kUpdatePodGeneratedResourceClaim | kUpdateOther,
  kAll = kAdd | kDelete | kUpdate,
};

struct ClusterEvent {
  EventResource resource = EventResource::kWildcard;
  uint32_t actions = kAll;
  std::string label;  // for metrics and logs, e.g. "NodeAdd"

  // True if this (registered) event covers the concrete `happened` event.
  bool Matches(const ClusterEvent& happened) const {
    bool resource_ok = resource == EventResource::kWildcard || resource == happened.resource ||
                       (resource == EventResource::kPod &&
                        (happened.resource == EventResource::kAssignedPod ||
                         happened.resource == EventResource::kUnscheduledPod));
    return resource_ok && (actions & happened.actions) != 0;
  }
};

enum class QueueingHint : uint8_t { kSkip, kQueue };

// `old_obj` / `new_obj` point at the api type of the event's resource
// (api::Node for kNode, api::Pod for pod events, ...); either may be null.
using QueueingHintFn = std::function<QueueingHint(const api::Pod& pod, const ClusterEvent& event,
                                                  const void* old_obj, const void* new_obj)>;

struct ClusterEventWithHint {
  ClusterEvent event;
  QueueingHintFn hint;  // null: always requeue on this event
};

}  // namespace gantry::framework

#endif  // GANTRY_EVENTS_H_
