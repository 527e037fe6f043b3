// The last scheduling attempt of every pending pod and the last cycle of
// every PodGroup, kept for `gantry explain` (the admin service's Explain).
//
// A DiagnosisStore is an AttemptObserver: it copies what the attempt
// already computed (the FitError's per-node statuses, grouped by plugin and
// reason, with a bounded sample of node names) and nothing else, so the
// scheduling loop pays one pass over the rejected nodes per failed attempt.
// A pod's entry is dropped when the pod is scheduled or deleted; at most
// `max_pods` entries are kept (the least recently attempted goes first).
// Thread-safe: the loop writes, admin threads read copies.
#ifndef GANTRY_SRC_ADMIN_DIAGNOSIS_H_
#define GANTRY_SRC_ADMIN_DIAGNOSIS_H_

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gantry/clock.h"
#include "src/framework/schedule_pod.h"
#include "src/scheduler/scheduler.h"

namespace gantry::admin {

// Nodes rejected for one reason by one plugin.
struct ReasonGroup {
  std::string plugin;
  std::string reason;
  std::string code;  // CodeName() of the status
  int32_t node_count = 0;
  std::vector<std::string> nodes;  // sorted sample, at most the store's limit
};

// Groups `fit`'s per-node statuses by (plugin, reason), largest group first
// (ties by plugin, then reason); nodes PreFilter never let through count in
// one group of their own with no names. Keeps at most `max_nodes` names per group.
std::vector<ReasonGroup> GroupByReason(const framework::FitError& fit, size_t max_nodes);

struct RecordedAttempt {
  std::string pod;  // "namespace/name"
  std::string uid;
  std::string result;  // "unschedulable" | "error"
  std::string message;
  std::string nominated_node;
  int64_t unix_micros = 0;
  int32_t attempts = 0;  // failed attempts recorded since the entry was created
  int32_t num_all_nodes = 0;
  std::string pre_filter_message;
  std::string post_filter_message;
  std::vector<std::string> unschedulable_plugins;  // sorted
  std::vector<ReasonGroup> filtered;
};

struct RecordedGroup {
  scheduler::GroupOutcome outcome;
  int64_t unix_micros = 0;
};

class DiagnosisStore final : public scheduler::AttemptObserver {
 public:
  static constexpr size_t kDefaultMaxPods = 10'000;
  static constexpr size_t kDefaultMaxNodesPerReason = 20;
  static constexpr size_t kMaxGroups = 10'000;

  explicit DiagnosisStore(const Clock& clock, size_t max_pods = kDefaultMaxPods,
                          size_t max_nodes_per_reason = kDefaultMaxNodesPerReason)
      : clock_(clock), max_pods_(max_pods), max_nodes_(max_nodes_per_reason) {}

  void OnAttempt(const scheduler::AttemptOutcome& outcome) override;
  void OnGroup(const scheduler::GroupOutcome& outcome) override;
  void OnPodDeleted(const api::Pod& pod) override;

  // Copies, by "namespace/name".
  std::optional<RecordedAttempt> FindPod(std::string_view key) const;
  std::optional<RecordedGroup> FindGroup(std::string_view key) const;
  size_t pod_count() const;
  size_t group_count() const;

 private:
  using PodList = std::list<RecordedAttempt>;  // most recently attempted first
  const Clock& clock_;
  const size_t max_pods_;
  const size_t max_nodes_;
  mutable std::mutex mu_;
  PodList pods_;
  absl::flat_hash_map<std::string, PodList::iterator> by_key_;
  std::list<RecordedGroup> groups_;  // most recent first
  absl::flat_hash_map<std::string, std::list<RecordedGroup>::iterator> groups_by_key_;
};

}  // namespace gantry::admin

#endif  // GANTRY_SRC_ADMIN_DIAGNOSIS_H_
