#include "plugins/registry/registry.h"

#include "gantry/util/status_macros.h"
#include "plugins/default_binder/default_binder.h"
#include "plugins/default_preemption/default_preemption.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "plugins/gpu_fragmentation/gpu_fragmentation.h"
#include "plugins/image_locality/image_locality.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_name/node_name.h"
#include "plugins/node_ports/node_ports.h"
#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"
#include "plugins/node_resources_fit/node_resources_fit.h"
#include "plugins/node_unschedulable/node_unschedulable.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "plugins/priority_sort/priority_sort.h"
#include "plugins/scheduling_gates/scheduling_gates.h"
#include "plugins/taint_toleration/taint_toleration.h"
// Further plugin headers go here (PodTopologySpread, InterPodAffinity, ...).

namespace gantry::plugins {

absl::Status RegisterBuiltinPlugins(framework::Registry& registry) {
  GANTRY_RETURN_IF_ERROR(scheduling_gates::Register(registry));
  GANTRY_RETURN_IF_ERROR(priority_sort::Register(registry));
  GANTRY_RETURN_IF_ERROR(node_unschedulable::Register(registry));
  GANTRY_RETURN_IF_ERROR(node_name::Register(registry));
  GANTRY_RETURN_IF_ERROR(taint_toleration::Register(registry));
  GANTRY_RETURN_IF_ERROR(node_affinity::Register(registry));
  GANTRY_RETURN_IF_ERROR(node_ports::Register(registry));
  GANTRY_RETURN_IF_ERROR(node_resources_fit::Register(registry));
  GANTRY_RETURN_IF_ERROR(pod_topology_spread::Register(registry));
  GANTRY_RETURN_IF_ERROR(inter_pod_affinity::Register(registry));
  GANTRY_RETURN_IF_ERROR(node_resources_balanced_allocation::Register(registry));
  GANTRY_RETURN_IF_ERROR(image_locality::Register(registry));
  GANTRY_RETURN_IF_ERROR(default_binder::Register(registry));
  GANTRY_RETURN_IF_ERROR(dynamic_resources::Register(registry));
  GANTRY_RETURN_IF_ERROR(default_preemption::Register(registry));
  GANTRY_RETURN_IF_ERROR(gpu_fragmentation::Register(registry));
  // Further plugins are appended here, one line each (PodTopologySpread, InterPodAffinity, ...).
  return absl::OkStatus();
}

}  // namespace gantry::plugins
