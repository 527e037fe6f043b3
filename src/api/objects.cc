#include "src/api/objects.h"

namespace gantry::api {
namespace {

// Splits "group/version" (core objects have no group).
std::string_view GroupOf(std::string_view api_version) {
  size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) return {};
  return api_version.substr(0, slash);
}

}  // namespace

Kind KindFromTypeMeta(std::string_view api_version, std::string_view kind) {
  std::string_view group = GroupOf(api_version);
  if (group.empty()) {
    if (api_version != "v1") return Kind::kUnknown;
    if (kind == "Pod") return Kind::kPod;
    if (kind == "Node") return Kind::kNode;
    if (kind == "Namespace") return Kind::kNamespace;
    return Kind::kUnknown;
  }
  std::string_view version = api_version.substr(group.size() + 1);
  if (group == "scheduling.k8s.io" && kind == "PriorityClass" && (version == "v1")) return Kind::kPriorityClass;
  if (group == "policy" && kind == "PodDisruptionBudget" && (version == "v1")) return Kind::kPodDisruptionBudget;
  if (group == "resource.k8s.io" && kind == "DeviceClass" && (version == "v1")) return Kind::kDeviceClass;
  if (group == "resource.k8s.io" && kind == "ResourceSlice" && (version == "v1")) return Kind::kResourceSlice;
  if (group == "resource.k8s.io" && kind == "ResourceClaim" && (version == "v1")) return Kind::kResourceClaim;
  if (group == "resource.k8s.io" && kind == "ResourceClaimTemplate" && (version == "v1")) return Kind::kResourceClaimTemplate;
  if (group == "resource.k8s.io" && kind == "DeviceTaintRule" && (version == "v1" || version == "v1alpha3" || version == "v1beta2")) return Kind::kDeviceTaintRule;
  if (group == "scheduling.k8s.io" && kind == "Workload" && (version == "v1beta1" || version == "v1alpha3")) return Kind::kWorkload;
  if (group == "scheduling.k8s.io" && kind == "PodGroup" && (version == "v1beta1" || version == "v1alpha3")) return Kind::kPodGroup;
  if (group == "scheduling.k8s.io" && kind == "CompositePodGroup" && (version == "v1alpha3")) return Kind::kCompositePodGroup;
  if (group == "scheduling.x-k8s.io" && kind == "PodGroup" && (version == "v1alpha1")) return Kind::kCoschedulingPodGroup;
  return Kind::kUnknown;
}

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kPod: return "Pod";
    case Kind::kNode: return "Node";
    case Kind::kNamespace: return "Namespace";
    case Kind::kPriorityClass: return "PriorityClass";
    case Kind::kPodDisruptionBudget: return "PodDisruptionBudget";
    case Kind::kDeviceClass: return "DeviceClass";
    case Kind::kResourceSlice: return "ResourceSlice";
    case Kind::kResourceClaim: return "ResourceClaim";
    case Kind::kResourceClaimTemplate: return "ResourceClaimTemplate";
    case Kind::kDeviceTaintRule: return "DeviceTaintRule";
    case Kind::kWorkload: return "Workload";
    case Kind::kPodGroup: return "PodGroup";
    case Kind::kCompositePodGroup: return "CompositePodGroup";
    case Kind::kCoschedulingPodGroup: return "PodGroup.scheduling.x-k8s.io";
    case Kind::kUnknown: return "Unknown";
  }
  return "Unknown";
}

void DecodeInto(Kind kind, Decoder& d, JsonValue root, ObjectSet* out) {
  switch (kind) {
    case Kind::kPod: {
      Pod pod = DecodePod(d, root);
      if (d.ok()) out->pods.push_back(std::move(pod));
      return;
    }
    case Kind::kNode: {
      Node node = DecodeNode(d, root);
      if (d.ok()) out->nodes.push_back(std::move(node));
      return;
    }
    case Kind::kNamespace: {
      Namespace obj = DecodeNamespace(d, root);
      if (d.ok()) out->namespaces.push_back(std::move(obj));
      return;
    }
    case Kind::kPriorityClass: {
      PriorityClass obj = DecodePriorityClass(d, root);
      if (d.ok()) out->priority_classes.push_back(std::move(obj));
      return;
    }
    case Kind::kPodDisruptionBudget: {
      PodDisruptionBudget obj = DecodePodDisruptionBudget(d, root);
      if (d.ok()) out->pdbs.push_back(std::move(obj));
      return;
    }
    case Kind::kDeviceClass: {
      DeviceClass obj = DecodeDeviceClass(d, root);
      if (d.ok()) out->device_classes.push_back(std::move(obj));
      return;
    }
    case Kind::kResourceSlice: {
      ResourceSlice obj = DecodeResourceSlice(d, root);
      if (d.ok()) out->resource_slices.push_back(std::move(obj));
      return;
    }
    case Kind::kResourceClaim: {
      ResourceClaim obj = DecodeResourceClaim(d, root);
      if (d.ok()) out->resource_claims.push_back(std::move(obj));
      return;
    }
    case Kind::kResourceClaimTemplate: {
      ResourceClaimTemplate obj = DecodeResourceClaimTemplate(d, root);
      if (d.ok()) out->resource_claim_templates.push_back(std::move(obj));
      return;
    }
    case Kind::kDeviceTaintRule: {
      DeviceTaintRule obj = DecodeDeviceTaintRule(d, root);
      if (d.ok()) out->device_taint_rules.push_back(std::move(obj));
      return;
    }
    case Kind::kWorkload: {
      Workload obj = DecodeWorkload(d, root);
      if (d.ok()) out->workloads.push_back(std::move(obj));
      return;
    }
    case Kind::kPodGroup: {
      PodGroup obj = DecodePodGroup(d, root);
      if (d.ok()) out->pod_groups.push_back(std::move(obj));
      return;
    }
    case Kind::kCompositePodGroup: {
      CompositePodGroup obj = DecodeCompositePodGroup(d, root);
      if (d.ok()) out->composite_pod_groups.push_back(std::move(obj));
      return;
    }
    case Kind::kCoschedulingPodGroup: {
      CoschedulingPodGroup obj = DecodeCoschedulingPodGroup(d, root);
      if (d.ok()) out->coscheduling_pod_groups.push_back(std::move(obj));
      return;
    }
    case Kind::kUnknown:
      return;
  }
}

}  // namespace gantry::api
