#include "plugins/node_ports/node_ports.h"

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "plugins/helper/plugin_test_util.h"
#include "test/testing/objects.h"

namespace gantry::plugins::node_ports {
namespace {

// "proto/ip/port" triples, as upstream's newPod helper takes them.
api::Pod PodWithPorts(std::string_view name, const std::vector<std::string>& ports) {
  std::string list;
  for (const std::string& p : ports) {
    size_t a = p.find('/'), b = p.rfind('/');
    std::string proto = p.substr(0, a), ip = p.substr(a + 1, b - a - 1), port = p.substr(b + 1);
    gantry::StrAppend(&list, list.empty() ? "" : ", ", "{protocol: ", proto, ", hostIP: '", ip,
                      "', hostPort: ", port, ", containerPort: ", port, "}");
  }
  return gantry::testing::ParsePod(gantry::StrCat("metadata: {name: ", name,
                                                  "}\nspec: {containers: [{name: c, ports: [", list, "]}]}"));
}

// Rows follow upstream's TestNodePorts.
TEST(NodePorts, Filter) {
  struct Case {
    const char* name;
    std::vector<std::string> pod;
    std::vector<std::string> existing;
    framework::Code code;
  } cases[] = {
      {"nothing running", {}, {}, framework::Code::kSuccess},
      {"other port", {"UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/9090"}, framework::Code::kSuccess},
      {"same udp port", {"UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/8080"}, framework::Code::kUnschedulable},
      {"same tcp port", {"TCP/127.0.0.1/8080"}, {"TCP/127.0.0.1/8080"}, framework::Code::kUnschedulable},
      {"different host ip", {"TCP/127.0.0.1/8080"}, {"TCP/127.0.0.2/8080"}, framework::Code::kSuccess},
      {"different protocol", {"UDP/127.0.0.1/8080"}, {"TCP/127.0.0.1/8080"}, framework::Code::kSuccess},
      {"second udp port conflict", {"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/8080"},
       framework::Code::kUnschedulable},
      {"first tcp port conflict", {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"},
       {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"}, framework::Code::kUnschedulable},
      {"first tcp port conflict due to 0.0.0.0 hostIP", {"TCP/0.0.0.0/8001"}, {"TCP/127.0.0.1/8001"},
       framework::Code::kUnschedulable},
      {"TCP hostPort conflict due to 0.0.0.0 hostIP", {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"},
       {"TCP/0.0.0.0/8001"}, framework::Code::kUnschedulable},
      {"second tcp port conflict to 0.0.0.0 hostIP", {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"},
       {"TCP/127.0.0.1/8001"}, framework::Code::kUnschedulable},
      {"second different protocol", {"UDP/0.0.0.0/8001"}, {"TCP/0.0.0.0/8001"}, framework::Code::kSuccess},
      {"UDP hostPort conflict due to 0.0.0.0 hostIP", {"UDP/0.0.0.0/8001"},
       {"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"}, framework::Code::kUnschedulable},
  };
  NodePorts pl;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto pod = gantry::testing::MakePodInfo(PodWithPorts("p", c.pod));
    std::vector<api::Pod> existing;
    if (!c.existing.empty()) existing.push_back(PodWithPorts("e", c.existing));
    auto node = gantry::testing::MakeNodeInfo(gantry::testing::SimpleNode("n", 1000, 1000), existing);
    framework::Status st = testing::RunFilter(pl, *pod, *node);
    EXPECT_EQ(st.code(), c.code);
    if (!st.IsSuccess()) {
      EXPECT_EQ(st.Message(), kErrReason);
    }
  }
}

TEST(NodePorts, PreFilterSkipsWithoutPorts) {
  NodePorts pl;
  auto pod = gantry::testing::MakePodInfo(gantry::testing::SimplePod("p", 0, 0));
  framework::CycleState state;
  EXPECT_TRUE(pl.PreFilter(state, *pod, {}, nullptr).IsSkip());
}

TEST(NodePorts, FilterWithoutPreFilterIsError) {
  NodePorts pl;
  auto pod = gantry::testing::MakePodInfo(PodWithPorts("p", {"TCP/0.0.0.0/80"}));
  auto node = gantry::testing::MakeNodeInfo(gantry::testing::SimpleNode("n", 1, 1));
  framework::CycleState state;
  EXPECT_EQ(pl.Filter(state, *pod, *node).code(), framework::Code::kError);
}

TEST(NodePorts, DeleteHint) {
  NodePorts pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  api::Pod pod = PodWithPorts("p", {"TCP/0.0.0.0/80"});
  api::Pod holder = PodWithPorts("h", {"TCP/10.0.0.1/80"});
  holder.node_name = api::Symbol::Intern("n");
  api::Pod other = PodWithPorts("o", {"TCP/10.0.0.1/81"});
  other.node_name = api::Symbol::Intern("n");
  EXPECT_EQ(events[0].hint(pod, events[0].event, &holder, nullptr), framework::QueueingHint::kQueue);
  EXPECT_EQ(events[0].hint(pod, events[0].event, &other, nullptr), framework::QueueingHint::kSkip);
}

}  // namespace
}  // namespace gantry::plugins::node_ports
