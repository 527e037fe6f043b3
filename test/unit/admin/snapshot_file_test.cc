// The binary snapshot format (src/sim/snapshot_file.h): round trips between
// YAML, JSON and .pb keep every object and give the same placements;
// the YAML emitter's output reads back as the same JSON; corrupt, truncated
// and foreign .pb input fails with a clear error and never crashes.
#include "src/sim/snapshot_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "plugins/registry/registry.h"
#include "src/api/yaml.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"

namespace gantry::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path TempPath(const std::string& name) {
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() / ("gantry-snapshot-test-" + std::to_string(::getpid()) +
                                              "-" + std::to_string(counter++));
  fs::create_directories(dir);
  return dir / name;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A small cluster with every family of kinds: core, DRA and a gang.
constexpr std::string_view kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {rack: r1, "example.com/on": "yes"}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {rack: r2}}
spec: {taints: [{key: dedicated, value: "true", effect: NoSchedule}]}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: H100}, index: {int: 0}}
    capacity: {memory: {value: 80Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com, count: 1}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: gang, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: gpu-pod, namespace: ml, annotations: {note: "multi\nline: #x"}}
  spec:
    schedulerName: gantry-scheduler
    containers: [{name: c, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
    resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
- apiVersion: v1
  kind: Pod
  metadata: {name: w0, namespace: ml}
  spec:
    schedulerName: gantry-scheduler
    schedulingGroup: {podGroupName: gang}
    containers: [{name: c, resources: {requests: {cpu: "2"}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: w1, namespace: ml}
  spec:
    schedulerName: gantry-scheduler
    schedulingGroup: {podGroupName: gang}
    containers: [{name: c, resources: {requests: {cpu: "2"}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: tolerant, namespace: default}
  spec:
    schedulerName: gantry-scheduler
    tolerations: [{key: dedicated, operator: Exists}]
    containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: skipped}
)";

SimulationResult Simulate(const api::ObjectSet& objects) {
  framework::Registry registry;
  EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  absl::StatusOr<config::Configuration> cfg = config::DefaultConfig(registry);
  EXPECT_TRUE(cfg.ok()) << cfg.status();
  FakeClock clock(1'700'000'000'000'000);
  state::ClusterState cluster(clock);
  InMemoryWriter writer;
  auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 7, 0);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return RunSimulation(objects, *bundle->scheduler, writer, clock, 7);
}

TEST(SnapshotFileTest, RoundTripThroughEveryFormatKeepsObjectsAndPlacements) {
  fs::path yaml_in = TempPath("in.yaml");
  std::ofstream(yaml_in) << kCluster;
  api::ObjectSet original;
  LoadStats stats;
  std::vector<RawObject> raw;
  ASSERT_TRUE(LoadClusterPath(yaml_in.string(), &original, &stats, &raw).ok());
  ASSERT_EQ(raw.size(), 10u);  // the Deployment is skipped
  EXPECT_EQ(raw[0].kind, "Node");
  EXPECT_EQ(raw[6].kind, "Pod");
  EXPECT_EQ(raw[6].api_version, "v1");
  EXPECT_EQ(raw[6].namespace_, "ml");
  EXPECT_EQ(raw[6].name, "gpu-pod");
  const SimulationResult want = Simulate(original);
  ASSERT_EQ(want.placements.size(), 4u) << ResultJson(want).dump();

  snapshot::v1::Header header;
  header.set_generator("test");
  for (const char* name : {"out.pb", "out.yaml", "out.json"}) {
    SCOPED_TRACE(name);
    fs::path out = TempPath(name);
    absl::StatusOr<SnapshotFormat> format = SnapshotFormatForPath(out.string());
    ASSERT_TRUE(format.ok());
    ASSERT_TRUE(WriteSnapshot(out.string(), *format, header, raw).ok());
    api::ObjectSet back;
    LoadStats back_stats;
    std::vector<RawObject> back_raw;
    absl::Status st = LoadClusterPath(out.string(), &back, &back_stats, &back_raw);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(back.TotalObjects(), original.TotalObjects());
    EXPECT_TRUE(back_stats.skipped_kinds.empty());
    ASSERT_EQ(back_raw.size(), raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      EXPECT_EQ(nlohmann::json::parse(back_raw[i].json), nlohmann::json::parse(raw[i].json))
          << raw[i].name;
    }
    const SimulationResult got = Simulate(back);
    EXPECT_EQ(got.placements, want.placements);
    EXPECT_EQ(got.failures, want.failures);
  }
}

TEST(SnapshotFileTest, ProtoKeepsSkippedKindsCountedAndSniffsWithoutExtension) {
  RawObject dep{"apps/v1", "Deployment", "default", "web",
                R"({"apiVersion":"apps/v1","kind":"Deployment"})"};
  RawObject node{
      "v1", "Node", "", "n1",
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"1"}}})"};
  fs::path out = TempPath("snapshot.bin");
  ASSERT_TRUE(WriteSnapshot(out.string(), SnapshotFormat::kProto, {}, {dep, node}).ok());
  const std::string bytes = ReadFile(out);
  EXPECT_TRUE(LooksLikeSnapshotProto(bytes));
  api::ObjectSet set;
  LoadStats stats;
  ASSERT_TRUE(LoadClusterPath(out.string(), &set, &stats).ok());
  EXPECT_EQ(set.nodes.size(), 1u);
  EXPECT_EQ(stats.skipped_kinds.at("apps/v1 Deployment"), 1);
}

TEST(SnapshotFileTest, ManyObjectsSpanChunks) {
  std::vector<RawObject> raw;
  for (int i = 0; i < kObjectsPerChunk * 2 + 3; ++i) {
    const std::string name = "n" + std::to_string(i);
    raw.push_back(
        RawObject{"v1", "Node", "", name,
                  R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"("}})"});
  }
  auto chunks = EncodeChunks({}, raw);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].header().object_count(), static_cast<int64_t>(raw.size()));
  EXPECT_FALSE(chunks[1].has_header());
  fs::path out = TempPath("many.pb");
  ASSERT_TRUE(WriteSnapshot(out.string(), SnapshotFormat::kProto, {}, raw).ok());
  api::ObjectSet set;
  LoadStats stats;
  ASSERT_TRUE(LoadClusterPath(out.string(), &set, &stats).ok());
  EXPECT_EQ(set.nodes.size(), raw.size());
}

TEST(SnapshotFileTest, MakeRawObjectDropsManagedFieldsAndFillsTypeMeta) {
  auto raw = MakeRawObject(
      "x", R"({"metadata":{"name":"p","namespace":"ns","managedFields":[{"a":1}]}})", "v1", "Pod");
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(raw->json,
            R"({"metadata":{"name":"p","namespace":"ns"},"apiVersion":"v1","kind":"Pod"})");
  EXPECT_EQ(raw->namespace_, "ns");
  EXPECT_THAT(std::string(MakeRawObject("x", "[1]").status().message()),
              HasSubstr("expected a JSON object"));
  EXPECT_THAT(std::string(MakeRawObject("x", "{").status().message()), HasSubstr("invalid JSON"));
  EXPECT_THAT(std::string(MakeRawObject("x", "{}").status().message()), HasSubstr("without kind"));
}

// YAML export: what the emitter writes reads back (through Gantry's YAML
// reader) as exactly the JSON it was given, including strings that look like
// other types.
TEST(SnapshotFileTest, JsonToYamlRoundTrips) {
  const std::vector<std::string> cases = {
      R"({"a":"yes","b":"true","c":"1.5","d":"","e":"null","f":"~","g":"x: y","h":"- z","i":"#c","j":"line\nbreak"})",
      R"({"n":1,"f":2.5,"t":true,"z":null,"big":18446744073709551615,"neg":-3})",
      R"({"list":[1,"two",{"k":"v","w":[]},[3,[4]],{}],"empty":{},"nested":{"deep":{"deeper":["x"]}}})",
      R"({"weird key":"v","k:colon":1,"example.com/label":"ok","0lead":"0x10","unicode":"héllo ✓"})",
      R"([{"a":1},{"b":[{"c":2}]}])",
  };
  for (const std::string& json : cases) {
    SCOPED_TRACE(json);
    absl::StatusOr<std::string> yaml = JsonToYaml(json);
    ASSERT_TRUE(yaml.ok());
    auto docs = api::ParseYamlDocuments(*yaml);
    ASSERT_TRUE(docs.ok()) << docs.status() << "\n" << *yaml;
    ASSERT_EQ(docs->size(), 1u);
    EXPECT_EQ(nlohmann::json::parse((*docs)[0].json()), nlohmann::json::parse(json)) << *yaml;
  }
  EXPECT_EQ(*JsonToYaml(R"({"metadata":{"name":"n1"},"items":["a"]})"),
            "metadata:\n  name: n1\nitems:\n- a\n");
}

TEST(SnapshotFileTest, BadProtoInputFailsCleanly) {
  auto load = [](std::string_view bytes) {
    api::ObjectSet set;
    LoadStats stats;
    return LoadClusterProto("bad.pb", bytes, &set, &stats);
  };
  snapshot::v1::Header header;
  RawObject node{"v1", "Node", "", "n1",
                 R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}})"};
  fs::path good_path = TempPath("good.pb");
  ASSERT_TRUE(WriteSnapshot(good_path.string(), SnapshotFormat::kProto, header, {node}).ok());
  const std::string good = ReadFile(good_path);
  ASSERT_TRUE(load(good).ok());

  struct Case {
    std::string name;
    std::string bytes;
    std::string want;
  };
  std::vector<Case> cases = {
      {"empty", "", "empty file"},
      {"truncated", good.substr(0, good.size() - 3), "exceeds"},
      {"length only", std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11),
       "truncated length prefix"},
      {"text", "apiVersion: v1\n", "exceeds"},
      {"garbage chunk", std::string("\x03\xff\xff\xff", 4), "not a valid snapshot chunk"},
  };
  // A newer format version.
  {
    snapshot::v1::Chunk c;
    c.mutable_header()->set_format_version(2);
    std::string b = c.SerializeAsString();
    cases.push_back({"version 2", std::string(1, static_cast<char>(b.size())) + b,
                     "format version 2 is not supported"});
  }
  // No header in the first chunk.
  {
    snapshot::v1::Chunk c;
    c.add_objects()->set_kind("Node");
    std::string b = c.SerializeAsString();
    cases.push_back({"no header", std::string(1, static_cast<char>(b.size())) + b, "no header"});
  }
  // An object whose JSON is broken, or does not decode.
  for (
      auto [json, want] : std::vector<std::pair<std::string, std::string>>{
          {"{not json", "json: invalid JSON"},
          {"[1]", "expected an object, got array"},
          {R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"four"}}})",
           "object 0: Node n1: status.allocatable.cpu"}}) {
    snapshot::v1::Chunk c;
    c.mutable_header()->set_format_version(1);
    auto* o = c.add_objects();
    o->set_api_version("v1");
    o->set_kind("Node");
    o->set_name("n1");
    o->set_json(json);
    std::string b = c.SerializeAsString();
    std::string framed;
    framed.push_back(static_cast<char>(b.size()));
    cases.push_back({"object " + json, framed + b, want});
  }
  for (const Case& c : cases) {
    absl::Status st = load(c.bytes);
    EXPECT_FALSE(st.ok()) << c.name;
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.want)) << c.name;
    EXPECT_THAT(std::string(st.message()), ::testing::StartsWith("bad.pb")) << c.name;
  }
  // Random corruption of a valid file: an error or a load, never a crash.
  std::mt19937 rng(3);
  google::protobuf::LogHandler* previous =
      google::protobuf::SetLogHandler(nullptr);  // quiet UTF-8 complaints
  for (int i = 0; i < 500; ++i) {
    std::string b = good;
    for (int k = 0; k < 3; ++k) b[rng() % b.size()] = static_cast<char>(rng());
    (void)load(b);
  }
  google::protobuf::SetLogHandler(previous);
}

}  // namespace
}  // namespace gantry::sim
