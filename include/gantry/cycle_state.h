// Per-attempt scratch space shared by the plugins of one scheduling cycle.
//
// PreFilter / PreScore compute once and Write; Filter / Score Read back for
// every node. Keys are namespaced by the writing plugin ("PreFilter" + name).
// All plugins are trusted: any plugin may read, alter or delete any key.
// A missing key is an error verdict at the call site, never a crash.
//
// Keys are interned into `StateKey`s (a process-wide small integer per key
// text), so a read is an index and a pointer compare. Plugins on the
// per-node path hold a `static const StateKey`; the string_view overloads
// intern on every call and are meant for tests and cold paths.
//
// Thread safety: during the parallel Filter and Score phases CycleState is
// only read; writes happen in the serial phases (PreFilter, PreScore,
// Reserve, ...). Clone() is used by preemption to evaluate "what if".
#ifndef GANTRY_CYCLE_STATE_H_
#define GANTRY_CYCLE_STATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
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

// An interned CycleState key. Two keys with the same text have the same id
// for the life of the process. Construction takes a lock; copy freely.
class StateKey {
 public:
  explicit StateKey(std::string_view name);
  uint32_t id() const { return id_; }
  std::string_view name() const { return *name_; }

 private:
  uint32_t id_;
  const std::string* name_;  // owned by the process-wide intern table
};

class CycleState {
 public:
  CycleState() = default;
  CycleState(const CycleState&) = delete;
  CycleState& operator=(const CycleState&) = delete;

  void Write(const StateKey& key, std::unique_ptr<StateData> data) {
    Slot& slot = SlotFor(key.id());
    slot.type = TypeOf(data.get());
    slot.data = std::move(data);
  }
  void Write(std::string_view key, std::unique_ptr<StateData> data) { Write(StateKey(key), std::move(data)); }
  void Delete(const StateKey& key) {
    if (key.id() < slots_.size()) slots_[key.id()] = Slot();
  }
  void Delete(std::string_view key) { Delete(StateKey(key)); }

  // Typed read; NotFound when the key is absent, Internal on a type mismatch.
  template <typename T>
  absl::StatusOr<T*> Read(const StateKey& key) const {
    if (T* typed = Get<T>(key)) return typed;
    return ReadError(key, key.id() < slots_.size() && slots_[key.id()].data != nullptr);
  }
  template <typename T>
  absl::StatusOr<T*> Read(std::string_view key) const {
    return Read<T>(StateKey(key));
  }
  // The fast path of Read: the data if present with type T (or a subclass),
  // else nullptr.
  template <typename T>
  T* Get(const StateKey& key) const {
    if (key.id() >= slots_.size()) return nullptr;
    const Slot& slot = slots_[key.id()];
    // Exact type first (a pointer compare); dynamic_cast only for subclasses.
    if (slot.type == &typeid(T)) return static_cast<T*>(slot.data.get());
    return dynamic_cast<T*>(slot.data.get());
  }

  std::unique_ptr<CycleState> Clone() const {
    auto copy = std::make_unique<CycleState>();
    copy->slots_.resize(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].data == nullptr) continue;
      copy->slots_[i].data = slots_[i].data->Clone();
      copy->slots_[i].type = TypeOf(copy->slots_[i].data.get());
    }
    copy->skip_filter_plugins_ = skip_filter_plugins_;
    copy->skip_score_plugins_ = skip_score_plugins_;
    return copy;
  }

  // Plugins whose PreFilter / PreScore returned Skip for this cycle.
  absl::flat_hash_map<std::string, bool>& skip_filter_plugins() { return skip_filter_plugins_; }
  absl::flat_hash_map<std::string, bool>& skip_score_plugins() { return skip_score_plugins_; }
  bool SkipFilter(std::string_view plugin) const {
    return !skip_filter_plugins_.empty() && skip_filter_plugins_.contains(gantry::AsAbsl(plugin));
  }
  bool SkipScore(std::string_view plugin) const {
    return !skip_score_plugins_.empty() && skip_score_plugins_.contains(gantry::AsAbsl(plugin));
  }

 private:
  struct Slot {
    std::unique_ptr<StateData> data;
    const std::type_info* type = nullptr;  // dynamic type of *data
  };

  // Dynamic type of *data, or nullptr for no data. Taking the reference first
  // keeps the pointer dereference out of the typeid operand.
  static const std::type_info* TypeOf(const StateData* data) {
    if (data == nullptr) return nullptr;
    const StateData& ref = *data;
    return &typeid(ref);
  }

  Slot& SlotFor(uint32_t id) {
    if (id >= slots_.size()) slots_.resize(id + 1);
    return slots_[id];
  }
  static absl::Status ReadError(const StateKey& key, bool present);

  absl::InlinedVector<Slot, 16> slots_;
  absl::flat_hash_map<std::string, bool> skip_filter_plugins_;
  absl::flat_hash_map<std::string, bool> skip_score_plugins_;
};

}  // namespace gantry::framework

#endif  // GANTRY_CYCLE_STATE_H_
