#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/client/api_writer.h"
#include "src/client/leader_election.h"
#include "test/unit/client/test_server.h"

namespace gantry::client {
namespace {

using testing::Running;

struct Seen {
  std::string method, path, body, content_type;
  std::string accept, field_validation;
};

class FakeApi {
 public:
  FakeApi() {
    auto srv = std::make_unique<httplib::Server>();
    auto record = [this](const httplib::Request& req) {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back({req.method, req.path, req.body, req.get_header_value("Content-Type"),
                      req.get_header_value("Accept"), req.get_param_value("fieldValidation")});
    };
    srv->Post(R"(/api/v1/namespaces/ns/pods/([^/]+)/binding)", [=](const httplib::Request& req,
                                                                   httplib::Response& res) {
      record(req);
      if (req.matches[1] == "taken") {
        res.status = 409;
        res.set_content(
            R"({"kind":"Status","message":"pod ns/taken is already assigned to node \"x\"","reason":"Conflict"})",
            "application/json");
        return;
      }
      res.status = 201;
      res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
    });
    srv->Patch(R"(/api/v1/namespaces/ns/pods/([^/]+)/status)",
               [=, this](const httplib::Request& req, httplib::Response& res) {
                 if (before_status) before_status(req.matches[1]);
                 record(req);
                 res.set_content("{}", "application/json");
               });
    srv->Delete(R"(/api/v1/namespaces/ns/pods/([^/]+))",
                [=](const httplib::Request& req, httplib::Response& res) {
                  record(req);
                  res.set_content("{}", "application/json");
                });
    // ResourceClaims: a POST gets a generated name and a UID; a name
    // starting with "gone" is not found.
    srv->Post("/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims",
              [=](const httplib::Request& req, httplib::Response& res) {
                record(req);
                nlohmann::json obj = nlohmann::json::parse(req.body);
                obj["metadata"]["name"] =
                    obj["metadata"]["generateName"].get<std::string>() + "b2c4d";
                obj["metadata"]["uid"] = "claim-uid";
                obj["metadata"]["resourceVersion"] = "7";
                res.status = 201;
                res.set_content(obj.dump(), "application/json");
              });
    auto claim_write = [=](const httplib::Request& req, httplib::Response& res) {
      record(req);
      if (std::string(req.matches[1]).starts_with("gone")) {
        res.status = 404;
        res.set_content(R"({"kind":"Status","reason":"NotFound"})", "application/json");
        return;
      }
      res.set_content("{}", "application/json");
    };
    srv->Patch(R"(/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/([^/]+))", claim_write);
    srv->Patch(R"(/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/([^/]+)/status)",
               claim_write);
    srv->Delete(R"(/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/([^/]+))", claim_write);
    srv->Post("/apis/events.k8s.io/v1/namespaces/ns/events",
              [=, this](const httplib::Request& req, httplib::Response& res) {
                if (before_event) before_event();
                record(req);
                res.status = 201;
                res.set_content(req.body, "application/json");
              });
    srv->Patch(R"(/apis/events.k8s.io/v1/namespaces/ns/events/(.+))",
               [=](const httplib::Request& req, httplib::Response& res) {
                 record(req);
                 res.set_content("{}", "application/json");
               });
    server = std::make_unique<Running<httplib::Server>>(std::move(srv));
    RestConfig cfg;
    cfg.server = "http://127.0.0.1:" + std::to_string(server->port());
    client = std::move(*HttpClient::Create(cfg, ClientOptions{}));
  }
  // Waits (up to 5 s) until `done` holds for the requests seen so far.
  bool WaitFor(const std::function<bool(const std::vector<Seen>&)>& done) {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (done(seen)) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  std::vector<Seen> Take() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<Seen> out;
    out.swap(seen);
    return out;
  }

  std::mutex mu;
  std::vector<Seen> seen;
  std::function<void()> before_event;  // runs on the server thread before an event is recorded
  std::function<void(const std::string& pod)> before_status;  // same, before a pods/status patch
  std::unique_ptr<Running<httplib::Server>> server;
  std::unique_ptr<HttpClient> client;
};

api::Pod MakePod(const std::string& name) {
  api::Pod p;
  p.meta.name = name;
  p.meta.namespace_ = api::Symbol::Intern("ns");
  p.meta.uid = "uid-" + name;
  p.scheduler_name = api::Symbol::Intern("gantry-scheduler");
  return p;
}

framework::EventRecord ScheduledEvent(const std::string& pod) {
  return framework::EventRecord{"Pod",
                                "ns",
                                pod,
                                "uid-" + pod,
                                "Normal",
                                "Scheduled",
                                "Binding",
                                "Successfully assigned ns/" + pod + " to n1",
                                "gantry-scheduler"};
}

// Blocks server threads in Wait() until Open().
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(ApiClusterWriter, BindingConflictAndBody) {
  FakeApi api;
  ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
  EXPECT_TRUE(w.BindPod(MakePod("ok"), "n1").ok());
  absl::Status st = w.BindPod(MakePod("taken"), "n1");
  EXPECT_EQ(st.code(), absl::StatusCode::kAlreadyExists) << st;
  std::vector<Seen> seen = api.Take();
  ASSERT_EQ(seen.size(), 2u);
  nlohmann::json b = nlohmann::json::parse(seen[0].body);
  EXPECT_EQ(b["kind"], "Binding");
  EXPECT_EQ(b["metadata"]["uid"], "uid-ok");
  EXPECT_EQ(b["target"], (nlohmann::json{{"kind", "Node"}, {"name", "n1"}}));
  EXPECT_EQ(w.Stats().binding_conflicts, 1);
}

TEST(ApiClusterWriter, StatusPatchAndEventSeries) {
  FakeApi api;
  ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
  std::string nominated = "n2";
  framework::PodScheduledCondition cond{"False", "Unschedulable",
                                        "0/3 nodes are available: 3 Insufficient cpu."};
  EXPECT_TRUE(w.UpdatePodScheduledCondition(MakePod("p"), cond, &nominated).ok());
  framework::EventRecord ev{"Pod",        "ns",         "p",
                            "uid-p",      "Warning",    "FailedScheduling",
                            "Scheduling", cond.message, "gantry-scheduler"};
  w.RecordEvent(ev);
  w.RecordEvent(ev);
  w.RecordEvent(ev);
  ASSERT_TRUE(w.Flush(5000));
  // The status patch and the events have workers of their own: compare each
  // stream in its own order.
  std::vector<Seen> seen;
  for (Seen& s : api.Take()) {
    if (s.path.starts_with("/api/v1/"))
      seen.insert(seen.begin(), std::move(s));
    else
      seen.push_back(std::move(s));
  }
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].path, "/api/v1/namespaces/ns/pods/p/status");
  EXPECT_EQ(seen[0].method, "PATCH");
  EXPECT_EQ(seen[0].content_type, "application/strategic-merge-patch+json");
  nlohmann::json patch = nlohmann::json::parse(seen[0].body);
  EXPECT_EQ(patch["status"]["nominatedNodeName"], "n2");
  EXPECT_EQ(patch["status"]["conditions"][0]["type"], "PodScheduled");
  EXPECT_EQ(patch["status"]["conditions"][0]["reason"], "Unschedulable");
  EXPECT_EQ(patch["status"]["conditions"][0]["message"], cond.message);
  EXPECT_TRUE(patch["status"]["conditions"][0].contains("lastTransitionTime"));

  EXPECT_EQ(seen[1].method, "POST");
  nlohmann::json e = nlohmann::json::parse(seen[1].body);
  EXPECT_EQ(e["reportingController"], "gantry-scheduler");
  EXPECT_EQ(e["reportingInstance"], "gantry-scheduler-host1");
  EXPECT_EQ(e["regarding"]["uid"], "uid-p");
  EXPECT_EQ(e["note"], cond.message);
  EXPECT_EQ(e["action"], "Scheduling");
  const std::string name = e["metadata"]["name"];
  EXPECT_EQ(name.rfind("p.", 0), 0u);
  EXPECT_EQ(seen[2].method, "PATCH");
  EXPECT_EQ(seen[2].path, "/apis/events.k8s.io/v1/namespaces/ns/events/" + name);
  EXPECT_EQ(nlohmann::json::parse(seen[2].body)["series"]["count"], 2);
  EXPECT_EQ(nlohmann::json::parse(seen[3].body)["series"]["count"], 3);
  EXPECT_EQ(w.Stats().events_created, 1);
  EXPECT_EQ(w.Stats().events_folded, 2);
}

TEST(ApiClusterWriter, StatusPatchQueuedBeforeBindingIsDropped) {
  // A failed attempt queues PodScheduled=False; the next attempt binds the pod
  // before the writer got to the patch. Sending it then would mark a bound pod
  // unschedulable, so it is dropped; other pods' patches still go out.
  FakeApi api;
  Gate gate;
  api.before_status = [&](const std::string& pod) {
    if (pod == "other") gate.Wait();
  };
  ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
  framework::PodScheduledCondition cond{"False", "Unschedulable",
                                        "pod group ns/g: 1 of minCount 2 members exist"};
  // Occupies the status writer until the gate opens.
  ASSERT_TRUE(w.UpdatePodScheduledCondition(MakePod("other"), cond, nullptr).ok());
  ASSERT_TRUE(w.UpdatePodScheduledCondition(MakePod("p"), cond, nullptr).ok());
  ASSERT_TRUE(w.UpdatePodScheduledCondition(MakePod("q"), cond, nullptr).ok());
  ASSERT_TRUE(w.BindPod(MakePod("p"), "n1").ok());
  gate.Open();
  ASSERT_TRUE(w.Flush(5000));
  std::vector<std::string> paths;
  for (const Seen& s : api.Take()) paths.push_back(s.method + " " + s.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"POST /api/v1/namespaces/ns/pods/p/binding",
                                             "PATCH /api/v1/namespaces/ns/pods/other/status",
                                             "PATCH /api/v1/namespaces/ns/pods/q/status"}));
  EXPECT_EQ(w.Stats().status_patches_superseded, 1);
  EXPECT_EQ(w.Stats().status_patches, 2);

  // A patch queued after the binding (a later failure) is sent.
  ASSERT_TRUE(w.UpdatePodScheduledCondition(MakePod("p"), cond, nullptr).ok());
  ASSERT_TRUE(w.Flush(5000));
  std::vector<Seen> seen = api.Take();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].path, "/api/v1/namespaces/ns/pods/p/status");
}

TEST(ApiClusterWriter, EventsDoNotDelayStatusPatches) {
  // Every event worker is stuck on the API server: status patches still go out.
  FakeApi api;
  Gate gate;
  api.before_event = [&] { gate.Wait(); };
  WriterOptions opts{"host1"};
  opts.event_workers = 2;
  ApiClusterWriter w(*api.client, *api.client, opts);
  for (int i = 0; i < 4; ++i) w.RecordEvent(ScheduledEvent("p" + std::to_string(i)));
  framework::PodScheduledCondition cond{"False", "Unschedulable", "m"};
  ASSERT_TRUE(w.UpdatePodScheduledCondition(MakePod("q"), cond, nullptr).ok());
  ASSERT_TRUE(api.WaitFor([&](const std::vector<Seen>& seen) {
    for (const Seen& s : seen) {
      if (s.path == "/api/v1/namespaces/ns/pods/q/status") return true;
    }
    return false;
  }));
  EXPECT_FALSE(w.Flush(50));  // events are still pending
  gate.Open();
  ASSERT_TRUE(w.Flush(5000));
  EXPECT_EQ(w.Stats().events_created, 4);
  EXPECT_EQ(w.Stats().status_patches, 1);
}

// Events recorded while the writer's workers are all blocked: what the queue
// keeps, what it drops, and that every kept event is written once released.
struct EventQueueCase {
  std::string name;
  int workers;
  size_t capacity;
  int events;  // on distinct pods, one each
};

class EventQueueTest : public ::testing::TestWithParam<EventQueueCase> {};

TEST_P(EventQueueTest, KeepsUpToCapacityAndCountsDrops) {
  const EventQueueCase& tc = GetParam();
  FakeApi api;
  Gate gate;
  std::mutex mu;
  int arrived = 0;
  std::condition_variable arrived_cv;
  api.before_event = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++arrived;
    }
    arrived_cv.notify_all();
    gate.Wait();
  };
  WriterOptions opts{"host1"};
  opts.event_workers = tc.workers;
  opts.event_queue_capacity = tc.capacity;
  ApiClusterWriter w(*api.client, *api.client, opts);
  // One event per worker first (an object routed to each), each held in
  // flight by the gate, so the queue below is exactly what waits.
  std::vector<bool> taken(tc.workers, false);
  int occupied = 0;
  for (int i = 0; occupied < tc.workers && i < 100'000; ++i) {
    framework::EventRecord ev = ScheduledEvent("first-" + std::to_string(i));
    const size_t worker = ApiClusterWriter::EventWorkerFor(ev, tc.workers);
    if (taken[worker]) continue;
    taken[worker] = true;
    ++occupied;
    w.RecordEvent(ev);
    // Until its worker has taken it, the event holds a queue slot; with a
    // small capacity the next one would be dropped.
    std::unique_lock<std::mutex> lock(mu);
    if (!arrived_cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == occupied; })) {
      gate.Open();  // let the workers finish so that the writer can stop
      FAIL() << "worker " << worker << " did not take its event";
    }
  }
  ASSERT_EQ(occupied, tc.workers);
  // Events that met a busy worker while finding a free one wait in the queue too.
  const int64_t queued_before = w.Stats().events_queued;
  ASSERT_LE(queued_before, static_cast<int64_t>(tc.capacity));
  for (int i = 0; i < tc.events; ++i) w.RecordEvent(ScheduledEvent("pod-" + std::to_string(i)));
  const int64_t kept =
      std::min<int64_t>(static_cast<int64_t>(tc.capacity), queued_before + tc.events);
  const int64_t dropped = queued_before + tc.events - kept;
  WriterStats st = w.Stats();
  EXPECT_EQ(st.events_dropped, dropped);
  EXPECT_EQ(st.events_queued, kept);
  gate.Open();
  ASSERT_TRUE(w.Flush(10'000));
  st = w.Stats();
  EXPECT_EQ(st.events_created, tc.workers + kept);
  EXPECT_EQ(st.events_dropped, dropped);
  EXPECT_EQ(st.events_queued, 0);
  EXPECT_EQ(st.event_failures, 0);
  // No event was written twice.
  std::set<std::string> names;
  for (const Seen& s : api.Take()) {
    if (s.method == "POST") names.insert(nlohmann::json::parse(s.body)["regarding"]["name"]);
  }
  EXPECT_EQ(static_cast<int64_t>(names.size()), st.events_created);
}

INSTANTIATE_TEST_SUITE_P(Writer, EventQueueTest,
                         ::testing::Values(EventQueueCase{"one_worker_fits", 1, 10, 5},
                                           EventQueueCase{"one_worker_overflows", 1, 3, 5},
                                           EventQueueCase{"four_workers_share_one_queue", 4, 6, 10},
                                           EventQueueCase{"capacity_one", 2, 1, 3}),
                         [](const ::testing::TestParamInfo<EventQueueCase>& info) {
                           return info.param.name;
                         });

TEST(ApiClusterWriter, SeriesStayOnOneWorker) {
  // With many workers, the repeats of one event still fold into one series,
  // in order: count 2, 3, ... on the event the first one created.
  FakeApi api;
  WriterOptions opts{"host1"};
  opts.event_workers = 8;
  ApiClusterWriter w(*api.client, *api.client, opts);
  framework::EventRecord ev{"Pod",
                            "ns",
                            "p",
                            "uid-p",
                            "Warning",
                            "FailedScheduling",
                            "Scheduling",
                            "0/3 nodes are available",
                            "gantry-scheduler"};
  for (int i = 0; i < 5; ++i) w.RecordEvent(ev);
  ASSERT_TRUE(w.Flush(5000));
  std::vector<Seen> seen = api.Take();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].method, "POST");
  const std::string name = nlohmann::json::parse(seen[0].body)["metadata"]["name"];
  for (int i = 1; i < 5; ++i) {
    EXPECT_EQ(seen[i].path, "/apis/events.k8s.io/v1/namespaces/ns/events/" + name);
    EXPECT_EQ(nlohmann::json::parse(seen[i].body)["series"]["count"], i + 1);
  }
  EXPECT_EQ(w.Stats().events_created, 1);
  EXPECT_EQ(w.Stats().events_folded, 4);
}

TEST(ApiClusterWriter, PreemptionMarksThenDeletesWithUidPrecondition) {
  FakeApi api;
  ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
  EXPECT_TRUE(w.DeletePodForPreemption(MakePod("victim"), MakePod("big"), "n1").ok());
  ASSERT_TRUE(w.Flush(5000));
  std::vector<Seen> seen = api.Take();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].method, "PATCH");
  nlohmann::json cond = nlohmann::json::parse(seen[0].body)["status"]["conditions"][0];
  EXPECT_EQ(cond["type"], "DisruptionTarget");
  EXPECT_EQ(cond["reason"], "PreemptionByScheduler");
  EXPECT_EQ(cond["message"], "gantry-scheduler: preempting to accommodate a higher priority pod");
  EXPECT_EQ(seen[1].method, "DELETE");
  EXPECT_EQ(nlohmann::json::parse(seen[1].body)["preconditions"]["uid"], "uid-victim");
  nlohmann::json e = nlohmann::json::parse(seen[2].body);
  EXPECT_EQ(e["reason"], "Preempted");
  EXPECT_EQ(e["note"], "Preempted by pod uid-big on node n1");

  // A member of a PodGroup preempts for its group.
  api::Pod member = MakePod("m");
  member.pod_group_name = api::Symbol::Intern("gang");
  EXPECT_TRUE(w.DeletePodForPreemption(MakePod("victim2"), member, "n1").ok());
  ASSERT_TRUE(w.Flush(5000));
  seen = api.Take();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(nlohmann::json::parse(seen[0].body)["status"]["conditions"][0]["message"],
            "gantry-scheduler: preempting to accommodate a higher priority pod group");
}

TEST(ApiClusterWriter, WritesAskForProtobufAnswersAndSkipFieldValidation) {
  // Every write whose answer is only checked for its status asks for a
  // protobuf answer and no server-side field validation (DELETE takes none);
  // a create whose answer is decoded keeps JSON.
  FakeApi api;
  ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
  ASSERT_TRUE(w.BindPod(MakePod("ok"), "n1").ok());
  framework::PodScheduledCondition cond{"False", "Unschedulable", "m"};
  ASSERT_TRUE(w.UpdatePodScheduledCondition(MakePod("q"), cond, nullptr).ok());
  w.RecordEvent(ScheduledEvent("e"));
  w.RecordEvent(ScheduledEvent("e"));  // folded: PATCH
  ASSERT_TRUE(w.DeletePodForPreemption(MakePod("victim"), MakePod("preemptor"), "n1").ok());
  api::ResourceClaim claim;
  claim.meta.name = "c1";
  claim.meta.namespace_ = api::Symbol::Intern("ns");
  claim.meta.uid = "uid-c1";
  claim.meta.resource_version = "5";
  ASSERT_TRUE(w.AddResourceClaimFinalizer(claim, "resource.kubernetes.io/delete-protection").ok());
  ASSERT_TRUE(w.UpdateResourceClaimStatus(claim, api::AllocationResult{}, {}).ok());
  ASSERT_TRUE(w.CreateResourceClaim(claim, "p-extended-resources-").ok());
  ASSERT_TRUE(w.Flush(5000));
  int checked = 0;
  for (const Seen& s : api.Take()) {
    SCOPED_TRACE(s.method + " " + s.path);
    const bool decoded =
        s.method == "POST" && s.path == "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims";
    EXPECT_EQ(s.accept, decoded ? "application/json" : kAcceptProtobufOrJson);
    EXPECT_EQ(s.field_validation, decoded || s.method == "DELETE" ? "" : "Ignore");
    ++checked;
  }
  // binding, status, event POST + PATCH, DisruptionTarget + DELETE + Preempted
  // event, finalizer, claim status, claim create.
  EXPECT_EQ(checked, 10);
}

TEST(ApiClusterWriter, ExtendedResourceClaimCreateDeleteAndPodStatus) {
  FakeApi api;
  ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
  api::ResourceClaim claim;
  claim.meta.namespace_ = api::Symbol::Intern("ns");
  claim.meta.annotations.emplace_back(api::Symbol::Intern(api::kExtendedResourceClaimAnnotation),
                                      "true");
  api::OwnerReference owner;
  owner.api_version = api::Symbol::Intern("v1");
  owner.kind = api::Symbol::Intern("Pod");
  owner.name = "p";
  owner.uid = "uid-p";
  owner.controller = true;
  claim.meta.owner_references.push_back(owner);
  claim.meta.finalizers = {std::string(api::kDeleteProtectionFinalizer)};
  api::DeviceRequest req;
  req.name = api::Symbol::Intern("container-0-request-1");
  req.exactly.emplace();
  req.exactly->device_class_name = api::Symbol::Intern("gpu.example.com");
  req.exactly->count = 2;
  claim.spec.requests.push_back(req);

  absl::StatusOr<api::ResourceClaim> created =
      w.CreateResourceClaim(claim, "p-extended-resources-");
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->meta.name, "p-extended-resources-b2c4d");
  EXPECT_EQ(created->meta.uid, "claim-uid");
  ASSERT_EQ(created->spec.requests.size(), 1u);
  EXPECT_EQ(created->spec.requests[0].exactly->count, 2);
  std::vector<Seen> seen = api.Take();
  ASSERT_EQ(seen.size(), 1u);
  nlohmann::json body = nlohmann::json::parse(seen[0].body);
  EXPECT_EQ(body["kind"], "ResourceClaim");
  EXPECT_EQ(body["metadata"]["generateName"], "p-extended-resources-");
  EXPECT_FALSE(body["metadata"].contains("name"));
  EXPECT_EQ(body["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"],
            "true");
  EXPECT_EQ(
      body["metadata"]["ownerReferences"],
      nlohmann::json::parse(
          R"([{"apiVersion":"v1","kind":"Pod","name":"p","uid":"uid-p","controller":true}])"));
  EXPECT_EQ(body["metadata"]["finalizers"],
            nlohmann::json::array({"resource.kubernetes.io/delete-protection"}));
  EXPECT_EQ(
      body["spec"]["devices"]["requests"],
      nlohmann::json::parse(
          R"([{"name":"container-0-request-1","exactly":{"deviceClassName":"gpu.example.com",)"
          R"("allocationMode":"ExactCount","count":2}}])"));

  // Delete: the finalizer goes first, then DELETE with a UID precondition.
  ASSERT_TRUE(w.DeleteResourceClaim(*created).ok());
  seen = api.Take();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method, "PATCH");
  EXPECT_EQ(seen[0].content_type, "application/merge-patch+json");
  EXPECT_EQ(nlohmann::json::parse(seen[0].body),
            nlohmann::json::parse(R"({"metadata":{"finalizers":[],"uid":"claim-uid"}})"));
  EXPECT_EQ(seen[1].method, "DELETE");
  EXPECT_EQ(seen[1].path,
            "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/p-extended-resources-b2c4d");
  EXPECT_EQ(nlohmann::json::parse(seen[1].body)["preconditions"]["uid"], "claim-uid");
  // A claim that is already gone is deleted.
  api::ResourceClaim gone = *created;
  gone.meta.name = "gone-1";
  EXPECT_TRUE(w.DeleteResourceClaim(gone).ok());
  EXPECT_EQ(api.Take().size(), 1u) << "nothing after the 404";

  framework::ExtendedResourceClaimStatus status{
      "p-extended-resources-b2c4d", {{"main", "example.com/gpu", "container-0-request-1"}}};
  ASSERT_TRUE(w.UpdatePodExtendedResourceClaimStatus(MakePod("p"), status).ok());
  seen = api.Take();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].path, "/api/v1/namespaces/ns/pods/p/status");
  EXPECT_EQ(seen[0].content_type, "application/merge-patch+json");
  EXPECT_EQ(nlohmann::json::parse(seen[0].body),
            nlohmann::json::parse(R"({"metadata":{"uid":"uid-p"},
      "status":{"extendedResourceClaimStatus":{"resourceClaimName":"p-extended-resources-b2c4d",
      "requestMappings":[{"containerName":"main","resourceName":"example.com/gpu",
      "requestName":"container-0-request-1"}]}}})"));
}

TEST(ApiClusterWriter, PodGroupConditionRequests) {
  struct Case {
    std::string name;
    framework::PodGroupRef group;
    framework::PodGroupCondition condition;
    std::string path;  // "" = nothing is written
    std::string content_type;
    std::string status_json;  // the body's "status"
  };
  const int64_t t = 1'700'000'000'000'000;
  const std::vector<Case> cases = {
      {"native False",
       {"scheduling.k8s.io", "PodGroup", "ml", "g", "uid-g", 3},
       {"PodGroupInitiallyScheduled", "False", "Unschedulable", "4 of minCount 5 members fit"},
       "/apis/scheduling.k8s.io/v1beta1/namespaces/ml/podgroups/g/"
       "status?fieldManager=gantry-scheduler&force=true",
       "application/apply-patch+yaml",
       R"({"conditions":[{"lastTransitionTime":"2023-11-14T22:13:20Z","message":"4 of minCount 5 members fit",)"
       R"("observedGeneration":3,"reason":"Unschedulable","status":"False","type":"PodGroupInitiallyScheduled"}]})"},
      {"composite True",
       {"scheduling.k8s.io", "CompositePodGroup", "ml", "root", "", 0},
       {"CompositePodGroupInitiallyScheduled", "True", "Scheduled",
        "2 of 2 child groups scheduled"},
       "/apis/scheduling.k8s.io/v1alpha3/namespaces/ml/compositepodgroups/root/"
       "status?fieldManager=gantry-scheduler&"
       "force=true",
       "application/apply-patch+yaml",
       R"({"conditions":[{"lastTransitionTime":"2023-11-14T22:13:20Z","message":"2 of 2 child groups scheduled",)"
       R"("reason":"Scheduled","status":"True","type":"CompositePodGroupInitiallyScheduled"}]})"},
      {"coscheduling False",
       {"scheduling.x-k8s.io", "PodGroup", "ml", "cg", "uid-cg", 1},
       {"PodGroupInitiallyScheduled", "False", "Unschedulable", "x"},
       "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups/cg/status",
       "application/merge-patch+json",
       R"({"phase":"Scheduling"})"},
      {"native DisruptionTarget (its own field manager)",
       {"scheduling.k8s.io", "PodGroup", "ml", "v", "uid-v", 2},
       {"DisruptionTarget", "True", "PreemptionByScheduler",
        "s: preempting to accommodate a higher priority pod group"},
       "/apis/scheduling.k8s.io/v1beta1/namespaces/ml/podgroups/v/"
       "status?fieldManager=gantry-scheduler-preemption&"
       "force=true",
       "application/apply-patch+yaml",
       R"({"conditions":[{"lastTransitionTime":"2023-11-14T22:13:20Z","message":"s: preempting to accommodate a )"
       R"(higher priority pod group","observedGeneration":2,"reason":"PreemptionByScheduler","status":"True",)"
       R"("type":"DisruptionTarget"}]})"},
      {"coscheduling DisruptionTarget",
       {"scheduling.x-k8s.io", "PodGroup", "ml", "cg", "uid-cg", 1},
       {"DisruptionTarget", "True", "PreemptionByScheduler", "x"},
       "",
       "",
       ""},
      {"coscheduling True",
       {"scheduling.x-k8s.io", "PodGroup", "ml", "cg", "uid-cg", 1},
       {"PodGroupInitiallyScheduled", "True", "Scheduled", "x"},
       "",
       "",
       ""},
  };
  for (const Case& c : cases) {
    std::optional<HttpRequest> req =
        ApiClusterWriter::PodGroupConditionRequest(c.group, c.condition, t);
    if (c.path.empty()) {
      EXPECT_FALSE(req.has_value()) << c.name;
      continue;
    }
    ASSERT_TRUE(req.has_value()) << c.name;
    EXPECT_EQ(req->method, "PATCH") << c.name;
    EXPECT_EQ(req->path, c.path) << c.name;
    EXPECT_EQ(req->content_type, c.content_type) << c.name;
    nlohmann::json body = nlohmann::json::parse(req->body);
    EXPECT_EQ(body["status"].dump(), c.status_json) << c.name;
    if (c.content_type == "application/apply-patch+yaml") {
      EXPECT_EQ(body["kind"], c.group.kind) << c.name;
      EXPECT_EQ(body["metadata"]["name"], c.group.name) << c.name;
      EXPECT_EQ(body["metadata"].contains("uid"), !c.group.uid.empty()) << c.name;
    }
  }
}

// Transition times are remembered per group while it exists: a deleted
// group's entries go (ForgetPodGroup), so churning groups do not grow the map.
TEST(ApiClusterWriter, PodGroupTransitionsAreForgottenWithTheGroup) {
  FakeApi api;
  ApiClusterWriter w(*api.client, *api.client, WriterOptions{"host1"});
  const framework::PodGroupRef g{"scheduling.k8s.io", "PodGroup", "ml", "g", "uid-g", 1};
  const framework::PodGroupRef h{"scheduling.k8s.io", "PodGroup", "ml", "h", "uid-h", 1};
  const framework::PodGroupCondition waiting{"PodGroupInitiallyScheduled", "False", "Unschedulable",
                                             "x"};
  const framework::PodGroupCondition below{"gantry.dev/BoundBelowQuorum", "True", "BindingFailed",
                                           "y"};
  struct Step {
    std::string what;
    std::function<void()> apply;
    int64_t groups;
  };
  const std::vector<Step> steps = {
      {"g waits", [&] { ASSERT_TRUE(w.UpdatePodGroupCondition(g, waiting).ok()); }, 1},
      {"g gets a second condition type",
       [&] { ASSERT_TRUE(w.UpdatePodGroupCondition(g, below).ok()); }, 1},
      {"h waits", [&] { ASSERT_TRUE(w.UpdatePodGroupCondition(h, waiting).ok()); }, 2},
      {"g deleted", [&] { w.ForgetPodGroup("ml/g"); }, 1},
      {"an unknown group deleted", [&] { w.ForgetPodGroup("ml/none"); }, 1},
      {"h deleted", [&] { w.ForgetPodGroup("ml/h"); }, 0},
  };
  for (const Step& step : steps) {
    step.apply();
    EXPECT_EQ(w.Stats().group_transitions, step.groups) << step.what;
  }
  ASSERT_TRUE(w.Flush(5000));
}

TEST(ApiClusterWriter, TimeFormats) {
  EXPECT_EQ(ApiClusterWriter::FormatTime(1'700'000'000'123'456), "2023-11-14T22:13:20Z");
  EXPECT_EQ(ApiClusterWriter::FormatMicroTime(1'700'000'000'123'456),
            "2023-11-14T22:13:20.123456Z");
}

// ---- Leader election against an in-memory Lease endpoint ----------------------------------------

class FakeLeases {
 public:
  FakeLeases() {
    auto srv = std::make_unique<httplib::Server>();
    const std::string path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
    srv->Get(path + "/gantry", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu);
      if (lease.is_null()) {
        res.status = 404;
        return;
      }
      res.set_content(lease.dump(), "application/json");
    });
    srv->Post(path, [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu);
      if (!lease.is_null()) {
        res.status = 409;
        res.set_content(R"({"reason":"AlreadyExists"})", "application/json");
        return;
      }
      lease = nlohmann::json::parse(req.body);
      lease["metadata"]["resourceVersion"] = std::to_string(++rv);
      res.status = 201;
      res.set_content(lease.dump(), "application/json");
    });
    srv->Put(path + "/gantry", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu);
      nlohmann::json j = nlohmann::json::parse(req.body);
      if (lease.is_null() ||
          j["metadata"]["resourceVersion"] != lease["metadata"]["resourceVersion"]) {
        res.status = 409;
        res.set_content(R"({"reason":"Conflict"})", "application/json");
        return;
      }
      lease = j;
      lease["metadata"]["resourceVersion"] = std::to_string(++rv);
      res.set_content(lease.dump(), "application/json");
    });
    server = std::make_unique<Running<httplib::Server>>(std::move(srv));
    RestConfig cfg;
    cfg.server = "http://127.0.0.1:" + std::to_string(server->port());
    client = std::move(*HttpClient::Create(cfg, ClientOptions{}));
  }
  std::mutex mu;
  nlohmann::json lease;
  int rv = 0;
  std::unique_ptr<Running<httplib::Server>> server;
  std::unique_ptr<HttpClient> client;
};

LeaderElectionConfig Le(const std::string& id) {
  LeaderElectionConfig c;
  c.lease_name = "gantry";
  c.identity = id;
  c.lease_duration_millis = 1000;
  c.renew_deadline_millis = 800;
  c.retry_period_millis = 100;
  return c;
}

TEST(LeaderElection, AcquireRenewExpireTakeOver) {
  FakeLeases fake;
  LeaderElector a(*fake.client, Le("a_1"));
  LeaderElector b(*fake.client, Le("b_2"));
  EXPECT_TRUE(a.TryAcquireOrRenew());
  EXPECT_FALSE(b.TryAcquireOrRenew());
  EXPECT_TRUE(a.TryAcquireOrRenew());  // renew
  EXPECT_FALSE(b.TryAcquireOrRenew());
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    EXPECT_EQ(fake.lease["spec"]["holderIdentity"], "a_1");
    EXPECT_EQ(fake.lease["spec"]["leaseTransitions"], 0);
  }
  // `a` stops renewing; `b` takes over once it has seen the same record for a lease duration.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_TRUE(b.TryAcquireOrRenew());
  std::lock_guard<std::mutex> lock(fake.mu);
  EXPECT_EQ(fake.lease["spec"]["holderIdentity"], "b_2");
  EXPECT_EQ(fake.lease["spec"]["leaseTransitions"], 1);
}

TEST(LeaderElection, RunReleasesOnStopAndReportsLoss) {
  FakeLeases fake;
  LeaderElector a(*fake.client, Le("a_1"));
  std::atomic<bool> stop{false};
  std::atomic<bool> started{false}, stopped{false};
  std::thread t([&] {
    EXPECT_TRUE(a.Run(
        &stop, [&] { started = true; }, [&] { stopped = true; }));
  });
  while (!started.load()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(a.IsLeader());
  stop.store(true);
  t.join();
  EXPECT_TRUE(stopped.load());
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    EXPECT_EQ(fake.lease["spec"]["holderIdentity"], "");  // released
  }
  // Someone else grabs the lease behind our back: renewals fail, leadership is lost.
  LeaderElector c(*fake.client, Le("c_3"));
  std::atomic<bool> stop2{false};
  std::atomic<bool> c_started{false};
  bool result = true;
  std::thread t2([&] {
    result = c.Run(
        &stop2, [&] { c_started = true; }, nullptr);
  });
  while (!c_started.load()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    fake.lease["spec"]["holderIdentity"] = "intruder";
    fake.lease["metadata"]["resourceVersion"] = std::to_string(++fake.rv);
  }
  t2.join();
  EXPECT_FALSE(result);
  EXPECT_FALSE(c.IsLeader());
}

TEST(LeaderElection, DefaultIdentityIsHostnameUnderscoreUuid) {
  std::string id = DefaultIdentity();
  EXPECT_EQ(id.rfind(Hostname() + "_", 0), 0u);
  EXPECT_EQ(id.size(), Hostname().size() + 1 + 36);
}

}  // namespace
}  // namespace gantry::client
