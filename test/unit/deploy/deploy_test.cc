// Checks the manifests in deploy/: every file parses, kustomization lists
// them all, the RBAC grants exactly what the code uses (kApiUse below: keep
// it in sync with src/client), and the Deployment/ConfigMap are wired the
// way docs/operations.md describes.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/registry/registry.h"
#include "src/config/config.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

const fs::path kDeploy = "deploy";  // tests run from the source root

struct Use {
  std::string group;
  std::string resource;
  std::string verb;
  std::string name = "";  // resourceNames restriction expected ("" = none)
  bool operator<(const Use& o) const {
    return std::tie(group, resource, verb, name) < std::tie(o.group, o.resource, o.verb, o.name);
  }
};

// What Gantry does against the API server (src/client): reflectors list and
// watch (get for single reads), writes as noted.
const std::vector<Use> kClusterUse = {
    {"", "nodes", "get"},
    {"", "nodes", "list"},
    {"", "nodes", "watch"},
    {"", "namespaces", "get"},
    {"", "namespaces", "list"},
    {"", "namespaces", "watch"},
    {"", "pods", "get"},
    {"", "pods", "list"},
    {"", "pods", "watch"},
    {"", "pods", "delete"},          // preemption (api_writer.cc: DELETE with UID precondition)
    {"", "pods/binding", "create"},  // POST .../pods/{name}/binding
    {"", "pods/status", "patch"},    // PodScheduled, nominatedNodeName, DisruptionTarget
    {"", "pods/status", "update"},
    {"events.k8s.io", "events", "create"},
    {"events.k8s.io", "events", "patch"},  // series folding
    {"policy", "poddisruptionbudgets", "get"},
    {"policy", "poddisruptionbudgets", "list"},
    {"policy", "poddisruptionbudgets", "watch"},
    {"scheduling.k8s.io", "priorityclasses", "get"},
    {"scheduling.k8s.io", "priorityclasses", "list"},
    {"scheduling.k8s.io", "priorityclasses", "watch"},
    {"resource.k8s.io", "resourceslices", "get"},
    {"resource.k8s.io", "resourceslices", "list"},
    {"resource.k8s.io", "resourceslices", "watch"},
    {"resource.k8s.io", "deviceclasses", "get"},
    {"resource.k8s.io", "deviceclasses", "list"},
    {"resource.k8s.io", "deviceclasses", "watch"},
    {"resource.k8s.io", "resourceclaimtemplates", "get"},
    {"resource.k8s.io", "resourceclaimtemplates", "list"},
    {"resource.k8s.io", "resourceclaimtemplates", "watch"},
    {"resource.k8s.io", "devicetaintrules", "get"},
    {"resource.k8s.io", "devicetaintrules", "list"},
    {"resource.k8s.io", "devicetaintrules", "watch"},
    {"resource.k8s.io", "resourceclaims", "get"},
    {"resource.k8s.io", "resourceclaims", "list"},
    {"resource.k8s.io", "resourceclaims", "watch"},
    {"resource.k8s.io", "resourceclaims", "patch"},  // allocation finalizer (merge patch)
    {"resource.k8s.io", "resourceclaims",
     "create"},  // claim for extended resources backed by DRA (PreBind)
    {"resource.k8s.io", "resourceclaims", "delete"},  // ... deleted again when the attempt fails
    {"resource.k8s.io", "resourceclaims/status", "patch"},  // allocation, reservedFor, deallocation
    {"resource.k8s.io", "resourceclaims/status", "update"},
    // DRAResourceClaimGranularStatusAuthorization (beta, on since v1.36): writing
    // status.allocation or status.reservedFor also needs the synthetic subresource
    // resourceclaims/binding, with the verb of the status write.
    {"resource.k8s.io", "resourceclaims/binding", "patch"},
    {"resource.k8s.io", "resourceclaims/binding", "update"},
    {"scheduling.k8s.io", "workloads", "get"},
    {"scheduling.k8s.io", "workloads", "list"},
    {"scheduling.k8s.io", "workloads", "watch"},
    {"scheduling.k8s.io", "podgroups", "get"},
    {"scheduling.k8s.io", "podgroups", "list"},
    {"scheduling.k8s.io", "podgroups", "watch"},
    {"scheduling.k8s.io", "compositepodgroups", "get"},
    {"scheduling.k8s.io", "compositepodgroups", "list"},
    {"scheduling.k8s.io", "compositepodgroups", "watch"},
    {"scheduling.k8s.io", "podgroups/status", "patch"},
    {"scheduling.k8s.io", "podgroups/status", "update"},
    {"scheduling.k8s.io", "compositepodgroups/status",
     "patch"},  // CompositePodGroupInitiallyScheduled
    {"scheduling.k8s.io", "compositepodgroups/status", "update"},
    {"scheduling.x-k8s.io", "podgroups", "get"},
    {"scheduling.x-k8s.io", "podgroups", "list"},
    {"scheduling.x-k8s.io", "podgroups", "watch"},
    {"scheduling.x-k8s.io", "podgroups/status", "patch"},
    {"scheduling.x-k8s.io", "podgroups/status", "update"},
};

// Leader election (client/leader_election.cc): GET, POST when absent, PUT.
const std::vector<Use> kLeaseUse = {
    {"coordination.k8s.io", "leases", "create", ""},
    {"coordination.k8s.io", "leases", "get", "gantry-scheduler"},
    {"coordination.k8s.io", "leases", "update", "gantry-scheduler"},
};

std::vector<YAML::Node> LoadDocs(const fs::path& p) {
  std::vector<YAML::Node> docs;
  for (const YAML::Node& d : YAML::LoadAllFromFile(p.string())) {
    if (d && !d.IsNull()) docs.push_back(d);
  }
  return docs;
}

std::vector<YAML::Node> AllObjects() {
  std::vector<YAML::Node> out;
  for (const auto& e : fs::directory_iterator(kDeploy)) {
    if (e.path().extension() != ".yaml" || e.path().filename() == "kustomization.yaml" ||
        e.path().filename() == "config.yaml") {
      continue;
    }
    for (const YAML::Node& d : LoadDocs(e.path())) out.push_back(d);
  }
  return out;
}

const YAML::Node* Find(const std::vector<YAML::Node>& objs, const std::string& kind, const std::string& name) {
  for (const YAML::Node& o : objs) {
    if (o["kind"].as<std::string>() == kind && o["metadata"]["name"].as<std::string>() == name) return &o;
  }
  return nullptr;
}

// Every (group, resource, verb, resourceName) a role's rules grant.
std::set<Use> Grants(const YAML::Node& role) {
  std::set<Use> out;
  for (const YAML::Node& rule : role["rules"]) {
    std::vector<std::string> names;
    if (rule["resourceNames"]) {
      for (const YAML::Node& n : rule["resourceNames"]) names.push_back(n.as<std::string>());
    } else {
      names.push_back("");
    }
    for (const YAML::Node& g : rule["apiGroups"]) {
      for (const YAML::Node& r : rule["resources"]) {
        for (const YAML::Node& v : rule["verbs"]) {
          for (const std::string& n : names) {
            out.insert({g.as<std::string>(), r.as<std::string>(), v.as<std::string>(), n});
          }
        }
      }
    }
  }
  return out;
}

std::string Describe(const Use& u) {
  return (u.group.empty() ? "core" : u.group) + "/" + u.resource + " " + u.verb + (u.name.empty() ? "" : " [" + u.name + "]");
}

TEST(DeployTest, EveryManifestParsesAndHasKindAndName) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(kDeploy)) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    std::vector<YAML::Node> docs;
    ASSERT_NO_THROW(docs = LoadDocs(e.path())) << e.path();
    ASSERT_FALSE(docs.empty()) << e.path();
    for (const YAML::Node& d : docs) {
      EXPECT_TRUE(d["apiVersion"].IsScalar()) << e.path();
      EXPECT_TRUE(d["kind"].IsScalar()) << e.path();
      if (e.path().filename() != "kustomization.yaml" && e.path().filename() != "config.yaml") {
        EXPECT_TRUE(d["metadata"]["name"].IsScalar()) << e.path();
      }
    }
  }
  EXPECT_GE(files, 6);
}

TEST(DeployTest, KustomizationListsEveryManifest) {
  YAML::Node k = YAML::LoadFile((kDeploy / "kustomization.yaml").string());
  EXPECT_EQ(k["namespace"].as<std::string>(), "kube-system");
  std::set<std::string> listed;
  for (const YAML::Node& r : k["resources"]) {
    listed.insert(r.as<std::string>());
    EXPECT_TRUE(fs::exists(kDeploy / r.as<std::string>())) << r.as<std::string>();
  }
  for (const auto& e : fs::directory_iterator(kDeploy)) {
    std::string f = e.path().filename().string();
    if (e.path().extension() == ".yaml" && f != "kustomization.yaml" && f != "config.yaml") {
      EXPECT_TRUE(listed.count(f)) << f << " is not in kustomization.yaml";
    }
  }
  // The configuration becomes the ConfigMap the Deployment mounts.
  ASSERT_EQ(k["configMapGenerator"].size(), 1u);
  EXPECT_EQ(k["configMapGenerator"][0]["name"].as<std::string>(), "gantry-scheduler-config");
  EXPECT_EQ(k["configMapGenerator"][0]["files"][0].as<std::string>(), "config.yaml");
}

TEST(DeployTest, ClusterRoleGrantsExactlyWhatTheCodeUses) {
  std::vector<YAML::Node> objs = AllObjects();
  const YAML::Node* role = Find(objs, "ClusterRole", "gantry-scheduler");
  ASSERT_NE(role, nullptr);
  std::set<Use> granted = Grants(*role);
  std::set<Use> needed(kClusterUse.begin(), kClusterUse.end());
  for (const Use& u : needed) EXPECT_TRUE(granted.count(u)) << "missing grant: " << Describe(u);
  for (const Use& g : granted) EXPECT_TRUE(needed.count(g)) << "grant not used by the code: " << Describe(g);
  for (const Use& g : granted) {
    EXPECT_NE(g.verb, "*");
    EXPECT_NE(g.resource, "*");
    EXPECT_NE(g.resource, "secrets");
  }
}

TEST(DeployTest, LeaseRoleIsNamespacedAndRestrictedByName) {
  std::vector<YAML::Node> objs = AllObjects();
  const YAML::Node* role = Find(objs, "Role", "gantry-scheduler-leader-election");
  ASSERT_NE(role, nullptr);
  EXPECT_EQ((*role)["metadata"]["namespace"].as<std::string>(), "kube-system");
  std::set<Use> granted = Grants(*role);
  std::set<Use> needed(kLeaseUse.begin(), kLeaseUse.end());
  EXPECT_EQ(granted.size(), needed.size());
  for (const Use& u : needed) EXPECT_TRUE(granted.count(u)) << "missing grant: " << Describe(u);
}

TEST(DeployTest, BindingsPointAtTheRolesAndTheServiceAccount) {
  std::vector<YAML::Node> objs = AllObjects();
  ASSERT_NE(Find(objs, "ServiceAccount", "gantry-scheduler"), nullptr);
  int bindings = 0;
  for (const YAML::Node& o : objs) {
    std::string kind = o["kind"].as<std::string>();
    if (kind != "ClusterRoleBinding" && kind != "RoleBinding") continue;
    ++bindings;
    std::string role_kind = o["roleRef"]["kind"].as<std::string>();
    std::string role_name = o["roleRef"]["name"].as<std::string>();
    EXPECT_NE(Find(objs, role_kind, role_name), nullptr) << role_kind << "/" << role_name;
    ASSERT_EQ(o["subjects"].size(), 1u);
    EXPECT_EQ(o["subjects"][0]["kind"].as<std::string>(), "ServiceAccount");
    EXPECT_EQ(o["subjects"][0]["name"].as<std::string>(), "gantry-scheduler");
    EXPECT_EQ(o["subjects"][0]["namespace"].as<std::string>(), "kube-system");
  }
  EXPECT_EQ(bindings, 2);
}

TEST(DeployTest, ConfigFileIsAValidConfiguration) {
  framework::Registry registry;
  ASSERT_TRUE(plugins::RegisterBuiltinPlugins(registry).ok());
  absl::StatusOr<config::Configuration> cfg = config::LoadConfigFile((kDeploy / "config.yaml").string(), registry);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  ASSERT_EQ(cfg->profiles.size(), 1u);
  EXPECT_EQ(cfg->profiles[0].scheduler_name, "gantry-scheduler");
  EXPECT_TRUE(cfg->leader_election.leader_elect);
  EXPECT_EQ(cfg->leader_election.resource_name, "gantry-scheduler");
  EXPECT_EQ(cfg->leader_election.resource_namespace, "kube-system");
  // The lease the Role allows is the one the configuration uses.
  for (const Use& u : kLeaseUse) {
    if (!u.name.empty()) {
      EXPECT_EQ(u.name, cfg->leader_election.resource_name);
    }
  }
}

TEST(DeployTest, DeploymentIsHardened) {
  std::vector<YAML::Node> objs = AllObjects();
  const YAML::Node* dep = Find(objs, "Deployment", "gantry-scheduler");
  ASSERT_NE(dep, nullptr);
  const YAML::Node spec = (*dep)["spec"];
  EXPECT_EQ(spec["replicas"].as<int>(), 2);
  const YAML::Node pod = spec["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), "gantry-scheduler");
  EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());
  EXPECT_NE(pod["securityContext"]["runAsUser"].as<int>(), 0);
  ASSERT_EQ(pod["containers"].size(), 1u);
  const YAML::Node c = pod["containers"][0];
  EXPECT_TRUE(c["securityContext"]["readOnlyRootFilesystem"].as<bool>());
  EXPECT_FALSE(c["securityContext"]["allowPrivilegeEscalation"].as<bool>());
  EXPECT_EQ(c["securityContext"]["capabilities"]["drop"][0].as<std::string>(), "ALL");
  EXPECT_TRUE(c["resources"]["requests"]["cpu"]);
  EXPECT_TRUE(c["resources"]["requests"]["memory"]);
  EXPECT_TRUE(c["resources"]["limits"]["memory"]);
  for (const char* probe : {"livenessProbe", "readinessProbe"}) {
    ASSERT_TRUE(c[probe]) << probe;
    EXPECT_EQ(c[probe]["httpGet"]["scheme"].as<std::string>(), "HTTPS") << probe;
    EXPECT_EQ(c[probe]["httpGet"]["port"].as<int>(), 10259) << probe;
  }
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
  // --config points into the mounted ConfigMap.
  std::string config_arg;
  for (const YAML::Node& a : c["args"]) {
    std::string s = a.as<std::string>();
    if (s.rfind("--config=", 0) == 0) config_arg = s.substr(9);
  }
  ASSERT_FALSE(config_arg.empty());
  std::string mount = c["volumeMounts"][0]["mountPath"].as<std::string>();
  EXPECT_EQ(config_arg, mount + "/config.yaml");
  EXPECT_EQ(pod["volumes"][0]["configMap"]["name"].as<std::string>(), "gantry-scheduler-config");
}

TEST(DeployTest, DockerfileIsMultiStageDebianNonRoot) {
  std::ifstream in(kDeploy / "Dockerfile");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  EXPECT_THAT(text, ::testing::HasSubstr("FROM debian:bookworm AS builder"));
  EXPECT_THAT(text, ::testing::HasSubstr("scripts/install-deps.sh"));
  EXPECT_THAT(text, ::testing::HasSubstr("FROM debian:bookworm-slim"));
  EXPECT_THAT(text, ::testing::HasSubstr("USER 65532:65532"));
}

}  // namespace
}  // namespace gantry
