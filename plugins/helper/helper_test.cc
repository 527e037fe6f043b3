#include "plugins/helper/helper.h"

#include "gtest/gtest.h"

namespace gantry::plugins::helper {
namespace {

std::vector<framework::NodeScore> Scores(std::vector<int64_t> raw) {
  std::vector<framework::NodeScore> out;
  for (int64_t r : raw) out.push_back({"n", r});
  return out;
}

std::vector<int64_t> Values(const std::vector<framework::NodeScore>& s) {
  std::vector<int64_t> out;
  for (const auto& x : s) out.push_back(x.score);
  return out;
}

TEST(DefaultNormalizeScore, Table) {
  struct Case {
    std::vector<int64_t> in;
    bool reverse;
    std::vector<int64_t> want;
  } cases[] = {
      {{10, 20, 30, 40}, false, {25, 50, 75, 100}},
      {{10, 20, 30, 40}, true, {75, 50, 25, 0}},
      {{0, 0}, false, {0, 0}},
      {{0, 0}, true, {100, 100}},
      {{1, 3}, false, {33, 100}},
  };
  for (const Case& c : cases) {
    auto s = Scores(c.in);
    DefaultNormalizeScore(100, c.reverse, s);
    EXPECT_EQ(Values(s), c.want);
  }
}

TEST(ValidateQualifiedName, Table) {
  EXPECT_EQ(ValidateQualifiedName("example.com/foo"), "");
  EXPECT_EQ(ValidateQualifiedName("cpu"), "");
  EXPECT_NE(ValidateQualifiedName("-bad"), "");
  EXPECT_NE(ValidateQualifiedName("Example.com/foo"), "");
  EXPECT_NE(ValidateQualifiedName("/foo"), "");
  EXPECT_NE(ValidateQualifiedName("a/"), "");
}

}  // namespace
}  // namespace gantry::plugins::helper
