// `gantry snapshot convert IN -o OUT`: rewrites a snapshot (file or
// directory, any format the loader reads) as .pb, YAML or JSON, keeping the
// objects of every kind Gantry uses (docs/snapshots.md).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "src/main/commands.h"
#include "src/sim/loader.h"
#include "src/sim/snapshot_file.h"

namespace gantry::cmd {
namespace {

struct ConvertOptions {
  std::string input;
  std::string output;
};

int RunConvert(const ConvertOptions& opts) {
  absl::StatusOr<sim::SnapshotFormat> format = sim::SnapshotFormatForPath(opts.output);
  if (!format.ok()) {
    std::fprintf(stderr, "gantry snapshot convert: -o %s\n",
                 std::string(format.status().message()).c_str());
    return 2;
  }
  api::ObjectSet objects;
  sim::LoadStats stats;
  std::vector<sim::RawObject> raw;
  if (absl::Status st = sim::LoadClusterPath(opts.input, &objects, &stats, &raw); !st.ok()) {
    std::fprintf(stderr, "gantry snapshot convert: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  for (const auto& [kind, count] : stats.skipped_kinds) {
    std::fprintf(stderr, "warning: dropped %lld object(s) of kind %s (not used by the scheduler)\n",
                 static_cast<long long>(count), kind.c_str());
  }
  snapshot::v1::Header header;
  header.set_generator("gantry snapshot convert");
  header.set_source(opts.input);
  if (absl::Status st = sim::WriteSnapshot(opts.output, *format, header, raw); !st.ok()) {
    std::fprintf(stderr, "gantry snapshot convert: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  std::printf("Wrote %zu object(s) to %s\n", raw.size(), opts.output.c_str());
  return 0;
}

}  // namespace

void RegisterSnapshot(CLI::App& app, RunFn* run) {
  CLI::App* snap = app.add_subcommand("snapshot", "Work with snapshot files");
  snap->require_subcommand(1);
  auto opts = std::make_shared<ConvertOptions>();
  CLI::App* conv = snap->add_subcommand("convert", "Convert a snapshot between .pb, YAML and JSON");
  conv->add_option("input", opts->input, "Snapshot file or directory (.pb, YAML, JSON)")
      ->required();
  conv->add_option("-o,--output", opts->output,
                   "Output file; the format follows the extension (.pb, .yaml, .json)")
      ->required();
  conv->callback([opts, run] { *run = [opts] { return RunConvert(*opts); }; });
}

}  // namespace gantry::cmd
