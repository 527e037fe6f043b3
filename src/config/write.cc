// --write-config-to: the defaulted configuration as JSON and YAML.
#include <string>
#include <string_view>

#include "gantry/util/strings.h"
#include "src/config/config.h"

namespace gantry::config {
namespace {

using nlohmann::json;

json PluginListJson(const std::vector<PluginRef>& list, bool with_weight) {
  json out = json::array();
  for (const PluginRef& p : list) {
    json entry = {{"name", p.name}};
    if (with_weight && p.weight) entry["weight"] = *p.weight;
    out.push_back(std::move(entry));
  }
  return out;
}

json PluginSetJson(const PluginSet& set) {
  json out = json::object();
  if (!set.enabled.empty()) out["enabled"] = PluginListJson(set.enabled, true);
  if (!set.disabled.empty()) out["disabled"] = PluginListJson(set.disabled, false);
  return out;
}

json ProfileJson(const Profile& p) {
  json out = json::object();
  out["schedulerName"] = p.scheduler_name;
  if (p.percentage_of_nodes_to_score) out["percentageOfNodesToScore"] = *p.percentage_of_nodes_to_score;
  if (p.percentage_of_placements_to_score) {
    out["percentageOfPlacementsToScore"] = *p.percentage_of_placements_to_score;
  }
  json plugins = json::object();
  if (!p.plugins.multi_point.empty()) plugins["multiPoint"] = PluginSetJson(p.plugins.multi_point);
  for (ExtensionPoint point : kAllExtensionPoints) {
    const PluginSet& set = p.plugins.at(point);
    if (!set.empty())
      plugins[std::string(framework::ExtensionPointName(point))] = PluginSetJson(set);
  }
  out["plugins"] = std::move(plugins);
  if (!p.plugin_config.empty()) {
    json configs = json::array();
    for (const PluginConfig& pc : p.plugin_config) {
      json entry = {{"name", pc.name}};
      json args = pc.args;
      if (!pc.args_kind.empty() && args.is_object() && !args.contains("kind")) {
        args["apiVersion"] = std::string(kApiVersion);
        args["kind"] = pc.args_kind;
      }
      if (!args.is_null()) entry["args"] = std::move(args);
      configs.push_back(std::move(entry));
    }
    out["pluginConfig"] = std::move(configs);
  }
  return out;
}

json ExtenderJson(const Extender& e) {
  json out = {{"urlPrefix", e.url_prefix}};
  if (!e.filter_verb.empty()) out["filterVerb"] = e.filter_verb;
  if (!e.preempt_verb.empty()) out["preemptVerb"] = e.preempt_verb;
  if (!e.prioritize_verb.empty()) out["prioritizeVerb"] = e.prioritize_verb;
  if (e.weight != 0) out["weight"] = e.weight;
  if (!e.bind_verb.empty()) out["bindVerb"] = e.bind_verb;
  if (e.enable_https) out["enableHTTPS"] = true;
  if (e.tls_config) {
    const ExtenderTLSConfig& t = *e.tls_config;
    json tls = json::object();
    if (t.insecure) tls["insecure"] = true;
    if (!t.server_name.empty()) tls["serverName"] = t.server_name;
    if (!t.cert_file.empty()) tls["certFile"] = t.cert_file;
    if (!t.key_file.empty()) tls["keyFile"] = t.key_file;
    if (!t.ca_file.empty()) tls["caFile"] = t.ca_file;
    if (!t.cert_data.empty()) tls["certData"] = t.cert_data;
    if (!t.key_data.empty()) tls["keyData"] = t.key_data;
    if (!t.ca_data.empty()) tls["caData"] = t.ca_data;
    out["tlsConfig"] = std::move(tls);
  }
  if (e.http_timeout != absl::ZeroDuration()) out["httpTimeout"] = FormatGoDuration(e.http_timeout);
  if (e.node_cache_capable) out["nodeCacheCapable"] = true;
  if (!e.managed_resources.empty()) {
    json list = json::array();
    for (const ExtenderManagedResource& r : e.managed_resources) {
      json entry = {{"name", r.name}};
      if (r.ignored_by_scheduler) entry["ignoredByScheduler"] = true;
      list.push_back(std::move(entry));
    }
    out["managedResources"] = std::move(list);
  }
  if (e.ignorable) out["ignorable"] = true;
  return out;
}

// ---- YAML rendering ----------------------------------------------------------------

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }

// A string that every YAML schema (1.1 and 1.2) reads back as the same string
// when written plain.
bool PlainSafe(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(IsLetter(c) || IsDigitChar(c) || c == '_' || c == '.' || c == '/' || c == '-')) return false;
  }
  char first = s[0];
  if (IsDigitChar(first)) {
    // Durations ("15s", "1m30s"): ending in s/m/h is never a number.
    char last = s.back();
    return last == 's' || last == 'm' || last == 'h';
  }
  if (!IsLetter(first) && first != '/') return false;
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  static constexpr std::string_view kReserved[] = {"true", "false", "null", "yes", "no",
                                                   "on",   "off",   "y",    "n"};
  for (std::string_view r : kReserved) {
    if (lower == r) return false;
  }
  return true;
}

std::string Scalar(const json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (PlainSafe(s)) return s;
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (v.is_object()) return "{}";
  if (v.is_array()) return "[]";
  return v.dump();
}

void EmitSeq(const json& arr, int indent, std::string* out);

void EmitMap(const json& obj, int indent, std::string* out) {
  std::string pad(static_cast<size_t>(indent), ' ');
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    gantry::StrAppend(out, pad, Scalar(json(it.key())), ":");
    const json& v = it.value();
    if (v.is_object() && !v.empty()) {
      out->push_back('\n');
      EmitMap(v, indent + 2, out);
    } else if (v.is_array() && !v.empty()) {
      out->push_back('\n');
      EmitSeq(v, indent, out);
    } else {
      gantry::StrAppend(out, " ", Scalar(v), "\n");
    }
  }
}

void EmitSeq(const json& arr, int indent, std::string* out) {
  std::string pad(static_cast<size_t>(indent), ' ');
  for (const json& item : arr) {
    if (item.is_object() && !item.empty()) {
      std::string body;
      EmitMap(item, indent + 2, &body);
      // Replace the first line's indentation with "- ".
      gantry::StrAppend(out, pad, "- ", std::string_view(body).substr(static_cast<size_t>(indent) + 2));
    } else if (item.is_array() && !item.empty()) {
      gantry::StrAppend(out, pad, "-\n");
      EmitSeq(item, indent + 2, out);
    } else {
      gantry::StrAppend(out, pad, "- ", Scalar(item), "\n");
    }
  }
}

}  // namespace

json ToJson(const Configuration& c) {
  json out = json::object();
  out["apiVersion"] = std::string(kApiVersion);
  out["kind"] = std::string(kKind);
  out["parallelism"] = c.parallelism;
  const LeaderElection& le = c.leader_election;
  out["leaderElection"] = {
      {"leaderElect", le.leader_elect},
      {"leaseDuration", FormatGoDuration(le.lease_duration)},
      {"renewDeadline", FormatGoDuration(le.renew_deadline)},
      {"retryPeriod", FormatGoDuration(le.retry_period)},
      {"resourceLock", le.resource_lock},
      {"resourceName", le.resource_name},
      {"resourceNamespace", le.resource_namespace},
  };
  const ClientConnection& cc = c.client_connection;
  out["clientConnection"] = {
      {"kubeconfig", cc.kubeconfig},
      {"acceptContentTypes", cc.accept_content_types},
      {"contentType", cc.content_type},
      {"qps", cc.qps},
      {"burst", cc.burst},
  };
  out["enableProfiling"] = c.enable_profiling;
  out["enableContentionProfiling"] = c.enable_contention_profiling;
  out["percentageOfNodesToScore"] = c.percentage_of_nodes_to_score;
  if (c.percentage_of_placements_to_score) {
    out["percentageOfPlacementsToScore"] = *c.percentage_of_placements_to_score;
  }
  out["podInitialBackoffSeconds"] = c.pod_initial_backoff_seconds;
  out["podMaxBackoffSeconds"] = c.pod_max_backoff_seconds;
  json profiles = json::array();
  for (const Profile& p : c.profiles) profiles.push_back(ProfileJson(p));
  out["profiles"] = std::move(profiles);
  if (!c.extenders.empty()) {
    json list = json::array();
    for (const Extender& e : c.extenders) list.push_back(ExtenderJson(e));
    out["extenders"] = std::move(list);
  }
  out["delayCacheUntilActive"] = c.delay_cache_until_active;
  return out;
}

std::string WriteConfig(const Configuration& config) {
  std::string out;
  try {
    for (const std::string& w : config.warnings) {
      std::string line = w;
      for (char& ch : line) {
        if (ch == '\n' || ch == '\r') ch = ' ';
      }
      gantry::StrAppend(&out, "# warning: ", line, "\n");
    }
    EmitMap(ToJson(config), 0, &out);
  } catch (const std::exception& e) {
    gantry::StrAppend(&out, "# error: cannot render the configuration: ", e.what(), "\n");
  }
  return out;
}

}  // namespace gantry::config
