#include "plugins/registry/registry.h"

#include "gantry/util/status_macros.h"
// The built-in plugins' headers and GANTRY_REGISTER_BUILTIN_PLUGINS, generated
// from the list in plugins/registry/CMakeLists.txt.
#include "builtin_plugins.inc"

namespace gantry::plugins {

absl::Status RegisterBuiltinPlugins(framework::Registry& registry) {
  GANTRY_REGISTER_BUILTIN_PLUGINS(registry);
  return absl::OkStatus();
}

}  // namespace gantry::plugins
