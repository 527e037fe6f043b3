// DefaultPreemption (PostFilter): when no node fits a pod, look for a node
// where evicting lower-priority pods would make it fit, pick the best such
// node by upstream's ordered criteria, delete the victims and nominate the
// node. Upstream semantics: pkg/scheduler/framework/plugins/defaultpreemption
// and framework/preemption, with 1.37's victim units: a victim's PodGroup
// priority replaces its own, and an `all` group is evicted whole or not at
// all. PodGroup preemptors are handled by the group cycle
// (src/scheduler/group_preemption.cc).
#ifndef GANTRY_PLUGINS_DEFAULT_PREEMPTION_DEFAULT_PREEMPTION_H_
#define GANTRY_PLUGINS_DEFAULT_PREEMPTION_DEFAULT_PREEMPTION_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "src/api/decode.h"

namespace gantry::plugins::default_preemption {

inline constexpr std::string_view kName = "DefaultPreemption";
inline constexpr std::string_view kArgsKind = "DefaultPreemptionArgs";

inline constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";
inline constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";
inline constexpr std::string_view kPolicyNever = "not eligible due to preemptionPolicy=Never.";
inline constexpr std::string_view kTerminatingVictim =
    "not eligible due to a terminating pod on the nominated node.";

// DefaultPreemptionArgs: how many candidate nodes the dry run must find
// before it stops: max(numNodes * percentage / 100, absolute), capped at
// the number of nodes where preemption might help.
struct DefaultPreemptionArgs {
  int64_t min_candidate_nodes_percentage = 10;
  int64_t min_candidate_nodes_absolute = 100;

  // Decodes JSON (strict fields), defaults absent fields and validates.
  static DefaultPreemptionArgs Decode(api::Decoder& d, api::JsonValue v);
  absl::Status Validate() const;
  void ValidateInto(api::Decoder& d) const;
  nlohmann::json ToJson() const;
};

// Placed members of PodGroups with disruptionMode `all`, built on first use
// (thread-safe) from the snapshot: such a group is evicted whole or not at
// all, so a victim on one node brings its members on other nodes along.
class WholeGroupIndex {
 public:
  struct Group {
    std::vector<framework::PodInfoPtr> members;
    int32_t max_priority = std::numeric_limits<int32_t>::min();  // effective (group) priority
  };
  explicit WholeGroupIndex(const framework::FrameworkHandle& handle) : handle_(handle) {}
  // The group `key`, or null when it has no placed member.
  const Group* Get(const std::string& key);

 private:
  const framework::FrameworkHandle& handle_;
  std::once_flag once_;
  absl::flat_hash_map<std::string, Group> groups_;
};

// The victims chosen on one node.
struct Candidate {
  std::string node;
  std::vector<framework::PodInfoPtr> victims;  // most important first
  int64_t num_pdb_violations = 0;
  std::vector<std::string> whole_groups;  // `all` groups evicted whole (keys), sorted
};

class DefaultPreemption final : public framework::PostFilterPlugin {
 public:
  DefaultPreemption(DefaultPreemptionArgs args, framework::FrameworkHandle& handle)
      : args_(args), handle_(handle) {}
  std::string_view Name() const override { return kName; }

  framework::PostFilterResult PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                         const framework::NodeToStatus& filtered) override;

  // ---- Steps, exposed for tests -------------------------------------------
  // "" when the pod may preempt, else the reason it may not.
  std::string EligibleToPreemptOthers(const framework::PodInfo& pod,
                                      const framework::NodeToStatus& filtered) const;
  // The number of candidates the dry run looks for among `num_nodes` nodes.
  int NumCandidates(int num_nodes) const;
  // Victims on `node` (a copy is modified). Success with the candidate, or
  // the reason the node cannot help.
  // Victims in an `all` group are evicted together with the group's members
  // on other nodes (from `groups`; null builds a private index).
  framework::Status SelectVictimsOnNode(const framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::NodeInfo& node,
                                        const std::vector<framework::PodInfoPtr>& nominated, Candidate* out,
                                        WholeGroupIndex* groups = nullptr) const;
  // Index of the best candidate (upstream pickOneNodeForPreemption); -1 if none.
  static int PickOne(const std::vector<Candidate>& candidates);

  const DefaultPreemptionArgs& args() const { return args_; }

 private:
  struct DryRun;
  // SelectVictimsOnNode within one dry run.
  framework::Status Evaluate(const DryRun& run, const framework::NodeInfo& node,
                             const std::vector<framework::PodInfoPtr>& nominated,
                             Candidate* out) const;
  // Filters on `node` with the nominated pods `room` added, then without them
  // (upstream RunFilterPluginsWithNominatedPods).
  framework::Status FitsWithNominated(const DryRun& run, const framework::CycleState& state,
                                      const framework::NodeInfo& node,
                                      const std::vector<framework::PodInfoPtr>& room) const;

  DefaultPreemptionArgs args_;
  framework::FrameworkHandle& handle_;
  std::atomic<uint64_t> offset_{0};  // rotating start of the dry run
};

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::default_preemption

#endif  // GANTRY_PLUGINS_DEFAULT_PREEMPTION_DEFAULT_PREEMPTION_H_
