// Explicit plugin registry: name -> factory (+ args defaulting). Built-in
// plugins are added by RegisterBuiltinPlugins() in plugins/registry.cc, one
// line per plugin; there are no static initialisers.
//
// Args arrive as the JSON of `pluginConfig[].args` (null when absent). A
// factory or defaulter reports bad args through the Decoder it is given, so
// the configuration loader can point at the YAML line of the bad field.
#ifndef GANTRY_REGISTRY_H_
#define GANTRY_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "nlohmann/json.hpp"
#include "src/api/decode.h"

namespace gantry::framework {

// Builds a plugin from its (already validated) args. Errors in args are
// recorded in `d`; other failures are returned.
using PluginFactory = std::function<absl::StatusOr<std::unique_ptr<Plugin>>(
    api::Decoder& d, api::JsonValue args, FrameworkHandle& handle)>;

// Decodes, defaults and validates args; returns them in canonical JSON form
// (what --write-config-to prints). Errors are recorded in `d`.
using ArgsDefaulter = std::function<nlohmann::json(api::Decoder& d, api::JsonValue args)>;

struct PluginRegistration {
  std::string name;
  PluginFactory factory;
  ArgsDefaulter default_args;  // null: the plugin takes no args
  std::string args_kind;       // e.g. "NodeResourcesFitArgs"
};

class Registry {
 public:
  // AlreadyExists for a repeated name.
  absl::Status Register(PluginRegistration registration);
  const PluginRegistration* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  absl::flat_hash_map<std::string, PluginRegistration> plugins_;
};

}  // namespace gantry::framework

#endif  // GANTRY_REGISTRY_H_
