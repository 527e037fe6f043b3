// What a recording keeps (src/admin/redact.h): `RecordCluster` against a
// fake API server, written in every snapshot format, never carries
// container env values, command lines or annotations scheduling ignores,
// never lists Secrets or ConfigMaps, and schedules exactly as the cluster
// it was taken from.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "plugins/registry/registry.h"
#include "src/admin/recorder.h"
#include "src/admin/redact.h"
#include "src/client/http.h"
#include "src/config/config.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"
#include "test/unit/client/test_server.h"

namespace gantry::admin {
namespace {

namespace fs = std::filesystem;

// Strings that must not survive recording.
constexpr const char* kSecrets[] = {
    "ghp_s3cr3tT0kenValue0123456789",  // env[].value
    "db-credentials",                  // envFrom secretRef name
    "/opt/train/run.sh",               // command
    "--password=hunter2",              // args
    "healthcheck-binary",              // probe exec command
    "example.com/owner-email",         // an annotation key nothing reads
    "alice@example.com",               // its value
    "kubectl.kubernetes.io/last-applied-configuration",
    "template-note",  // an annotation on a claim template's metadata
};

// Two nodes (one tainted, one with a host port taken), a bound pod, and
// pending pods whose containers carry env, command lines and probes.
constexpr char kCluster[] = R"(apiVersion: v1
kind: Namespace
metadata: {name: ml, labels: {team: ml}, annotations: {example.com/owner-email: alice@example.com}}
---
apiVersion: v1
kind: Node
metadata:
  name: n0
  annotations: {example.com/owner-email: alice@example.com}
spec:
  taints: [{key: dedicated, value: "true", effect: NoSchedule}]
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  images: [{names: ["registry.example.com/train:1"], sizeBytes: 900000000}]
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  images: [{names: ["registry.example.com/train:1"], sizeBytes: 900000000}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: none, namespace: ml}
spec:
  metadata: {annotations: {template-note: "x"}}
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com, count: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ml, uid: u-web}
spec:
  nodeName: n1
  containers:
  - name: c
    image: nginx
    command: [/opt/train/run.sh]
    ports: [{containerPort: 80, hostPort: 8080}]
    resources: {requests: {cpu: "2"}}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: ml
  uid: u-train
  annotations:
    example.com/owner-email: alice@example.com
    gantry.dev/run-duration-seconds: "30"
    kubectl.kubernetes.io/last-applied-configuration: '{"spec":{"containers":[{"env":[{"value":"ghp_s3cr3tT0kenValue0123456789"}]}]}}'
spec:
  schedulerName: gantry-scheduler
  initContainers:
  - name: sidecar
    image: registry.example.com/proxy:2
    restartPolicy: Always
    args: [--password=hunter2]
    env: [{name: TOKEN, value: ghp_s3cr3tT0kenValue0123456789}]
    resources: {requests: {cpu: "1"}}
  containers:
  - name: main
    image: registry.example.com/train:1
    command: [/opt/train/run.sh]
    args: [--password=hunter2, --epochs=3]
    env:
    - {name: TOKEN, value: ghp_s3cr3tT0kenValue0123456789}
    - {name: FROM_SECRET, valueFrom: {secretKeyRef: {name: db-credentials, key: password}}}
    envFrom: [{secretRef: {name: db-credentials}}]
    livenessProbe: {exec: {command: [healthcheck-binary, --deep]}}
    ports: [{containerPort: 80, hostPort: 8080}]
    resources: {requests: {cpu: "4", memory: 8Gi}, limits: {cpu: "4", memory: 8Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: ml, uid: u-big, annotations: {example.com/owner-email: alice@example.com}}
spec:
  schedulerName: gantry-scheduler
  containers:
  - name: main
    image: registry.example.com/train:1
    env: [{name: TOKEN, value: ghp_s3cr3tT0kenValue0123456789}]
    resources: {requests: {cpu: "6"}}
  initContainers:
  - name: init
    command: [/opt/train/run.sh]
    resources: {requests: {cpu: "7"}}
)";

// Serves discovery and one LIST per kind from `objects`; counts requests
// for Secrets and ConfigMaps.
class FakeApiServer {
 public:
  explicit FakeApiServer(const std::vector<sim::RawObject>& objects) {
    std::map<std::string, nlohmann::json> lists;
    auto path_of = [](const sim::RawObject& o) -> std::string {
      if (o.kind == "Namespace") return "/api/v1/namespaces";
      if (o.kind == "Node") return "/api/v1/nodes";
      if (o.kind == "Pod") return "/api/v1/pods";
      if (o.kind == "ResourceClaimTemplate")
        return "/apis/resource.k8s.io/v1/resourceclaimtemplates";
      ADD_FAILURE() << "no list path for " << o.kind;
      return "";
    };
    for (const sim::RawObject& o : objects) {
      nlohmann::json& list = lists[path_of(o)];
      if (list.is_null())
        list = nlohmann::json::parse(R"({"kind":"List","metadata":{},"items":[]})");
      list["items"].push_back(nlohmann::json::parse(o.json));
    }
    lists["/api"] = nlohmann::json::parse(R"({"versions":["v1"]})");
    lists["/apis"] = nlohmann::json::parse(
        R"({"groups":[{"name":"resource.k8s.io","versions":[{"groupVersion":"resource.k8s.io/v1"}]}]})");
    lists["/api/v1"] = nlohmann::json::parse(
        R"({"resources":[{"name":"namespaces"},{"name":"nodes"},{"name":"pods"},)"
        R"({"name":"secrets"},{"name":"configmaps"}]})");
    lists["/apis/resource.k8s.io/v1"] =
        nlohmann::json::parse(R"({"resources":[{"name":"resourceclaimtemplates"}]})");
    for (const char* kind : {"secrets", "configmaps"}) {
      lists[std::string("/api/v1/") + kind] = nlohmann::json::parse(
          R"({"kind":"List","metadata":{},"items":[{"apiVersion":"v1","kind":"Secret",)"
          R"("metadata":{"name":"s","namespace":"ml"},"data":{"k":"ZGItY3JlZGVudGlhbHM="}}]})");
    }
    auto srv = std::make_unique<httplib::Server>();
    srv->Get(".*", [this, lists](const httplib::Request& req, httplib::Response& res) {
      if (req.path == "/api/v1/secrets" || req.path == "/api/v1/configmaps") ++forbidden_lists;
      auto it = lists.find(req.path);
      if (it == lists.end()) {
        res.status = 404;
        res.set_content(R"({"kind":"Status","reason":"NotFound"})", "application/json");
        return;
      }
      res.set_content(it->second.dump(), "application/json");
    });
    server_ = std::make_unique<client::testing::Running<httplib::Server>>(std::move(srv));
  }
  int port() const { return server_->port(); }
  std::atomic<int> forbidden_lists{0};

 private:
  std::unique_ptr<client::testing::Running<httplib::Server>> server_;
};

sim::SimulationResult Simulate(const api::ObjectSet& objects) {
  framework::Registry registry;
  EXPECT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  absl::StatusOr<config::Configuration> cfg = config::DefaultConfig(registry);
  EXPECT_TRUE(cfg.ok()) << cfg.status();
  FakeClock clock(1'700'000'000'000'000);
  state::ClusterState cluster(clock);
  sim::InMemoryWriter writer;
  auto bundle = scheduler::BuildScheduler(*cfg, registry, cluster, writer, clock, 7, 0);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return sim::RunSimulation(objects, *bundle->scheduler, writer, clock, 7);
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(RecordRedactionTest, SnapshotsKeepOnlyWhatSchedulingReads) {
  api::ObjectSet original;
  sim::LoadStats stats;
  std::vector<sim::RawObject> raw;
  ASSERT_TRUE(sim::LoadClusterText("cluster.yaml", kCluster, false, &original, &stats, &raw).ok());
  // The fixture itself carries every secret string (so the checks below can fail).
  std::string unredacted;
  for (const sim::RawObject& o : raw) unredacted += o.json;
  for (const char* s : kSecrets) ASSERT_NE(unredacted.find(s), std::string::npos) << s;
  const sim::SimulationResult want = Simulate(original);
  // train takes n2 (n0 is tainted, n1's host port is taken); too-big (7 cpu
  // by its init container) fits only once train finished after its
  // gantry.dev/run-duration-seconds.
  ASSERT_EQ(want.placements.size(), 2u) << sim::ResultJson(want).dump();
  EXPECT_EQ(want.placements.at("ml/train"), "n2");
  EXPECT_EQ(want.placements.at("ml/too-big"), "n2");
  EXPECT_EQ(want.virtual_seconds, 30.0);

  FakeApiServer api_server(raw);
  client::RestConfig rest;
  rest.server = "http://127.0.0.1:" + std::to_string(api_server.port());
  auto http = client::HttpClient::Create(rest, client::ClientOptions());
  ASSERT_TRUE(http.ok()) << http.status();
  absl::StatusOr<Recording> rec = RecordCluster(**http, 500);
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(rec->objects.size(), raw.size());
  EXPECT_EQ(api_server.forbidden_lists.load(), 0) << "Secrets or ConfigMaps were listed";

  const fs::path dir =
      fs::temp_directory_path() / ("gantry-redact-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* name : {"out.pb", "out.yaml", "out.json"}) {
    SCOPED_TRACE(name);
    const fs::path out = dir / name;
    absl::StatusOr<sim::SnapshotFormat> format = sim::SnapshotFormatForPath(out.string());
    ASSERT_TRUE(format.ok());
    ASSERT_TRUE(
        sim::WriteSnapshot(out.string(), *format, RecordingHeader(*rec, "test"), rec->objects)
            .ok());
    const std::string bytes = ReadAll(out);
    for (const char* s : kSecrets) EXPECT_EQ(bytes.find(s), std::string::npos) << s;
    // What scheduling reads is still there.
    for (const char* kept : {"gantry.dev/run-duration-seconds", "registry.example.com/train:1",
                             "hostPort", "restartPolicy", "dedicated"}) {
      EXPECT_NE(bytes.find(kept), std::string::npos) << kept;
    }
    api::ObjectSet back;
    sim::LoadStats back_stats;
    absl::Status st = sim::LoadClusterPath(out.string(), &back, &back_stats);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(back.TotalObjects(), original.TotalObjects());
    const sim::SimulationResult got = Simulate(back);
    EXPECT_EQ(got.placements, want.placements);
    EXPECT_EQ(got.failures, want.failures);
    EXPECT_EQ(got.virtual_seconds, want.virtual_seconds);
  }
  fs::remove_all(dir);
}

TEST(RecordRedactionTest, RedactForSnapshot) {
  struct Case {
    std::string name;
    sim::RawObject in;
    bool ok;
    std::string want_json;  // when ok
  };
  const std::vector<Case> cases = {
      {"secret refused",
       {"v1", "Secret", "ml", "s", R"({"apiVersion":"v1","kind":"Secret","data":{"k":"dg=="}})"},
       false,
       ""},
      {"configmap refused", {"v1", "ConfigMap", "ml", "c", R"({"data":{"k":"v"}})"}, false, ""},
      {"not an object", {"v1", "Pod", "ml", "p", "[1]"}, false, ""},
      {"annotations: only read keys kept",
       {"v1", "Node", "", "n",
        R"({"metadata":{"name":"n","annotations":{"a":"1","gantry.dev/binding-outcome":"failure"}}})"},
       true,
       R"({"metadata":{"name":"n","annotations":{"gantry.dev/binding-outcome":"failure"}}})"},
      {"annotations: none left",
       {"v1", "Node", "", "n", R"({"metadata":{"name":"n","annotations":{"a":"1"}}})"},
       true,
       R"({"metadata":{"name":"n"}})"},
      {"containers: only read fields kept",
       {"v1", "Pod", "ml", "p",
        R"({"spec":{"containers":[{"name":"c","env":[{"name":"A","value":"x"}],"command":["a"],"args":["b"],"image":"i","ports":[{"hostPort":1}]}],"ephemeralContainers":[{"name":"d","env":[]}]}})"},
       true,
       R"({"spec":{"containers":[{"name":"c","image":"i","ports":[{"hostPort":1}]}],"ephemeralContainers":[{"name":"d"}]}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<sim::RawObject> got = RedactForSnapshot(c.in);
    EXPECT_EQ(got.ok(), c.ok) << got.status();
    if (!got.ok()) {
      EXPECT_NE(std::string(got.status().message()).find(c.in.name), std::string::npos);
      continue;
    }
    EXPECT_EQ(nlohmann::json::parse(got->json), nlohmann::json::parse(c.want_json));
  }
}

}  // namespace
}  // namespace gantry::admin
