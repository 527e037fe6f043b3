#include "plugins/default_binder/default_binder.h"

#include <memory>
#include <string>

namespace gantry::plugins::default_binder {

framework::Status DefaultBinder::Bind(framework::CycleState&, const framework::PodInfo& pod,
                                      std::string_view node) {
  absl::Status st = handle_.Writer().BindPod(pod.p(), node);
  if (!st.ok()) return framework::Status::FromAbsl(st);
  return framework::Status();
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder&, api::JsonValue, framework::FrameworkHandle& handle)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        return std::make_unique<DefaultBinder>(handle);
      },
      nullptr, ""});
}

}  // namespace gantry::plugins::default_binder
