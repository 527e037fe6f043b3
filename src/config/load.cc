// Loading KubeSchedulerConfiguration: strict decoding, defaulting, plugin set
// merging, plugin args and validation. See config.h for the semantics.
#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gantry/util/strings.h"
#include "simdjson.h"
#include "src/api/json_convert.h"
#include "src/api/yaml.h"
#include "src/config/config.h"

namespace gantry::config {
namespace {

using api::Decoder;
using api::JsonValue;
using api::PathSegment;
using api::ToNlohmann;
using Path = std::vector<PathSegment>;

// ---- Static tables ---------------------------------------------------------

constexpr std::string_view kMultiPointField = "multiPoint";

// Upstream's default plugin set (v1.34+, DynamicResourceAllocation on), all
// registered through multiPoint, in order, with score weights.
struct DefaultPlugin {
  std::string_view name;
  int32_t weight;  // 0: no weight given
};
constexpr DefaultPlugin kDefaultPlugins[] = {
    {"SchedulingGates", 0},
    {"PrioritySort", 0},
    {"NodeUnschedulable", 0},
    {"NodeName", 0},
    {"TaintToleration", 3},
    {"NodeAffinity", 2},
    {"NodePorts", 0},
    {"NodeResourcesFit", 1},
    {"VolumeRestrictions", 0},
    {"NodeVolumeLimits", 0},
    {"VolumeBinding", 0},
    {"VolumeZone", 0},
    {"PodTopologySpread", 2},
    {"InterPodAffinity", 2},
    {"DynamicResources", 0},
    {"DefaultPreemption", 0},
    {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},
    {"DefaultBinder", 0},
};

// Upstream plugins Gantry does not provide yet. While the registry lacks
// them they are left out of every profile with one warning each.
struct PendingPlugin {
  std::string_view name;
  std::string_view consequence;
};
constexpr PendingPlugin kPendingPlugins[] = {
    {"VolumeBinding",
     "pods with PersistentVolumeClaim or generic ephemeral volumes are reported unschedulable, "
     "never bound blindly"},
    {"VolumeRestrictions", "volume access-mode conflicts are not checked"},
    {"NodeVolumeLimits", "CSI attach limits of nodes are not checked"},
    {"VolumeZone", "zone labels of PersistentVolumes are not checked"},
    {"DynamicResources", "pods with ResourceClaims cannot be scheduled"},
    {"DefaultPreemption", "no pod is preempted"},
};

// Removed from kubescheduler.config.k8s.io/v1 (upstream invalidPluginsByVersion).
constexpr std::string_view kRemovedPlugins[] = {"AzureDiskLimits", "CinderLimits", "EBSLimits",
                                                "GCEPDLimits"};

const PendingPlugin* FindPending(std::string_view name) {
  for (const PendingPlugin& p : kPendingPlugins) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool IsRemovedPlugin(std::string_view name) {
  return std::find(std::begin(kRemovedPlugins), std::end(kRemovedPlugins), name) !=
         std::end(kRemovedPlugins);
}

Path Extend(Path p, PathSegment seg) {
  p.push_back(std::move(seg));
  return p;
}
Path Extend(Path p, PathSegment a, PathSegment b) {
  p.push_back(std::move(a));
  p.push_back(std::move(b));
  return p;
}

std::string Quote(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

// ---- Raw (decoded, not defaulted) form -----------------------------------------

struct RawPluginConfig {
  std::string name;
  JsonValue args;
  bool has_args = false;
  Path path;
};

struct RawProfile {
  std::optional<std::string> scheduler_name;
  std::optional<int32_t> percentage_of_nodes_to_score;
  std::optional<int32_t> percentage_of_placements_to_score;
  std::optional<Plugins> plugins;
  std::vector<RawPluginConfig> plugin_config;
  Path path;
};

struct RawConfig {
  std::optional<int32_t> parallelism;
  std::optional<bool> leader_elect;
  absl::Duration lease_duration = absl::ZeroDuration();
  absl::Duration renew_deadline = absl::ZeroDuration();
  absl::Duration retry_period = absl::ZeroDuration();
  std::string resource_lock, resource_name, resource_namespace;
  ClientConnection client_connection{"", "", "", 0, 0};
  std::optional<bool> enable_profiling;
  std::optional<bool> enable_contention_profiling;
  std::optional<int32_t> percentage_of_nodes_to_score;
  std::optional<int32_t> percentage_of_placements_to_score;
  std::optional<int64_t> pod_initial_backoff_seconds;
  std::optional<int64_t> pod_max_backoff_seconds;
  std::vector<RawProfile> profiles;
  std::vector<Extender> extenders;
  bool delay_cache_until_active = false;
};

// ---- Strict decoding -------------------------------------------------------------

// Walks an object's fields; `on_field` returns false for an unknown field.
// Repeated keys are errors (upstream's strict decoding).
template <typename F>
void DecodeObject(Decoder& d, JsonValue v, F&& on_field) {
  std::set<std::string, std::less<>> seen;
  d.ForEachField(v, [&](std::string_view key, JsonValue value) {
    if (!seen.emplace(key).second) {
      d.Fail(gantry::StrCat("duplicate field ", Quote(key)));
      return;
    }
    if (!on_field(key, value)) d.Fail(gantry::StrCat("unknown field ", Quote(key)));
  });
}

int32_t Int32(Decoder& d, JsonValue v) {
  return static_cast<int32_t>(d.IntInRange(v, std::numeric_limits<int32_t>::min(),
                                           std::numeric_limits<int32_t>::max()));
}

std::optional<int32_t> OptInt32(Decoder& d, JsonValue v) {
  if (v.is_null()) return std::nullopt;
  return Int32(d, v);
}

std::optional<int64_t> OptInt64(Decoder& d, JsonValue v) {
  if (v.is_null()) return std::nullopt;
  return d.Int(v);
}

std::optional<bool> OptBool(Decoder& d, JsonValue v) {
  if (v.is_null()) return std::nullopt;
  return d.Bool(v);
}

absl::Duration GoDuration(Decoder& d, JsonValue v) {
  if (v.is_null()) return absl::ZeroDuration();
  std::string_view s = d.String(v);
  if (!d.ok()) return absl::ZeroDuration();
  auto parsed = ParseGoDuration(s);
  if (!parsed.ok()) {
    d.Fail(gantry::StrCat("Invalid value: ", Quote(s), ": ", AsStd(parsed.status().message())));
    return absl::ZeroDuration();
  }
  return *parsed;
}

std::string Str(Decoder& d, JsonValue v) { return std::string(d.String(v)); }

void DecodeLeaderElection(Decoder& d, JsonValue v, RawConfig* out) {
  DecodeObject(d, v, [&](std::string_view key, JsonValue value) {
    if (key == "leaderElect") {
      out->leader_elect = OptBool(d, value);
    } else if (key == "leaseDuration") {
      out->lease_duration = GoDuration(d, value);
    } else if (key == "renewDeadline") {
      out->renew_deadline = GoDuration(d, value);
    } else if (key == "retryPeriod") {
      out->retry_period = GoDuration(d, value);
    } else if (key == "resourceLock") {
      out->resource_lock = Str(d, value);
    } else if (key == "resourceName") {
      out->resource_name = Str(d, value);
    } else if (key == "resourceNamespace") {
      out->resource_namespace = Str(d, value);
    } else {
      return false;
    }
    return true;
  });
}

void DecodeClientConnection(Decoder& d, JsonValue v, ClientConnection* out) {
  DecodeObject(d, v, [&](std::string_view key, JsonValue value) {
    if (key == "kubeconfig") {
      out->kubeconfig = Str(d, value);
    } else if (key == "acceptContentTypes") {
      out->accept_content_types = Str(d, value);
    } else if (key == "contentType") {
      out->content_type = Str(d, value);
    } else if (key == "qps") {
      double q = d.Double(value);
      if (d.ok() && std::isfinite(q) && std::fabs(q) > std::numeric_limits<float>::max()) {
        d.Fail(gantry::StrCat("Invalid value: ", q, ": does not fit a 32-bit float"));
      }
      out->qps = static_cast<float>(q);
    } else if (key == "burst") {
      out->burst = Int32(d, value);
    } else {
      return false;
    }
    return true;
  });
}

void DecodeExtender(Decoder& d, JsonValue v, Extender* out) {
  DecodeObject(d, v, [&](std::string_view key, JsonValue value) {
    if (key == "urlPrefix") {
      out->url_prefix = Str(d, value);
    } else if (key == "filterVerb") {
      out->filter_verb = Str(d, value);
    } else if (key == "preemptVerb") {
      out->preempt_verb = Str(d, value);
    } else if (key == "prioritizeVerb") {
      out->prioritize_verb = Str(d, value);
    } else if (key == "weight") {
      out->weight = d.Int(value);
    } else if (key == "bindVerb") {
      out->bind_verb = Str(d, value);
    } else if (key == "enableHTTPS") {
      out->enable_https = d.Bool(value);
    } else if (key == "tlsConfig") {
      if (value.is_null()) return true;
      ExtenderTLSConfig tls;
      DecodeObject(d, value, [&](std::string_view k, JsonValue val) {
        if (k == "insecure") {
          tls.insecure = d.Bool(val);
        } else if (k == "serverName") {
          tls.server_name = Str(d, val);
        } else if (k == "certFile") {
          tls.cert_file = Str(d, val);
        } else if (k == "keyFile") {
          tls.key_file = Str(d, val);
        } else if (k == "caFile") {
          tls.ca_file = Str(d, val);
        } else if (k == "certData") {
          tls.cert_data = Str(d, val);
        } else if (k == "keyData") {
          tls.key_data = Str(d, val);
        } else if (k == "caData") {
          tls.ca_data = Str(d, val);
        } else {
          return false;
        }
        return true;
      });
      out->tls_config = std::move(tls);
    } else if (key == "httpTimeout") {
      out->http_timeout = GoDuration(d, value);
    } else if (key == "nodeCacheCapable") {
      out->node_cache_capable = d.Bool(value);
    } else if (key == "managedResources") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        ExtenderManagedResource r;
        DecodeObject(d, item, [&](std::string_view k, JsonValue val) {
          if (k == "name") {
            r.name = Str(d, val);
          } else if (k == "ignoredByScheduler") {
            r.ignored_by_scheduler = d.Bool(val);
          } else {
            return false;
          }
          return true;
        });
        out->managed_resources.push_back(std::move(r));
      });
    } else if (key == "ignorable") {
      out->ignorable = d.Bool(value);
    } else {
      return false;
    }
    return true;
  });
}

void DecodePluginList(Decoder& d, JsonValue v, const Path& base, std::vector<PluginRef>* out) {
  d.ForEachItem(v, [&](size_t i, JsonValue item) {
    PluginRef ref;
    ref.source.path = Extend(base, i);
    DecodeObject(d, item, [&](std::string_view key, JsonValue value) {
      if (key == "name") {
        ref.name = Str(d, value);
      } else if (key == "weight") {
        ref.weight = OptInt32(d, value);
      } else {
        return false;
      }
      return true;
    });
    out->push_back(std::move(ref));
  });
}

void DecodePluginSet(Decoder& d, JsonValue v, const Path& base, PluginSet* out) {
  DecodeObject(d, v, [&](std::string_view key, JsonValue value) {
    if (key == "enabled") {
      DecodePluginList(d, value, Extend(base, std::string(key)), &out->enabled);
    } else if (key == "disabled") {
      DecodePluginList(d, value, Extend(base, std::string(key)), &out->disabled);
    } else {
      return false;
    }
    return true;
  });
}

void DecodePlugins(Decoder& d, JsonValue v, const Path& base, Plugins* out) {
  DecodeObject(d, v, [&](std::string_view key, JsonValue value) {
    Path path = Extend(base, std::string(key));
    if (key == kMultiPointField) {
      DecodePluginSet(d, value, path, &out->multi_point);
      return true;
    }
    for (size_t p = 0; p < kNumExtensionPoints; ++p) {
      if (framework::ExtensionPointName(kAllExtensionPoints[p]) == key) {
        DecodePluginSet(d, value, path, &out->points[p]);
        return true;
      }
    }
    return false;
  });
}

void DecodeProfile(Decoder& d, JsonValue v, const Path& base, RawProfile* out) {
  out->path = base;
  DecodeObject(d, v, [&](std::string_view key, JsonValue value) {
    if (key == "schedulerName") {
      if (!value.is_null()) out->scheduler_name = Str(d, value);
    } else if (key == "percentageOfNodesToScore") {
      out->percentage_of_nodes_to_score = OptInt32(d, value);
    } else if (key == "percentageOfPlacementsToScore") {
      out->percentage_of_placements_to_score = OptInt32(d, value);
    } else if (key == "plugins") {
      if (value.is_null()) return true;
      Plugins plugins;
      DecodePlugins(d, value, Extend(base, "plugins"), &plugins);
      out->plugins = std::move(plugins);
    } else if (key == "pluginConfig") {
      d.ForEachItem(value, [&](size_t j, JsonValue item) {
        RawPluginConfig pc;
        pc.path = Extend(base, "pluginConfig", j);
        DecodeObject(d, item, [&](std::string_view k, JsonValue val) {
          if (k == "name") {
            pc.name = Str(d, val);
          } else if (k == "args") {
            pc.args = val;
            pc.has_args = !val.is_null();
          } else {
            return false;
          }
          return true;
        });
        out->plugin_config.push_back(std::move(pc));
      });
    } else {
      return false;
    }
    return true;
  });
}

void DecodeTopLevel(Decoder& d, JsonValue root, RawConfig* out) {
  DecodeObject(d, root, [&](std::string_view key, JsonValue value) {
    if (key == "apiVersion" || key == "kind") {
      return true;  // checked before
    } else if (key == "parallelism") {
      out->parallelism = OptInt32(d, value);
    } else if (key == "leaderElection") {
      DecodeLeaderElection(d, value, out);
    } else if (key == "clientConnection") {
      DecodeClientConnection(d, value, &out->client_connection);
    } else if (key == "enableProfiling") {
      out->enable_profiling = OptBool(d, value);
    } else if (key == "enableContentionProfiling") {
      out->enable_contention_profiling = OptBool(d, value);
    } else if (key == "percentageOfNodesToScore") {
      out->percentage_of_nodes_to_score = OptInt32(d, value);
    } else if (key == "percentageOfPlacementsToScore") {
      out->percentage_of_placements_to_score = OptInt32(d, value);
    } else if (key == "podInitialBackoffSeconds") {
      out->pod_initial_backoff_seconds = OptInt64(d, value);
    } else if (key == "podMaxBackoffSeconds") {
      out->pod_max_backoff_seconds = OptInt64(d, value);
    } else if (key == "profiles") {
      d.ForEachItem(value, [&](size_t i, JsonValue item) {
        RawProfile p;
        DecodeProfile(d, item, Path{std::string("profiles"), i}, &p);
        out->profiles.push_back(std::move(p));
      });
    } else if (key == "extenders") {
      d.ForEachItem(value, [&](size_t, JsonValue item) {
        Extender e;
        DecodeExtender(d, item, &e);
        out->extenders.push_back(std::move(e));
      });
    } else if (key == "delayCacheUntilActive") {
      out->delay_cache_until_active = d.Bool(value);
    } else if (key == "healthzBindAddress" || key == "metricsBindAddress") {
      d.Fail(gantry::StrCat(
          "unknown field ", Quote(key), ": it was removed from ", kApiVersion,
          "; the health and metrics endpoints are served over HTTPS on the --secure-port "
          "(default 10259) and --bind-address flags"));
    } else {
      return false;
    }
    return true;
  });
}

// ---- Plugin set merging (upstream mergePluginSet semantics) ---------------------

PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet out;
  std::set<std::string, std::less<>> disabled;
  for (const PluginRef& p : custom.disabled) {
    out.disabled.push_back(PluginRef{p.name, std::nullopt, p.source});
    disabled.insert(p.name);
  }
  for (const PluginRef& p : defaults.disabled) {
    out.disabled.push_back(PluginRef{p.name, std::nullopt, p.source});
    disabled.insert(p.name);
  }
  // The last custom entry of a name is the one that replaces a default.
  std::map<std::string, size_t, std::less<>> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i) custom_index[custom.enabled[i].name] = i;
  std::set<size_t> replaced;
  if (!disabled.contains("*")) {
    for (const PluginRef& def : defaults.enabled) {
      if (disabled.contains(def.name)) continue;
      auto it = custom_index.find(def.name);
      if (it != custom_index.end()) {
        out.enabled.push_back(custom.enabled[it->second]);
        replaced.insert(it->second);
      } else {
        out.enabled.push_back(def);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced.contains(i)) out.enabled.push_back(custom.enabled[i]);
  }
  return out;
}

Plugins DefaultPluginSets() {
  Plugins p;
  for (const DefaultPlugin& def : kDefaultPlugins) {
    PluginRef ref{std::string(def.name), std::nullopt, {}};
    if (def.weight != 0) ref.weight = def.weight;
    p.multi_point.enabled.push_back(std::move(ref));
  }
  return p;
}

// ---- The loader ----------------------------------------------------------------------

using Resolver = std::function<api::SourcePosition(const Path&)>;

class Loader {
 public:
  Loader(std::string_view source, const framework::Registry& registry, Resolver resolve)
      : source_(source), registry_(registry), resolve_(std::move(resolve)) {}

  absl::StatusOr<Configuration> Load(JsonValue root);

 private:
  std::string Format(const Path& path, std::string_view message) const {
    api::DecodeError e{std::string(kKind), "", path, std::string(message)};
    api::SourcePosition pos = resolve_ ? resolve_(path) : api::SourcePosition{};
    if (pos.line > 0) return gantry::StrCat(source_, ":", pos.line, ":", pos.column, ": ", e.ToString());
    return gantry::StrCat(source_, ": ", e.ToString());
  }
  void Error(const Path& path, std::string message) { errors_.push_back(Format(path, message)); }

  absl::Status CheckTypeMeta(JsonValue root);
  void BuildProfile(const RawProfile& raw, size_t index, Profile* out);
  void ResolvePluginConfig(const RawProfile& raw, Profile* out);
  void Resolve(Profile* out);
  void Validate(const RawConfig& raw, const Configuration& c);
  void ValidateQueueSort(const Configuration& c);
  std::string RegisteredNames() const;

  std::string source_;
  const framework::Registry& registry_;
  Resolver resolve_;
  std::vector<std::string> errors_;
  // Pending plugins left out, by name, with the profiles concerned.
  std::map<std::string, std::vector<std::string>> dropped_;
  std::vector<std::string> warnings_;
  simdjson::dom::parser null_parser_;
};

std::string Loader::RegisteredNames() const {
  std::vector<std::string> names = registry_.Names();
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out.empty() ? "none" : out;
}

absl::Status Loader::CheckTypeMeta(JsonValue root) {
  if (!root.is_object()) {
    return absl::InvalidArgumentError(Format(
        {}, gantry::StrCat("expected a ", kKind, " object, got ", api::JsonTypeName(root))));
  }
  std::string_view api_version, kind;
  JsonValue v;
  if (root["apiVersion"].get(v) == simdjson::SUCCESS && v.get_string().get(api_version) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(Format({std::string("apiVersion")}, "expected a string"));
  }
  if (root["kind"].get(v) == simdjson::SUCCESS && v.get_string().get(kind) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(Format({std::string("kind")}, "expected a string"));
  }
  if (api_version.empty()) {
    return absl::InvalidArgumentError(Format(
        {std::string("apiVersion")}, gantry::StrCat("Required value: must be ", Quote(kApiVersion))));
  }
  if (api_version != kApiVersion) {
    std::string_view group = api_version.substr(0, api_version.find('/'));
    if (group == kGroup) {
      return absl::InvalidArgumentError(Format(
          {std::string("apiVersion")},
          gantry::StrCat("Unsupported value: ", Quote(api_version), ": this version is no longer served "
                         "(v1beta3, the last beta, was removed in Kubernetes v1.29); only ",
                         kApiVersion, " is supported: convert the file to v1")));
    }
    return absl::InvalidArgumentError(
        Format({std::string("apiVersion")},
               gantry::StrCat("Unsupported value: ", Quote(api_version), ": supported values: ",
                              Quote(kApiVersion))));
  }
  if (kind.empty()) {
    return absl::InvalidArgumentError(
        Format({std::string("kind")}, gantry::StrCat("Required value: must be ", Quote(kKind))));
  }
  if (kind != kKind) {
    return absl::InvalidArgumentError(
        Format({std::string("kind")}, gantry::StrCat("Unsupported value: ", Quote(kind),
                                                     ": supported values: ", Quote(kKind))));
  }
  return absl::OkStatus();
}

void Loader::BuildProfile(const RawProfile& raw, size_t index, Profile* out) {
  (void)index;
  out->scheduler_name = raw.scheduler_name.value_or("");
  out->percentage_of_nodes_to_score = raw.percentage_of_nodes_to_score;
  out->percentage_of_placements_to_score = raw.percentage_of_placements_to_score;

  // User entries: weights, removed plugins, empty names.
  if (raw.plugins) {
    auto check_set = [&](const PluginSet& set) {
      for (const PluginRef& p : set.enabled) {
        if (p.name.empty()) {
          Error(Extend(p.source.path, "name"), "Required value");
        } else if (IsRemovedPlugin(p.name)) {
          Error(p.source.path,
                gantry::StrCat("Invalid value: ", Quote(p.name), ": was invalid in version ",
                               Quote(kApiVersion), " (KubeSchedulerConfiguration is version ",
                               Quote(kApiVersion), "); NodeVolumeLimits covers CSI volume limits"));
        }
        if (p.weight && *p.weight < 0) {
          Error(Extend(p.source.path, "weight"),
                gantry::StrCat("Invalid value: ", *p.weight,
                               ": must be greater than or equal to 0 (0 means the default, 1)"));
        }
      }
      for (const PluginRef& p : set.disabled) {
        if (p.name.empty()) Error(Extend(p.source.path, "name"), "Required value");
      }
    };
    check_set(raw.plugins->multi_point);
    for (const PluginSet& s : raw.plugins->points) check_set(s);
  }

  // Merge with the defaults.
  Plugins defaults = DefaultPluginSets();
  if (!raw.plugins) {
    out->plugins = std::move(defaults);
  } else {
    out->plugins.multi_point = MergePluginSet(defaults.multi_point, raw.plugins->multi_point);
    for (size_t p = 0; p < kNumExtensionPoints; ++p) {
      out->plugins.points[p] = MergePluginSet(defaults.points[p], raw.plugins->points[p]);
    }
  }

  // Plugins the registry does not know: pending ones are left out (one
  // warning each, see Load), others are errors.
  std::set<std::string, std::less<>> reported;
  auto filter = [&](std::vector<PluginRef>* enabled) {
    std::vector<PluginRef> kept;
    for (PluginRef& p : *enabled) {
      if (p.name.empty() || IsRemovedPlugin(p.name) || registry_.Find(p.name) != nullptr) {
        kept.push_back(std::move(p));
        continue;
      }
      if (FindPending(p.name) != nullptr) {
        std::vector<std::string>& profiles = dropped_[p.name];
        if (std::find(profiles.begin(), profiles.end(), out->scheduler_name) == profiles.end()) {
          profiles.push_back(out->scheduler_name);
        }
        continue;
      }
      if (reported.insert(p.name).second || !p.source.path.empty()) {
        if (p.source.path.empty()) {
          Error(raw.path, gantry::StrCat("default plugin ", Quote(p.name),
                                         " not found (registered: ", RegisteredNames(), ")"));
        } else {
          Error(Extend(p.source.path, "name"),
                gantry::StrCat("plugin ", Quote(p.name), " not found (registered: ",
                               RegisteredNames(), ")"));
        }
      }
      kept.push_back(std::move(p));
    }
    *enabled = std::move(kept);
  };
  filter(&out->plugins.multi_point.enabled);
  for (PluginSet& s : out->plugins.points) filter(&s.enabled);

  // Duplicates (upstream: "plugin X already registered as Y").
  auto check_duplicates = [&](const PluginSet& set, std::string_view where) {
    std::set<std::string, std::less<>> seen;
    for (const PluginRef& p : set.enabled) {
      if (p.name.empty()) continue;
      if (!seen.insert(p.name).second) {
        Path path = p.source.path.empty() ? raw.path : p.source.path;
        Error(path, gantry::StrCat("Duplicate value: ", Quote(p.name), ": plugin is enabled twice at ",
                                   where));
      }
    }
  };
  check_duplicates(out->plugins.multi_point, kMultiPointField);
  for (size_t p = 0; p < kNumExtensionPoints; ++p) {
    check_duplicates(out->plugins.points[p], framework::ExtensionPointName(kAllExtensionPoints[p]));
  }

  ResolvePluginConfig(raw, out);
  Resolve(out);
}

// Names of every plugin enabled anywhere (upstream pluginsNames), sorted.
std::vector<std::string> EnabledNames(const Plugins& plugins) {
  std::set<std::string> names;
  for (const PluginRef& p : plugins.multi_point.enabled) names.insert(p.name);
  for (const PluginSet& s : plugins.points) {
    for (const PluginRef& p : s.enabled) names.insert(p.name);
  }
  return {names.begin(), names.end()};
}

void Loader::ResolvePluginConfig(const RawProfile& raw, Profile* out) {
  std::vector<std::string> enabled = EnabledNames(out->plugins);
  auto is_enabled = [&](std::string_view name) {
    return std::binary_search(enabled.begin(), enabled.end(), name);
  };
  JsonValue null_args;
  if (null_parser_.parse(std::string_view("null")).get(null_args) != simdjson::SUCCESS) {
    errors_.push_back("internal error: cannot parse null");
    return;
  }

  // Runs a plugin's args defaulter. `path` is the args' path (empty for
  // defaulted args that were not written).
  auto run_defaulter = [&](const framework::PluginRegistration& reg, JsonValue args,
                           const Path& path) -> std::optional<nlohmann::json> {
    std::string kind = reg.args_kind.empty() ? gantry::StrCat(reg.name, "Args") : reg.args_kind;
    Decoder d(kind);
    nlohmann::json result;
    try {
      result = reg.default_args(d, args);
    } catch (const std::exception& e) {
      Error(path, gantry::StrCat("args for plugin ", Quote(reg.name), ": ", e.what()));
      return std::nullopt;
    }
    if (const auto& err = d.error()) {
      Path full = path;
      full.insert(full.end(), err->path.begin(), err->path.end());
      std::string message = gantry::StrCat(kind, ": ", err->message);
      if (path.empty()) {
        Error(raw.path, gantry::StrCat("default args of plugin ", Quote(reg.name),
                                       " are invalid: ", message));
      } else {
        Error(full, message);
      }
      return std::nullopt;
    }
    return result;
  };

  std::set<std::string, std::less<>> seen;
  for (const RawPluginConfig& pc : raw.plugin_config) {
    if (pc.name.empty()) {
      Error(Extend(pc.path, "name"), "Required value");
      continue;
    }
    if (!seen.insert(pc.name).second) {
      Error(pc.path, gantry::StrCat("Duplicate value: ", Quote(pc.name)));
      continue;
    }
    if (IsRemovedPlugin(pc.name)) {
      Error(pc.path, gantry::StrCat("Invalid value: ", Quote(pc.name), ": was invalid in version ",
                                    Quote(kApiVersion), " (KubeSchedulerConfiguration is version ",
                                    Quote(kApiVersion), ")"));
      continue;
    }
    PluginConfig cfg;
    cfg.name = pc.name;
    cfg.source.path = pc.path;
    const framework::PluginRegistration* reg = registry_.Find(pc.name);
    Path args_path = Extend(pc.path, "args");
    if (reg != nullptr && reg->default_args) {
      cfg.args_kind = reg->args_kind.empty() ? gantry::StrCat(reg->name, "Args") : reg->args_kind;
      JsonValue args = pc.has_args ? pc.args : null_args;
      // Upstream args may carry their own apiVersion/kind; check and strip.
      simdjson::dom::parser stripped_parser;
      if (args.is_object()) {
        JsonValue v;
        bool typed = false;
        std::string_view s;
        if (args["apiVersion"].get(v) == simdjson::SUCCESS) {
          typed = true;
          if (v.get_string().get(s) != simdjson::SUCCESS || s != kApiVersion) {
            Error(Extend(args_path, "apiVersion"),
                  gantry::StrCat("Unsupported value: ", v.is_string() ? Quote(s) : std::string("non-string"),
                                 ": supported values: ", Quote(kApiVersion)));
            continue;
          }
        }
        if (args["kind"].get(v) == simdjson::SUCCESS) {
          typed = true;
          if (v.get_string().get(s) != simdjson::SUCCESS || s != cfg.args_kind) {
            Error(Extend(args_path, "kind"),
                  gantry::StrCat("args for plugin ", pc.name, " were not of type ", kGroup, "/",
                                 cfg.args_kind, ", got ", v.is_string() ? std::string(s) : "non-string"));
            continue;
          }
        }
        if (typed) {
          nlohmann::json copy = ToNlohmann(args);
          copy.erase("apiVersion");
          copy.erase("kind");
          if (stripped_parser.parse(copy.dump()).get(args) != simdjson::SUCCESS) {
            Error(args_path, "internal error: cannot re-parse args");
            continue;
          }
        }
      }
      std::optional<nlohmann::json> result = run_defaulter(*reg, args, args_path);
      if (!result) continue;
      cfg.args = std::move(*result);
    } else {
      if (reg != nullptr) cfg.args_kind = reg->args_kind;
      cfg.args = pc.has_args ? ToNlohmann(pc.args) : nlohmann::json();
    }
    if (!is_enabled(pc.name) && !dropped_.contains(pc.name)) {
      warnings_.push_back(gantry::StrCat(
          source_, ": profile ", Quote(out->scheduler_name), ": pluginConfig for plugin ",
          Quote(pc.name), " is ignored: the profile does not enable that plugin"));
    }
    out->plugin_config.push_back(std::move(cfg));
  }
  // Defaulted args for every enabled plugin without an explicit entry.
  for (const std::string& name : enabled) {
    if (name.empty() || seen.contains(name)) continue;
    const framework::PluginRegistration* reg = registry_.Find(name);
    if (reg == nullptr || !reg->default_args) continue;
    std::optional<nlohmann::json> result = run_defaulter(*reg, null_args, {});
    if (!result) continue;
    PluginConfig cfg;
    cfg.name = name;
    cfg.args = std::move(*result);
    cfg.args_kind = reg->args_kind.empty() ? gantry::StrCat(reg->name, "Args") : reg->args_kind;
    out->plugin_config.push_back(std::move(cfg));
  }
}

// Upstream's multiPoint expansion, without the plugin instances: per point,
// explicit plugins that also appear in multiPoint (in explicit order), then
// multiPoint plugins, then the remaining explicit ones.
void Loader::Resolve(Profile* out) {
  const Plugins& plugins = out->plugins;
  for (size_t p = 0; p < kNumExtensionPoints; ++p) {
    const PluginSet& set = plugins.points[p];
    std::set<std::string, std::less<>> explicit_names, disabled, overridden;
    for (const PluginRef& r : set.enabled) explicit_names.insert(r.name);
    for (const PluginRef& r : set.disabled) disabled.insert(r.name);
    std::vector<PointEntry>& entries = out->points[p];
    entries.clear();
    std::vector<std::string> multi;
    if (!disabled.contains("*")) {
      for (const PluginRef& r : plugins.multi_point.enabled) {
        if (disabled.contains(r.name)) continue;
        if (explicit_names.contains(r.name)) {
          overridden.insert(r.name);
          continue;
        }
        if (std::find(multi.begin(), multi.end(), r.name) == multi.end()) multi.push_back(r.name);
      }
    }
    for (const PluginRef& r : set.enabled) {
      if (overridden.contains(r.name)) entries.push_back({r.name, false});
    }
    for (const std::string& n : multi) entries.push_back({n, true});
    for (const PluginRef& r : set.enabled) {
      if (!overridden.contains(r.name)) entries.push_back({r.name, false});
    }
  }

  // Every needed plugin, multiPoint first.
  out->resolved.clear();
  auto add = [&](const std::string& name) {
    for (const ProfilePlugin& pp : out->resolved) {
      if (pp.name == name) return;
    }
    ProfilePlugin pp;
    pp.name = name;
    out->resolved.push_back(std::move(pp));
  };
  for (const PluginRef& r : plugins.multi_point.enabled) add(r.name);
  for (const PluginSet& s : plugins.points) {
    for (const PluginRef& r : s.enabled) add(r.name);
  }
  auto weight_of = [&](const std::string& name, ExtensionPoint point) -> int32_t {
    for (const PluginRef& r : plugins.at(point).enabled) {
      if (r.name == name) return r.weight.value_or(0) == 0 ? 1 : *r.weight;
    }
    for (const PluginRef& r : plugins.multi_point.enabled) {
      if (r.name == name) return r.weight.value_or(0) == 0 ? 1 : *r.weight;
    }
    return 1;
  };
  for (ProfilePlugin& pp : out->resolved) {
    pp.weight = weight_of(pp.name, ExtensionPoint::kScore);
    pp.placement_score_weight = weight_of(pp.name, ExtensionPoint::kPlacementScore);
    for (size_t p = 0; p < kNumExtensionPoints; ++p) {
      pp.points[p] = Enablement::kNone;
      for (const PointEntry& e : out->points[p]) {
        if (e.name == pp.name) {
          pp.points[p] = e.via_multi_point ? Enablement::kMultiPoint : Enablement::kExplicit;
          break;
        }
      }
    }
    if (const PluginConfig* pc = out->FindPluginConfig(pp.name)) pp.args = pc->args;
  }
}

void Loader::ValidateQueueSort(const Configuration& c) {
  // Upstream validateCommonQueueSort: the explicit queueSort sets and the
  // queue sort plugin's args must be the same in every profile.
  const Profile& first = c.profiles[0];
  const PluginSet& canon = first.plugins.at(ExtensionPoint::kQueueSort);
  if (canon.enabled.size() > 1) {
    Error({std::string("profiles"), size_t{0}, std::string("plugins"), std::string("queueSort"),
           std::string("enabled")},
          gantry::StrCat("Invalid value: ", canon.enabled.size(),
                         ": only one queue sort plugin can be enabled"));
  }
  std::string queue_sort = canon.enabled.empty() ? "" : canon.enabled[0].name;
  const PluginConfig* canon_args = queue_sort.empty() ? nullptr : first.FindPluginConfig(queue_sort);
  for (size_t i = 1; i < c.profiles.size(); ++i) {
    const Profile& prof = c.profiles[i];
    const PluginSet& cur = prof.plugins.at(ExtensionPoint::kQueueSort);
    Path path{std::string("profiles"), i, std::string("plugins"), std::string("queueSort")};
    if (!(cur == canon)) {
      Error(path, "Invalid value: must be the same for all profiles");
    }
    if (!queue_sort.empty()) {
      const PluginConfig* args = prof.FindPluginConfig(queue_sort);
      nlohmann::json a = canon_args ? canon_args->args : nlohmann::json();
      nlohmann::json b = args ? args->args : nlohmann::json();
      if (a != b) {
        Path p = args && !args->source.path.empty() ? Extend(args->source.path, "args")
                                                    : Path{std::string("profiles"), i,
                                                           std::string("pluginConfig")};
        Error(p, "Invalid value: queueSort must be the same for all profiles");
      }
    }
  }
}

void Loader::Validate(const RawConfig& raw, const Configuration& c) {
  (void)raw;
  const LeaderElection& le = c.leader_election;
  auto le_path = [](std::string_view f) { return Path{std::string("leaderElection"), std::string(f)}; };
  if (le.leader_elect) {
    if (le.lease_duration <= absl::ZeroDuration()) {
      Error(le_path("leaseDuration"), gantry::StrCat("Invalid value: ", Quote(FormatGoDuration(le.lease_duration)),
                                                     ": must be greater than zero"));
    }
    if (le.renew_deadline <= absl::ZeroDuration()) {
      Error(le_path("renewDeadline"), gantry::StrCat("Invalid value: ", Quote(FormatGoDuration(le.renew_deadline)),
                                                     ": must be greater than zero"));
    }
    if (le.retry_period <= absl::ZeroDuration()) {
      Error(le_path("retryPeriod"), gantry::StrCat("Invalid value: ", Quote(FormatGoDuration(le.retry_period)),
                                                   ": must be greater than zero"));
    }
    if (le.lease_duration <= le.renew_deadline) {
      Error(le_path("leaseDuration"),
            gantry::StrCat("Invalid value: ", Quote(FormatGoDuration(le.lease_duration)),
                           ": must be greater than `RenewDeadline` (",
                           FormatGoDuration(le.renew_deadline), ")"));
    }
    if (le.resource_lock.empty()) Error(le_path("resourceLock"), "Required value");
    if (le.resource_namespace.empty()) Error(le_path("resourceNamespace"), "Required value");
    if (le.resource_name.empty()) Error(le_path("resourceName"), "Required value");
    if (!le.resource_lock.empty() && le.resource_lock != "leases") {
      Error(le_path("resourceLock"), gantry::StrCat("Invalid value: ", Quote(le.resource_lock),
                                                    ": resourceLock value must be \"leases\""));
    }
    if (le.resource_name == "kube-scheduler" && le.resource_namespace == "kube-system") {
      warnings_.push_back(gantry::StrCat(
          source_, ": leaderElection uses the Lease kube-system/kube-scheduler of the default "
                   "scheduler: Gantry and kube-scheduler would take turns (or wait on each other) "
                   "unless kube-scheduler is stopped; set leaderElection.resourceName to a lock of "
                   "Gantry's own (default ",
          Quote(kDefaultLeaseName), ")"));
    }
  }
  if (c.client_connection.burst < 0) {
    Error({std::string("clientConnection"), std::string("burst")},
          gantry::StrCat("Invalid value: ", c.client_connection.burst, ": must be non-negative"));
  }
  if (c.client_connection.qps < 0) {
    Error({std::string("clientConnection"), std::string("qps")},
          gantry::StrCat("Invalid value: ", c.client_connection.qps, ": must be non-negative"));
  }
  if (c.parallelism <= 0) {
    Error({std::string("parallelism")}, gantry::StrCat("Invalid value: ", c.parallelism,
                                                       ": should be an integer value greater than zero"));
  }
  auto check_pct = [&](const Path& path, std::optional<int32_t> v) {
    if (v && (*v < 0 || *v > 100)) {
      Error(path, gantry::StrCat("Invalid value: ", *v, ": not in valid range [0-100]"));
    }
  };
  std::map<std::string, size_t, std::less<>> names;
  for (size_t i = 0; i < c.profiles.size(); ++i) {
    const Profile& prof = c.profiles[i];
    Path path{std::string("profiles"), i};
    if (prof.scheduler_name.empty()) {
      Error(Extend(path, "schedulerName"), "Required value");
    } else if (auto it = names.find(prof.scheduler_name); it != names.end()) {
      Error(Extend(path, "schedulerName"),
            gantry::StrCat("Duplicate value: ", Quote(prof.scheduler_name), " (also profiles[",
                           it->second, "].schedulerName)"));
    } else {
      names.emplace(prof.scheduler_name, i);
    }
    check_pct(Extend(path, "percentageOfNodesToScore"), prof.percentage_of_nodes_to_score);
    check_pct(Extend(path, "percentageOfPlacementsToScore"), prof.percentage_of_placements_to_score);

    // Total score weight must not overflow (upstream getScoreWeights);
    // computed over every possible score plugin, which bounds the real sum.
    int64_t total = 0;
    for (const ProfilePlugin& pp : prof.resolved) {
      if (pp.at(ExtensionPoint::kScore) == Enablement::kNone) continue;
      if (static_cast<int64_t>(pp.weight) * kMaxNodeScore > kMaxTotalScore - total) {
        Error(Extend(path, "plugins"), "total score of Score plugins could overflow");
        break;
      }
      total += static_cast<int64_t>(pp.weight) * kMaxNodeScore;
    }
  }
  if (!c.profiles.empty()) ValidateQueueSort(c);
  check_pct({std::string("percentageOfNodesToScore")}, c.percentage_of_nodes_to_score);
  check_pct({std::string("percentageOfPlacementsToScore")}, c.percentage_of_placements_to_score);
  if (c.pod_initial_backoff_seconds <= 0) {
    Error({std::string("podInitialBackoffSeconds")},
          gantry::StrCat("Invalid value: ", c.pod_initial_backoff_seconds, ": must be greater than 0"));
  }
  if (c.pod_max_backoff_seconds < c.pod_initial_backoff_seconds) {
    Error({std::string("podMaxBackoffSeconds")},
          gantry::StrCat("Invalid value: ", c.pod_max_backoff_seconds,
                         ": must be greater than or equal to PodInitialBackoffSeconds"));
  }
  if (!c.extenders.empty()) {
    Error({std::string("extenders"), size_t{0}},
          gantry::StrCat("Forbidden: Gantry does not support scheduler extenders (", c.extenders.size(),
                         " configured); remove the extenders list, or port the extender to a "
                         "Gantry plugin"));
  }
}

absl::StatusOr<Configuration> Loader::Load(JsonValue root) {
  if (auto st = CheckTypeMeta(root); !st.ok()) return st;
  RawConfig raw;
  Decoder d(kKind);
  DecodeTopLevel(d, root, &raw);
  if (const auto& err = d.error()) {
    return absl::InvalidArgumentError(Format(err->path, err->message));
  }

  // Defaulting (SetDefaults_KubeSchedulerConfiguration), Gantry names.
  Configuration c;
  c.parallelism = raw.parallelism.value_or(16);
  if (raw.profiles.empty()) raw.profiles.emplace_back();
  if (raw.profiles.size() == 1 && !raw.profiles[0].scheduler_name) {
    raw.profiles[0].scheduler_name = std::string(kDefaultSchedulerName);
  }
  c.profiles.resize(raw.profiles.size());
  for (size_t i = 0; i < raw.profiles.size(); ++i) {
    if (raw.profiles[i].path.empty()) raw.profiles[i].path = Path{std::string("profiles"), i};
    BuildProfile(raw.profiles[i], i, &c.profiles[i]);
  }
  c.percentage_of_nodes_to_score = raw.percentage_of_nodes_to_score.value_or(0);
  c.percentage_of_placements_to_score = raw.percentage_of_placements_to_score;
  LeaderElection& le = c.leader_election;
  le.leader_elect = raw.leader_elect.value_or(true);
  if (raw.lease_duration != absl::ZeroDuration()) le.lease_duration = raw.lease_duration;
  if (raw.renew_deadline != absl::ZeroDuration()) le.renew_deadline = raw.renew_deadline;
  if (raw.retry_period != absl::ZeroDuration()) le.retry_period = raw.retry_period;
  if (!raw.resource_lock.empty()) le.resource_lock = raw.resource_lock;
  if (!raw.resource_name.empty()) le.resource_name = raw.resource_name;
  if (!raw.resource_namespace.empty()) le.resource_namespace = raw.resource_namespace;
  c.client_connection = raw.client_connection;
  if (c.client_connection.content_type.empty()) {
    c.client_connection.content_type = "application/vnd.kubernetes.protobuf";
  }
  if (c.client_connection.qps == 0) c.client_connection.qps = 50;
  if (c.client_connection.burst == 0) c.client_connection.burst = 100;
  c.pod_initial_backoff_seconds = raw.pod_initial_backoff_seconds.value_or(1);
  c.pod_max_backoff_seconds = raw.pod_max_backoff_seconds.value_or(10);
  c.enable_profiling = raw.enable_profiling.value_or(true);
  c.enable_contention_profiling = raw.enable_contention_profiling.value_or(c.enable_profiling);
  c.extenders = raw.extenders;
  c.delay_cache_until_active = raw.delay_cache_until_active;

  Validate(raw, c);
  if (!errors_.empty()) {
    std::string message;
    for (const std::string& e : errors_) {
      if (!message.empty()) message += "\n";
      message += e;
    }
    return absl::InvalidArgumentError(message);
  }

  // One warning per plugin left out.
  std::vector<std::string> warnings;
  for (const auto& [name, profiles] : dropped_) {
    const PendingPlugin* pending = FindPending(name);
    std::string list;
    for (const std::string& p : profiles) {
      if (!list.empty()) list += ", ";
      list += Quote(p);
    }
    warnings.push_back(gantry::StrCat(
        source_, ": plugin ", Quote(name), " is not available in this build of Gantry yet and is "
        "left out of profile(s) ", list, " (its pluginConfig, if any, is kept but not validated): ",
        pending ? pending->consequence : std::string_view("it is not run")));
  }
  warnings.insert(warnings.end(), warnings_.begin(), warnings_.end());
  c.warnings = std::move(warnings);
  return c;
}

bool LooksLikeJson(std::string_view path, std::string_view text) {
  if (path.ends_with(".json")) return true;
  if (path.ends_with(".yaml") || path.ends_with(".yml")) return false;
  for (char ch : text) {
    if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') continue;
    return ch == '{';
  }
  return false;
}

absl::StatusOr<Configuration> LoadJsonText(std::string_view text, std::string_view source,
                                           const framework::Registry& registry) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  JsonValue root;
  if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS) {
    return api::JsonSyntaxError(source, text, err);
  }
  std::string copy(text);
  Loader loader(source, registry,
                [copy](const Path& path) { return api::ResolveJsonPosition(copy, path); });
  return loader.Load(root);
}

absl::StatusOr<Configuration> LoadYamlText(std::string_view text, std::string_view source,
                                           const framework::Registry& registry) {
  auto docs = api::ParseYamlDocuments(text);
  if (!docs.ok()) {
    return absl::InvalidArgumentError(gantry::StrCat(source, ":", AsStd(docs.status().message())));
  }
  const api::YamlDocument* doc = nullptr;
  for (const api::YamlDocument& d : *docs) {
    if (d.empty()) continue;
    if (doc != nullptr) {
      return absl::InvalidArgumentError(gantry::StrCat(
          source, ":", d.start().line, ":", d.start().column,
          ": a configuration file holds one KubeSchedulerConfiguration document, found another"));
    }
    doc = &d;
  }
  if (doc == nullptr) {
    return absl::InvalidArgumentError(gantry::StrCat(source, ": the configuration file is empty"));
  }
  simdjson::dom::parser parser;
  JsonValue root;
  if (auto err = parser.parse(doc->json()).get(root); err != simdjson::SUCCESS) {
    return absl::InternalError(gantry::StrCat(source, ": YAML converted to invalid JSON: ",
                                              simdjson::error_message(err)));
  }
  Loader loader(source, registry, [doc](const Path& path) { return doc->Resolve(path); });
  return loader.Load(root);
}

}  // namespace

const ProfilePlugin* Profile::FindPlugin(std::string_view name) const {
  for (const ProfilePlugin& p : resolved) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const PluginConfig* Profile::FindPluginConfig(std::string_view name) const {
  for (const PluginConfig& p : plugin_config) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const Profile* Configuration::FindProfile(std::string_view scheduler_name) const {
  for (const Profile& p : profiles) {
    if (p.scheduler_name == scheduler_name) return &p;
  }
  return nullptr;
}

absl::StatusOr<Configuration> LoadConfigText(std::string_view text, std::string_view source_name,
                                             const framework::Registry& registry) {
  try {
    if (LooksLikeJson(source_name, text)) return LoadJsonText(text, source_name, registry);
    return LoadYamlText(text, source_name, registry);
  } catch (const std::exception& e) {
    return absl::InternalError(gantry::StrCat(source_name, ": loading the configuration: ", e.what()));
  }
}

absl::StatusOr<Configuration> LoadConfigFile(std::string_view path,
                                             const framework::Registry& registry) {
  std::error_code ec;
  std::filesystem::path p{std::string(path)};
  if (!std::filesystem::is_regular_file(p, ec)) {
    return absl::NotFoundError(gantry::StrCat(path, ": no such configuration file"));
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) return absl::UnavailableError(gantry::StrCat(path, ": cannot open file"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return LoadConfigText(text, path, registry);
}

absl::StatusOr<Configuration> DefaultConfig(const framework::Registry& registry) {
  return LoadConfigText(gantry::StrCat("apiVersion: ", kApiVersion, "\nkind: ", kKind, "\n"),
                        "<defaults>", registry);
}

}  // namespace gantry::config
