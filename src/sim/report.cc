#include "src/sim/report.h"

#include <algorithm>

namespace gantry::sim {

Inventory TakeInventory(const api::ObjectSet& objects,
                        const std::vector<std::string>& scheduler_names) {
  Inventory inv;
  inv.nodes = static_cast<int64_t>(objects.nodes.size());
  for (const api::Pod& pod : objects.pods) {
    if (pod.IsTerminal()) {
      inv.pods_terminal++;
    } else if (pod.IsBound()) {
      inv.pods_bound++;
    } else if (std::find(scheduler_names.begin(), scheduler_names.end(),
                         pod.scheduler_name.view()) != scheduler_names.end()) {
      inv.pods_pending++;
      if (pod.IsGated()) inv.pods_gated++;
    } else {
      inv.pods_other_scheduler++;
    }
  }
  return inv;
}

nlohmann::json InventoryJson(const Inventory& inv) {
  return nlohmann::json{{"nodes", inv.nodes},
                        {"pods_pending", inv.pods_pending},
                        {"pods_bound", inv.pods_bound},
                        {"pods_other_scheduler", inv.pods_other_scheduler},
                        {"pods_terminal", inv.pods_terminal},
                        {"pods_gated", inv.pods_gated}};
}

}  // namespace gantry::sim
