#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "gantry/util/strings.h"
#include "test/testing/objects.h"

namespace gantry::plugins::pod_topology_spread {
namespace {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::Status;
using LabelMap = std::map<std::string, std::string>;

api::Labels ToLabels(const LabelMap& m) {
  api::Labels out;
  for (const auto& [k, v] : m) out.emplace_back(api::Symbol::Intern(k), api::Symbol::Intern(v));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first.view() < b.first.view(); });
  return out;
}

api::Node MakeNode(const std::string& name, LabelMap labels) {
  labels.emplace("kubernetes.io/hostname", name);
  api::Node n = testing::SimpleNode(name, 4000, 8LL << 30, 110);
  n.meta.labels = ToLabels(labels);
  return n;
}

// An existing (bound) pod with labels.
api::Pod Existing(const std::string& name, const std::string& node, LabelMap labels,
                  const std::string& ns = "default") {
  api::Pod p = testing::SimplePod(name, 100, 0, ns);
  p.meta.labels = ToLabels(labels);
  p.node_name = api::Symbol::Intern(node);
  return p;
}

// The incoming pod: labels, spread constraints and extra spec as YAML.
framework::PodInfoPtr Incoming(const std::string& spec_yaml, const std::string& labels_yaml = "foo: \"\"") {
  std::string yaml = gantry::StrCat("metadata: {name: p, namespace: default, uid: incoming, labels: {", labels_yaml,
                                    "}}\nspec:\n", spec_yaml, "\n  containers: [{name: c, image: i}]\n");
  return testing::PodInfoFromYaml(yaml);
}

std::string Spread(const std::string& key, int skew, const std::string& selector = "{matchExpressions: [{key: foo, operator: Exists}]}",
                   const std::string& when = "DoNotSchedule", const std::string& extra = "") {
  return gantry::StrCat("  - {maxSkew: ", skew, ", topologyKey: ", key, ", whenUnsatisfiable: ", when,
                        ", labelSelector: ", selector, extra, "}\n");
}

struct Cluster {
  testing::FakeHandle handle;
  std::map<std::string, std::vector<api::Pod>> pods;
  std::vector<api::Node> nodes;

  void Build() {
    for (api::Node& n : nodes) handle.AddNode(testing::MakeNodeInfo(n, pods[n.meta.name]));
  }
  std::vector<NodeInfo*> All() { return handle.NodeInfos(); }
};

// Four nodes in two zones, as upstream's tables use.
std::vector<api::Node> FourNodes() {
  return {MakeNode("node-a", {{"zone", "zone1"}}), MakeNode("node-b", {{"zone", "zone1"}}),
          MakeNode("node-x", {{"zone", "zone2"}}), MakeNode("node-y", {{"zone", "zone2"}})};
}

std::unique_ptr<PodTopologySpread> NewPlugin(framework::FrameworkHandle& h, PodTopologySpreadArgs args = {}) {
  return std::make_unique<PodTopologySpread>(std::move(args), h);
}

PodTopologySpreadArgs ListArgs() {
  PodTopologySpreadArgs a;
  a.defaulting_type = DefaultingType::kList;
  return a;
}

// Runs PreFilter + Filter on every node; returns node -> code.
std::map<std::string, Code> RunFilter(PodTopologySpread& pl, Cluster& c, const framework::PodInfo& pod,
                                      Status* pre = nullptr) {
  CycleState state;
  Status st = pl.PreFilter(state, pod, c.All(), nullptr);
  if (pre) *pre = st;
  std::map<std::string, Code> out;
  for (NodeInfo* n : c.All()) {
    out[std::string(n->name())] = st.IsSkip() ? Code::kSuccess : pl.Filter(state, pod, *n).code();
  }
  return out;
}

constexpr Code kOk = Code::kSuccess;
constexpr Code kNo = Code::kUnschedulable;
constexpr Code kNever = Code::kUnschedulableAndUnresolvable;

struct FilterCase {
  std::string name;
  std::string spec;
  std::string labels = "foo: \"\"";
  std::vector<std::pair<std::string, LabelMap>> pods;  // node -> pod labels
  std::map<std::string, Code> want;
};

class FilterTableTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(FilterTableTest, Filter) {
  const FilterCase& tc = GetParam();
  Cluster c;
  c.nodes = FourNodes();
  int i = 0;
  for (const auto& [node, labels] : tc.pods) {
    c.pods[node].push_back(Existing(gantry::StrCat("e", i++), node, labels));
  }
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  auto pod = Incoming(tc.spec, tc.labels);
  EXPECT_EQ(RunFilter(*pl, c, *pod), tc.want);
}

std::string Tsc() { return "  topologySpreadConstraints:\n"; }

const LabelMap kFoo = {{"foo", ""}};

INSTANTIATE_TEST_SUITE_P(
    Upstream, FilterTableTest,
    ::testing::Values(
        FilterCase{"no_existing_pods", Tsc() + Spread("zone", 1), "foo: \"\"", {},
                   {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
        FilterCase{"no_existing_pods_incoming_does_not_match_itself",
                   Tsc() + Spread("zone", 1), "bar: \"\"", {},
                   {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
        FilterCase{"spread_3_3_all_fit",
                   Tsc() + Spread("zone", 1),
                   "foo: \"\"",
                   {{"node-a", kFoo}, {"node-b", kFoo}, {"node-b", kFoo}, {"node-x", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}},
                   {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
        FilterCase{"missing_rack_label_everywhere", Tsc() + Spread("rack", 1), "foo: \"\"", {},
                   {{"node-a", kNever}, {"node-b", kNever}, {"node-x", kNever}, {"node-y", kNever}}},
        FilterCase{"nodes_2_1_0_3_only_x_fits",
                   Tsc() + Spread("kubernetes.io/hostname", 1),
                   "foo: \"\"",
                   {{"node-a", kFoo}, {"node-a", kFoo}, {"node-b", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}},
                   {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
        FilterCase{"nodes_2_1_0_3_maxskew_2",
                   Tsc() + Spread("kubernetes.io/hostname", 2),
                   "foo: \"\"",
                   {{"node-a", kFoo}, {"node-a", kFoo}, {"node-b", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}},
                   {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}}},
        FilterCase{"nodes_2_1_0_3_pod_does_not_match_itself",
                   Tsc() + Spread("kubernetes.io/hostname", 1), "bar: \"\"",
                   {{"node-a", kFoo}, {"node-a", kFoo}, {"node-b", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}},
                   {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}}},
        FilterCase{"two_constraints_zone_3_3_nodes_2_1_0_3",
                   Tsc() + Spread("zone", 1) + Spread("kubernetes.io/hostname", 1),
                   "foo: \"\"",
                   {{"node-a", kFoo}, {"node-a", kFoo}, {"node-b", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}},
                   {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
        FilterCase{"two_constraints_zone_1_3_one_fails_each",
                   Tsc() + Spread("zone", 1) + Spread("kubernetes.io/hostname", 1),
                   "foo: \"\"",
                   {{"node-a", kFoo}, {"node-x", kFoo}, {"node-y", kFoo}, {"node-y", kFoo}},
                   // zone1=1 zone2=3: only zone1 passes; node-a has 1 (min 0) -> skew 2.
                   {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}}},
        FilterCase{"min_domains_above_domain_count_zeroes_global_min",
                   Tsc() +
                       Spread("zone", 1, "{matchExpressions: [{key: foo, operator: Exists}]}", "DoNotSchedule", ", minDomains: 3"),
                   "foo: \"\"",
                   {{"node-a", kFoo}, {"node-x", kFoo}},
                   {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kNo}, {"node-y", kNo}}},
        FilterCase{"min_domains_satisfied",
                   Tsc() +
                       Spread("zone", 1, "{matchExpressions: [{key: foo, operator: Exists}]}", "DoNotSchedule", ", minDomains: 2"),
                   "foo: \"\"",
                   {{"node-a", kFoo}, {"node-x", kFoo}},
                   {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
        FilterCase{"match_label_keys_narrow_the_selector",
                   Tsc() +
                       Spread("kubernetes.io/hostname", 1, "{matchExpressions: [{key: foo, operator: Exists}]}",
                              "DoNotSchedule", ", matchLabelKeys: [version]"),
                   "foo: \"\", version: v1",
                   // Only the v1 pod on node-a counts; the v2 pods are another revision.
                   {{"node-a", {{"foo", ""}, {"version", "v1"}}}, {"node-b", {{"foo", ""}, {"version", "v2"}}},
                    {"node-x", {{"foo", ""}, {"version", "v2"}}}, {"node-y", {{"foo", ""}, {"version", "v2"}}}},
                   {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
        FilterCase{"empty_selector_counts_nothing_but_self_matches",
                   Tsc() + Spread("kubernetes.io/hostname", 1, "{}"), "foo: \"\"",
                   {{"node-a", kFoo}, {"node-a", kFoo}, {"node-a", kFoo}},
                   {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
        FilterCase{"absent_selector_matches_nothing",
                   "  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}\n",
                   "foo: \"\"", {{"node-a", kFoo}, {"node-a", kFoo}, {"node-a", kFoo}},
                   {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}}),
    [](const auto& info) { return info.param.name; });

TEST(PodTopologySpreadFilter, MissingZoneLabelIsUnresolvableOthersCountedByZone) {
  // Upstream: "pods spread across zones as 1/2 due to absence of label 'zone' on node-b".
  Cluster c;
  c.nodes = {MakeNode("node-a", {{"zone", "zone1"}}), MakeNode("node-b", {}),
             MakeNode("node-x", {{"zone", "zone2"}}), MakeNode("node-y", {{"zone", "zone2"}})};
  c.pods["node-a"] = {Existing("a1", "node-a", kFoo)};
  c.pods["node-b"] = {Existing("b1", "node-b", kFoo)};
  c.pods["node-x"] = {Existing("x1", "node-x", kFoo)};
  c.pods["node-y"] = {Existing("y1", "node-y", kFoo)};
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  auto pod = Incoming(Tsc() + Spread("zone", 1));
  std::map<std::string, Code> want = {{"node-a", kOk}, {"node-b", kNever}, {"node-x", kNo}, {"node-y", kNo}};
  EXPECT_EQ(RunFilter(*pl, c, *pod), want);

  CycleState state;
  ASSERT_TRUE(pl->PreFilter(state, *pod, c.All(), nullptr).IsSuccess());
  Status b = pl->Filter(state, *pod, *c.All()[1]);
  EXPECT_THAT(b.reasons(), ::testing::ElementsAre(std::string(kErrReasonNodeLabelNotMatch)));
  Status x = pl->Filter(state, *pod, *c.All()[2]);
  EXPECT_THAT(x.reasons(), ::testing::ElementsAre(std::string(kErrReasonConstraintsNotMatch)));
}

TEST(PodTopologySpreadFilter, OtherNamespacesAndTerminatingPodsDoNotCount) {
  Cluster c;
  c.nodes = FourNodes();
  c.pods["node-a"] = {Existing("a1", "node-a", kFoo, "other"), Existing("a2", "node-a", kFoo, "other")};
  api::Pod dying = Existing("a3", "node-a", kFoo);
  dying.meta.deletion_micros = 1;
  c.pods["node-a"].push_back(dying);
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  auto pod = Incoming(Tsc() + Spread("kubernetes.io/hostname", 1));
  for (const auto& [node, code] : RunFilter(*pl, c, *pod)) EXPECT_EQ(code, kOk) << node;
}

TEST(PodTopologySpreadFilter, NodeAffinityPolicy) {
  // zone1: node-a (foo=x), node-b; zone2: node-x (foo=x). Two matching pods on node-b.
  for (const char* policy : {"Honor", "Ignore"}) {
    SCOPED_TRACE(policy);
    Cluster c;
    c.nodes = {MakeNode("node-a", {{"zone", "zone1"}, {"pick", "yes"}}), MakeNode("node-b", {{"zone", "zone1"}}),
               MakeNode("node-x", {{"zone", "zone2"}, {"pick", "yes"}})};
    c.pods["node-b"] = {Existing("b1", "node-b", kFoo), Existing("b2", "node-b", kFoo)};
    c.Build();
    auto pl = NewPlugin(c.handle, ListArgs());
    auto pod = Incoming(std::string("  nodeSelector: {pick: \"yes\"}\n") + Tsc() +
                        Spread("zone", 1, "{matchExpressions: [{key: foo, operator: Exists}]}", "DoNotSchedule",
                               std::string(", nodeAffinityPolicy: ") + policy));
    auto got = RunFilter(*pl, c, *pod);
    // Honor: node-b is not counted, zone1=0; Ignore: zone1=2, zone2=0.
    EXPECT_EQ(got["node-a"], std::string(policy) == "Honor" ? kOk : kNo);
    EXPECT_EQ(got["node-x"], kOk);
  }
}

TEST(PodTopologySpreadFilter, NodeTaintsPolicy) {
  for (const char* policy : {"Honor", "Ignore"}) {
    SCOPED_TRACE(policy);
    Cluster c;
    c.nodes = {MakeNode("node-a", {{"zone", "zone1"}}), MakeNode("node-x", {{"zone", "zone2"}})};
    c.nodes[1].taints.push_back(api::Taint{api::Symbol::Intern("dedicated"), api::Symbol::Intern("gpu"),
                                           api::TaintEffect::kNoSchedule, 0});
    c.pods["node-a"] = {Existing("a1", "node-a", kFoo), Existing("a2", "node-a", kFoo)};
    c.Build();
    auto pl = NewPlugin(c.handle, ListArgs());
    auto pod = Incoming(Tsc() +
                        Spread("zone", 1, "{matchExpressions: [{key: foo, operator: Exists}]}", "DoNotSchedule",
                               std::string(", nodeTaintsPolicy: ") + policy));
    auto got = RunFilter(*pl, c, *pod);
    // Honor: the tainted zone2 is not a domain, so zone1 is the minimum.
    EXPECT_EQ(got["node-a"], std::string(policy) == "Honor" ? kOk : kNo);
  }
}

TEST(PodTopologySpreadPreFilter, SkipWithoutHardConstraints) {
  Cluster c;
  c.nodes = FourNodes();
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  CycleState state;
  EXPECT_TRUE(pl->PreFilter(state, *Incoming("  nodeName: \"\""), c.All(), nullptr).IsSkip());
  auto soft = Incoming(Tsc() +
                       Spread("zone", 1, "{matchLabels: {foo: \"\"}}", "ScheduleAnyway"));
  EXPECT_TRUE(pl->PreFilter(state, *soft, c.All(), nullptr).IsSkip());
}

TEST(PodTopologySpreadPreFilter, FilterWithoutPreFilterIsError) {
  Cluster c;
  c.nodes = FourNodes();
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  CycleState state;
  EXPECT_TRUE(pl->Filter(state, *Incoming("  nodeName: \"\""), *c.All()[0]).IsError());
}

TEST(PodTopologySpreadPreFilter, AddAndRemovePodUpdateCountsAndMinimum) {
  Cluster c;
  c.nodes = FourNodes();
  c.pods["node-a"] = {Existing("a1", "node-a", kFoo)};
  c.pods["node-x"] = {Existing("x1", "node-x", kFoo)};
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  auto pod = Incoming(Tsc() + Spread("zone", 1));
  CycleState state;
  ASSERT_TRUE(pl->PreFilter(state, *pod, c.All(), nullptr).IsSuccess());
  NodeInfo& a = *c.All()[0];
  NodeInfo& x = *c.All()[2];
  EXPECT_TRUE(pl->Filter(state, *pod, a).IsSuccess());  // 1/1
  auto extra = testing::MakePodInfo(Existing("a2", "node-a", kFoo));
  ASSERT_TRUE(pl->AddPod(state, *pod, *extra, a).IsSuccess());  // 2/1
  EXPECT_EQ(pl->Filter(state, *pod, a).code(), kNo);
  EXPECT_TRUE(pl->Filter(state, *pod, x).IsSuccess());
  // Clones are independent (preemption evaluates copies).
  auto clone = state.Clone();
  auto x1 = testing::MakePodInfo(c.pods["node-x"][0]);
  ASSERT_TRUE(pl->RemovePod(*clone, *pod, *x1, x).IsSuccess());  // 2/0 in the clone
  EXPECT_EQ(pl->Filter(*clone, *pod, a).code(), kNo);
  EXPECT_TRUE(pl->Filter(*clone, *pod, x).IsSuccess());
  ASSERT_TRUE(pl->RemovePod(state, *pod, *extra, a).IsSuccess());  // back to 1/1
  EXPECT_TRUE(pl->Filter(state, *pod, a).IsSuccess());
  // Pods of another namespace are ignored.
  auto other = testing::MakePodInfo(Existing("o", "node-a", kFoo, "other"));
  ASSERT_TRUE(pl->AddPod(state, *pod, *other, a).IsSuccess());
  EXPECT_TRUE(pl->Filter(state, *pod, a).IsSuccess());
}

// PreFilter keeps its per-node counts across calls and recounts only the
// nodes whose NodeInfo changed. Whatever happened before, the verdicts must
// equal those of a plugin that sees the cluster for the first time.
TEST(PodTopologySpreadPreFilter, IncrementalCountsEqualAFreshPlugin) {
  Cluster c;
  // More nodes than PreFilter recounts serially, so the parallel path runs too.
  constexpr int kNodes = 70;
  for (int i = 0; i < kNodes; ++i) {
    c.nodes.push_back(MakeNode(gantry::StrCat("n", i), {{"zone", gantry::StrCat("z", i % 3)}}));
  }
  // The last node has no zone: it is not eligible.
  c.nodes[kNodes - 1].meta.labels =
      ToLabels({{"kubernetes.io/hostname", gantry::StrCat("n", kNodes - 1)}});
  c.Build();
  std::vector<framework::PodInfoPtr> incoming = {
      Incoming(Tsc() + Spread("zone", 1)),
      Incoming(Tsc() + Spread("zone", 2, "{matchLabels: {app: a}}") +
                   Spread("kubernetes.io/hostname", 1),
               "app: a"),
      Incoming(
          "  nodeSelector: {zone: z1}\n" + Tsc() + Spread("zone", 1, "{matchLabels: {app: a}}"),
          "app: a"),
      Incoming(
          Tsc() + Spread("zone", 1, "{matchLabels: {app: a}}", "DoNotSchedule", ", minDomains: 4"),
          "app: a"),
  };
  auto long_lived = NewPlugin(c.handle, ListArgs());
  uint64_t rng = 42;
  auto next = [&](uint64_t bound) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % bound;
  };
  const std::vector<std::string> kLabels = {"foo", "app"};
  const std::vector<std::string> kValues = {"", "a", "b"};
  std::vector<std::pair<NodeInfo*, std::string>> added;
  for (int step = 0; step < 400; ++step) {
    SCOPED_TRACE(gantry::StrCat("step ", step));
    std::vector<NodeInfo*> all = c.All();
    switch (next(4)) {
      case 0:
      case 1: {  // a pod lands somewhere
        NodeInfo* n = all[next(all.size())];
        std::string name = gantry::StrCat("p", step);
        api::Pod p = Existing(name, std::string(n->name()), {{kLabels[next(2)], kValues[next(3)]}},
                              next(4) == 0 ? "other" : "default");
        p.meta.uid = name;
        n->AddPod(testing::MakePodInfo(p));
        added.emplace_back(n, name);
        break;
      }
      case 2:  // a pod goes
        if (!added.empty()) {
          size_t k = next(added.size());
          added[k].first->RemovePod(added[k].second);
          added.erase(added.begin() + static_cast<long>(k));
        }
        break;
      case 3: {  // a node moves to another zone
        NodeInfo* n = all[next(kNodes - 1)];
        auto node = std::make_shared<api::Node>(*n->node());
        node->meta.labels = ToLabels({{"kubernetes.io/hostname", std::string(n->name())},
                                      {"zone", gantry::StrCat("z", next(4))}});
        n->SetNode(node);
        break;
      }
    }
    // Sometimes the node list itself changes (a node is left out).
    if (next(5) == 0) all.erase(all.begin() + static_cast<long>(next(all.size())));
    const framework::PodInfo& pod = *incoming[next(incoming.size())];
    CycleState got_state, want_state;
    Status got_pre = long_lived->PreFilter(got_state, pod, all, nullptr);
    auto fresh = NewPlugin(c.handle, ListArgs());
    Status want_pre = fresh->PreFilter(want_state, pod, all, nullptr);
    ASSERT_EQ(got_pre.code(), want_pre.code());
    if (!got_pre.IsSuccess()) continue;
    // A preemption-style update of this cycle's state must not leak into
    // the next cycle's counts.
    if (next(3) == 0 && !added.empty()) {
      auto victim = testing::MakePodInfo(Existing("v", std::string(all[0]->name()), kFoo));
      ASSERT_TRUE(long_lived->AddPod(got_state, pod, *victim, *all[0]).IsSuccess());
      ASSERT_TRUE(fresh->AddPod(want_state, pod, *victim, *all[0]).IsSuccess());
    }
    for (NodeInfo* n : c.All()) {
      Status got = long_lived->Filter(got_state, pod, *n);
      Status want = fresh->Filter(want_state, pod, *n);
      EXPECT_EQ(got.code(), want.code()) << n->name();
      EXPECT_EQ(got.Message(), want.Message()) << n->name();
    }
  }
}

// ---- Scoring --------------------------------------------------------------

std::map<std::string, int64_t> RunScore(PodTopologySpread& pl, Cluster& c, const framework::PodInfo& pod,
                                        const std::vector<std::string>& candidates, Status* pre = nullptr) {
  CycleState state;
  std::vector<const NodeInfo*> filtered;
  for (NodeInfo* n : c.All()) {
    if (std::find(candidates.begin(), candidates.end(), n->name()) != candidates.end()) filtered.push_back(n);
  }
  Status st = pl.PreScore(state, pod, filtered);
  if (pre) *pre = st;
  std::map<std::string, int64_t> out;
  if (!st.IsSuccess()) return out;
  std::vector<framework::NodeScore> scores;
  for (const NodeInfo* n : filtered) {
    int64_t s = 0;
    EXPECT_TRUE(pl.Score(state, pod, *n, &s).IsSuccess());
    scores.push_back({n->name(), s});
  }
  EXPECT_TRUE(pl.NormalizeScore(state, pod, scores).IsSuccess());
  for (const auto& s : scores) out[std::string(s.name)] = s.score;
  return out;
}

TEST(PodTopologySpreadScore, NoExistingPodsAllEqual) {
  Cluster c;
  c.nodes = FourNodes();
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  auto pod = Incoming(Tsc() + Spread("kubernetes.io/hostname", 1, "{matchLabels: {foo: \"\"}}", "ScheduleAnyway"));
  std::map<std::string, int64_t> want = {{"node-a", 100}, {"node-b", 100}};
  EXPECT_EQ(RunScore(*pl, c, *pod, {"node-a", "node-b"}), want);
}

TEST(PodTopologySpreadScore, HostnameFourCandidates) {
  // Upstream "one constraint on node, all 4 nodes are candidates": 2/1/0/3 -> 20/60/100/0.
  Cluster c;
  c.nodes = FourNodes();
  c.pods["node-a"] = {Existing("a1", "node-a", kFoo), Existing("a2", "node-a", kFoo)};
  c.pods["node-b"] = {Existing("b1", "node-b", kFoo)};
  c.pods["node-y"] = {Existing("y1", "node-y", kFoo), Existing("y2", "node-y", kFoo), Existing("y3", "node-y", kFoo)};
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  auto pod = Incoming(Tsc() +
                      Spread("kubernetes.io/hostname", 1, "{matchLabels: {foo: \"\"}}", "ScheduleAnyway"));
  std::map<std::string, int64_t> want = {{"node-a", 20}, {"node-b", 60}, {"node-x", 100}, {"node-y", 0}};
  EXPECT_EQ(RunScore(*pl, c, *pod, {"node-a", "node-b", "node-x", "node-y"}), want);
}

TEST(PodTopologySpreadScore, ZoneCountsIncludeNonCandidateNodes) {
  // zone1 = 3 (node-b is not a candidate but still counts), zone2 = 1.
  // weight ln(4): raw 4 and 1 -> 100*(4+1-s)/4 = 25 and 100.
  Cluster c;
  c.nodes = FourNodes();
  c.pods["node-a"] = {Existing("a1", "node-a", kFoo)};
  c.pods["node-b"] = {Existing("b1", "node-b", kFoo), Existing("b2", "node-b", kFoo)};
  c.pods["node-y"] = {Existing("y1", "node-y", kFoo)};
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  auto pod = Incoming(Tsc() + Spread("zone", 1, "{matchLabels: {foo: \"\"}}", "ScheduleAnyway"));
  std::map<std::string, int64_t> want = {{"node-a", 25}, {"node-x", 100}, {"node-y", 100}};
  EXPECT_EQ(RunScore(*pl, c, *pod, {"node-a", "node-x", "node-y"}), want);
}

TEST(PodTopologySpreadScore, NodesMissingKeyScoreZero) {
  Cluster c;
  c.nodes = {MakeNode("node-a", {{"zone", "zone1"}}), MakeNode("node-b", {}), MakeNode("node-x", {{"zone", "zone2"}})};
  c.pods["node-a"] = {Existing("a1", "node-a", kFoo)};
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  auto pod = Incoming(Tsc() + Spread("zone", 1, "{matchLabels: {foo: \"\"}}", "ScheduleAnyway"));
  std::map<std::string, int64_t> want = {{"node-a", 0}, {"node-b", 0}, {"node-x", 100}};
  EXPECT_EQ(RunScore(*pl, c, *pod, {"node-a", "node-b", "node-x"}), want);
}

TEST(PodTopologySpreadScore, MaxSkewWatersDownDifferences) {
  // raw = count*ln(4) + (maxSkew-1): node-a 1 pod -> round(1.386+4)=5, node-b -> 4.
  Cluster c;
  c.nodes = {MakeNode("node-a", {}), MakeNode("node-b", {})};
  c.pods["node-a"] = {Existing("a1", "node-a", kFoo)};
  c.Build();
  auto pl = NewPlugin(c.handle, ListArgs());
  auto pod = Incoming(Tsc() +
                      Spread("kubernetes.io/hostname", 5, "{matchLabels: {foo: \"\"}}", "ScheduleAnyway"));
  std::map<std::string, int64_t> want = {{"node-a", 80}, {"node-b", 100}};
  EXPECT_EQ(RunScore(*pl, c, *pod, {"node-a", "node-b"}), want);
}

// ---- Default constraints ----------------------------------------------------

api::Pod OwnedPod(const std::string& kind, const std::string& api_version, LabelMap labels) {
  api::Pod p = testing::SimplePod("owned", 100, 0);
  p.meta.labels = ToLabels(labels);
  api::OwnerReference ref;
  ref.kind = api::Symbol::Intern(kind);
  ref.api_version = api::Symbol::Intern(api_version);
  ref.name = "owner";
  ref.controller = true;
  p.meta.owner_references.push_back(ref);
  return p;
}

TEST(PodTopologySpreadDefaults, SystemDefaultsAreHostname3Zone5ScheduleAnyway) {
  const auto& d = SystemDefaultConstraints();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].topology_key.view(), "kubernetes.io/hostname");
  EXPECT_EQ(d[0].max_skew, 3);
  EXPECT_EQ(d[1].topology_key.view(), "topology.kubernetes.io/zone");
  EXPECT_EQ(d[1].max_skew, 5);
  for (const auto& c : d) EXPECT_EQ(c.when_unsatisfiable, api::UnsatisfiableAction::kScheduleAnyway);
}

TEST(PodTopologySpreadDefaults, SelectorFromControllerOwnedPodsOnly) {
  EXPECT_FALSE(DefaultSelector(testing::SimplePod("bare", 1, 0)).has_value());
  EXPECT_FALSE(DefaultSelector(OwnedPod("Job", "batch/v1", {{"app", "x"}})).has_value());
  EXPECT_FALSE(DefaultSelector(OwnedPod("ReplicaSet", "apps/v1", {})).has_value());
  auto rs = DefaultSelector(OwnedPod("ReplicaSet", "apps/v1", {{"app", "web"}, {"pod-template-hash", "abc"}}));
  ASSERT_TRUE(rs.has_value());
  EXPECT_EQ(rs->requirements.size(), 2u);
  auto ss = DefaultSelector(OwnedPod("StatefulSet", "apps/v1",
                                     {{"app", "db"},
                                      {"controller-revision-hash", "db-1"},
                                      {"statefulset.kubernetes.io/pod-name", "db-0"},
                                      {"apps.kubernetes.io/pod-index", "0"}}));
  ASSERT_TRUE(ss.has_value());
  ASSERT_EQ(ss->requirements.size(), 1u);
  EXPECT_EQ(ss->requirements[0].key.view(), "app");
  EXPECT_TRUE(DefaultSelector(OwnedPod("ReplicationController", "v1", {{"app", "rc"}})).has_value());
}

TEST(PodTopologySpreadDefaults, SystemDefaultsScoreOwnedPods) {
  Cluster c;
  c.nodes = {MakeNode("node-a", {{"topology.kubernetes.io/zone", "z1"}}),
             MakeNode("node-b", {{"topology.kubernetes.io/zone", "z1"}}),
             MakeNode("node-c", {})};  // no zone: still spread by hostname with system defaults
  api::Pod sibling = OwnedPod("ReplicaSet", "apps/v1", {{"app", "web"}});
  sibling.meta.name = "sib";
  sibling.meta.uid = "sib";
  sibling.node_name = api::Symbol::Intern("node-a");
  c.pods["node-a"] = {sibling};
  c.Build();
  auto pl = NewPlugin(c.handle);  // System defaulting
  auto pod = testing::MakePodInfo(OwnedPod("ReplicaSet", "apps/v1", {{"app", "web"}}));
  CycleState state;
  EXPECT_TRUE(pl->PreFilter(state, *pod, c.All(), nullptr).IsSkip());  // defaults are soft
  Status pre;
  auto scores = RunScore(*pl, c, *pod, {"node-a", "node-b", "node-c"}, &pre);
  ASSERT_TRUE(pre.IsSuccess()) << pre.Message();
  EXPECT_LT(scores["node-a"], scores["node-b"]);
  EXPECT_EQ(scores["node-c"], 100);

  // Pods without a known controller get no default constraints.
  auto bare = testing::MakePodInfo(testing::SimplePod("bare", 100, 0));
  RunScore(*pl, c, *bare, {"node-a"}, &pre);
  EXPECT_TRUE(pre.IsSkip());
  // List defaulting with an empty list disables defaults.
  auto list = NewPlugin(c.handle, ListArgs());
  RunScore(*list, c, *pod, {"node-a"}, &pre);
  EXPECT_TRUE(pre.IsSkip());
}

// ---- Args -------------------------------------------------------------------

struct ArgsResult {
  bool ok;
  std::string error;
  nlohmann::json canonical;
};

ArgsResult Decode(const std::string& json) {
  simdjson::dom::parser parser;
  api::JsonValue root;
  EXPECT_EQ(parser.parse(json).get(root), simdjson::SUCCESS);
  api::Decoder d("PodTopologySpreadArgs");
  nlohmann::json out = DefaultArgs(d, root);
  return {d.ok(), d.ok() ? "" : d.error()->ToString(), out};
}

TEST(PodTopologySpreadArgs, DefaultsAndRoundTrip) {
  EXPECT_EQ(Decode("null").canonical, nlohmann::json({{"defaultingType", "System"}}));
  EXPECT_EQ(Decode("{}").canonical, nlohmann::json({{"defaultingType", "System"}}));
  auto list = Decode(R"({"defaultingType":"List","defaultConstraints":[{"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]})");
  ASSERT_TRUE(list.ok) << list.error;
  EXPECT_EQ(list.canonical["defaultConstraints"][0]["maxSkew"], 2);
}

TEST(PodTopologySpreadArgs, ValidationErrors) {
  struct Case {
    std::string json, want;
  } cases[] = {
      {R"({"defaultingType":"Other"})", "Unsupported value: \"Other\""},
      {R"({"defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]})",
       "when .defaultConstraints are not empty"},
      {R"({"defaultingType":"List","defaultConstraints":[{"maxSkew":0,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]})",
       "maxSkew: Invalid value: 0: not in valid range (0, inf)"},
      {R"({"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule"}]})",
       "topologyKey: Required value: can not be empty"},
      {R"({"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"zone"}]})",
       "whenUnsatisfiable: Required value: can not be empty"},
      {R"({"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"Never"}]})",
       "Unsupported value: \"Never\""},
      {R"({"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{}}]})",
       "constraint must not define a selector"},
      {R"({"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"},{"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]})",
       "defaultConstraints[1]: Duplicate value: \"{zone, DoNotSchedule}\""},
      {R"({"defaultingType":"List","defaultConstraints":[{"maxSkew":1,"topologyKey":"bad key!","whenUnsatisfiable":"DoNotSchedule"}]})",
       "topologyKey: Invalid value: \"bad key!\""},
      {R"({"bogus":1})", "unknown field \"bogus\""},
  };
  for (const Case& c : cases) {
    ArgsResult r = Decode(c.json);
    EXPECT_FALSE(r.ok) << c.json;
    EXPECT_THAT(r.error, ::testing::HasSubstr(c.want)) << c.json;
  }
}

// ---- Queueing hints -----------------------------------------------------------

TEST(PodTopologySpreadHints, PodAndNodeChanges) {
  testing::FakeHandle h;
  auto pl = NewPlugin(h, ListArgs());
  auto pod = Incoming(Tsc() + Spread("zone", 1));
  using framework::QueueingHint;
  api::Pod match = Existing("m", "node-a", kFoo);
  api::Pod other = Existing("o", "node-a", {{"bar", ""}});
  api::Pod unbound = match;
  unbound.node_name = api::Symbol();
  api::Pod other_ns = Existing("n", "node-a", kFoo, "other");
  EXPECT_EQ(pl->HintAfterPodChange(pod->p(), nullptr, &match), QueueingHint::kQueue);
  EXPECT_EQ(pl->HintAfterPodChange(pod->p(), nullptr, &other), QueueingHint::kSkip);
  EXPECT_EQ(pl->HintAfterPodChange(pod->p(), nullptr, &unbound), QueueingHint::kSkip);
  EXPECT_EQ(pl->HintAfterPodChange(pod->p(), nullptr, &other_ns), QueueingHint::kSkip);
  EXPECT_EQ(pl->HintAfterPodChange(pod->p(), &match, nullptr), QueueingHint::kQueue);
  EXPECT_EQ(pl->HintAfterPodChange(pod->p(), &match, &other), QueueingHint::kQueue);  // label removed
  EXPECT_EQ(pl->HintAfterPodChange(pod->p(), &match, &match), QueueingHint::kSkip);

  api::Node zoned = MakeNode("n", {{"zone", "z1"}});
  api::Node rezoned = MakeNode("n", {{"zone", "z2"}});
  api::Node bare = MakeNode("n", {});
  EXPECT_EQ(pl->HintAfterNodeChange(pod->p(), nullptr, &zoned), QueueingHint::kQueue);
  EXPECT_EQ(pl->HintAfterNodeChange(pod->p(), nullptr, &bare), QueueingHint::kSkip);
  EXPECT_EQ(pl->HintAfterNodeChange(pod->p(), &bare, &zoned), QueueingHint::kQueue);
  EXPECT_EQ(pl->HintAfterNodeChange(pod->p(), &zoned, &rezoned), QueueingHint::kQueue);
  EXPECT_EQ(pl->HintAfterNodeChange(pod->p(), &zoned, &zoned), QueueingHint::kSkip);
  EXPECT_EQ(pl->HintAfterNodeChange(pod->p(), &zoned, nullptr), QueueingHint::kQueue);

  auto events = pl->EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kNode);
}

}  // namespace
}  // namespace gantry::plugins::pod_topology_spread
