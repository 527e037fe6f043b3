#include "plugins/taint_toleration/taint_toleration.h"

#include <memory>

#include "gantry/util/strings.h"
#include "plugins/helper/helper.h"

namespace gantry::plugins::taint_toleration {

namespace {
const framework::StateKey kPreScoreKey{kPreScoreStateKey};

bool DoNotSchedule(const api::Taint& t) {
  return t.effect == api::TaintEffect::kNoSchedule || t.effect == api::TaintEffect::kNoExecute;
}

struct PreScoreState final : framework::StateData {
  std::vector<api::Toleration> tolerations_prefer_no_schedule;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

std::vector<api::Toleration> PreferNoScheduleTolerations(const std::vector<api::Toleration>& all) {
  std::vector<api::Toleration> out;
  for (const api::Toleration& t : all) {
    if (t.effect == api::TaintEffect::kNone || t.effect == api::TaintEffect::kPreferNoSchedule) {
      out.push_back(t);
    }
  }
  return out;
}

int64_t CountIntolerablePreferNoSchedule(absl::Span<const api::Taint> taints,
                                         const std::vector<api::Toleration>& tolerations) {
  int64_t count = 0;
  for (const api::Taint& t : taints) {
    if (t.effect != api::TaintEffect::kPreferNoSchedule) continue;
    if (!api::TaintTolerated(t, tolerations)) ++count;
  }
  return count;
}

}  // namespace

const api::Taint* FindUntoleratedTaint(absl::Span<const api::Taint> taints,
                                       const std::vector<api::Toleration>& tolerations) {
  for (const api::Taint& t : taints) {
    if (!DoNotSchedule(t)) continue;
    if (!api::TaintTolerated(t, tolerations)) return &t;
  }
  return nullptr;
}

std::string UntoleratedTaintReason(const api::Taint& taint) {
  return gantry::StrCat("node(s) had untolerated taint {", taint.key.view(), ": ", taint.value.view(), "}");
}

framework::Status TaintToleration::Filter(const framework::CycleState&, const framework::PodInfo& pod,
                                          const framework::NodeInfo& node) {
  const api::Node* n = node.node();
  if (n == nullptr) return framework::Status::Error("invalid nodeInfo");
  const api::Taint* taint = FindUntoleratedTaint(node.taints(), pod.p().tolerations);
  if (taint == nullptr) return framework::Status();
  return framework::Status::Unresolvable(UntoleratedTaintReason(*taint));
}

framework::Status TaintToleration::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                            const std::vector<const framework::NodeInfo*>&) {
  auto s = std::make_unique<PreScoreState>();
  s->tolerations_prefer_no_schedule = PreferNoScheduleTolerations(pod.p().tolerations);
  state.Write(kPreScoreKey, std::move(s));
  return framework::Status();
}

framework::Status TaintToleration::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                         const framework::NodeInfo& node, int64_t* score) {
  if (node.node() == nullptr) return framework::Status::Error("invalid nodeInfo");
  if (const PreScoreState* s = state.Get<PreScoreState>(kPreScoreKey)) {
    *score = CountIntolerablePreferNoSchedule(node.taints(), s->tolerations_prefer_no_schedule);
  } else {
    // PreScore disabled: compute on the fly, as upstream falls back.
    *score = CountIntolerablePreferNoSchedule(node.taints(),
                                              PreferNoScheduleTolerations(pod.p().tolerations));
  }
  return framework::Status();
}

framework::Status TaintToleration::NormalizeScore(const framework::CycleState&, const framework::PodInfo&,
                                                  std::vector<framework::NodeScore>& scores) {
  helper::DefaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/true, scores);
  return framework::Status();
}

std::vector<framework::ClusterEventWithHint> TaintToleration::EventsToRegister() const {
  framework::ClusterEventWithHint node_event;
  node_event.event = {framework::EventResource::kNode, framework::kAdd | framework::kUpdateNodeTaint,
                      "NodeAddOrTaintChange"};
  node_event.hint = [](const api::Pod& pod, const framework::ClusterEvent&, const void* old_obj,
                       const void* new_obj) {
    const auto* before = static_cast<const api::Node*>(old_obj);
    const auto* after = static_cast<const api::Node*>(new_obj);
    if (after == nullptr) return framework::QueueingHint::kSkip;
    bool now_ok = FindUntoleratedTaint(after->taints, pod.tolerations) == nullptr;
    if (!now_ok) return framework::QueueingHint::kSkip;
    bool was_ok = before != nullptr && FindUntoleratedTaint(before->taints, pod.tolerations) == nullptr;
    return was_ok ? framework::QueueingHint::kSkip : framework::QueueingHint::kQueue;
  };
  framework::ClusterEventWithHint pod_event;
  pod_event.event = {framework::EventResource::kUnscheduledPod, framework::kUpdatePodToleration,
                     "UnscheduledPodUpdateToleration"};
  pod_event.hint = [](const api::Pod& pod, const framework::ClusterEvent&, const void*,
                      const void* new_obj) {
    const auto* modified = static_cast<const api::Pod*>(new_obj);
    if (modified == nullptr || modified->meta.uid != pod.meta.uid) return framework::QueueingHint::kSkip;
    return framework::QueueingHint::kQueue;
  };
  return {std::move(node_event), std::move(pod_event)};
}

bool TaintToleration::SameNodeResults(const framework::PodInfo& a,
                                      const framework::PodInfo& b) const {
  return a.p().tolerations == b.p().tolerations;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder&, api::JsonValue, framework::FrameworkHandle&)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        return std::make_unique<TaintToleration>();
      },
      nullptr, ""});
}

}  // namespace gantry::plugins::taint_toleration
