// Per-node Filter verdicts and raw Score results of PodScheduler::Schedule,
// kept for the next pods of the same spec (framework::NodeLocalPlugin).
//
// A cached result of node N is served while N's NodeInfo keeps the
// generation it had when the result was computed (every NodeInfo mutation
// moves the generation), to a pod for which every active Filter (and, for
// scores, every active Score) plugin implements NodeLocalPlugin and says its
// results equal those of the pod the cache holds, or implements
// NodeTrackedPlugin and gives the same key; the nodes a NodeTrackedPlugin
// reports changed lose their results first. A pod of another spec
// starts the cache over; a pod whose results are not node-local does not use
// it. The owner chooses the scope and clears the cache when the snapshot's
// nodes change (Snapshot::nodes_version) or other state a NodeLocalPlugin
// reads does (DeviceClasses): the scheduler keeps one for its scheduling and
// group cycles, so a stream of pods or gangs made from one template filters
// and scores each node once plus the nodes that changed since.
//
// Not thread-safe: one scheduling thread uses a cache at a time.
#ifndef GANTRY_SRC_FRAMEWORK_NODE_RESULT_CACHE_H_
#define GANTRY_SRC_FRAMEWORK_NODE_RESULT_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gantry/plugin.h"

namespace gantry::framework {

class NodeResultCache {
 public:
  // One node's results, valid for `generation`. Kept small (the Filter pass
  // reads one per candidate node); the rejection and the raw scores live in
  // side tables indexed by `slot` (status(), raw()).
  struct Entry {
    const NodeInfo* node = nullptr;
    uint64_t generation = 0;
    // When `scored`: the sum of weight x raw score over the score plugins
    // without NormalizeScore (each raw score checked to be in range).
    int64_t fixed_total = 0;
    uint32_t slot = 0;
    enum class Verdict : uint8_t { kUnknown, kFits, kRejected } verdict = Verdict::kUnknown;
    bool scored = false;
  };

  // Prepares the cache for `pod` scheduled by `owner` (the Framework) with
  // `filters` active, after PreFilter wrote `state`: keeps the entries when
  // they were computed for a pod with the same results (dropping those of
  // the nodes NodeTrackedPlugins report changed), else starts over for
  // `pod`. False (the cache is left as it is and must not be used for this
  // pod) when some active filter does not say its results for `pod` are
  // node-local or tracked.
  bool PrepareFilter(const void* owner, const PodInfo& pod,
                     const std::vector<FilterPlugin*>& filters, const CycleState& state);
  // After PrepareFilter returned true for `pod`: prepares the raw scores for
  // the `scores` active after PreScore (forgetting scores kept for another
  // set). False when some of them is neither node-local for `pod` nor one of
  // the tracked filters.
  bool PrepareScore(const PodInfo& pod, const std::vector<ScorePlugin*>& scores,
                    const CycleState& state);
  // Whether the prepared filters include a NodeTrackedPlugin: then kept
  // rejections may name another pod's objects, and a pod no node fits must
  // be filtered afresh for its diagnosis.
  bool tracked() const { return num_tracked_ > 0; }

  // The entry of `node`, emptied first when the node changed since. Entry
  // references stay valid until the next insertion; call Reserve(n) before
  // taking n of them.
  Entry& At(const NodeInfo& node);
  // The same, for the node at `position` of one fixed node list (the
  // snapshot's NodeInfos(), unchanged while the cache holds entries), whose
  // current generation the caller passes (the snapshot's Generations()):
  // cheaper, as neither the NodeInfo nor a hash table is touched.
  Entry& At(const NodeInfo& node, size_t position, uint64_t generation) {
    if (position < slot_at_.size()) {
      const uint32_t slot = slot_at_[position];
      if (slot != kNoSlot) {
        Entry& e = entries_[slot];
        if (e.node == &node) {
          if (e.generation != generation) Forget(e, generation);
          return e;
        }
      }
    }
    return AtNewPosition(node, position);
  }
  void Reserve(size_t more) {
    entries_.reserve(entries_.size() + more);
    slot_of_.reserve(entries_.size() + more);
  }

  // The node's name (valid while the entry is: a node's Node object changes
  // only with the snapshot's nodes_version, which clears the cache).
  std::string_view name(const Entry& e) const { return names_[e.slot]; }
  // The rejection of an entry whose verdict is kRejected.
  Status& status(const Entry& e) { return statuses_[e.slot]; }
  // The raw scores of an entry, one per plugin of the prepared scores (in
  // their order); meaningful when it is `scored`.
  int64_t* raw(const Entry& e) {
    return raw_.data() + static_cast<size_t>(e.slot) * scores_.size();
  }

  void Clear();
  // Nodes with an entry (tests read it).
  size_t size() const { return entries_.size(); }
  // Nodes served from the cache / evaluated, by Filter and by Score (tests
  // and benchmarks read them).
  struct Counters {
    int64_t filter_hits = 0, filter_misses = 0, score_hits = 0, score_misses = 0;
  };
  Counters& counters() { return counters_; }
  const Counters& counters() const { return counters_; }

 private:
  static constexpr uint32_t kNoSlot = ~uint32_t{0};
  // How each plugin of a prepared list may be reused: one of the two
  // pointers is set (the key is the NodeTrackedPlugin's).
  struct Reuse {
    const NodeLocalPlugin* local = nullptr;
    const NodeTrackedPlugin* tracked = nullptr;
    uint64_t key = 0;
  };
  template <typename P>
  static void ReuseOf(const std::vector<P*>& plugins, std::vector<Reuse>* out);
  // Whether every plugin's results for `b` equal those for `a` (keys of
  // tracked plugins from `state`, compared with the held ones unless
  // `fresh`, in which case they are stored).
  static bool AllSame(std::vector<Reuse>& reuse, const PodInfo& a, const PodInfo& b,
                      const CycleState& state, bool fresh);
  // Drops the results of the nodes the tracked filters report changed.
  void SyncTracked(const CycleState& state);
  // Empties `e` for the node's current `generation`.
  void Forget(Entry& e, uint64_t generation);
  Entry& AtNewPosition(const NodeInfo& node, size_t position);
  // Drops every entry, keeping the prepared pod and plugins.
  void ClearEntries();

  const void* owner_ = nullptr;
  std::optional<PodInfo> pod_;  // the spec the entries were computed for
  std::vector<FilterPlugin*> filters_;
  std::vector<Reuse> filter_reuse_;  // per filters_
  std::vector<uint64_t> marks_;      // per filters_: TrackedChangesSince's mark
  size_t num_tracked_ = 0;
  std::vector<std::string> changed_;  // scratch of SyncTracked
  std::vector<ScorePlugin*> scores_;
  std::vector<Reuse> score_reuse_;
  std::vector<Entry> entries_;                              // one per node seen
  std::vector<std::string_view> names_;                     // per slot
  std::vector<Status> statuses_;                            // per slot
  std::vector<int64_t> raw_;                                // per slot x scores_
  absl::flat_hash_map<const NodeInfo*, uint32_t> slot_of_;  // node -> index in entries_
  std::vector<uint32_t> slot_at_;  // position -> index in entries_ (kNoSlot: unknown)
  // name -> index in entries_, for the first size() slots (extended on use).
  absl::flat_hash_map<std::string_view, uint32_t> slot_by_name_;
  Counters counters_;
};

}  // namespace gantry::framework

#endif  // GANTRY_SRC_FRAMEWORK_NODE_RESULT_CACHE_H_
