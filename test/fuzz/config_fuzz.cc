// libFuzzer target for the KubeSchedulerConfiguration loader: YAML or JSON
// text through strict decoding, defaulting, validation and every built-in
// plugin's args decoder (the real registry). Property: a configuration that
// loads renders (WriteConfig) to text that loads back to an equal
// configuration, as --write-config-to promises.
#include <cstddef>
#include <cstdint>

#include "gantry/registry.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "test/fuzz/fuzz_util.h"

namespace {

const gantry::framework::Registry& BuiltinRegistry() {
  static const gantry::framework::Registry* registry = [] {
    auto* r = new gantry::framework::Registry;
    if (!gantry::plugins::RegisterBuiltinPlugins(*r).ok()) {
      gantry::fuzz::PropertyFailed("built-in plugins failed to register");
    }
    return r;
  }();
  return *registry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry::config;
  const std::string_view text = gantry::fuzz::AsText(data, size);
  const auto& registry = BuiltinRegistry();
  absl::StatusOr<Configuration> loaded = LoadConfigText(text, "fuzz.yaml", registry);
  if (!loaded.ok()) {
    if (loaded.status().message().empty()) gantry::fuzz::PropertyFailed("error without a message");
    return 0;
  }
  const std::string written = WriteConfig(*loaded);
  absl::StatusOr<Configuration> again = LoadConfigText(written, "written.yaml", registry);
  if (!again.ok()) gantry::fuzz::PropertyFailed("written configuration does not load");
  // Warnings are rendered as comments and so do not survive a round trip.
  again->warnings = loaded->warnings;
  if (!(*again == *loaded)) gantry::fuzz::PropertyFailed("written configuration loads differently");
  return 0;
}
