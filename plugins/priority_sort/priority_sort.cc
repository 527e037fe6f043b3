#include "plugins/priority_sort/priority_sort.h"

#include <memory>
#include <string>

namespace gantry::plugins::priority_sort {

bool PrioritySort::Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const {
  int32_t pa = a.pod_info ? a.pod_info->priority : 0;
  int32_t pb = b.pod_info ? b.pod_info->priority : 0;
  return pa > pb || (pa == pb && a.timestamp_micros < b.timestamp_micros);
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder&, api::JsonValue, framework::FrameworkHandle&)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        return std::make_unique<PrioritySort>();
      },
      nullptr, ""});
}

}  // namespace gantry::plugins::priority_sort
