// Logic of `gantry selector eval`: evaluates a selector (after the optional
// DeviceClass selectors) against already-decoded devices and prints one
// line per device. CLI flag parsing and ResourceSlice decoding live
// elsewhere; this takes DeviceInput views.
#ifndef GANTRY_SRC_CEL_SELECTOR_TOOL_H_
#define GANTRY_SRC_CEL_SELECTOR_TOOL_H_

#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "src/cel/dra_env.h"

namespace gantry::cel {

struct SelectorToolDevice {
  std::string_view pool;
  std::string_view name;
  DeviceInput input;
};

// Exit codes of `gantry selector eval`.
inline constexpr int kSelectorToolOk = 0;          // every evaluation succeeded
inline constexpr int kSelectorToolEvalError = 1;   // at least one device gave an error
inline constexpr int kSelectorToolBadInput = 2;    // syntax/type error in an expression

// For each device prints "<pool>/<device> true", "... false" or
// "... error: <message>" to `out`. Class selectors are evaluated first, in
// order; the first that is false (or fails) decides the line. A compile
// error of any expression is printed to `err` (with line:column and caret)
// and gives kSelectorToolBadInput without evaluating anything.
int RunSelectorEval(std::span<const SelectorToolDevice> devices,
                    std::span<const std::string> class_selectors, std::string_view expression,
                    std::ostream& out, std::ostream& err);

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_SELECTOR_TOOL_H_
