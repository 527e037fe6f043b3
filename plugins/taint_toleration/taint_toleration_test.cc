#include "plugins/taint_toleration/taint_toleration.h"

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "plugins/helper/plugin_test_util.h"
#include "test/testing/objects.h"

namespace gantry::plugins::taint_toleration {
namespace {

using gantry::testing::MakeNodeInfo;
using gantry::testing::ParseNode;
using gantry::testing::PodInfoFromYaml;

std::string PodWithTolerations(const std::string& tolerations) {
  return gantry::StrCat("metadata: {name: p}\nspec: {tolerations: [", tolerations, "]}");
}
std::string NodeWithTaints(const std::string& name, const std::string& taints) {
  return gantry::StrCat("metadata: {name: ", name, "}\nspec: {taints: [", taints, "]}");
}

// Rows follow upstream's TestTaintTolerationFilter.
TEST(TaintToleration, Filter) {
  struct Case {
    const char* name;
    std::string tolerations;
    std::string taints;
    framework::Code code;
    std::string reason;
  } cases[] = {
      {"A pod having no tolerations can't be scheduled onto a node with nonempty taints", "",
       "{key: dedicated, value: user1, effect: NoSchedule}", framework::Code::kUnschedulableAndUnresolvable,
       "node(s) had untolerated taint {dedicated: user1}"},
      {"A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
       "{key: dedicated, value: user1, effect: NoSchedule}", "{key: dedicated, value: user1, effect: NoSchedule}",
       framework::Code::kSuccess, ""},
      {"A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
       "{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}",
       "{key: dedicated, value: user1, effect: NoSchedule}", framework::Code::kUnschedulableAndUnresolvable,
       "node(s) had untolerated taint {dedicated: user1}"},
      {"A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node",
       "{key: foo, operator: Exists, effect: NoSchedule}", "{key: foo, value: bar, effect: NoSchedule}",
       framework::Code::kSuccess, ""},
      {"A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
       "{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}, {key: foo, operator: Exists, effect: NoSchedule}",
       "{key: dedicated, value: user2, effect: NoSchedule}, {key: foo, value: bar, effect: NoSchedule}",
       framework::Code::kSuccess, ""},
      {"Toleration keys and values match but the (non-empty) effect doesn't",
       "{key: foo, operator: Equal, value: bar, effect: PreferNoSchedule}",
       "{key: foo, value: bar, effect: NoSchedule}", framework::Code::kUnschedulableAndUnresolvable,
       "node(s) had untolerated taint {foo: bar}"},
      {"Empty toleration effect tolerates a NoSchedule taint", "{key: foo, operator: Equal, value: bar}",
       "{key: foo, value: bar, effect: NoSchedule}", framework::Code::kSuccess, ""},
      {"PreferNoSchedule taint never filters", "{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}",
       "{key: dedicated, value: user1, effect: PreferNoSchedule}", framework::Code::kSuccess, ""},
      {"No toleration, PreferNoSchedule taint", "", "{key: dedicated, value: user1, effect: PreferNoSchedule}",
       framework::Code::kSuccess, ""},
      {"NoExecute taint filters", "", "{key: gpu, value: '', effect: NoExecute}",
       framework::Code::kUnschedulableAndUnresolvable, "node(s) had untolerated taint {gpu: }"},
  };
  TaintToleration pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto pod = PodInfoFromYaml(PodWithTolerations(c.tolerations));
    auto node = MakeNodeInfo(ParseNode(NodeWithTaints("n", c.taints)));
    framework::Status st = testing::RunFilter(pl, *pod, *node);
    EXPECT_EQ(st.code(), c.code);
    EXPECT_EQ(st.Message(), c.reason);
  }
}

// Rows follow upstream's TestTaintTolerationScore.
TEST(TaintToleration, Score) {
  struct Case {
    const char* name;
    std::string tolerations;
    std::vector<std::string> node_taints;
    std::vector<int64_t> want;
  } cases[] = {
      {"node with taints tolerated by the pod gets a higher score than those with intolerable taints",
       "{key: foo, operator: Equal, value: bar, effect: PreferNoSchedule}",
       {"{key: foo, value: bar, effect: PreferNoSchedule}", "{key: foo, value: blah, effect: PreferNoSchedule}"},
       {100, 0}},
      {"nodes whose taints are all tolerated get the same score",
       "{key: cpu-type, operator: Equal, value: arm64, effect: PreferNoSchedule}, {key: disk-type, operator: Equal, value: ssd, effect: PreferNoSchedule}",
       {"", "{key: cpu-type, value: arm64, effect: PreferNoSchedule}",
        "{key: cpu-type, value: arm64, effect: PreferNoSchedule}, {key: disk-type, value: ssd, effect: PreferNoSchedule}"},
       {100, 100, 100}},
      {"the more intolerable taints a node has, the lower score it gets",
       "{key: foo, operator: Equal, value: bar, effect: PreferNoSchedule}",
       {"", "{key: cpu-type, value: arm64, effect: PreferNoSchedule}",
        "{key: cpu-type, value: arm64, effect: PreferNoSchedule}, {key: disk-type, value: ssd, effect: PreferNoSchedule}"},
       {100, 50, 0}},
      {"only PreferNoSchedule taints and tolerations are considered",
       "{key: cpu-type, operator: Equal, value: arm64, effect: NoSchedule}, {key: disk-type, operator: Equal, value: ssd, effect: NoSchedule}",
       {"", "{key: cpu-type, value: arm64, effect: NoSchedule}", "{key: cpu-type, value: arm64, effect: PreferNoSchedule}"},
       {100, 100, 0}},
      {"Default behaviour No taints and tolerations", "",
       {"", "{key: cpu-type, value: arm64, effect: PreferNoSchedule}"}, {100, 0}},
  };
  TaintToleration pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto pod = PodInfoFromYaml(PodWithTolerations(c.tolerations));
    std::vector<std::unique_ptr<framework::NodeInfo>> owned;
    std::vector<const framework::NodeInfo*> nodes;
    for (size_t i = 0; i < c.node_taints.size(); ++i) {
      owned.push_back(MakeNodeInfo(ParseNode(NodeWithTaints(gantry::StrCat("n", i), c.node_taints[i]))));
      nodes.push_back(owned.back().get());
    }
    framework::Status st;
    EXPECT_EQ(testing::RunScore(pl, *pod, nodes, &st), c.want);
    EXPECT_TRUE(st.IsSuccess()) << st.Message();
  }
}

TEST(TaintToleration, NodeHintQueuesWhenTaintRemoved) {
  TaintToleration pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  api::Pod pod = gantry::testing::SimplePod("p", 0, 0);
  api::Node tainted = ParseNode(NodeWithTaints("n", "{key: a, value: b, effect: NoSchedule}"));
  api::Node clean = ParseNode("metadata: {name: n}");
  EXPECT_EQ(events[0].hint(pod, events[0].event, &tainted, &clean), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[0].hint(pod, events[0].event, &clean, &tainted), framework::QueueingHint::kSkip);
  EXPECT_EQ(events[0].hint(pod, events[0].event, nullptr, &clean), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[0].hint(pod, events[0].event, &clean, &clean), framework::QueueingHint::kSkip);
}

}  // namespace
}  // namespace gantry::plugins::taint_toleration
