// `gantry config validate FILE...`: loads each scheduler configuration file
// exactly as `gantry --config FILE` does (decoding, defaulting, plugin args,
// validation) and reports the result without contacting any cluster.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "plugins/registry/registry.h"
#include "src/config/config.h"
#include "src/main/commands.h"

namespace gantry::cmd {
namespace {

struct ValidateOptions {
  std::vector<std::string> files;
};

// Exit code: 0 when every file is valid (warnings allowed), 1 when one is not.
int RunValidate(const ValidateOptions& opts) {
  framework::Registry registry;
  if (absl::Status st = plugins::RegisterBuiltinPlugins(registry); !st.ok()) {
    std::fprintf(stderr, "gantry config validate: registering plugins: %s\n",
                 std::string(st.message()).c_str());
    return 1;
  }
  int rc = 0;
  for (const std::string& file : opts.files) {
    absl::StatusOr<config::Configuration> cfg = config::LoadConfigFile(file, registry);
    if (!cfg.ok()) {
      // Load errors name the file (and line:column where there is one).
      std::fprintf(stderr, "error: %s\n", std::string(cfg.status().message()).c_str());
      rc = 1;
      continue;
    }
    for (const std::string& w : cfg->warnings) {
      std::fprintf(stderr, "warning: %s\n", w.c_str());
    }
    std::string profiles;
    for (const config::Profile& p : cfg->profiles) {
      profiles += (profiles.empty() ? "" : ", ") + p.scheduler_name;
    }
    std::printf("%s: valid: profiles [%s], %zu warning(s)\n", file.c_str(), profiles.c_str(),
                cfg->warnings.size());
  }
  return rc;
}

}  // namespace

void RegisterConfig(CLI::App& app, RunFn* run) {
  CLI::App* cfg = app.add_subcommand("config", "Work with scheduler configuration files");
  cfg->require_subcommand(1);
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* validate = cfg->add_subcommand(
      "validate",
      "Check configuration files as `gantry --config FILE` would load them (no cluster needed)");
  validate->add_option("files", opts->files, "KubeSchedulerConfiguration files (YAML or JSON)")
      ->required();
  validate->footer(
      "Example:\n  gantry config validate deploy/config.yaml\n"
      "Exit code 0 when every file is valid (warnings are printed to stderr), 1 otherwise.");
  validate->callback([opts, run] { *run = [opts] { return RunValidate(*opts); }; });
}

}  // namespace gantry::cmd
