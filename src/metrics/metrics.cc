#include "src/metrics/metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace gantry::metrics {
namespace {

constexpr char kSep = '\x1f';

// Prometheus text value as the Go client writes it (strconv 'g', shortest):
// "+Inf", "-Inf", "NaN"; exponent form when the decimal exponent is < -4 or
// >= 6 ("1e-05", "1.234567e+06"), else plain ("0.0001", "16.384", "3"). Bucket
// bounds therefore read exactly as upstream's le labels.
void AppendValue(std::string* out, double v) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
    return;
  }
  if (v == 0) {
    out->append(std::signbit(v) ? "-0" : "0");
    return;
  }
  char buf[64];
  std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));  // "-1.2345e+06"
  bool negative = !sci.empty() && sci[0] == '-';
  if (negative) sci.remove_prefix(1);
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exp = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exp);
  if (negative) out->push_back('-');
  if (exp < -4 || exp >= 6) {
    out->push_back(digits[0]);
    if (digits.size() > 1) {
      out->push_back('.');
      out->append(digits, 1);
    }
    out->push_back('e');
    out->push_back(exp < 0 ? '-' : '+');
    int a = exp < 0 ? -exp : exp;
    if (a < 10) out->push_back('0');
    out->append(std::to_string(a));
  } else if (exp >= 0) {
    size_t int_len = static_cast<size_t>(exp) + 1;
    if (digits.size() <= int_len) {
      out->append(digits);
      out->append(int_len - digits.size(), '0');
    } else {
      out->append(digits, 0, int_len);
      out->push_back('.');
      out->append(digits, int_len);
    }
  } else {
    out->append("0.");
    out->append(static_cast<size_t>(-exp - 1), '0');
    out->append(digits);
  }
}

void AppendEscaped(std::string* out, std::string_view s, bool quote) {
  for (char c : s) {
    switch (c) {
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '"':
        if (quote) {
          out->append("\\\"");
        } else {
          out->push_back(c);
        }
        break;
      default: out->push_back(c);
    }
  }
}

}  // namespace

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> b;
  b.reserve(count);
  double v = start;
  for (int i = 0; i < count; ++i) {
    b.push_back(v);
    v *= factor;
  }
  return b;
}

std::string_view MetricTypeName(MetricType t) {
  switch (t) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

// ---- Histogram -----------------------------------------------------------

Histogram::Histogram(std::shared_ptr<const std::vector<double>> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double v) {
  const std::vector<double>& b = *bounds_;
  // Buckets are few (<= 20): a linear scan beats a binary search.
  size_t i = 0;
  while (i < b.size() && v > b[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_release);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.count = count_.load(std::memory_order_acquire);
  s.sum = sum_.load(std::memory_order_relaxed);
  s.cumulative.resize(bounds_->size() + 1);
  uint64_t acc = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    acc += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = acc;
  }
  // Concurrent observations may land between the loads; keep the invariant
  // that +Inf equals the count.
  s.count = std::max(s.count, acc);
  s.cumulative.back() = s.count;
  return s;
}

// ---- FamilyBase ----------------------------------------------------------

void FamilyBase::EncodeKey(std::string* key, const std::string_view* values, size_t n) {
  key->clear();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) key->push_back(kSep);
    key->append(values[i]);
  }
}

std::vector<std::string_view> FamilyBase::DecodeKey(std::string_view key) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = key.find(kSep, start);
    if (pos == std::string_view::npos) {
      out.push_back(key.substr(start));
      return out;
    }
    out.push_back(key.substr(start, pos - start));
    start = pos + 1;
  }
}

void FamilyBase::AppendHeader(std::string* out) const {
  out->append("# HELP ").append(name_).push_back(' ');
  AppendEscaped(out, help_, /*quote=*/false);
  out->append("\n# TYPE ").append(name_).push_back(' ');
  out->append(MetricTypeName(type_)).push_back('\n');
}

void FamilyBase::AppendLabels(std::string* out, std::string_view key, std::string_view extra_name,
                              std::string_view extra_value) const {
  if (label_names_.empty() && extra_name.empty()) return;
  out->push_back('{');
  bool first = true;
  if (!label_names_.empty()) {
    std::vector<std::string_view> values = DecodeKey(key);
    for (size_t i = 0; i < label_names_.size(); ++i) {
      if (!first) out->push_back(',');
      first = false;
      out->append(label_names_[i]).append("=\"");
      AppendEscaped(out, i < values.size() ? values[i] : std::string_view(), /*quote=*/true);
      out->push_back('"');
    }
  }
  if (!extra_name.empty()) {
    if (!first) out->push_back(',');
    out->append(extra_name).append("=\"");
    AppendEscaped(out, extra_value, /*quote=*/true);
    out->push_back('"');
  }
  out->push_back('}');
}

void FamilyBase::AppendSample(std::string* out, std::string_view key, const Counter& c) const {
  out->append(name_);
  AppendLabels(out, key, {}, {});
  out->push_back(' ');
  AppendValue(out, c.Value());
  out->push_back('\n');
}

void FamilyBase::AppendSample(std::string* out, std::string_view key, const Gauge& g) const {
  out->append(name_);
  AppendLabels(out, key, {}, {});
  out->push_back(' ');
  AppendValue(out, g.Value());
  out->push_back('\n');
}

void FamilyBase::AppendSample(std::string* out, std::string_view key, const Histogram& h) const {
  Histogram::Snapshot s = h.Read();
  const std::vector<double>& bounds = h.bounds();
  std::string le;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    le.clear();
    if (i < bounds.size()) {
      AppendValue(&le, bounds[i]);
    } else {
      le = "+Inf";
    }
    out->append(name_).append("_bucket");
    AppendLabels(out, key, "le", le);
    out->push_back(' ');
    AppendValue(out, static_cast<double>(s.cumulative[i]));
    out->push_back('\n');
  }
  out->append(name_).append("_sum");
  AppendLabels(out, key, {}, {});
  out->push_back(' ');
  AppendValue(out, s.sum);
  out->push_back('\n');
  out->append(name_).append("_count");
  AppendLabels(out, key, {}, {});
  out->push_back(' ');
  AppendValue(out, static_cast<double>(s.count));
  out->push_back('\n');
}

// ---- Registry ------------------------------------------------------------

void Registry::Insert(std::unique_ptr<FamilyBase> family) {
  std::lock_guard lock(mu_);
  for (const auto& f : families_) {
    if (f->name() == family->name()) {
      std::fprintf(stderr, "metric %s registered twice\n", family->name().c_str());
      std::abort();
    }
  }
  families_.push_back(std::move(family));
}

CounterFamily& Registry::AddCounter(std::string name, std::string help, std::vector<std::string> labels) {
  auto f = std::make_unique<CounterFamily>(std::move(name), std::move(help), MetricType::kCounter,
                                           std::move(labels), [] { return std::make_unique<Counter>(); });
  CounterFamily& ref = *f;
  Insert(std::move(f));
  return ref;
}

GaugeFamily& Registry::AddGauge(std::string name, std::string help, std::vector<std::string> labels) {
  auto f = std::make_unique<GaugeFamily>(std::move(name), std::move(help), MetricType::kGauge,
                                         std::move(labels), [] { return std::make_unique<Gauge>(); });
  GaugeFamily& ref = *f;
  Insert(std::move(f));
  return ref;
}

GaugeFamily& Registry::AddMirroredCounter(std::string name, std::string help,
                                          std::vector<std::string> labels) {
  auto f = std::make_unique<GaugeFamily>(std::move(name), std::move(help), MetricType::kCounter,
                                         std::move(labels), [] { return std::make_unique<Gauge>(); });
  GaugeFamily& ref = *f;
  Insert(std::move(f));
  return ref;
}

HistogramFamily& Registry::AddHistogram(std::string name, std::string help, std::vector<std::string> labels,
                                        std::vector<double> buckets) {
  auto bounds = std::make_shared<const std::vector<double>>(std::move(buckets));
  auto f = std::make_unique<HistogramFamily>(std::move(name), std::move(help), MetricType::kHistogram,
                                             std::move(labels),
                                             [bounds] { return std::make_unique<Histogram>(bounds); });
  HistogramFamily& ref = *f;
  Insert(std::move(f));
  return ref;
}

Registry::HookId Registry::AddCollectHook(std::function<void()> hook) {
  std::lock_guard lock(mu_);
  HookId id = next_hook_++;
  hooks_.emplace(id, std::move(hook));
  return id;
}

void Registry::RemoveCollectHook(HookId id) {
  // Wait for a running Render so the hook is not called after this returns.
  std::lock_guard render(render_mu_);
  std::lock_guard lock(mu_);
  hooks_.erase(id);
}

std::string Registry::Render() const {
  std::lock_guard render(render_mu_);
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, h] : hooks_) hooks.push_back(h);
  }
  for (const auto& h : hooks) h();
  std::string out;
  out.reserve(16384);
  std::lock_guard lock(mu_);
  for (const auto& f : families_) f->Render(&out);
  return out;
}

const FamilyBase* Registry::Find(std::string_view name) const {
  std::lock_guard lock(mu_);
  for (const auto& f : families_) {
    if (f->name() == name) return f.get();
  }
  return nullptr;
}

// ---- Scheduler metrics ---------------------------------------------------

SchedulerMetrics::SchedulerMetrics(Registry& r)
    : registry(r),
      schedule_attempts(r.AddCounter("scheduler_schedule_attempts_total",
                                     "Scheduling attempts by outcome: scheduled, unschedulable (no "
                                     "node fits) or error (an internal "
                                     "failure).",
                                     {"result", "profile"})),
      scheduling_attempt_duration(r.AddHistogram(
          "scheduler_scheduling_attempt_duration_seconds",
          "Latency of one scheduling attempt in seconds (scheduling algorithm plus binding).",
          {"result", "profile"}, ExponentialBuckets(0.001, 2, 15))),
      pending_pods(r.AddGauge("scheduler_pending_pods",
                              "Pods waiting in the scheduling queue, by queue: active, backoff, "
                              "unschedulable or gated.",
                              {"queue"})),
      queue_incoming_pods(
          r.AddCounter("scheduler_queue_incoming_pods_total",
                       "Pods added to a scheduling queue, by queue and by the event that "
                       "moved them.",
                       {"queue", "event"})),
      pod_scheduling_sli_duration(r.AddHistogram("scheduler_pod_scheduling_sli_duration_seconds",
                                                 "Seconds from a pod first entering the scheduling "
                                                 "queue until it is scheduled, possibly over "
                                                 "several attempts; time spent gated is excluded.",
                                                 {"attempts"}, ExponentialBuckets(0.01, 2, 20))),
      pod_scheduling_attempts(r.AddHistogram("scheduler_pod_scheduling_attempts",
                                             "Attempts a pod needed before it was scheduled.", {},
                                             ExponentialBuckets(1, 2, 5))),
      extension_point_duration(r.AddHistogram(
          "scheduler_framework_extension_point_duration_seconds",
          "Seconds spent running all plugins of one framework extension point.",
          {"extension_point", "status", "profile"}, ExponentialBuckets(0.0001, 2, 12))),
      plugin_execution_duration(r.AddHistogram(
          "scheduler_plugin_execution_duration_seconds",
          "Seconds one plugin spent at one extension point (sampled).",
          {"plugin", "extension_point", "status"}, ExponentialBuckets(0.00001, 1.5, 20))),
      preemption_attempts(r.AddCounter("scheduler_preemption_attempts_total",
                                       "Preemption attempts made by the scheduler.")),
      preemption_victims(r.AddHistogram("scheduler_preemption_victims",
                                        "Pods chosen as victims by one successful preemption.", {},
                                        ExponentialBuckets(1, 2, 7))),
      unschedulable_pods(
          r.AddGauge("scheduler_unschedulable_pods",
                     "Pending unschedulable pods, by a plugin that rejected them in their last "
                     "attempt and by profile (a pod rejected by several plugins counts once "
                     "for each).",
                     {"plugin", "profile"})),
      leader_election_master_status(r.AddGauge(
          "leader_election_master_status",
          "1 while this instance holds the leader election lease named by `name`, else 0.",
          {"name"})),
      dra_allocation_duration(r.AddHistogram(
          "gantry_dra_allocation_duration_seconds",
          "Seconds spent allocating devices for the ResourceClaims of one pod on one node.", {},
          ExponentialBuckets(0.00001, 2, 20))),
      gang_placement_duration(r.AddHistogram("gantry_gang_placement_duration_seconds",
                                             "Seconds spent finding a placement for one pod group.",
                                             {}, ExponentialBuckets(0.001, 2, 15))),
      cel_evaluations(
          r.AddCounter("gantry_cel_evaluations_total",
                       "CEL expressions evaluated (device selectors and other programs).")),
      decode_errors(r.AddCounter(
          "gantry_decode_errors_total",
          "API objects that could not be decoded, by kind; they are skipped.", {"kind"})),
      events(
          r.AddCounter("gantry_events_total",
                       "Events the scheduler recorded, by what became of them: created, folded "
                       "(into an existing event's series), dropped (the writer queue was full) or "
                       "failed (the API server refused it or was unreachable).",
                       {"result"})),
      event_queue_length(
          r.AddGauge("gantry_event_queue_length", "Events waiting for an event writer worker.")),
      status_patch_queue_length(r.AddGauge(
          "gantry_status_patch_queue_length",
          "Pod and PodGroup status patches (conditions, nominations) waiting to be sent.")),
      cache_size(
          r.AddGauge("scheduler_cache_size",
                     "Objects in the scheduler's cache, by type: nodes, pods (bound or assumed) "
                     "and assumed_pods (bound by this scheduler, not yet confirmed by the watch).",
                     {"type"})),
      gantry_cache_size(r.AddGauge(
          "gantry_cache_size",
          "Other objects and entries the scheduler keeps, by type: resourceslices, resourceclaims, "
          "assumed_resourceclaims, in_flight_allocations, deviceclasses, resourceclaimtemplates, "
          "podgroups, foreign_group_members, group_transitions, interned_symbols (distinct "
          "label keys and values, names and other strings interned since the process started).",
          {"type"})) {}

void SchedulerMetrics::ObserveExtensionPoint(std::string_view point, std::string_view status,
                                             std::string_view profile, double seconds) {
  extension_point_duration.With({point, status, profile}).Observe(seconds);
}

void SchedulerMetrics::ObservePluginExecution(std::string_view plugin, std::string_view point,
                                              std::string_view status, double seconds) {
  plugin_execution_duration.With({plugin, point, status}).Observe(seconds);
}

void SchedulerMetrics::RecordPreemption(int victims) {
  preemption_attempts.Get().Inc();
  if (victims > 0) preemption_victims.Get().Observe(victims);
}

void SchedulerMetrics::ObservePodScheduled(int attempts, double seconds) {
  std::string label = attempts >= 15 ? std::string("15+") : std::to_string(attempts);
  pod_scheduling_sli_duration.With({label}).Observe(seconds);
  pod_scheduling_attempts.Get().Observe(attempts);
}

void SchedulerMetrics::SetLeader(std::string_view lease_name, bool leader) {
  leader_election_master_status.With({lease_name}).Set(leader ? 1 : 0);
}

// ---- Process metrics -----------------------------------------------------

namespace {

struct ProcStat {
  bool ok = false;
  double cpu_seconds = 0;
  double start_time_seconds = 0;
  double vsize = 0;
  double rss_bytes = 0;
};

ProcStat ReadProcStat() {
  ProcStat st;
  std::ifstream f("/proc/self/stat");
  std::string line;
  if (!std::getline(f, line)) return st;
  // Fields after the command name (which may contain spaces) start at ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return st;
  std::istringstream in(line.substr(close + 2));
  std::vector<std::string> fields;
  std::string tok;
  while (in >> tok) fields.push_back(tok);
  // fields[0] is field 3 (state); utime=14, stime=15, starttime=22, vsize=23, rss=24.
  auto field = [&](int n) -> double {
    size_t i = static_cast<size_t>(n - 3);
    return i < fields.size() ? std::strtod(fields[i].c_str(), nullptr) : 0.0;
  };
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  st.cpu_seconds = (field(14) + field(15)) / ticks;
  st.vsize = field(23);
  st.rss_bytes = field(24) * page;
  double boot = 0;
  std::ifstream sf("/proc/stat");
  while (std::getline(sf, line)) {
    if (line.rfind("btime ", 0) == 0) {
      boot = std::strtod(line.c_str() + 6, nullptr);
      break;
    }
  }
  st.start_time_seconds = boot + field(22) / ticks;
  st.ok = fields.size() >= 22;
  return st;
}

double CountOpenFds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return 0;
  double n = 0;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n - 1;  // the directory stream itself
}

}  // namespace

void RegisterProcessMetrics(Registry& r) {
  GaugeFamily& cpu = r.AddMirroredCounter("process_cpu_seconds_total", "User and system CPU time spent, in seconds.");
  GaugeFamily& rss = r.AddGauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  GaugeFamily& vsz = r.AddGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.");
  GaugeFamily& start = r.AddGauge("process_start_time_seconds",
                                  "Start time of the process since the Unix epoch, in seconds.");
  GaugeFamily& fds = r.AddGauge("process_open_fds", "Open file descriptors.");
  GaugeFamily& max_fds = r.AddGauge("process_max_fds", "Maximum number of open file descriptors.");
  r.AddCollectHook([&cpu, &rss, &vsz, &start, &fds, &max_fds] {
    ProcStat st = ReadProcStat();
    if (!st.ok) return;
    cpu.Get().Set(st.cpu_seconds);
    rss.Get().Set(st.rss_bytes);
    vsz.Get().Set(st.vsize);
    start.Get().Set(st.start_time_seconds);
    fds.Get().Set(CountOpenFds());
    struct rlimit lim {};
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0) max_fds.Get().Set(static_cast<double>(lim.rlim_cur));
  });
}

}  // namespace gantry::metrics
