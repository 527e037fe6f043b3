// SVG rendering of FGD replay curves (unallocated GPU % against arrived
// demand %), written by hand: no plotting library.
#ifndef GANTRY_BENCH_FGD_PLOT_H_
#define GANTRY_BENCH_FGD_PLOT_H_

#include <optional>
#include <string>
#include <vector>

namespace gantry::fgd {

struct PlotSeries {
  std::string label;
  // Per run (seed): unallocated % indexed by arrived % (0..130); nullopt = no data.
  std::vector<std::vector<std::optional<double>>> runs;
};

// One line per series (mean over runs) with a min-max band, x from `from`
// to `to` percent arrived; a legend with each series' value at x = 100.
std::string RenderSvg(const std::vector<PlotSeries>& series, const std::string& title, int from,
                      int to);

}  // namespace gantry::fgd

#endif  // GANTRY_BENCH_FGD_PLOT_H_
