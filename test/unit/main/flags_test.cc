#include "src/main/flags.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/registry/registry.h"

namespace gantry::cmd {
namespace {

using ::testing::HasSubstr;

const std::set<std::string> kSubs = {"simulate"};

// Parses `args` as the gantry binary's top level would.
absl::Status Parse(std::vector<std::string> args, RunFlags* flags) {
  CLI::App app;
  app.add_subcommand("simulate")->add_option("--scheduler-name");
  AddRunFlags(app, flags);
  if (absl::Status st = CheckRemovedFlags(args, kSubs); !st.ok()) return st;
  args = NormalizeArgs(args, kSubs);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return absl::InvalidArgumentError(e.what());
  }
  RecordExplicitFlags(app, flags);
  return absl::OkStatus();
}

config::Configuration Defaults() {
  framework::Registry registry;
  EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  return *config::DefaultConfig(registry);
}

TEST(FlagsTest, DefaultsMatchKubeScheduler) {
  RunFlags f;
  ASSERT_TRUE(Parse({}, &f).ok());
  EXPECT_EQ(f.serving.secure_port, 10259);
  EXPECT_EQ(f.serving.bind_address, "0.0.0.0");
  EXPECT_TRUE(f.leader_elect);
  EXPECT_EQ(f.logging_format, "text");
  EXPECT_TRUE(f.explicitly_set.empty());
}

TEST(FlagsTest, GoStyleSpellings) {
  RunFlags f;
  ASSERT_TRUE(Parse({"-v=4", "--leader-elect=false", "--secure-port=0", "--bind-address", "127.0.0.1",
                     "--config=/x.yaml"},
                    &f)
                  .ok());
  EXPECT_EQ(f.verbosity, 4);
  EXPECT_FALSE(f.leader_elect);
  EXPECT_EQ(f.serving.secure_port, 0);
  EXPECT_EQ(f.serving.bind_address, "127.0.0.1");
  EXPECT_EQ(f.config, "/x.yaml");
  EXPECT_TRUE(f.IsSet("leader-elect"));
  EXPECT_TRUE(f.IsSet("v"));
  RunFlags g;
  ASSERT_TRUE(Parse({"--v=3", "--leader-elect"}, &g).ok());
  EXPECT_EQ(g.verbosity, 3);
  EXPECT_TRUE(g.leader_elect);
  RunFlags h;
  ASSERT_TRUE(Parse({"-v", "5"}, &h).ok());
  EXPECT_EQ(h.verbosity, 5);
}

TEST(FlagsTest, RemovedFlagsAreRejectedWithAdvice) {
  struct Case {
    std::string arg;
    std::string advice;
  };
  for (const Case& c : std::vector<Case>{{"--port=10251", "--secure-port"},
                                         {"--address=0.0.0.0", "--bind-address"},
                                         {"--scheduler-name=x", "profiles[].schedulerName"},
                                         {"--policy-config-file=p", "plugins"},
                                         {"--policy-configmap=p", "plugins"},
                                         {"--algorithm-provider=DefaultProvider", "plugins"},
                                         {"--lock-object-name=x", "--leader-elect-resource-name"},
                                         {"--lock-object-namespace=x", "--leader-elect-resource-namespace"},
                                         {"--hard-pod-affinity-symmetric-weight=1", "hardPodAffinityWeight"}}) {
    RunFlags f;
    absl::Status st = Parse({c.arg}, &f);
    ASSERT_FALSE(st.ok()) << c.arg;
    EXPECT_THAT(std::string(st.message()), HasSubstr("was removed from kube-scheduler")) << c.arg;
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.advice)) << c.arg;
  }
  // A subcommand's own flag of the same name is not a top-level flag.
  RunFlags f;
  EXPECT_TRUE(Parse({"simulate", "--scheduler-name", "x"}, &f).ok());
}

TEST(FlagsTest, UnknownFlagIsAnError) {
  RunFlags f;
  EXPECT_FALSE(Parse({"--no-such-flag=1"}, &f).ok());
}

TEST(FeatureGatesTest, KnownNamesAndValues) {
  auto gates = ParseFeatureGates(
      "GenericWorkload=true, DRAConsumableCapacity=false,CompositePodGroup=T,TopologyAwareWorkloadScheduling=1,"
      "DRAWorkloadResourceClaims=True,AllAlpha=false");
  ASSERT_TRUE(gates.ok()) << gates.status();
  EXPECT_TRUE(gates->at("GenericWorkload"));
  EXPECT_FALSE(gates->at("DRAConsumableCapacity"));
  EXPECT_TRUE(gates->at("CompositePodGroup"));
  EXPECT_TRUE(gates->at("TopologyAwareWorkloadScheduling"));
  EXPECT_EQ(gates->size(), 6u);
  EXPECT_TRUE(ParseFeatureGates("").ok());
}

TEST(FeatureGatesTest, Errors) {
  auto unknown = ParseFeatureGates("GenericWorkload=true,NoSuchGate=true");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("unrecognized feature gate: NoSuchGate"));
  auto bad_value = ParseFeatureGates("GenericWorkload=yes");
  ASSERT_FALSE(bad_value.ok());
  EXPECT_THAT(std::string(bad_value.status().message()), HasSubstr("GenericWorkload=yes"));
  EXPECT_FALSE(ParseFeatureGates("GenericWorkload").ok());
}

TEST(FeatureGatesTest, ListIsSortedAndHasTheV137WorkloadAndDraGates) {
  const auto& known = KnownFeatureGates();
  EXPECT_TRUE(std::is_sorted(known.begin(), known.end()));
  EXPECT_EQ(std::adjacent_find(known.begin(), known.end()), known.end());
  for (std::string_view g : {"GenericWorkload", "CompositePodGroup", "PodGroupPreemptionPolicy",
                             "DRAWorkloadResourceClaims", "DRAListTypeAttributes", "DRANodeAllocatableResources",
                             "DRADerivedAttributes", "DRADeviceCompatibilityGroups", "DRAOptionalNodeOperations",
                             "DRAConsumableCapacity", "DRAPartitionableDevices", "DRADeviceBindingConditions",
                             "InterPodAffinityHostnameFastPath", "SchedulerPreQueueingHints"}) {
    EXPECT_TRUE(std::binary_search(known.begin(), known.end(), g)) << g;
  }
}

TEST(ApplyFlagsTest, LeaderElectFlagsOverrideTheConfigFile) {
  config::Configuration cfg = Defaults();
  cfg.leader_election.resource_name = "from-file";
  cfg.leader_election.lease_duration = absl::Seconds(30);
  RunFlags f;
  ASSERT_TRUE(Parse({"--config=x", "--leader-elect-resource-name=from-flag", "--leader-elect-renew-deadline=5s"}, &f)
                  .ok());
  std::vector<std::string> warnings;
  ASSERT_TRUE(ApplyFlags(f, /*from_file=*/true, &cfg, &warnings).ok());
  EXPECT_EQ(cfg.leader_election.resource_name, "from-flag");
  EXPECT_EQ(cfg.leader_election.renew_deadline, absl::Seconds(5));
  EXPECT_EQ(cfg.leader_election.lease_duration, absl::Seconds(30));  // not given: file wins
  EXPECT_TRUE(warnings.empty());
}

TEST(ApplyFlagsTest, DeprecatedFlagsIgnoredWithConfigAppliedWithout) {
  RunFlags f;
  ASSERT_TRUE(Parse({"--kubeconfig=/k", "--kube-api-qps=7", "--kube-api-burst=9", "--profiling=false"}, &f).ok());
  config::Configuration with_file = Defaults();
  std::vector<std::string> warnings;
  ASSERT_TRUE(ApplyFlags(f, /*from_file=*/true, &with_file, &warnings).ok());
  EXPECT_EQ(with_file.client_connection.kubeconfig, "");
  EXPECT_EQ(with_file.client_connection.qps, 50);
  EXPECT_TRUE(with_file.enable_profiling);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_THAT(warnings[0], HasSubstr("--kubeconfig is deprecated and ignored because --config is set"));

  config::Configuration no_file = Defaults();
  warnings.clear();
  ASSERT_TRUE(ApplyFlags(f, /*from_file=*/false, &no_file, &warnings).ok());
  EXPECT_EQ(no_file.client_connection.kubeconfig, "/k");
  EXPECT_EQ(no_file.client_connection.qps, 7);
  EXPECT_EQ(no_file.client_connection.burst, 9);
  EXPECT_FALSE(no_file.enable_profiling);
}

TEST(ApplyFlagsTest, LeaderElectionValidation) {
  auto apply = [](std::vector<std::string> args) {
    RunFlags f;
    EXPECT_TRUE(Parse(std::move(args), &f).ok());
    config::Configuration cfg = Defaults();
    std::vector<std::string> warnings;
    absl::Status st = ApplyFlags(f, false, &cfg, &warnings);
    return std::make_pair(st, warnings);
  };
  EXPECT_THAT(std::string(apply({"--leader-elect-renew-deadline=20s"}).first.message()),
              HasSubstr("must be <= leaseDuration"));
  EXPECT_THAT(std::string(apply({"--leader-elect-resource-lock=endpoints"}).first.message()),
              HasSubstr("only \"leases\""));
  EXPECT_THAT(std::string(apply({"--leader-elect-retry-period=banana"}).first.message()),
              HasSubstr("--leader-elect-retry-period"));
  auto [st, warnings] = apply({"--leader-elect-resource-name=kube-scheduler"});
  EXPECT_TRUE(st.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("kube-system/kube-scheduler"));
  // Disabled leader election is not validated.
  EXPECT_TRUE(apply({"--leader-elect=false", "--leader-elect-resource-lock=endpoints"}).first.ok());
}

}  // namespace
}  // namespace gantry::cmd
