// DynamicResources (PreEnqueue, PreFilter, Filter, PostFilter, Score,
// Reserve/Unreserve, PreBind): pods that reference ResourceClaims get devices
// allocated by the structured allocator (src/dra) on the chosen node; the
// allocation is held in flight from Reserve until PreBind writes it to the
// claim's status through the ClusterWriter. Upstream:
// pkg/scheduler/framework/plugins/dynamicresources. Failure reasons name the
// claim and request ("claim default/gpus: request \"gpu\": 8 devices wanted,
// 5 free match"). Devices with binding conditions: PreBind waits (polling
// every 5 s, at most bindingTimeout) until the driver reports them in
// status.devices, and fails on a binding failure condition or timeout.
// PodGroup-level claims (a pod claim entry matching one of its PodGroup's
// spec.resourceClaims) are allocated once per group cycle, shared in flight
// by the group's members, and reserved for the PodGroup, not the pods.
// Extended resources backed by DRA (a request for a resource a DeviceClass
// serves, on a node without device-plugin capacity of it) get a claim per
// pod, built per node in Filter, allocated with the pod's claims, created in
// PreBind and recorded in pod.status.extendedResourceClaimStatus.
#ifndef GANTRY_PLUGINS_DYNAMIC_RESOURCES_DYNAMIC_RESOURCES_H_
#define GANTRY_PLUGINS_DYNAMIC_RESOURCES_DYNAMIC_RESOURCES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "src/dra/allocator.h"
#include "src/dra/node_memo.h"

namespace gantry::plugins::dynamic_resources {

inline constexpr std::string_view kName = "DynamicResources";
inline constexpr std::string_view kArgsKind = "DynamicResourcesArgs";
inline constexpr std::string_view kStateKey = "PreFilterDynamicResources";
// How often PreBind re-reads claims while waiting for binding conditions (upstream: 5 s).
inline constexpr int64_t kBindingPollMicros = 5'000'000;

// Binding conditions of an allocated claim (status.allocation results with
// bindingConditions, checked against status.devices[].conditions).
enum class BindingState : uint8_t {
  kReady,     // every binding condition True (or none), no failure condition True
  kPending,   // some condition not True yet, within the timeout
  kFailed,    // a bindingFailureCondition is True
  kTimedOut,  // still pending after allocationTimestamp + binding timeout
};
// `why` gets the message for kFailed / kTimedOut.
BindingState CheckBindingConditions(const api::ResourceClaim& claim, int64_t now_micros, int64_t timeout_micros,
                                    std::string* why);

// DynamicResourcesArgs: filterTimeout (default 10s, 0 disables) and
// bindingTimeout (default 600s, >= 1s; only used with binding conditions).
struct DynamicResourcesArgs {
  int64_t filter_timeout_micros = 10'000'000;
  int64_t binding_timeout_micros = 600'000'000;

  static DynamicResourcesArgs Decode(api::Decoder& d, api::JsonValue v);
  nlohmann::json ToJson() const;
};

class DynamicResources final : public framework::PreEnqueuePlugin,
                               public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::PostFilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin,
                               public framework::ReservePlugin,
                               public framework::PreBindPlugin,
                               public framework::EnqueueExtensions,
                               public framework::PreFilterExtensions,
                               public framework::NodeTrackedPlugin {
 public:
  DynamicResources(DynamicResourcesArgs args, framework::FrameworkHandle& handle,
                   dra::Features features = {});
  std::string_view Name() const override { return kName; }

  // Gated while a claim of the pod does not exist yet (template claims are
  // created by the ResourceClaim controller), is being deleted, or belongs
  // to another pod.
  framework::Status PreEnqueue(const framework::PodInfo& pod) override;
  // Skip for pods without claims. Resolves the claims, checks classes,
  // reservations and admin-access namespaces, prepares the allocator.
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              const std::vector<framework::NodeInfo*>& nodes,
                              framework::PreFilterResult* result) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Preemption what-if (PreFilterExtensions): removing a pod frees the
  // devices of its allocated claims once every consumer in reservedFor is
  // removed, so Filter can allocate them to the pod being scheduled; adding
  // it back holds them again. Only for a pod that allocates claims.
  framework::PreFilterExtensions* Extensions() override { return this; }
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                           const framework::PodInfo& pod_to_add, const framework::NodeInfo& node) override;
  framework::Status RemovePod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                              const framework::PodInfo& pod_to_remove, const framework::NodeInfo& node) override;
  // Deallocates one allocated claim that could not be used on any node and
  // is reserved by nobody else.
  framework::PostFilterResult PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                         const framework::NodeToStatus& filtered) override;
  // Skip (no Score calls) unless some claim is allocated in this cycle.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  // Prioritized lists: 8 - i for each request satisfied by subrequest i.
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  bool HasNormalizeScore() const override { return true; }
  framework::Status NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                                   std::vector<framework::NodeScore>& scores) override;
  // Holds the node's allocation in flight: Filter's solution, or the one
  // found with a score plugin's dra::DevicePreference for the node tried
  // first (src/dra/device_preference.h).
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod, std::string_view node) override;
  // Adds the delete-protection finalizer, writes status.allocation and
  // appends the pod to reservedFor, then assumes the claim.
  framework::Status PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node) override;
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // NodeTrackedPlugin: with the node memo, a pod whose claims are all to be
  // allocated by this cycle (no allocated, PodGroup or extended-resource
  // claim) gets its memo spec as key; the nodes whose visible pools changed
  // are the memo's (NodeMemo::ChangedNodesSince), plus nodes whose search
  // timed out.
  uint64_t NodeResultsKey(const framework::CycleState& state) const override;
  bool TrackedChangesSince(const framework::CycleState& state, uint64_t* mark,
                           std::vector<std::string>* changed) const override;

  const DynamicResourcesArgs& args() const { return args_; }

  // Per-node allocation outcomes reused between pods whose claims ask for
  // the same devices (src/dra/node_memo.h); on by default, off when the
  // environment variable GANTRY_DRA_NODE_MEMO is "off", "0" or "false" at
  // construction. Null when off.
  void SetNodeMemo(bool on);
  const dra::NodeMemo* node_memo() const { return memo_.get(); }

  // Waits `micros` between binding-condition polls; returns false when it
  // cannot wait (then PreBind stops waiting and fails). Without one, PreBind
  // sleeps for real unless the framework clock is a FakeClock (offline there
  // is no driver that could report device conditions, and virtual time does
  // not pass), in which case it fails at once.
  // Tests inject one that advances a FakeClock and updates claims.
  using PollWait = std::function<bool(int64_t micros)>;
  void SetBindingPollWait(PollWait wait) { poll_wait_ = std::move(wait); }

 private:
  // Re-creates the cycle's allocator over its base snapshot with the
  // released claims' devices free and the nominated pods' held ones taken.
  framework::Status RebuildAllocator(framework::CycleState& state);
  // PreBind's wait for binding conditions of the pod's claims; "" when ready.
  std::string WaitForBindingConditions(const framework::PodInfo& pod, const std::vector<std::string>& claim_keys);

  DynamicResourcesArgs args_;
  framework::FrameworkHandle& handle_;
  dra::Features features_;
  PollWait poll_wait_;
  std::unique_ptr<dra::NodeMemo> memo_;
  std::mutex group_claims_mu_;  // serializes PreBind writes of PodGroup-level claims
};

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::dynamic_resources

#endif  // GANTRY_PLUGINS_DYNAMIC_RESOURCES_DYNAMIC_RESOURCES_H_
