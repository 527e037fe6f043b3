#include "plugins/node_affinity/node_affinity.h"

#include <algorithm>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "gantry/util/strings.h"
#include "plugins/helper/helper.h"

namespace gantry::plugins::node_affinity {
namespace {

bool MatchesNodeSelectorLabels(const api::Labels& selector, const api::Labels& node_labels) {
  for (const auto& [key, value] : selector) {
    std::optional<api::Symbol> got = api::FindLabel(node_labels, key);
    if (!got || *got != value) return false;
  }
  return true;
}

int64_t ScoreTerms(const std::vector<api::PreferredSchedulingTerm>& terms, const api::Node& node) {
  int64_t count = 0;
  for (const api::PreferredSchedulingTerm& t : terms) {
    if (t.weight == 0) continue;
    if (t.preference.Matches(node.meta.labels, node.meta.name)) count += t.weight;
  }
  return count;
}

const std::vector<api::PreferredSchedulingTerm>* PodPreferred(const api::Pod& pod) {
  if (!pod.affinity || pod.affinity->node_preferred.empty()) return nullptr;
  return &pod.affinity->node_preferred;
}

std::vector<api::PreferredSchedulingTerm> DecodePreferredTerms(api::Decoder& d, api::JsonValue v) {
  std::vector<api::PreferredSchedulingTerm> out;
  d.ForEachItem(v, [&](size_t, api::JsonValue item) {
    api::PreferredSchedulingTerm term;
    d.ForEachField(item, [&](std::string_view key, api::JsonValue value) {
      if (key == "weight") {
        term.weight = static_cast<int32_t>(d.IntInRange(value, 1, 100));
      } else if (key == "preference") {
        term.preference = api::DecodeNodeSelectorTerm(d, value);
      } else if (d.ok()) {
        d.Fail(gantry::StrCat("unknown field \"", key, "\""));
      }
    });
    out.push_back(std::move(term));
  });
  return out;
}

}  // namespace

bool MatchesRequired(const api::Pod& pod, const api::Node& node) {
  if (!MatchesNodeSelectorLabels(pod.node_selector, node.meta.labels)) return false;
  if (pod.affinity && pod.affinity->node_required) {
    return pod.affinity->node_required->Matches(node.meta.labels, node.meta.name);
  }
  return true;
}

// ---- Args -------------------------------------------------------------------

NodeAffinityArgs NodeAffinityArgs::Decode(api::Decoder& d, api::JsonValue v) {
  NodeAffinityArgs args;
  helper::DecodeArgsObject(d, v, kArgsKind, [&](std::string_view key, api::JsonValue value) {
    if (key != "addedAffinity") return false;
    if (value.is_null()) return true;
    args.has_added_affinity = true;
    args.added_affinity_json = helper::ToNlohmann(value);
    d.ForEachField(value, [&](std::string_view k, api::JsonValue val) {
      if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
        if (!val.is_null()) args.added_required = api::DecodeNodeSelector(d, val);
      } else if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
        args.added_preferred = DecodePreferredTerms(d, val);
      } else if (d.ok()) {
        d.Fail(gantry::StrCat("unknown field \"", k, "\""));
      }
    });
    return true;
  });
  return args;
}

absl::Status NodeAffinityArgs::Validate() const {
  for (size_t i = 0; i < added_preferred.size(); ++i) {
    if (added_preferred[i].weight < 1 || added_preferred[i].weight > 100) {
      return absl::InvalidArgumentError(gantry::StrCat(
          "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[", i,
          "].weight: Invalid value: ", added_preferred[i].weight, ": must be in the range 1-100"));
    }
  }
  return absl::OkStatus();
}

nlohmann::json NodeAffinityArgs::ToJson() const {
  nlohmann::json out = nlohmann::json::object();
  if (has_added_affinity) out["addedAffinity"] = added_affinity_json;
  return out;
}

// ---- Filter -------------------------------------------------------------------

framework::Status NodeAffinity::PreFilter(framework::CycleState&, const framework::PodInfo& pod,
                                          const std::vector<framework::NodeInfo*>&,
                                          framework::PreFilterResult* result) {
  const api::Pod& p = pod.p();
  bool no_node_affinity = !p.affinity || !p.affinity->node_required;
  if (no_node_affinity && !args_.added_required && p.node_selector.empty()) {
    return framework::Status::Skip();
  }
  if (no_node_affinity || p.affinity->node_required->terms.empty()) return framework::Status();

  // Node names every term pins through matchFields metadata.name In [...].
  std::optional<absl::flat_hash_set<std::string>> node_names;
  for (const api::NodeSelectorTerm& term : p.affinity->node_required->terms) {
    std::optional<absl::flat_hash_set<std::string>> term_names;
    for (const api::Requirement& r : term.match_fields) {
      if (r.key.view() != "metadata.name" || r.op != api::SelectorOp::kIn) continue;
      absl::flat_hash_set<std::string> s;
      for (api::Symbol v : r.values) s.insert(v.str());
      if (!term_names) {
        term_names = std::move(s);
      } else {
        absl::erase_if(*term_names, [&](const std::string& n) { return !s.contains(n); });
      }
    }
    // A term without a name pin admits every node: the terms are ORed.
    if (!term_names) return framework::Status();
    if (!node_names) node_names.emplace();
    node_names->insert(term_names->begin(), term_names->end());
  }
  if (node_names && node_names->empty()) {
    return framework::Status::Unresolvable(std::string(kErrReasonConflict));
  }
  if (node_names && result != nullptr) result->node_names = std::move(node_names);
  return framework::Status();
}

framework::Status NodeAffinity::Filter(const framework::CycleState&, const framework::PodInfo& pod,
                                       const framework::NodeInfo& node) {
  const api::Node* n = node.node();
  if (n == nullptr) return framework::Status::Error("node not found");
  if (args_.added_required && !args_.added_required->Matches(n->meta.labels, n->meta.name)) {
    return framework::Status::Unresolvable(std::string(kErrReasonEnforced));
  }
  if (!MatchesRequired(pod.p(), *n)) return framework::Status::Unresolvable(std::string(kErrReasonPod));
  return framework::Status();
}

// ---- Score --------------------------------------------------------------------

framework::Status NodeAffinity::PreScore(framework::CycleState&, const framework::PodInfo& pod,
                                         const std::vector<const framework::NodeInfo*>&) {
  // The preferred terms live in the immutable pod; nothing to precompute.
  if (PodPreferred(pod.p()) == nullptr && args_.added_preferred.empty()) return framework::Status::Skip();
  return framework::Status();
}

framework::Status NodeAffinity::Score(const framework::CycleState&, const framework::PodInfo& pod,
                                      const framework::NodeInfo& node, int64_t* score) {
  const api::Node* n = node.node();
  if (n == nullptr) return framework::Status::Error("node not found");
  int64_t count = ScoreTerms(args_.added_preferred, *n);
  if (const auto* preferred = PodPreferred(pod.p())) count += ScoreTerms(*preferred, *n);
  *score = count;
  return framework::Status();
}

framework::Status NodeAffinity::NormalizeScore(const framework::CycleState&, const framework::PodInfo&,
                                               std::vector<framework::NodeScore>& scores) {
  helper::DefaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/false, scores);
  return framework::Status();
}

std::vector<framework::ClusterEventWithHint> NodeAffinity::EventsToRegister() const {
  framework::ClusterEventWithHint e;
  e.event = {framework::EventResource::kNode, framework::kAdd | framework::kUpdateNodeLabel,
             "NodeAddOrLabelChange"};
  std::optional<api::NodeSelector> added = args_.added_required;
  e.hint = [added](const api::Pod& pod, const framework::ClusterEvent&, const void* old_obj,
                   const void* new_obj) {
    const auto* before = static_cast<const api::Node*>(old_obj);
    const auto* after = static_cast<const api::Node*>(new_obj);
    if (after == nullptr) return framework::QueueingHint::kSkip;
    if (added && !added->Matches(after->meta.labels, after->meta.name)) return framework::QueueingHint::kSkip;
    if (!MatchesRequired(pod, *after)) return framework::QueueingHint::kSkip;
    if (before == nullptr) return framework::QueueingHint::kQueue;
    return MatchesRequired(pod, *before) ? framework::QueueingHint::kSkip : framework::QueueingHint::kQueue;
  };
  return {std::move(e)};
}

bool NodeAffinity::SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const {
  const api::Pod& x = a.p();
  const api::Pod& y = b.p();
  if (x.node_selector != y.node_selector) return false;
  if (x.affinity == y.affinity) return true;
  static const std::optional<api::NodeSelector> kNoRequired;
  static const std::vector<api::PreferredSchedulingTerm> kNoPreferred;
  const std::optional<api::NodeSelector>& rx = x.affinity ? x.affinity->node_required : kNoRequired;
  const std::optional<api::NodeSelector>& ry = y.affinity ? y.affinity->node_required : kNoRequired;
  const std::vector<api::PreferredSchedulingTerm>& px =
      x.affinity ? x.affinity->node_preferred : kNoPreferred;
  const std::vector<api::PreferredSchedulingTerm>& py =
      y.affinity ? y.affinity->node_preferred : kNoPreferred;
  return rx == ry && px == py;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder& d, api::JsonValue args, framework::FrameworkHandle&)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        NodeAffinityArgs a = NodeAffinityArgs::Decode(d, args);
        if (!d.ok()) return helper::DecoderStatus(d);
        if (absl::Status st = a.Validate(); !st.ok()) return st;
        return std::make_unique<NodeAffinity>(std::move(a));
      },
      [](api::Decoder& d, api::JsonValue args) -> nlohmann::json {
        NodeAffinityArgs a = NodeAffinityArgs::Decode(d, args);
        if (d.ok()) {
          if (absl::Status st = a.Validate(); !st.ok()) d.Fail(std::string(st.message()));
        }
        return a.ToJson();
      },
      std::string(kArgsKind)});
}

}  // namespace gantry::plugins::node_affinity
