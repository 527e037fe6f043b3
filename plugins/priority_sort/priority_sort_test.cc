#include "plugins/priority_sort/priority_sort.h"

#include "gtest/gtest.h"
#include "test/testing/objects.h"

namespace gantry::plugins::priority_sort {
namespace {

framework::QueuedPodInfo Queued(int32_t priority, int64_t ts) {
  framework::QueuedPodInfo q;
  q.pod_info = gantry::testing::MakePodInfo(gantry::testing::SimplePod("p", 0, 0), priority);
  q.timestamp_micros = ts;
  return q;
}

// Cases from upstream's queuesort tests: priority wins, then timestamp.
TEST(PrioritySort, Less) {
  struct Case {
    const char* name;
    int32_t p1;
    int64_t t1;
    int32_t p2;
    int64_t t2;
    bool want;
  } cases[] = {
      {"p1.priority less than p2.priority", 1, 10, 2, 10, false},
      {"p1.priority greater than p2.priority", 2, 10, 1, 10, true},
      {"equal priority. p1 is added to schedulingQ earlier than p2", 1, 10, 1, 20, true},
      {"equal priority. p2 is added to schedulingQ earlier than p1", 1, 20, 1, 10, false},
      {"equal priority and timestamp", 1, 10, 1, 10, false},
      {"higher priority wins over earlier timestamp", 5, 100, 1, 1, true},
  };
  PrioritySort pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(pl.Less(Queued(c.p1, c.t1), Queued(c.p2, c.t2)), c.want);
  }
}

}  // namespace
}  // namespace gantry::plugins::priority_sort
