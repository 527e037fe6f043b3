#include "plugins/node_name/node_name.h"

#include "gtest/gtest.h"
#include "plugins/helper/plugin_test_util.h"
#include "test/testing/objects.h"

namespace gantry::plugins::node_name {
namespace {

// Rows follow upstream's node_name_test.go.
TEST(NodeName, Filter) {
  struct Case {
    const char* name;
    const char* pod_node;
    const char* node;
    framework::Code code;
  } cases[] = {
      {"no host specified", "", "foo", framework::Code::kSuccess},
      {"host matches", "foo", "foo", framework::Code::kSuccess},
      {"host doesn't match", "bar", "foo", framework::Code::kUnschedulableAndUnresolvable},
  };
  NodeName pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    api::Pod pod = gantry::testing::SimplePod("p", 0, 0);
    pod.node_name = api::Symbol::Intern(c.pod_node);
    auto info = gantry::testing::MakePodInfo(pod);
    auto node = gantry::testing::MakeNodeInfo(gantry::testing::SimpleNode(c.node, 1000, 1000));
    framework::Status st = testing::RunFilter(pl, *info, *node);
    EXPECT_EQ(st.code(), c.code);
    if (!st.IsSuccess()) {
      EXPECT_EQ(st.Message(), kErrReason);
    }
  }
}

TEST(NodeName, Hint) {
  NodeName pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  api::Pod pod = gantry::testing::SimplePod("p", 0, 0);
  pod.node_name = api::Symbol::Intern("foo");
  api::Node foo = gantry::testing::SimpleNode("foo", 1, 1);
  api::Node bar = gantry::testing::SimpleNode("bar", 1, 1);
  EXPECT_EQ(events[0].hint(pod, events[0].event, nullptr, &foo), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[0].hint(pod, events[0].event, nullptr, &bar), framework::QueueingHint::kSkip);
}

}  // namespace
}  // namespace gantry::plugins::node_name
