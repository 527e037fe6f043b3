#include "src/api/pod.h"

#include <algorithm>
#include <optional>

#include "gantry/util/strings.h"

namespace gantry::api {
namespace {

InclusionPolicy DecodeInclusionPolicy(Decoder& d, JsonValue v) {
  std::string_view s = d.String(v);
  if (s == "Honor") return InclusionPolicy::kHonor;
  if (s == "Ignore") return InclusionPolicy::kIgnore;
  if (d.ok())
    d.Fail(
        gantry::StrCat("Unsupported value: \"", s, "\": supported values: \"Honor\", \"Ignore\""));
  return InclusionPolicy::kHonor;
}

PodAffinityTerm DecodePodAffinityTerm(Decoder& d, JsonValue v) {
  PodAffinityTerm t;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "labelSelector") {
      if (!value.is_null()) t.label_selector = DecodeLabelSelector(d, value);
    } else if (key == "namespaces") {
      t.namespaces = d.SymbolList(value);
    } else if (key == "namespaceSelector") {
      if (!value.is_null()) t.namespace_selector = DecodeLabelSelector(d, value);
    } else if (key == "topologyKey") {
      t.topology_key = d.Sym(value);
    } else if (key == "matchLabelKeys") {
      t.match_label_keys = d.SymbolList(value);
    } else if (key == "mismatchLabelKeys") {
      t.mismatch_label_keys = d.SymbolList(value);
    }
  });
  if (d.ok() && t.topology_key.empty()) d.FailAt("topologyKey", "Required value: can not be empty");
  return t;
}

std::vector<PodAffinityTerm> DecodeTerms(Decoder& d, JsonValue v) {
  std::vector<PodAffinityTerm> out;
  d.ForEachItem(v, [&](size_t, JsonValue item) { out.push_back(DecodePodAffinityTerm(d, item)); });
  return out;
}

std::vector<WeightedPodAffinityTerm> DecodeWeightedTerms(Decoder& d, JsonValue v) {
  std::vector<WeightedPodAffinityTerm> out;
  d.ForEachItem(v, [&](size_t, JsonValue item) {
    WeightedPodAffinityTerm w;
    d.ForEachField(item, [&](std::string_view key, JsonValue value) {
      if (key == "weight") {
        w.weight = static_cast<int32_t>(d.IntInRange(value, 1, 100));
      } else if (key == "podAffinityTerm") {
        w.term = DecodePodAffinityTerm(d, value);
      }
    });
    out.push_back(std::move(w));
  });
  return out;
}

void DecodePodAffinityBlock(Decoder& d, JsonValue v, std::vector<PodAffinityTerm>* required,
                            std::vector<WeightedPodAffinityTerm>* preferred) {
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
      *required = DecodeTerms(d, value);
    } else if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      *preferred = DecodeWeightedTerms(d, value);
    }
  });
}

std::shared_ptr<const Affinity> DecodeAffinity(Decoder& d, JsonValue v) {
  auto a = std::make_shared<Affinity>();
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "nodeAffinity") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
          if (!val.is_null()) a->node_required = DecodeNodeSelector(d, val);
        } else if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
          d.ForEachItem(val, [&](size_t, JsonValue item) {
            PreferredSchedulingTerm term;
            d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
              if (f == "weight") {
                term.weight = static_cast<int32_t>(d.IntInRange(fv, 1, 100));
              } else if (f == "preference") {
                term.preference = DecodeNodeSelectorTerm(d, fv);
              }
            });
            a->node_preferred.push_back(std::move(term));
          });
        }
      });
    } else if (key == "podAffinity") {
      DecodePodAffinityBlock(d, value, &a->pod_affinity_required, &a->pod_affinity_preferred);
    } else if (key == "podAntiAffinity") {
      DecodePodAffinityBlock(d, value, &a->pod_anti_affinity_required,
                             &a->pod_anti_affinity_preferred);
    }
  });
  if (!a->node_required && a->node_preferred.empty() && !a->HasPodAffinity()) return nullptr;
  return a;
}

TopologySpreadConstraint DecodeSpread(Decoder& d, JsonValue v) {
  TopologySpreadConstraint c;
  bool has_skew = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "maxSkew") {
      c.max_skew = static_cast<int32_t>(d.IntInRange(value, 1, INT32_MAX));
      has_skew = true;
    } else if (key == "topologyKey") {
      c.topology_key = d.Sym(value);
    } else if (key == "whenUnsatisfiable") {
      std::string_view s = d.String(value);
      if (s == "DoNotSchedule") {
        c.when_unsatisfiable = UnsatisfiableAction::kDoNotSchedule;
      } else if (s == "ScheduleAnyway") {
        c.when_unsatisfiable = UnsatisfiableAction::kScheduleAnyway;
      } else if (d.ok()) {
        d.Fail(gantry::StrCat("Unsupported value: \"", s,
                              "\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""));
      }
    } else if (key == "labelSelector") {
      if (!value.is_null()) c.label_selector = DecodeLabelSelector(d, value);
    } else if (key == "minDomains") {
      if (!value.is_null()) c.min_domains = static_cast<int32_t>(d.IntInRange(value, 1, INT32_MAX));
    } else if (key == "nodeAffinityPolicy") {
      if (!value.is_null()) c.node_affinity_policy = DecodeInclusionPolicy(d, value);
    } else if (key == "nodeTaintsPolicy") {
      if (!value.is_null()) c.node_taints_policy = DecodeInclusionPolicy(d, value);
    } else if (key == "matchLabelKeys") {
      c.match_label_keys = d.SymbolList(value);
    }
  });
  if (d.ok() && !has_skew) d.FailAt("maxSkew", "Required value");
  if (d.ok() && c.topology_key.empty()) d.FailAt("topologyKey", "Required value: can not be empty");
  if (d.ok() && c.min_domains && c.when_unsatisfiable != UnsatisfiableAction::kDoNotSchedule) {
    d.FailAt("minDomains",
             "Invalid value: can only use minDomains if whenUnsatisfiable=DoNotSchedule");
  }
  return c;
}

// Reads one container: its requests (limits default missing requests, as
// API server defaulting does), host ports and image.
ContainerResources DecodeContainer(Decoder& d, JsonValue v, Pod* pod, bool init) {
  ContainerResources c;
  ResourceList limits;
  bool has_requests = false;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "name") {
      c.name = std::string(d.String(value));
    } else if (key == "resources") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "requests") {
          c.requests = DecodeResourceList(d, val);
          has_requests = true;
        } else if (k == "limits") {
          limits = DecodeResourceList(d, val);
        }
      });
    } else if (key == "image") {
      std::string_view image = d.String(value);
      if (!image.empty()) pod->images.push_back(Symbol::Intern(image));
    } else if (key == "restartPolicy") {
      // Only an init container's `Always` matters to scheduling (a sidecar
      // runs for the pod's lifetime); other values, and any value on a
      // regular container, do not change the pod's requests.
      std::string_view p = d.String(value);
      c.restartable_sidecar = init && p == "Always";
    } else if (key == "ports") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        HostPort hp;
        d.ForEachField(item, [&](std::string_view f, JsonValue fv) {
          if (f == "hostPort") {
            hp.port = static_cast<int32_t>(d.IntInRange(fv, 0, 65535));
          } else if (f == "hostIP") {
            hp.host_ip = d.Sym(fv);
          } else if (f == "protocol") {
            hp.protocol = d.Sym(fv);
          }
        });
        if (hp.port > 0) {
          if (hp.protocol.empty()) hp.protocol = Symbol::Intern("TCP");
          pod->host_ports.push_back(hp);
        }
      });
    }
  });
  (void)has_requests;
  for (const ResourceAmount& r : limits.items()) {
    bool present = false;
    for (const ResourceAmount& q : c.requests.items()) present |= q.name == r.name;
    if (!present) c.requests.Set(r.name, r.value);
  }
  return c;
}

// The containers' requests that DRA may serve (IsDraExtendedResourceName),
// indexed as upstream names the requests of its extended-resource claim:
// container i of initContainers + containers, position j of the resource
// among the container's request names in byte order.
std::vector<ContainerExtendedRequest> ExtendedRequests(
    const std::vector<ContainerResources>& init_containers,
    const std::vector<ContainerResources>& containers) {
  std::vector<ContainerExtendedRequest> out;
  int32_t index = 0;
  for (const std::vector<ContainerResources>* list : {&init_containers, &containers}) {
    const bool init = list == &init_containers;
    for (const ContainerResources& c : *list) {
      std::vector<std::string_view> names;
      for (const ResourceAmount& r : c.requests.items()) names.push_back(r.name.view());
      std::sort(names.begin(), names.end());
      for (size_t j = 0; j < names.size(); ++j) {
        if (!IsDraExtendedResourceName(names[j])) continue;
        const Symbol resource = Symbol::Intern(names[j]);
        const int64_t value = c.requests.Get(resource);
        if (value <= 0) continue;
        out.push_back(ContainerExtendedRequest{index, static_cast<int32_t>(j),
                                               init && !c.restartable_sidecar, c.name, resource,
                                               value});
      }
      ++index;
    }
  }
  return out;
}

PodPhase DecodePhase(Decoder& d, JsonValue v) {
  std::string_view s = d.String(v);
  if (s.empty() || s == "Pending") return PodPhase::kPending;
  if (s == "Running") return PodPhase::kRunning;
  if (s == "Succeeded") return PodPhase::kSucceeded;
  if (s == "Failed") return PodPhase::kFailed;
  // A phase newer than Gantry reads as Unknown: the pod is not terminal and
  // keeps counting on its node.
  return PodPhase::kUnknown;
}

// The pod's effective requests: the container formula, then pod-level
// requests for the resources they name, then overhead.
ResourceList FoldRequests(const std::vector<ContainerResources>& containers,
                          const std::vector<ContainerResources>& init_containers,
                          const ResourceList& pod_level, const ResourceList& overhead) {
  ResourceList folded = ComputeEffectiveRequests(containers, init_containers, ResourceList());
  for (const ResourceAmount& r : pod_level.items()) folded.Set(r.name, r.value);
  folded.AddAll(overhead);
  return folded;
}

void DecodeSpec(Decoder& d, JsonValue v, Pod* pod) {
  std::vector<ContainerResources> containers, init_containers;
  ResourceList overhead;
  ResourceList pod_level;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "schedulerName") {
      pod->scheduler_name = d.Sym(value);
    } else if (key == "nodeName") {
      pod->node_name = d.Sym(value);
    } else if (key == "priority") {
      if (!value.is_null()) {
        pod->priority = static_cast<int32_t>(d.IntInRange(value, INT32_MIN, INT32_MAX));
      }
    } else if (key == "priorityClassName") {
      pod->priority_class_name = d.Sym(value);
    } else if (key == "preemptionPolicy") {
      std::string_view s = d.String(value);
      if (s == "PreemptLowerPriority") {
        pod->preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
      } else if (s == "Never") {
        pod->preemption_policy = PreemptionPolicy::kNever;
      } else if (!s.empty() && d.ok()) {
        d.Fail(gantry::StrCat("Unsupported value: \"", s,
                              "\": supported values: \"Never\", \"PreemptLowerPriority\""));
      }
    } else if (key == "containers") {
      d.ForEachItem(value, kMaxContainers, [&](size_t, JsonValue item) {
        containers.push_back(DecodeContainer(d, item, pod, false));
      });
    } else if (key == "initContainers") {
      d.ForEachItem(value, kMaxContainers, [&](size_t, JsonValue item) {
        init_containers.push_back(DecodeContainer(d, item, pod, true));
      });
    } else if (key == "overhead") {
      overhead = DecodeResourceList(d, value);
    } else if (key == "resources") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "requests") {
          pod_level = DecodeResourceList(d, val);
          pod->has_pod_level_resources = true;
        }
      });
    } else if (key == "nodeSelector") {
      pod->node_selector = DecodeLabels(d, value);
    } else if (key == "affinity") {
      pod->affinity = DecodeAffinity(d, value);
    } else if (key == "tolerations") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        pod->tolerations.push_back(DecodeToleration(d, item));
      });
    } else if (key == "topologySpreadConstraints") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        pod->topology_spread_constraints.push_back(DecodeSpread(d, item));
      });
    } else if (key == "schedulingGates") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        Symbol name;
        d.ForEachField(item, [&](std::string_view k, JsonValue val) {
          if (k == "name") name = d.Sym(val);
        });
        if (d.ok() && name.empty()) d.FailAt("name", "Required value");
        pod->scheduling_gates.push_back(name);
      });
    } else if (key == "resourceClaims") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        PodResourceClaim c;
        d.ForEachField(item, [&](std::string_view k, JsonValue val) {
          if (k == "name") {
            c.name = d.Sym(val);
          } else if (k == "resourceClaimName") {
            c.resource_claim_name = std::string(d.String(val));
          } else if (k == "resourceClaimTemplateName") {
            c.resource_claim_template_name = std::string(d.String(val));
          }
        });
        if (d.ok() && c.name.empty()) d.FailAt("name", "Required value");
        if (d.ok() && c.resource_claim_name.empty() == c.resource_claim_template_name.empty()) {
          d.Fail(
              "Invalid value: must specify one of: `resourceClaimName`, "
              "`resourceClaimTemplateName`");
        }
        pod->resource_claims.push_back(std::move(c));
      });
    } else if (key == "schedulingGroup") {
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "podGroupName") pod->pod_group_name = d.Sym(val);
      });
    } else if (key == "volumes") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        std::string volume_name;
        bool ephemeral = false;
        d.ForEachField(item, [&](std::string_view k, JsonValue val) {
          if (k == "name") {
            volume_name = std::string(d.String(val));
          } else if (k == "ephemeral") {
            ephemeral = !val.is_null();
          } else if (k == "persistentVolumeClaim") {
            d.ForEachField(val, [&](std::string_view f, JsonValue fv) {
              if (f == "claimName") pod->pvc_names.emplace_back(d.String(fv));
            });
          }
        });
        if (d.ok() && ephemeral) {
          if (volume_name.empty()) {
            d.FailAt("name", "Required value");
          } else {
            pod->ephemeral_volume_names.push_back(std::move(volume_name));
          }
        }
      });
    } else if (key == "terminationGracePeriodSeconds") {
      if (!value.is_null())
        pod->termination_grace_period_seconds = d.IntInRange(value, 0, INT64_MAX);
    }
  });
  if (!d.ok()) return;
  pod->extended_requests = ExtendedRequests(init_containers, containers);
  pod->requests = FoldRequests(containers, init_containers, pod_level, overhead);
}

void DecodeStatus(Decoder& d, JsonValue v, Pod* pod) {
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (key == "phase") {
      pod->phase = DecodePhase(d, value);
    } else if (key == "nominatedNodeName") {
      pod->nominated_node_name = d.Sym(value);
    } else if (key == "startTime") {
      pod->start_micros = d.TimeMicros(value);
    } else if (key == "conditions") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        PodCondition c;
        d.ForEachField(item, [&](std::string_view k, JsonValue val) {
          if (k == "type") {
            c.type = d.Sym(val);
          } else if (k == "status") {
            c.status = d.Sym(val);
          } else if (k == "reason") {
            c.reason = d.Sym(val);
          }
        });
        pod->conditions.push_back(c);
      });
    } else if (key == "resourceClaimStatuses") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        PodResourceClaimStatus s;
        d.ForEachField(item, [&](std::string_view k, JsonValue val) {
          if (k == "name") {
            s.name = d.Sym(val);
          } else if (k == "resourceClaimName") {
            s.resource_claim_name = std::string(d.String(val));
          }
        });
        pod->resource_claim_statuses.push_back(std::move(s));
      });
    } else if (key == "extendedResourceClaimStatus") {
      if (value.is_null()) return;
      d.ForEachField(value, [&](std::string_view k, JsonValue val) {
        if (k == "resourceClaimName")
          pod->extended_resource_claim_name = std::string(d.String(val));
      });
    }
  });
}

// ---- Bound pods that do not decode whole ----------------------------------
//
// Each piece below is read with a decoder of its own, so that one bad field
// loses only itself.

bool Member(JsonValue v, std::string_view key, JsonValue* out) {
  JsonObject obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return false;
  return obj[key].get(*out) == simdjson::SUCCESS;
}

// spec.nodeName when it is a non-empty string, else empty.
std::string_view BoundNodeName(JsonValue root) {
  JsonValue spec, node;
  std::string_view name;
  if (!Member(root, "spec", &spec) || !Member(spec, "nodeName", &node)) return {};
  if (node.get_string().get(name) != simdjson::SUCCESS) return {};
  return name;
}

// Runs `read(decoder)` on a decoder of its own; returns whether it succeeded.
template <typename F>
bool Attempt(F&& read) {
  Decoder d("Pod");
  read(d);
  return d.ok();
}

// The entries of a resource map whose quantities can be read.
ResourceList SalvageResourceList(JsonValue v) {
  ResourceList out;
  JsonObject obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return out;
  for (auto [key, value] : obj) {
    Decoder d("Pod");
    Quantity q = d.Qty(value);
    if (!d.ok() || q.Sign() < 0) continue;
    const Symbol name = Symbol::Intern(key);
    out.Set(name, ResourceValue(name, q));
  }
  return out;
}

// One container: whole when it decodes, else its readable requests.
ContainerResources SalvageContainer(JsonValue v, bool init, Pod* pod) {
  Pod scratch;
  ContainerResources whole;
  if (Attempt([&](Decoder& d) { whole = DecodeContainer(d, v, &scratch, init); })) {
    pod->host_ports.insert(pod->host_ports.end(), scratch.host_ports.begin(),
                           scratch.host_ports.end());
    pod->images.insert(pod->images.end(), scratch.images.begin(), scratch.images.end());
    return whole;
  }
  ContainerResources c;
  JsonValue x, resources;
  std::string_view s;
  if (Member(v, "name", &x) && x.get_string().get(s) == simdjson::SUCCESS) c.name = std::string(s);
  if (Member(v, "restartPolicy", &x) && x.get_string().get(s) == simdjson::SUCCESS) {
    c.restartable_sidecar = init && s == "Always";
  }
  if (Member(v, "resources", &resources)) {
    if (Member(resources, "requests", &x)) c.requests = SalvageResourceList(x);
    if (Member(resources, "limits", &x)) {
      const ResourceList limits = SalvageResourceList(x);
      for (const ResourceAmount& r : limits.items()) {
        bool present = false;
        for (const ResourceAmount& q : c.requests.items()) present |= q.name == r.name;
        if (!present) c.requests.Set(r.name, r.value);
      }
    }
  }
  return c;
}

std::vector<ContainerResources> SalvageContainers(JsonValue spec, std::string_view key, bool init,
                                                  Pod* pod) {
  std::vector<ContainerResources> out;
  JsonValue list;
  JsonArray arr;
  if (!Member(spec, key, &list) || list.get_array().get(arr) != simdjson::SUCCESS) return out;
  for (JsonValue item : arr) {
    if (out.size() >= kMaxContainers) break;
    out.push_back(SalvageContainer(item, init, pod));
  }
  return out;
}

// What scheduling needs of a bound pod that failed to decode with `error`.
Pod SalvageBoundPod(JsonValue root, std::string error) {
  Pod pod;
  pod.decode_error = std::move(error);
  JsonValue meta, spec, status, x;
  if (Member(root, "metadata", &meta)) {
    ObjectMeta whole;
    if (Attempt([&](Decoder& d) { DecodeObjectMeta(d, meta, &whole); })) {
      pod.meta = std::move(whole);
    } else {
      for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp",
                              "deletionTimestamp", "labels", "ownerReferences"}) {
        if (!Member(meta, key, &x)) continue;
        const std::string_view k = key;
        Attempt([&](Decoder& d) {
          if (k == "name") pod.meta.name = std::string(d.String(x));
          if (k == "namespace") pod.meta.namespace_ = d.Sym(x);
          if (k == "uid") pod.meta.uid = std::string(d.String(x));
          if (k == "resourceVersion") pod.meta.resource_version = std::string(d.String(x));
          if (k == "creationTimestamp") pod.meta.creation_micros = d.TimeMicros(x);
          if (k == "deletionTimestamp" && !x.is_null()) pod.meta.deletion_micros = d.TimeMicros(x);
          if (k == "labels") {
            Labels labels = DecodeLabels(d, x);
            if (d.ok()) pod.meta.labels = std::move(labels);
          }
        });
      }
    }
  }
  if (Member(root, "spec", &spec)) {
    pod.node_name = Symbol::Intern(BoundNodeName(root));
    if (Member(spec, "schedulerName", &x))
      Attempt([&](Decoder& d) { pod.scheduler_name = d.Sym(x); });
    if (Member(spec, "priority", &x) && !x.is_null()) {
      int32_t priority = 0;
      if (Attempt([&](Decoder& d) {
            priority = static_cast<int32_t>(d.IntInRange(x, INT32_MIN, INT32_MAX));
          })) {
        pod.priority = priority;
      }
    }
    if (Member(spec, "priorityClassName", &x))
      Attempt([&](Decoder& d) { pod.priority_class_name = d.Sym(x); });
    std::vector<ContainerResources> containers = SalvageContainers(spec, "containers", false, &pod);
    std::vector<ContainerResources> init_containers =
        SalvageContainers(spec, "initContainers", true, &pod);
    ResourceList overhead, pod_level;
    if (Member(spec, "overhead", &x)) overhead = SalvageResourceList(x);
    JsonValue resources;
    if (Member(spec, "resources", &resources) && Member(resources, "requests", &x)) {
      pod_level = SalvageResourceList(x);
      pod.has_pod_level_resources = true;
    }
    pod.requests = FoldRequests(containers, init_containers, pod_level, overhead);
  }
  if (Member(root, "status", &status)) {
    if (Member(status, "phase", &x)) Attempt([&](Decoder& d) { pod.phase = DecodePhase(d, x); });
    if (Member(status, "startTime", &x))
      Attempt([&](Decoder& d) { pod.start_micros = d.TimeMicros(x); });
  }
  return pod;
}

}  // namespace

std::string_view PodPhaseName(PodPhase p) {
  switch (p) {
    case PodPhase::kPending:
      return "Pending";
    case PodPhase::kRunning:
      return "Running";
    case PodPhase::kSucceeded:
      return "Succeeded";
    case PodPhase::kFailed:
      return "Failed";
    case PodPhase::kUnknown:
      return "Unknown";
  }
  return "Unknown";
}

ResourceList ComputeEffectiveRequests(const std::vector<ContainerResources>& containers,
                                      const std::vector<ContainerResources>& init_containers,
                                      const ResourceList& overhead) {
  ResourceList reqs;
  for (const ContainerResources& c : containers) reqs.AddAll(c.requests);
  ResourceList sidecars;   // running sum of restartable init containers
  ResourceList init_peak;  // max over init containers of their footprint
  for (const ContainerResources& c : init_containers) {
    ResourceList footprint;
    if (c.restartable_sidecar) {
      sidecars.AddAll(c.requests);
      footprint = sidecars;
    } else {
      footprint = c.requests;
      footprint.AddAll(sidecars);
    }
    init_peak.MaxAll(footprint);
  }
  reqs.AddAll(sidecars);
  reqs.MaxAll(init_peak);
  reqs.AddAll(overhead);
  return reqs;
}

namespace {

// metadata, spec and (when `with_status`) status of a pod or pod template.
void DecodePodFields(Decoder& d, JsonValue root, bool with_status, Pod* pod) {
  d.ForEachField(root, [&](std::string_view key, JsonValue value) {
    if (key == "metadata") {
      DecodeObjectMeta(d, value, &pod->meta);
    } else if (key == "spec") {
      DecodeSpec(d, value, pod);
    } else if (key == "status" && with_status) {
      DecodeStatus(d, value, pod);
    }
  });
  if (pod->scheduler_name.empty()) pod->scheduler_name = Symbol::Intern("default-scheduler");
}

}  // namespace

Pod DecodePod(Decoder& d, JsonValue root) {
  Pod pod;
  DecodePodFields(d, root, /*with_status=*/true, &pod);
  if (d.ok() && pod.meta.name.empty()) d.FailAt("metadata", "name: Required value");
  if (!d.ok() && !BoundNodeName(root).empty()) {
    // A bound pod holds room on its node whatever else is wrong with it.
    std::optional<DecodeError> error = d.TakeError(root);
    pod = SalvageBoundPod(root, error ? error->ToString() : std::string("undecodable"));
    if (pod.meta.name.empty()) {
      // Without a name it cannot be tracked (nor deleted) at all.
      d.FailAt("metadata", "name: Required value");
    }
  }
  if (pod.scheduler_name.empty()) pod.scheduler_name = Symbol::Intern("default-scheduler");
  if (pod.meta.namespace_.empty()) pod.meta.namespace_ = Symbol::Intern("default");
  return pod;
}

Pod DecodePodTemplate(Decoder& d, JsonValue root) {
  Pod pod;
  DecodePodFields(d, root, /*with_status=*/false, &pod);
  return pod;
}

absl::StatusOr<Pod> DecodePod(JsonValue root) {
  Decoder d("Pod");
  Pod pod = DecodePod(d, root);
  if (!d.ok()) return d.Finish(root);
  return pod;
}

}  // namespace gantry::api
