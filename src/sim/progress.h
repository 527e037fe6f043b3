// The progress line `gantry simulate` draws on a terminal while it runs:
// a bar of scheduled pods against the pending pods fed at the start, the
// attempts so far and the running pods/s. Pure formatting, so it can be
// tested; the caller decides whether stdout is a terminal.
#ifndef GANTRY_SRC_SIM_PROGRESS_H_
#define GANTRY_SRC_SIM_PROGRESS_H_

#include <string>

#include "src/sim/simulation.h"

namespace gantry::sim {

// One line (no newline, no carriage return) at most `width` characters wide,
// e.g. "[##########----------]  50.0%  5000/10000 scheduled, 5000 attempts, 12345 pods/s".
// A bar needs width >= 20; narrower terminals get the counts only.
std::string RenderProgressLine(const SimulationProgress& p, int width);

}  // namespace gantry::sim

#endif  // GANTRY_SRC_SIM_PROGRESS_H_
