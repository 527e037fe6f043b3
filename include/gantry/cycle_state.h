// Per-attempt scratch space shared by the plugins of one scheduling cycle.
//
// PreFilter / PreScore compute once and Write; Filter / Score Read back for
// every node. Keys are namespaced by the writing plugin ("PreFilter" + name).
// All plugins are trusted: any plugin may read, alter or delete any key.
// A missing key is an error verdict at the call site, never a crash.
//
// Thread safety: during the parallel Filter and Score phases CycleState is
// only read; writes happen in the serial phases (PreFilter, PreScore,
// Reserve, ...). Clone() is used by preemption to evaluate "what if".
#ifndef GANTRY_CYCLE_STATE_H_
#define GANTRY_CYCLE_STATE_H_

#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "gantry/util/strings.h"

namespace gantry::framework {

class StateData {
 public:
  virtual ~StateData() = default;
  // A copy whose later mutation does not affect the original. Data that
  // AddPod/RemovePod never change may be shared.
  virtual std::unique_ptr<StateData> Clone() const = 0;
};

class CycleState {
 public:
  CycleState() = default;
  CycleState(const CycleState&) = delete;
  CycleState& operator=(const CycleState&) = delete;

  void Write(std::string_view key, std::unique_ptr<StateData> data) {
    data_[std::string(key)] = std::move(data);
  }
  void Delete(std::string_view key) { data_.erase(std::string(key)); }

  // Typed read; NotFound when the key is absent, Internal on a type mismatch.
  template <typename T>
  absl::StatusOr<T*> Read(std::string_view key) const {
    // Heterogeneous lookup: no std::string per call (Filter/Score read once
    // per node).
    auto it = data_.find(gantry::AsAbsl(key));
    if (it == data_.end()) {
      return absl::NotFoundError(gantry::StrCat("error reading \"", key, "\" from cycleState: not found"));
    }
    StateData* data = it->second.get();
    // Exact-type check first (a pointer compare); dynamic_cast only for subclasses.
    T* typed = (data != nullptr && typeid(*data) == typeid(T)) ? static_cast<T*>(data)
                                                                 : dynamic_cast<T*>(data);
    if (typed == nullptr) {
      return absl::InternalError(gantry::StrCat("cycleState key \"", key, "\" has an unexpected type"));
    }
    return typed;
  }

  std::unique_ptr<CycleState> Clone() const {
    auto copy = std::make_unique<CycleState>();
    for (const auto& [k, v] : data_) {
      if (v) copy->data_[k] = v->Clone();
    }
    copy->skip_filter_plugins_ = skip_filter_plugins_;
    copy->skip_score_plugins_ = skip_score_plugins_;
    return copy;
  }

  // Plugins whose PreFilter / PreScore returned Skip for this cycle.
  absl::flat_hash_map<std::string, bool>& skip_filter_plugins() { return skip_filter_plugins_; }
  absl::flat_hash_map<std::string, bool>& skip_score_plugins() { return skip_score_plugins_; }
  bool SkipFilter(std::string_view plugin) const {
    return skip_filter_plugins_.contains(std::string(plugin));
  }
  bool SkipScore(std::string_view plugin) const {
    return skip_score_plugins_.contains(std::string(plugin));
  }

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<StateData>> data_;
  absl::flat_hash_map<std::string, bool> skip_filter_plugins_;
  absl::flat_hash_map<std::string, bool> skip_score_plugins_;
};

}  // namespace gantry::framework

#endif  // GANTRY_CYCLE_STATE_H_
