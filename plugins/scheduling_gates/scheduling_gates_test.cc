#include "plugins/scheduling_gates/scheduling_gates.h"

#include "gtest/gtest.h"
#include "test/testing/objects.h"

namespace gantry::plugins::scheduling_gates {
namespace {

TEST(SchedulingGates, PreEnqueue) {
  struct Case {
    const char* name;
    const char* pod;
    framework::Code code;
    std::string reason;
  } cases[] = {
      {"no gates", "metadata: {name: p}\nspec: {containers: [{name: c}]}", framework::Code::kSuccess, ""},
      {"one gate",
       "metadata: {name: p}\nspec: {schedulingGates: [{name: foo}], containers: [{name: c}]}",
       framework::Code::kUnschedulableAndUnresolvable, "waiting for scheduling gates: [foo]"},
      {"two gates",
       "metadata: {name: p}\nspec: {schedulingGates: [{name: foo}, {name: bar}], containers: [{name: c}]}",
       framework::Code::kUnschedulableAndUnresolvable, "waiting for scheduling gates: [foo bar]"},
  };
  SchedulingGates pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto pod = gantry::testing::PodInfoFromYaml(c.pod);
    framework::Status st = pl.PreEnqueue(*pod);
    EXPECT_EQ(st.code(), c.code);
    EXPECT_EQ(st.Message(), c.reason);
  }
}

TEST(SchedulingGates, QueueingHintOnlyForItself) {
  SchedulingGates pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  api::Pod self = gantry::testing::SimplePod("p", 0, 0);
  api::Pod other = gantry::testing::SimplePod("q", 0, 0);
  EXPECT_EQ(events[0].hint(self, events[0].event, &self, &self), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[0].hint(self, events[0].event, &other, &other), framework::QueueingHint::kSkip);
}

TEST(SchedulingGates, Registers) {
  framework::Registry r;
  ASSERT_TRUE(Register(r).ok());
  EXPECT_NE(r.Find(kName), nullptr);
  EXPECT_FALSE(Register(r).ok());
}

}  // namespace
}  // namespace gantry::plugins::scheduling_gates
