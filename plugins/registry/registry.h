// Registration of every built-in plugin, from the one list in
// plugins/registry/CMakeLists.txt (GANTRY_BUILTIN_PLUGINS). The configuration loader and the framework look plugins up
// in the Registry this fills; there are no static initialisers.
#ifndef GANTRY_PLUGINS_REGISTRY_REGISTRY_H_
#define GANTRY_PLUGINS_REGISTRY_REGISTRY_H_

#include "absl/status/status.h"
#include "gantry/registry.h"

namespace gantry::plugins {

// Registers all built-in plugins; AlreadyExists if one is already present.
absl::Status RegisterBuiltinPlugins(framework::Registry& registry);

}  // namespace gantry::plugins

#endif  // GANTRY_PLUGINS_REGISTRY_REGISTRY_H_
