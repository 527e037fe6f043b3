// Building blocks for PreFilter/PreScore passes over all nodes that are kept
// up to date incrementally across scheduling cycles instead of recomputed.
//
//  - Signature: a byte string that identifies everything a per-node result
//    depends on besides the NodeInfo itself (the incoming pod's namespace,
//    selectors, terms, ...). Two pods with equal signatures get equal
//    per-node results on the same NodeInfo.
//  - NodeChangeTracker: remembers which NodeInfo (pointer and generation)
//    each position of the node list held at the last pass and reports the
//    positions that changed since. NodeInfo generations are process-wide and
//    bump on every mutation (types.h), so an equal (pointer, generation) pair
//    means the same content.
//
// Results must not depend on which earlier pods built the memo: a pass over
// the changed positions must leave exactly what a full pass would compute.
#ifndef GANTRY_PLUGINS_HELPER_NODE_MEMO_H_
#define GANTRY_PLUGINS_HELPER_NODE_MEMO_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gantry/types.h"
#include "src/api/selectors.h"

namespace gantry::plugins::helper {

class Signature {
 public:
  void Add(uint64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void Add(api::Symbol s) { Add(static_cast<uint64_t>(s.id())); }
  void Add(const api::Requirement& r) {
    Add(r.key);
    Add(static_cast<uint64_t>(r.op));
    Add(static_cast<uint64_t>(r.int_value));
    AddList(r.values);
  }
  void Add(const api::LabelSelector& s) { AddList(s.requirements); }
  void Add(const std::optional<api::LabelSelector>& s) {
    Add(static_cast<uint64_t>(s.has_value()));
    if (s) Add(*s);
  }
  void Add(const api::NodeSelectorTerm& t) {
    AddList(t.match_expressions);
    AddList(t.match_fields);
  }
  void Add(const api::NodeSelector& s) { AddList(s.terms); }
  void Add(const std::pair<api::Symbol, api::Symbol>& label) {
    Add(label.first);
    Add(label.second);
  }
  void Add(const api::Toleration& t) {
    Add(t.key);
    Add(static_cast<uint64_t>(t.op));
    Add(t.value);
    Add(static_cast<uint64_t>(t.effect));
    Add(static_cast<uint64_t>(t.toleration_seconds.has_value()));
    Add(static_cast<uint64_t>(t.toleration_seconds.value_or(0)));
  }
  template <typename T>
  void AddList(const std::vector<T>& items) {
    Add(static_cast<uint64_t>(items.size()));
    for (const T& item : items) Add(item);
  }

  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class NodeChangeTracker {
 public:
  // Forgets every position: the next Diff reports all of them.
  void Reset() { seen_.clear(); }
  size_t size() const { return seen_.size(); }

  // Positions in [0, nodes.size()) whose NodeInfo differs from the last
  // Diff, in increasing order, and records the current ones. Positions at
  // or beyond nodes.size() that were tracked are dropped; the caller learns
  // of them from `size()` before the call.
  void Diff(const std::vector<framework::NodeInfo*>& nodes, std::vector<int>* changed) {
    changed->clear();
    const size_t n = nodes.size();
    if (seen_.size() != n) seen_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const framework::NodeInfo* ni = nodes[i];
      Seen& s = seen_[i];
      const uint64_t gen = ni->generation();
      if (s.node == ni && s.generation == gen) continue;
      s.node = ni;
      s.generation = gen;
      changed->push_back(static_cast<int>(i));
    }
  }

 private:
  struct Seen {
    const framework::NodeInfo* node = nullptr;
    uint64_t generation = 0;
  };
  std::vector<Seen> seen_;
};

}  // namespace gantry::plugins::helper

#endif  // GANTRY_PLUGINS_HELPER_NODE_MEMO_H_
