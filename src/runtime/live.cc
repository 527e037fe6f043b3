#include "src/runtime/live.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/time/time.h"
#include "gantry/clock.h"
#include "gantry/util/strings.h"
#include "spdlog/spdlog.h"
#include "src/api/intern.h"
#include "src/client/api_writer.h"
#include "src/client/discovery.h"
#include "src/client/event_source.h"
#include "src/client/http.h"
#include "src/client/leader_election.h"
#include "src/client/rest_config.h"
#include "src/client/write_fence.h"
#include "src/scheduler/scheduler_metrics.h"
#include "src/scheduler/setup.h"
#include "src/state/cluster_state.h"

namespace gantry::runtime {

using client::ApiClusterWriter;
using client::Backoff;
using client::ClientOptions;
using client::Discovery;
using client::EventSource;
using client::Hostname;
using client::HttpClient;
using client::LeaderElectionConfig;
using client::LeaderElector;
using client::Msg;
using client::ResolveRestConfig;
using client::RestConfig;
using client::SleepFor;
using client::WriteFence;
using client::WriterOptions;
using client::WriterStats;

namespace {

// Group/versions whose resource lists discovery fetches.
const std::vector<std::string>& InterestingGroupVersions() {
  static const std::vector<std::string> gvs = {"v1",
                                               "policy/v1",
                                               "scheduling.k8s.io/v1",
                                               "coordination.k8s.io/v1",
                                               "events.k8s.io/v1",
                                               "resource.k8s.io/v1",
                                               "scheduling.k8s.io/v1beta1",
                                               "scheduling.k8s.io/v1alpha3",
                                               "scheduling.x-k8s.io/v1alpha1"};
  return gvs;
}

int64_t Millis(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

// Wall clock for the live scheduler (gantry::RealClock is declared but has
// no definition in the tree yet).
class LiveClock final : public Clock {
 public:
  int64_t NowMicros() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

absl::Status RunLiveScheduler(const config::Configuration& cfg, const framework::Registry& registry,
                              const LiveOptions& opts) {
  if (opts.metrics == nullptr || opts.client_metrics == nullptr) {
    return absl::InvalidArgumentError(
        "RunLiveScheduler: LiveOptions.metrics and client_metrics are required");
  }
  std::atomic<bool> stopping{false};  // our own stop: external stop, or lease lost
  auto external_stop = [&] { return opts.stop != nullptr && opts.stop->load(); };

  const std::string kubeconfig = !opts.kubeconfig_override.empty()
                                     ? opts.kubeconfig_override
                                     : cfg.client_connection.kubeconfig;
  absl::StatusOr<RestConfig> rest = ResolveRestConfig(kubeconfig, opts.master);
  if (!rest.ok()) return rest.status();
  spdlog::info("API server {} ({})", rest->server, rest->source);

  ClientOptions co;
  co.qps = cfg.client_connection.qps;
  co.burst = cfg.client_connection.burst;
  co.metrics = opts.client_metrics;
  // With leader election, every write but the lease's own passes the fence
  // the elector keeps open while the lease is surely ours.
  const auto& le = cfg.leader_election;
  std::shared_ptr<WriteFence> fence;
  if (le.leader_elect) fence = std::make_shared<WriteFence>();
  // Separate clients (same limits) so events and the lease never starve bindings.
  // The main client serves every binding worker, the reflectors and the writer at once.
  ClientOptions binding_co = co;
  binding_co.write_fence = fence;
  binding_co.max_idle_connections = static_cast<size_t>(std::max(0, opts.binding_workers)) + 32;
  absl::StatusOr<std::unique_ptr<HttpClient>> client = HttpClient::Create(*rest, binding_co);
  if (!client.ok()) return client.status();
  ClientOptions events_co = co;
  events_co.write_fence = fence;
  events_co.max_idle_connections = static_cast<size_t>(std::max(1, opts.event_workers)) + 4;
  absl::StatusOr<std::unique_ptr<HttpClient>> events_client = HttpClient::Create(*rest, events_co);
  if (!events_client.ok()) return events_client.status();
  absl::StatusOr<std::unique_ptr<HttpClient>> lease_client = HttpClient::Create(*rest, co);
  if (!lease_client.ok()) return lease_client.status();

  // Discovery (retried: the API server may still be starting).
  constexpr int kDeniedDiscoveryAttempts = 8;
  std::atomic<bool> discovery_stop{false};
  std::optional<Discovery> discovery;
  Backoff backoff(500, 10'000);
  for (int attempt = 0;; ++attempt) {
    if (external_stop()) return absl::OkStatus();
    absl::StatusOr<Discovery> d = Discovery::Fetch(**client, InterestingGroupVersions(), opts.stop);
    if (d.ok()) {
      discovery = std::move(*d);
      break;
    }
    // 401/403 right after an API server (re)start is RBAC or authentication
    // not loaded yet: retried for the first attempts (about a minute) as any
    // other failure, then reported, so a real misconfiguration still exits.
    const absl::StatusCode code = d.status().code();
    const bool denied =
        code == absl::StatusCode::kUnauthenticated || code == absl::StatusCode::kPermissionDenied;
    if ((denied && attempt >= kDeniedDiscoveryAttempts) || attempt >= 30) return d.status();
    int64_t ms = backoff.NextMillis();
    spdlog::warn("discovery failed ({}), retrying in {} ms", Msg(d.status()), ms);
    SleepFor(ms, opts.stop);
  }

  static LiveClock clock;
  state::ClusterState state(clock);
  WriterOptions wo;
  wo.hostname = Hostname();
  wo.event_workers = std::max(1, opts.event_workers);
  wo.event_queue_capacity = opts.event_queue_capacity;
  ApiClusterWriter writer(**client, **events_client, wo);
  const uint64_t seed = static_cast<uint64_t>(clock.NowMicros());
  absl::StatusOr<scheduler::SchedulerBundle> bundle =
      scheduler::BuildScheduler(cfg, registry, state, writer, clock, seed, opts.binding_workers);
  if (!bundle.ok()) return bundle.status();
  scheduler::Scheduler& sched = *bundle->scheduler;
  // Scheduling-attempt and queue metrics for /metrics; destroyed before the scheduler.
  std::unique_ptr<scheduler::AttachedSchedulerMetrics> metrics =
      scheduler::AttachSchedulerMetrics(sched, *opts.metrics);

  EventSource source(**client, *discovery, sched.events());

  std::mutex mu;
  std::condition_variable cv;
  bool leading = false;
  bool lost = false;

  // Add-ons (the admin service): a client of their own so listings never
  // queue behind bindings; destroyed (at scope exit) before the scheduler.
  std::unique_ptr<HttpClient> attach_client;
  std::shared_ptr<void> attachment;
  if (opts.attach) {
    ClientOptions aco = co;
    aco.user_agent = "gantry-scheduler-admin";
    absl::StatusOr<std::unique_ptr<HttpClient>> c = HttpClient::Create(*rest, aco);
    if (!c.ok()) return c.status();
    attach_client = std::move(*c);
    LiveContext ctx{sched,
                    *attach_client,
                    cfg,
                    registry,
                    clock,
                    [&source] { return source.HasSynced(); },
                    [&mu, &leading] {
                      std::lock_guard<std::mutex> lock(mu);
                      return leading;
                    },
                    [&source] { return source.CachedObjects(); }};
    absl::StatusOr<std::shared_ptr<void>> a = opts.attach(ctx);
    if (!a.ok()) return a.status();
    attachment = std::move(*a);
  }
  {
    std::string names;
    for (const std::string& n : source.ResourceNames()) names += (names.empty() ? "" : ", ") + n;
    spdlog::info("starting reflectors: {}", names);
  }
  source.Start();
  // gantry_decode_errors_total{kind}: read from the informers at scrape time.
  metrics::SchedulerMetrics& run_metrics = *opts.metrics;
  const metrics::Registry::HookId decode_hook =
      run_metrics.registry.AddCollectHook([&source, &run_metrics] {
        for (const auto& [kind, n] : source.DecodeErrorsByKind()) {
          run_metrics.decode_errors.With({kind}).Mirror(static_cast<double>(n));
        }
      });
  // gantry_events_total{result}, gantry_event_queue_length: from the writer.
  const metrics::Registry::HookId events_hook = run_metrics.registry.AddCollectHook([&writer,
                                                                                     &run_metrics] {
    const WriterStats ws = writer.Stats();
    run_metrics.events.With({"created"}).Mirror(static_cast<double>(ws.events_created));
    run_metrics.events.With({"folded"}).Mirror(static_cast<double>(ws.events_folded));
    run_metrics.events.With({"dropped"}).Mirror(static_cast<double>(ws.events_dropped));
    run_metrics.events.With({"failed"}).Mirror(static_cast<double>(ws.event_failures));
    run_metrics.event_queue_length.Get().Set(static_cast<double>(ws.events_queued));
    run_metrics.status_patch_queue_length.Get().Set(static_cast<double>(ws.status_patches_queued));
    run_metrics.gantry_cache_size.With({"group_transitions"})
        .Set(static_cast<double>(ws.group_transitions));
  });
  // scheduler_cache_size{type}, gantry_cache_size{type}: what the caches hold.
  const metrics::Registry::HookId cache_hook =
      run_metrics.registry.AddCollectHook([&sched, &run_metrics] {
        const state::ClusterState& cs = sched.cluster_state();
        metrics::GaugeFamily& upstream = run_metrics.cache_size;
        upstream.With({"nodes"}).Set(static_cast<double>(cs.NodeCount()));
        upstream.With({"pods"}).Set(static_cast<double>(cs.PodCount()));
        upstream.With({"assumed_pods"}).Set(static_cast<double>(cs.AssumedPodCount()));
        const state::DraStats ds = sched.dra().Stats();
        metrics::GaugeFamily& own = run_metrics.gantry_cache_size;
        own.With({"resourceslices"}).Set(static_cast<double>(ds.slices));
        own.With({"resourceclaims"}).Set(static_cast<double>(ds.claims));
        own.With({"assumed_resourceclaims"}).Set(static_cast<double>(ds.assumed_claims));
        own.With({"in_flight_allocations"}).Set(static_cast<double>(ds.in_flight));
        own.With({"deviceclasses"}).Set(static_cast<double>(ds.classes));
        own.With({"resourceclaimtemplates"}).Set(static_cast<double>(ds.claim_templates));
        own.With({"podgroups"}).Set(static_cast<double>(cs.GroupCount()));
        own.With({"foreign_group_members"})
            .Set(static_cast<double>(sched.ForeignGroupMemberCount()));
        own.With({"interned_symbols"}).Set(static_cast<double>(api::InternedSymbolCount()));
      });

  // Housekeeping: readiness, backoff flushes, assumed-pod expiry, stop.
  std::thread housekeeping([&] {
    bool ready_reported = false;
    int ticks = 0;
    while (true) {
      if (external_stop()) {
        stopping.store(true);
        { std::lock_guard<std::mutex> lock(mu); }
        cv.notify_all();
      }
      if (stopping.load()) {
        sched.queue().Close();
        return;
      }
      if (!ready_reported && source.HasSynced()) {
        ready_reported = true;
        spdlog::info("caches synced");
        if (opts.on_ready) opts.on_ready(true);
        cv.notify_all();
      }
      bool lead;
      {
        std::lock_guard<std::mutex> lock(mu);
        lead = leading;
      }
      if (lead && ticks % 10 == 0) {
        sched.queue().FlushBackoffQCompleted();
        if (ticks % 300 == 0) sched.queue().FlushUnschedulablePodsLeftover();
        for (const std::string& key : state.CleanupExpiredAssumedPods()) {
          spdlog::warn("assumed pod {} expired before its binding was observed", key);
        }
      }
      ++ticks;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });

  // Leader election (or lead at once).
  std::thread elector_thread;
  std::unique_ptr<LeaderElector> elector;
  // The elector keeps renewing until bindings and queued writes are done.
  std::atomic<bool> elector_stop{false};
  auto set_leading = [&](bool v) {
    {
      std::lock_guard<std::mutex> lock(mu);
      leading = v;
    }
    cv.notify_all();
  };

  // Standbys keep caches warm: wait for the initial sync before competing.
  while (!source.HasSynced() && !stopping.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(20));

  if (le.leader_elect && !stopping.load()) {
    LeaderElectionConfig lc;
    lc.lease_namespace = le.resource_namespace;
    lc.lease_name = le.resource_name;
    lc.lease_duration_millis = Millis(le.lease_duration);
    lc.renew_deadline_millis = Millis(le.renew_deadline);
    lc.retry_period_millis = Millis(le.retry_period);
    elector = std::make_unique<LeaderElector>(**lease_client, lc, fence.get());
    elector_thread = std::thread([&] {
      bool ok = elector->Run(
          &elector_stop, [&] { set_leading(true); },
          [&] {
            // Stop scheduling at once: no new cycle starts.
            std::lock_guard<std::mutex> lock(mu);
            leading = false;
          });
      if (!ok) {
        // As kube-scheduler: the fence is tripped, nothing more is written;
        // the run ends and the process exits non-zero.
        spdlog::error("Leaderelection lost");
        {
          std::lock_guard<std::mutex> lock(mu);
          lost = true;
        }
        stopping.store(true);
        sched.queue().Close();
        cv.notify_all();
      }
    });
  } else if (!stopping.load()) {
    set_leading(true);
  }

  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return leading || stopping.load() || lost; });
  }
  if (!stopping.load()) {
    spdlog::info("scheduling started");
    if (opts.on_leader) opts.on_leader(true);
    while (!stopping.load()) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!leading) break;
      }
      if (!sched.ScheduleOne(/*blocking=*/true)) break;
    }
    if (opts.on_leader) opts.on_leader(false);
    spdlog::info("scheduling stopped");
  }

  // Shutdown.
  stopping.store(true);
  sched.queue().Close();
  cv.notify_all();
  sched.WaitForBindings();
  {
    const scheduler::BindingPoolStats bs = sched.BindingStats();
    spdlog::info(
        "binding pool: {} cycles, {} threads started (limit {}), at most {} in flight; "
        "API client: {} requests over {} connections",
        bs.started, bs.threads, opts.binding_workers, bs.peak_in_flight, (*client)->requests_sent(),
        (*client)->connections_opened());
  }
  bool was_lost;
  {
    std::lock_guard<std::mutex> lock(mu);
    was_lost = lost;
  }
  // Still leading (graceful stop): let queued status patches and events
  // land before the lease is released (the fence closes then).
  if (!was_lost) writer.Flush(5'000);
  elector_stop.store(true);
  if (elector_thread.joinable()) elector_thread.join();
  housekeeping.join();
  run_metrics.registry.RemoveCollectHook(decode_hook);
  run_metrics.registry.RemoveCollectHook(events_hook);
  run_metrics.registry.RemoveCollectHook(cache_hook);
  source.Stop();
  attachment.reset();
  {
    const WriterStats ws = writer.Stats();
    spdlog::info(
        "writer: {} bindings ({} conflicts), {} events created, {} folded into series, "
        "{} dropped (queue of {} full), {} failed, {} unsent; "
        "{} status patches, {} failed, {} superseded",
        ws.bindings, ws.binding_conflicts, ws.events_created, ws.events_folded, ws.events_dropped,
        wo.event_queue_capacity, ws.event_failures, ws.events_queued, ws.status_patches,
        ws.status_patch_failures, ws.status_patches_superseded);
  }
  (void)discovery_stop;
  if (lost && !external_stop()) return absl::AbortedError("leaderelection lost");
  return absl::OkStatus();
}

}  // namespace gantry::runtime
