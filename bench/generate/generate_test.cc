// The generator's snapshots load through the real loader in both formats,
// carry the documented shapes, and are deterministic per seed.
#include "bench/generate/generate.h"

#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/api/yaml.h"
#include "src/sim/loader.h"
#include "src/sim/report.h"

namespace gantry::bench {
namespace {

using ::testing::HasSubstr;

std::string Perf(const PerfClusterOptions& o, OutputFormat f) {
  std::ostringstream out;
  EXPECT_TRUE(WritePerfCluster(o, f, out).ok());
  return out.str();
}

std::string Ai(const AiClusterOptions& o, OutputFormat f) {
  std::ostringstream out;
  absl::Status st = WriteAiCluster(o, f, out);
  EXPECT_TRUE(st.ok()) << st;
  return out.str();
}

struct Loaded {
  api::ObjectSet set;
  sim::LoadStats stats;
};

Loaded Load(const std::string& text, OutputFormat f) {
  Loaded l;
  absl::Status st = sim::LoadClusterText(f == OutputFormat::kJson ? "gen.json" : "gen.yaml", text,
                                         f == OutputFormat::kJson, &l.set, &l.stats);
  EXPECT_TRUE(st.ok()) << st;
  return l;
}

// Every generated object as JSON (YAML documents converted), for comparing formats.
std::vector<nlohmann::json> Objects(const std::string& text, OutputFormat f) {
  std::vector<nlohmann::json> out;
  if (f == OutputFormat::kJson) {
    nlohmann::json list = nlohmann::json::parse(text);
    for (auto& item : list["items"]) out.push_back(item);
  } else {
    auto docs = api::ParseYamlDocuments(text);
    EXPECT_TRUE(docs.ok()) << docs.status();
    for (const auto& d : *docs) {
      if (!d.empty()) out.push_back(nlohmann::json::parse(d.json()));
    }
  }
  return out;
}

TEST(GenerateTest, FormatForPath) {
  EXPECT_EQ(FormatForPath("a/b.json"), OutputFormat::kJson);
  EXPECT_EQ(FormatForPath("a/b.yaml"), OutputFormat::kYaml);
  EXPECT_EQ(FormatForPath("a/b.yml"), OutputFormat::kYaml);
  EXPECT_EQ(FormatForPath("-"), OutputFormat::kYaml);
}

TEST(GenerateTest, PerfClusterLoadsInBothFormats) {
  PerfClusterOptions o;
  o.nodes = 7;
  o.pods = 20;
  o.bound_pods = 9;
  for (OutputFormat f : {OutputFormat::kJson, OutputFormat::kYaml}) {
    Loaded l = Load(Perf(o, f), f);
    ASSERT_EQ(l.set.nodes.size(), 7u);
    ASSERT_EQ(l.set.pods.size(), 29u);
    const api::ResourceNames& rn = api::ResourceNames::Get();
    const api::Node& n = l.set.nodes[3];
    EXPECT_EQ(n.meta.name, "node-3");
    EXPECT_EQ(n.allocatable.Get(rn.cpu), 4000);
    EXPECT_EQ(n.allocatable.Get(rn.memory), 32LL << 30);
    EXPECT_EQ(n.allocatable.Get(rn.pods), 110);
    EXPECT_EQ(api::FindLabel(n.meta.labels, "topology.kubernetes.io/zone")->view(), "zone-0");
    // Bound pods come first, round-robin over the nodes.
    EXPECT_EQ(l.set.pods[0].node_name.view(), "node-0");
    EXPECT_EQ(l.set.pods[8].node_name.view(), "node-1");
    const api::Pod& pending = l.set.pods.back();
    EXPECT_EQ(pending.meta.name, "pod-19");
    EXPECT_FALSE(pending.IsBound());
    EXPECT_EQ(pending.requests.Get(rn.cpu), 100);
    EXPECT_EQ(pending.requests.Get(rn.memory), 500LL << 20);
    sim::Inventory inv = sim::TakeInventory(l.set, {"gantry-scheduler"});
    EXPECT_EQ(inv.pods_pending, 20);
    EXPECT_EQ(inv.pods_bound, 9);
  }
}

TEST(GenerateTest, YamlAndJsonCarryTheSameObjects) {
  PerfClusterOptions perf;
  perf.nodes = 3;
  perf.pods = 4;
  perf.bound_pods = 2;
  EXPECT_EQ(Objects(Perf(perf, OutputFormat::kJson), OutputFormat::kJson),
            Objects(Perf(perf, OutputFormat::kYaml), OutputFormat::kYaml));
  AiClusterOptions ai;
  EXPECT_EQ(Objects(Ai(ai, OutputFormat::kJson), OutputFormat::kJson),
            Objects(Ai(ai, OutputFormat::kYaml), OutputFormat::kYaml));
}

TEST(GenerateTest, SchedulerNameAndNamespace) {
  PerfClusterOptions o;
  o.nodes = 1;
  o.pods = 1;
  o.scheduler_name = "other-scheduler";
  o.pod_namespace = "perf";
  Loaded l = Load(Perf(o, OutputFormat::kYaml), OutputFormat::kYaml);
  ASSERT_EQ(l.set.pods.size(), 1u);
  EXPECT_EQ(l.set.pods[0].scheduler_name.view(), "other-scheduler");
  EXPECT_EQ(l.set.pods[0].meta.Key(), "perf/pod-0");
}

TEST(GenerateTest, AiClusterShape) {
  AiClusterOptions o;  // 2 zones x 2 racks x 2 nodes, 2 gangs of 2, 4 inference pods
  const std::string json = Ai(o, OutputFormat::kJson);
  std::vector<nlohmann::json> objs = Objects(json, OutputFormat::kJson);
  std::map<std::string, int> kinds;
  for (const auto& obj : objs) kinds[obj["apiVersion"].get<std::string>() + " " + obj["kind"].get<std::string>()]++;
  EXPECT_EQ(kinds["v1 Node"], 8);
  EXPECT_EQ(kinds["resource.k8s.io/v1 ResourceSlice"], 8);
  EXPECT_EQ(kinds["resource.k8s.io/v1 DeviceClass"], 2);
  EXPECT_EQ(kinds["resource.k8s.io/v1 ResourceClaimTemplate"], 3);
  EXPECT_EQ(kinds["scheduling.k8s.io/v1beta1 PodGroup"], 2);
  EXPECT_EQ(kinds["v1 Pod"], 8);

  for (const auto& obj : objs) {
    const std::string kind = obj["kind"];
    if (kind == "ResourceSlice") {
      const auto& spec = obj["spec"];
      EXPECT_EQ(spec["driver"], "gpu.example.com");
      EXPECT_EQ(spec["pool"]["name"], spec["nodeName"]);
      EXPECT_EQ(spec["pool"]["resourceSliceCount"], 1);
      ASSERT_EQ(spec["devices"].size(), 10u);
      const auto& gpu5 = spec["devices"][5];
      EXPECT_EQ(gpu5["name"], "gpu-5");
      EXPECT_EQ(gpu5["attributes"]["numaNode"]["int"], 1);
      EXPECT_EQ(gpu5["attributes"]["resource.kubernetes.io/pcieRoot"]["string"], "pci0000:02");
      EXPECT_TRUE(gpu5["attributes"]["model"].contains("string"));
      EXPECT_TRUE(gpu5["capacity"]["memory"].contains("value"));
      const auto& nic1 = spec["devices"][9];
      EXPECT_EQ(nic1["name"], "nic-1");
      EXPECT_EQ(nic1["attributes"]["type"]["string"], "nic");
      EXPECT_EQ(nic1["attributes"]["resource.kubernetes.io/pcieRoot"]["string"], "pci0000:02");
    } else if (kind == "PodGroup") {
      EXPECT_EQ(obj["spec"]["schedulingPolicy"]["gang"]["minCount"], 2);
    } else if (kind == "ResourceClaimTemplate") {
      const auto& req = obj["spec"]["spec"]["devices"]["requests"][0];
      EXPECT_EQ(req["exactly"]["allocationMode"], "ExactCount");
      EXPECT_THAT(req["exactly"]["selectors"][0]["cel"]["expression"].get<std::string>(), HasSubstr("device."));
    } else if (kind == "DeviceClass") {
      EXPECT_THAT(obj["spec"]["selectors"][0]["cel"]["expression"].get<std::string>(),
                  HasSubstr("device.driver == \"gpu.example.com\""));
    }
  }

  Loaded l = Load(json, OutputFormat::kJson);
  EXPECT_EQ(l.set.nodes.size(), 8u);
  ASSERT_EQ(l.set.pods.size(), 8u);
  const api::Pod& worker = l.set.pods[0];
  EXPECT_EQ(worker.meta.Key(), "ml/train-0-worker-0");
  EXPECT_EQ(worker.pod_group_name.view(), "train-0");
  ASSERT_EQ(worker.resource_claims.size(), 1u);
  EXPECT_EQ(worker.resource_claims[0].resource_claim_template_name, "train-0-gpus");
  EXPECT_EQ(worker.priority, 1000);
  EXPECT_EQ(api::FindLabel(l.set.nodes[0].meta.labels, "example.com/rack")->view(), "rack-0-0");
  // Every object is either decoded or counted as skipped.
  int64_t skipped = 0;
  for (const auto& [k, n] : l.stats.skipped_kinds) skipped += n;
  EXPECT_EQ(l.stats.objects + skipped, static_cast<int64_t>(objs.size()));
  // The YAML form loads too.
  Loaded y = Load(Ai(o, OutputFormat::kYaml), OutputFormat::kYaml);
  EXPECT_EQ(y.set.pods.size(), 8u);
}

TEST(GenerateTest, DeterministicPerSeed) {
  AiClusterOptions a;
  a.zones = 3;
  a.racks_per_zone = 4;
  a.gpu_models = {"H100", "A100", "L40S"};
  a.inference_pods = 20;
  AiClusterOptions b = a;
  b.seed = 2;
  EXPECT_EQ(Ai(a, OutputFormat::kJson), Ai(a, OutputFormat::kJson));
  EXPECT_NE(Ai(a, OutputFormat::kJson), Ai(b, OutputFormat::kJson));
  PerfClusterOptions p;
  EXPECT_EQ(Perf(p, OutputFormat::kYaml), Perf(p, OutputFormat::kYaml));
}

TEST(GenerateTest, InvalidOptions) {
  std::ostringstream out;
  PerfClusterOptions p;
  p.nodes = 0;
  p.bound_pods = 1;
  EXPECT_FALSE(WritePerfCluster(p, OutputFormat::kJson, out).ok());
  p = PerfClusterOptions();
  p.zones = 0;
  EXPECT_FALSE(WritePerfCluster(p, OutputFormat::kJson, out).ok());
  AiClusterOptions a;
  a.gpus_per_worker = 33;
  EXPECT_FALSE(WriteAiCluster(a, OutputFormat::kJson, out).ok());
  a = AiClusterOptions();
  a.gpus_per_node = 127;
  EXPECT_FALSE(WriteAiCluster(a, OutputFormat::kJson, out).ok());
  a = AiClusterOptions();
  a.gpu_models.clear();
  EXPECT_FALSE(WriteAiCluster(a, OutputFormat::kJson, out).ok());
}

TEST(GenerateTest, EmptyClusterIsAValidList) {
  PerfClusterOptions p;
  p.nodes = 0;
  p.pods = 0;
  for (OutputFormat f : {OutputFormat::kJson, OutputFormat::kYaml}) {
    Loaded l = Load(Perf(p, f), f);
    EXPECT_EQ(l.set.TotalObjects(), 0u);
  }
}

}  // namespace
}  // namespace gantry::bench
