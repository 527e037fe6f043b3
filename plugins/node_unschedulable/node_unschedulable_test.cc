#include "plugins/node_unschedulable/node_unschedulable.h"

#include "gtest/gtest.h"
#include "plugins/helper/plugin_test_util.h"
#include "test/testing/objects.h"

namespace gantry::plugins::node_unschedulable {
namespace {

using gantry::testing::MakeNodeInfo;
using gantry::testing::ParseNode;
using gantry::testing::PodInfoFromYaml;

// Rows follow upstream's node_unschedulable_test.go.
TEST(NodeUnschedulable, Filter) {
  struct Case {
    const char* name;
    const char* pod;
    const char* node;
    framework::Code code;
  } cases[] = {
      {"Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
       "metadata: {name: p}", "metadata: {name: n}\nspec: {unschedulable: true}",
       framework::Code::kUnschedulableAndUnresolvable},
      {"Schedule pod to normal node", "metadata: {name: p}", "metadata: {name: n}\nspec: {unschedulable: false}",
       framework::Code::kSuccess},
      {"Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
       "metadata: {name: p}\nspec: {tolerations: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]}",
       "metadata: {name: n}\nspec: {unschedulable: true}", framework::Code::kSuccess},
      {"Exists-all toleration tolerates cordon",
       "metadata: {name: p}\nspec: {tolerations: [{operator: Exists}]}",
       "metadata: {name: n}\nspec: {unschedulable: true}", framework::Code::kSuccess},
      {"NoExecute toleration does not tolerate cordon",
       "metadata: {name: p}\nspec: {tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoExecute}]}",
       "metadata: {name: n}\nspec: {unschedulable: true}", framework::Code::kUnschedulableAndUnresolvable},
  };
  NodeUnschedulable pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto pod = PodInfoFromYaml(c.pod);
    auto node = MakeNodeInfo(ParseNode(c.node));
    framework::Status st = testing::RunFilter(pl, *pod, *node);
    EXPECT_EQ(st.code(), c.code);
    if (!st.IsSuccess()) {
      EXPECT_EQ(st.Message(), kErrReasonUnschedulable);
    }
  }
}

TEST(NodeUnschedulable, NodeHint) {
  NodeUnschedulable pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  api::Pod pod = gantry::testing::SimplePod("p", 0, 0);
  api::Node cordoned = ParseNode("metadata: {name: n}\nspec: {unschedulable: true}");
  api::Node open = ParseNode("metadata: {name: n}");
  auto& hint = events[0].hint;
  EXPECT_EQ(hint(pod, events[0].event, nullptr, &open), framework::QueueingHint::kQueue);
  EXPECT_EQ(hint(pod, events[0].event, nullptr, &cordoned), framework::QueueingHint::kSkip);
  EXPECT_EQ(hint(pod, events[0].event, &cordoned, &open), framework::QueueingHint::kQueue);
  EXPECT_EQ(hint(pod, events[0].event, &open, &open), framework::QueueingHint::kSkip);
}

}  // namespace
}  // namespace gantry::plugins::node_unschedulable
