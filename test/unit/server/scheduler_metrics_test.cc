#include "src/server/scheduler_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/testing/objects.h"

namespace gantry::server {
namespace {

using ::testing::HasSubstr;

TEST(SchedulerMetricsObserverTest, RecordsAttempts) {
  Registry r;
  SchedulerMetrics m(r);
  SchedulerMetricsObserver obs(m);
  scheduler::AttemptOutcome o;
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
}  // namespace gantry::server
