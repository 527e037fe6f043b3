// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): load, default,
// validate, merge plugin sets and decode plugin args.
//
// This module is the exception boundary for yaml-cpp and nlohmann::json: no
// exception leaves it. Every error is an absl::Status whose message starts
// with `file:line:column:` and the field path, e.g.
//
//   cfg.yaml:14:9: KubeSchedulerConfiguration: profiles[0].plugins.score.enabled[0].name:
//       plugin "NodeResourcesFitt" not found (registered: ...)
//
// Loading follows upstream kube-scheduler:
//   1. strict decoding (unknown or repeated fields are errors, types checked);
//   2. defaulting (SetDefaults_KubeSchedulerConfiguration: one profile when none
//      is given, default plugin set merged into every profile, default args
//      for every plugin that has them);
//   3. validation (ValidateKubeSchedulerConfiguration, plus the checks the
//      upstream framework makes when it builds a profile and that need no
//      plugin instance).
//
// Gantry deviations (see docs/configuration.md):
//   - the single default profile is named `gantry-scheduler`, and the default
//     Lease is `kube-system/gantry-scheduler` (upstream: `default-scheduler`,
//     `kube-scheduler`), so a default Gantry never takes over the default
//     scheduler's pods or fights it for its lock;
//   - `extenders` are decoded but a non-empty list is an error (Gantry does
//     not call extenders);
//   - negative plugin weights are errors (upstream accepts them silently);
//   - plugins Gantry does not provide yet (the volume plugins,
//     DynamicResources, DefaultPreemption while unregistered) are dropped from
//     the profiles with one warning each, returned in Configuration::warnings.
//
// Contract with the framework (what it must do with a Profile):
//   The configuration cannot know which extension points a plugin implements;
//   upstream expands `multiPoint` when it builds the framework, from the
//   plugin instances. Profile::points holds, for each extension point, the
//   ordered *candidates* after all merge rules (upstream's order: plugins
//   enabled explicitly at the point that also appear in multiPoint, then
//   multiPoint plugins, then the other explicit ones). The framework must:
//     - instantiate each entry of Profile::plugins once (factory + args);
//     - for every point and every candidate in order: if `via_multi_point`,
//       keep it only when the plugin implements that point; otherwise the
//       plugin must implement the point, else fail with
//       `plugin "X" does not extend <Point> plugin`;
//     - require exactly one QueueSort plugin and at least one Bind plugin;
//     - use ProfilePlugin::weight for Score (already 0 -> 1, first of
//       score.enabled then multiPoint.enabled, as upstream) and check that
//       sum(weight * MaxNodeScore) does not overflow int64;
//     - check that all profiles end up with the same QueueSort plugin and
//       args (this module checks the explicit queueSort sets, as upstream's
//       validation does; multiPoint-provided queue sorts need the instances).
#ifndef GANTRY_SRC_CONFIG_CONFIG_H_
#define GANTRY_SRC_CONFIG_CONFIG_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gantry/extension_point.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "src/api/decode.h"

namespace gantry::config {

inline constexpr std::string_view kGroup = "kubescheduler.config.k8s.io";
inline constexpr std::string_view kApiVersion = "kubescheduler.config.k8s.io/v1";
inline constexpr std::string_view kKind = "KubeSchedulerConfiguration";
// Gantry's default profile name (upstream: "default-scheduler").
inline constexpr std::string_view kDefaultSchedulerName = "gantry-scheduler";
// Gantry's default Lease name (upstream: "kube-scheduler").
inline constexpr std::string_view kDefaultLeaseName = "gantry-scheduler";
// Upstream's MaxNodeScore and MaxTotalScore (int64 max).
inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMaxTotalScore = INT64_MAX;

// The extension points (one enum with the framework, gantry/extension_point.h).
using framework::ExtensionPoint;
using framework::kAllExtensionPoints;
using framework::kNumExtensionPoints;

// Where an entry came from in the source file (empty for defaults). Used only
// for error positions; never compared.
struct SourcePath {
  std::vector<api::PathSegment> path;
  bool operator==(const SourcePath&) const { return true; }
};

// `{name, weight}` of a PluginSet.
struct PluginRef {
  std::string name;
  std::optional<int32_t> weight;
  SourcePath source;

  bool operator==(const PluginRef&) const = default;
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<PluginRef> disabled;

  bool empty() const { return enabled.empty() && disabled.empty(); }
  bool operator==(const PluginSet&) const = default;
};

// `profiles[].plugins`: one set per extension point plus multiPoint.
struct Plugins {
  std::array<PluginSet, kNumExtensionPoints> points;
  PluginSet multi_point;

  PluginSet& at(ExtensionPoint p) { return points[static_cast<size_t>(p)]; }
  const PluginSet& at(ExtensionPoint p) const { return points[static_cast<size_t>(p)]; }
  bool operator==(const Plugins&) const = default;
};

// `profiles[].pluginConfig[]`.
struct PluginConfig {
  std::string name;
  // Defaulted and validated args (canonical form, without apiVersion/kind)
  // for plugins whose registration has `default_args`; the args as written
  // for any other plugin (null when absent).
  nlohmann::json args;
  // "NodeResourcesFitArgs" when the registry knows the args type, else "".
  std::string args_kind;
  SourcePath source;

  bool operator==(const PluginConfig&) const = default;
};

// One candidate at one extension point, in run order.
struct PointEntry {
  std::string name;
  // true: enabled through multiPoint (keep only if the plugin implements
  // the point); false: enabled explicitly at this point (must implement it).
  bool via_multi_point = false;

  bool operator==(const PointEntry&) const = default;
};

// How a plugin is enabled at one extension point.
enum class Enablement : uint8_t { kNone, kExplicit, kMultiPoint };

// A plugin the profile needs: instantiate it once with `args`.
struct ProfilePlugin {
  std::string name;
  // Score weight (>= 1): the weight of its score.enabled entry, else of its
  // multiPoint entry; 0 or unset means 1 (upstream). Used only if the plugin
  // implements Score.
  int32_t weight = 1;
  // PlacementScore weight, same rules with placementScore.enabled.
  int32_t placement_score_weight = 1;
  // Args to build it with (see PluginConfig::args); null when none.
  nlohmann::json args;
  // For each extension point, whether it is listed there and how.
  std::array<Enablement, kNumExtensionPoints> points{};

  Enablement at(ExtensionPoint p) const { return points[static_cast<size_t>(p)]; }
  bool operator==(const ProfilePlugin&) const = default;
};

struct Profile {
  std::string scheduler_name;
  std::optional<int32_t> percentage_of_nodes_to_score;       // nullopt: global value
  std::optional<int32_t> percentage_of_placements_to_score;  // nullopt: global value
  // The merged plugin sets (defaults + user), as --write-config-to prints
  // them; plugins Gantry does not provide are already removed.
  Plugins plugins;
  // Explicit entries in file order, then defaulted args of every enabled
  // plugin that has them, sorted by name (upstream order).
  std::vector<PluginConfig> plugin_config;

  // ---- Resolved view for the framework (derived from the two above) ----
  // Every plugin enabled anywhere in the profile, multiPoint order first,
  // then by extension point.
  std::vector<ProfilePlugin> resolved;
  // Per extension point, the ordered candidates (see the header comment).
  std::array<std::vector<PointEntry>, kNumExtensionPoints> points;

  const std::vector<PointEntry>& at(ExtensionPoint p) const {
    return points[static_cast<size_t>(p)];
  }
  const ProfilePlugin* FindPlugin(std::string_view name) const;
  const PluginConfig* FindPluginConfig(std::string_view name) const;
  bool operator==(const Profile&) const = default;
};

// component-base LeaderElectionConfiguration.
struct LeaderElection {
  bool leader_elect = true;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  std::string resource_lock = "leases";
  std::string resource_name = std::string(kDefaultLeaseName);
  std::string resource_namespace = "kube-system";

  bool operator==(const LeaderElection&) const = default;
};

// component-base ClientConnectionConfiguration.
struct ClientConnection {
  std::string kubeconfig;             // "": in-cluster service account
  std::string accept_content_types;   // "": use content_type
  std::string content_type = "application/vnd.kubernetes.protobuf";
  float qps = 50;
  int32_t burst = 100;

  bool operator==(const ClientConnection&) const = default;
};

struct ExtenderTLSConfig {
  bool insecure = false;
  std::string server_name;
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  std::string cert_data;  // base64 as written
  std::string key_data;
  std::string ca_data;

  bool operator==(const ExtenderTLSConfig&) const = default;
};

struct ExtenderManagedResource {
  std::string name;
  bool ignored_by_scheduler = false;

  bool operator==(const ExtenderManagedResource&) const = default;
};

// Decoded for clear errors only: Gantry does not call extenders, and a
// configuration with any extender fails to load.
struct Extender {
  std::string url_prefix;
  std::string filter_verb;
  std::string preempt_verb;
  std::string prioritize_verb;
  int64_t weight = 0;
  std::string bind_verb;
  bool enable_https = false;
  std::optional<ExtenderTLSConfig> tls_config;
  absl::Duration http_timeout = absl::ZeroDuration();
  bool node_cache_capable = false;
  std::vector<ExtenderManagedResource> managed_resources;
  bool ignorable = false;

  bool operator==(const Extender&) const = default;
};

// A loaded, defaulted and validated KubeSchedulerConfiguration.
struct Configuration {
  int32_t parallelism = 16;
  LeaderElection leader_election;
  ClientConnection client_connection;
  bool enable_profiling = true;
  bool enable_contention_profiling = true;
  int32_t percentage_of_nodes_to_score = 0;  // 0: adaptive
  std::optional<int32_t> percentage_of_placements_to_score;  // unset: adaptive
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  std::vector<Profile> profiles;
  std::vector<Extender> extenders;  // always empty after a successful load
  bool delay_cache_until_active = false;

  // Things the operator should know that are not errors (plugins left out,
  // pluginConfig for plugins no profile enables, ...). Log them at startup.
  std::vector<std::string> warnings;

  const Profile* FindProfile(std::string_view scheduler_name) const;
  bool operator==(const Configuration&) const = default;
};

// Loads a YAML or JSON file (JSON when the name ends in .json or the text
// starts with '{').
absl::StatusOr<Configuration> LoadConfigFile(std::string_view path,
                                             const framework::Registry& registry);

// Loads configuration text; `source_name` prefixes error positions.
absl::StatusOr<Configuration> LoadConfigText(std::string_view text, std::string_view source_name,
                                             const framework::Registry& registry);

// The configuration with every default made explicit, when no file is given
// (what `gantry --write-config-to` prints without --config).
absl::StatusOr<Configuration> DefaultConfig(const framework::Registry& registry);

// The defaulted configuration as a kubescheduler.config.k8s.io/v1 object
// (keys sorted, plugin args with apiVersion/kind as upstream writes them).
nlohmann::json ToJson(const Configuration& config);

// ToJson rendered as YAML: what --write-config-to writes. Loading it back
// gives an equal Configuration. Warnings are written as leading comments.
std::string WriteConfig(const Configuration& config);

// Go time.Duration text ("1h2m3.5s", "300ms", "-1.5h"), as metav1.Duration.
absl::StatusOr<absl::Duration> ParseGoDuration(std::string_view text);
// Go's Duration.String(): "15s", "1m30s", "1h0m0s", "500ms", "0s".
std::string FormatGoDuration(absl::Duration d);

}  // namespace gantry::config

#endif  // GANTRY_SRC_CONFIG_CONFIG_H_
