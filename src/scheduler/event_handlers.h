// The scheduler's side of the cluster events: each handler updates the
// cache (state::ClusterState, state::DraState) and tells the queue what
// changed, so pods rejected by plugins that registered for the event retry
// (upstream's eventhandlers). Called by the live event source or the
// offline driver.
#ifndef GANTRY_SRC_SCHEDULER_EVENT_HANDLERS_H_
#define GANTRY_SRC_SCHEDULER_EVENT_HANDLERS_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "gantry/cluster_writer.h"
#include "src/queue/scheduling_queue.h"
#include "src/scheduler/cycle_context.h"
#include "src/scheduler/foreign_members.h"
#include "src/scheduler/group_status.h"
#include "src/scheduler/outcome.h"
#include "src/scheduler/profiles.h"
#include "src/state/cluster_state.h"
#include "src/state/dra_state.h"
#include "src/state/event_handler.h"

namespace gantry::scheduler {

class EventHandlers final : public state::ClusterEventHandler {
 public:
  EventHandlers(state::ClusterState& state, state::DraState& dra, const Profiles& profiles,
                framework::ClusterWriter& writer, GroupStatusWriter& group_status,
                ForeignGroupMembers& foreign, Observers& observers, CycleContext& cycles)
      : state_(state),
        dra_(dra),
        profiles_(profiles),
        writer_(writer),
        group_status_(group_status),
        foreign_(foreign),
        observers_(observers),
        cycles_(cycles) {}

  // The queue to notify, once the scheduler has started. Before that only
  // the DRA handlers may be called (they update DraState alone).
  void SetQueue(queue::SchedulingQueue* queue) { queue_ = queue; }

  void OnPodAdd(std::shared_ptr<const api::Pod> pod) override;
  void OnPodUpdate(std::shared_ptr<const api::Pod> old_pod,
                   std::shared_ptr<const api::Pod> pod) override;
  void OnPodDelete(std::shared_ptr<const api::Pod> pod) override;
  void OnNodeAdd(std::shared_ptr<const api::Node> node) override;
  void OnNodeUpdate(std::shared_ptr<const api::Node> old_node,
                    std::shared_ptr<const api::Node> node) override;
  void OnNodeDelete(std::shared_ptr<const api::Node> node) override;
  void OnNamespace(api::Symbol name, api::Labels labels) override;
  void OnNamespaceDelete(api::Symbol name) override;
  void OnPriorityClass(api::Symbol name, state::PriorityClassInfo info) override;
  void OnPriorityClassDelete(api::Symbol name) override;
  void OnPodDisruptionBudget(std::shared_ptr<const api::PodDisruptionBudget> pdb) override;
  void OnPodDisruptionBudgetDelete(std::string_view key) override;
  // PodGroups (native or scheduler-plugins); members waiting for them retry.
  void OnPodGroup(state::GroupInfo group) override;
  void OnPodGroupDelete(std::string_view key) override;
  // CompositePodGroups (group trees); members of the tree retry.
  void OnCompositePodGroup(state::GroupInfo group) override;
  void OnCompositePodGroupDelete(std::string_view key) override;
  // DRA objects (dra_events.cc).
  void OnResourceSlice(std::shared_ptr<const api::ResourceSlice> old_obj,
                       std::shared_ptr<const api::ResourceSlice> obj) override;
  void OnResourceSliceDelete(std::shared_ptr<const api::ResourceSlice> obj) override;
  void OnDeviceClass(std::shared_ptr<const api::DeviceClass> old_obj,
                     std::shared_ptr<const api::DeviceClass> obj) override;
  void OnDeviceClassDelete(std::shared_ptr<const api::DeviceClass> obj) override;
  void OnResourceClaim(std::shared_ptr<const api::ResourceClaim> old_obj,
                       std::shared_ptr<const api::ResourceClaim> obj) override;
  void OnResourceClaimDelete(std::shared_ptr<const api::ResourceClaim> obj) override;
  void OnResourceClaimTemplate(std::shared_ptr<const api::ResourceClaimTemplate> obj) override;
  void OnResourceClaimTemplateDelete(
      std::shared_ptr<const api::ResourceClaimTemplate> obj) override;
  void OnDeviceTaintRule(std::shared_ptr<const api::DeviceTaintRule> old_obj,
                         std::shared_ptr<const api::DeviceTaintRule> obj) override;
  void OnDeviceTaintRuleDelete(std::shared_ptr<const api::DeviceTaintRule> obj) override;

 private:
  state::ClusterState& state_;
  state::DraState& dra_;
  const Profiles& profiles_;
  framework::ClusterWriter& writer_;
  GroupStatusWriter& group_status_;
  ForeignGroupMembers& foreign_;
  Observers& observers_;
  CycleContext& cycles_;
  queue::SchedulingQueue* queue_ = nullptr;
};

// The ActionType bits describing what changed on a node.
uint32_t NodeUpdateActions(const api::Node& old_node, const api::Node& new_node);

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_EVENT_HANDLERS_H_
