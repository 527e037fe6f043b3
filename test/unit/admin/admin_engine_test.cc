// Explain and what-if through the real engine offline (default
// configuration, built-in plugins): the reasons a pod or gang is pending,
// placements of what-if objects, and the error codes for bad requests.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/admin/diagnosis.h"
#include "src/admin/engine.h"
#include "src/admin/render.h"
#include "src/config/config.h"
#include "src/sim/loader.h"

namespace gantry::admin {
namespace {

using ::testing::HasSubstr;

std::string Node(const std::string& name, const std::string& rack, int gpus,
                 const std::string& taint = "", int cpu = 64) {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Node\nmetadata:\n  name: " << name
    << "\n  labels: {example.com/rack: " << rack << "}\n";
  if (!taint.empty())
    o << "spec:\n  taints: [{key: " << taint << ", value: \"true\", effect: NoSchedule}]\n";
  o << "status:\n  allocatable: {cpu: \"" << cpu
    << "\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \"" << gpus << "\"}\n---\n";
  return o.str();
}

std::string Pod(const std::string& name, int gpus, const std::string& group = "", int cpu = 1,
                const std::string& extra = "") {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Pod\nmetadata: {name: " << name
    << ", namespace: ml}\nspec:\n  schedulerName: gantry-scheduler\n";
  if (!group.empty()) o << "  schedulingGroup: {podGroupName: " << group << "}\n";
  o << extra;
  o << "  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"" << cpu
    << "\", memory: 1Gi, nvidia.com/gpu: \"" << gpus << "\"}\n---\n";
  return o.str();
}

std::string Group(const std::string& name, int min_count, bool topology) {
  std::ostringstream o;
  o << "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " << name
    << ", namespace: ml}\nspec:\n  schedulingPolicy:\n    gang: {minCount: " << min_count << "}\n";
  if (topology) o << "  schedulingConstraints:\n    topology:\n    - key: example.com/rack\n";
  return o.str() + "---\n";
}

std::string BoundPod(const std::string& name, const std::string& node, int gpus) {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Pod\nmetadata: {name: " << name
    << ", namespace: ml}\nspec:\n  nodeName: " << node
    << "\n  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"1\", memory: 1Gi, "
       "nvidia.com/gpu: \""
    << gpus << "\"}\nstatus: {phase: Running}\n---\n";
  return o.str();
}

// Node n-dra with 2 GPUs published through DRA, and a pod asking for `count`.
std::string DraCluster(int count) {
  std::ostringstream o;
  o << Node("n-dra", "r0", 0) << R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n-dra-gpus}
spec:
  driver: gpu.example.com
  nodeName: n-dra
  pool: {name: n-dra, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: H100}}}
  - {name: gpu-1, attributes: {model: {string: H100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: big, namespace: ml}
spec:
  devices:
    requests:
    - name: gpus
      exactly:
        deviceClassName: gpu.example.com
        count: )"
    << count << R"(
        selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].model == "H100"'}}]
---
apiVersion: v1
kind: Pod
metadata: {name: dra-pod, namespace: ml}
spec:
  schedulerName: gantry-scheduler
  containers: [{name: c, resources: {requests: {cpu: "1"}, claims: [{name: gpus}]}}]
  resourceClaims: [{name: gpus, resourceClaimName: big}]
---
)";
  return o.str();
}

api::ObjectSet Load(const std::string& yaml) {
  api::ObjectSet objects;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText("test.yaml", yaml, false, &objects, &stats);
  EXPECT_TRUE(st.ok()) << st;
  return objects;
}

class AdminEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(plugins::RegisterBuiltinPlugins(registry_).ok());
    auto cfg = config::DefaultConfig(registry_);
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    config_ = std::move(*cfg);
    options_.config = &config_;
    options_.registry = &registry_;
  }
  absl::StatusOr<v1::ExplainResponse> ExplainPod(const std::string& yaml, const std::string& name) {
    v1::ExplainRequest req;
    req.set_namespace_("ml");
    req.set_name(name);
    return Explain(req, Load(yaml), options_);
  }
  absl::StatusOr<v1::ExplainResponse> ExplainGroup(const std::string& yaml,
                                                   const std::string& name) {
    v1::ExplainRequest req;
    req.set_kind(v1::ExplainRequest::POD_GROUP);
    req.set_namespace_("ml");
    req.set_name(name);
    return Explain(req, Load(yaml), options_);
  }
  absl::StatusOr<v1::WhatIfResponse> RunWhatIf(const std::string& cluster,
                                               const std::string& objects) {
    v1::WhatIfRequest req;
    req.set_objects(objects);
    return WhatIf(req, Load(cluster), options_);
  }

  framework::Registry registry_;
  config::Configuration config_;
  EngineOptions options_;
};

const v1::NodeGroup* FindGroup(const google::protobuf::RepeatedPtrField<v1::NodeGroup>& groups,
                               const std::string& plugin) {
  for (const v1::NodeGroup& g : groups) {
    if (g.plugin() == plugin) return &g;
  }
  return nullptr;
}

TEST_F(AdminEngineTest, ExplainReasons) {
  struct Case {
    std::string name;
    std::string cluster;
    std::string pod;
    std::string plugin;       // the plugin that must appear among the filtered groups
    int32_t nodes;            // how many nodes it rejected
    std::string reason_part;  // a substring of its reason
  };
  const std::vector<Case> cases = {
      {"taint",
       Node("n0", "r0", 8, "dedicated") + Node("n1", "r0", 8, "dedicated") + Node("n2", "r0", 0) +
           Pod("p", 4),
       "p", "TaintToleration", 2, "untolerated taint"},
      {"resources",
       Node("n0", "r0", 8, "dedicated") + Node("n1", "r0", 0) + Node("n2", "r0", 0) + Pod("p", 4),
       "p", "NodeResourcesFit", 2, "Insufficient nvidia.com/gpu"},
      {"dra", DraCluster(4), "dra-pod", "DynamicResources", 1, "4 devices wanted, 2 free match"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<v1::ExplainResponse> r = ExplainPod(c.cluster, c.pod);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->phase(), "Pending");
    EXPECT_FALSE(r->recorded());  // offline: run on demand
    EXPECT_EQ(r->last_attempt().result(), "unschedulable");
    const v1::NodeGroup* g = FindGroup(r->last_attempt().filtered(), c.plugin);
    ASSERT_NE(g, nullptr) << r->DebugString();
    EXPECT_EQ(g->node_count(), c.nodes);
    EXPECT_NE(g->reason().find(c.reason_part), std::string::npos) << g->reason();
    EXPECT_EQ(g->nodes_size(), c.nodes);
    EXPECT_EQ(r->candidates_size(), 0);
  }
}

TEST_F(AdminEngineTest, ExplainDraRequests) {
  absl::StatusOr<v1::ExplainResponse> r = ExplainPod(DraCluster(4), "dra-pod");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices().requests_size(), 1);
  const v1::DeviceRequest& q = r->devices().requests(0);
  EXPECT_EQ(q.claim(), "big");
  EXPECT_EQ(q.request(), "gpus");
  EXPECT_EQ(q.device_class(), "gpu.example.com");
  EXPECT_EQ(q.count(), 4);
  EXPECT_FALSE(q.allocated());
  ASSERT_EQ(q.selectors_size(), 1);
  ASSERT_EQ(r->devices().nodes_size(), 1);
  EXPECT_EQ(r->devices().nodes(0).plugin(), "DynamicResources");
  EXPECT_NE(RenderExplain(*r).find("Device requests (DRA)"), std::string::npos);
}

TEST_F(AdminEngineTest, ExplainCandidatesAreScoredPerPlugin) {
  // The pod fits on both nodes; n1 is emptier, so resource scoring prefers it.
  const std::string cluster =
      Node("n0", "r0", 8) + Node("n1", "r0", 8) + BoundPod("busy", "n0", 6) + Pod("p", 1);
  absl::StatusOr<v1::ExplainResponse> r = ExplainPod(cluster, "p");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->last_attempt().result(), "scheduled");
  ASSERT_EQ(r->candidates_size(), 2) << r->DebugString();
  EXPECT_EQ(r->feasible_nodes(), 2);
  int64_t sum = 0;
  for (const v1::PluginScore& s : r->candidates(0).scores()) sum += s.score();
  EXPECT_EQ(sum, r->candidates(0).total());
  EXPECT_GE(r->candidates(0).total(), r->candidates(1).total());
  EXPECT_GT(r->candidates(0).scores_size(), 0);
}

TEST_F(AdminEngineTest, ExplainGangDomains) {
  // Two racks of 2 x 8 GPUs; the gang needs 3 members of 8 GPUs in one rack.
  std::string cluster = Node("a0", "r0", 8) + Node("a1", "r0", 8) + Node("b0", "r1", 8) +
                        Node("b1", "r1", 8) + Group("gang", 3, true);
  for (int i = 0; i < 3; ++i) cluster += Pod("w" + std::to_string(i), 8, "gang");
  absl::StatusOr<v1::ExplainResponse> r = ExplainGroup(cluster, "gang");
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::GroupDiagnosis& g = r->group();
  EXPECT_FALSE(g.recorded());  // offline: the replay's cycle
  EXPECT_FALSE(g.message().empty());
  EXPECT_FALSE(g.scheduled());
  EXPECT_EQ(g.min_count(), 3);
  ASSERT_GE(g.domains_size(), 1) << g.DebugString();
  for (const v1::DomainTrial& d : g.domains()) {
    EXPECT_EQ(d.placed(), 2) << d.domain();
    EXPECT_FALSE(d.satisfied());
  }
  ASSERT_EQ(g.members_size(), 3);
  int failed = 0;
  for (const v1::GroupMember& m : g.members()) failed += !m.failure().empty();
  EXPECT_GE(failed, 1);
  // A member's explain carries the group too.
  absl::StatusOr<v1::ExplainResponse> m = ExplainPod(cluster, "w0");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->group().key(), "ml/gang");
  EXPECT_NE(RenderExplain(*r).find("Domains tried"), std::string::npos);
}

TEST_F(AdminEngineTest, WhatIfGangs) {
  const std::string cluster = Node("a0", "r0", 8) + Node("a1", "r0", 8) + BoundPod("busy", "a1", 4);
  struct Case {
    std::string name;
    std::string objects;
    bool scheduled;
    int32_t placed_pods;
  };
  std::string fits = Group("fits", 2, false) + Pod("f0", 4, "fits") + Pod("f1", 4, "fits");
  std::string too_big =
      Group("big", 3, false) + Pod("b0", 8, "big") + Pod("b1", 8, "big") + Pod("b2", 8, "big");
  const std::vector<Case> cases = {{"fits", fits, true, 2}, {"does not fit", too_big, false, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<v1::WhatIfResponse> r = RunWhatIf(cluster, c.objects);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->groups_size(), 1);
    EXPECT_EQ(r->groups(0).scheduled(), c.scheduled) << r->DebugString();
    EXPECT_EQ(r->scheduled(), c.placed_pods);
    for (const v1::Placement& p : r->placements()) {
      EXPECT_EQ(p.node().empty(), !c.scheduled) << p.pod();
      if (!c.scheduled) {
        EXPECT_FALSE(p.message().empty());
      }
    }
  }
}

// Workload controllers stand for the pods they would create: names,
// counts and the controller's labels, each pod placed as any pod; errors
// name the workload, the field and its line.
TEST_F(AdminEngineTest, WhatIfExpandsWorkloadControllers) {
  const std::string cluster = Node("a0", "r0", 8) + Node("a1", "r0", 8);
  const std::string tmpl =
      "    spec:\n      schedulerName: gantry-scheduler\n      containers:\n      - name: c\n"
      "        resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"1\"}}\n";
  struct Case {
    std::string name;
    std::string objects;
    std::vector<std::string> pods;  // placed pods, in the order they are answered
    std::string error;              // non-empty: the request fails with this text
  };
  const std::vector<Case> cases = {
      {"deployment",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ml}\n"
       "spec:\n  replicas: 3\n  template:\n" + tmpl,
       {"ml/web-0", "ml/web-1", "ml/web-2"}, ""},
      {"statefulset defaults to one replica",
       "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: ml}\n"
       "spec:\n  template:\n" + tmpl,
       {"ml/db-0"}, ""},
      {"job: parallelism capped by completions",
       "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\n"
       "spec:\n  parallelism: 4\n  completions: 2\n  template:\n" + tmpl,
       {"ml/train-0", "ml/train-1"}, ""},
      {"jobset: replicated jobs times parallelism",
       "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js, namespace: ml}\n"
       "spec:\n  replicatedJobs:\n  - name: w\n    replicas: 2\n    template:\n      spec:\n"
       "        parallelism: 2\n        template:\n"
       "          spec:\n            schedulerName: gantry-scheduler\n            containers:\n"
       "            - {name: c, resources: {requests: {cpu: \"1\"}}}\n",
       {"ml/js-w-0-0", "ml/js-w-0-1", "ml/js-w-1-0", "ml/js-w-1-1"}, ""},
      {"leaderworkerset: a leader and size-1 workers per group",
       "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
       "metadata: {name: lws, namespace: ml}\nspec:\n  replicas: 2\n  leaderWorkerTemplate:\n"
       "    size: 2\n    workerTemplate:\n"
       "      spec:\n        schedulerName: gantry-scheduler\n"
       "        containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n",
       {"ml/lws-0", "ml/lws-0-1", "ml/lws-1", "ml/lws-1-1"}, ""},
      {"a template that is not a pod",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ml}\n"
       "spec:\n  replicas: 1\n  template:\n    spec:\n      priority: high\n",
       {}, "objects:8:17: Deployment ml/web: spec.template.spec.priority: expected an integer"},
      {"a negative count",
       "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ml}\n"
       "spec:\n  parallelism: -1\n  template:\n" + tmpl,
       {}, "objects:5:16: Job ml/j: spec.parallelism: Invalid value: must be a non-negative integer"},
      {"more pods than a what-if takes",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ml}\n"
       "spec:\n  replicas: 100000\n  template:\n" + tmpl,
       {}, "Deployment ml/web: spec.template: Too many: the workload expands to more than 10000 pods"},
      {"a kind that is not a workload is still refused",
       "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, namespace: ml}\n",
       {}, "kind apps/v1 DaemonSet is not used by the scheduler"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<v1::WhatIfResponse> r = RunWhatIf(cluster, c.objects);
    if (!c.error.empty()) {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.error));
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<std::string> pods;
    for (const v1::Placement& p : r->placements()) {
      pods.push_back(p.pod());
      EXPECT_FALSE(p.node().empty()) << p.pod() << ": " << p.message();
    }
    std::sort(pods.begin(), pods.end());
    std::vector<std::string> want = c.pods;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(pods, want);
  }
}

TEST_F(AdminEngineTest, WhatIfDraAllocation) {
  // The claim and the pod as what-if objects: the pod is placed and its claim allocated.
  const std::string dra = DraCluster(2);
  const size_t claim_at = dra.find("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n");
  ASSERT_NE(claim_at, std::string::npos);
  absl::StatusOr<v1::WhatIfResponse> r = RunWhatIf(dra.substr(0, claim_at), dra.substr(claim_at));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->placements_size(), 1);
  EXPECT_EQ(r->placements(0).node(), "n-dra");
  ASSERT_EQ(r->allocations_size(), 1);
  EXPECT_EQ(r->allocations(0).claim(), "ml/big");
  EXPECT_EQ(r->allocations(0).devices_size(), 2);
}

TEST_F(AdminEngineTest, ErrorCodes) {
  const std::string cluster =
      Node("n0", "r0", 8) + BoundPod("busy", "n0", 1) + Group("g", 2, false) + Pod("p", 1);
  struct ExplainCase {
    std::string name;
    v1::ExplainRequest::Kind kind;
    std::string ns, pod;
    int32_t max_candidates;
    absl::StatusCode code;
    std::string message_part;
  };
  const std::vector<ExplainCase> explain_cases = {
      {"unknown pod", v1::ExplainRequest::POD, "ml", "nope", 0, absl::StatusCode::kNotFound,
       "Pod ml/nope not found"},
      {"unknown group", v1::ExplainRequest::POD_GROUP, "ml", "nope", 0, absl::StatusCode::kNotFound,
       "PodGroup ml/nope"},
      {"empty name", v1::ExplainRequest::POD, "ml", "", 0, absl::StatusCode::kInvalidArgument,
       "name: Required value"},
      {"bad name", v1::ExplainRequest::POD, "ml", "Bad_Name", 0, absl::StatusCode::kInvalidArgument,
       "name: Invalid value"},
      {"bad namespace", v1::ExplainRequest::POD, "ML!", "p", 0, absl::StatusCode::kInvalidArgument,
       "namespace: Invalid"},
      {"bad candidates", v1::ExplainRequest::POD, "ml", "p", -1, absl::StatusCode::kInvalidArgument,
       "max_candidates"},
      {"ok", v1::ExplainRequest::POD, "ml", "p", 0, absl::StatusCode::kOk, ""},
  };
  for (const ExplainCase& c : explain_cases) {
    SCOPED_TRACE(c.name);
    v1::ExplainRequest req;
    req.set_kind(c.kind);
    req.set_namespace_(c.ns);
    req.set_name(c.pod);
    req.set_max_candidates(c.max_candidates);
    absl::StatusOr<v1::ExplainResponse> r = Explain(req, Load(cluster), options_);
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    EXPECT_NE(std::string(r.status().message()).find(c.message_part), std::string::npos)
        << r.status();
  }

  std::string many = "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [";
  for (size_t i = 0; i <= kMaxWhatIfObjects; ++i) {
    many +=
        (i ? "," : "") +
        std::string("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"x") +
        std::to_string(i) + "\"}}";
  }
  many += "]}";
  struct WhatIfCase {
    std::string name;
    std::string objects;
    std::string format;
    absl::StatusCode code;
    std::string message_part;
  };
  const std::vector<WhatIfCase> whatif_cases = {
      {"empty", "", "", absl::StatusCode::kInvalidArgument, "objects: Required value"},
      {"bad format", Pod("q", 1), "xml", absl::StatusCode::kInvalidArgument,
       "format: Unsupported value"},
      {"yaml syntax", "apiVersion: v1\nkind: Pod\nmetadata: {name: [\n", "",
       absl::StatusCode::kInvalidArgument, "objects:"},
      {"bad field",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: ml}\nspec:\n  priority: high\n",
       "", absl::StatusCode::kInvalidArgument, "objects:5:"},
      {"node", Node("n9", "r0", 1), "", absl::StatusCode::kInvalidArgument,
       "Node objects cannot be added"},
      {"unknown kind", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n", "",
       absl::StatusCode::kInvalidArgument, "apps/v1 DaemonSet"},
      {"a workload without a template", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
       "", absl::StatusCode::kInvalidArgument, "Deployment d: spec.template: Required value"},
      {"bound pod", BoundPod("q", "n0", 1), "", absl::StatusCode::kInvalidArgument,
       "spec.nodeName"},
      {"other scheduler",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: ml}\nspec: {containers: [{name: "
       "c}]}\n",
       "", absl::StatusCode::kInvalidArgument,
       "spec.schedulerName: Unsupported value: \"default-scheduler\""},
      {"exists", Pod("p", 1), "", absl::StatusCode::kAlreadyExists, "Pod ml/p already exists"},
      {"group exists", Group("g", 1, false) + Pod("q", 1, "g"), "",
       absl::StatusCode::kAlreadyExists, "PodGroup ml/g"},
      {"duplicate", Pod("q", 1) + Pod("q", 1), "", absl::StatusCode::kInvalidArgument, "duplicate"},
      {"too many", many, "json", absl::StatusCode::kResourceExhausted, "at most"},
      {"ok", Pod("q", 1), "", absl::StatusCode::kOk, ""},
  };
  for (const WhatIfCase& c : whatif_cases) {
    SCOPED_TRACE(c.name);
    v1::WhatIfRequest req;
    req.set_objects(c.objects);
    req.set_format(c.format);
    absl::StatusOr<v1::WhatIfResponse> r = WhatIf(req, Load(cluster), options_);
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    EXPECT_NE(std::string(r.status().message()).find(c.message_part), std::string::npos)
        << r.status();
  }
}

}  // namespace
}  // namespace gantry::admin
