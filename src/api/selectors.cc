#include "src/api/selectors.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "gantry/util/strings.h"

namespace gantry::api {
namespace {

bool SortedContains(const std::vector<Symbol>& values, Symbol v) {
  if (values.size() < 8) return std::find(values.begin(), values.end(), v) != values.end();
  return std::binary_search(values.begin(), values.end(), v);
}

SelectorOp DecodeOp(Decoder& d, JsonValue v, bool allow_gt_lt) {
  std::string_view s = d.String(v);
  if (s == "In") return SelectorOp::kIn;
  if (s == "NotIn") return SelectorOp::kNotIn;
  if (s == "Exists") return SelectorOp::kExists;
  if (s == "DoesNotExist") return SelectorOp::kDoesNotExist;
  if (allow_gt_lt && s == "Gt") return SelectorOp::kGt;
  if (allow_gt_lt && s == "Lt") return SelectorOp::kLt;
  if (d.ok()) {
    d.Fail(gantry::StrCat("Unsupported value: \"", s, "\": supported values: \"In\", \"NotIn\", ",
                        "\"Exists\", \"DoesNotExist\"", allow_gt_lt ? ", \"Gt\", \"Lt\"" : ""));
  }
  return SelectorOp::kIn;
}

// Decodes one {key, operator, values} expression and checks its shape.
Requirement DecodeRequirement(Decoder& d, JsonValue v, bool allow_gt_lt) {
  Requirement r;
  bool has_values = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "key") {
      r.key = d.Sym(value);
    } else if (key == "operator") {
      r.op = DecodeOp(d, value, allow_gt_lt);
    } else if (key == "values") {
      r.values = d.SymbolList(value);
      has_values = true;
    }
  });
  if (!d.ok()) return r;
  switch (r.op) {
    case SelectorOp::kIn:
    case SelectorOp::kNotIn:
      if (r.values.empty()) d.FailAt("values", "Required value: must be specified when `operator` is 'In' or 'NotIn'");
      break;
    case SelectorOp::kExists:
    case SelectorOp::kDoesNotExist:
      if (!r.values.empty()) d.FailAt("values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      break;
    case SelectorOp::kGt:
    case SelectorOp::kLt:
      if (r.values.size() != 1) {
        d.FailAt("values", "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'");
      } else if (!absl::SimpleAtoi(gantry::AsAbsl(r.values[0].view()), &r.int_value)) {
        d.FailAt("values", gantry::StrCat("Invalid value: \"", r.values[0].view(), "\": must be an integer"));
      }
      break;
  }
  (void)has_values;
  std::sort(r.values.begin(), r.values.end());
  return r;
}

std::vector<Requirement> DecodeRequirements(Decoder& d, JsonValue v, bool allow_gt_lt) {
  std::vector<Requirement> out;
  d.ForEachItem(v, [&](size_t, JsonValue item) {
    out.push_back(DecodeRequirement(d, item, allow_gt_lt));
  });
  return out;
}

bool MatchesValue(const Requirement& r, std::optional<Symbol> value) {
  switch (r.op) {
    case SelectorOp::kIn:
      return value && SortedContains(r.values, *value);
    case SelectorOp::kNotIn:
      return !value || !SortedContains(r.values, *value);
    case SelectorOp::kExists:
      return value.has_value();
    case SelectorOp::kDoesNotExist:
      return !value.has_value();
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      int64_t v;
      if (!value || !absl::SimpleAtoi(gantry::AsAbsl(value->view()), &v)) return false;
      return r.op == SelectorOp::kGt ? v > r.int_value : v < r.int_value;
    }
  }
  return false;
}

}  // namespace

NodeSelectorTerm DecodeNodeSelectorTerm(Decoder& d, JsonValue v) {
  NodeSelectorTerm term;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "matchExpressions") {
      term.match_expressions = DecodeRequirements(d, value, true);
    } else if (key == "matchFields") {
      term.match_fields = DecodeRequirements(d, value, true);
      for (const Requirement& r : term.match_fields) {
        if (r.key.view() != "metadata.name" && d.ok()) {
          d.Fail(gantry::StrCat("Invalid value: \"", r.key.view(),
                              "\": not a valid field selector key (only metadata.name)"));
        }
      }
    }
  });
  return term;
}

std::string_view SelectorOpName(SelectorOp op) {
  switch (op) {
    case SelectorOp::kIn: return "In";
    case SelectorOp::kNotIn: return "NotIn";
    case SelectorOp::kExists: return "Exists";
    case SelectorOp::kDoesNotExist: return "DoesNotExist";
    case SelectorOp::kGt: return "Gt";
    case SelectorOp::kLt: return "Lt";
  }
  return "";
}

bool Requirement::Matches(const Labels& labels) const {
  return MatchesValue(*this, FindLabel(labels, key));
}

bool LabelSelector::Matches(const Labels& labels) const {
  for (const Requirement& r : requirements) {
    if (!r.Matches(labels)) return false;
  }
  return true;
}

LabelSelector DecodeLabelSelector(Decoder& d, JsonValue v) {
  LabelSelector sel;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "matchLabels") {
      for (auto& [k, val] : d.SymbolMap(value)) {
        sel.requirements.push_back(Requirement{k, SelectorOp::kIn, {val}, 0});
      }
    } else if (key == "matchExpressions") {
      for (Requirement& r : DecodeRequirements(d, value, false)) {
        sel.requirements.push_back(std::move(r));
      }
    }
  });
  return sel;
}

bool NodeSelectorTerm::Matches(const Labels& node_labels, std::string_view node_name) const {
  if (match_expressions.empty() && match_fields.empty()) return false;
  for (const Requirement& r : match_expressions) {
    if (!r.Matches(node_labels)) return false;
  }
  for (const Requirement& r : match_fields) {
    // The only supported field is metadata.name.
    if (!MatchesValue(r, Symbol::Intern(node_name))) return false;
  }
  return true;
}

bool NodeSelector::Matches(const Labels& node_labels, std::string_view node_name) const {
  for (const NodeSelectorTerm& t : terms) {
    if (t.Matches(node_labels, node_name)) return true;
  }
  return false;
}

NodeSelector DecodeNodeSelector(Decoder& d, JsonValue v) {
  NodeSelector sel;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "nodeSelectorTerms") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        sel.terms.push_back(DecodeNodeSelectorTerm(d, item));
      });
    }
  });
  return sel;
}

std::string_view TaintEffectName(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNone: return "";
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
  }
  return "";
}

TaintEffect DecodeTaintEffect(Decoder& d, JsonValue v, bool allow_empty) {
  std::string_view s = d.String(v);
  if (s == "NoSchedule") return TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute") return TaintEffect::kNoExecute;
  if (s.empty() && allow_empty) return TaintEffect::kNone;
  if (d.ok()) {
    d.Fail(gantry::StrCat("Unsupported value: \"", s,
                        "\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""));
  }
  return TaintEffect::kNone;
}

Taint DecodeTaint(Decoder& d, JsonValue v) {
  Taint t;
  bool has_effect = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "key") {
      t.key = d.Sym(value);
    } else if (key == "value") {
      t.value = d.Sym(value);
    } else if (key == "effect") {
      t.effect = DecodeTaintEffect(d, value, false);
      has_effect = true;
    } else if (key == "timeAdded") {
      t.time_added_micros = d.TimeMicros(value);
    }
  });
  if (d.ok() && t.key.empty()) d.FailAt("key", "Required value");
  if (d.ok() && !has_effect) d.FailAt("effect", "Required value");
  return t;
}

Toleration DecodeToleration(Decoder& d, JsonValue v) {
  Toleration t;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "key") {
      t.key = d.Sym(value);
    } else if (key == "operator") {
      std::string_view op = d.String(value);
      if (op.empty() || op == "Equal") {
        t.op = TolerationOp::kEqual;
      } else if (op == "Exists") {
        t.op = TolerationOp::kExists;
      } else if (d.ok()) {
        d.Fail(gantry::StrCat("Unsupported value: \"", op, "\": supported values: \"Equal\", \"Exists\""));
      }
    } else if (key == "value") {
      t.value = d.Sym(value);
    } else if (key == "effect") {
      t.effect = DecodeTaintEffect(d, value, true);
    } else if (key == "tolerationSeconds") {
      if (!value.is_null()) t.toleration_seconds = d.Int(value);
    }
  });
  if (d.ok() && t.key.empty() && t.op != TolerationOp::kExists) {
    d.FailAt("operator", "Invalid value: operator must be Exists when `key` is empty, which means \"match all values and all keys\"");
  }
  if (d.ok() && t.op == TolerationOp::kExists && !t.value.empty()) {
    d.FailAt("operator", "Invalid value: value must be empty when `operator` is 'Exists'");
  }
  return t;
}

bool Toleration::Tolerates(const Taint& taint) const {
  if (effect != TaintEffect::kNone && effect != taint.effect) return false;
  if (!key.empty() && key != taint.key) return false;
  switch (op) {
    case TolerationOp::kExists:
      return true;
    case TolerationOp::kEqual:
      return value == taint.value;
  }
  return false;
}

bool TaintTolerated(const Taint& taint, const std::vector<Toleration>& tolerations) {
  for (const Toleration& t : tolerations) {
    if (t.Tolerates(taint)) return true;
  }
  return false;
}

}  // namespace gantry::api
