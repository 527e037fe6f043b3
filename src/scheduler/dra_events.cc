// The DRA event handlers: feed DraState, then requeue pods
// rejected by plugins that registered for the event.
#include "src/scheduler/event_handlers.h"

namespace gantry::scheduler {
namespace {

using framework::ClusterEvent;
using framework::EventResource;

uint32_t AddOrUpdate(bool has_old) { return has_old ? framework::kUpdateOther : framework::kAdd; }

}  // namespace

void EventHandlers::OnResourceSlice(std::shared_ptr<const api::ResourceSlice> old_obj,
                                    std::shared_ptr<const api::ResourceSlice> obj) {
  dra_.UpsertSlice(obj);
  if (!queue_) return;
  const bool upd = old_obj != nullptr;
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kResourceSlice, AddOrUpdate(upd), upd ? "ResourceSliceUpdate" : "ResourceSliceAdd"},
      std::move(old_obj), std::move(obj));
}

void EventHandlers::OnResourceSliceDelete(std::shared_ptr<const api::ResourceSlice> obj) {
  dra_.DeleteSlice(obj->meta.name);
  if (!queue_) return;
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kResourceSlice, framework::kDelete, "ResourceSliceDelete"}, std::move(obj), nullptr);
}

void EventHandlers::OnDeviceClass(std::shared_ptr<const api::DeviceClass> old_obj,
                                  std::shared_ptr<const api::DeviceClass> obj) {
  dra_.UpsertClass(obj);
  cycles_.MarkNodeResultsStale();
  if (!queue_) return;
  const bool upd = old_obj != nullptr;
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kDeviceClass, AddOrUpdate(upd), upd ? "DeviceClassUpdate" : "DeviceClassAdd"},
      std::move(old_obj), std::move(obj));
}

void EventHandlers::OnDeviceClassDelete(std::shared_ptr<const api::DeviceClass> obj) {
  dra_.DeleteClass(obj->meta.name);
  cycles_.MarkNodeResultsStale();
  if (!queue_) return;
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kDeviceClass, framework::kDelete, "DeviceClassDelete"}, std::move(obj), nullptr);
}

void EventHandlers::OnResourceClaim(std::shared_ptr<const api::ResourceClaim> old_obj,
                                    std::shared_ptr<const api::ResourceClaim> obj) {
  dra_.UpsertClaim(obj);
  if (!queue_) return;
  const bool upd = old_obj != nullptr;
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kResourceClaim, AddOrUpdate(upd), upd ? "ResourceClaimUpdate" : "ResourceClaimAdd"},
      std::move(old_obj), std::move(obj));
}

void EventHandlers::OnResourceClaimDelete(std::shared_ptr<const api::ResourceClaim> obj) {
  dra_.DeleteClaim(obj->meta.namespace_.view(), obj->meta.name);
  if (!queue_) return;
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kResourceClaim, framework::kDelete, "ResourceClaimDelete"}, std::move(obj), nullptr);
}

void EventHandlers::OnResourceClaimTemplate(std::shared_ptr<const api::ResourceClaimTemplate> obj) {
  dra_.UpsertTemplate(std::move(obj));
}

void EventHandlers::OnResourceClaimTemplateDelete(
    std::shared_ptr<const api::ResourceClaimTemplate> obj) {
  dra_.DeleteTemplate(obj->meta.namespace_.view(), obj->meta.name);
}

void EventHandlers::OnDeviceTaintRule(std::shared_ptr<const api::DeviceTaintRule> old_obj,
                                      std::shared_ptr<const api::DeviceTaintRule> obj) {
  dra_.UpsertTaintRule(obj);
  if (!queue_) return;
  const bool upd = old_obj != nullptr;
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kDeviceTaintRule, AddOrUpdate(upd), upd ? "DeviceTaintRuleUpdate" : "DeviceTaintRuleAdd"},
      std::move(old_obj), std::move(obj));
}

void EventHandlers::OnDeviceTaintRuleDelete(std::shared_ptr<const api::DeviceTaintRule> obj) {
  dra_.DeleteTaintRule(obj->meta.name);
  if (!queue_) return;
  queue_->MoveAllToActiveOrBackoffQueue(
      ClusterEvent{EventResource::kDeviceTaintRule, framework::kDelete, "DeviceTaintRuleDelete"}, std::move(obj),
      nullptr);
}

}  // namespace gantry::scheduler
