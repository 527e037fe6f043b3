#include "src/api/policy.h"

#include <algorithm>
#include <cctype>

#include "gantry/util/strings.h"

namespace gantry::api {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Checks the string form of an IntOrString used for PDB budgets: a
// non-negative integer or a percentage "N%".
void CheckBudgetValue(Decoder& d, const IntOrString& v) {
  if (!d.ok()) return;
  if (!v.is_string) {
    if (v.int_value < 0) d.Fail("Invalid value: " + gantry::StrCat(v.int_value) + ": must be greater than or equal to 0");
    return;
  }
  auto scaled = v.Scaled(100, true);
  if (!scaled.ok()) {
    d.Fail(gantry::StrCat("Invalid value: \"", v.str_value, "\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"));
    return;
  }
  if (*scaled < 0 || *scaled > 100) {
    d.Fail(gantry::StrCat("Invalid value: \"", v.str_value, "\": must not be greater than 100%"));
  }
}

}  // namespace

bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!IsDnsLabel(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsCIdentifier(std::string_view s) {
  if (s.empty()) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

void CheckMaxItems(Decoder& d, size_t n, size_t max) {
  if (d.ok() && n > max) d.Fail(gantry::StrCat("Too many: ", n, ": must have at most ", max, " items"));
}

void RequireField(Decoder& d, bool present, std::string_view field) {
  if (!d.ok() || present) return;
  // "a.b" is two path segments.
  size_t dot = field.find('.');
  if (dot == std::string_view::npos) {
    d.FailAt(field, "Required value");
    return;
  }
  Decoder::Field scope(d, field.substr(0, dot));
  RequireField(d, false, field.substr(dot + 1));
}

std::string_view ConditionStatusName(ConditionStatus s) {
  switch (s) {
    case ConditionStatus::kTrue: return "True";
    case ConditionStatus::kFalse: return "False";
    case ConditionStatus::kUnknown: return "Unknown";
  }
  return "Unknown";
}

Condition DecodeCondition(Decoder& d, JsonValue v) {
  Condition c;
  bool has_status = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "type") {
      c.type = d.Sym(value);
    } else if (key == "status") {
      std::string_view s = d.String(value);
      has_status = true;
      if (s == "True") {
        c.status = ConditionStatus::kTrue;
      } else if (s == "False") {
        c.status = ConditionStatus::kFalse;
      } else if (s == "Unknown") {
        c.status = ConditionStatus::kUnknown;
      } else if (d.ok()) {
        d.Fail(gantry::StrCat("Unsupported value: \"", s,
                            "\": supported values: \"False\", \"True\", \"Unknown\""));
      }
    } else if (key == "reason") {
      c.reason = d.Sym(value);
    } else if (key == "message") {
      c.message = std::string(d.String(value));
    } else if (key == "observedGeneration") {
      c.observed_generation = d.Int(value);
    } else if (key == "lastTransitionTime") {
      c.last_transition_micros = d.TimeMicros(value);
    }
  });
  RequireField(d, !c.type.empty(), "type");
  RequireField(d, has_status, "status");
  return c;
}

std::vector<Condition> DecodeConditions(Decoder& d, JsonValue v) {
  std::vector<Condition> out;
  d.ForEachItem(v, [&](size_t, JsonValue item) {
    Condition c = DecodeCondition(d, item);
    if (d.ok() && FindCondition(out, c.type.view()) != nullptr) {
      d.FailAt("type", gantry::StrCat("Duplicate value: \"", c.type.view(), "\""));
    }
    out.push_back(std::move(c));
  });
  return out;
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const Condition& c : conditions) {
    if (c.type.view() == type) return &c;
  }
  return nullptr;
}

PreemptionPolicy DecodePreemptionPolicy(Decoder& d, JsonValue v) {
  std::string_view s = d.String(v);
  if (s == "PreemptLowerPriority") return PreemptionPolicy::kPreemptLowerPriority;
  if (s == "Never") return PreemptionPolicy::kNever;
  if (d.ok()) {
    d.Fail(gantry::StrCat("Unsupported value: \"", s,
                        "\": supported values: \"Never\", \"PreemptLowerPriority\""));
  }
  return PreemptionPolicy::kPreemptLowerPriority;
}

Namespace DecodeNamespace(Decoder& d, JsonValue root) {
  Namespace ns;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") DecodeObjectMeta(d, value, &ns.meta);
  });
  RequireField(d, !ns.meta.name.empty(), "metadata.name");
  return ns;
}

absl::StatusOr<Namespace> DecodeNamespace(JsonValue root) {
  return DecodeTopLevel<Namespace>("Namespace", root, &DecodeNamespace);
}

PriorityClass DecodePriorityClass(Decoder& d, JsonValue root) {
  PriorityClass pc;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &pc.meta);
    } else if (key == "value") {
      pc.value = static_cast<int32_t>(d.IntInRange(value, INT32_MIN, INT32_MAX));
    } else if (key == "globalDefault") {
      pc.global_default = d.Bool(value);
    } else if (key == "preemptionPolicy") {
      if (!value.is_null()) pc.preemption_policy = DecodePreemptionPolicy(d, value);
    }
  });
  RequireField(d, !pc.meta.name.empty(), "metadata.name");
  return pc;
}

absl::StatusOr<PriorityClass> DecodePriorityClass(JsonValue root) {
  return DecodeTopLevel<PriorityClass>("PriorityClass", root, &DecodePriorityClass);
}

PodDisruptionBudget DecodePodDisruptionBudget(Decoder& d, JsonValue root) {
  PodDisruptionBudget pdb;
  auto& spec = pdb.spec;
  auto& status = pdb.status;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &pdb.meta);
    } else if (key == "spec") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "selector") {
          if (!val.is_null()) spec.selector = DecodeLabelSelector(d, val);
        } else if (k == "minAvailable") {
          if (!val.is_null()) spec.min_available = DecodeIntOrString(d, val);
          if (spec.min_available) CheckBudgetValue(d, *spec.min_available);
        } else if (k == "maxUnavailable") {
          if (!val.is_null()) spec.max_unavailable = DecodeIntOrString(d, val);
          if (spec.max_unavailable) CheckBudgetValue(d, *spec.max_unavailable);
        } else if (k == "unhealthyPodEvictionPolicy") {
          std::string_view s = d.String(val);
          if (s.empty() || s == "IfHealthyBudget") {
            spec.unhealthy_pod_eviction_policy = UnhealthyPodEvictionPolicy::kIfHealthyBudget;
          } else if (s == "AlwaysAllow") {
            spec.unhealthy_pod_eviction_policy = UnhealthyPodEvictionPolicy::kAlwaysAllow;
          } else if (d.ok()) {
            d.Fail(gantry::StrCat("Unsupported value: \"", s,
                                "\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""));
          }
        }
      });
      if (d.ok() && spec.min_available && spec.max_unavailable) {
        d.Fail("Invalid value: minAvailable and maxUnavailable cannot be both set");
      }
    } else if (key == "status") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "observedGeneration") {
          status.observed_generation = d.Int(val);
        } else if (k == "disruptedPods") {
          d.ForEachField(val, [&](std::string_view pod, JsonValue t) {
            status.disrupted_pods.emplace_back(std::string(pod), d.TimeMicros(t));
          });
          std::sort(status.disrupted_pods.begin(), status.disrupted_pods.end());
        } else if (k == "disruptionsAllowed") {
          status.disruptions_allowed = static_cast<int32_t>(d.IntInRange(val, 0, INT32_MAX));
        } else if (k == "currentHealthy") {
          status.current_healthy = static_cast<int32_t>(d.IntInRange(val, 0, INT32_MAX));
        } else if (k == "desiredHealthy") {
          status.desired_healthy = static_cast<int32_t>(d.IntInRange(val, 0, INT32_MAX));
        } else if (k == "expectedPods") {
          status.expected_pods = static_cast<int32_t>(d.IntInRange(val, 0, INT32_MAX));
        } else if (k == "conditions") {
          status.conditions = DecodeConditions(d, val);
        }
      });
    }
  });
  RequireField(d, !pdb.meta.name.empty(), "metadata.name");
  return pdb;
}

absl::StatusOr<PodDisruptionBudget> DecodePodDisruptionBudget(JsonValue root) {
  return DecodeTopLevel<PodDisruptionBudget>("PodDisruptionBudget", root,
                                             &DecodePodDisruptionBudget);
}

}  // namespace gantry::api
