// Leader election over a coordination.k8s.io/v1 Lease (the upstream
// algorithm): try to acquire every retryPeriod (with jitter) until the lease
// is free or expired (by our local observation of its record), then renew
// every retryPeriod. Leadership is lost when no renewal succeeds within
// renewDeadline of the start of the last successful one (every lease
// request, its retries and Retry-After waits included, is cut at that
// moment on the monotonic clock), or at once when the lease turns out to be
// held by someone else. Updates use optimistic concurrency (resourceVersion).
//
// With a WriteFence the elector opens it on acquiring, extends it to (start
// of each successful renewal + renewDeadline) and trips it on loss and
// before releasing the lease, so no fenced write leaves the process once
// the lease may be someone else's.
#ifndef GANTRY_SRC_CLIENT_LEADER_ELECTION_H_
#define GANTRY_SRC_CLIENT_LEADER_ELECTION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "src/client/http.h"
#include "src/client/write_fence.h"

namespace gantry::client {

struct LeaderElectionConfig {
  std::string lease_namespace = "kube-system";
  std::string lease_name = "gantry-scheduler";
  std::string identity;  // <hostname>_<uuid>
  int64_t lease_duration_millis = 15'000;
  int64_t renew_deadline_millis = 10'000;
  int64_t retry_period_millis = 2'000;
  bool release_on_stop = true;  // clear the holder when stopping gracefully
};

struct LeaseRecord {
  std::string holder;
  int64_t lease_duration_seconds = 0;
  int64_t acquire_micros = 0;
  int64_t renew_micros = 0;
  int64_t transitions = 0;
  std::string resource_version;
};

class LeaderElector {
 public:
  // `fence` (may be null) must outlive the elector.
  LeaderElector(HttpClient& client, LeaderElectionConfig config, WriteFence* fence = nullptr);

  // Blocks: acquires the lease, calls on_started(), renews until the lease
  // is lost (returns false) or *stop becomes true (returns true, after
  // releasing the lease when configured). on_stopped() runs in both cases
  // once leadership ends.
  bool Run(const std::atomic<bool>* stop, const std::function<void()>& on_started,
           const std::function<void()>& on_stopped);

  bool IsLeader() const { return leader_.load(); }
  const LeaderElectionConfig& config() const { return config_; }
  // One round of the algorithm (exposed for tests), bounded by renewDeadline:
  // true when we hold the lease afterwards.
  bool TryAcquireOrRenew();

 private:
  // One round whose requests all end by `deadline_micros` (MonotonicMicros()).
  bool TryAcquireOrRenewBy(int64_t deadline_micros);
  absl::StatusOr<LeaseRecord> Get(bool* not_found, int64_t deadline_micros);
  bool Write(const LeaseRecord& record, bool create, int64_t deadline_micros);
  void Release();
  // The last observed record names another holder.
  bool HeldByOther() const;
  std::string LeasePath(bool collection) const;

  HttpClient& client_;
  LeaderElectionConfig config_;
  WriteFence* fence_;
  std::atomic<bool> leader_{false};
  // The record as last observed and when (local monotonic clock).
  std::string observed_raw_;
  LeaseRecord observed_;
  int64_t observed_at_micros_ = 0;
};

// <hostname>_<random uuid>, as kube-scheduler builds its identity.
std::string DefaultIdentity();
std::string Hostname();

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_LEADER_ELECTION_H_
