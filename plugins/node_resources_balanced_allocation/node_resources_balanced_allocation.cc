#include "plugins/node_resources_balanced_allocation/node_resources_balanced_allocation.h"

#include <memory>
#include <set>
#include <string>

#include "gantry/util/strings.h"

namespace gantry::plugins::node_resources_balanced_allocation {

namespace {
const framework::StateKey kPreScoreKey{kPreScoreStateKey};
}  // namespace

namespace {
using helper::Int64s;

struct PreScoreState final : framework::StateData {
  Int64s pod_requests;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

bool IsBestEffort(const Int64s& requests) {
  for (int64_t r : requests) {
    if (r != 0) return false;
  }
  return true;
}

}  // namespace

NodeResourcesBalancedAllocationArgs NodeResourcesBalancedAllocationArgs::Decode(api::Decoder& d,
                                                                                api::JsonValue v) {
  NodeResourcesBalancedAllocationArgs args;
  args.resources.clear();
  helper::DecodeArgsObject(d, v, kArgsKind, [&](std::string_view key, api::JsonValue value) {
    if (key != "resources") return false;
    args.resources = helper::DecodeResourceSpecs(d, value);
    return true;
  });
  if (!d.ok()) return args;
  if (args.resources.empty()) args.resources = helper::DefaultResourceSpecs();
  for (helper::ResourceSpec& r : args.resources) {
    if (r.weight == 0) r.weight = 1;
  }
  args.ValidateInto(d);
  return args;
}

void NodeResourcesBalancedAllocationArgs::ValidateInto(api::Decoder& d) const {
  api::Decoder::Field f(d, "resources");
  std::set<std::string> seen;
  for (size_t i = 0; i < resources.size(); ++i) {
    api::Decoder::Field fi(d, i);
    if (!seen.insert(resources[i].name).second) {
      d.FailAt("name", gantry::StrCat("Duplicate value: \"", resources[i].name, "\""));
    }
    if (resources[i].weight != 1) {
      d.FailAt("weight", gantry::StrCat("Invalid value: ", resources[i].weight, ": must be 1"));
    }
  }
}

absl::Status NodeResourcesBalancedAllocationArgs::Validate() const {
  api::Decoder d(kArgsKind);
  ValidateInto(d);
  return helper::DecoderStatus(d);
}

nlohmann::json NodeResourcesBalancedAllocationArgs::ToJson() const {
  return {{"resources", helper::ResourceSpecsToJson(resources)}};
}

NodeResourcesBalancedAllocation::NodeResourcesBalancedAllocation(
    NodeResourcesBalancedAllocationArgs args)
    : args_(std::move(args)),
      scorer_(args_.resources, /*use_requested=*/true,
              helper::ScoreFolder::Balanced()) {}

framework::Status NodeResourcesBalancedAllocation::PreScore(framework::CycleState& state,
                                                            const framework::PodInfo& pod,
                                                            const std::vector<const framework::NodeInfo*>&) {
  Int64s requests = scorer_.PodRequests(pod);
  // Best-effort pods would otherwise all pile onto the same nodes
  // (kubernetes/kubernetes#129138).
  if (IsBestEffort(requests)) return framework::Status::Skip();
  auto s = std::make_unique<PreScoreState>();
  s->pod_requests = std::move(requests);
  state.Write(kPreScoreKey, std::move(s));
  return framework::Status();
}

framework::Status NodeResourcesBalancedAllocation::Score(const framework::CycleState& state,
                                                         const framework::PodInfo& pod,
                                                         const framework::NodeInfo& node, int64_t* score) {
  if (const PreScoreState* s = state.Get<PreScoreState>(kPreScoreKey)) {
    *score = scorer_.Score(node, s->pod_requests);
    return framework::Status();
  }
  Int64s requests = scorer_.PodRequests(pod);
  *score = IsBestEffort(requests) ? 0 : scorer_.Score(node, requests);
  return framework::Status();
}

bool NodeResourcesBalancedAllocation::SameNodeResults(const framework::PodInfo& a,
                                                      const framework::PodInfo& b) const {
  return a.p().requests == b.p().requests;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder& d, api::JsonValue args, framework::FrameworkHandle&)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        NodeResourcesBalancedAllocationArgs a = NodeResourcesBalancedAllocationArgs::Decode(d, args);
        if (!d.ok()) return helper::DecoderStatus(d);
        return std::make_unique<NodeResourcesBalancedAllocation>(std::move(a));
      },
      [](api::Decoder& d, api::JsonValue args) -> nlohmann::json {
        return NodeResourcesBalancedAllocationArgs::Decode(d, args).ToJson();
      },
      std::string(kArgsKind)});
}

}  // namespace gantry::plugins::node_resources_balanced_allocation
