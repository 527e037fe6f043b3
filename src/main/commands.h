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

}  // namespace gantry::cmd

#endif  // GANTRY_SRC_MAIN_COMMANDS_H_
