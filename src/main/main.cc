// The gantry binary: wiring only. See docs/ and `gantry --help`.
#include <cstdio>

#include "CLI/CLI.hpp"
#include "src/main/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Gantry: a Kubernetes scheduler for AI clusters"};
  app.set_version_flag("--version", "gantry v0.1.0 (Kubernetes API level v1.37)");
  app.require_subcommand(1, 1);
  gantry::cmd::RunFn run;
  gantry::cmd::RegisterSimulate(app, &run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return run ? run() : 2;
}
