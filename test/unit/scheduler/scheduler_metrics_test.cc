#include "src/scheduler/scheduler_metrics.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/testing/objects.h"

namespace gantry::scheduler {

using metrics::Registry;
namespace {

using ::testing::HasSubstr;

TEST(SchedulerMetricsObserverTest, RecordsAttempts) {
  Registry r;
  SchedulerMetrics m(r);
  SchedulerMetricsObserver obs(m);
  AttemptOutcome o;
  o.profile = "gantry-scheduler";
  o.result = "unschedulable";
  o.duration_micros = 1500;
  obs.OnAttempt(o);
  obs.OnAttempt(o);
  std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("scheduler_schedule_attempts_total{result=\"unschedulable\",profile=\"gantry-scheduler\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_scheduling_attempt_duration_seconds_bucket{result=\"unschedulable\","
                              "profile=\"gantry-scheduler\",le=\"0.002\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_scheduling_attempt_duration_seconds_sum{result=\"unschedulable\","
                              "profile=\"gantry-scheduler\"} 0.003\n"));
}

TEST(SchedulerMetricsObserverTest, ScheduledPodsFeedSliAndAttemptHistograms) {
  Registry r;
  SchedulerMetrics m(r);
  SchedulerMetricsObserver obs(m);
  struct Case {
    std::string result;
    int32_t attempts;
    int64_t since_micros;
  };
  const std::vector<Case> cases = {
      {"scheduled", 1, 15'000},      // 0.015 s, first attempt
      {"scheduled", 3, 2'500'000},   // 2.5 s after its first attempt
      {"scheduled", 20, 1'000'000},  // attempts label capped at 15+
      {"unschedulable", 2, 0},       // failures never feed the SLI
  };
  for (const Case& c : cases) {
    AttemptOutcome o;
    o.profile = "gantry-scheduler";
    o.result = c.result;
    o.attempts = c.attempts;
    o.since_first_attempt_micros = c.since_micros;
    obs.OnAttempt(o);
  }
  std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.02\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.01\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_pod_scheduling_sli_duration_seconds_sum{attempts=\"3\"} 2.5\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"15+\"} 1\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("attempts=\"2\"")));
  EXPECT_THAT(text, HasSubstr("scheduler_pod_scheduling_attempts_bucket{le=\"1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_pod_scheduling_attempts_bucket{le=\"4\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_pod_scheduling_attempts_bucket{le=\"16\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_pod_scheduling_attempts_count 3\n"));
}

TEST(SchedulerMetricsObserverTest, GroupCyclesFeedGangPlacementDuration) {
  Registry r;
  SchedulerMetrics m(r);
  SchedulerMetricsObserver obs(m);
  GroupOutcome ok{"ns/g", true, 4, 4, "", "", 250'000};
  GroupOutcome failed{"ns/h", false, 1, 4, "", "1 of minCount 4", 500'000};
  obs.OnGroup(ok);
  obs.OnGroup(failed);
  std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE gantry_gang_placement_duration_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("gantry_gang_placement_duration_seconds_bucket{le=\"0.128\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gantry_gang_placement_duration_seconds_bucket{le=\"0.256\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gantry_gang_placement_duration_seconds_bucket{le=\"0.512\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("gantry_gang_placement_duration_seconds_sum 0.75\n"));
  EXPECT_THAT(text, HasSubstr("gantry_gang_placement_duration_seconds_count 2\n"));
}

TEST(ExtensionPointMetricsTest, UpstreamLabelsAndBuckets) {
  Registry r;
  SchedulerMetrics m(r);
  ExtensionPointMetrics points(m);
  points.ObserveExtensionPoint("PreFilter", "Success", "gantry-scheduler", 0.00015);
  points.ObserveExtensionPoint("PreFilter", "UnschedulableAndUnresolvable", "gantry-scheduler", 0.00005);
  points.ObserveExtensionPoint("Bind", "Success", "gpu-scheduler", 0.3);
  std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("scheduler_framework_extension_point_duration_seconds_bucket{extension_point="
                              "\"PreFilter\",status=\"Success\",profile=\"gantry-scheduler\",le=\"0.0002\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_framework_extension_point_duration_seconds_bucket{extension_point="
                              "\"PreFilter\",status=\"Success\",profile=\"gantry-scheduler\",le=\"0.0001\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_framework_extension_point_duration_seconds_count{extension_point="
                              "\"PreFilter\",status=\"UnschedulableAndUnresolvable\",profile=\"gantry-scheduler\"} 1\n"));
  // 0.3 s is above the last bound (0.0001 * 2^11 = 0.2048): only +Inf.
  EXPECT_THAT(text, HasSubstr("scheduler_framework_extension_point_duration_seconds_bucket{extension_point="
                              "\"Bind\",status=\"Success\",profile=\"gpu-scheduler\",le=\"0.2048\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_framework_extension_point_duration_seconds_bucket{extension_point="
                              "\"Bind\",status=\"Success\",profile=\"gpu-scheduler\",le=\"+Inf\"} 1\n"));
}

TEST(SchedulerPluginMetricsTest, PluginRecordsReachTheirFamilies) {
  Registry r;
  SchedulerMetrics m(r);
  SchedulerPluginMetrics plugins(m);
  framework::PluginMetrics& recorder = plugins;
  recorder.PreemptionAttempted();
  recorder.PreemptionAttempted();
  recorder.PreemptionVictims(3);
  recorder.DraAllocationDuration(0.002);
  recorder.CelEvaluations(5);
  recorder.CelEvaluations(0);
  const std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("scheduler_preemption_attempts_total 2\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_preemption_victims_count 1\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_preemption_victims_sum 3\n"));
  EXPECT_THAT(text, HasSubstr("gantry_dra_allocation_duration_seconds_count 1\n"));
  EXPECT_THAT(text, HasSubstr("gantry_cel_evaluations_total 5\n"));
}

TEST(SchedulerPluginMetricsTest, HandlesWithoutMetricsRecordNothing) {
  // A handle that does not override Metrics() hands out the shared no-op.
  framework::PluginMetrics& none = framework::NoPluginMetrics::Instance();
  none.PreemptionAttempted();
  none.CelEvaluations(7);
  EXPECT_EQ(&none, &framework::NoPluginMetrics::Instance());
}

TEST(QueueMetricsCollectorTest, PendingIncomingAndUnschedulable) {
  FakeClock clock(1'000'000'000);
  queue::QueueOptions opts;
  queue::SchedulingQueue q(clock, opts);
  q.Add(testing::MakePodInfo(testing::SimplePod("a", 100, 0)));
  q.Add(testing::MakePodInfo(testing::SimplePod("b", 100, 0)));
  std::optional<framework::QueuedPodInfo> qpi = q.TryPop();
  ASSERT_TRUE(qpi.has_value());
  const std::string uid = qpi->pod_info->uid();
  const std::string profile = qpi->pod_info->p().scheduler_name.str();
  qpi->unschedulable_plugins.insert("NodeResourcesFit");
  int64_t cycle = q.SchedulingCycle();
  ASSERT_TRUE(q.AddUnschedulableIfNotPresent(std::move(*qpi), cycle).ok());
  q.Done(uid);

  Registry r;
  SchedulerMetrics m(r);
  {
    QueueMetricsCollector collector(m, q);
    std::string text = r.Render();
    EXPECT_THAT(text, HasSubstr("scheduler_pending_pods{queue=\"active\"} 1\n"));
    EXPECT_THAT(text, HasSubstr("scheduler_pending_pods{queue=\"unschedulable\"} 1\n"));
    EXPECT_THAT(text, HasSubstr("scheduler_pending_pods{queue=\"gated\"} 0\n"));
    EXPECT_THAT(text, HasSubstr("scheduler_queue_incoming_pods_total{queue=\"active\",event=\"PodAdd\"} 2\n"));
    EXPECT_THAT(text, HasSubstr("scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",profile=\"" + profile +
                                "\"} 1\n"));
  }
  // Detached: the hook is gone, the last values stay.
  q.Add(testing::MakePodInfo(testing::SimplePod("c", 100, 0)));
  EXPECT_THAT(r.Render(), HasSubstr("scheduler_pending_pods{queue=\"active\"} 1\n"));
}

}  // namespace
}  // namespace gantry::scheduler
