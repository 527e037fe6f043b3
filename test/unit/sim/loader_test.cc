// Snapshot loading: the shipped snapshot (golden), every accepted input
// shape, skipped kinds, and malformed input that must fail cleanly with a
// position and the object's name, never crash.
#include "src/sim/loader.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/yaml.h"
#include "src/sim/report.h"

namespace gantry::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const api::Pod* FindPod(const api::ObjectSet& set, std::string_view key) {
  for (const api::Pod& p : set.pods) {
    if (p.meta.Key() == key) return &p;
  }
  return nullptr;
}

const api::Node* FindNode(const api::ObjectSet& set, std::string_view name) {
  for (const api::Node& n : set.nodes) {
    if (n.meta.name == name) return &n;
  }
  return nullptr;
}

absl::Status LoadText(std::string_view text, bool is_json, api::ObjectSet* out, LoadStats* stats) {
  return LoadClusterText(is_json ? "in.json" : "in.yaml", text, is_json, out, stats);
}

// A scratch directory removed when the test ends.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("gantry-loader-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void Write(const std::string& rel, std::string_view text) const {
    fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// --- Golden: the snapshot that ships in the repository -----------------------

TEST(LoaderGoldenTest, AiSmallSnapshot) {
  api::ObjectSet set;
  LoadStats stats;
  absl::Status st = LoadClusterPath("bench/snapshots/ai-small.yaml", &set, &stats);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(set.nodes.size(), 9u);
  EXPECT_EQ(set.pods.size(), 12u);
  EXPECT_EQ(stats.files, std::vector<std::string>{"bench/snapshots/ai-small.yaml"});
  EXPECT_EQ(stats.objects, 21);
  EXPECT_GT(stats.bytes, 1000);
  ASSERT_EQ(stats.skipped_kinds.count("apps/v1 Deployment"), 1u);
  EXPECT_EQ(stats.skipped_kinds.at("apps/v1 Deployment"), 1);

  const api::ResourceNames& rn = api::ResourceNames::Get();
  const api::Symbol gpu = api::Symbol::Intern("nvidia.com/gpu");
  const api::Node* n0 = FindNode(set, "gpu-z0-r0-n0");
  ASSERT_NE(n0, nullptr);
  EXPECT_EQ(n0->allocatable.Get(rn.cpu), 96000);
  EXPECT_EQ(n0->allocatable.Get(rn.memory), 1LL << 40);
  EXPECT_EQ(n0->allocatable.Get(gpu), 8);
  EXPECT_EQ(api::FindLabel(n0->meta.labels, "topology.kubernetes.io/zone")->view(), "zone-0");
  EXPECT_EQ(api::FindLabel(n0->meta.labels, "example.com/rack")->view(), "rack-0-0");
  const api::Node* cpu = FindNode(set, "cpu-0");
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(cpu->taints.size(), 1u);
  EXPECT_EQ(cpu->taints[0].key.view(), "example.com/cpu-only");
  EXPECT_EQ(cpu->allocatable.Get(rn.memory), 128LL << 30);
  EXPECT_TRUE(cpu->capacity.empty());

  const api::Pod* infer = FindPod(set, "serving/infer-0");
  ASSERT_NE(infer, nullptr);
  EXPECT_EQ(infer->scheduler_name.view(), "gantry-scheduler");
  EXPECT_EQ(infer->requests.Get(rn.cpu), 8000);
  EXPECT_EQ(infer->requests.Get(rn.memory), 64LL << 30);
  EXPECT_EQ(infer->requests.Get(gpu), 2);  // defaulted from limits
  const api::Pod* train = FindPod(set, "research/train-3");
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->priority, 1000);
  ASSERT_EQ(train->node_selector.size(), 1u);
  EXPECT_EQ(train->node_selector[0].second.view(), "H100");
  const api::Pod* notebook = FindPod(set, "research/notebook");
  ASSERT_NE(notebook, nullptr);
  EXPECT_EQ(notebook->requests.Get(rn.cpu), 2000);  // a YAML integer
  ASSERT_EQ(notebook->tolerations.size(), 1u);
  const api::Pod* existing = FindPod(set, "batch/existing-batch");
  ASSERT_NE(existing, nullptr);
  EXPECT_EQ(existing->node_name.view(), "gpu-z1-r1-n1");
  EXPECT_EQ(existing->scheduler_name.view(), "default-scheduler");

  Inventory inv = TakeInventory(set, {"gantry-scheduler"});
  EXPECT_EQ(inv.nodes, 9);
  EXPECT_EQ(inv.pods_pending, 11);
  EXPECT_EQ(inv.pods_bound, 1);
  EXPECT_EQ(inv.pods_other_scheduler, 0);
}

// --- Input shapes ------------------------------------------------------------

constexpr const char* kNodeJson =
    R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4"}}})";
constexpr const char* kPodJson =
    R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "ns"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}})";

TEST(LoaderShapesTest, KubectlListYaml) {
  const char* yaml = R"(apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
- apiVersion: v1
  kind: Pod
  metadata: {name: p1, namespace: ns}
- apiVersion: v1
  kind: Service
  metadata: {name: svc}
)";
  api::ObjectSet set;
  LoadStats stats;
  ASSERT_TRUE(LoadText(yaml, false, &set, &stats).ok());
  EXPECT_EQ(set.nodes.size(), 1u);
  EXPECT_EQ(set.pods.size(), 1u);
  EXPECT_EQ(stats.skipped_kinds["v1 Service"], 1);
}

TEST(LoaderShapesTest, TypedListWithoutItemKinds) {
  const std::string json =
      R"({"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]})";
  api::ObjectSet set;
  LoadStats stats;
  ASSERT_TRUE(LoadText(json, true, &set, &stats).ok());
  EXPECT_EQ(set.pods.size(), 2u);
  const std::string nodes = R"({"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"name": "a"}}]})";
  ASSERT_TRUE(LoadText(nodes, true, &set, &stats).ok());
  EXPECT_EQ(set.nodes.size(), 1u);
}

// Lists are decoded an item at a time; kind and apiVersion may come after
// the items, and fields other than items are ignored.
TEST(LoaderShapesTest, ListFieldsInAnyOrder) {
  const std::string json =
      R"({"metadata": {"resourceVersion": "7"}, "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}],)"
      R"( "apiVersion": "v1", "kind": "NodeList"})";
  api::ObjectSet set;
  LoadStats stats;
  ASSERT_TRUE(LoadText(json, true, &set, &stats).ok());
  ASSERT_EQ(set.nodes.size(), 2u);
  EXPECT_EQ(set.nodes[1].meta.name, "b");
  EXPECT_EQ(stats.objects, 2);
}

TEST(LoaderShapesTest, EmptyAndNullLists) {
  api::ObjectSet set;
  LoadStats stats;
  EXPECT_TRUE(LoadText(R"({"apiVersion": "v1", "kind": "List", "items": []})", true, &set, &stats).ok());
  EXPECT_TRUE(LoadText(R"({"apiVersion": "v1", "kind": "List", "items": null})", true, &set, &stats).ok());
  EXPECT_TRUE(LoadText("", false, &set, &stats).ok());
  EXPECT_TRUE(LoadText("---\n---\n# nothing\n", false, &set, &stats).ok());
  EXPECT_TRUE(LoadText("null", true, &set, &stats).ok());
  EXPECT_TRUE(LoadText("[]", true, &set, &stats).ok());
  EXPECT_EQ(set.TotalObjects(), 0u);
}

TEST(LoaderShapesTest, MultiDocumentYaml) {
  const char* yaml =
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
      "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\n"
      "---\n"
      "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n";
  api::ObjectSet set;
  LoadStats stats;
  ASSERT_TRUE(LoadText(yaml, false, &set, &stats).ok());
  EXPECT_EQ(set.nodes.size(), 2u);
  EXPECT_EQ(set.pods.size(), 1u);
  EXPECT_EQ(stats.objects, 3);
}

TEST(LoaderShapesTest, JsonArrayAndSingleObject) {
  api::ObjectSet set;
  LoadStats stats;
  std::string arr = std::string("[") + kNodeJson + "," + kPodJson + "]";
  ASSERT_TRUE(LoadText(arr, true, &set, &stats).ok());
  ASSERT_TRUE(LoadText(kPodJson, true, &set, &stats).ok());
  EXPECT_EQ(set.nodes.size(), 1u);
  EXPECT_EQ(set.pods.size(), 2u);
  // YAML is a superset of JSON: the same text loads through the YAML path.
  api::ObjectSet set2;
  ASSERT_TRUE(LoadText(arr, false, &set2, &stats).ok());
  EXPECT_EQ(set2.TotalObjects(), 2u);
}

TEST(LoaderShapesTest, Directory) {
  TempDir dir;
  dir.Write("b-nodes.json", std::string("[") + kNodeJson + "]");
  dir.Write("a/pods.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\n");
  dir.Write("a/z/more.yml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p2}\n");
  dir.Write("c/ignored.txt", "this is not a snapshot {");
  dir.Write("c/README.md", "# nope");
  api::ObjectSet set;
  LoadStats stats;
  absl::Status st = LoadClusterPath(dir.path().string(), &set, &stats);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(set.nodes.size(), 1u);
  ASSERT_EQ(set.pods.size(), 2u);
  ASSERT_EQ(stats.files.size(), 3u);
  // Lexical order of full paths.
  EXPECT_THAT(stats.files[0], HasSubstr("a/pods.yaml"));
  EXPECT_THAT(stats.files[1], HasSubstr("a/z/more.yml"));
  EXPECT_THAT(stats.files[2], HasSubstr("b-nodes.json"));
  EXPECT_EQ(set.pods[0].meta.name, "p1");
}

TEST(LoaderShapesTest, ContentSniffingWithoutExtension) {
  TempDir dir;
  dir.Write("snapshot", std::string("  \n[") + kNodeJson + "]");
  api::ObjectSet set;
  LoadStats stats;
  ASSERT_TRUE(LoadClusterPath((dir.path() / "snapshot").string(), &set, &stats).ok());
  EXPECT_EQ(set.nodes.size(), 1u);
}

TEST(LoaderShapesTest, MissingPath) {
  api::ObjectSet set;
  LoadStats stats;
  absl::Status st = LoadClusterPath("/nonexistent/gantry/snapshot.yaml", &set, &stats);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(st.message()), HasSubstr("/nonexistent/gantry/snapshot.yaml"));
}

TEST(LoaderShapesTest, SkippedKindsCountedPerKind) {
  const char* yaml =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\n"
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\n---\n"
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
      "apiVersion: v2\nkind: Pod\nmetadata: {name: future}\n---\n"
      "apiVersion: example.com/v1\nkind: Node\nmetadata: {name: not-a-core-node}\n";
  api::ObjectSet set;
  LoadStats stats;
  ASSERT_TRUE(LoadText(yaml, false, &set, &stats).ok());
  EXPECT_EQ(set.TotalObjects(), 0u);
  EXPECT_EQ(stats.skipped_kinds["apps/v1 Deployment"], 2);
  EXPECT_EQ(stats.skipped_kinds["v1 ConfigMap"], 1);
  EXPECT_EQ(stats.skipped_kinds["v2 Pod"], 1);
  EXPECT_EQ(stats.skipped_kinds["example.com/v1 Node"], 1);
  EXPECT_EQ(stats.objects, 0);
}

// --- Errors with positions -----------------------------------------------------

struct ErrorCase {
  const char* name;
  const char* text;
  bool is_json;
  const char* want;  // exact message
};

const ErrorCase kErrorCases[] = {
    {"yaml field type", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: prod\nspec:\n  priority: high\n",
     false, "in.yaml:7:13: Pod prod/web: spec.priority: expected an integer, got string"},
    {"yaml second document",
     "apiVersion: v1\nkind: Node\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: bad}\n"
     "status:\n  allocatable:\n    cpu: four\n",
     false,
     "in.yaml:10:10: Node bad: status.allocatable.cpu: Invalid value: \"four\": quantities must match the regular "
     "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"yaml list item",
     "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n"
     "- apiVersion: v1\n  kind: Pod\n  metadata: {name: b}\n  spec:\n    containers:\n    - name: c\n"
     "      ports: [{hostPort: 99999}]\n",
     false,
     "in.yaml:13:26: Pod b: spec.containers[0].ports[0].hostPort: Invalid value: 99999: must be between 0 "
     "and 65535, inclusive"},
    {"yaml missing kind", "apiVersion: v1\nmetadata: {name: x}\n", false,
     "in.yaml:1:1: object x: kind: Required value: every object needs apiVersion and kind"},
    {"yaml scalar document", "just a string\n", false, "in.yaml:1:1: object: expected an object, got string"},
    {"yaml syntax", "apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n", false, nullptr},
    {"json field type",
     "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"web\"},\n"
     "  \"spec\": {\"tolerations\": [{\"key\": \"k\", \"effect\": \"Never\"}]}\n}\n",
     true,
     "in.json:5:51: Pod web: spec.tolerations[0].effect: Unsupported value: \"Never\": supported values: "
     "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""},
    {"json array item not an object", R"([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}, 7])", true,
     "in.json:1:67: object: expected an object, got number"},
    {"json items not an array", R"({"apiVersion": "v1", "kind": "List", "items": {"a": 1}})", true,
     "in.json:1:47: List: items: expected an array, got object"},
    {"json syntax", "{\n  \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"x\"\n", true, nullptr},
    {"json trailing comma", "[{\"kind\": \"Pod\",}]", true, nullptr},
    {"json trailing content", R"([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}] x)", true, nullptr},
    {"json syntax in a list item",
     R"({"kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}, {"kind": }]})",
     true, nullptr},
    {"json typed list item field type",
     "{\"items\": [{\"metadata\": {\"name\": \"a\"}},\n {\"metadata\": {\"name\": \"b\"}, \"spec\": {\"priority\": \"x\"}}],\n"
     " \"kind\": \"PodList\", \"apiVersion\": \"v1\"}",
     true, "in.json:2:51: Pod b: spec.priority: expected an integer, got string"},
};

TEST(LoaderErrorTest, PositionsAndNames) {
  for (const ErrorCase& c : kErrorCases) {
    api::ObjectSet set;
    LoadStats stats;
    absl::Status st = LoadText(c.text, c.is_json, &set, &stats);
    ASSERT_FALSE(st.ok()) << c.name;
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << c.name << ": " << st;
    std::string msg(st.message());
    if (c.want != nullptr) {
      EXPECT_EQ(msg, c.want) << c.name;
    } else {
      // Syntax errors: "file:line:col: ...".
      EXPECT_THAT(msg, testing::MatchesRegex(c.is_json ? "in\\.json:[0-9]+:[0-9]+: .*" : "in\\.yaml:[0-9]+:[0-9]+: .*"))
          << c.name;
    }
  }
}

TEST(LoaderErrorTest, FilePathInErrors) {
  TempDir dir;
  dir.Write("ok.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n");
  dir.Write("zz-bad.json", R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": {"x": 1}}})");
  api::ObjectSet set;
  LoadStats stats;
  absl::Status st = LoadClusterPath(dir.path().string(), &set, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), StartsWith((dir.path() / "zz-bad.json").string() + ":1:"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("Node b: metadata.labels.x: expected a string, got number"));
}

// A YAML snapshot whose aliases expand past the budget is rejected before
// anything is expanded, with the file and the alias's line:column; a few
// aliases in a real snapshot (shared labels) still load.
TEST(LoaderErrorTest, YamlAliasBudget) {
  std::string laughs =
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n    a0: &a0 lol\n";
  for (int level = 1; level <= 9; ++level) {
    laughs += "    a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) laughs += (i ? ", *a" : "*a") + std::to_string(level - 1);
    laughs += "]\n";
  }
  TempDir dir;
  dir.Write("laughs.yaml", laughs);
  api::ObjectSet set;
  LoadStats stats;
  absl::Status st = LoadClusterPath((dir.path() / "laughs.yaml").string(), &set, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()),
              StartsWith((dir.path() / "laughs.yaml").string() + ":13:14: alias *a6"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("exceeds the YAML alias budget"));

  api::ObjectSet ok_set;
  LoadStats ok_stats;
  ASSERT_TRUE(
      LoadText(
          "apiVersion: v1\nkind: List\nitems:\n"
          "- {apiVersion: v1, kind: Node, metadata: {name: a, labels: &l {zone: z1, rack: r1}}}\n"
          "- {apiVersion: v1, kind: Node, metadata: {name: b, labels: *l}}\n",
          false, &ok_set, &ok_stats)
          .ok());
  ASSERT_EQ(ok_set.nodes.size(), 2u);
  EXPECT_EQ(ok_set.nodes[1].meta.labels, ok_set.nodes[0].meta.labels);
}

// A snapshot holding a bound pod of a newer API level loads in every format:
// values Gantry does not interpret are ignored, and a pod with a field it
// cannot read is kept on its node with the requests that could be read.
TEST(LoaderTolerantTest, BoundPodOfANewerApiLevelLoadsInEveryFormat) {
  const std::string node =
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4"}}})";
  const std::string newer =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"newer","namespace":"ml","uid":"u1"},)"
      R"("spec":{"nodeName":"n1","containers":[{"name":"c","restartPolicy":"Always",)"
      R"("restartPolicyRules":[{"action":"Restart"}],"resources":{"requests":{"cpu":"3"}}}]},)"
      R"("status":{"phase":"Running"}})";
  const std::string unreadable =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"odd","namespace":"ml","uid":"u2"},)"
      R"("spec":{"nodeName":"n1","preemptionPolicy":"WhenIdle","containers":[{"name":"c",)"
      R"("resources":{"requests":{"cpu":"500m"}}}]},"status":{"phase":"Running"}})";
  std::vector<RawObject> objects;
  for (const std::string& json : {node, newer, unreadable}) {
    auto raw = MakeRawObject("test", json);
    ASSERT_TRUE(raw.ok()) << raw.status();
    objects.push_back(*raw);
  }
  TempDir dir;
  for (const char* name : {"snap.yaml", "snap.json", "snap.pb"}) {
    const std::string path = (dir.path() / name).string();
    auto format = SnapshotFormatForPath(path);
    ASSERT_TRUE(format.ok());
    ASSERT_TRUE(WriteSnapshot(path, *format, gantry::snapshot::v1::Header(), objects).ok()) << name;
    api::ObjectSet set;
    LoadStats stats;
    absl::Status st = LoadClusterPath(path, &set, &stats);
    ASSERT_TRUE(st.ok()) << name << ": " << st;
    ASSERT_EQ(set.pods.size(), 2u) << name;
    const api::Pod* p = FindPod(set, "ml/newer");
    ASSERT_NE(p, nullptr) << name;
    EXPECT_FALSE(p->Undecodable()) << name;
    EXPECT_EQ(p->node_name.view(), "n1") << name;
    EXPECT_EQ(p->requests.Get(api::Symbol::Intern("cpu")), 3000) << name;
    const api::Pod* odd = FindPod(set, "ml/odd");
    ASSERT_NE(odd, nullptr) << name;
    EXPECT_TRUE(odd->Undecodable()) << name;
    EXPECT_EQ(odd->node_name.view(), "n1") << name;
    EXPECT_EQ(odd->requests.Get(api::Symbol::Intern("cpu")), 500) << name;
    EXPECT_EQ(stats.undecodable_pods, 1) << name;
    EXPECT_THAT(stats.first_undecodable, HasSubstr("Pod ml/odd: spec.preemptionPolicy")) << name;
  }
}

// --- Fuzz-style malformed input ------------------------------------------------

// Loads `text` both ways; each load must return OK or a clean error that
// starts with the source name. Crashes and hangs are the failures caught here.
void ExpectCleanResult(std::string_view text, const std::string& label) {
  for (bool is_json : {true, false}) {
    api::ObjectSet set;
    LoadStats stats;
    absl::Status st = LoadText(text, is_json, &set, &stats);
    if (st.ok()) continue;
    std::string msg(st.message());
    EXPECT_THAT(msg, StartsWith(is_json ? "in.json" : "in.yaml")) << label;
    EXPECT_LT(msg.size(), 256u * 1024) << label;
  }
}

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(LoaderFuzzTest, BrokenDocuments) {
  std::vector<std::string> docs = {
      "",
      " ",
      "{",
      "}",
      "[",
      "]",
      "{]",
      "[}",
      "\"",
      "{\"kind\": }",
      "{\"kind\": \"Pod\"",
      "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": [{\"name\": \"c\",",
      "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    resources:\n      requests:\n        cpu:",
      "kind: Pod\nmetadata: {name: p\n",
      "kind: Pod\n  metadata: x\n bad: indent\n",
      "- - - - -\n",
      ": : :\n",
      "kind: [Pod]\n",
      "apiVersion: 1\nkind: 2\n",
      "apiVersion: v1\nkind: Pod\nmetadata: []\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: 7\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 7}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [7]}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{resources: 7}]}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{resources: {requests: 7}}]}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{resources: {requests: {cpu: {}}}}]}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {affinity: {nodeAffinity: []}}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [7]}}}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {topologySpreadConstraints: [{maxSkew: x}]}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {tolerations: [[]]}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: 99999999999999999999999999}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: 1e400}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: -1e400}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: .nan}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: 0x7fffffffffffffffffff}\n",
      "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: 1e400, memory: 123456789012345678901234567890}}\n",
      "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {memory: 99999999999999999999999999999999999999Ei}}\n",
      "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {memory: 1e99999999999999}}\n",
      "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}, \"spec\": {\"priority\": 123456789012345678901234567890}}",
      "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}, \"spec\": {\"priority\": 1e999}}",
      "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}, \"status\": {\"allocatable\": {\"cpu\": 1e308}}}",
      "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}, \"status\": {\"allocatable\": {\"cpu\": -0.0}}}",
      "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}, \"status\": {\"allocatable\": {\"cpu\": 18446744073709551615}}}",
      "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\\u0000x\"}}",
      "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"\\ud800\"}}",
      "{\"a\": \"\xff\xfe\"}",
      "apiVersion: v1\nkind: Node\nmetadata: {name: \"\\xff\"}\n",
      "\xef\xbb\xbf{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"bom\"}}",
      "apiVersion: v1\nkind: Node\nmetadata: &a {name: x, self: *a}\n",
      "a: &a [*a]\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: !!binary aGVsbG8=\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: !custom {priority: 1}\n",
      "%YAML 1.2\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n}\n",
      "%BOGUS directive\n---\na: 1\n",
      // Deep nesting, both syntaxes.
      Repeat("[", 100000),
      Repeat("[", 5000) + Repeat("]", 5000),
      Repeat("{\"a\":", 5000) + "1" + Repeat("}", 5000),
      Repeat("- ", 3000) + "x\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeSelector: " + Repeat("{a: ", 2000) + "1" +
          Repeat("}", 2000) + "}\n",
      // Very long scalars and keys.
      "apiVersion: v1\nkind: Node\nmetadata: {name: " + std::string(1 << 20, 'n') + "}\n",
      "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\", \"labels\": {\"" +
          std::string(100000, 'k') + "\": 1}}}",
  };
  // Binary garbage.
  std::mt19937_64 rng(20240501);
  for (int i = 0; i < 50; ++i) {
    std::string junk(1 + rng() % 2000, '\0');
    for (char& ch : junk) ch = static_cast<char>(rng());
    docs.push_back(junk);
  }
  for (size_t i = 0; i < docs.size(); ++i) ExpectCleanResult(docs[i], "broken doc #" + std::to_string(i));
}

constexpr const char* kValidYaml = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-0
    labels: {topology.kubernetes.io/zone: zone-a, example.com/rack: r0}
  spec:
    taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]
  status:
    allocatable: {cpu: "96", memory: 1Ti, pods: "110", nvidia.com/gpu: "8"}
- apiVersion: v1
  kind: Pod
  metadata: {name: trainer-0, namespace: ml, labels: {job: ft}}
  spec:
    schedulerName: gantry-scheduler
    priority: 100
    nodeSelector: {nvidia.com/gpu.product: H100}
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: gpu-count, operator: Gt, values: ["4"]}]
    tolerations: [{key: nvidia.com/gpu, operator: Exists}]
    topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: example.com/rack, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {job: ft}}}
    initContainers:
    - {name: sidecar, restartPolicy: Always, resources: {requests: {cpu: 500m}}}
    containers:
    - name: c
      image: trainer:1
      ports: [{containerPort: 80, hostPort: 8080}]
      resources: {requests: {cpu: "8", memory: 64Gi}, limits: {nvidia.com/gpu: "8"}}
)";

// Applies one random byte-level edit to `doc`.
std::string Mutate(std::string doc, std::mt19937_64& rng) {
  static const char* kTokens[] = {"{", "}", "[", "]", ":", ",", "\"", "'", "-", " ", "\n", "  ", "\t", "#",
                                  "&a", "*a", "!!str", "null", "true", "1e999", "-1", "99999999999999999999",
                                  "0x", ".5", "Gi", "m", "|", ">", "---\n", "...", "?", "%", "\\", "\xff"};
  if (doc.empty()) return kTokens[rng() % std::size(kTokens)];
  const size_t pos = rng() % doc.size();
  switch (rng() % 6) {
    case 0:  // delete a span
      doc.erase(pos, 1 + rng() % 16);
      break;
    case 1:  // insert a token
      doc.insert(pos, kTokens[rng() % std::size(kTokens)]);
      break;
    case 2:  // flip a byte
      doc[pos] = static_cast<char>(doc[pos] ^ (1 << (rng() % 8)));
      break;
    case 3:  // truncate
      doc.resize(pos);
      break;
    case 4: {  // duplicate a span elsewhere
      const size_t len = 1 + rng() % 40;
      std::string span = doc.substr(pos, len);
      doc.insert(rng() % doc.size(), span);
      break;
    }
    default:  // replace a byte with a random one
      doc[pos] = static_cast<char>(rng());
      break;
  }
  return doc;
}

std::string ValidJson() {
  // The YAML document above, as JSON (via the YAML converter itself).
  auto docs = api::ParseYamlDocuments(kValidYaml);
  EXPECT_TRUE(docs.ok());
  return (*docs)[0].json();
}

TEST(LoaderFuzzTest, ValidDocumentsLoad) {
  for (bool is_json : {false, true}) {
    api::ObjectSet set;
    LoadStats stats;
    absl::Status st = LoadText(is_json ? ValidJson() : std::string(kValidYaml), is_json, &set, &stats);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(set.nodes.size(), 1u);
    EXPECT_EQ(set.pods.size(), 1u);
  }
}

TEST(LoaderFuzzTest, RandomMutationsOfValidDocuments) {
  std::mt19937_64 rng(1234567);
  const std::string bases[] = {kValidYaml, ValidJson()};
  int errors = 0, total = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string doc = bases[iter % 2];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) doc = Mutate(std::move(doc), rng);
    const bool is_json = iter % 2 == 1;
    api::ObjectSet set;
    LoadStats stats;
    absl::Status st = LoadText(doc, is_json, &set, &stats);
    ++total;
    if (st.ok()) continue;
    ++errors;
    std::string msg(st.message());
    ASSERT_THAT(msg, StartsWith(is_json ? "in.json" : "in.yaml")) << "iteration " << iter << "\n" << doc;
    // A decode error (not syntax) must name the object kind and a position.
    if (msg.find(": Pod ") != std::string::npos || msg.find(": Node ") != std::string::npos) {
      EXPECT_THAT(msg, testing::MatchesRegex("in\\.(json|yaml):[0-9]+:[0-9]+: .*")) << "iteration " << iter << "\n" << doc;
    }
  }
  // Most mutations break something; make sure the test exercised errors.
  EXPECT_GT(errors, total / 4);
}

}  // namespace
}  // namespace gantry::sim
