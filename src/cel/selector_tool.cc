// `gantry selector eval` logic. See selector_tool.h.
#include "src/cel/selector_tool.h"

#include <memory>
#include <string>
#include <vector>

namespace gantry::cel {

int RunSelectorEval(std::span<const SelectorToolDevice> devices,
                    std::span<const std::string> class_selectors, std::string_view expression,
                    std::ostream& out, std::ostream& err) {
  Env env = DraSelectorEnv();
  std::vector<std::shared_ptr<const Program>> programs;
  for (size_t i = 0; i < class_selectors.size(); ++i) {
    auto p = Compile(class_selectors[i], env);
    if (!p.ok()) {
      err << "class selector #" << i << ": " << p.status().message() << "\n";
      return kSelectorToolBadInput;
    }
    programs.push_back(*std::move(p));
  }
  auto main_program = Compile(expression, env);
  if (!main_program.ok()) {
    err << main_program.status().message() << "\n";
    return kSelectorToolBadInput;
  }
  programs.push_back(*std::move(main_program));
  int code = kSelectorToolOk;
  for (const SelectorToolDevice& d : devices) {
    out << d.pool << "/" << d.name << " ";
    bool result = true;
    std::string error;
    if (absl::Status valid = ValidateDeviceInput(d.input); !valid.ok()) {
      error = std::string(valid.message());
    }
    for (size_t i = 0; i < programs.size() && result && error.empty(); ++i) {
      auto r = EvaluateSelector(*programs[i], d.input);
      if (!r.ok()) {
        error = std::string(r.status().message());
        if (i + 1 < programs.size()) error = "class selector #" + std::to_string(i) + ": " + error;
        break;
      }
      result = *r;
    }
    if (!error.empty()) {
      out << "error: " << error << "\n";
      code = kSelectorToolEvalError;
    } else {
      out << (result ? "true" : "false") << "\n";
    }
  }
  return code;
}

}  // namespace gantry::cel
