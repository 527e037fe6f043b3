#include "src/sim/progress.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace gantry::sim {

std::string RenderProgressLine(const SimulationProgress& p, int width) {
  const double fraction =
      p.pending_total > 0 ? std::clamp(static_cast<double>(p.scheduled) / static_cast<double>(p.pending_total), 0.0, 1.0)
                          : (p.done ? 1.0 : 0.0);
  const double rate = p.loop_seconds > 0 ? static_cast<double>(p.scheduled) / p.loop_seconds : 0.0;
  const std::string counts =
      absl::StrFormat("%5.1f%%  %d/%d scheduled, %d attempts, %.0f pods/s", 100.0 * fraction, p.scheduled,
                      p.pending_total, p.attempts, rate);
  const int bar_width = std::min(40, width - static_cast<int>(counts.size()) - 3);
  std::string line;
  if (bar_width >= 10) {
    const int filled = static_cast<int>(fraction * bar_width);
    line = "[" + std::string(static_cast<size_t>(filled), '#') +
           std::string(static_cast<size_t>(bar_width - filled), '-') + "] ";
  }
  line += counts;
  if (width > 0 && static_cast<int>(line.size()) > width) line.resize(static_cast<size_t>(width));
  return line;
}

}  // namespace gantry::sim
