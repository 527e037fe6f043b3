#include "plugins/node_resources_fit/node_resources_fit.h"

#include <memory>

#include "gantry/util/strings.h"
#include "src/api/dra.h"
#include "src/api/resources.h"
#include "src/state/dra_state.h"

namespace gantry::plugins::node_resources_fit {

namespace {
const framework::StateKey kPreFilterKey{kPreFilterStateKey};
const framework::StateKey kPreScoreKey{kPreScoreStateKey};
}  // namespace

namespace {
struct PreFilterState final : framework::StateData {
  framework::Resource requests;             // scalar list: checked resources only
  std::vector<std::string> scalar_reasons;  // "Insufficient <name>", parallel to requests.scalar
  // Parallel to requests.scalar: a DeviceClass serves the resource, so a node
  // without allocatable of it leaves it to DynamicResources.
  std::vector<bool> dra_backed;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

struct PreScoreState final : framework::StateData {
  Int64s pod_requests;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

ScoreFolder MakeFolder(const ScoringStrategy& s) {
  std::vector<int64_t> weights;
  for (const helper::ResourceSpec& r : s.resources) weights.push_back(r.weight);
  switch (s.type) {
    case ScoringStrategyType::kLeastAllocated:
      return ScoreFolder::LeastAllocated(std::move(weights));
    case ScoringStrategyType::kMostAllocated:
      return ScoreFolder::MostAllocated(std::move(weights));
    case ScoringStrategyType::kRequestedToCapacityRatio:
      return ScoreFolder::RequestedToCapacityRatio(std::move(weights), s.shape);
  }
  return ScoreFolder::LeastAllocated(std::move(weights));
}

bool ParseStrategyType(std::string_view s, ScoringStrategyType* out) {
  if (s == "LeastAllocated") {
    *out = ScoringStrategyType::kLeastAllocated;
  } else if (s == "MostAllocated") {
    *out = ScoringStrategyType::kMostAllocated;
  } else if (s == "RequestedToCapacityRatio") {
    *out = ScoringStrategyType::kRequestedToCapacityRatio;
  } else {
    return false;
  }
  return true;
}

std::vector<UtilizationShapePoint> DecodeShape(api::Decoder& d, api::JsonValue v) {
  std::vector<UtilizationShapePoint> out;
  d.ForEachItem(v, [&](size_t, api::JsonValue item) {
    UtilizationShapePoint p;
    d.ForEachField(item, [&](std::string_view key, api::JsonValue value) {
      if (key == "utilization") {
        p.utilization = static_cast<int32_t>(d.IntInRange(value, INT32_MIN, INT32_MAX));
      } else if (key == "score") {
        p.score = static_cast<int32_t>(d.IntInRange(value, INT32_MIN, INT32_MAX));
      } else if (d.ok()) {
        d.Fail(gantry::StrCat("unknown field \"", key, "\""));
      }
    });
    out.push_back(p);
  });
  return out;
}

// Upstream's validateFunctionShape, reported under the field path in `d`.
void ValidateShape(api::Decoder& d, const std::vector<UtilizationShapePoint>& shape) {
  if (shape.empty()) {
    d.Fail("Required value: at least one point must be specified");
    return;
  }
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      api::Decoder::Field f(d, i);
      d.FailAt("utilization", gantry::StrCat("Invalid value: ", shape[i].utilization,
                                             ": values must be sorted in increasing order"));
      return;
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    api::Decoder::Field f(d, i);
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      d.FailAt("utilization", gantry::StrCat("Invalid value: ", shape[i].utilization, ": not in valid range [0, 100]"));
    }
    if (shape[i].score < 0 || shape[i].score > 10) {
      d.FailAt("score", gantry::StrCat("Invalid value: ", shape[i].score, ": not in valid range [0, 10]"));
    }
  }
}

framework::QueueingHint NodeHint(const api::Pod& pod, const void* old_obj, const void* new_obj,
                                 const state::DraState* dra) {
  const auto* before = static_cast<const api::Node*>(old_obj);
  const auto* after = static_cast<const api::Node*>(new_obj);
  if (after == nullptr) return framework::QueueingHint::kSkip;
  framework::Resource req = framework::Resource::FromList(pod.requests);
  framework::Resource alloc_after = framework::Resource::FromList(after->allocatable);
  // Resources a DeviceClass serves are not needed in the node's allocatable.
  auto dra_serves = [&](api::Symbol name) {
    return dra != nullptr && alloc_after.Get(name) <= 0 &&
           api::IsDraExtendedResourceName(name.view()) &&
           !dra->ExtendedResourceClass(name.view()).empty();
  };
  if (!FitsRequest(req, alloc_after, framework::Resource(), 0, dra_serves).empty()) {
    return framework::QueueingHint::kSkip;
  }
  if (before == nullptr) return framework::QueueingHint::kQueue;
  framework::Resource alloc_before = framework::Resource::FromList(before->allocatable);
  if (alloc_after.allowed_pod_number > alloc_before.allowed_pod_number) return framework::QueueingHint::kQueue;
  if ((req.milli_cpu > 0 && alloc_after.milli_cpu > alloc_before.milli_cpu) ||
      (req.memory > 0 && alloc_after.memory > alloc_before.memory) ||
      (req.ephemeral_storage > 0 && alloc_after.ephemeral_storage > alloc_before.ephemeral_storage)) {
    return framework::QueueingHint::kQueue;
  }
  for (const api::ResourceAmount& a : req.scalar) {
    if (a.value == 0) continue;
    if (alloc_after.Get(a.name) > alloc_before.Get(a.name) || dra_serves(a.name))
      return framework::QueueingHint::kQueue;
  }
  return framework::QueueingHint::kSkip;
}

// A DeviceClass added or changed: queue when it now serves a resource the
// pod requests (its implicit name on add, its extendedResourceName when that
// changed), as upstream's isSchedulableAfterDeviceClassEvent.
framework::QueueingHint DeviceClassHint(const api::Pod& pod, const void* old_obj,
                                        const void* new_obj) {
  const auto* before = static_cast<const api::DeviceClass*>(old_obj);
  const auto* after = static_cast<const api::DeviceClass*>(new_obj);
  if (after == nullptr) return framework::QueueingHint::kSkip;
  auto requested = [&](std::string_view name) {
    for (const api::ResourceAmount& r : pod.requests.items()) {
      if (r.value != 0 && r.name.view() == name) return true;
    }
    return false;
  };
  if (before != nullptr) {
    if (before->spec.extended_resource_name == after->spec.extended_resource_name) {
      return framework::QueueingHint::kSkip;
    }
  } else if (requested(gantry::StrCat(api::kImplicitExtendedResourcePrefix, after->meta.name))) {
    return framework::QueueingHint::kQueue;
  }
  if (!after->spec.extended_resource_name.empty() &&
      requested(after->spec.extended_resource_name.view())) {
    return framework::QueueingHint::kQueue;
  }
  return framework::QueueingHint::kSkip;
}

}  // namespace

std::string_view ScoringStrategyTypeName(ScoringStrategyType t) {
  switch (t) {
    case ScoringStrategyType::kLeastAllocated: return "LeastAllocated";
    case ScoringStrategyType::kMostAllocated: return "MostAllocated";
    case ScoringStrategyType::kRequestedToCapacityRatio: return "RequestedToCapacityRatio";
  }
  return "";
}

// ---- Args -------------------------------------------------------------------

NodeResourcesFitArgs NodeResourcesFitArgs::Decode(api::Decoder& d, api::JsonValue v) {
  NodeResourcesFitArgs args;
  bool type_set = false;
  std::string type_text;
  helper::DecodeArgsObject(d, v, kArgsKind, [&](std::string_view key, api::JsonValue value) {
    if (key == "ignoredResources") {
      args.ignored_resources = d.StringList(value);
    } else if (key == "ignoredResourceGroups") {
      args.ignored_resource_groups = d.StringList(value);
    } else if (key == "scoringStrategy") {
      if (value.is_null()) return true;
      ScoringStrategy& s = args.scoring_strategy;
      s.resources.clear();
      d.ForEachField(value, [&](std::string_view k, api::JsonValue val) {
        if (k == "type") {
          type_set = true;
          type_text = std::string(d.String(val));
          if (d.ok() && !ParseStrategyType(type_text, &s.type)) {
            d.Fail(gantry::StrCat("Unsupported value: \"", type_text,
                                  "\": supported values: \"LeastAllocated\", \"MostAllocated\", "
                                  "\"RequestedToCapacityRatio\""));
          }
        } else if (k == "resources") {
          s.resources = helper::DecodeResourceSpecs(d, val);
        } else if (k == "requestedToCapacityRatio") {
          if (val.is_null()) return;
          s.has_requested_to_capacity_ratio = true;
          d.ForEachField(val, [&](std::string_view kk, api::JsonValue vv) {
            if (kk == "shape") {
              s.shape = DecodeShape(d, vv);
            } else if (d.ok()) {
              d.Fail(gantry::StrCat("unknown field \"", kk, "\""));
            }
          });
        } else if (d.ok()) {
          d.Fail(gantry::StrCat("unknown field \"", k, "\""));
        }
      });
      if (d.ok() && !type_set) {
        d.FailAt("type", "Unsupported value: \"\": supported values: \"LeastAllocated\", \"MostAllocated\", "
                         "\"RequestedToCapacityRatio\"");
      }
    } else {
      return false;
    }
    return true;
  });
  if (!d.ok()) return args;
  // Defaults (SetDefaults_NodeResourcesFitArgs).
  if (args.scoring_strategy.resources.empty()) args.scoring_strategy.resources = helper::DefaultResourceSpecs();
  for (helper::ResourceSpec& r : args.scoring_strategy.resources) {
    if (r.weight == 0) r.weight = 1;
  }
  args.ValidateInto(d);
  return args;
}

void NodeResourcesFitArgs::ValidateInto(api::Decoder& d) const {
  {
    api::Decoder::Field f(d, "ignoredResources");
    for (size_t i = 0; i < ignored_resources.size(); ++i) {
      std::string err = helper::ValidateQualifiedName(ignored_resources[i]);
      if (!err.empty()) {
        api::Decoder::Field fi(d, i);
        d.Fail(err);
      }
    }
  }
  {
    api::Decoder::Field f(d, "ignoredResourceGroups");
    for (size_t i = 0; i < ignored_resource_groups.size(); ++i) {
      const std::string& g = ignored_resource_groups[i];
      api::Decoder::Field fi(d, i);
      if (g.find('/') != std::string::npos) {
        d.Fail(gantry::StrCat("Invalid value: \"", g, "\": resource group name can't contain '/'"));
      }
      std::string err = helper::ValidateQualifiedName(g);
      if (!err.empty()) d.Fail(err);
    }
  }
  api::Decoder::Field fs(d, "scoringStrategy");
  const ScoringStrategy& s = scoring_strategy;
  {
    api::Decoder::Field fr(d, "resources");
    for (size_t i = 0; i < s.resources.size(); ++i) {
      if (s.resources[i].weight <= 0 || s.resources[i].weight > 100) {
        api::Decoder::Field fi(d, i);
        d.FailAt("weight", gantry::StrCat("Invalid value: ", s.resources[i].weight, ": resource weight of ",
                                          s.resources[i].name, " not in valid range (0, 100]"));
      }
    }
  }
  if (s.has_requested_to_capacity_ratio || s.type == ScoringStrategyType::kRequestedToCapacityRatio) {
    api::Decoder::Field fr(d, "requestedToCapacityRatio");
    api::Decoder::Field fsh(d, "shape");
    ValidateShape(d, s.shape);
  }
}

absl::Status NodeResourcesFitArgs::Validate() const {
  api::Decoder d(kArgsKind);
  ValidateInto(d);
  return helper::DecoderStatus(d);
}

nlohmann::json NodeResourcesFitArgs::ToJson() const {
  nlohmann::json strategy = {{"type", std::string(ScoringStrategyTypeName(scoring_strategy.type))},
                             {"resources", helper::ResourceSpecsToJson(scoring_strategy.resources)}};
  if (scoring_strategy.has_requested_to_capacity_ratio) {
    nlohmann::json shape = nlohmann::json::array();
    for (const UtilizationShapePoint& p : scoring_strategy.shape) {
      shape.push_back({{"utilization", p.utilization}, {"score", p.score}});
    }
    strategy["requestedToCapacityRatio"] = {{"shape", shape}};
  }
  nlohmann::json out = {{"scoringStrategy", strategy}};
  if (!ignored_resources.empty()) out["ignoredResources"] = ignored_resources;
  if (!ignored_resource_groups.empty()) out["ignoredResourceGroups"] = ignored_resource_groups;
  return out;
}

// ---- Fit ----------------------------------------------------------------------

std::vector<InsufficientResource> FitsRequest(const framework::Resource& requests,
                                              const framework::Resource& allocatable,
                                              const framework::Resource& used, size_t num_pods,
                                              const std::function<bool(api::Symbol)>& skip) {
  std::vector<InsufficientResource> out;
  if (static_cast<int64_t>(num_pods) + 1 > allocatable.allowed_pod_number) {
    out.push_back({std::string(kTooManyPods), false});
  }
  if (requests.milli_cpu == 0 && requests.memory == 0 && requests.ephemeral_storage == 0 &&
      requests.scalar.empty()) {
    return out;
  }
  if (requests.milli_cpu > 0 && requests.milli_cpu > allocatable.milli_cpu - used.milli_cpu) {
    out.push_back({"Insufficient cpu", requests.milli_cpu > allocatable.milli_cpu});
  }
  if (requests.memory > 0 && requests.memory > allocatable.memory - used.memory) {
    out.push_back({"Insufficient memory", requests.memory > allocatable.memory});
  }
  if (requests.ephemeral_storage > 0 &&
      requests.ephemeral_storage > allocatable.ephemeral_storage - used.ephemeral_storage) {
    out.push_back({"Insufficient ephemeral-storage", requests.ephemeral_storage > allocatable.ephemeral_storage});
  }
  for (const api::ResourceAmount& a : requests.scalar) {
    if (a.value == 0) continue;
    if (skip && skip(a.name)) continue;
    int64_t alloc = allocatable.Get(a.name);
    if (a.value > alloc - used.Get(a.name)) {
      out.push_back({gantry::StrCat("Insufficient ", a.name.view()), a.value > alloc});
    }
  }
  return out;
}

NodeResourcesFit::NodeResourcesFit(NodeResourcesFitArgs args, framework::FrameworkHandle* handle)
    : args_(std::move(args)),
      handle_(handle),
      ignored_resources_(args_.ignored_resources.begin(), args_.ignored_resources.end()),
      ignored_groups_(args_.ignored_resource_groups.begin(), args_.ignored_resource_groups.end()),
      scorer_(args_.scoring_strategy.resources, /*use_requested=*/false,
              MakeFolder(args_.scoring_strategy)) {}

bool NodeResourcesFit::Ignored(api::Symbol name) const {
  std::string_view n = name.view();
  if (!api::IsExtendedResourceName(n)) return false;
  if (ignored_resources_.contains(gantry::AsAbsl(n))) return true;
  if (ignored_groups_.empty()) return false;
  return ignored_groups_.contains(gantry::AsAbsl(n.substr(0, n.find('/'))));
}

framework::Status NodeResourcesFit::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                              const std::vector<framework::NodeInfo*>&,
                                              framework::PreFilterResult*) {
  auto s = std::make_unique<PreFilterState>();
  s->requests = pod.requests;
  // Ignored and zero scalar requests are dropped once here, not per node.
  s->requests.scalar.clear();
  const state::DraState* dra = handle_ != nullptr ? handle_->Dra() : nullptr;
  for (const api::ResourceAmount& a : pod.requests.scalar) {
    if (a.value == 0 || Ignored(a.name)) continue;
    s->requests.scalar.push_back(a);
    s->scalar_reasons.push_back(gantry::StrCat("Insufficient ", a.name.view()));
    s->dra_backed.push_back(dra != nullptr && api::IsDraExtendedResourceName(a.name.view()) &&
                            !dra->ExtendedResourceClass(a.name.view()).empty());
  }
  state.Write(kPreFilterKey, std::move(s));
  return framework::Status();
}

framework::Status NodeResourcesFit::Filter(const framework::CycleState& state, const framework::PodInfo&,
                                           const framework::NodeInfo& node) {
  const PreFilterState* found = state.Get<PreFilterState>(kPreFilterKey);
  if (found == nullptr) {
    return framework::Status::FromAbsl(state.Read<PreFilterState>(kPreFilterKey).status());
  }
  const PreFilterState& s = *found;
  const framework::Resource& req = s.requests;
  const framework::Resource& alloc = node.allocatable();
  const framework::Resource& used = node.requested();

  std::vector<std::string> reasons;  // allocated only on failure
  framework::Code code = framework::Code::kUnschedulable;
  auto fail = [&](std::string_view reason, bool unresolvable) {
    reasons.emplace_back(reason);
    if (unresolvable) code = framework::Code::kUnschedulableAndUnresolvable;
  };
  if (static_cast<int64_t>(node.pods().size()) + 1 > alloc.allowed_pod_number) fail(kTooManyPods, false);
  if (req.milli_cpu != 0 || req.memory != 0 || req.ephemeral_storage != 0 || !req.scalar.empty()) {
    if (req.milli_cpu > 0 && req.milli_cpu > alloc.milli_cpu - used.milli_cpu) {
      fail("Insufficient cpu", req.milli_cpu > alloc.milli_cpu);
    }
    if (req.memory > 0 && req.memory > alloc.memory - used.memory) {
      fail("Insufficient memory", req.memory > alloc.memory);
    }
    if (req.ephemeral_storage > 0 && req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage) {
      fail("Insufficient ephemeral-storage", req.ephemeral_storage > alloc.ephemeral_storage);
    }
    for (size_t i = 0; i < req.scalar.size(); ++i) {
      const api::ResourceAmount& a = req.scalar[i];
      if (a.value == 0) continue;
      int64_t have = alloc.Get(a.name);
      if (have <= 0 && s.dra_backed[i])
        continue;  // no device plugin here: DynamicResources serves it
      if (a.value > have - used.Get(a.name)) fail(s.scalar_reasons[i], a.value > have);
    }
  }
  if (reasons.empty()) return framework::Status();
  return framework::Status(code, std::move(reasons));
}

framework::Status NodeResourcesFit::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                             const std::vector<const framework::NodeInfo*>&) {
  auto s = std::make_unique<PreScoreState>();
  s->pod_requests = scorer_.PodRequests(pod);
  state.Write(kPreScoreKey, std::move(s));
  return framework::Status();
}

framework::Status NodeResourcesFit::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                          const framework::NodeInfo& node, int64_t* score) {
  if (const PreScoreState* s = state.Get<PreScoreState>(kPreScoreKey)) {
    *score = scorer_.Score(node, s->pod_requests);
  } else {
    *score = scorer_.Score(node, scorer_.PodRequests(pod));
  }
  return framework::Status();
}

std::vector<framework::ClusterEventWithHint> NodeResourcesFit::EventsToRegister() const {
  framework::ClusterEventWithHint pod_event;
  pod_event.event = {framework::EventResource::kPod, framework::kDelete, "PodDelete"};
  pod_event.hint = [](const api::Pod&, const framework::ClusterEvent&, const void* old_obj, const void*) {
    const auto* deleted = static_cast<const api::Pod*>(old_obj);
    if (deleted == nullptr) return framework::QueueingHint::kQueue;
    // An unscheduled, un-nominated pod held no resources.
    if (deleted->node_name.empty() && deleted->nominated_node_name.empty()) return framework::QueueingHint::kSkip;
    return framework::QueueingHint::kQueue;
  };
  framework::ClusterEventWithHint node_event;
  node_event.event = {framework::EventResource::kNode, framework::kAdd | framework::kUpdateNodeAllocatable,
                      "NodeAddOrAllocatableChange"};
  const state::DraState* dra = handle_ != nullptr ? handle_->Dra() : nullptr;
  node_event.hint = [dra](const api::Pod& pod, const framework::ClusterEvent&, const void* old_obj,
                          const void* new_obj) { return NodeHint(pod, old_obj, new_obj, dra); };
  std::vector<framework::ClusterEventWithHint> out = {std::move(pod_event), std::move(node_event)};
  if (handle_ != nullptr) {
    // A pod may wait for a DeviceClass to serve one of its extended resources.
    framework::ClusterEventWithHint class_event;
    class_event.event = {framework::EventResource::kDeviceClass,
                         framework::kAdd | framework::kUpdate, "DeviceClassChange"};
    class_event.hint = [](const api::Pod& pod, const framework::ClusterEvent&, const void* old_obj,
                          const void* new_obj) { return DeviceClassHint(pod, old_obj, new_obj); };
    out.push_back(std::move(class_event));
  }
  return out;
}

bool NodeResourcesFit::SameNodeResults(const framework::PodInfo& a,
                                       const framework::PodInfo& b) const {
  return a.p().requests == b.p().requests;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder& d, api::JsonValue args,
         framework::FrameworkHandle& handle) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        NodeResourcesFitArgs a = NodeResourcesFitArgs::Decode(d, args);
        if (!d.ok()) return helper::DecoderStatus(d);
        return std::make_unique<NodeResourcesFit>(std::move(a), &handle);
      },
      [](api::Decoder& d, api::JsonValue args) -> nlohmann::json {
        return NodeResourcesFitArgs::Decode(d, args).ToJson();
      },
      std::string(kArgsKind)});
}

}  // namespace gantry::plugins::node_resources_fit
