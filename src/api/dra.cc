#include "src/api/dra.h"

#include <algorithm>
#include <cctype>

#include "gantry/util/strings.h"

namespace gantry::api {
namespace {

constexpr size_t kCIdentifierMaxLength = 32;
constexpr size_t kDomainMaxLength = 63;

bool ByName(const auto& a, const auto& b) { return a.name.view() < b.name.view(); }

template <typename T>
const T* FindByName(const std::vector<T>& items, std::string_view name) {
  auto it = std::lower_bound(items.begin(), items.end(), name,
                             [](const T& item, std::string_view n) { return item.name.view() < n; });
  if (it != items.end() && it->name.view() == name) return &*it;
  return nullptr;
}

// Fails with a duplicate error at `list[i].name` for the first repeated name
// of an already sorted vector.
template <typename T>
void CheckSortedUnique(Decoder& d, const std::vector<T>& sorted, std::string_view what) {
  for (size_t i = 1; i < sorted.size() && d.ok(); ++i) {
    if (sorted[i].name == sorted[i - 1].name) {
      d.Fail(gantry::StrCat("Duplicate value: ", what, " \"", sorted[i].name.view(), "\""));
    }
  }
}

bool IsNumericIdentifier(std::string_view s) {
  if (s.empty()) return false;
  if (!std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  return s.size() == 1 || s[0] != '0';
}

bool IsDotSeparatedIdentifiers(std::string_view s, bool numeric_no_leading_zero) {
  if (s.empty()) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty()) return false;
    bool all_digits = std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!std::all_of(part.begin(), part.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
        })) {
      return false;
    }
    if (numeric_no_leading_zero && all_digits && !IsNumericIdentifier(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// Semantic Versioning 2.0.0: MAJOR.MINOR.PATCH[-pre][+build].
bool IsSemver(std::string_view s) {
  size_t plus = s.find('+');
  if (plus != std::string_view::npos) {
    if (!IsDotSeparatedIdentifiers(s.substr(plus + 1), false)) return false;
    s = s.substr(0, plus);
  }
  size_t dash = s.find('-');
  if (dash != std::string_view::npos) {
    if (!IsDotSeparatedIdentifiers(s.substr(dash + 1), true)) return false;
    s = s.substr(0, dash);
  }
  int parts = 0;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!IsNumericIdentifier(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts == 3;
}

// QualifiedName: C identifier (<= 32) optionally prefixed by "<DNS subdomain (<= 63)>/".
bool IsQualifiedName(std::string_view name, bool require_domain) {
  auto [domain, id] = SplitQualifiedName(name);
  if (id.empty() || id.size() > kCIdentifierMaxLength || !IsCIdentifier(id)) return false;
  if (domain.empty()) return !require_domain && name.find('/') == std::string_view::npos;
  return domain.size() <= kDomainMaxLength && IsDnsSubdomain(domain);
}

void CheckQualifiedName(Decoder& d, std::string_view name, bool require_domain) {
  if (!d.ok() || IsQualifiedName(name, require_domain)) return;
  d.Fail(gantry::StrCat("Invalid value: \"", name, "\": must be ",
                      require_domain ? "a fully qualified name <domain>/<C identifier>"
                                     : "a C identifier optionally prefixed by <domain>/",
                      " (identifier at most 32 characters, domain a DNS subdomain of at most 63)"));
}

void CheckDriverName(Decoder& d, std::string_view driver) {
  if (!d.ok()) return;
  if (driver.empty()) {
    d.Fail("Required value");
  } else if (driver.size() > kDriverNameMaxLength || !IsDnsSubdomain(driver)) {
    d.Fail(gantry::StrCat("Invalid value: \"", driver,
                        "\": must be a DNS subdomain of at most 63 characters"));
  }
}

void CheckDnsLabelField(Decoder& d, std::string_view field, std::string_view value) {
  if (!d.ok()) return;
  if (value.empty()) {
    d.FailAt(field, "Required value");
  } else if (!IsDnsLabel(value)) {
    d.FailAt(field, gantry::StrCat("Invalid value: \"", value, "\": must be a valid DNS label (RFC 1123)"));
  }
}

// Pool names are DNS subdomains joined by '/', at most 253 characters.
void CheckPoolName(Decoder& d, std::string_view name) {
  if (!d.ok()) return;
  if (name.empty()) {
    d.Fail("Required value");
    return;
  }
  bool ok = name.size() <= 253;
  size_t start = 0;
  while (ok) {
    size_t slash = name.find('/', start);
    ok = IsDnsSubdomain(name.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (!ok) {
    d.Fail(gantry::StrCat("Invalid value: \"", name,
                        "\": must be one or more DNS subdomains separated by slashes"));
  }
}

std::string RawJson(Decoder& d, JsonValue v, size_t max_length) {
  if (v.is_null()) return "";
  std::string out = simdjson::minify(v);
  if (d.ok() && out.size() > max_length) {
    d.Fail(gantry::StrCat("Too long: may not be more than ", max_length, " bytes"));
  }
  return out;
}

Quantity NonNegativeQty(Decoder& d, JsonValue v) {
  Quantity q = d.Qty(v);
  if (d.ok() && q.Sign() < 0) {
    d.Fail(gantry::StrCat("Invalid value: \"", q.ToString(), "\": must be greater than or equal to 0"));
  }
  return q;
}

// {name: {value: Quantity}} sorted by name.
std::vector<Counter> DecodeCounters(Decoder& d, JsonValue v) {
  std::vector<Counter> out;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    Counter c{Symbol::Intern(key), Quantity()};
    CheckQualifiedName(d, key, false);
    bool has_value = false;
    d.ForEachField(value, [&](std::string_view k, JsonValue val) {
      if (k == "value") {
        c.value = NonNegativeQty(d, val);
        has_value = true;
      }
    });
    RequireField(d, has_value, "value");
    out.push_back(c);
  });
  std::sort(out.begin(), out.end(), [](const Counter& a, const Counter& b) { return ByName(a, b); });
  CheckMaxItems(d, out.size(), kResourceSliceMaxCountersPerSet);
  return out;
}

AttributeValue DecodeScalar(Decoder& d, AttributeType type, JsonValue v) {
  AttributeValue a;
  a.type = type;
  switch (type) {
    case AttributeType::kInt:
      a.int_value = d.Int(v);
      break;
    case AttributeType::kBool:
      a.bool_value = d.Bool(v);
      break;
    case AttributeType::kString:
    case AttributeType::kVersion: {
      std::string_view s = d.String(v);
      if (d.ok() && s.size() > kDeviceAttributeMaxValueLength) {
        d.Fail(gantry::StrCat("Too long: may not be more than ", kDeviceAttributeMaxValueLength,
                            " bytes"));
      }
      if (d.ok() && type == AttributeType::kVersion && !IsSemver(s)) {
        d.Fail(gantry::StrCat("Invalid value: \"", s, "\": must be a string compatible with semver.org spec 2.0.0"));
      }
      a.string_value = Symbol::Intern(s);
      break;
    }
  }
  return a;
}

// Decodes one attribute value object into either `scalar` or `list`; returns
// true for a list. Exactly one of the typed fields must be set.
bool DecodeAttributeValue(Decoder& d, JsonValue v, AttributeValue* scalar,
                          DeviceListAttribute* list, size_t* value_count) {
  static constexpr std::pair<std::string_view, AttributeType> kScalars[] = {
      {"int", AttributeType::kInt}, {"bool", AttributeType::kBool},
      {"string", AttributeType::kString}, {"version", AttributeType::kVersion}};
  static constexpr std::pair<std::string_view, AttributeType> kLists[] = {
      {"ints", AttributeType::kInt}, {"bools", AttributeType::kBool},
      {"strings", AttributeType::kString}, {"versions", AttributeType::kVersion}};
  int set = 0;
  bool is_list = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (value.is_null()) return;
    for (const auto& [name, type] : kScalars) {
      if (key != name) continue;
      ++set;
      *scalar = DecodeScalar(d, type, value);
      *value_count += 1;
    }
    for (const auto& [name, type] : kLists) {
      if (key != name) continue;
      ++set;
      is_list = true;
      list->type = type;
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        list->values.push_back(DecodeScalar(d, type, item));
      });
      if (d.ok() && list->values.empty()) d.Fail("Required value: must not be empty");
      *value_count += list->values.size();
    }
  });
  if (d.ok() && set != 1) {
    d.Fail(set == 0 ? "Required value: exactly one value must be specified"
                    : "Invalid value: exactly one value must be specified");
  }
  return is_list;
}

std::shared_ptr<const CapacityRequestPolicy> DecodeRequestPolicy(Decoder& d, JsonValue v) {
  if (v.is_null()) return nullptr;
  auto p = std::make_shared<CapacityRequestPolicy>();
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "default") {
      if (!value.is_null()) p->default_value = NonNegativeQty(d, value);
    } else if (key == "validValues") {
      d.ForEachItem(value, [&](size_t i, JsonValue item) {
        p->valid_values.push_back(NonNegativeQty(d, item));
        if (d.ok() && i > 0 && !(p->valid_values[i - 1] < p->valid_values[i])) {
          d.Fail("Invalid value: values must be sorted in ascending order and unique");
        }
      });
      CheckMaxItems(d, p->valid_values.size(), kCapacityMaxValidValues);
    } else if (key == "validRange") {
      if (value.is_null()) return;
      CapacityRequestPolicyRange r;
      bool has_min = false;
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (val.is_null()) return;
        if (k == "min") {
          r.min = NonNegativeQty(d, val);
          has_min = true;
        } else if (k == "max") {
          r.max = NonNegativeQty(d, val);
        } else if (k == "step") {
          r.step = NonNegativeQty(d, val);
          if (d.ok() && r.step->IsZero()) d.Fail("Invalid value: \"0\": must be greater than zero");
        }
      });
      RequireField(d, has_min, "min");
      if (d.ok() && r.max && *r.max < r.min) {
        d.FailAt("max", gantry::StrCat("Invalid value: \"", r.max->ToString(),
                                     "\": must be greater than or equal to min"));
      }
      p->valid_range = std::move(r);
    }
  });
  if (!d.ok()) return p;
  if (!p->valid_values.empty() && p->valid_range) {
    d.Fail("Invalid value: exactly one of `validValues`, `validRange` may be specified");
  } else if (!p->valid_values.empty() && p->default_value &&
             std::find(p->valid_values.begin(), p->valid_values.end(), *p->default_value) ==
                 p->valid_values.end()) {
    d.FailAt("default", gantry::StrCat("Invalid value: \"", p->default_value->ToString(),
                                     "\": must be one of the validValues"));
  } else if (p->valid_range && p->default_value && *p->default_value < p->valid_range->min) {
    d.FailAt("default", gantry::StrCat("Invalid value: \"", p->default_value->ToString(),
                                     "\": must be within validRange"));
  }
  return p;
}

std::vector<Symbol> DecodeConditionNames(Decoder& d, JsonValue v) {
  std::vector<Symbol> out = d.SymbolList(v);
  CheckMaxItems(d, out.size(), kDeviceMaxBindingConditions);
  return out;
}

// Set of node-selection fields found on a slice spec or device.
struct NodeFields {
  Symbol node_name;
  std::shared_ptr<const NodeSelector> node_selector;
  bool all_nodes = false;
  bool per_device = false;  // slice only
  int count() const {
    return !node_name.empty() + (node_selector != nullptr) + all_nodes + per_device;
  }
};

// Handles nodeName / nodeSelector / allNodes; returns false for other keys.
bool DecodeNodeField(Decoder& d, std::string_view key, JsonValue value, NodeFields* out) {
  if (key == "nodeName") {
    out->node_name = d.Sym(value);
  } else if (key == "nodeSelector") {
    if (value.is_null()) return true;
    auto sel = std::make_shared<NodeSelector>(DecodeNodeSelector(d, value));
    if (d.ok() && sel->terms.size() != 1) {
      d.Fail(gantry::StrCat("Invalid value: must have exactly one node selector term, got ",
                          sel->terms.size()));
    }
    out->node_selector = std::move(sel);
  } else if (key == "allNodes") {
    out->all_nodes = d.Bool(value);
  } else {
    return false;
  }
  return true;
}

Device DecodeDevice(Decoder& d, JsonValue v, Symbol driver, bool per_device_nodes,
                    bool* uses_taints_or_counters) {
  Device dev;
  NodeFields nodes;
  size_t value_count = 0;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "name") {
      dev.name = d.Sym(value);
    } else if (key == "attributes") {
      d.ForEachField(value, [&](std::string_view name, JsonValue val) {
        CheckQualifiedName(d, name, false);
        AttributeValue scalar;
        DeviceListAttribute list;
        bool unqualified = name.find('/') == std::string_view::npos;
        Symbol fqn = QualifyName(name, driver);
        if (DecodeAttributeValue(d, val, &scalar, &list, &value_count)) {
          list.name = fqn;
          list.unqualified = unqualified;
          dev.list_attributes.push_back(std::move(list));
          *uses_taints_or_counters = true;
        } else {
          dev.attributes.push_back(DeviceAttribute{fqn, unqualified, scalar});
        }
      });
      std::sort(dev.attributes.begin(), dev.attributes.end(),
                [](const auto& a, const auto& b) { return ByName(a, b); });
      std::sort(dev.list_attributes.begin(), dev.list_attributes.end(),
                [](const auto& a, const auto& b) { return ByName(a, b); });
      CheckSortedUnique(d, dev.attributes, "attribute");
      CheckSortedUnique(d, dev.list_attributes, "attribute");
      for (const DeviceListAttribute& l : dev.list_attributes) {
        if (d.ok() && FindByName(dev.attributes, l.name.view()) != nullptr) {
          d.Fail(gantry::StrCat("Duplicate value: attribute \"", l.name.view(), "\""));
        }
      }
    } else if (key == "capacity") {
      d.ForEachField(value, [&](std::string_view name, JsonValue val) {
        CheckQualifiedName(d, name, false);
        DeviceCapacity c;
        c.name = QualifyName(name, driver);
        c.unqualified = name.find('/') == std::string_view::npos;
        bool has_value = false;
        d.ForEachField(val, [&](std::string_view k, JsonValue fv) {
          if (k == "value") {
            c.value = NonNegativeQty(d, fv);
            has_value = !fv.is_null();
          } else if (k == "requestPolicy") {
            c.request_policy = DecodeRequestPolicy(d, fv);
          }
        });
        RequireField(d, has_value, "value");
        dev.capacity.push_back(std::move(c));
      });
      std::sort(dev.capacity.begin(), dev.capacity.end(),
                [](const auto& a, const auto& b) { return ByName(a, b); });
      CheckSortedUnique(d, dev.capacity, "capacity");
    } else if (key == "consumesCounters") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        DeviceCounterConsumption c;
        d.ForEachField(item, [&](std::string_view k, JsonValue fv) {
          if (k == "counterSet") {
            c.counter_set = d.Sym(fv);
          } else if (k == "counters") {
            c.counters = DecodeCounters(d, fv);
          }
        });
        RequireField(d, !c.counter_set.empty(), "counterSet");
        if (d.ok() && c.counters.empty()) d.FailAt("counters", "Required value");
        for (const DeviceCounterConsumption& other : dev.consumes_counters) {
          if (d.ok() && other.counter_set == c.counter_set) {
            d.FailAt("counterSet", gantry::StrCat("Duplicate value: \"", c.counter_set.view(), "\""));
          }
        }
        dev.consumes_counters.push_back(std::move(c));
      });
      CheckMaxItems(d, dev.consumes_counters.size(), kDeviceMaxConsumesCounters);
      if (!dev.consumes_counters.empty()) *uses_taints_or_counters = true;
    } else if (key == "taints") {
      d.ForEachItem(value, [&](size_t, JsonValue item) { dev.taints.push_back(DecodeDeviceTaint(d, item)); });
      CheckMaxItems(d, dev.taints.size(), kDeviceMaxTaints);
      if (!dev.taints.empty()) *uses_taints_or_counters = true;
    } else if (key == "bindsToNode") {
      dev.binds_to_node = d.Bool(value);
    } else if (key == "bindingConditions") {
      dev.binding_conditions = DecodeConditionNames(d, value);
    } else if (key == "bindingFailureConditions") {
      dev.binding_failure_conditions = DecodeConditionNames(d, value);
    } else if (key == "allowMultipleAllocations") {
      dev.allow_multiple_allocations = d.Bool(value);
    } else {
      DecodeNodeField(d, key, value, &nodes);
    }
  });
  if (!d.ok()) return dev;
  CheckDnsLabelField(d, "name", dev.name.view());
  if (d.ok() && dev.attributes.size() + dev.list_attributes.size() + dev.capacity.size() >
                    kDeviceMaxAttributesAndCapacities) {
    d.Fail(gantry::StrCat("Too many: ",
                        dev.attributes.size() + dev.list_attributes.size() + dev.capacity.size(),
                        ": must have at most ", kDeviceMaxAttributesAndCapacities,
                        " attributes and capacities combined"));
  }
  if (d.ok() && value_count > 48) {
    d.Fail(gantry::StrCat("Too many: ", value_count, ": must have at most 48 attribute values"));
  }
  if (d.ok() && dev.binding_conditions.empty() != dev.binding_failure_conditions.empty()) {
    d.FailAt(dev.binding_conditions.empty() ? "bindingConditions" : "bindingFailureConditions",
             "Required value: bindingConditions and bindingFailureConditions must be set together");
  }
  if (d.ok() && per_device_nodes && nodes.count() != 1) {
    d.Fail(nodes.count() == 0
               ? "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
               : "Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes` is required, but multiple fields are set");
  } else if (d.ok() && !per_device_nodes && nodes.count() != 0) {
    d.Fail("Invalid value: `nodeName`, `nodeSelector` and `allNodes` may only be set on a device when `perDeviceNodeSelection` is set to true in the ResourceSlice spec");
  }
  dev.node_name = nodes.node_name;
  dev.node_selector = std::move(nodes.node_selector);
  dev.all_nodes = nodes.all_nodes;
  return dev;
}

std::vector<DeviceSelector> DecodeSelectors(Decoder& d, JsonValue v) {
  std::vector<DeviceSelector> out;
  d.ForEachItem(v, [&](size_t, JsonValue item) {
    DeviceSelector s;
    bool has_cel = false;
    d.ForEachField(item, [&](std::string_view key, JsonValue value) {
      if (key != "cel" || value.is_null()) return;
      has_cel = true;
      bool has_expr = false;
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k != "expression") return;
        s.cel_expression = std::string(d.String(val));
        has_expr = !s.cel_expression.empty();
        if (d.ok() && s.cel_expression.size() > kCELSelectorExpressionMaxLength) {
          d.Fail(gantry::StrCat("Too long: may not be more than ", kCELSelectorExpressionMaxLength,
                              " bytes"));
        }
      });
      RequireField(d, has_expr, "expression");
    });
    RequireField(d, has_cel, "cel");
    out.push_back(std::move(s));
  });
  CheckMaxItems(d, out.size(), kDeviceSelectorsMax);
  return out;
}

OpaqueDeviceConfiguration DecodeOpaque(Decoder& d, JsonValue v) {
  OpaqueDeviceConfiguration o;
  bool has_params = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "driver") {
      o.driver = d.Sym(value);
      CheckDriverName(d, o.driver.view());
    } else if (key == "parameters") {
      o.parameters = RawJson(d, value, kOpaqueParametersMaxLength);
      has_params = !value.is_null();
    }
  });
  RequireField(d, !o.driver.empty(), "driver");
  RequireField(d, has_params, "parameters");
  return o;
}

// Decodes a config list entry's `opaque` (required) and `requests`.
template <typename Config>
Config DecodeConfigEntry(Decoder& d, JsonValue v, bool with_requests,
                         bool (*extra)(Decoder&, std::string_view, JsonValue, Config*)) {
  Config c;
  bool has_opaque = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "opaque") {
      if (value.is_null()) return;
      c.opaque = DecodeOpaque(d, value);
      has_opaque = true;
    } else if (key == "requests" && with_requests) {
      c.requests = d.SymbolList(value);
    } else if (extra != nullptr) {
      extra(d, key, value, &c);
    }
  });
  RequireField(d, has_opaque, "opaque");
  return c;
}

struct ClassConfig {
  std::vector<Symbol> requests;  // unused
  OpaqueDeviceConfiguration opaque;
};

std::vector<CapacityRequest> DecodeCapacityRequests(Decoder& d, JsonValue v) {
  std::vector<CapacityRequest> out;
  d.ForEachField(v, [&](std::string_view name, JsonValue value) {
    CheckQualifiedName(d, name, false);
    out.push_back(CapacityRequest{Symbol::Intern(name), NonNegativeQty(d, value)});
  });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return ByName(a, b); });
  return out;
}

// Decodes the fields of `exactly` or of a subrequest (`name` handled by caller).
void DecodeExactField(Decoder& d, std::string_view key, JsonValue value, ExactDeviceRequest* r,
                      bool* has_count, bool allow_admin_access) {
  if (key == "deviceClassName") {
    r->device_class_name = d.Sym(value);
  } else if (key == "selectors") {
    r->selectors = DecodeSelectors(d, value);
  } else if (key == "allocationMode") {
    std::string_view s = d.String(value);
    if (s.empty() || s == "ExactCount") {
      r->allocation_mode = AllocationMode::kExactCount;
    } else if (s == "All") {
      r->allocation_mode = AllocationMode::kAll;
    } else if (d.ok()) {
      d.Fail(gantry::StrCat("Unsupported value: \"", s, "\": supported values: \"All\", \"ExactCount\""));
    }
  } else if (key == "count") {
    if (value.is_null()) return;
    r->count = d.Int(value);
    *has_count = true;
  } else if (key == "adminAccess" && allow_admin_access) {
    r->admin_access = d.Bool(value);
  } else if (key == "tolerations") {
    d.ForEachItem(value, [&](size_t, JsonValue item) {
      Toleration t = DecodeToleration(d, item);
      if (d.ok() && t.effect == TaintEffect::kPreferNoSchedule) {
        d.FailAt("effect", "Unsupported value: \"PreferNoSchedule\": supported values: \"NoExecute\", \"NoSchedule\"");
      }
      r->tolerations.push_back(std::move(t));
    });
    CheckMaxItems(d, r->tolerations.size(), kDeviceTolerationsMax);
  } else if (key == "capacity") {
    d.ForEachField(value, [&](std::string_view k, JsonValue val) {
      if (k == "requests") r->capacity_requests = DecodeCapacityRequests(d, val);
    });
  }
}

void FinishExact(Decoder& d, ExactDeviceRequest* r, bool has_count) {
  if (!d.ok()) return;
  if (r->device_class_name.empty()) {
    d.FailAt("deviceClassName", "Required value");
    return;
  }
  if (!IsDnsSubdomain(r->device_class_name.view())) {
    d.FailAt("deviceClassName", gantry::StrCat("Invalid value: \"", r->device_class_name.view(),
                                             "\": must be a valid DNS subdomain"));
    return;
  }
  if (r->allocation_mode == AllocationMode::kAll) {
    if (has_count) {
      d.FailAt("count", gantry::StrCat("Invalid value: ", r->count,
                                     ": must not be specified when allocationMode is 'All'"));
    }
    r->count = 0;
  } else if (r->count < 1 || r->count > static_cast<int64_t>(kAllocationResultsMaxSize)) {
    d.FailAt("count", gantry::StrCat("Invalid value: ", r->count, ": must be between 1 and ",
                                   kAllocationResultsMaxSize, ", inclusive"));
  }
}

DeviceRequest DecodeDeviceRequest(Decoder& d, JsonValue v) {
  DeviceRequest req;
  bool has_first = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "name") {
      req.name = d.Sym(value);
    } else if (key == "exactly") {
      if (value.is_null()) return;
      ExactDeviceRequest r;
      bool has_count = false;
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        DecodeExactField(d, k, val, &r, &has_count, true);
      });
      FinishExact(d, &r, has_count);
      req.exactly = std::move(r);
    } else if (key == "firstAvailable") {
      has_first = !value.is_null();
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        DeviceSubRequest sub;
        bool has_count = false;
        d.ForEachField(item, [&](std::string_view k, JsonValue val) {
          if (k == "name") {
            sub.name = d.Sym(val);
          } else {
            DecodeExactField(d, k, val, &sub.spec, &has_count, false);
          }
        });
        CheckDnsLabelField(d, "name", sub.name.view());
        FinishExact(d, &sub.spec, has_count);
        for (const DeviceSubRequest& other : req.first_available) {
          if (d.ok() && other.name == sub.name) {
            d.FailAt("name", gantry::StrCat("Duplicate value: \"", sub.name.view(), "\""));
          }
        }
        req.first_available.push_back(std::move(sub));
      });
      if (d.ok() && has_first && req.first_available.empty()) d.Fail("Required value");
      CheckMaxItems(d, req.first_available.size(), kFirstAvailableMax);
    }
  });
  CheckDnsLabelField(d, "name", req.name.view());
  if (d.ok() && req.exactly.has_value() == has_first) {
    d.Fail(has_first ? "Invalid value: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
                     : "Required value: exactly one of `exactly` or `firstAvailable` is required");
  }
  return req;
}

// Whether `ref` names a request ("req") or a subrequest ("req/sub") of `spec`.
bool IsValidRequestRef(const ResourceClaimSpec& spec, std::string_view ref, bool allow_sub) {
  size_t slash = ref.find('/');
  const DeviceRequest* req = spec.FindRequest(ref.substr(0, slash));
  if (req == nullptr) return false;
  if (slash == std::string_view::npos) return true;
  if (!allow_sub) return false;
  std::string_view sub = ref.substr(slash + 1);
  return std::any_of(req->first_available.begin(), req->first_available.end(),
                     [&](const DeviceSubRequest& s) { return s.name.view() == sub; });
}

void CheckRequestRefs(Decoder& d, const ResourceClaimSpec& spec, std::string_view list,
                      size_t index, const std::vector<Symbol>& refs) {
  for (size_t i = 0; i < refs.size() && d.ok(); ++i) {
    if (IsValidRequestRef(spec, refs[i].view(), true)) continue;
    Decoder::Field f1(d, list);
    Decoder::Field f2(d, index);
    Decoder::Field f3(d, "requests");
    Decoder::Field f4(d, i);
    d.Fail(gantry::StrCat("Invalid value: \"", refs[i].view(),
                        "\": must be the name of a request in the claim or the name of a "
                        "request and a subrequest separated by '/'"));
  }
}

AllocationConfigSource DecodeConfigSource(Decoder& d, JsonValue v) {
  std::string_view s = d.String(v);
  if (s == "FromClass") return AllocationConfigSource::kFromClass;
  if (s == "FromClaim") return AllocationConfigSource::kFromClaim;
  if (d.ok()) {
    d.Fail(s.empty() ? std::string("Required value")
                     : gantry::StrCat("Unsupported value: \"", s,
                                    "\": supported values: \"FromClaim\", \"FromClass\""));
  }
  return AllocationConfigSource::kFromClaim;
}

bool DecodeSourceField(Decoder& d, std::string_view key, JsonValue value,
                       DeviceAllocationConfiguration* c) {
  if (key != "source") return false;
  c->source = DecodeConfigSource(d, value);
  return true;
}

AllocationResult DecodeAllocation(Decoder& d, JsonValue v) {
  AllocationResult a;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "devices") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "results") {
          d.ForEachItem(val, [&](size_t, JsonValue item) {
            DeviceRequestAllocationResult r;
            d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
              if (f == "request") {
                r.request = d.Sym(fv);
              } else if (f == "driver") {
                r.driver = d.Sym(fv);
              } else if (f == "pool") {
                r.pool = d.Sym(fv);
              } else if (f == "device") {
                r.device = d.Sym(fv);
              } else if (f == "adminAccess") {
                r.admin_access = d.Bool(fv);
              } else if (f == "tolerations") {
                d.ForEachItem(fv, [&](size_t, JsonValue t) {
                  r.tolerations.push_back(DecodeToleration(d, t));
                });
              } else if (f == "bindingConditions") {
                r.binding_conditions = DecodeConditionNames(d, fv);
              } else if (f == "bindingFailureConditions") {
                r.binding_failure_conditions = DecodeConditionNames(d, fv);
              } else if (f == "shareID") {
                r.share_id = std::string(d.String(fv));
              } else if (f == "consumedCapacity") {
                r.consumed_capacity = DecodeCapacityRequests(d, fv);
              }
            });
            RequireField(d, !r.request.empty(), "request");
            RequireField(d, !r.driver.empty(), "driver");
            RequireField(d, !r.pool.empty(), "pool");
            RequireField(d, !r.device.empty(), "device");
            a.results.push_back(std::move(r));
          });
          CheckMaxItems(d, a.results.size(), kAllocationResultsMaxSize);
        } else if (k == "config") {
          d.ForEachItem(val, [&](size_t, JsonValue item) {
            bool has_source = false;
            DeviceAllocationConfiguration c = DecodeConfigEntry<DeviceAllocationConfiguration>(
                d, item, true,
                [](Decoder& dd, std::string_view f, JsonValue fv, DeviceAllocationConfiguration* out) {
                  return DecodeSourceField(dd, f, fv, out);
                });
            JsonObject obj;
            if (item.get_object().get(obj) == simdjson::SUCCESS) {
              JsonValue src;
              has_source = obj["source"].get(src) == simdjson::SUCCESS && !src.is_null();
            }
            RequireField(d, has_source, "source");
            a.config.push_back(std::move(c));
          });
          CheckMaxItems(d, a.config.size(), kAllocationConfigMax);
        }
      });
    } else if (key == "nodeSelector") {
      if (!value.is_null()) a.node_selector = std::make_shared<NodeSelector>(DecodeNodeSelector(d, value));
    } else if (key == "allocationTimestamp") {
      a.allocation_timestamp_micros = d.TimeMicros(value);
    }
  });
  return a;
}

ResourceClaim::Status DecodeClaimStatus(Decoder& d, JsonValue v) {
  ResourceClaim::Status s;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "allocation") {
      if (!value.is_null()) s.allocation = DecodeAllocation(d, value);
    } else if (key == "reservedFor") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        ResourceClaimConsumerReference r;
        d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
          if (f == "apiGroup") {
            r.api_group = d.Sym(fv);
          } else if (f == "resource") {
            r.resource = d.Sym(fv);
          } else if (f == "name") {
            r.name = std::string(d.String(fv));
          } else if (f == "uid") {
            r.uid = std::string(d.String(fv));
          }
        });
        RequireField(d, !r.resource.empty(), "resource");
        RequireField(d, !r.name.empty(), "name");
        RequireField(d, !r.uid.empty(), "uid");
        for (const ResourceClaimConsumerReference& other : s.reserved_for) {
          if (d.ok() && other.uid == r.uid) {
            d.FailAt("uid", gantry::StrCat("Duplicate value: \"", r.uid, "\""));
          }
        }
        s.reserved_for.push_back(std::move(r));
      });
      CheckMaxItems(d, s.reserved_for.size(), kReservedForMaxSize);
    } else if (key == "devices") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        AllocatedDeviceStatus ds;
        d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
          if (f == "driver") {
            ds.driver = d.Sym(fv);
          } else if (f == "pool") {
            ds.pool = d.Sym(fv);
          } else if (f == "device") {
            ds.device = d.Sym(fv);
          } else if (f == "shareID") {
            ds.share_id = std::string(d.String(fv));
          } else if (f == "conditions") {
            ds.conditions = DecodeConditions(d, fv);
            CheckMaxItems(d, ds.conditions.size(), 8);
          } else if (f == "data") {
            ds.data = RawJson(d, fv, kOpaqueParametersMaxLength);
          } else if (f == "networkData") {
            if (fv.is_null()) return;
            NetworkDeviceData n;
            d.ForEachField(fv, [&](std::string_view nk, JsonValue nv) {
              if (nk == "interfaceName") {
                n.interface_name = std::string(d.String(nv));
              } else if (nk == "ips") {
                n.ips = d.StringList(nv);
              } else if (nk == "hardwareAddress") {
                n.hardware_address = std::string(d.String(nv));
              }
            });
            ds.network_data = std::move(n);
          }
        });
        RequireField(d, !ds.driver.empty(), "driver");
        RequireField(d, !ds.pool.empty(), "pool");
        RequireField(d, !ds.device.empty(), "device");
        s.devices.push_back(std::move(ds));
      });
    }
  });
  return s;
}

}  // namespace

std::pair<std::string_view, std::string_view> SplitQualifiedName(std::string_view name) {
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return {std::string_view(), name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

Symbol QualifyName(std::string_view name, Symbol driver) {
  if (name.find('/') != std::string_view::npos || driver.empty()) return Symbol::Intern(name);
  return Symbol::Intern(gantry::StrCat(driver.view(), "/", name));
}

std::string_view AttributeTypeName(AttributeType t) {
  switch (t) {
    case AttributeType::kInt: return "int";
    case AttributeType::kBool: return "bool";
    case AttributeType::kString: return "string";
    case AttributeType::kVersion: return "version";
  }
  return "";
}

std::string_view AllocationModeName(AllocationMode m) {
  return m == AllocationMode::kAll ? "All" : "ExactCount";
}

std::string_view AllocationConfigSourceName(AllocationConfigSource s) {
  return s == AllocationConfigSource::kFromClass ? "FromClass" : "FromClaim";
}

const DeviceAttribute* Device::FindAttribute(Symbol qualified_name) const {
  return FindByName(attributes, qualified_name.view());
}

const DeviceAttribute* Device::FindAttribute(std::string_view qualified_name) const {
  return FindByName(attributes, qualified_name);
}

const DeviceAttribute* Device::FindAttribute(std::string_view domain, std::string_view id) const {
  return FindByName(attributes, gantry::StrCat(domain, "/", id));
}

const DeviceListAttribute* Device::FindListAttribute(Symbol qualified_name) const {
  return FindByName(list_attributes, qualified_name.view());
}

const DeviceCapacity* Device::FindCapacity(Symbol qualified_name) const {
  return FindByName(capacity, qualified_name.view());
}

const DeviceCapacity* Device::FindCapacity(std::string_view domain, std::string_view id) const {
  return FindByName(capacity, gantry::StrCat(domain, "/", id));
}

const Device* ResourceSlice::FindDevice(Symbol name) const {
  for (const Device& dev : spec.devices) {
    if (dev.name == name) return &dev;
  }
  return nullptr;
}

Taint DecodeDeviceTaint(Decoder& d, JsonValue v) {
  Taint t;
  bool has_effect = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "key") {
      t.key = d.Sym(value);
    } else if (key == "value") {
      t.value = d.Sym(value);
    } else if (key == "effect") {
      std::string_view s = d.String(value);
      has_effect = !s.empty();
      if (s == "NoSchedule") {
        t.effect = TaintEffect::kNoSchedule;
      } else if (s == "NoExecute") {
        t.effect = TaintEffect::kNoExecute;
      } else if (s == "None") {
        t.effect = TaintEffect::kNone;
      } else if (d.ok() && !s.empty()) {
        d.Fail(gantry::StrCat("Unsupported value: \"", s,
                            "\": supported values: \"NoExecute\", \"NoSchedule\", \"None\""));
      }
    } else if (key == "timeAdded") {
      t.time_added_micros = d.TimeMicros(value);
    }
  });
  RequireField(d, !t.key.empty(), "key");
  RequireField(d, has_effect, "effect");
  return t;
}

bool DeviceTaintBlocks(const Taint& taint, const std::vector<Toleration>& tolerations) {
  if (taint.effect != TaintEffect::kNoSchedule && taint.effect != TaintEffect::kNoExecute) {
    return false;
  }
  return !TaintTolerated(taint, tolerations);
}

ResourceSlice DecodeResourceSlice(Decoder& d, JsonValue root) {
  ResourceSlice slice;
  auto& spec = slice.spec;
  bool has_spec = false;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &slice.meta);
      return;
    }
    if (key != "spec") return;
    has_spec = true;
    // Attribute names are qualified with the driver, which may come later.
    JsonObject obj;
    if (value.get_object().get(obj) == simdjson::SUCCESS) {
      std::string_view driver;
      if (obj["driver"].get_string().get(driver) == simdjson::SUCCESS) {
        spec.driver = Symbol::Intern(driver);
      }
    }
    NodeFields nodes;
    JsonValue devices_json;
    bool has_devices = false;
    d.ForEachField(value, [&](std::string_view k, JsonValue val) {
      if (k == "driver") {
        spec.driver = d.Sym(val);
        CheckDriverName(d, spec.driver.view());
      } else if (k == "pool") {
        bool has_count = false;
        d.ForEachField(val, [&](std::string_view f, JsonValue fv) {
          if (f == "name") {
            spec.pool.name = d.Sym(fv);
            CheckPoolName(d, spec.pool.name.view());
          } else if (f == "generation") {
            spec.pool.generation = d.IntInRange(fv, 0, INT64_MAX);
          } else if (f == "resourceSliceCount") {
            spec.pool.resource_slice_count = d.IntInRange(fv, 1, INT64_MAX);
            has_count = true;
          }
        });
        RequireField(d, !spec.pool.name.empty(), "name");
        RequireField(d, has_count, "resourceSliceCount");
      } else if (k == "perDeviceNodeSelection") {
        nodes.per_device = d.Bool(val);
      } else if (k == "devices") {
        devices_json = val;  // decoded after the node-selection mode is known
        has_devices = true;
      } else if (k == "sharedCounters") {
        d.ForEachItem(val, [&](size_t, JsonValue item) {
          CounterSet cs;
          d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
            if (f == "name") {
              cs.name = d.Sym(fv);
            } else if (f == "counters") {
              cs.counters = DecodeCounters(d, fv);
            }
          });
          CheckDnsLabelField(d, "name", cs.name.view());
          if (d.ok() && cs.counters.empty()) d.FailAt("counters", "Required value");
          spec.shared_counters.push_back(std::move(cs));
        });
        CheckMaxItems(d, spec.shared_counters.size(), kResourceSliceMaxSharedCounters);
        std::sort(spec.shared_counters.begin(), spec.shared_counters.end(),
                  [](const auto& a, const auto& b) { return ByName(a, b); });
        CheckSortedUnique(d, spec.shared_counters, "counter set");
      } else {
        DecodeNodeField(d, k, val, &nodes);
      }
    });
    if (has_devices && d.ok()) {
      Decoder::Field f2(d, "devices");
      bool uses_extras = false;
      d.ForEachItem(devices_json, [&](size_t, JsonValue item) {
        spec.devices.push_back(DecodeDevice(d, item, spec.driver, nodes.per_device, &uses_extras));
        for (size_t i = 0; i + 1 < spec.devices.size() && d.ok(); ++i) {
          if (spec.devices[i].name == spec.devices.back().name) {
            d.FailAt("name", gantry::StrCat("Duplicate value: \"", spec.devices.back().name.view(), "\""));
          }
        }
      });
      CheckMaxItems(d, spec.devices.size(),
                    uses_extras ? kResourceSliceMaxDevicesWithTaintsOrCounters
                                : kResourceSliceMaxDevices);
    }
    if (!d.ok()) return;
    RequireField(d, !spec.driver.empty(), "driver");
    RequireField(d, !spec.pool.name.empty(), "pool");
    if (d.ok() && nodes.count() != 1) {
      d.Fail(nodes.count() == 0
                 ? "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
                 : "Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set");
    }
    if (d.ok() && !spec.devices.empty() && !spec.shared_counters.empty()) {
      d.Fail("Invalid value: only one of `devices` and `sharedCounters` may be set");
    }
    spec.node_name = nodes.node_name;
    spec.node_selector = std::move(nodes.node_selector);
    spec.node_selection = !nodes.node_name.empty() ? SliceNodeSelection::kNodeName
                          : spec.node_selector     ? SliceNodeSelection::kNodeSelector
                          : nodes.all_nodes        ? SliceNodeSelection::kAllNodes
                                                   : SliceNodeSelection::kPerDevice;
  });
  RequireField(d, !slice.meta.name.empty(), "metadata.name");
  RequireField(d, has_spec, "spec");
  return slice;
}

absl::StatusOr<ResourceSlice> DecodeResourceSlice(JsonValue root) {
  return DecodeTopLevel<ResourceSlice>("ResourceSlice", root, &DecodeResourceSlice);
}

std::string DeviceClass::EffectiveExtendedResourceName() const {
  if (!spec.extended_resource_name.empty()) return spec.extended_resource_name.str();
  return gantry::StrCat(kImplicitExtendedResourcePrefix, meta.name);
}

DeviceClass DecodeDeviceClass(Decoder& d, JsonValue root) {
  DeviceClass dc;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &dc.meta);
    } else if (key == "spec") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "selectors") {
          dc.spec.selectors = DecodeSelectors(d, val);
        } else if (k == "config") {
          d.ForEachItem(val, [&](size_t, JsonValue item) {
            dc.spec.config.push_back(DecodeConfigEntry<ClassConfig>(d, item, false, nullptr).opaque);
          });
          CheckMaxItems(d, dc.spec.config.size(), kDeviceConfigMax);
        } else if (k == "extendedResourceName") {
          dc.spec.extended_resource_name = d.Sym(val);
          std::string_view name = dc.spec.extended_resource_name.view();
          if (d.ok() && !name.empty() &&
              (name.find('/') == std::string_view::npos ||
               !IsDnsSubdomain(SplitQualifiedName(name).first))) {
            d.Fail(gantry::StrCat("Invalid value: \"", name,
                                "\": must be a valid extended resource name (<domain>/<name>)"));
          }
        }
      });
    }
  });
  RequireField(d, !dc.meta.name.empty(), "metadata.name");
  return dc;
}

absl::StatusOr<DeviceClass> DecodeDeviceClass(JsonValue root) {
  return DecodeTopLevel<DeviceClass>("DeviceClass", root, &DecodeDeviceClass);
}

const DeviceRequest* ResourceClaimSpec::FindRequest(std::string_view name) const {
  for (const DeviceRequest& r : requests) {
    if (r.name.view() == name) return &r;
  }
  return nullptr;
}

ResourceClaimSpec DecodeResourceClaimSpec(Decoder& d, JsonValue v) {
  ResourceClaimSpec spec;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key != "devices") return;
    d.ForEachField(value, [&](std::string_view k, JsonValue val) {
      if (k == "requests") {
        d.ForEachItem(val, [&](size_t, JsonValue item) {
          DeviceRequest r = DecodeDeviceRequest(d, item);
          if (d.ok() && spec.FindRequest(r.name.view()) != nullptr) {
            d.FailAt("name", gantry::StrCat("Duplicate value: \"", r.name.view(), "\""));
          }
          spec.requests.push_back(std::move(r));
        });
        CheckMaxItems(d, spec.requests.size(), kDeviceRequestsMax);
      } else if (k == "constraints") {
        d.ForEachItem(val, [&](size_t, JsonValue item) {
          DeviceConstraint c;
          d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
            if (f == "requests") {
              c.requests = d.SymbolList(fv);
            } else if (f == "matchAttribute") {
              c.match_attribute = d.Sym(fv);
              if (!c.match_attribute.empty()) CheckQualifiedName(d, c.match_attribute.view(), true);
            } else if (f == "distinctAttribute") {
              c.distinct_attribute = d.Sym(fv);
              if (!c.distinct_attribute.empty()) CheckQualifiedName(d, c.distinct_attribute.view(), true);
            }
          });
          if (d.ok() && c.match_attribute.empty() == c.distinct_attribute.empty()) {
            d.Fail(c.match_attribute.empty()
                       ? "Required value: exactly one of `matchAttribute` or `distinctAttribute` is required"
                       : "Invalid value: exactly one of `matchAttribute` or `distinctAttribute` is required, but multiple fields are set");
          }
          spec.constraints.push_back(std::move(c));
        });
        CheckMaxItems(d, spec.constraints.size(), kDeviceConstraintsMax);
      } else if (k == "config") {
        d.ForEachItem(val, [&](size_t, JsonValue item) {
          spec.config.push_back(DecodeConfigEntry<DeviceClaimConfiguration>(d, item, true, nullptr));
        });
        CheckMaxItems(d, spec.config.size(), kDeviceConfigMax);
      }
    });
    if (!d.ok()) return;
    for (size_t i = 0; i < spec.constraints.size(); ++i) {
      CheckRequestRefs(d, spec, "constraints", i, spec.constraints[i].requests);
    }
    for (size_t i = 0; i < spec.config.size(); ++i) {
      CheckRequestRefs(d, spec, "config", i, spec.config[i].requests);
    }
  });
  return spec;
}

bool ResourceClaim::IsReservedFor(std::string_view uid) const {
  return std::any_of(status.reserved_for.begin(), status.reserved_for.end(),
                     [&](const ResourceClaimConsumerReference& r) { return r.uid == uid; });
}

ResourceClaim DecodeResourceClaim(Decoder& d, JsonValue root) {
  ResourceClaim claim;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &claim.meta);
    } else if (key == "spec") {
      claim.spec = DecodeResourceClaimSpec(d, value);
    } else if (key == "status") {
      claim.status = DecodeClaimStatus(d, value);
    }
  });
  RequireField(d, !claim.meta.name.empty() || !claim.meta.uid.empty(), "metadata.name");
  return claim;
}

absl::StatusOr<ResourceClaim> DecodeResourceClaim(JsonValue root) {
  return DecodeTopLevel<ResourceClaim>("ResourceClaim", root, &DecodeResourceClaim);
}

ResourceClaimTemplate DecodeResourceClaimTemplate(Decoder& d, JsonValue root) {
  ResourceClaimTemplate t;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &t.meta);
    } else if (key == "spec") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "metadata") {
          DecodeObjectMeta(d, val, &t.spec.metadata);
        } else if (k == "spec") {
          t.spec.spec = DecodeResourceClaimSpec(d, val);
        }
      });
    }
  });
  RequireField(d, !t.meta.name.empty(), "metadata.name");
  return t;
}

absl::StatusOr<ResourceClaimTemplate> DecodeResourceClaimTemplate(JsonValue root) {
  return DecodeTopLevel<ResourceClaimTemplate>("ResourceClaimTemplate", root,
                                               &DecodeResourceClaimTemplate);
}

bool DeviceTaintSelector::Matches(Symbol device_driver, Symbol device_pool,
                                  Symbol device_name) const {
  return (driver.empty() || driver == device_driver) && (pool.empty() || pool == device_pool) &&
         (device.empty() || device == device_name);
}

DeviceTaintRule DecodeDeviceTaintRule(Decoder& d, JsonValue root) {
  DeviceTaintRule rule;
  bool has_taint = false;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &rule.meta);
    } else if (key == "spec") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "deviceSelector") {
          if (val.is_null()) return;
          DeviceTaintSelector sel;
          d.ForEachField(val, [&](std::string_view f, JsonValue fv) {
            if (f == "driver") {
              sel.driver = d.Sym(fv);
              if (!sel.driver.empty()) CheckDriverName(d, sel.driver.view());
            } else if (f == "pool") {
              sel.pool = d.Sym(fv);
              if (!sel.pool.empty()) CheckPoolName(d, sel.pool.view());
            } else if (f == "device") {
              sel.device = d.Sym(fv);
            }
          });
          rule.spec.device_selector = sel;
        } else if (k == "taint") {
          if (val.is_null()) return;
          rule.spec.taint = DecodeDeviceTaint(d, val);
          has_taint = true;
        }
      });
      if (d.ok()) {
        RequireField(d, has_taint, "taint");
      }
    } else if (key == "status") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "conditions") rule.status.conditions = DecodeConditions(d, val);
      });
    }
  });
  RequireField(d, !rule.meta.name.empty(), "metadata.name");
  if (d.ok() && !has_taint) d.FailAt("spec", "Required value");
  return rule;
}

absl::StatusOr<DeviceTaintRule> DecodeDeviceTaintRule(JsonValue root) {
  return DecodeTopLevel<DeviceTaintRule>("DeviceTaintRule", root, &DecodeDeviceTaintRule);
}

}  // namespace gantry::api
