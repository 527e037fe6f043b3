// The gantry binary: wiring only. See docs/ and `gantry --help`.
//   gantry --config FILE [flags]   run the scheduler (kube-scheduler compatible)
//   gantry simulate ...            schedule a snapshot offline
//   gantry selector eval ...       test DRA device selectors
//   gantry snapshot convert ...    convert snapshots (.pb, YAML, JSON)
//   gantry record -o FILE          record a live cluster into a snapshot
//   gantry explain POD             why a pod (or podgroup/NAME) is pending
//   gantry whatif -f FILE          would these objects fit now, and where
#include "CLI/CLI.hpp"
#include "src/main/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Gantry: a Kubernetes scheduler for AI clusters.\n"
               "Without a subcommand, runs the scheduler against the API server (kube-scheduler flags)."};
  app.set_version_flag("--version", "gantry v0.1.0 (Kubernetes API level v1.37)");
  app.require_subcommand(0, 1);
  gantry::cmd::RunFn live;
  gantry::cmd::RegisterRun(app, &live);
  gantry::cmd::RunFn run;
  gantry::cmd::RegisterSimulate(app, &run);
  gantry::cmd::RegisterSelector(app, &run);
  gantry::cmd::RegisterSnapshot(app, &run);
  gantry::cmd::RegisterRecord(app, &run);
  gantry::cmd::RegisterExplain(app, &run);
  gantry::cmd::RegisterWhatIf(app, &run);
  gantry::cmd::RegisterConfig(app, &run);
  if (int code = gantry::cmd::ParseCommandLine(app, argc, argv); code >= 0) return code;
  return run ? run() : live();
}
