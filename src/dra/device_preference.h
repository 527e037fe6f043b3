// DevicePreference: a CycleState entry through which a score plugin tells
// DynamicResources which devices it would like the pod's claims to get on
// each node (inventory indexes, most preferred first).
//
// Contract:
//  - the writer creates the entry in PreScore (serial) under
//    kDevicePreferenceKey and fills it per node from Score (parallel; Set is
//    thread-safe). One plugin per profile should write it; a later
//    PreScore write replaces an earlier one.
//  - DynamicResources reads it in Reserve for the chosen node and, when the
//    entry refers to the same inventory as its allocator, allocates there
//    with the listed devices tried first (dra::Allocator::Allocate's
//    `preferred`). The allocator still checks every constraint, so a stale
//    or unsatisfiable preference only changes the search order, never the
//    validity of the placement; if that allocation fails, the solution found
//    by Filter is used.
#ifndef GANTRY_SRC_DRA_DEVICE_PREFERENCE_H_
#define GANTRY_SRC_DRA_DEVICE_PREFERENCE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "gantry/cycle_state.h"
#include "gantry/util/strings.h"
#include "src/state/dra_state.h"

namespace gantry::dra {

inline constexpr std::string_view kDevicePreferenceKey = "DevicePreference";

class DevicePreference final : public framework::StateData {
 public:
  using Devices = absl::InlinedVector<int32_t, 4>;

  // `inventory`: the snapshot inventory the device indexes refer to.
  explicit DevicePreference(std::shared_ptr<const state::DraInventory> inventory)
      : inventory_(std::move(inventory)) {}
  DevicePreference(const DevicePreference& other)
      : inventory_(other.inventory_), by_node_(other.Copy()) {}

  // Records the preferred devices on `node` (replacing an earlier entry).
  // Thread-safe.
  void Set(std::string_view node, absl::Span<const int32_t> devices) {
    std::lock_guard<std::mutex> lock(mu_);
    by_node_.insert_or_assign(std::string(node), Devices(devices.begin(), devices.end()));
  }

  // The preferred devices on `node`; empty when none were recorded or when
  // `inventory` is not the one the indexes refer to.
  Devices Get(std::string_view node, const state::DraInventory* inventory) const {
    if (inventory == nullptr || inventory != inventory_.get()) return {};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_node_.find(gantry::AsAbsl(node));
    return it == by_node_.end() ? Devices() : it->second;
  }

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<DevicePreference>(*this);
  }

 private:
  absl::flat_hash_map<std::string, Devices> Copy() const {
    std::lock_guard<std::mutex> lock(mu_);
    return by_node_;
  }

  std::shared_ptr<const state::DraInventory> inventory_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, Devices> by_node_;
};

}  // namespace gantry::dra

#endif  // GANTRY_SRC_DRA_DEVICE_PREFERENCE_H_
