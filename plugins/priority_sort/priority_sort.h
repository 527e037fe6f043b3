// PrioritySort (QueueSort): higher priority first, then earlier queue
// timestamp. Upstream: pkg/scheduler/framework/plugins/queuesort.
#ifndef GANTRY_PLUGINS_PRIORITY_SORT_PRIORITY_SORT_H_
#define GANTRY_PLUGINS_PRIORITY_SORT_PRIORITY_SORT_H_

#include <string_view>

#include "absl/status/status.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"

namespace gantry::plugins::priority_sort {

inline constexpr std::string_view kName = "PrioritySort";

class PrioritySort final : public framework::QueueSortPlugin {
 public:
  std::string_view Name() const override { return kName; }
  // a before b iff prio(a) > prio(b), or equal priority and a entered the
  // queue strictly earlier.
  bool Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override;
};

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::priority_sort

#endif  // GANTRY_PLUGINS_PRIORITY_SORT_PRIORITY_SORT_H_
