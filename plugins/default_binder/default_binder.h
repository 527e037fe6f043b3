// DefaultBinder (Bind): binds the pod through the cluster writer (live: a
// POST to pods/binding; offline: the in-memory binder). Upstream:
// pkg/scheduler/framework/plugins/defaultbinder.
#ifndef GANTRY_PLUGINS_DEFAULT_BINDER_DEFAULT_BINDER_H_
#define GANTRY_PLUGINS_DEFAULT_BINDER_DEFAULT_BINDER_H_

#include <string_view>

#include "absl/status/status.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"

namespace gantry::plugins::default_binder {

inline constexpr std::string_view kName = "DefaultBinder";

class DefaultBinder final : public framework::BindPlugin {
 public:
  explicit DefaultBinder(framework::FrameworkHandle& handle) : handle_(handle) {}
  std::string_view Name() const override { return kName; }
  // Success once the writer accepted the binding; Error with the writer's
  // message otherwise (the scheduler forgets the pod and retries it).
  framework::Status Bind(framework::CycleState& state, const framework::PodInfo& pod,
                         std::string_view node) override;

 private:
  framework::FrameworkHandle& handle_;
};

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::default_binder

#endif  // GANTRY_PLUGINS_DEFAULT_BINDER_DEFAULT_BINDER_H_
