// Tests of the scheduler_perf workload suite: sampling arithmetic (table
// driven) and a smoke run of every workload at its --quick size that checks
// the report is complete and sane (never its speed).
#include "bench/generate/workloads.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gantry::bench {
namespace {

TEST(ThroughputSamples, Table) {
  struct Case {
    std::string name;
    std::vector<int64_t> at;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {"empty", {}, {}},
      {"one short burst: rate over its span", {0, 250'000, 500'000}, {6.0}},
      {"two full windows and a long tail",
       {0, 10, 999'999, 1'000'000, 1'500'000, 2'000'000, 2'200'000},
       {3, 2, 10}},
      {"short tail dropped",
       {0, 1'000'000, 1'050'000},
       {
           1,
       }},
      {"starts at first pod", {5'000'000, 5'500'000, 6'000'000, 6'100'000}, {2, 20}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<double> got = ThroughputSamples(c.at);
    ASSERT_EQ(got.size(), c.want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], c.want[i]) << i;
  }
}

TEST(Summarize, NearestRankPercentiles) {
  struct Case {
    std::string name;
    std::vector<double> samples;
    ThroughputSummary want;
  };
  const std::vector<Case> cases = {
      {"empty", {}, {0, 0, 0, 0, 0}},
      {"one sample", {7}, {7, 7, 7, 7, 7}},
      {"ten samples", {10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, {5.5, 5, 9, 10, 10}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ThroughputSummary got = Summarize(c.samples);
    EXPECT_DOUBLE_EQ(got.average, c.want.average);
    EXPECT_DOUBLE_EQ(got.perc50, c.want.perc50);
    EXPECT_DOUBLE_EQ(got.perc90, c.want.perc90);
    EXPECT_DOUBLE_EQ(got.perc95, c.want.perc95);
    EXPECT_DOUBLE_EQ(got.perc99, c.want.perc99);
  }
}

TEST(RunWorkload, UnknownNamesAreErrors) {
  EXPECT_EQ(RunWorkload({"NoSuchWorkload", true, "", 1}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(RunWorkload({"SchedulingBasic/NoSuchSize", true, "", 1}).status().code(),
            absl::StatusCode::kNotFound);
}

// Every workload at its quick size: all measured pods that can fit are
// scheduled, and the report carries upstream's metrics.
TEST(RunWorkload, QuickSmoke) {
  for (const WorkloadCase& c : WorkloadCases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<nlohmann::json> r = RunWorkload({c.name, /*quick=*/true, "", 1});
    ASSERT_TRUE(r.ok()) << r.status();
    const WorkloadSize& size = c.sizes.back();
    EXPECT_EQ((*r)["workload"], c.name + "/" + size.name);
    EXPECT_EQ((*r)["measure_pods"], size.measure_pods);
    // Unschedulable adds never-fitting pods; everything else fits entirely.
    EXPECT_EQ((*r)["scheduled"].get<int64_t>(), size.measure_pods);
    const int64_t expected_unschedulable = c.name == "Unschedulable" ? size.measure_pods / 100 : 0;
    EXPECT_EQ((*r)["unschedulable"].get<int64_t>(), expected_unschedulable);
    if (c.name == "PreemptionAsync") {
      // One preemptor per 100 measured pods; each evicts at least 3 of the
      // node's 4 low-priority pods and then binds.
      const int64_t preemptors = (size.measure_pods + 99) / 100;
      EXPECT_EQ((*r)["other_scheduled"].get<int64_t>(), preemptors);
      EXPECT_GE((*r)["evictions"].get<int64_t>(), 3 * preemptors);
    } else {
      EXPECT_EQ((*r)["other_scheduled"].get<int64_t>(), 0);
      EXPECT_EQ((*r)["evictions"].get<int64_t>(), 0);
    }
    if (c.name == "GangScheduling" || c.name == "TopologyAwareScheduling") {
      const int64_t groups = size.measure_pods / size.pods_per_group;
      EXPECT_EQ((*r)["podgroups"].get<int64_t>(), groups);
      EXPECT_EQ((*r)["podgroups_scheduled"].get<int64_t>(), groups);
      EXPECT_EQ((*r)["podgroups_in_one_domain"].get<int64_t>(),
                c.name == "TopologyAwareScheduling" ? groups : 0);
    }
    if (c.name.starts_with("SchedulingWithResourceClaimTemplate")) {
      // One claim per pod; the matchAttribute claim takes a GPU and a NIC.
      EXPECT_EQ((*r)["claims_allocated"].get<int64_t>(), size.measure_pods);
      EXPECT_EQ((*r)["devices_allocated"].get<int64_t>(),
                size.measure_pods * (c.name.ends_with("MatchAttribute") ? 2 : 1));
    }
    EXPECT_GT((*r)["throughput"]["Average"].get<double>(), 0);
    EXPECT_GE((*r)["throughput"]["Perc99"].get<double>(),
              (*r)["throughput"]["Perc50"].get<double>());
    EXPECT_GT((*r)["cpu_seconds_per_1000_pods"].get<double>(), 0);
    EXPECT_GT((*r)["peak_rss_mib"].get<double>(), 0);
    ASSERT_EQ((*r)["dataItems"].size(), 4u);
    EXPECT_EQ((*r)["dataItems"][0]["labels"]["Metric"], "SchedulingThroughput");
    EXPECT_EQ((*r)["dataItems"][0]["unit"], "pods/s");
    EXPECT_EQ((*r)["dataItems"][0]["labels"]["Name"], (*r)["workload"]);
  }
}

// SteadyStateClusterResourceClaimTemplate: with all but ten devices held by
// claims of no pod, each round of ten pods fits only once the previous
// round's pods finished and gave their devices back.
TEST(RunWorkload, SteadyStateRoundsReuseTheFreedDevices) {
  struct Case {
    std::string size;
    int64_t pods, init_claims;
  } cases[] = {{"full_10nodes", 100, 90}, {"fast", 100, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.size);
    absl::StatusOr<nlohmann::json> r =
        RunWorkload({"SteadyStateClusterResourceClaimTemplate/" + c.size, false, "", 1});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)["scheduled"].get<int64_t>(), c.pods);
    EXPECT_EQ((*r)["unschedulable"].get<int64_t>(), 0);
    EXPECT_EQ((*r)["completed"].get<int64_t>(), c.pods);
    EXPECT_EQ((*r)["init_claims"].get<int64_t>(), c.init_claims);
    // Left allocated: the claims of no pod (the pods' were released).
    EXPECT_EQ((*r)["claims_allocated"].get<int64_t>(), c.init_claims);
    EXPECT_EQ((*r)["devices_allocated"].get<int64_t>(), c.init_claims);
  }
}

}  // namespace
}  // namespace gantry::bench
