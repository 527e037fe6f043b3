// Writes whose outcome depends on what other writers do at the same time:
// ResourceClaim status and finalizer patches conditional on resourceVersion
// (re-read and re-applied on a Conflict), and bindings whose answer is lost
// (the pod is read back before anything is undone). The fake API server
// keeps real objects and applies JSON merge patches with upstream's
// optimistic concurrency.
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "simdjson.h"
#include "src/client/api_writer.h"
#include "test/unit/client/test_server.h"

namespace gantry::client {
namespace {

using testing::Running;

// One ResourceClaim ns/c (status subresource included) and pods by name.
class StatefulApi {
 public:
  StatefulApi() {
    auto srv = std::make_unique<httplib::Server>();
    const std::string claim_path =
        R"(/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c(/status)?)";
    srv->Get(claim_path, [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu);
      ++gets;
      res.set_content(claim.dump(), "application/json");
    });
    srv->Patch(claim_path, [this](const httplib::Request& req, httplib::Response& res) {
      std::function<void(nlohmann::json&)> hook;
      {
        std::lock_guard<std::mutex> lock(mu);
        hook = std::move(before_patch);
        before_patch = nullptr;
      }
      if (hook) {
        std::lock_guard<std::mutex> lock(mu);
        hook(claim);
        Bump();
      }
      std::lock_guard<std::mutex> lock(mu);
      ++patches;
      nlohmann::json patch = nlohmann::json::parse(req.body);
      if (patch.contains("metadata") && patch["metadata"].contains("resourceVersion")) {
        if (patch["metadata"]["resourceVersion"] != claim["metadata"]["resourceVersion"]) {
          res.status = 409;
          res.set_content(
              R"({"kind":"Status","reason":"Conflict","message":"the object has been modified; please apply your changes to the latest version and try again"})",
              "application/json");
          return;
        }
        patch["metadata"].erase("resourceVersion");
      }
      claim.merge_patch(patch);
      Bump();
      res.set_content(claim.dump(), "application/json");
    });
    srv->Post(R"(/api/v1/namespaces/ns/pods/([^/]+)/binding)",
              [this](const httplib::Request& req, httplib::Response& res) {
                std::lock_guard<std::mutex> lock(mu);
                const std::string name = req.matches[1];
                const std::string node = nlohmann::json::parse(req.body)["target"]["name"];
                if (binding_lands[name]) pod_nodes[name] = node;
                res.status = binding_status[name] != 0 ? binding_status[name] : 201;
                res.set_content(R"({"kind":"Status","message":"etcdserver: request timed out"})",
                                "application/json");
              });
    srv->Get(R"(/api/v1/namespaces/ns/pods/([^/]+))",
             [this](const httplib::Request& req, httplib::Response& res) {
               std::lock_guard<std::mutex> lock(mu);
               const std::string name = req.matches[1];
               nlohmann::json pod = {
                   {"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", "uid-" + name}}},
                   {"spec", nlohmann::json::object()}};
               if (!pod_nodes[name].empty()) pod["spec"]["nodeName"] = pod_nodes[name];
               res.set_content(pod.dump(), "application/json");
             });
    srv->Patch(R"(/api/v1/namespaces/ns/pods/([^/]+)/status)",
               [this](const httplib::Request&, httplib::Response& res) {
                 std::unique_lock<std::mutex> lock(mu);
                 ++status_patches_seen;
                 gate_cv.notify_all();
                 gate_cv.wait(lock, [&] { return gate_open; });
                 res.set_content("{}", "application/json");
               });
    server = std::make_unique<Running<httplib::Server>>(std::move(srv));
    RestConfig cfg;
    cfg.server = "http://127.0.0.1:" + std::to_string(server->port());
    client = std::move(*HttpClient::Create(cfg, ClientOptions{}));
  }

  void Bump() {
    const int rv = std::stoi(claim["metadata"]["resourceVersion"].get<std::string>());
    claim["metadata"]["resourceVersion"] = std::to_string(rv + 1);
  }
  // The stored claim decoded.
  api::ResourceClaim Decoded() {
    std::lock_guard<std::mutex> lock(mu);
    simdjson::dom::parser parser;
    api::JsonValue root;
    const std::string text = claim.dump();
    EXPECT_EQ(parser.parse(text).get(root), simdjson::SUCCESS);
    absl::StatusOr<api::ResourceClaim> c = api::DecodeResourceClaim(root);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : api::ResourceClaim();
  }
  std::vector<std::string> ReservedUids() {
    std::vector<std::string> out;
    for (const api::ResourceClaimConsumerReference& r : Decoded().status.reserved_for)
      out.push_back(r.uid);
    return out;
  }

  std::mutex mu;
  nlohmann::json claim;
  std::function<void(nlohmann::json&)> before_patch;  // one concurrent write, then cleared
  int patches = 0;
  int gets = 0;
  std::map<std::string, std::string> pod_nodes;
  std::map<std::string, bool> binding_lands;  // the binding is stored whatever the answer
  std::map<std::string, int> binding_status;  // answer (0 = 201)
  // pods/status patches wait here until the gate opens.
  std::condition_variable gate_cv;
  bool gate_open = true;
  int status_patches_seen = 0;
  void OpenGate() {
    {
      std::lock_guard<std::mutex> lock(mu);
      gate_open = true;
    }
    gate_cv.notify_all();
  }
  std::unique_ptr<Running<httplib::Server>> server;
  std::unique_ptr<HttpClient> client;
};

nlohmann::json Consumer(const std::string& uid) {
  return {{"resource", "pods"}, {"name", "pod-" + uid}, {"uid", uid}};
}

nlohmann::json Allocation(const std::string& device) {
  nlohmann::json result = {
      {"request", "r"}, {"driver", "gpu.example.com"}, {"pool", "n1"}, {"device", device}};
  nlohmann::json out;
  out["devices"]["results"] = nlohmann::json::array({result});
  return out;
}

api::ResourceClaimConsumerReference Ref(const std::string& uid) {
  return api::ResourceClaimConsumerReference{{}, api::Symbol::Intern("pods"), "pod-" + uid, uid};
}

// The claim as stored, with `status` (may be null), at resourceVersion 10.
nlohmann::json StoredClaim(const nlohmann::json& status) {
  nlohmann::json c = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata",
       {{"name", "c"}, {"namespace", "ns"}, {"uid", "claim-uid"}, {"resourceVersion", "10"}}},
      {"spec", {{"devices", {{"requests", nlohmann::json::array()}}}}}};
  if (!status.is_null()) c["status"] = status;
  return c;
}

TEST(ClaimConflicts, StatusWritesKeepOtherWritersEntries) {
  struct Case {
    const char* name;
    nlohmann::json stored_status;                     // what the scheduler saw (RV 10)
    std::function<void(nlohmann::json&)> concurrent;  // another writer, just before our patch
    std::string device;                               // the allocation written
    std::vector<std::string> reserve;                 // reservedFor wanted on top of what was seen
    bool want_ok;
    std::vector<std::string> want_reserved;  // on the server afterwards
    std::string want_device;                 // allocated device on the server afterwards ("" none)
  };
  const nlohmann::json allocated_a = {{"allocation", Allocation("gpu-0")},
                                      {"reservedFor", nlohmann::json::array({Consumer("a")})}};
  const Case cases[] = {
      {"no conflict", allocated_a, nullptr, "gpu-0", {"a", "c"}, true, {"a", "c"}, "gpu-0"},
      {"a consumer added by another writer is kept",
       allocated_a,
       [](nlohmann::json& c) { c["status"]["reservedFor"].push_back(Consumer("b")); },
       "gpu-0",
       {"a", "c"},
       true,
       {"a", "b", "c"},
       "gpu-0"},
      {"a consumer another writer removed stays removed",
       allocated_a,
       [](nlohmann::json& c) { c["status"]["reservedFor"] = nlohmann::json::array(); },
       "gpu-0",
       {"a", "c"},
       true,
       {"c"},
       "gpu-0"},
      {"allocated differently by another scheduler: refused, theirs stays",
       nullptr,
       [](nlohmann::json& c) {
         c["status"] = {{"allocation", Allocation("gpu-1")},
                        {"reservedFor", nlohmann::json::array({Consumer("b")})}};
       },
       "gpu-0",
       {"c"},
       false,
       {"b"},
       "gpu-1"},
      {"deallocated meanwhile while we only reserve: refused",
       allocated_a,
       [](nlohmann::json& c) { c.erase("status"); },
       "gpu-0",
       {"a", "c"},
       false,
       {},
       ""},
      {"the same allocation made meanwhile (our own earlier attempt): nothing to write",
       nullptr,
       [](nlohmann::json& c) {
         c["status"] = {{"allocation", Allocation("gpu-0")},
                        {"reservedFor", nlohmann::json::array({Consumer("c")})}};
       },
       "gpu-0",
       {"c"},
       true,
       {"c"},
       "gpu-0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatefulApi api;
    api.claim = StoredClaim(c.stored_status);
    const api::ResourceClaim seen = api.Decoded();
    api.before_patch = c.concurrent;
    ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
    api::AllocationResult alloc;
    alloc.results.push_back(api::DeviceRequestAllocationResult{});
    alloc.results[0].request = api::Symbol::Intern("r");
    alloc.results[0].driver = api::Symbol::Intern("gpu.example.com");
    alloc.results[0].pool = api::Symbol::Intern("n1");
    alloc.results[0].device = api::Symbol::Intern(c.device);
    std::vector<api::ResourceClaimConsumerReference> reserve;
    for (const std::string& uid : c.reserve) reserve.push_back(Ref(uid));
    absl::StatusOr<std::string> rv = w.UpdateResourceClaimStatus(seen, alloc, reserve);
    EXPECT_EQ(rv.ok(), c.want_ok) << rv.status();
    EXPECT_EQ(api.ReservedUids(), c.want_reserved);
    const api::ResourceClaim after = api.Decoded();
    EXPECT_EQ(after.status.allocation
                  ? std::string(after.status.allocation->results[0].device.view())
                  : "",
              c.want_device);
    if (rv.ok()) {
      EXPECT_EQ(*rv, after.meta.resource_version) << "the version to assume the claim at";
    }
  }
}

TEST(ClaimConflicts, FinalizerAndDeallocation) {
  {
    SCOPED_TRACE("finalizer after a concurrent label change");
    StatefulApi api;
    api.claim = StoredClaim(nullptr);
    const api::ResourceClaim seen = api.Decoded();
    api.before_patch = [](nlohmann::json& c) { c["metadata"]["labels"] = {{"team", "x"}}; };
    ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
    absl::StatusOr<std::string> rv =
        w.AddResourceClaimFinalizer(seen, api::kDeleteProtectionFinalizer);
    ASSERT_TRUE(rv.ok()) << rv.status();
    const api::ResourceClaim after = api.Decoded();
    EXPECT_EQ(after.meta.finalizers,
              std::vector<std::string>{std::string(api::kDeleteProtectionFinalizer)});
    EXPECT_EQ(*rv, after.meta.resource_version);
    EXPECT_EQ(w.ClaimConflicts(), 1);
  }
  {
    SCOPED_TRACE("deallocation refused once someone else reserved the claim");
    StatefulApi api;
    api.claim = StoredClaim({{"allocation", Allocation("gpu-0")}});
    const api::ResourceClaim seen = api.Decoded();
    api.before_patch = [](nlohmann::json& c) {
      c["status"]["reservedFor"] = nlohmann::json::array({Consumer("b")});
    };
    ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
    absl::StatusOr<std::string> rv = w.DeallocateResourceClaim(seen);
    EXPECT_EQ(rv.status().code(), absl::StatusCode::kFailedPrecondition) << rv.status();
    EXPECT_TRUE(api.Decoded().status.allocation.has_value());
    EXPECT_EQ(api.ReservedUids(), std::vector<std::string>{"b"});
  }
}

api::Pod PodNamed(const std::string& name) {
  api::Pod p;
  p.meta.name = name;
  p.meta.namespace_ = api::Symbol::Intern("ns");
  p.meta.uid = "uid-" + name;
  return p;
}

// A binding whose answer is lost or an error is settled by reading the pod.
TEST(AmbiguousBinding, ThePodIsReadBackBeforeAnythingIsUndone) {
  struct Case {
    const char* name;
    bool lands;
    int status;
    std::string bound_before;  // spec.nodeName before our binding ("" none)
    absl::StatusCode want;
    int64_t want_confirmed;
  };
  const Case cases[] = {
      {"clean success", true, 0, "", absl::StatusCode::kOk, 0},
      {"stored, but the answer is a 504", true, 504, "", absl::StatusCode::kOk, 1},
      {"stored, but the answer is a 500", true, 500, "", absl::StatusCode::kOk, 1},
      {"not stored: the error stands", false, 500, "", absl::StatusCode::kUnavailable, 0},
      {"bound elsewhere by someone else", false, 409, "n9", absl::StatusCode::kAlreadyExists, 0},
      {"a 409 for our own earlier attempt", false, 409, "n1", absl::StatusCode::kOk, 1},
      {"refused by admission: not ambiguous", false, 403, "", absl::StatusCode::kPermissionDenied,
       0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatefulApi api;
    api.binding_lands["p"] = c.lands;
    api.binding_status["p"] = c.status;
    api.pod_nodes["p"] = c.bound_before;
    WriterOptions opts{"host1"};
    opts.bind_readback_interval_millis = 1;
    ApiClusterWriter w(*api.client, *api.client, opts);
    absl::Status st = w.BindPod(PodNamed("p"), "n1");
    EXPECT_EQ(st.code(), c.want) << st;
    EXPECT_EQ(w.Stats().bindings_confirmed_by_read, c.want_confirmed);
  }
}

// The queue of status patches is bounded: beyond its capacity a patch is
// dropped (and counted) instead of growing the queue while the API server is slow.
TEST(StatusPatchQueue, IsBoundedAndCountsWhatItDrops) {
  StatefulApi api;
  api.gate_open = false;
  WriterOptions opts{"host1"};
  opts.status_patch_queue_capacity = 2;
  {
    ApiClusterWriter w(*api.client, *api.client, opts);
    const framework::PodScheduledCondition cond{"False", "Unschedulable",
                                                "0/1 nodes are available"};
    ASSERT_TRUE(w.UpdatePodScheduledCondition(PodNamed("p0"), cond, nullptr).ok());
    {
      // p0's patch is being sent (held at the gate): the queue is empty again.
      std::unique_lock<std::mutex> lock(api.mu);
      ASSERT_TRUE(api.gate_cv.wait_for(lock, std::chrono::seconds(10),
                                       [&] { return api.status_patches_seen == 1; }));
    }
    EXPECT_TRUE(w.UpdatePodScheduledCondition(PodNamed("p1"), cond, nullptr).ok());
    EXPECT_TRUE(w.UpdatePodScheduledCondition(PodNamed("p2"), cond, nullptr).ok());
    absl::Status dropped = w.UpdatePodScheduledCondition(PodNamed("p3"), cond, nullptr);
    EXPECT_EQ(dropped.code(), absl::StatusCode::kResourceExhausted) << dropped;
    EXPECT_EQ(w.Stats().status_patches_dropped, 1);
    api.OpenGate();
    ASSERT_TRUE(w.Flush(10'000));
  }
  EXPECT_EQ(api.status_patches_seen, 3);
}

}  // namespace
}  // namespace gantry::client
