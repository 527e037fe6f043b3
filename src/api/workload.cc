#include "src/api/workload.h"

#include <algorithm>

#include "gantry/util/strings.h"

namespace gantry::api {
namespace {

// Decodes a `{basic: {}}` / `{gang: {<count_field>: N}}` union; returns the
// kind and stores the gang count in `*count`.
GroupPolicyKind DecodePolicyUnion(Decoder& d, JsonValue v, std::string_view count_field,
                                  int32_t* count) {
  bool basic = false;
  bool gang = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "basic") {
      basic = !value.is_null();
      d.ForEachField(value, [](std::string_view, JsonValue) {});
    } else if (key == "gang") {
      gang = !value.is_null();
      bool has_count = false;
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == count_field && !val.is_null()) {
          *count = static_cast<int32_t>(d.IntInRange(val, 1, INT32_MAX));
          has_count = true;
        }
      });
      if (gang) RequireField(d, has_count, count_field);
    }
  });
  if (d.ok() && basic == gang) {
    d.Fail(basic ? "Invalid value: must specify exactly one of: `basic`, `gang`"
                 : "Required value: must specify one of: `basic`, `gang`");
  }
  if (!gang) *count = 1;
  return gang ? GroupPolicyKind::kGang : GroupPolicyKind::kBasic;
}

PodGroupSchedulingPolicy DecodePodGroupPolicy(Decoder& d, JsonValue v) {
  PodGroupSchedulingPolicy p;
  p.kind = DecodePolicyUnion(d, v, "minCount", &p.min_count);
  return p;
}

CompositeSchedulingPolicy DecodeCompositePolicy(Decoder& d, JsonValue v) {
  CompositeSchedulingPolicy p;
  p.kind = DecodePolicyUnion(d, v, "minGroupCount", &p.min_group_count);
  return p;
}

SchedulingConstraints DecodeSchedulingConstraints(Decoder& d, JsonValue v) {
  SchedulingConstraints c;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key != "topology") return;
    d.ForEachItem(value, [&](size_t, JsonValue item) {
      TopologyConstraint t;
      d.ForEachField(item, [&](std::string_view k, JsonValue val) {
        if (k == "key") t.key = d.Sym(val);
      });
      RequireField(d, !t.key.empty(), "key");
      c.topology.push_back(t);
    });
    CheckMaxItems(d, c.topology.size(), kMaxTopologyConstraints);
  });
  return c;
}

DisruptionMode DecodeDisruptionMode(Decoder& d, JsonValue v) {
  bool single = false;
  bool all = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "single") single = !value.is_null();
    if (key == "all") all = !value.is_null();
  });
  if (d.ok() && single && all) d.Fail("Invalid value: must specify exactly one of: `single`, `all`");
  return all ? DisruptionMode::kAll : DisruptionMode::kSingle;
}

std::vector<PodGroupResourceClaim> DecodePodGroupResourceClaims(Decoder& d, JsonValue v) {
  std::vector<PodGroupResourceClaim> out;
  d.ForEachItem(v, [&](size_t, JsonValue item) {
    PodGroupResourceClaim c;
    d.ForEachField(item, [&](std::string_view k, JsonValue val) {
      if (k == "name") {
        c.name = d.Sym(val);
      } else if (k == "resourceClaimName") {
        c.resource_claim_name = std::string(d.String(val));
      } else if (k == "resourceClaimTemplateName") {
        c.resource_claim_template_name = std::string(d.String(val));
      }
    });
    RequireField(d, !c.name.empty(), "name");
    if (d.ok() && c.resource_claim_name.empty() == c.resource_claim_template_name.empty()) {
      d.Fail("Invalid value: must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`");
    }
    for (const PodGroupResourceClaim& other : out) {
      if (d.ok() && other.name == c.name) {
        d.FailAt("name", gantry::StrCat("Duplicate value: \"", c.name.view(), "\""));
      }
    }
    out.push_back(std::move(c));
  });
  CheckMaxItems(d, out.size(), kMaxPodGroupResourceClaims);
  return out;
}

std::optional<int32_t> DecodePriority(Decoder& d, JsonValue v) {
  if (v.is_null()) return std::nullopt;
  return static_cast<int32_t>(d.IntInRange(v, INT32_MIN, kMaxUserPriority));
}

std::optional<PreemptionPolicy> DecodeOptionalPreemptionPolicy(Decoder& d, JsonValue v) {
  if (v.is_null()) return std::nullopt;
  return DecodePreemptionPolicy(d, v);
}

// Handles one key of the fields PodGroupTemplate and PodGroupSpec share.
// Returns false if `key` is not one of them. Sets `*has_policy` when the
// required schedulingPolicy is seen.
bool DecodePolicyField(Decoder& d, std::string_view key, JsonValue value,
                       PodGroupPolicyFields* out, bool* has_policy) {
  if (key == "schedulingPolicy") {
    if (!value.is_null()) {
      out->scheduling_policy = DecodePodGroupPolicy(d, value);
      *has_policy = true;
    }
  } else if (key == "schedulingConstraints") {
    out->scheduling_constraints = DecodeSchedulingConstraints(d, value);
  } else if (key == "resourceClaims") {
    out->resource_claims = DecodePodGroupResourceClaims(d, value);
  } else if (key == "disruptionMode") {
    out->disruption_mode = DecodeDisruptionMode(d, value);
  } else if (key == "priorityClassName") {
    out->priority_class_name = d.Sym(value);
  } else if (key == "priority") {
    out->priority = DecodePriority(d, value);
  } else if (key == "preemptionPolicy") {
    out->preemption_policy = DecodeOptionalPreemptionPolicy(d, value);
  } else {
    return false;
  }
  return true;
}

void CheckTemplateName(Decoder& d, Symbol name) {
  if (!d.ok()) return;
  if (name.empty()) {
    d.FailAt("name", "Required value");
  } else if (!IsDnsLabel(name.view())) {
    d.FailAt("name", gantry::StrCat("Invalid value: \"", name.view(),
                                  "\": must be a valid DNS label (RFC 1123)"));
  }
}

PodGroupTemplate DecodePodGroupTemplate(Decoder& d, JsonValue v) {
  PodGroupTemplate t;
  bool has_policy = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "name") {
      t.name = d.Sym(value);
    } else {
      DecodePolicyField(d, key, value, &t, &has_policy);
    }
  });
  CheckTemplateName(d, t.name);
  RequireField(d, has_policy, "schedulingPolicy");
  return t;
}

// Checks that names in `names` are unique; reports at `list[i].name`.
template <typename T>
void CheckUniqueNames(Decoder& d, std::string_view list, const std::vector<T>& items) {
  for (size_t i = 0; i < items.size() && d.ok(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (items[j].name == items[i].name) {
        Decoder::Field f1(d, list);
        Decoder::Field f2(d, i);
        d.FailAt("name", gantry::StrCat("Duplicate value: \"", items[i].name.view(), "\""));
        return;
      }
    }
  }
}

std::vector<PodGroupTemplate> DecodePodGroupTemplates(Decoder& d, JsonValue v) {
  std::vector<PodGroupTemplate> out;
  d.ForEachItem(v, [&](size_t, JsonValue item) { out.push_back(DecodePodGroupTemplate(d, item)); });
  CheckMaxItems(d, out.size(), kWorkloadMaxPodGroupTemplates);
  return out;
}

CompositePodGroupTemplate DecodeCompositeTemplate(Decoder& d, JsonValue v, size_t depth);

std::vector<CompositePodGroupTemplate> DecodeCompositeTemplates(Decoder& d, JsonValue v,
                                                                size_t depth) {
  std::vector<CompositePodGroupTemplate> out;
  if (d.ok() && depth > kWorkloadMaxTreeDepth && !v.is_null()) {
    d.Fail(gantry::StrCat("Invalid value: the pod group tree must be at most ",
                        kWorkloadMaxTreeDepth, " levels deep"));
    return out;
  }
  d.ForEachItem(v, [&](size_t, JsonValue item) {
    out.push_back(DecodeCompositeTemplate(d, item, depth));
  });
  CheckMaxItems(d, out.size(), kWorkloadMaxPodGroupTemplates);
  return out;
}

// `depth` is the level of this template (1 for top-level composites).
CompositePodGroupTemplate DecodeCompositeTemplate(Decoder& d, JsonValue v, size_t depth) {
  CompositePodGroupTemplate t;
  bool has_policy = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "name") {
      t.name = d.Sym(value);
    } else if (key == "schedulingPolicy") {
      if (!value.is_null()) {
        t.scheduling_policy = DecodeCompositePolicy(d, value);
        has_policy = true;
      }
    } else if (key == "schedulingConstraints") {
      t.scheduling_constraints = DecodeSchedulingConstraints(d, value);
    } else if (key == "disruptionMode") {
      t.disruption_mode = DecodeDisruptionMode(d, value);
    } else if (key == "priorityClassName") {
      t.priority_class_name = d.Sym(value);
    } else if (key == "priority") {
      t.priority = DecodePriority(d, value);
    } else if (key == "preemptionPolicy") {
      t.preemption_policy = DecodeOptionalPreemptionPolicy(d, value);
    } else if (key == "podGroupTemplates") {
      if (d.ok() && depth + 1 > kWorkloadMaxTreeDepth && !value.is_null()) {
        d.Fail(gantry::StrCat("Invalid value: the pod group tree must be at most ",
                            kWorkloadMaxTreeDepth, " levels deep"));
      }
      t.pod_group_templates = DecodePodGroupTemplates(d, value);
    } else if (key == "compositePodGroupTemplates") {
      t.composite_pod_group_templates = DecodeCompositeTemplates(d, value, depth + 1);
    }
  });
  CheckTemplateName(d, t.name);
  RequireField(d, has_policy, "schedulingPolicy");
  if (d.ok() && t.pod_group_templates.empty() == t.composite_pod_group_templates.empty()) {
    d.Fail("Invalid value: must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`");
  }
  CheckUniqueNames(d, "podGroupTemplates", t.pod_group_templates);
  CheckUniqueNames(d, "compositePodGroupTemplates", t.composite_pod_group_templates);
  return t;
}

void DecodeParentName(Decoder& d, JsonValue v, std::string* out) {
  *out = std::string(d.String(v));
  if (d.ok() && !out->empty() && !IsDnsSubdomain(*out)) {
    d.Fail(gantry::StrCat("Invalid value: \"", *out, "\": must be a valid DNS subdomain"));
  }
}

WorkloadReference DecodeWorkloadRef(Decoder& d, JsonValue v, std::string_view template_field) {
  WorkloadReference ref;
  d.ForEachField(v, [&](std::string_view k, JsonValue val) {
    if (k == "workloadName") {
      ref.workload_name = d.Sym(val);
    } else if (k == template_field) {
      ref.template_name = d.Sym(val);
    }
  });
  RequireField(d, !ref.workload_name.empty(), "workloadName");
  RequireField(d, !ref.template_name.empty(), template_field);
  return ref;
}

}  // namespace

std::string_view DisruptionModeName(DisruptionMode m) {
  return m == DisruptionMode::kAll ? "All" : "Single";
}

const PodGroupTemplate* Workload::FindPodGroupTemplate(std::string_view name) const {
  for (const PodGroupTemplate& t : spec.pod_group_templates) {
    if (t.name.view() == name) return &t;
  }
  return nullptr;
}

Workload DecodeWorkload(Decoder& d, JsonValue root) {
  Workload w;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &w.meta);
    } else if (key == "spec") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "controllerRef") {
          if (val.is_null()) return;
          TypedLocalObjectReference ref;
          d.ForEachField(val, [&](std::string_view f, JsonValue fv) {
            if (f == "apiGroup") {
              ref.api_group = d.Sym(fv);
            } else if (f == "kind") {
              ref.kind = d.Sym(fv);
            } else if (f == "name") {
              ref.name = std::string(d.String(fv));
            }
          });
          RequireField(d, !ref.kind.empty(), "kind");
          RequireField(d, !ref.name.empty(), "name");
          w.spec.controller_ref = std::move(ref);
        } else if (k == "podGroupTemplates") {
          w.spec.pod_group_templates = DecodePodGroupTemplates(d, val);
        } else if (k == "compositePodGroupTemplates") {
          w.spec.composite_pod_group_templates = DecodeCompositeTemplates(d, val, 1);
        }
      });
      if (!d.ok()) return;
      if (w.spec.pod_group_templates.empty() == w.spec.composite_pod_group_templates.empty()) {
        d.Fail(w.spec.pod_group_templates.empty()
                   ? "Required value: must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`"
                   : "Invalid value: must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`");
      }
      CheckUniqueNames(d, "podGroupTemplates", w.spec.pod_group_templates);
      CheckUniqueNames(d, "compositePodGroupTemplates", w.spec.composite_pod_group_templates);
    }
  });
  RequireField(d, !w.meta.name.empty(), "metadata.name");
  if (d.ok() && w.spec.pod_group_templates.empty() && w.spec.composite_pod_group_templates.empty()) {
    d.FailAt("spec", "Required value: must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`");
  }
  return w;
}

absl::StatusOr<Workload> DecodeWorkload(JsonValue root) {
  return DecodeTopLevel<Workload>("Workload", root, &DecodeWorkload);
}

PodGroup DecodePodGroup(Decoder& d, JsonValue root) {
  PodGroup pg;
  bool has_policy = false;
  bool has_spec = false;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &pg.meta);
    } else if (key == "spec") {
      has_spec = true;
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "parentCompositePodGroupName") {
          DecodeParentName(d, val, &pg.spec.parent_composite_pod_group_name);
        } else if (k == "workloadRef") {
          if (!val.is_null()) pg.spec.workload_ref = DecodeWorkloadRef(d, val, "templateName");
        } else if (k == "podGroupTemplateRef") {
          // v1alpha2: {workload: {workloadName, podGroupTemplateName}}.
          d.ForEachField(val, [&](std::string_view f, JsonValue fv) {
            if (f == "workload" && !fv.is_null()) {
              pg.spec.workload_ref = DecodeWorkloadRef(d, fv, "podGroupTemplateName");
            }
          });
        } else {
          DecodePolicyField(d, k, val, &pg.spec, &has_policy);
        }
      });
      if (d.ok()) {
        RequireField(d, has_policy, "schedulingPolicy");
        if (d.ok() && !pg.spec.parent_composite_pod_group_name.empty() && !pg.spec.workload_ref) {
          d.FailAt("workloadRef", "Required value: must be set when `parentCompositePodGroupName` is set");
        }
      }
    } else if (key == "status") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "conditions") {
          pg.status.conditions = DecodeConditions(d, val);
        } else if (k == "resourceClaimStatuses") {
          d.ForEachItem(val, [&](size_t, JsonValue item) {
            PodGroupResourceClaimStatus s;
            d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
              if (f == "name") {
                s.name = d.Sym(fv);
              } else if (f == "resourceClaimName") {
                s.resource_claim_name = std::string(d.String(fv));
              }
            });
            RequireField(d, !s.name.empty(), "name");
            pg.status.resource_claim_statuses.push_back(std::move(s));
          });
        }
      });
    }
  });
  RequireField(d, !pg.meta.name.empty(), "metadata.name");
  RequireField(d, has_spec, "spec");
  return pg;
}

absl::StatusOr<PodGroup> DecodePodGroup(JsonValue root) {
  return DecodeTopLevel<PodGroup>("PodGroup", root, &DecodePodGroup);
}

CompositePodGroup DecodeCompositePodGroup(Decoder& d, JsonValue root) {
  CompositePodGroup cpg;
  auto& spec = cpg.spec;
  bool has_policy = false;
  bool has_ref = false;
  bool has_spec = false;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &cpg.meta);
    } else if (key == "spec") {
      has_spec = true;
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "parentCompositePodGroupName") {
          DecodeParentName(d, val, &spec.parent_composite_pod_group_name);
        } else if (k == "workloadRef") {
          if (val.is_null()) return;
          spec.workload_ref = DecodeWorkloadRef(d, val, "templateName");
          has_ref = true;
        } else if (k == "schedulingPolicy") {
          if (val.is_null()) return;
          spec.scheduling_policy = DecodeCompositePolicy(d, val);
          has_policy = true;
        } else if (k == "schedulingConstraints") {
          spec.scheduling_constraints = DecodeSchedulingConstraints(d, val);
        } else if (k == "disruptionMode") {
          spec.disruption_mode = DecodeDisruptionMode(d, val);
        } else if (k == "priorityClassName") {
          spec.priority_class_name = d.Sym(val);
        } else if (k == "priority") {
          spec.priority = DecodePriority(d, val);
        } else if (k == "preemptionPolicy") {
          spec.preemption_policy = DecodeOptionalPreemptionPolicy(d, val);
        }
      });
      if (d.ok()) {
        RequireField(d, has_ref, "workloadRef");
        RequireField(d, has_policy, "schedulingPolicy");
      }
    } else if (key == "status") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "conditions") cpg.status.conditions = DecodeConditions(d, val);
      });
    }
  });
  RequireField(d, !cpg.meta.name.empty(), "metadata.name");
  RequireField(d, has_spec, "spec");
  return cpg;
}

absl::StatusOr<CompositePodGroup> DecodeCompositePodGroup(JsonValue root) {
  return DecodeTopLevel<CompositePodGroup>("CompositePodGroup", root, &DecodeCompositePodGroup);
}

std::string_view CoschedulingPhaseName(CoschedulingPhase p) {
  switch (p) {
    case CoschedulingPhase::kNone: return "";
    case CoschedulingPhase::kPending: return "Pending";
    case CoschedulingPhase::kRunning: return "Running";
    case CoschedulingPhase::kScheduling: return "Scheduling";
    case CoschedulingPhase::kUnknown: return "Unknown";
    case CoschedulingPhase::kFinished: return "Finished";
    case CoschedulingPhase::kFailed: return "Failed";
  }
  return "";
}

CoschedulingPodGroup DecodeCoschedulingPodGroup(Decoder& d, JsonValue root) {
  CoschedulingPodGroup pg;
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &pg.meta);
    } else if (key == "spec") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "minMember") {
          pg.spec.min_member = static_cast<int32_t>(d.IntInRange(val, 0, INT32_MAX));
        } else if (k == "minResources") {
          pg.spec.min_resources = DecodeResourceList(d, val);
        } else if (k == "scheduleTimeoutSeconds") {
          if (!val.is_null()) {
            pg.spec.schedule_timeout_seconds = static_cast<int32_t>(d.IntInRange(val, 0, INT32_MAX));
          }
        }
      });
    } else if (key == "status") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "phase") {
          std::string_view s = d.String(val);
          static constexpr CoschedulingPhase kPhases[] = {
              CoschedulingPhase::kPending,  CoschedulingPhase::kRunning,
              CoschedulingPhase::kScheduling, CoschedulingPhase::kUnknown,
              CoschedulingPhase::kFinished, CoschedulingPhase::kFailed};
          pg.status.phase = CoschedulingPhase::kNone;
          bool found = s.empty();
          for (CoschedulingPhase p : kPhases) {
            if (CoschedulingPhaseName(p) == s) {
              pg.status.phase = p;
              found = true;
            }
          }
          if (!found && d.ok()) {
            d.Fail(gantry::StrCat("Unsupported value: \"", s,
                                "\": supported values: \"Pending\", \"Running\", \"Scheduling\", "
                                "\"Unknown\", \"Finished\", \"Failed\""));
          }
        } else if (k == "occupiedBy") {
          pg.status.occupied_by = std::string(d.String(val));
        } else if (k == "running") {
          pg.status.running = static_cast<int32_t>(d.IntInRange(val, 0, INT32_MAX));
        } else if (k == "succeeded") {
          pg.status.succeeded = static_cast<int32_t>(d.IntInRange(val, 0, INT32_MAX));
        } else if (k == "failed") {
          pg.status.failed = static_cast<int32_t>(d.IntInRange(val, 0, INT32_MAX));
        } else if (k == "scheduleStartTime") {
          pg.status.schedule_start_micros = d.TimeMicros(val);
        }
      });
    }
  });
  RequireField(d, !pg.meta.name.empty(), "metadata.name");
  return pg;
}

absl::StatusOr<CoschedulingPodGroup> DecodeCoschedulingPodGroup(JsonValue root) {
  return DecodeTopLevel<CoschedulingPodGroup>("PodGroup.scheduling.x-k8s.io", root,
                                              &DecodeCoschedulingPodGroup);
}

}  // namespace gantry::api
