// Subcommands of the `gantry` binary. Each Register* function adds one
// subcommand to the CLI11 app and sets `*run` to its entry point when chosen.
#ifndef GANTRY_SRC_MAIN_COMMANDS_H_
#define GANTRY_SRC_MAIN_COMMANDS_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace gantry::cmd {

// Entry point of the chosen subcommand; returns the process exit code.
using RunFn = std::function<int()>;

void RegisterSimulate(CLI::App& app, RunFn* run);
void RegisterSelector(CLI::App& app, RunFn* run);
// Admin commands (snapshot_cmd.cc and friends).
void RegisterSnapshot(CLI::App& app, RunFn* run);
void RegisterRecord(CLI::App& app, RunFn* run);
void RegisterExplain(CLI::App& app, RunFn* run);
void RegisterWhatIf(CLI::App& app, RunFn* run);
// `gantry config validate` (config_cmd.cc).
void RegisterConfig(CLI::App& app, RunFn* run);

// The top-level kube-scheduler-compatible flags (run_cmd.cc). Sets `*run`
// at once: main calls it when no subcommand was chosen.
void RegisterRun(CLI::App& app, RunFn* run);

// Parses argv: rejects removed kube-scheduler flags, accepts pflag
// spellings (-v=4), then CLI11. Returns -1 to go on, else the exit code
// (0 for --help/--version).
int ParseCommandLine(CLI::App& app, int argc, char** argv);

}  // namespace gantry::cmd

#endif  // GANTRY_SRC_MAIN_COMMANDS_H_
