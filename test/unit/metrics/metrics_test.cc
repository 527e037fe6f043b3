#include "src/metrics/metrics.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ExponentialBucketsTest, UpstreamBuckets) {
  std::vector<double> b = ExponentialBuckets(0.001, 2, 15);
  ASSERT_EQ(b.size(), 15u);
  EXPECT_DOUBLE_EQ(b.front(), 0.001);
  EXPECT_DOUBLE_EQ(b.back(), 16.384);
}

TEST(RegistryTest, CounterExposition) {
  Registry r;
  CounterFamily& c =
      r.AddCounter("demo_total", "A demo\ncounter with a \\.", {"result", "profile"});
  c.With({"scheduled", "p\"1"}).Inc();
  c.With({"scheduled", "p\"1"}).Inc(2);
  std::string text = r.Render();
  EXPECT_EQ(text,
            "# HELP demo_total A demo\\ncounter with a \\\\.\n"
            "# TYPE demo_total counter\n"
            "demo_total{result=\"scheduled\",profile=\"p\\\"1\"} 3\n");
}

TEST(RegistryTest, EmptyLabelledFamilyIsOmittedUnlabelledIsZero) {
  Registry r;
  r.AddGauge("labelled", "x", {"queue"});
  r.AddCounter("plain_total", "y");
  EXPECT_EQ(r.Render(), "# HELP plain_total y\n# TYPE plain_total counter\nplain_total 0\n");
}

TEST(RegistryTest, ValuesFormattedAsGoClient) {
  Registry r;
  GaugeFamily& g = r.AddGauge("v", "v", {"k"});
  const std::pair<const char*, double> cases[] = {
      {"a", 0.0001}, {"b", 1e-05}, {"c", 16.384}, {"d", 1234567}, {"e", 123456},
      {"f", -2.5},   {"g", 1e21},  {"h", 0},      {"i", 100},
  };
  for (const auto& [k, v] : cases) g.With({k}).Set(v);
  EXPECT_EQ(r.Render(),
            "# HELP v v\n# TYPE v gauge\n"
            "v{k=\"a\"} 0.0001\nv{k=\"b\"} 1e-05\nv{k=\"c\"} 16.384\nv{k=\"d\"} 1.234567e+06\n"
            "v{k=\"e\"} 123456\nv{k=\"f\"} -2.5\nv{k=\"g\"} 1e+21\nv{k=\"h\"} 0\nv{k=\"i\"} 100\n");
}

TEST(RegistryTest, HistogramExposition) {
  Registry r;
  HistogramFamily& h = r.AddHistogram("lat_seconds", "Latency.", {"result"}, {0.1, 0.5});
  h.With({"ok"}).Observe(0.05);
  h.With({"ok"}).Observe(0.1);  // upper bound inclusive
  h.With({"ok"}).Observe(0.3);
  h.With({"ok"}).Observe(7);
  EXPECT_EQ(r.Render(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{result=\"ok\",le=\"0.1\"} 2\n"
            "lat_seconds_bucket{result=\"ok\",le=\"0.5\"} 3\n"
            "lat_seconds_bucket{result=\"ok\",le=\"+Inf\"} 4\n"
            "lat_seconds_sum{result=\"ok\"} 7.45\n"
            "lat_seconds_count{result=\"ok\"} 4\n");
}

TEST(RegistryTest, GaugeAndMirroredCounterAndHooks) {
  Registry r;
  GaugeFamily& g = r.AddGauge("g", "gauge", {"queue"});
  GaugeFamily& m = r.AddMirroredCounter("cpu_seconds_total", "cpu");
  int calls = 0;
  Registry::HookId id = r.AddCollectHook([&] {
    ++calls;
    g.With({"active"}).Set(4);
    m.Get().Set(1.25);
  });
  std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("g{queue=\"active\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE cpu_seconds_total counter\ncpu_seconds_total 1.25\n"));
  r.RemoveCollectHook(id);
  r.Render();
  EXPECT_EQ(calls, 1);
}

TEST(RegistryTest, ClearDropsChildren) {
  Registry r;
  GaugeFamily& g = r.AddGauge("g", "gauge", {"plugin"});
  g.With({"A"}).Set(1);
  g.Clear();
  g.With({"B"}).Set(2);
  std::string text = r.Render();
  EXPECT_THAT(text, Not(HasSubstr("plugin=\"A\"")));
  EXPECT_THAT(text, HasSubstr("g{plugin=\"B\"} 2\n"));
}

TEST(RegistryTest, ConcurrentUpdatesAreCounted) {
  Registry r;
  CounterFamily& c = r.AddCounter("c_total", "c", {"k"});
  HistogramFamily& h = r.AddHistogram("h", "h", {}, {1, 2});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        c.With({t % 2 == 0 ? "even" : "odd"}).Inc();
        h.Get().Observe(1.5);
        if (i % 1000 == 0) r.Render();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(c.With({"even"}).Value() + c.With({"odd"}).Value(), 40000);
  Histogram::Snapshot s = h.Get().Read();
  EXPECT_EQ(s.count, 40000u);
  EXPECT_EQ(s.cumulative[0], 0u);
  EXPECT_EQ(s.cumulative[1], 40000u);
  EXPECT_DOUBLE_EQ(s.sum, 60000);
}

TEST(SchedulerMetricsTest, UpstreamNamesLabelsAndBuckets) {
  Registry r;
  SchedulerMetrics m(r);
  m.schedule_attempts.With({"scheduled", "gantry-scheduler"}).Inc();
  m.scheduling_attempt_duration.With({"scheduled", "gantry-scheduler"}).Observe(0.003);
  m.ObservePodScheduled(20, 1.5);
  m.ObservePodScheduled(2, 0.5);
  m.RecordPreemption(3);
  m.SetLeader("gantry-scheduler", true);
  m.ObserveExtensionPoint("Filter", "Success", "gantry-scheduler", 0.0002);
  m.decode_errors.With({"Pod"}).Inc();
  m.events.With({"dropped"}).Mirror(7);
  m.event_queue_length.Get().Set(3);
  std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("scheduler_schedule_attempts_total{result=\"scheduled\",profile="
                              "\"gantry-scheduler\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("scheduler_scheduling_attempt_duration_seconds_bucket{result=\"scheduled\","
                        "profile=\"gantry-scheduler\",le=\"0.004\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("le=\"16.384\""));
  EXPECT_THAT(
      text, HasSubstr("scheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"15+\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("scheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"2\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_preemption_attempts_total 1\n"));
  EXPECT_THAT(text, HasSubstr("scheduler_preemption_victims_bucket{le=\"4\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("leader_election_master_status{name=\"gantry-scheduler\"} 1\n"));
  EXPECT_THAT(
      text,
      HasSubstr("scheduler_framework_extension_point_duration_seconds_bucket{extension_point="
                "\"Filter\",status=\"Success\",profile=\"gantry-scheduler\",le=\"0.0002\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gantry_decode_errors_total{kind=\"Pod\"} 1\n"));
  EXPECT_THAT(
      text,
      HasSubstr("# TYPE gantry_events_total counter\ngantry_events_total{result=\"dropped\"} 7\n"));
  EXPECT_THAT(text,
              HasSubstr("# TYPE gantry_event_queue_length gauge\ngantry_event_queue_length 3\n"));
  EXPECT_THAT(
      text,
      HasSubstr("# TYPE gantry_cel_evaluations_total counter\ngantry_cel_evaluations_total 0\n"));
}

TEST(ProcessMetricsTest, ReadsProc) {
  Registry r;
  RegisterProcessMetrics(r);
  std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"));
  EXPECT_THAT(text, HasSubstr("process_resident_memory_bytes "));
  EXPECT_THAT(text, Not(HasSubstr("process_resident_memory_bytes 0\n")));
  EXPECT_THAT(text, HasSubstr("process_start_time_seconds "));
  EXPECT_THAT(text, HasSubstr("process_open_fds "));
}

}  // namespace
}  // namespace gantry::metrics
