// KubeSchedulerConfiguration loading: defaults, merge rules, multiPoint
// expansion, weights, profiles, plugin args, validation errors with their
// positions, and the --write-config-to round trip.
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/config/config.h"
#include "test/unit/config/test_registry.h"

namespace gantry::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TestRegistry;

constexpr std::string_view kHeader =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

absl::StatusOr<Configuration> Load(std::string_view body, bool with_pending = false) {
  static const framework::Registry registry = TestRegistry(false);
  static const framework::Registry registry_full = TestRegistry(true);
  return LoadConfigText(std::string(kHeader) + std::string(body), "cfg.yaml",
                        with_pending ? registry_full : registry);
}

std::vector<std::string> Names(const std::vector<PluginRef>& refs) {
  std::vector<std::string> out;
  for (const PluginRef& r : refs) out.push_back(r.name);
  return out;
}

// "Name" for explicit entries, "Name*" for multiPoint ones.
std::vector<std::string> Candidates(const Profile& p, ExtensionPoint point) {
  std::vector<std::string> out;
  for (const PointEntry& e : p.at(point)) out.push_back(e.name + (e.via_multi_point ? "*" : ""));
  return out;
}

const std::vector<std::string> kDefaultsAvailable = {
    "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration",
    "NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
    "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder"};

const std::vector<std::string> kDefaultsAll = {
    "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration",
    "NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
    "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources",
    "DefaultPreemption", "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder"};

// ---- Defaults -------------------------------------------------------------------

TEST(ConfigDefaults, EmptyConfigGetsUpstreamDefaultsAndGantryProfileName) {
  auto c = Load("");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->parallelism, 16);
  EXPECT_EQ(c->percentage_of_nodes_to_score, 0);
  EXPECT_FALSE(c->percentage_of_placements_to_score.has_value());
  EXPECT_EQ(c->pod_initial_backoff_seconds, 1);
  EXPECT_EQ(c->pod_max_backoff_seconds, 10);
  EXPECT_TRUE(c->enable_profiling);
  EXPECT_TRUE(c->enable_contention_profiling);
  EXPECT_FALSE(c->delay_cache_until_active);
  EXPECT_TRUE(c->extenders.empty());

  const LeaderElection& le = c->leader_election;
  EXPECT_TRUE(le.leader_elect);
  EXPECT_EQ(le.lease_duration, absl::Seconds(15));
  EXPECT_EQ(le.renew_deadline, absl::Seconds(10));
  EXPECT_EQ(le.retry_period, absl::Seconds(2));
  EXPECT_EQ(le.resource_lock, "leases");
  EXPECT_EQ(le.resource_name, "gantry-scheduler");
  EXPECT_EQ(le.resource_namespace, "kube-system");

  const ClientConnection& cc = c->client_connection;
  EXPECT_EQ(cc.kubeconfig, "");
  EXPECT_EQ(cc.accept_content_types, "");
  EXPECT_EQ(cc.content_type, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(cc.qps, 50.0f);
  EXPECT_EQ(cc.burst, 100);

  ASSERT_EQ(c->profiles.size(), 1u);
  const Profile& p = c->profiles[0];
  EXPECT_EQ(p.scheduler_name, "gantry-scheduler");
  EXPECT_FALSE(p.percentage_of_nodes_to_score.has_value());
  EXPECT_EQ(Names(p.plugins.multi_point.enabled), kDefaultsAvailable);
  for (ExtensionPoint point : kAllExtensionPoints) EXPECT_TRUE(p.plugins.at(point).empty());

  // Weights of the default score plugins; others default to 1.
  auto weight = [&](std::string_view name) { return p.FindPlugin(name)->weight; };
  EXPECT_EQ(weight("TaintToleration"), 3);
  EXPECT_EQ(weight("NodeAffinity"), 2);
  EXPECT_EQ(weight("NodeResourcesFit"), 1);
  EXPECT_EQ(weight("PodTopologySpread"), 2);
  EXPECT_EQ(weight("InterPodAffinity"), 2);
  EXPECT_EQ(weight("NodeResourcesBalancedAllocation"), 1);
  EXPECT_EQ(weight("ImageLocality"), 1);
  EXPECT_EQ(weight("DefaultBinder"), 1);

  // Every default is a multiPoint candidate at every point.
  for (ExtensionPoint point : kAllExtensionPoints) {
    ASSERT_EQ(p.at(point).size(), kDefaultsAvailable.size());
    for (const PointEntry& e : p.at(point)) EXPECT_TRUE(e.via_multi_point);
  }
  EXPECT_EQ(p.FindPlugin("NodeName")->at(ExtensionPoint::kFilter), Enablement::kMultiPoint);

  // Default args for the plugins that have them, sorted by name.
  ASSERT_EQ(p.plugin_config.size(), 2u);
  EXPECT_EQ(p.plugin_config[0].name, "InterPodAffinity");
  EXPECT_EQ(p.plugin_config[0].args_kind, "InterPodAffinityArgs");
  EXPECT_EQ(p.plugin_config[0].args["hardPodAffinityWeight"], 1);
  EXPECT_EQ(p.plugin_config[1].name, "NodeResourcesFit");
  EXPECT_EQ(p.plugin_config[1].args["scoringStrategy"]["type"], "LeastAllocated");
  EXPECT_EQ(p.FindPlugin("NodeResourcesFit")->args, p.plugin_config[1].args);
  EXPECT_TRUE(p.FindPlugin("NodeName")->args.is_null());
}

TEST(ConfigDefaults, PendingPluginsAreLeftOutWithOneWarningEach) {
  auto c = Load(R"(
profiles:
- schedulerName: a
  plugins:
    filter:
      enabled:
      - name: VolumeBinding
- schedulerName: b
)");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->warnings.size(), testing::PendingPluginNames().size());
  for (std::string_view name : testing::PendingPluginNames()) {
    int count = 0;
    for (const std::string& w : c->warnings) {
      if (w.find(gantry::StrCat("plugin \"", name, "\"")) != std::string::npos) ++count;
    }
    EXPECT_EQ(count, 1) << name;
  }
  EXPECT_THAT(c->warnings[0], HasSubstr("left out of profile(s) \"a\", \"b\""));
  for (const Profile& p : c->profiles) {
    EXPECT_EQ(p.FindPlugin("VolumeBinding"), nullptr);
    EXPECT_TRUE(p.plugins.at(ExtensionPoint::kFilter).enabled.empty());
  }
}

TEST(ConfigDefaults, AllDefaultsWhenTheRegistryHasThem) {
  auto c = Load("", /*with_pending=*/true);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->warnings.empty());
  EXPECT_EQ(Names(c->profiles[0].plugins.multi_point.enabled), kDefaultsAll);
}

TEST(ConfigDefaults, ContentionProfilingFollowsProfiling) {
  auto off = Load("enableProfiling: false\n");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->enable_profiling);
  EXPECT_FALSE(off->enable_contention_profiling);
  auto explicit_on = Load("enableProfiling: false\nenableContentionProfiling: true\n");
  ASSERT_TRUE(explicit_on.ok());
  EXPECT_TRUE(explicit_on->enable_contention_profiling);
}

TEST(ConfigDefaults, ZeroValuesAreDefaultedAsUpstream) {
  // Upstream defaults qps/burst/durations when they are zero, not only when absent.
  auto c = Load(R"(
clientConnection: {qps: 0, burst: 0, contentType: ""}
leaderElection: {leaseDuration: 0s, renewDeadline: "0", retryPeriod: 0s, resourceLock: ""}
)");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->client_connection.qps, 50.0f);
  EXPECT_EQ(c->client_connection.burst, 100);
  EXPECT_EQ(c->client_connection.content_type, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(c->leader_election.lease_duration, absl::Seconds(15));
  EXPECT_EQ(c->leader_election.renew_deadline, absl::Seconds(10));
  EXPECT_EQ(c->leader_election.resource_lock, "leases");
}

TEST(ConfigDefaults, SingleUnnamedProfileOnly) {
  auto c = Load("profiles:\n- percentageOfNodesToScore: 40\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->profiles[0].scheduler_name, "gantry-scheduler");
  EXPECT_EQ(c->profiles[0].percentage_of_nodes_to_score, 40);
  // With two profiles no name is defaulted.
  auto two = Load("profiles:\n- {}\n- schedulerName: b\n");
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.status().message(), HasSubstr("cfg.yaml:4:3: KubeSchedulerConfiguration: "
                                                "profiles[0].schedulerName: Required value"));
}

// ---- Merge rules and multiPoint ----------------------------------------------------------

struct MergeCase {
  std::string name;
  std::string plugins;  // YAML of profiles[0].plugins, indented by 4
  std::vector<std::string> multi_point;
  ExtensionPoint point;
  std::vector<std::string> candidates;  // at `point`; "X*" = via multiPoint
};

class MergeTest : public ::testing::TestWithParam<MergeCase> {};

TEST_P(MergeTest, Resolves) {
  const MergeCase& tc = GetParam();
  auto c = Load("profiles:\n- schedulerName: s\n  plugins:\n" + tc.plugins);
  ASSERT_TRUE(c.ok()) << c.status();
  const Profile& p = c->profiles[0];
  EXPECT_EQ(Names(p.plugins.multi_point.enabled), tc.multi_point);
  EXPECT_EQ(Candidates(p, tc.point), tc.candidates);
}

std::vector<std::string> With(std::vector<std::string> base, std::vector<std::string> extra) {
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}
std::vector<std::string> Without(std::vector<std::string> base, std::string_view name) {
  std::erase(base, std::string(name));
  return base;
}
std::vector<std::string> Star(std::vector<std::string> base) {
  for (std::string& s : base) s += "*";
  return base;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, MergeTest,
    ::testing::Values(
        MergeCase{"CustomMultiPointPluginIsAppended",
                  "    multiPoint:\n      enabled:\n      - name: MyPlugin\n",
                  With(kDefaultsAvailable, {"MyPlugin"}), ExtensionPoint::kFilter,
                  Star(With(kDefaultsAvailable, {"MyPlugin"}))},
        MergeCase{"EnabledDefaultReplacesItInPlace",
                  "    multiPoint:\n      enabled:\n      - name: MyPlugin\n"
                  "      - name: NodeName\n        weight: 7\n",
                  With(kDefaultsAvailable, {"MyPlugin"}), ExtensionPoint::kFilter,
                  Star(With(kDefaultsAvailable, {"MyPlugin"}))},
        MergeCase{"DisabledStarDropsAllDefaults",
                  "    multiPoint:\n      enabled:\n      - name: PrioritySort\n"
                  "      - name: DefaultBinder\n      disabled:\n      - name: '*'\n",
                  {"PrioritySort", "DefaultBinder"}, ExtensionPoint::kBind,
                  {"PrioritySort*", "DefaultBinder*"}},
        MergeCase{"DisabledDefaultIsRemoved",
                  "    multiPoint:\n      disabled:\n      - name: ImageLocality\n",
                  Without(kDefaultsAvailable, "ImageLocality"), ExtensionPoint::kScore,
                  Star(Without(kDefaultsAvailable, "ImageLocality"))},
        MergeCase{"EnabledBeatsDisabledInOneSet",
                  "    multiPoint:\n      enabled:\n      - name: ImageLocality\n"
                  "      disabled:\n      - name: ImageLocality\n",
                  With(Without(kDefaultsAvailable, "ImageLocality"), {"ImageLocality"}),
                  ExtensionPoint::kScore,
                  Star(With(Without(kDefaultsAvailable, "ImageLocality"), {"ImageLocality"}))},
        MergeCase{"DisabledAtOnePointOnly",
                  "    score:\n      disabled:\n      - name: ImageLocality\n",
                  kDefaultsAvailable, ExtensionPoint::kScore,
                  Star(Without(kDefaultsAvailable, "ImageLocality"))},
        MergeCase{"DisabledAtOnePointKeepsOtherPoints",
                  "    score:\n      disabled:\n      - name: ImageLocality\n",
                  kDefaultsAvailable, ExtensionPoint::kPreScore, Star(kDefaultsAvailable)},
        MergeCase{"DisabledStarAtPointSkipsMultiPoint",
                  "    score:\n      disabled:\n      - name: '*'\n      enabled:\n"
                  "      - name: ImageLocality\n",
                  kDefaultsAvailable, ExtensionPoint::kScore, {"ImageLocality"}},
        MergeCase{"SpecificPointOverridesMultiPointAndRunsFirst",
                  "    filter:\n      enabled:\n      - name: CustomPlugin1\n      - name: NodeName\n",
                  kDefaultsAvailable, ExtensionPoint::kFilter,
                  With(With({"NodeName"}, Star(Without(kDefaultsAvailable, "NodeName"))),
                       {"CustomPlugin1"})},
        MergeCase{"EnabledBeatsDisabledAtAPoint",
                  "    filter:\n      enabled:\n      - name: NodeName\n      disabled:\n"
                  "      - name: NodeName\n",
                  kDefaultsAvailable, ExtensionPoint::kFilter,
                  With(Star(Without(kDefaultsAvailable, "NodeName")), {"NodeName"})}),
    [](const ::testing::TestParamInfo<MergeCase>& info) { return info.param.name; });

TEST(ConfigMerge, ReferenceExampleScoreOrderAndWeights) {
  auto c = LoadConfigFile("test/unit/config/testdata/reference-example.yaml", TestRegistry());
  ASSERT_TRUE(c.ok()) << c.status();
  const Profile& p = c->profiles[0];
  EXPECT_EQ(p.scheduler_name, "my-scheduler");
  EXPECT_EQ(c->leader_election.resource_name, "my-scheduler");
  // Score: the explicitly re-configured NodeResourcesBalancedAllocation runs
  // first, ImageLocality is off, MyPlugin comes through multiPoint.
  std::vector<std::string> score = {"NodeResourcesBalancedAllocation"};
  for (const std::string& n : With(kDefaultsAvailable, {"MyPlugin"})) {
    if (n != "NodeResourcesBalancedAllocation" && n != "ImageLocality") score.push_back(n + "*");
  }
  EXPECT_EQ(Candidates(p, ExtensionPoint::kScore), score);
  const ProfilePlugin* balanced = p.FindPlugin("NodeResourcesBalancedAllocation");
  EXPECT_EQ(balanced->weight, 2);
  EXPECT_EQ(balanced->at(ExtensionPoint::kScore), Enablement::kExplicit);
  EXPECT_EQ(balanced->at(ExtensionPoint::kPreScore), Enablement::kMultiPoint);
  EXPECT_EQ(p.FindPlugin("ImageLocality")->at(ExtensionPoint::kScore), Enablement::kNone);
  EXPECT_EQ(p.FindPlugin("MyPlugin")->at(ExtensionPoint::kFilter), Enablement::kMultiPoint);
  // Args: the explicit NodeResourcesFit args, defaulted InterPodAffinity args;
  // DefaultPreemption is not registered: dropped with a warning, args kept.
  EXPECT_EQ(p.FindPlugin("NodeResourcesFit")->args["scoringStrategy"]["type"], "MostAllocated");
  ASSERT_NE(p.FindPluginConfig("DefaultPreemption"), nullptr);
  EXPECT_EQ(p.FindPluginConfig("DefaultPreemption")->args["minCandidateNodesAbsolute"], 100);
  EXPECT_EQ(p.FindPluginConfig("InterPodAffinity")->args["hardPodAffinityWeight"], 1);
  EXPECT_EQ(c->warnings.size(), testing::PendingPluginNames().size());
}

TEST(ConfigMerge, MultiPointWeightsAndSpecificWeights) {
  auto c = LoadConfigFile("test/unit/config/testdata/multipoint.yaml", TestRegistry());
  ASSERT_TRUE(c.ok()) << c.status();
  const Profile& p = c->profiles[0];
  EXPECT_EQ(p.FindPlugin("NodeAffinity")->weight, 5);  // replaced in place in multiPoint
  EXPECT_EQ(p.FindPlugin("MyPlugin")->weight, 3);       // score.enabled beats multiPoint
  EXPECT_EQ(p.FindPlugin("TaintToleration")->at(ExtensionPoint::kPreScore), Enablement::kNone);
  EXPECT_EQ(p.FindPlugin("TaintToleration")->at(ExtensionPoint::kScore), Enablement::kMultiPoint);
  // NodeAffinity keeps its default position.
  EXPECT_EQ(p.plugins.multi_point.enabled[5].name, "NodeAffinity");
  EXPECT_EQ(p.plugins.multi_point.enabled[5].weight, 5);
}

TEST(ConfigMerge, CustomQueueSort) {
  auto c = LoadConfigFile("test/unit/config/testdata/custom-queue-sort.yaml", TestRegistry());
  ASSERT_TRUE(c.ok()) << c.status();
  const Profile& p = c->profiles[0];
  EXPECT_EQ(p.FindPlugin("PrioritySort"), nullptr);
  EXPECT_EQ(Candidates(p, ExtensionPoint::kQueueSort).back(), "CustomPlugin2*");
  EXPECT_EQ(p.FindPlugin("NodeName")->at(ExtensionPoint::kFilter), Enablement::kNone);
  EXPECT_EQ(p.FindPlugin("NodeAffinity")->weight, 4);
  EXPECT_EQ(p.FindPlugin("CustomPlugin1")->weight, 3);
  EXPECT_EQ(p.FindPlugin("CustomPlugin2")->weight, 1);
}

TEST(ConfigMerge, ZeroWeightMeansOne) {
  auto c = Load("profiles:\n- plugins:\n    score:\n      enabled:\n      - name: MyPlugin\n"
                "        weight: 0\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->profiles[0].FindPlugin("MyPlugin")->weight, 1);
  EXPECT_EQ(c->profiles[0].FindPlugin("MyPlugin")->at(ExtensionPoint::kScore), Enablement::kExplicit);
}

TEST(ConfigMerge, WorkloadExtensionPoints) {
  auto c = Load(R"(
percentageOfPlacementsToScore: 20
profiles:
- percentageOfPlacementsToScore: 50
  plugins:
    placementScore:
      enabled:
      - name: CustomPlugin1
        weight: 4
    placementGenerate:
      enabled:
      - name: CustomPlugin2
)");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->percentage_of_placements_to_score, 20);
  const Profile& p = c->profiles[0];
  EXPECT_EQ(p.percentage_of_placements_to_score, 50);
  EXPECT_EQ(p.FindPlugin("CustomPlugin1")->placement_score_weight, 4);
  EXPECT_EQ(p.FindPlugin("CustomPlugin1")->weight, 1);
  EXPECT_EQ(Candidates(p, ExtensionPoint::kPlacementGenerate),
            With(Star(kDefaultsAvailable), {"CustomPlugin2"}));
}

// ---- Profiles ---------------------------------------------------------------------------

TEST(ConfigProfiles, MultipleProfilesFixture) {
  auto c = LoadConfigFile("test/unit/config/testdata/multiple-profiles.yaml", TestRegistry());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->profiles.size(), 2u);
  EXPECT_EQ(c->profiles[0].scheduler_name, "default-scheduler");
  EXPECT_EQ(c->profiles[1].scheduler_name, "no-scoring-scheduler");
  EXPECT_TRUE(c->profiles[1].at(ExtensionPoint::kScore).empty());
  EXPECT_TRUE(c->profiles[1].at(ExtensionPoint::kPreScore).empty());
  EXPECT_EQ(c->profiles[1].at(ExtensionPoint::kFilter).size(), kDefaultsAvailable.size());
  EXPECT_NE(c->FindProfile("no-scoring-scheduler"), nullptr);
  EXPECT_EQ(c->FindProfile("gantry-scheduler"), nullptr);
}

TEST(ConfigProfiles, SecondSchedulerFixture) {
  auto c = LoadConfigFile("test/unit/config/testdata/second-scheduler.yaml", TestRegistry());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->profiles[0].scheduler_name, "my-scheduler");
  EXPECT_FALSE(c->leader_election.leader_elect);
}

TEST(ConfigProfiles, MinimalFixtureAndJson) {
  auto minimal = LoadConfigFile("test/unit/config/testdata/minimal.yaml", TestRegistry());
  ASSERT_TRUE(minimal.ok()) << minimal.status();
  EXPECT_EQ(minimal->client_connection.kubeconfig, "/etc/srv/kubernetes/kube-scheduler/kubeconfig");
  auto json = LoadConfigFile("test/unit/config/testdata/full.json", TestRegistry());
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->parallelism, 8);
  EXPECT_EQ(json->leader_election.lease_duration, absl::Seconds(30));
  EXPECT_EQ(json->leader_election.resource_namespace, "gantry-system");
  EXPECT_EQ(json->client_connection.content_type, "application/json");
  EXPECT_EQ(json->profiles[0].percentage_of_nodes_to_score, 30);
  EXPECT_EQ(json->profiles[0].FindPlugin("InterPodAffinity")->args["hardPodAffinityWeight"], 5);
}

// ---- Plugin args ----------------------------------------------------------------------------

TEST(ConfigArgs, ApiVersionAndKindInArgsAreAccepted) {
  auto c = Load(R"(
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      scoringStrategy:
        type: MostAllocated
)");
  ASSERT_TRUE(c.ok()) << c.status();
  const nlohmann::json& args = c->profiles[0].FindPlugin("NodeResourcesFit")->args;
  EXPECT_FALSE(args.contains("kind"));
  EXPECT_EQ(args["scoringStrategy"]["type"], "MostAllocated");
  EXPECT_EQ(args["scoringStrategy"]["resources"].size(), 2u);
}

TEST(ConfigArgs, UnusedAndUnknownPluginConfigWarns) {
  auto c = Load(R"(
profiles:
- pluginConfig:
  - name: OutOfTree
    args: {anything: [1, 2]}
  - name: MyPlugin
    args: {x: 1}
)");
  ASSERT_TRUE(c.ok()) << c.status();
  const Profile& p = c->profiles[0];
  EXPECT_EQ(p.FindPluginConfig("OutOfTree")->args["anything"][1], 2);
  EXPECT_EQ(p.FindPluginConfig("MyPlugin")->args["x"], 1);
  int ignored = 0;
  for (const std::string& w : c->warnings) {
    if (w.find("pluginConfig for plugin \"OutOfTree\" is ignored") != std::string::npos) ++ignored;
    if (w.find("\"MyPlugin\" is ignored") != std::string::npos) ++ignored;
  }
  EXPECT_EQ(ignored, 2);
}

TEST(ConfigArgs, ArgsOfPluginWithoutDefaulterPassThrough) {
  auto c = Load(R"(
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: MyPlugin
  pluginConfig:
  - name: MyPlugin
    args: {mode: fast}
)");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->profiles[0].FindPlugin("MyPlugin")->args["mode"], "fast");
}

// ---- Errors, each with its position ---------------------------------------------------------

struct ErrorCase {
  std::string name;
  std::string body;   // after the apiVersion/kind header (lines 1-2)
  std::string want;   // substring of the message, incl. "cfg.yaml:L:C: "
};

class ErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorTest, FailsWithPosition) {
  const ErrorCase& tc = GetParam();
  auto c = Load(tc.body);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr(tc.want));
}

INSTANTIATE_TEST_SUITE_P(
    Validation, ErrorTest,
    ::testing::Values(
        ErrorCase{"Parallelism", "parallelism: 0\n",
                  "cfg.yaml:3:14: KubeSchedulerConfiguration: parallelism: Invalid value: 0: should "
                  "be an integer value greater than zero"},
        ErrorCase{"ParallelismType", "parallelism: \"16\"\n",
                  "cfg.yaml:3:14: KubeSchedulerConfiguration: parallelism: expected an integer, got string"},
        ErrorCase{"ParallelismInt32", "parallelism: 4294967296\n", "cfg.yaml:3:14:"},
        ErrorCase{"Percentage", "percentageOfNodesToScore: 101\n",
                  "cfg.yaml:3:27: KubeSchedulerConfiguration: percentageOfNodesToScore: Invalid "
                  "value: 101: not in valid range [0-100]"},
        ErrorCase{"ProfilePercentage", "profiles:\n- percentageOfNodesToScore: -1\n",
                  "cfg.yaml:4:29: KubeSchedulerConfiguration: profiles[0].percentageOfNodesToScore: "
                  "Invalid value: -1: not in valid range [0-100]"},
        ErrorCase{"PlacementPercentage", "percentageOfPlacementsToScore: 200\n",
                  "cfg.yaml:3:32: KubeSchedulerConfiguration: percentageOfPlacementsToScore: Invalid"},
        ErrorCase{"InitialBackoff", "podInitialBackoffSeconds: 0\n",
                  "cfg.yaml:3:27: KubeSchedulerConfiguration: podInitialBackoffSeconds: Invalid "
                  "value: 0: must be greater than 0"},
        ErrorCase{"MaxBackoff", "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
                  "cfg.yaml:4:23: KubeSchedulerConfiguration: podMaxBackoffSeconds: Invalid value: 4: "
                  "must be greater than or equal to PodInitialBackoffSeconds"},
        ErrorCase{"BadDuration", "leaderElection:\n  leaseDuration: 15\n",
                  "cfg.yaml:4:18: KubeSchedulerConfiguration: leaderElection.leaseDuration: expected "
                  "a string, got number"},
        ErrorCase{"DurationUnit", "leaderElection:\n  retryPeriod: 2x\n",
                  "cfg.yaml:4:16: KubeSchedulerConfiguration: leaderElection.retryPeriod: Invalid "
                  "value: \"2x\": time: unknown unit \"x\" in duration \"2x\""},
        ErrorCase{"LeaseNotAboveRenew", "leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n",
                  "cfg.yaml:4:18: KubeSchedulerConfiguration: leaderElection.leaseDuration: Invalid "
                  "value: \"10s\": must be greater than `RenewDeadline`"},
        ErrorCase{"NegativeRetry", "leaderElection:\n  retryPeriod: -1s\n",
                  "cfg.yaml:4:16: KubeSchedulerConfiguration: leaderElection.retryPeriod: Invalid "
                  "value: \"-1s\": must be greater than zero"},
        ErrorCase{"ResourceLock", "leaderElection:\n  resourceLock: endpointsleases\n",
                  "cfg.yaml:4:17: KubeSchedulerConfiguration: leaderElection.resourceLock: Invalid "
                  "value: \"endpointsleases\": resourceLock value must be \"leases\""},
        ErrorCase{"Burst", "clientConnection:\n  burst: -1\n",
                  "cfg.yaml:4:10: KubeSchedulerConfiguration: clientConnection.burst: Invalid value: "
                  "-1: must be non-negative"},
        ErrorCase{"Qps", "clientConnection:\n  qps: -5\n",
                  "cfg.yaml:4:8: KubeSchedulerConfiguration: clientConnection.qps: Invalid value: -5: "
                  "must be non-negative"},
        ErrorCase{"Extenders", "extenders:\n- urlPrefix: http://127.0.0.1:8888/\n  filterVerb: filter\n",
                  "cfg.yaml:4:3: KubeSchedulerConfiguration: extenders[0]: Forbidden: Gantry does not "
                  "support scheduler extenders"},
        ErrorCase{"ExtenderUnknownField", "extenders:\n- urlPrefix: x\n  verb: filter\n",
                  "cfg.yaml:5:9: KubeSchedulerConfiguration: extenders[0].verb: unknown field \"verb\""},
        ErrorCase{"UnknownTopLevel", "parallelism: 4\nschedulerName: x\n",
                  "cfg.yaml:4:16: KubeSchedulerConfiguration: schedulerName: unknown field "
                  "\"schedulerName\""},
        ErrorCase{"UnknownNested", "leaderElection:\n  leaderElection: true\n",
                  "cfg.yaml:4:19: KubeSchedulerConfiguration: leaderElection.leaderElection: unknown field"},
        ErrorCase{"UnknownExtensionPoint",
                  "profiles:\n- plugins:\n    scores:\n      enabled:\n      - name: MyPlugin\n",
                  "cfg.yaml:6:7: KubeSchedulerConfiguration: profiles[0].plugins.scores: unknown field "
                  "\"scores\""},
        ErrorCase{"UnknownPluginField",
                  "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: MyPlugin\n"
                  "        wieght: 2\n",
                  "cfg.yaml:8:17: KubeSchedulerConfiguration: profiles[0].plugins.score.enabled[0].wieght: "
                  "unknown field \"wieght\""},
        ErrorCase{"UnknownPluginConfigField", "profiles:\n- pluginConfig:\n  - name: X\n    arg: {}\n",
                  "cfg.yaml:6:10: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].arg: unknown "
                  "field \"arg\""},
        ErrorCase{"DuplicateKey", "parallelism: 4\nparallelism: 5\n",
                  "KubeSchedulerConfiguration: parallelism: duplicate field \"parallelism\""},
        ErrorCase{"HealthzBindAddress", "healthzBindAddress: 0.0.0.0:10251\n",
                  "cfg.yaml:3:21: KubeSchedulerConfiguration: healthzBindAddress: unknown field "
                  "\"healthzBindAddress\": it was removed from kubescheduler.config.k8s.io/v1; the "
                  "health and metrics endpoints are served over HTTPS on the --secure-port"},
        ErrorCase{"MetricsBindAddress", "metricsBindAddress: 0.0.0.0:10251\n",
                  "metricsBindAddress: unknown field \"metricsBindAddress\": it was removed from "
                  "kubescheduler.config.k8s.io/v1; the health and metrics endpoints are served over "
                  "HTTPS on the --secure-port (default 10259) and --bind-address flags"},
        ErrorCase{"UnknownPlugin",
                  "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodeNmae\n",
                  "cfg.yaml:7:15: KubeSchedulerConfiguration: profiles[0].plugins.filter.enabled[0].name: "
                  "plugin \"NodeNmae\" not found (registered: "},
        ErrorCase{"UnknownMultiPointPlugin",
                  "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: Foo\n",
                  "cfg.yaml:7:15: KubeSchedulerConfiguration: profiles[0].plugins.multiPoint.enabled[0]"
                  ".name: plugin \"Foo\" not found"},
        ErrorCase{"RemovedPlugin",
                  "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n",
                  "cfg.yaml:7:9: KubeSchedulerConfiguration: profiles[0].plugins.filter.enabled[0]: "
                  "Invalid value: \"EBSLimits\": was invalid in version \"kubescheduler.config.k8s.io/v1\""},
        ErrorCase{"EmptyPluginName",
                  "profiles:\n- plugins:\n    filter:\n      enabled:\n      - weight: 1\n",
                  "profiles[0].plugins.filter.enabled[0].name: Required value"},
        ErrorCase{"NegativeWeight",
                  "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: MyPlugin\n"
                  "        weight: -2\n",
                  "cfg.yaml:8:17: KubeSchedulerConfiguration: profiles[0].plugins.score.enabled[0].weight: "
                  "Invalid value: -2: must be greater than or equal to 0"},
        ErrorCase{"DuplicateMultiPoint",
                  "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: MyPlugin\n"
                  "      - name: MyPlugin\n",
                  "cfg.yaml:8:9: KubeSchedulerConfiguration: profiles[0].plugins.multiPoint.enabled[1]: "
                  "Duplicate value: \"MyPlugin\": plugin is "
                  "enabled twice at multiPoint"},
        ErrorCase{"DuplicateAtPoint",
                  "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodeName\n"
                  "      - name: NodeName\n",
                  "cfg.yaml:8:9: KubeSchedulerConfiguration: profiles[0].plugins.filter.enabled[1]: "
                  "Duplicate value: \"NodeName\": plugin is enabled twice at filter"},
        ErrorCase{"DuplicateSchedulerName", "profiles:\n- schedulerName: a\n- schedulerName: a\n",
                  "cfg.yaml:5:18: KubeSchedulerConfiguration: profiles[1].schedulerName: Duplicate "
                  "value: \"a\" (also profiles[0].schedulerName)"},
        ErrorCase{"QueueSortDiffers",
                  "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
                  "      enabled:\n      - name: CustomQueueSort\n",
                  "cfg.yaml:8:7: KubeSchedulerConfiguration: profiles[1].plugins.queueSort: Invalid "
                  "value: must be the same for all profiles"},
        ErrorCase{"TwoQueueSorts",
                  "profiles:\n- plugins:\n    queueSort:\n      enabled:\n      - name: PrioritySort\n"
                  "      - name: CustomQueueSort\n",
                  "profiles[0].plugins.queueSort.enabled: Invalid value: 2: only one queue sort plugin "
                  "can be enabled"},
        ErrorCase{"QueueSortArgsDiffer",
                  "profiles:\n- schedulerName: a\n  plugins: {queueSort: {enabled: [{name: MyPlugin}]}}\n"
                  "  pluginConfig: [{name: MyPlugin, args: {x: 1}}]\n"
                  "- schedulerName: b\n  plugins: {queueSort: {enabled: [{name: MyPlugin}]}}\n"
                  "  pluginConfig: [{name: MyPlugin, args: {x: 2}}]\n",
                  "cfg.yaml:9:41: KubeSchedulerConfiguration: profiles[1].pluginConfig[0].args: Invalid "
                  "value: queueSort must be the same for all profiles"},
        ErrorCase{"ArgsFieldError",
                  "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                  "      scoringStrategy:\n        type: Fancy\n",
                  "cfg.yaml:8:15: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args."
                  "scoringStrategy.type: NodeResourcesFitArgs: Unsupported value: \"Fancy\""},
        ErrorCase{"ArgsNestedError",
                  "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                  "      scoringStrategy:\n        resources:\n        - name: cpu\n          weight: 101\n",
                  "cfg.yaml:10:19: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args."
                  "scoringStrategy.resources[0].weight: NodeResourcesFitArgs: Invalid value: 101"},
        ErrorCase{"ArgsWrongKind",
                  "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
                  "      kind: NodeResourcesFitArgs\n",
                  "cfg.yaml:7:13: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.kind: "
                  "args for plugin InterPodAffinity were not of type kubescheduler.config.k8s.io/"
                  "InterPodAffinityArgs, got NodeResourcesFitArgs"},
        ErrorCase{"ArgsNotAnObject",
                  "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: [1]\n",
                  "cfg.yaml:6:11: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args: "
                  "InterPodAffinityArgs: expected an object, got array"},
        ErrorCase{"DuplicatePluginConfig",
                  "profiles:\n- pluginConfig:\n  - name: MyPlugin\n  - name: MyPlugin\n",
                  "cfg.yaml:6:5: KubeSchedulerConfiguration: profiles[0].pluginConfig[1]: Duplicate "
                  "value: \"MyPlugin\""},
        ErrorCase{"RemovedPluginConfig", "profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n",
                  "profiles[0].pluginConfig[0]: Invalid value: \"GCEPDLimits\": was invalid"},
        ErrorCase{"ProfilesNotAList", "profiles: {schedulerName: a}\n",
                  "cfg.yaml:3:11: KubeSchedulerConfiguration: profiles: expected an array, got object"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

TEST(ConfigErrors, AllValidationErrorsAreReported) {
  auto c = Load("parallelism: 0\npodInitialBackoffSeconds: 0\n");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("parallelism: Invalid value: 0"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("podInitialBackoffSeconds: Invalid value: 0"));
}

struct TypeMetaCase {
  std::string name;
  std::string text;
  std::string want;
};

class TypeMetaTest : public ::testing::TestWithParam<TypeMetaCase> {};

TEST_P(TypeMetaTest, Rejected) {
  auto c = LoadConfigText(GetParam().text, "cfg.yaml", TestRegistry());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr(GetParam().want));
}

INSTANTIATE_TEST_SUITE_P(
    ApiVersionAndKind, TypeMetaTest,
    ::testing::Values(
        TypeMetaCase{"V1beta3",
                     "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
                     "cfg.yaml:1:13: KubeSchedulerConfiguration: apiVersion: Unsupported value: "
                     "\"kubescheduler.config.k8s.io/v1beta3\": this version is no longer served"},
        TypeMetaCase{"OtherGroup", "apiVersion: componentconfig/v1alpha1\nkind: KubeSchedulerConfiguration\n",
                     "apiVersion: Unsupported value: \"componentconfig/v1alpha1\": supported values: "
                     "\"kubescheduler.config.k8s.io/v1\""},
        TypeMetaCase{"MissingApiVersion", "kind: KubeSchedulerConfiguration\n",
                     "apiVersion: Required value: must be \"kubescheduler.config.k8s.io/v1\""},
        TypeMetaCase{"WrongKind", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeProxyConfiguration\n",
                     "cfg.yaml:2:7: KubeSchedulerConfiguration: kind: Unsupported value: "
                     "\"KubeProxyConfiguration\""},
        TypeMetaCase{"NotAnObject", "- a\n- b\n", "expected a KubeSchedulerConfiguration object, got array"},
        TypeMetaCase{"Empty", "# nothing\n", "cfg.yaml: the configuration file is empty"},
        TypeMetaCase{"TwoDocuments",
                     "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n---\n"
                     "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
                     "cfg.yaml:4:1: a configuration file holds one KubeSchedulerConfiguration document"},
        TypeMetaCase{"YamlSyntax", "apiVersion: [\n", "cfg.yaml:"}),
    [](const ::testing::TestParamInfo<TypeMetaCase>& info) { return info.param.name; });

TEST(ConfigErrors, JsonPositions) {
  auto c = LoadConfigText(
      "{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\", \"kind\": \"KubeSchedulerConfiguration\",\n"
      " \"parallelism\": -1}\n",
      "cfg.json", TestRegistry());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("cfg.json:2:17: KubeSchedulerConfiguration: "
                                                           "parallelism: Invalid value: -1"));
  auto bad = LoadConfigText("{\"apiVersion\": }", "cfg.json", TestRegistry());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("cfg.json:1:"));
}

TEST(ConfigErrors, MissingFile) {
  auto c = LoadConfigFile("/nonexistent/gantry.yaml", TestRegistry());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
}

TEST(ConfigErrors, DefaultPluginMissingFromRegistry) {
  framework::Registry empty;
  auto c = DefaultConfig(empty);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("default plugin \"SchedulingGates\" not found"));
}

TEST(ConfigWarnings, DefaultSchedulerLeaseWarns) {
  auto c = Load("leaderElection:\n  resourceName: kube-scheduler\n");
  ASSERT_TRUE(c.ok()) << c.status();
  bool found = false;
  for (const std::string& w : c->warnings) found |= w.find("kube-system/kube-scheduler") != std::string::npos;
  EXPECT_TRUE(found);
}

// ---- Go durations ---------------------------------------------------------------------------------

TEST(GoDuration, ParseAndFormat) {
  struct Case {
    std::string text;
    absl::Duration want;
    std::string formatted;
  };
  const Case cases[] = {
      {"15s", absl::Seconds(15), "15s"},
      {"0", absl::ZeroDuration(), "0s"},
      {"1m30s", absl::Seconds(90), "1m30s"},
      {"1h", absl::Hours(1), "1h0m0s"},
      {"1.5h", absl::Minutes(90), "1h30m0s"},
      {"300ms", absl::Milliseconds(300), "300ms"},
      {"1.5ms", absl::Microseconds(1500), "1.5ms"},
      {"2us", absl::Microseconds(2), "2\xC2\xB5s"},
      {"2\xCE\xBCs", absl::Microseconds(2), "2\xC2\xB5s"},
      {"7ns", absl::Nanoseconds(7), "7ns"},
      {"-1.5s", absl::Milliseconds(-1500), "-1.5s"},
      {"+10s", absl::Seconds(10), "10s"},
      {".5s", absl::Milliseconds(500), "500ms"},
      {"1h2m3.004s", absl::Hours(1) + absl::Minutes(2) + absl::Milliseconds(3004), "1h2m3.004s"},
  };
  for (const Case& c : cases) {
    auto d = ParseGoDuration(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.status();
    EXPECT_EQ(*d, c.want) << c.text;
    EXPECT_EQ(FormatGoDuration(*d), c.formatted) << c.text;
  }
  for (std::string_view bad : {"", "s", "10", "1x", "1.s5", "-", "1e3s", "99999999999999999999h"}) {
    EXPECT_FALSE(ParseGoDuration(bad).ok()) << bad;
  }
  EXPECT_EQ(std::string(ParseGoDuration("10").status().message()),
            "time: missing unit in duration \"10\"");
}

// ---- Round trip (--write-config-to) -----------------------------------------------------------------

class RoundTripTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTripTest, WriteThenLoadGivesEqualConfiguration) {
  framework::Registry registry = TestRegistry();
  auto first = LoadConfigFile("test/unit/config/testdata/" + GetParam(), registry);
  ASSERT_TRUE(first.ok()) << first.status();
  std::string yaml = WriteConfig(*first);
  auto second = LoadConfigText(yaml, "written.yaml", registry);
  ASSERT_TRUE(second.ok()) << second.status() << "\n" << yaml;
  // Warnings name their source file; compare the rest.
  Configuration a = *first, b = *second;
  EXPECT_EQ(a.warnings.size(), b.warnings.size());
  a.warnings.clear();
  b.warnings.clear();
  EXPECT_TRUE(a == b) << yaml;
  EXPECT_EQ(ToJson(a), ToJson(b));
  // Writing is stable.
  second->warnings = first->warnings;
  EXPECT_EQ(WriteConfig(*second), yaml);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RoundTripTest,
                         ::testing::Values("reference-example.yaml", "second-scheduler.yaml",
                                           "minimal.yaml", "multiple-profiles.yaml", "multipoint.yaml",
                                           "custom-queue-sort.yaml", "full.json"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n;
                           for (char c : info.param) n.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
                           return n;
                         });

TEST(WriteConfig, DefaultsLookLikeUpstream) {
  auto c = DefaultConfig(TestRegistry(true));
  ASSERT_TRUE(c.ok()) << c.status();
  std::string yaml = WriteConfig(*c);
  EXPECT_THAT(yaml, HasSubstr("apiVersion: kubescheduler.config.k8s.io/v1\n"));
  EXPECT_THAT(yaml, HasSubstr("kind: KubeSchedulerConfiguration\n"));
  EXPECT_THAT(yaml, HasSubstr("  leaseDuration: 15s\n"));
  EXPECT_THAT(yaml, HasSubstr("  qps: 50.0\n"));
  EXPECT_THAT(yaml, HasSubstr("\n  schedulerName: gantry-scheduler\n"));  // keys sorted, as upstream
  EXPECT_THAT(yaml, HasSubstr("      - name: TaintToleration\n        weight: 3\n"));
  EXPECT_THAT(yaml, HasSubstr("      kind: NodeResourcesFitArgs\n"));
  EXPECT_THAT(yaml, HasSubstr("  kubeconfig: \"\"\n"));
  EXPECT_EQ(yaml.find("# warning"), std::string::npos);
}

TEST(WriteConfig, WarningsBecomeComments) {
  auto c = DefaultConfig(TestRegistry(false));
  ASSERT_TRUE(c.ok()) << c.status();
  std::string yaml = WriteConfig(*c);
  EXPECT_EQ(yaml.rfind("# warning: <defaults>: plugin \"DefaultPreemption\"", 0), 0u) << yaml;
}

TEST(WriteConfig, QuotesStringsThatWouldNotReadBack) {
  Configuration c;
  c.client_connection.kubeconfig = "yes";
  c.leader_election.resource_namespace = "123";
  c.leader_election.resource_name = "a: b";
  Profile p;
  p.scheduler_name = "1e5";
  c.profiles.push_back(p);
  std::string yaml = WriteConfig(c);
  EXPECT_THAT(yaml, HasSubstr("kubeconfig: \"yes\""));
  EXPECT_THAT(yaml, HasSubstr("resourceNamespace: \"123\""));
  EXPECT_THAT(yaml, HasSubstr("resourceName: \"a: b\""));
  EXPECT_THAT(yaml, HasSubstr("schedulerName: \"1e5\""));
}

// A configuration whose aliases expand past the YAML budget fails fast
// with the file and the alias's position; ordinary aliases still work.
TEST(ConfigErrors, YamlAliasBudget) {
  std::string body = "laughs:\n  a0: &a0 lol\n";
  for (int level = 1; level <= 9; ++level) {
    body += "  a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) body += (i ? ", *a" : "*a") + std::to_string(level - 1);
    body += "]\n";
  }
  auto c = Load(body);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(
      std::string(c.status().message()),
      ::testing::MatchesRegex("cfg\\.yaml:11:[0-9]+: alias \\*a6 exceeds the YAML alias budget.*"));

  auto ok = Load(
      "profiles:\n- schedulerName: a\n  plugins: &p {score: {disabled: [{name: '*'}]}}\n"
      "- schedulerName: b\n  plugins: *p\n");
  EXPECT_TRUE(ok.ok()) << ok.status();
}

}  // namespace
}  // namespace gantry::config
