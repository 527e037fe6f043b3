// The JSON report of `gantry simulate`: inventory of the loaded cluster and,
// once the engine has run, the scheduling outcome.
#ifndef GANTRY_SRC_SIM_REPORT_H_
#define GANTRY_SRC_SIM_REPORT_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "nlohmann/json.hpp"
#include "src/api/objects.h"

namespace gantry::sim {

// Counts of the loaded objects as the scheduler classifies them.
struct Inventory {
  int64_t nodes = 0;
  int64_t pods_pending = 0;         // unbound, served by one of our profiles
  int64_t pods_bound = 0;           // bound, non-terminal: existing load
  int64_t pods_other_scheduler = 0; // unbound, another scheduler's
  int64_t pods_terminal = 0;        // Succeeded/Failed: ignored
  int64_t pods_gated = 0;           // pending with scheduling gates
};

// Classifies pods against the scheduler names Gantry serves.
Inventory TakeInventory(const api::ObjectSet& objects,
                        const std::vector<std::string>& scheduler_names);

nlohmann::json InventoryJson(const Inventory& inv);

}  // namespace gantry::sim

#endif  // GANTRY_SRC_SIM_REPORT_H_
