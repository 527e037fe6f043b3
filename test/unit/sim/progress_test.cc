// Table-driven tests of the `gantry simulate` progress line.
#include "src/sim/progress.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gantry::sim {
namespace {

struct Case {
  std::string name;
  SimulationProgress progress;
  int width;
  std::string want;
};

TEST(RenderProgressLine, Table) {
  const std::vector<Case> cases = {
      {"half way, wide terminal", {10000, 5000, 5000, 0.5, false}, 100,
       "[####################--------------------]  50.0%  5000/10000 scheduled, 5000 attempts, 10000 pods/s"},
      {"start, nothing scheduled", {200, 0, 0, 0.0, false}, 80,
       "[--------------------------------]   0.0%  0/200 scheduled, 0 attempts, 0 pods/s"},
      {"done with failures", {4, 3, 9, 2.0, true}, 70,
       "[##################------]  75.0%  3/4 scheduled, 9 attempts, 2 pods/s"},
      {"narrow terminal: counts only, cut to width", {10, 10, 10, 1.0, true}, 30,
       "100.0%  10/10 scheduled, 10 at"},
      {"no pending pods, done", {0, 0, 0, 0.1, true}, 60,
       "[##############] 100.0%  0/0 scheduled, 0 attempts, 0 pods/s"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string got = RenderProgressLine(c.progress, c.width);
    EXPECT_EQ(got, c.want);
    EXPECT_LE(static_cast<int>(got.size()), c.width);
  }
}

}  // namespace
}  // namespace gantry::sim
