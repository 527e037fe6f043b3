// Label selectors, node selectors (node affinity), taints and tolerations:
// the matching rules the scheduler applies to labels and nodes, with
// upstream (k8s.io/apimachinery, component-helpers) semantics.
#ifndef GANTRY_SRC_API_SELECTORS_H_
#define GANTRY_SRC_API_SELECTORS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/api/decode.h"
#include "src/api/meta.h"

namespace gantry::api {

enum class SelectorOp : uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
std::string_view SelectorOpName(SelectorOp op);

struct Requirement {
  Symbol key;
  SelectorOp op = SelectorOp::kIn;
  std::vector<Symbol> values;  // sorted; for Gt/Lt exactly one integer value
  int64_t int_value = 0;       // parsed value for Gt/Lt

  bool Matches(const Labels& labels) const;
  bool operator==(const Requirement&) const = default;
};

// metav1.LabelSelector. An empty selector matches everything; a null
// selector (absent field) is represented by std::nullopt at the use site and
// matches nothing, as upstream's LabelSelectorAsSelector does.
struct LabelSelector {
  std::vector<Requirement> requirements;  // matchLabels become In requirements

  bool Empty() const { return requirements.empty(); }
  bool Matches(const Labels& labels) const;
};
LabelSelector DecodeLabelSelector(Decoder& d, JsonValue v);

// v1.NodeSelectorTerm: expressions on labels and fields (metadata.name only).
struct NodeSelectorTerm {
  std::vector<Requirement> match_expressions;
  std::vector<Requirement> match_fields;

  // A term with no requirements matches nothing.
  bool Matches(const Labels& node_labels, std::string_view node_name) const;
  bool operator==(const NodeSelectorTerm&) const = default;
};

NodeSelectorTerm DecodeNodeSelectorTerm(Decoder& d, JsonValue v);

// v1.NodeSelector: terms are ORed.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  bool Matches(const Labels& node_labels, std::string_view node_name) const;
  bool operator==(const NodeSelector&) const = default;
};
NodeSelector DecodeNodeSelector(Decoder& d, JsonValue v);

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

enum class TaintEffect : uint8_t { kNone, kNoSchedule, kPreferNoSchedule, kNoExecute };
std::string_view TaintEffectName(TaintEffect e);
TaintEffect DecodeTaintEffect(Decoder& d, JsonValue v, bool allow_empty);

struct Taint {
  Symbol key;
  Symbol value;
  TaintEffect effect = TaintEffect::kNone;
  int64_t time_added_micros = 0;
};
Taint DecodeTaint(Decoder& d, JsonValue v);

enum class TolerationOp : uint8_t { kEqual, kExists };

struct Toleration {
  Symbol key;  // empty + Exists tolerates every taint
  TolerationOp op = TolerationOp::kEqual;
  Symbol value;
  TaintEffect effect = TaintEffect::kNone;  // kNone matches every effect
  std::optional<int64_t> toleration_seconds;

  bool Tolerates(const Taint& taint) const;
  bool operator==(const Toleration&) const = default;
};
Toleration DecodeToleration(Decoder& d, JsonValue v);

// True if some toleration in `tolerations` tolerates `taint`.
bool TaintTolerated(const Taint& taint, const std::vector<Toleration>& tolerations);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_SELECTORS_H_
