#include "src/scheduler/event_handlers.h"

namespace gantry::scheduler {
namespace {

using framework::ClusterEvent;
using framework::EventResource;

bool SameTaints(const std::vector<api::Taint>& a, const std::vector<api::Taint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].value != b[i].value || a[i].effect != b[i].effect)
      return false;
  }
  return true;
}

bool SameConditions(const std::vector<api::NodeCondition>& a,
                    const std::vector<api::NodeCondition>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type != b[i].type || a[i].status != b[i].status) return false;
  }
  return true;
}

}  // namespace

uint32_t NodeUpdateActions(const api::Node& old_node, const api::Node& new_node) {
  uint32_t actions = 0;
  if (!(old_node.allocatable == new_node.allocatable)) actions |= framework::kUpdateNodeAllocatable;
  if (old_node.meta.labels != new_node.meta.labels) actions |= framework::kUpdateNodeLabel;
  if (!SameTaints(old_node.taints, new_node.taints) ||
      old_node.unschedulable != new_node.unschedulable) {
    actions |= framework::kUpdateNodeTaint;
  }
  if (!SameConditions(old_node.conditions, new_node.conditions))
    actions |= framework::kUpdateNodeCondition;
  if (old_node.meta.annotations != new_node.meta.annotations)
    actions |= framework::kUpdateNodeAnnotation;
  return actions;
}

void EventHandlers::OnPodAdd(std::shared_ptr<const api::Pod> pod) {
  if (pod->IsTerminal()) return;
  if (pod->IsBound()) {
    state_.AddOrUpdateBoundPod(pod);
    framework::PodInfoPtr info = state_.MakePodInfo(pod);
    queue_->Delete(pod->meta.uid);
    queue_->AssignedPodAdded(info);
    return;
  }
  if (!profiles_.Serves(pod->scheduler_name.view())) {
    // Another scheduler's pod: never touched, but remembered if it claims
    // membership of a PodGroup, so that group can be rejected as mixed.
    foreign_.Add(*pod);
    return;
  }
  queue_->Add(state_.MakePodInfo(std::move(pod)));
}

void EventHandlers::OnPodUpdate(std::shared_ptr<const api::Pod> old_pod,
                                std::shared_ptr<const api::Pod> pod) {
  if (pod->IsTerminal()) {
    OnPodDelete(pod);
    return;
  }
  if (pod->IsBound()) {
    foreign_.Forget(pod->meta.uid);
    state_.AddOrUpdateBoundPod(pod);
    framework::PodInfoPtr info = state_.MakePodInfo(pod);
    if (old_pod && old_pod->IsBound()) {
      queue_->AssignedPodUpdated(state_.MakePodInfo(old_pod), info);
    } else {
      queue_->Delete(pod->meta.uid);
      queue_->AssignedPodAdded(info);
    }
    return;
  }
  if (!profiles_.Serves(pod->scheduler_name.view())) {
    OnPodAdd(std::move(pod));  // counts a foreign group member once (by UID)
    return;
  }
  queue_->Update(state_.MakePodInfo(std::move(pod)));
}

void EventHandlers::OnPodDelete(std::shared_ptr<const api::Pod> pod) {
  foreign_.Forget(pod->meta.uid);
  const bool was_in_cache = state_.NodeOf(pod->meta.uid).has_value();
  state_.RemovePod(pod->meta.uid);
  queue_->Delete(pod->meta.uid);
  queue_->DeleteNominatedPodIfExists(pod->meta.uid);
  if (was_in_cache || pod->IsBound()) queue_->AssignedPodDeleted(state_.MakePodInfo(pod));
  if (profiles_.Serves(pod->scheduler_name.view())) observers_.PodDeleted(*pod);
}

void EventHandlers::OnNodeAdd(std::shared_ptr<const api::Node> node) {
  state_.AddOrUpdateNode(node);
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kNode, framework::kAdd, "NodeAdd"}, nullptr, node);
}

void EventHandlers::OnNodeUpdate(std::shared_ptr<const api::Node> old_node,
                                 std::shared_ptr<const api::Node> node) {
  uint32_t actions = old_node ? NodeUpdateActions(*old_node, *node) : framework::kUpdate;
  state_.AddOrUpdateNode(node);
  if (actions == 0) return;
  queue_->MoveAllToActiveOrBackoffQueue(ClusterEvent{EventResource::kNode, actions, "NodeUpdate"},
                                        old_node, node);
}

void EventHandlers::OnNodeDelete(std::shared_ptr<const api::Node> node) {
  state_.RemoveNode(node->meta.name);
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kNode, framework::kDelete, "NodeDelete"}, node, nullptr);
}

void EventHandlers::OnNamespace(api::Symbol name, api::Labels labels) {
  state_.SetNamespace(name, std::move(labels));
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kNamespace, framework::kAdd | framework::kUpdateOther,
                   "NamespaceChange"},
      nullptr, nullptr);
}

void EventHandlers::OnNamespaceDelete(api::Symbol name) { state_.RemoveNamespace(name); }

void EventHandlers::OnPriorityClass(api::Symbol name, state::PriorityClassInfo info) {
  state_.SetPriorityClass(name, info);
}

void EventHandlers::OnPriorityClassDelete(api::Symbol name) { state_.RemovePriorityClass(name); }

void EventHandlers::OnPodDisruptionBudget(std::shared_ptr<const api::PodDisruptionBudget> pdb) {
  state_.SetPodDisruptionBudget(std::move(pdb));
}

void EventHandlers::OnPodDisruptionBudgetDelete(std::string_view key) {
  state_.RemovePodDisruptionBudget(key);
}

void EventHandlers::OnPodGroup(state::GroupInfo group) {
  if (group.native && !group.composite) {
    // PodGroup-level DRA claims (DynamicResources reads them from DraState).
    const size_t slash = group.key.find('/');
    dra_.SetPodGroupClaims(state::PodGroupClaims{
        group.key.substr(0, slash), group.key.substr(slash + 1), group.uid, group.resource_claims});
  }
  state_.SetGroup(std::move(group));
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kPodGroup, framework::kAdd | framework::kUpdateOther,
                   "PodGroupChange"},
      nullptr, nullptr);
}

void EventHandlers::OnPodGroupDelete(std::string_view key) {
  const size_t slash = key.find('/');
  if (slash != std::string_view::npos)
    dra_.RemovePodGroupClaims(key.substr(0, slash), key.substr(slash + 1));
  state_.RemoveGroup(key);
  group_status_.Forget(key);
  writer_.ForgetPodGroup(key);
}

void EventHandlers::OnCompositePodGroup(state::GroupInfo group) {
  state_.SetCompositeGroup(std::move(group));
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kPodGroup, framework::kAdd | framework::kUpdateOther,
                   "CompositePodGroupChange"},
      nullptr, nullptr);
}

void EventHandlers::OnCompositePodGroupDelete(std::string_view key) {
  state_.RemoveCompositeGroup(key);
  group_status_.Forget(key);
  writer_.ForgetPodGroup(key);
}

}  // namespace gantry::scheduler
