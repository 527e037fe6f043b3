// `gantry selector eval`: evaluates a DRA device selector (and optionally a
// DeviceClass's selectors first) against every device of some
// ResourceSlices, so platform teams can test selectors before deploying.
// Exit codes: 0 all evaluations succeeded, 1 some evaluation was an error,
// 2 bad input (unreadable file, unknown class, syntax or type error).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "src/api/objects.h"
#include "src/cel/api_adapter.h"
#include "src/cel/selector_tool.h"
#include "src/main/commands.h"
#include "src/sim/loader.h"

namespace gantry::cmd {
namespace {

struct SelectorOptions {
  std::string slices;
  std::string device_class;
  std::string expr;
};

int RunSelector(const SelectorOptions& opts) {
  api::ObjectSet objects;
  sim::LoadStats stats;
  if (absl::Status st = sim::LoadClusterPath(opts.slices, &objects, &stats); !st.ok()) {
    std::cerr << "gantry selector eval: " << st.message() << "\n";
    return cel::kSelectorToolBadInput;
  }
  std::vector<std::string> class_selectors;
  if (!opts.device_class.empty()) {
    const api::DeviceClass* found = nullptr;
    for (const api::DeviceClass& c : objects.device_classes) {
      if (c.meta.name == opts.device_class) found = &c;
    }
    if (found == nullptr) {
      std::cerr << "gantry selector eval: DeviceClass \"" << opts.device_class << "\" is not in " << opts.slices
                << "\n";
      return cel::kSelectorToolBadInput;
    }
    for (const auto& s : found->spec.selectors) class_selectors.push_back(s.cel_expression);
  }
  std::vector<std::unique_ptr<cel::DeviceInputBuilder>> storage;
  std::vector<cel::SelectorToolDevice> devices = cel::SelectorToolDevices(objects.resource_slices, &storage);
  return cel::RunSelectorEval(devices, class_selectors, opts.expr, std::cout, std::cerr);
}

}  // namespace

void RegisterSelector(CLI::App& app, RunFn* run) {
  auto opts = std::make_shared<SelectorOptions>();
  CLI::App* selector = app.add_subcommand("selector", "Test DRA device selectors (CEL)");
  selector->require_subcommand(1, 1);
  CLI::App* eval = selector->add_subcommand(
      "eval", "Evaluate a selector against every device of the ResourceSlices in a file");
  eval->add_option("--slices", opts->slices, "File or directory with ResourceSlices (and DeviceClasses)")
      ->required();
  eval->add_option("--class", opts->device_class, "Evaluate this DeviceClass's selectors first");
  eval->add_option("--expr", opts->expr, "The CEL selector, e.g. device.driver == \"gpu.example.com\"")
      ->required();
  eval->callback([opts, run] { *run = [opts] { return RunSelector(*opts); }; });
}

}  // namespace gantry::cmd
