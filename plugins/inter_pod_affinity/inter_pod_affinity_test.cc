#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gantry/util/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "test/testing/objects.h"

namespace gantry::plugins::inter_pod_affinity {
namespace {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::Status;

constexpr Code kOk = Code::kSuccess;
constexpr Code kNo = Code::kUnschedulable;
constexpr Code kNever = Code::kUnschedulableAndUnresolvable;

// A pod from a YAML body: `meta` goes inside metadata{}, `spec` is raw spec lines.
api::Pod PodYaml(const std::string& name, const std::string& meta, const std::string& spec = "",
                 const std::string& node = "") {
  std::string yaml = gantry::StrCat("metadata: {name: ", name, ", ", meta.empty() ? "namespace: default" : meta,
                                    "}\nspec:\n", node.empty() ? "" : gantry::StrCat("  nodeName: ", node, "\n"),
                                    spec, "\n  containers: [{name: c, image: i}]\n");
  return testing::ParsePod(yaml);
}

// Required/preferred term snippets.
std::string Term(const std::string& key, const std::string& selector, const std::string& extra = "") {
  return gantry::StrCat("{labelSelector: ", selector, ", topologyKey: ", key, extra, "}");
}
std::string Affinity(const std::string& kind, const std::string& required, const std::string& preferred = "") {
  std::string out = gantry::StrCat("  affinity:\n    ", kind, ":\n");
  if (!required.empty()) gantry::StrAppend(&out, "      requiredDuringSchedulingIgnoredDuringExecution: [", required, "]\n");
  if (!preferred.empty()) gantry::StrAppend(&out, "      preferredDuringSchedulingIgnoredDuringExecution: [", preferred, "]\n");
  return out;
}
std::string Weighted(int weight, const std::string& term) {
  return gantry::StrCat("{weight: ", weight, ", podAffinityTerm: ", term, "}");
}

const std::string kSecurityS1 = "{matchExpressions: [{key: security, operator: In, values: [S1]}]}";
const std::string kSecurityS2 = "{matchExpressions: [{key: security, operator: In, values: [S2]}]}";

api::Node MakeNode(const std::string& name, std::vector<std::pair<std::string, std::string>> labels) {
  labels.emplace_back("kubernetes.io/hostname", name);
  return testing::SimpleNode(name, 4000, 8LL << 30, 110, labels);
}

struct Cluster {
  testing::FakeHandle handle;
  std::vector<api::Node> nodes;
  std::map<std::string, std::vector<api::Pod>> pods;
  void Build() {
    for (api::Node& n : nodes) handle.AddNode(testing::MakeNodeInfo(n, pods[n.meta.name]));
  }
  NodeInfo& Node(const std::string& name) {
    for (NodeInfo* n : handle.NodeInfos()) {
      if (n->name() == name) return *n;
    }
    std::abort();
  }
};

std::map<std::string, Code> RunFilter(InterPodAffinity& pl, Cluster& c, const framework::PodInfo& pod,
                                      std::map<std::string, std::string>* reasons = nullptr,
                                      Status* pre = nullptr) {
  CycleState state;
  Status st = pl.PreFilter(state, pod, c.handle.NodeInfos(), nullptr);
  if (pre) *pre = st;
  std::map<std::string, Code> out;
  for (NodeInfo* n : c.handle.NodeInfos()) {
    Status f = st.IsSkip() ? Status() : pl.Filter(state, pod, *n);
    out[std::string(n->name())] = f.code();
    if (reasons) (*reasons)[std::string(n->name())] = f.Message();
  }
  return out;
}

// ---- Filter tables ------------------------------------------------------------

struct FilterCase {
  std::string name;
  std::string incoming_meta;  // labels etc. inside metadata{}
  std::string incoming_spec;
  // Existing pods: node -> (meta, spec).
  std::vector<std::tuple<std::string, std::string, std::string>> existing;
  std::map<std::string, Code> want;
};

class FilterTableTest : public ::testing::TestWithParam<FilterCase> {};

// node1 and node2 share region r1 / zone z11; node3 is in r2.
std::vector<api::Node> ThreeNodes() {
  return {MakeNode("node1", {{"region", "r1"}, {"zone", "z11"}}),
          MakeNode("node2", {{"region", "r1"}, {"zone", "z11"}}),
          MakeNode("node3", {{"region", "r2"}, {"zone", "z21"}})};
}

TEST_P(FilterTableTest, Filter) {
  const FilterCase& tc = GetParam();
  Cluster c;
  c.nodes = ThreeNodes();
  int i = 0;
  for (const auto& [node, meta, spec] : tc.existing) {
    c.pods[node].push_back(PodYaml(gantry::StrCat("e", i++), meta, spec, node));
  }
  c.Build();
  InterPodAffinity pl(InterPodAffinityArgs{}, c.handle);
  auto pod = testing::MakePodInfo(PodYaml("incoming", tc.incoming_meta, tc.incoming_spec));
  EXPECT_EQ(RunFilter(pl, c, *pod), tc.want);
}

const std::string kDefaultS1 = "namespace: default, labels: {security: S1}";
const std::string kDefaultS2 = "namespace: default, labels: {security: S2}";

INSTANTIATE_TEST_SUITE_P(
    Upstream, FilterTableTest,
    ::testing::Values(
        FilterCase{"affinity_in_operator_matches_existing_pod", kDefaultS2,
                   Affinity("podAffinity", Term("region", "{matchExpressions: [{key: security, operator: In, values: [S1, value2]}]}")),
                   {{"node1", kDefaultS1, ""}},
                   {{"node1", kOk}, {"node2", kOk}, {"node3", kNever}}},
        FilterCase{"affinity_not_in_operator", kDefaultS2,
                   Affinity("podAffinity", Term("region", "{matchExpressions: [{key: security, operator: NotIn, values: [securityscan3, value3]}]}")),
                   {{"node1", kDefaultS1, ""}},
                   {{"node1", kOk}, {"node2", kOk}, {"node3", kNever}}},
        FilterCase{"affinity_different_namespace_does_not_match", kDefaultS2,
                   Affinity("podAffinity", Term("region", kSecurityS1, ", namespaces: [other]")),
                   {{"node1", kDefaultS1, ""}},
                   {{"node1", kNever}, {"node2", kNever}, {"node3", kNever}}},
        FilterCase{"affinity_selector_does_not_match_any_pod", kDefaultS2,
                   Affinity("podAffinity", Term("region", "{matchLabels: {security: S3}}")),
                   {{"node1", kDefaultS1, ""}},
                   {{"node1", kNever}, {"node2", kNever}, {"node3", kNever}}},
        FilterCase{"all_affinity_terms_must_match_the_same_pod", kDefaultS2,
                   Affinity("podAffinity", Term("region", kSecurityS1) + ", " + Term("zone", "{matchLabels: {team: a}}")),
                   {{"node1", kDefaultS1, ""}, {"node3", "namespace: default, labels: {team: a}", ""}},
                   {{"node1", kNever}, {"node2", kNever}, {"node3", kNever}}},
        FilterCase{"first_pod_of_group_matches_its_own_terms", kDefaultS1,
                   Affinity("podAffinity", Term("region", kSecurityS1)),
                   {},
                   {{"node1", kOk}, {"node2", kOk}, {"node3", kOk}}},
        FilterCase{"first_pod_rule_needs_topology_key_on_node", kDefaultS1,
                   Affinity("podAffinity", Term("rack", kSecurityS1)),
                   {},
                   {{"node1", kNever}, {"node2", kNever}, {"node3", kNever}}},
        FilterCase{"first_pod_rule_does_not_apply_once_a_pod_matches", kDefaultS1,
                   Affinity("podAffinity", Term("region", kSecurityS1)),
                   {{"node3", kDefaultS1, ""}},
                   {{"node1", kNever}, {"node2", kNever}, {"node3", kOk}}},
        FilterCase{"anti_affinity_hostname", kDefaultS2,
                   Affinity("podAntiAffinity", Term("kubernetes.io/hostname", kSecurityS1)),
                   {{"node1", kDefaultS1, ""}},
                   {{"node1", kNo}, {"node2", kOk}, {"node3", kOk}}},
        FilterCase{"anti_affinity_zone", kDefaultS2,
                   Affinity("podAntiAffinity", Term("zone", kSecurityS1)),
                   {{"node1", kDefaultS1, ""}},
                   {{"node1", kNo}, {"node2", kNo}, {"node3", kOk}}},
        FilterCase{"anti_affinity_missing_key_does_not_reject", kDefaultS2,
                   Affinity("podAntiAffinity", Term("rack", kSecurityS1)),
                   {{"node1", kDefaultS1, ""}},
                   {{"node1", kOk}, {"node2", kOk}, {"node3", kOk}}},
        FilterCase{"existing_pod_anti_affinity_is_symmetric", kDefaultS1, "",
                   {{"node1", kDefaultS2, Affinity("podAntiAffinity", Term("zone", kSecurityS1))}},
                   {{"node1", kNo}, {"node2", kNo}, {"node3", kOk}}},
        FilterCase{"existing_pod_anti_affinity_other_namespace_ignored", "namespace: team, labels: {security: S1}", "",
                   {{"node1", kDefaultS2, Affinity("podAntiAffinity", Term("zone", kSecurityS1))}},
                   {{"node1", kOk}, {"node2", kOk}, {"node3", kOk}}},
        FilterCase{"affinity_and_anti_affinity_together", kDefaultS1,
                   Affinity("podAffinity", Term("region", kSecurityS1)) +
                       "    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: [" +
                       Term("kubernetes.io/hostname", kSecurityS1) + "]\n",
                   {{"node1", kDefaultS1, ""}},
                   {{"node1", kNo}, {"node2", kOk}, {"node3", kNever}}},
        FilterCase{"empty_selector_matches_all_pods_of_namespace", kDefaultS2,
                   Affinity("podAntiAffinity", Term("kubernetes.io/hostname", "{}")),
                   {{"node2", "namespace: default, labels: {x: y}", ""}},
                   {{"node1", kOk}, {"node2", kNo}, {"node3", kOk}}}),
    [](const auto& info) { return info.param.name; });

TEST(InterPodAffinityFilter, ReasonsAndPreFilterSkip) {
  Cluster c;
  c.nodes = ThreeNodes();
  c.pods["node1"] = {PodYaml("e1", kDefaultS1, Affinity("podAntiAffinity", Term("kubernetes.io/hostname", kSecurityS2)), "node1")};
  c.Build();
  InterPodAffinity pl(InterPodAffinityArgs{}, c.handle);

  Status pre;
  auto plain = testing::MakePodInfo(PodYaml("plain", "namespace: default, labels: {security: S3}"));
  RunFilter(pl, c, *plain, nullptr, &pre);
  EXPECT_TRUE(pre.IsSkip());  // no terms, no existing anti-affinity towards it

  std::map<std::string, std::string> reasons;
  auto s2 = testing::MakePodInfo(PodYaml("s2", kDefaultS2));
  RunFilter(pl, c, *s2, &reasons, &pre);
  EXPECT_TRUE(pre.IsSuccess());
  EXPECT_EQ(reasons["node1"], kErrReasonExistingAntiAffinityRulesNotMatch);
  EXPECT_EQ(reasons["node2"], "");

  auto aff = testing::MakePodInfo(PodYaml("aff", kDefaultS2, Affinity("podAffinity", Term("region", "{matchLabels: {a: b}}"))));
  RunFilter(pl, c, *aff, &reasons);
  EXPECT_EQ(reasons["node3"], kErrReasonAffinityRulesNotMatch);
  auto anti = testing::MakePodInfo(PodYaml("anti", "namespace: default, labels: {security: S9}",
                                           Affinity("podAntiAffinity", Term("region", kSecurityS1))));
  RunFilter(pl, c, *anti, &reasons);
  EXPECT_EQ(reasons["node1"], kErrReasonAntiAffinityRulesNotMatch);
}

TEST(InterPodAffinityFilter, NamespaceSelectors) {
  Cluster c;
  c.nodes = ThreeNodes();
  c.handle.SetNamespaceLabels("team-a", {{api::Symbol::Intern("team"), api::Symbol::Intern("a")}});
  c.handle.SetNamespaceLabels("team-b", {{api::Symbol::Intern("team"), api::Symbol::Intern("b")}});
  c.pods["node1"] = {PodYaml("a1", "namespace: team-a, labels: {security: S1}", "", "node1")};
  c.pods["node3"] = {PodYaml("b1", "namespace: team-b, labels: {security: S1}", "", "node3")};
  c.Build();
  InterPodAffinity pl(InterPodAffinityArgs{}, c.handle);

  // Incoming affinity selecting namespaces labelled team=a: only region r1 qualifies.
  auto sel = testing::MakePodInfo(PodYaml(
      "p", kDefaultS2, Affinity("podAffinity", Term("region", kSecurityS1, ", namespaceSelector: {matchLabels: {team: a}}"))));
  std::map<std::string, Code> want = {{"node1", kOk}, {"node2", kOk}, {"node3", kNever}};
  EXPECT_EQ(RunFilter(pl, c, *sel), want);

  // An empty namespaceSelector selects all namespaces.
  auto all = testing::MakePodInfo(
      PodYaml("p", kDefaultS2, Affinity("podAntiAffinity", Term("region", kSecurityS1, ", namespaceSelector: {}"))));
  want = {{"node1", kNo}, {"node2", kNo}, {"node3", kNo}};
  EXPECT_EQ(RunFilter(pl, c, *all), want);

  // namespaces and namespaceSelector are ORed.
  auto both = testing::MakePodInfo(PodYaml(
      "p", kDefaultS2,
      Affinity("podAntiAffinity", Term("region", kSecurityS1, ", namespaces: [team-b], namespaceSelector: {matchLabels: {team: a}}"))));
  EXPECT_EQ(RunFilter(pl, c, *both), want);

  // Existing pod's anti-affinity with a namespaceSelector matched against the
  // incoming pod's namespace labels.
  Cluster c2;
  c2.nodes = ThreeNodes();
  c2.handle.SetNamespaceLabels("team-a", {{api::Symbol::Intern("team"), api::Symbol::Intern("a")}});
  c2.pods["node3"] = {PodYaml("guard", "namespace: infra, labels: {x: y}",
                              Affinity("podAntiAffinity", Term("region", kSecurityS1, ", namespaceSelector: {matchLabels: {team: a}}")),
                              "node3")};
  c2.Build();
  InterPodAffinity pl2(InterPodAffinityArgs{}, c2.handle);
  auto in_a = testing::MakePodInfo(PodYaml("p", "namespace: team-a, labels: {security: S1}"));
  want = {{"node1", kOk}, {"node2", kOk}, {"node3", kNo}};
  EXPECT_EQ(RunFilter(pl2, c2, *in_a), want);
  auto in_default = testing::MakePodInfo(PodYaml("p", kDefaultS1));
  want = {{"node1", kOk}, {"node2", kOk}, {"node3", kOk}};
  EXPECT_EQ(RunFilter(pl2, c2, *in_default), want);
}

TEST(InterPodAffinityFilter, MatchLabelKeysMergedIntoTerm) {
  Cluster c;
  c.nodes = ThreeNodes();
  c.pods["node1"] = {PodYaml("old", "namespace: default, labels: {app: web, rev: r1}", "", "node1")};
  c.pods["node3"] = {PodYaml("new", "namespace: default, labels: {app: web, rev: r2}", "", "node3")};
  c.Build();
  InterPodAffinity pl(InterPodAffinityArgs{}, c.handle);
  auto pod = testing::MakePodInfo(PodYaml(
      "p", "namespace: default, labels: {app: web, rev: r2}",
      Affinity("podAntiAffinity", Term("region", "{matchLabels: {app: web}}", ", matchLabelKeys: [rev]"))));
  std::map<std::string, Code> want = {{"node1", kOk}, {"node2", kOk}, {"node3", kNo}};
  EXPECT_EQ(RunFilter(pl, c, *pod), want);
}

TEST(InterPodAffinityFilter, AddPodRemovePod) {
  Cluster c;
  c.nodes = ThreeNodes();
  c.pods["node1"] = {PodYaml("guard", kDefaultS2, Affinity("podAntiAffinity", Term("zone", kSecurityS1)), "node1")};
  c.pods["node3"] = {PodYaml("friend", kDefaultS1, "", "node3")};
  c.Build();
  InterPodAffinity pl(InterPodAffinityArgs{}, c.handle);
  auto pod = testing::MakePodInfo(PodYaml("p", kDefaultS1, Affinity("podAffinity", Term("region", kSecurityS1))));
  CycleState state;
  ASSERT_TRUE(pl.PreFilter(state, *pod, c.handle.NodeInfos(), nullptr).IsSuccess());
  EXPECT_EQ(pl.Filter(state, *pod, c.Node("node1")).code(), kNever);  // no S1 pod in r1
  EXPECT_TRUE(pl.Filter(state, *pod, c.Node("node3")).IsSuccess());

  // Preemption removes the friend: with no S1 pod left anywhere, the
  // first-pod rule applies, so only the guard's anti-affinity restricts it.
  auto friend_info = testing::MakePodInfo(c.pods["node3"][0]);
  auto copy = state.Clone();
  ASSERT_TRUE(pl.RemovePod(*copy, *pod, *friend_info, c.Node("node3")).IsSuccess());
  EXPECT_EQ(pl.Filter(*copy, *pod, c.Node("node1")).code(), kNo);  // guard's anti-affinity
  EXPECT_TRUE(pl.Filter(*copy, *pod, c.Node("node3")).IsSuccess());
  auto guard = testing::MakePodInfo(c.pods["node1"][0]);
  ASSERT_TRUE(pl.RemovePod(*copy, *pod, *guard, c.Node("node1")).IsSuccess());
  EXPECT_TRUE(pl.Filter(*copy, *pod, c.Node("node1")).IsSuccess());
  // The original state is untouched.
  EXPECT_EQ(pl.Filter(state, *pod, c.Node("node1")).code(), kNever);
  // Adding a matching pod in r1 satisfies the affinity there.
  auto nominated = testing::MakePodInfo(PodYaml("nom", kDefaultS1, "", "node2"));
  ASSERT_TRUE(pl.AddPod(state, *pod, *nominated, c.Node("node2")).IsSuccess());
  EXPECT_EQ(pl.Filter(state, *pod, c.Node("node2")).code(), kNo);  // guard still blocks z11
  ASSERT_TRUE(pl.RemovePod(state, *pod, *guard, c.Node("node1")).IsSuccess());
  EXPECT_TRUE(pl.Filter(state, *pod, c.Node("node2")).IsSuccess());
}

// PreFilter keeps its per-node counts across calls and recounts only the
// nodes whose NodeInfo changed. Whatever happened before, the verdicts must
// equal those of a plugin that sees the cluster for the first time.
TEST(InterPodAffinityFilter, IncrementalCountsEqualAFreshPlugin) {
  Cluster c;
  // More nodes than PreFilter recounts serially, so the parallel path runs too.
  constexpr int kNodes = 70;
  for (int i = 0; i < kNodes; ++i) {
    c.nodes.push_back(MakeNode(gantry::StrCat("n", i), {{"zone", gantry::StrCat("z", i % 4)}}));
  }
  c.Build();
  c.handle.SetNamespaceLabels("default", {{api::Symbol::Intern("team"), api::Symbol::Intern("x")}});
  const std::vector<std::string> kSecurity = {kSecurityS1, kSecurityS2};
  const std::vector<std::string> kKeys = {"kubernetes.io/hostname", "zone"};
  std::vector<framework::PodInfoPtr> incoming = {
      testing::MakePodInfo(
          PodYaml("a", kDefaultS1,
                  Affinity("podAntiAffinity", Term("kubernetes.io/hostname", kSecurityS1)))),
      testing::MakePodInfo(
          PodYaml("b", kDefaultS2, Affinity("podAffinity", Term("zone", kSecurityS1)))),
      testing::MakePodInfo(PodYaml("c", kDefaultS1, "")),
      testing::MakePodInfo(PodYaml(
          "d", kDefaultS2,
          Affinity("podAntiAffinity",
                   Term("zone", kSecurityS2, ", namespaceSelector: {matchLabels: {team: x}}")))),
  };
  InterPodAffinity long_lived(InterPodAffinityArgs{}, c.handle);
  uint64_t rng = 7;
  auto next = [&](uint64_t bound) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % bound;
  };
  std::vector<std::pair<NodeInfo*, std::string>> added;
  for (int step = 0; step < 400; ++step) {
    SCOPED_TRACE(gantry::StrCat("step ", step));
    std::vector<NodeInfo*> all = c.handle.NodeInfos();
    switch (next(4)) {
      case 0:
      case 1: {  // a pod lands somewhere, with anti-affinity of its own or not
        NodeInfo* n = all[next(all.size())];
        std::string name = gantry::StrCat("p", step);
        const std::string& labels = next(2) == 0 ? kDefaultS1 : kDefaultS2;
        std::string spec =
            next(3) == 0 ? Affinity("podAntiAffinity", Term(kKeys[next(2)], kSecurity[next(2)]))
                         : "";
        api::Pod p = PodYaml(name, labels, spec, std::string(n->name()));
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
        NodeInfo* n = all[next(all.size())];
        auto node = std::make_shared<api::Node>(*n->node());
        node->meta.labels =
            MakeNode(std::string(n->name()), {{"zone", gantry::StrCat("z", next(5))}}).meta.labels;
        n->SetNode(node);
        break;
      }
    }
    const framework::PodInfo& pod = *incoming[next(incoming.size())];
    CycleState got_state, want_state;
    Status got_pre = long_lived.PreFilter(got_state, pod, all, nullptr);
    InterPodAffinity fresh(InterPodAffinityArgs{}, c.handle);
    Status want_pre = fresh.PreFilter(want_state, pod, all, nullptr);
    ASSERT_EQ(got_pre.code(), want_pre.code());
    if (!got_pre.IsSuccess()) continue;
    // A preemption-style update of this cycle's state must not leak into
    // the next cycle's counts.
    if (next(3) == 0 && !added.empty()) {
      const auto& [node, uid] = added[next(added.size())];
      for (const framework::PodInfoPtr& p : node->pods()) {
        if (p->uid() != uid) continue;
        ASSERT_TRUE(long_lived.RemovePod(got_state, pod, *p, *node).IsSuccess());
        ASSERT_TRUE(fresh.RemovePod(want_state, pod, *p, *node).IsSuccess());
      }
    }
    for (NodeInfo* n : all) {
      Status got = long_lived.Filter(got_state, pod, *n);
      Status want = fresh.Filter(want_state, pod, *n);
      EXPECT_EQ(got.code(), want.code()) << n->name();
      EXPECT_EQ(got.Message(), want.Message()) << n->name();
    }
  }
}

// ---- Scoring ------------------------------------------------------------------

std::map<std::string, int64_t> RunScore(InterPodAffinity& pl, Cluster& c, const framework::PodInfo& pod,
                                        Status* pre = nullptr) {
  CycleState state;
  std::vector<const NodeInfo*> nodes(c.handle.NodeInfos().begin(), c.handle.NodeInfos().end());
  Status st = pl.PreScore(state, pod, nodes);
  if (pre) *pre = st;
  std::map<std::string, int64_t> out;
  if (!st.IsSuccess()) return out;
  std::vector<framework::NodeScore> scores;
  for (const NodeInfo* n : nodes) {
    int64_t s = 0;
    EXPECT_TRUE(pl.Score(state, pod, *n, &s).IsSuccess());
    scores.push_back({n->name(), s});
  }
  EXPECT_TRUE(pl.NormalizeScore(state, pod, scores).IsSuccess());
  for (const auto& s : scores) out[std::string(s.name)] = s.score;
  return out;
}

struct ScoreCase {
  std::string name;
  std::string incoming_meta;
  std::string incoming_spec;
  std::vector<std::tuple<std::string, std::string, std::string>> existing;
  std::map<std::string, int64_t> want;  // empty: PreScore skips
  InterPodAffinityArgs args = {};
};

class ScoreTableTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(ScoreTableTest, Score) {
  const ScoreCase& tc = GetParam();
  Cluster c;
  c.nodes = {MakeNode("node1", {{"region", "China"}}), MakeNode("node2", {{"region", "India"}}),
             MakeNode("node3", {{"az", "az1"}})};
  int i = 0;
  for (const auto& [node, meta, spec] : tc.existing) {
    c.pods[node].push_back(PodYaml(gantry::StrCat("e", i++), meta, spec, node));
  }
  c.Build();
  InterPodAffinity pl(tc.args, c.handle);
  auto pod = testing::MakePodInfo(PodYaml("incoming", tc.incoming_meta, tc.incoming_spec));
  Status pre;
  auto got = RunScore(pl, c, *pod, &pre);
  if (tc.want.empty()) {
    EXPECT_TRUE(pre.IsSkip()) << pre.Message();
  } else {
    EXPECT_EQ(got, tc.want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, ScoreTableTest,
    ::testing::Values(
        ScoreCase{"no_affinity_anywhere_skips", kDefaultS1, "", {{"node1", kDefaultS1, ""}}, {}},
        ScoreCase{"preferred_affinity_region", kDefaultS2,
                  Affinity("podAffinity", "", Weighted(5, Term("region", kSecurityS1))),
                  {{"node1", kDefaultS1, ""}, {"node2", kDefaultS2, ""}, {"node3", kDefaultS1, ""}},
                  {{"node1", 100}, {"node2", 0}, {"node3", 0}}},
        ScoreCase{"preferred_affinity_weights_add_up", kDefaultS2,
                  Affinity("podAffinity", "",
                           Weighted(8, Term("region", kSecurityS1)) + ", " + Weighted(2, Term("region", kSecurityS2))),
                  {{"node1", kDefaultS1, ""}, {"node2", kDefaultS2, ""}, {"node2", kDefaultS2, ""}},
                  // China 8, India 4, node3 0.
                  {{"node1", 100}, {"node2", 50}, {"node3", 0}}},
        ScoreCase{"preferred_anti_affinity", kDefaultS2,
                  Affinity("podAntiAffinity", "", Weighted(5, Term("region", kSecurityS1))),
                  {{"node1", kDefaultS1, ""}, {"node2", kDefaultS2, ""}},
                  {{"node1", 0}, {"node2", 100}, {"node3", 100}}},
        ScoreCase{"existing_required_affinity_uses_hard_weight", kDefaultS1, "",
                  {{"node1", kDefaultS2, Affinity("podAffinity", Term("region", kSecurityS1))}},
                  {{"node1", 100}, {"node2", 0}, {"node3", 0}}},
        ScoreCase{"hard_weight_zero_disables_symmetry", kDefaultS1, "",
                  {{"node1", kDefaultS2, Affinity("podAffinity", Term("region", kSecurityS1))}},
                  {}, InterPodAffinityArgs{0, false}},
        ScoreCase{"existing_preferred_anti_affinity_is_symmetric", kDefaultS1, "",
                  {{"node1", kDefaultS2, Affinity("podAntiAffinity", "", Weighted(10, Term("region", kSecurityS1)))}},
                  {{"node1", 0}, {"node2", 100}, {"node3", 100}}},
        ScoreCase{"ignore_preferred_terms_of_existing_pods", kDefaultS1, "",
                  {{"node1", kDefaultS2, Affinity("podAntiAffinity", "", Weighted(10, Term("region", kSecurityS1)))}},
                  {}, InterPodAffinityArgs{1, true}},
        ScoreCase{"ignore_flag_keeps_own_preferences", kDefaultS2,
                  Affinity("podAffinity", "", Weighted(5, Term("region", kSecurityS1))),
                  {{"node1", kDefaultS1, ""}},
                  {{"node1", 100}, {"node2", 0}, {"node3", 0}}, InterPodAffinityArgs{1, true}},
        ScoreCase{"mixed_signs_normalised", kDefaultS2,
                  Affinity("podAffinity", "", Weighted(4, Term("region", kSecurityS1))) +
                      "    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution: [" +
                      Weighted(6, Term("region", kSecurityS2)) + "]\n",
                  {{"node1", kDefaultS1, ""}, {"node2", kDefaultS2, ""}},
                  // China +4, India -6, node3 0 -> (s+6)/10.
                  {{"node1", 100}, {"node2", 0}, {"node3", 60}}}),
    [](const auto& info) { return info.param.name; });

// ---- Args ---------------------------------------------------------------------

TEST(InterPodAffinityArgs, DecodeDefaultsAndValidate) {
  auto run = [](const std::string& json, std::string* err) {
    simdjson::dom::parser parser;
    api::JsonValue root;
    EXPECT_EQ(parser.parse(json).get(root), simdjson::SUCCESS);
    api::Decoder d("InterPodAffinityArgs");
    nlohmann::json out = DefaultArgs(d, root);
    *err = d.ok() ? "" : d.error()->ToString();
    return out;
  };
  std::string err;
  EXPECT_EQ(run("null", &err), nlohmann::json({{"hardPodAffinityWeight", 1}, {"ignorePreferredTermsOfExistingPods", false}}));
  EXPECT_EQ(err, "");
  EXPECT_EQ(run(R"({"hardPodAffinityWeight":0})", &err)["hardPodAffinityWeight"], 0);
  EXPECT_EQ(run(R"({"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"InterPodAffinityArgs","ignorePreferredTermsOfExistingPods":true})", &err)
                ["ignorePreferredTermsOfExistingPods"],
            true);
  EXPECT_EQ(err, "");
  run(R"({"hardPodAffinityWeight":-1})", &err);
  EXPECT_THAT(err, ::testing::HasSubstr("hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"));
  run(R"({"hardPodAffinityWeight":101})", &err);
  EXPECT_THAT(err, ::testing::HasSubstr("not in valid range [0, 100]"));
  run(R"({"hardPodAffinityWeight":"x"})", &err);
  EXPECT_NE(err, "");
  run(R"({"extra":1})", &err);
  EXPECT_THAT(err, ::testing::HasSubstr("unknown field \"extra\""));

  testing::FakeHandle h;
  simdjson::dom::parser parser;
  api::JsonValue root;
  ASSERT_EQ(parser.parse(std::string(R"({"hardPodAffinityWeight":500})")).get(root), simdjson::SUCCESS);
  api::Decoder d("InterPodAffinityArgs");
  EXPECT_FALSE(New(d, root, h).ok());
  EXPECT_EQ(Registration().name, "InterPodAffinity");
  EXPECT_EQ(Registration().args_kind, "InterPodAffinityArgs");
}

// ---- Queueing hints -------------------------------------------------------------

TEST(InterPodAffinityHints, PodAndNodeChanges) {
  testing::FakeHandle h;
  InterPodAffinity pl(InterPodAffinityArgs{}, h);
  using framework::QueueingHint;
  api::Pod pod = PodYaml("p", kDefaultS2,
                         Affinity("podAffinity", Term("region", kSecurityS1)) +
                             "    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: [" +
                             Term("zone", "{matchLabels: {bad: x}}") + "]\n");
  api::Pod s1 = PodYaml("s1", kDefaultS1, "", "node1");
  api::Pod s3 = PodYaml("s3", "namespace: default, labels: {security: S3}", "", "node1");
  api::Pod bad = PodYaml("bad", "namespace: default, labels: {bad: x}", "", "node1");
  api::Pod unbound = PodYaml("u", kDefaultS1);
  EXPECT_EQ(pl.HintAfterPodChange(pod, nullptr, &s1), QueueingHint::kQueue);
  EXPECT_EQ(pl.HintAfterPodChange(pod, nullptr, &s3), QueueingHint::kSkip);
  EXPECT_EQ(pl.HintAfterPodChange(pod, nullptr, &unbound), QueueingHint::kSkip);
  EXPECT_EQ(pl.HintAfterPodChange(pod, &bad, nullptr), QueueingHint::kQueue);
  EXPECT_EQ(pl.HintAfterPodChange(pod, &s3, nullptr), QueueingHint::kSkip);
  EXPECT_EQ(pl.HintAfterPodChange(pod, &s3, &s1), QueueingHint::kQueue);
  EXPECT_EQ(pl.HintAfterPodChange(pod, &bad, &s3), QueueingHint::kQueue);
  EXPECT_EQ(pl.HintAfterPodChange(pod, &s3, &s3), QueueingHint::kSkip);

  api::Node with_region = MakeNode("n", {{"region", "r1"}});
  api::Node plain = MakeNode("n", {});
  EXPECT_EQ(pl.HintAfterNodeChange(pod, nullptr, &with_region), QueueingHint::kQueue);
  EXPECT_EQ(pl.HintAfterNodeChange(pod, nullptr, &plain), QueueingHint::kSkip);
  ASSERT_EQ(pl.EventsToRegister().size(), 2u);
}

}  // namespace
}  // namespace gantry::plugins::inter_pod_affinity
