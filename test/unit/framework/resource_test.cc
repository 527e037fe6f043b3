// Resource arithmetic: Add and Sub saturate at the int64 range instead of
// overflowing (signed overflow is undefined behaviour, which UBSan builds
// report), and a node's requested sum recovers once a huge pod leaves.
#include <cstdint>
#include <limits>

#include "gantry/types.h"
#include "gantry/util/saturating.h"
#include "gtest/gtest.h"
#include "src/api/resources.h"
#include "test/testing/objects.h"

namespace gantry::framework {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(SaturatingTest, AddAndSub) {
  struct Case {
    int64_t a, b, sum, diff;
  };
  const Case cases[] = {
      {1, 2, 3, -1},
      {kMax - 1, 1, kMax, kMax - 2},
      {kMax - 1, 2, kMax, kMax - 3},
      {kMax / 2 + 1, kMax / 2 + 1, kMax, 0},
      {kMin + 1, -2, kMin, kMin + 3},
      {-5, kMax, kMax, kMin},  // a saturated operand saturates the result
      {kMax, -7, kMax, kMax},  // a saturated value is sticky
      {kMin, 7, kMin, kMin},
      {0, kMin, kMin, kMax},
      {10, kMin + 5, kMin + 15, kMax},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SaturatingAdd(c.a, c.b), c.sum) << c.a << " + " << c.b;
    EXPECT_EQ(SaturatingSub(c.a, c.b), c.diff) << c.a << " - " << c.b;
  }
}

Resource Huge(int64_t v) {
  Resource r;
  r.milli_cpu = v;
  r.memory = v;
  r.ephemeral_storage = v;
  r.allowed_pod_number = v;
  r.AddScalar(api::Symbol::Intern("example.com/gpu"), v);
  return r;
}

void ExpectAll(const Resource& r, int64_t want) {
  EXPECT_EQ(r.milli_cpu, want);
  EXPECT_EQ(r.memory, want);
  EXPECT_EQ(r.ephemeral_storage, want);
  EXPECT_EQ(r.allowed_pod_number, want);
  EXPECT_EQ(r.Get(api::Symbol::Intern("example.com/gpu")), want);
}

TEST(ResourceTest, AddSaturatesNearInt64Max) {
  Resource sum = Huge(kMax - 10);
  sum.Add(Huge(kMax - 10));
  ExpectAll(sum, kMax);
  EXPECT_TRUE(sum.HasSaturated());
  // Sticky: subtracting one part of a saturated sum leaves it saturated.
  sum.Sub(Huge(kMax - 10));
  ExpectAll(sum, kMax);
}

TEST(ResourceTest, SubSaturatesNearInt64Min) {
  Resource r = Huge(kMin + 3);
  r.Sub(Huge(10));
  ExpectAll(r, kMin);
  Resource absent;
  absent.Sub(Huge(kMax - 1));
  ExpectAll(absent, -(kMax - 1));
  EXPECT_FALSE(absent.HasSaturated());
  absent.Sub(Huge(kMax));  // subtracting a saturated amount saturates
  ExpectAll(absent, kMin);
}

TEST(ResourceTest, ExactWithinRange) {
  Resource r = Huge(kMax / 2);
  r.Add(Huge(kMax / 2));
  ExpectAll(r, kMax - 1);
  EXPECT_FALSE(r.HasSaturated());
  r.Sub(Huge(kMax / 2));
  ExpectAll(r, kMax / 2);
}

TEST(ResourceListTest, AddAllAndSubAllSaturate) {
  const api::Symbol mem = api::Symbol::Intern("memory");
  api::ResourceList a;
  a.Set(mem, kMax - 1);
  api::ResourceList b;
  b.Set(mem, kMax - 1);
  a.AddAll(b);
  EXPECT_EQ(a.Get(mem), kMax);
  api::ResourceList c;
  c.Set(mem, kMin + 1);
  c.SubAll(b);
  EXPECT_EQ(c.Get(mem), kMin);
  api::ResourceList empty;
  api::ResourceList min_list;
  min_list.Set(mem, kMin);
  empty.SubAll(min_list);  // -INT64_MIN does not exist
  EXPECT_EQ(empty.Get(mem), kMax);
}

// Two pods asking for 8Ei (the quantity clamps to INT64_MAX) on one node: the
// node's requested memory saturates, and comes back to the exact sum of the
// pods left when one of them goes.
TEST(NodeInfoTest, RequestedRecoversAfterSaturatedPodLeaves) {
  auto node = testing::MakeNodeInfo(testing::SimpleNode("n", 8000, 1 << 30));
  api::Pod a = testing::SimplePod("a", 100, kMax);
  a.meta.uid = "uid-a";
  api::Pod b = testing::SimplePod("b", 100, kMax - 5);
  b.meta.uid = "uid-b";
  api::Pod c = testing::SimplePod("c", 100, 1000);
  c.meta.uid = "uid-c";
  node->AddPod(testing::MakePodInfo(a));
  node->AddPod(testing::MakePodInfo(b));
  node->AddPod(testing::MakePodInfo(c));
  EXPECT_EQ(node->requested().memory, kMax);
  ASSERT_TRUE(node->RemovePod("uid-a"));
  EXPECT_EQ(node->requested().memory, kMax);  // b + c still exceeds the range
  ASSERT_TRUE(node->RemovePod("uid-b"));
  EXPECT_EQ(node->requested().memory, 1000);
  EXPECT_EQ(node->requested().milli_cpu, 100);
}

}  // namespace
}  // namespace gantry::framework
