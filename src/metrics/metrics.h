// A small thread-safe metrics registry with Prometheus text exposition
// (format 0.0.4), and the scheduler's metric families under their upstream
// names, labels and buckets.
//
// Hot path: Counter::Inc, Gauge::Set/Add and Histogram::Observe are lock-free
// atomics. Family::With takes a shared lock and a map lookup; callers on a
// hot path look a child up once and keep the reference (children are never
// destroyed while the family lives, except by Family::Clear, which is only for
// families rebuilt at scrape time).
//
//   metrics::Registry registry;
//   auto& attempts = registry.AddCounter("scheduler_schedule_attempts_total",
//                                        "Scheduling attempts by result.", {"result", "profile"});
//   attempts.With({"scheduled", "gantry-scheduler"}).Inc();
//   std::string text = registry.Render();
//
// A leaf library: it depends on nothing of Gantry's. There is no process-wide
// instance: the composition root (src/main) owns one Registry and hands it,
// or the SchedulerMetrics on it, to whatever records.
#ifndef GANTRY_SRC_METRICS_METRICS_H_
#define GANTRY_SRC_METRICS_METRICS_H_

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gantry::metrics {

// Content type of Registry::Render().
inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// start, start*factor, ... (count values), as Prometheus' ExponentialBuckets.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

class Counter {
 public:
  void Inc(double v = 1) { value_.fetch_add(v, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }
  // Only for counters mirrored from another source at scrape time (the
  // queue's incoming counters, process CPU time): sets the running total.
  void Mirror(double total) { value_.store(total, std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  void Inc() { Add(1); }
  void Dec() { Add(-1); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // `bounds` are the bucket upper bounds, strictly increasing, without +Inf.
  explicit Histogram(std::shared_ptr<const std::vector<double>> bounds);
  void Observe(double v);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf
    uint64_t count = 0;
    double sum = 0;
  };
  Snapshot Read() const;
  const std::vector<double>& bounds() const { return *bounds_; }

 private:
  std::shared_ptr<const std::vector<double>> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bucket (not cumulative), +Inf last
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

enum class MetricType { kCounter, kGauge, kHistogram };
std::string_view MetricTypeName(MetricType t);

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type, std::vector<std::string> label_names)
      : name_(std::move(name)), help_(std::move(help)), type_(type), label_names_(std::move(label_names)) {}
  virtual ~FamilyBase() = default;
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  // Appends HELP, TYPE and samples (nothing when a labelled family has no child).
  virtual void Render(std::string* out) const = 0;

 protected:
  // The label values encoded as one map key ('\x1f'-separated).
  static void EncodeKey(std::string* key, const std::string_view* values, size_t n);
  static std::vector<std::string_view> DecodeKey(std::string_view key);
  void AppendHeader(std::string* out) const;
  // `{a="x",b="y"` + extra (`,le="0.1"`) + `}`; nothing when no labels and no extra.
  void AppendLabels(std::string* out, std::string_view key, std::string_view extra_name,
                    std::string_view extra_value) const;
  void AppendSample(std::string* out, std::string_view key, const Counter& c) const;
  void AppendSample(std::string* out, std::string_view key, const Gauge& g) const;
  void AppendSample(std::string* out, std::string_view key, const Histogram& h) const;

 private:
  std::string name_;
  std::string help_;
  MetricType type_;
  std::vector<std::string> label_names_;
};

template <typename T>
class Family : public FamilyBase {
 public:
  Family(std::string name, std::string help, MetricType type, std::vector<std::string> label_names,
         std::function<std::unique_ptr<T>()> make)
      : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)), make_(std::move(make)) {
    if (label_names_size() == 0) With({});
  }

  // The child for these label values (one per label name, in order); created
  // on first use. A wrong number of values is a programming error (aborts).
  T& With(std::initializer_list<std::string_view> values) { return With(values.begin(), values.size()); }
  T& With(const std::vector<std::string>& values) {
    std::vector<std::string_view> v(values.begin(), values.end());
    return With(v.data(), v.size());
  }
  T& With(const std::string_view* values, size_t n);
  // The only child of an unlabelled family.
  T& Get() { return With({}); }
  // Drops every child (families recomputed at scrape time, e.g. gauges of
  // sets that shrink). References from With() become dangling.
  void Clear() {
    std::unique_lock lock(mu_);
    children_.clear();
  }
  void Render(std::string* out) const override;

 private:
  size_t label_names_size() const { return label_names().size(); }

  std::function<std::unique_ptr<T>()> make_;
  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<T>, std::less<>> children_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registering a name twice is a programming error (aborts).
  CounterFamily& AddCounter(std::string name, std::string help, std::vector<std::string> labels = {});
  GaugeFamily& AddGauge(std::string name, std::string help, std::vector<std::string> labels = {});
  HistogramFamily& AddHistogram(std::string name, std::string help, std::vector<std::string> labels,
                                std::vector<double> buckets);
  // Same, but with the exposition TYPE `counter`: for counters whose value is
  // a running float total set by a collect hook (process_cpu_seconds_total).
  GaugeFamily& AddMirroredCounter(std::string name, std::string help, std::vector<std::string> labels = {});

  // Hooks run (in order, serialised) at the start of every Render(): pull
  // values from elsewhere into gauges and mirrored counters.
  using HookId = uint64_t;
  HookId AddCollectHook(std::function<void()> hook);
  void RemoveCollectHook(HookId id);

  // The exposition text, families in registration order.
  std::string Render() const;
  const FamilyBase* Find(std::string_view name) const;

 private:
  void Insert(std::unique_ptr<FamilyBase> family);

  mutable std::mutex mu_;           // families_ and hooks_
  mutable std::mutex render_mu_;    // one Render at a time (hooks are not reentrant)
  std::vector<std::unique_ptr<FamilyBase>> families_;
  std::map<HookId, std::function<void()>> hooks_;
  HookId next_hook_ = 1;
};

// The scheduler's metric families on one registry. Names, labels and buckets
// follow kube-scheduler (see docs/operations.md for the list).
struct SchedulerMetrics {
  explicit SchedulerMetrics(Registry& registry);

  Registry& registry;
  // scheduler_* (upstream names)
  CounterFamily& schedule_attempts;              // {result, profile}
  HistogramFamily& scheduling_attempt_duration;  // {result, profile}
  GaugeFamily& pending_pods;                     // {queue}
  CounterFamily& queue_incoming_pods;            // {queue, event}
  HistogramFamily& pod_scheduling_sli_duration;  // {attempts}
  HistogramFamily& pod_scheduling_attempts;      // {}
  HistogramFamily& extension_point_duration;     // {extension_point, status, profile}
  HistogramFamily& plugin_execution_duration;    // {plugin, extension_point, status}
  CounterFamily& preemption_attempts;            // {}
  HistogramFamily& preemption_victims;           // {}
  GaugeFamily& unschedulable_pods;               // {plugin, profile}
  GaugeFamily& leader_election_master_status;    // {name}
  // Gantry's own
  HistogramFamily& dra_allocation_duration;      // {}
  HistogramFamily& gang_placement_duration;      // {}
  CounterFamily& cel_evaluations;                // {}
  CounterFamily& decode_errors;                  // {kind}
  CounterFamily& events;                         // {result}
  GaugeFamily& event_queue_length;               // {}
  GaugeFamily& status_patch_queue_length;        // {}
  GaugeFamily& cache_size;                       // scheduler_cache_size {type}
  GaugeFamily& gantry_cache_size;                // {type}

  // Helpers for callers without label plumbing.
  void ObserveExtensionPoint(std::string_view point, std::string_view status, std::string_view profile,
                             double seconds);
  void ObservePluginExecution(std::string_view plugin, std::string_view point, std::string_view status,
                              double seconds);
  void RecordPreemption(int victims);
  // Pod bound after `attempts` attempts, `seconds` after it first entered the queue.
  void ObservePodScheduled(int attempts, double seconds);
  void SetLeader(std::string_view lease_name, bool leader);
};

// Adds process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_start_time_seconds, process_open_fds
// and process_max_fds (from /proc; absent elsewhere).
void RegisterProcessMetrics(Registry& registry);

// ---- Implementation of the templates ------------------------------------

template <typename T>
T& Family<T>::With(const std::string_view* values, size_t n) {
  if (n != label_names_size()) {
    std::fprintf(stderr, "metric %s: %zu label values for %zu labels\n", name().c_str(), n,
                 label_names_size());
    std::abort();
  }
  thread_local std::string key;
  EncodeKey(&key, values, n);
  {
    std::shared_lock lock(mu_);
    auto it = children_.find(key);
    if (it != children_.end()) return *it->second;
  }
  std::unique_lock lock(mu_);
  auto [it, inserted] = children_.try_emplace(key);
  if (inserted) it->second = make_();
  return *it->second;
}

template <typename T>
void Family<T>::Render(std::string* out) const {
  std::shared_lock lock(mu_);
  if (children_.empty()) return;
  AppendHeader(out);
  for (const auto& [key, child] : children_) AppendSample(out, key, *child);
}

}  // namespace gantry::metrics

#endif  // GANTRY_SRC_METRICS_METRICS_H_
