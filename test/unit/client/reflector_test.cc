#include "src/client/reflector.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "src/api/node.h"
#include "src/api/pod.h"
#include "src/client/client_metrics.h"
#include "src/client/discovery.h"
#include "test/unit/client/test_server.h"

namespace gantry::client {
namespace {

using testing::Running;

std::string PodJson(const std::string& name, const std::string& rv,
                    const std::string& spec = "{}") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"d","uid":"uid-)" + name +
         R"(","resourceVersion":")" + rv + R"("},"spec":)" + spec + "}";
}

TEST(Reflector, ChunkedListWatchBadObjectsAndRelistOnGone) {
  auto srv = std::make_unique<httplib::Server>();
  std::atomic<int> lists{0}, watches{0};
  std::mutex mu;
  std::vector<std::string> field_selectors;
  srv->Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lock(mu);
      field_selectors.push_back(req.get_param_value("fieldSelector"));
    }
    if (req.has_param("watch")) {
      int n = watches.fetch_add(1);
      EXPECT_EQ(req.get_param_value("allowWatchBookmarks"), "true");
      if (n == 0) {
        EXPECT_EQ(req.get_param_value("resourceVersion"), "10");
        res.set_content(
            "{\"type\":\"ADDED\",\"object\":" + PodJson("p3", "11") + "}\n" +
                "{\"type\":\"MODIFIED\",\"object\":" + PodJson("p1", "12") + "}\n" +
                "not json at all\n" +
                "{\"type\":\"MODIFIED\",\"object\":" + PodJson("p1", "13", R"({"priority":"x"})") +
                "}\n" + R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"15"}}})" +
                "\n" + "{\"type\":\"DELETED\",\"object\":" + PodJson("p2", "16") + "}\n",
            "application/json");
      } else if (n == 1) {
        EXPECT_EQ(req.get_param_value("resourceVersion"), "16");
        res.set_content(
            R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}})"
            "\n",
            "application/json");
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        res.set_content("", "application/json");
      }
      return;
    }
    int n = lists.fetch_add(1);
    EXPECT_EQ(req.get_param_value("limit"), "2");
    if (n == 0) {
      res.set_content(R"({"metadata":{"resourceVersion":"10","continue":"c1"},"items":[)" +
                          PodJson("p1", "5") + "]}",
                      "application/json");
    } else if (n == 1) {
      EXPECT_EQ(req.get_param_value("continue"), "c1");
      res.set_content(R"({"metadata":{"resourceVersion":"10"},"items":[)" + PodJson("p2", "6") +
                          "," + PodJson("bad", "7", R"({"priority":"high"})") + "]}",
                      "application/json");
    } else {
      res.set_content(
          R"({"metadata":{"resourceVersion":"20"},"items":[)" + PodJson("p1", "12") + "]}",
          "application/json");
    }
  });
  Running<httplib::Server> server(std::move(srv));
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  auto client = HttpClient::Create(cfg, ClientOptions{});
  ASSERT_TRUE(client.ok());

  std::mutex hmu;
  std::set<std::string> live;
  int adds = 0, updates = 0, deletes = 0;
  Informer<api::Pod> informer("Pod", &api::DecodePod,
                              {[&](auto p) {
                                 std::lock_guard<std::mutex> l(hmu);
                                 live.insert(p->meta.name);
                                 ++adds;
                               },
                               [&](auto, auto) {
                                 std::lock_guard<std::mutex> l(hmu);
                                 ++updates;
                               },
                               [&](auto p) {
                                 std::lock_guard<std::mutex> l(hmu);
                                 live.erase(p->meta.name);
                                 ++deletes;
                               }});
  ReflectorOptions opts;
  opts.name = "pods";
  opts.path = "/api/v1/pods";
  opts.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
  opts.page_size = 2;
  opts.backoff_initial_millis = 10;
  Reflector reflector(**client, opts, &informer);
  std::atomic<bool> stop{false};
  std::thread t([&] { reflector.Run(&stop); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (lists.load() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  stop.store(true);
  t.join();

  EXPECT_TRUE(reflector.HasSynced());
  EXPECT_EQ(lists.load(), 3);
  EXPECT_GE(reflector.stats().relists_gone.load(), 1);
  EXPECT_EQ(informer.decode_errors(), 2);  // "bad" in the list, p1@13 in the watch
  EXPECT_GE(reflector.stats().bad_events.load(), 1);
  std::lock_guard<std::mutex> l(hmu);
  EXPECT_EQ(live, (std::set<std::string>{"p1"}));  // p3 dropped by the relist, p2 deleted
  // p1, p2, p3, and p1 again from the relist: the pending p1's bad update
  // (p1@13) dropped its stale copy.
  EXPECT_EQ(adds, 4);
  EXPECT_EQ(updates, 1);  // p1@12
  EXPECT_EQ(deletes, 3);  // p2 (watch), p1 (undecodable update), p3 (relist)
  EXPECT_EQ(field_selectors.front(), "status.phase!=Succeeded,status.phase!=Failed");
}

// A continue token that expires mid-list restarts the list as a fresh
// replace: an object seen on the first attempt's first page and deleted
// before the restarted list is removed from the cache (through the delete
// handler), not kept as a ghost.
TEST(Reflector, ExpiredContinueTokenRestartsTheReplace) {
  auto srv = std::make_unique<httplib::Server>();
  std::atomic<int> lists{0};
  srv->Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("watch")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      res.set_content("", "application/json");
      return;
    }
    const int n = lists.fetch_add(1);
    const std::string cont = req.get_param_value("continue");
    if (n == 0) {  // first attempt, page 1
      EXPECT_EQ(cont, "");
      res.set_content(R"({"metadata":{"resourceVersion":"10","continue":"c1"},"items":[)" +
                          PodJson("ghost", "5") + "]}",
                      "application/json");
    } else if (n == 1) {  // page 2: the token expired
      EXPECT_EQ(cont, "c1");
      res.status = 410;
      res.set_content(R"({"kind":"Status","status":"Failure","reason":"Expired",)"
                      R"("message":"The provided continue parameter is too old","code":410})",
                      "application/json");
    } else if (n == 2) {  // restarted list, page 1 ("ghost" was deleted meanwhile)
      EXPECT_EQ(cont, "");
      res.set_content(R"({"metadata":{"resourceVersion":"20","continue":"c2"},"items":[)" +
                          PodJson("b", "18") + "]}",
                      "application/json");
    } else {
      EXPECT_EQ(cont, "c2");
      res.set_content(
          R"({"metadata":{"resourceVersion":"20"},"items":[)" + PodJson("c", "19") + "]}",
          "application/json");
    }
  });
  Running<httplib::Server> server(std::move(srv));
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  auto client = HttpClient::Create(cfg, ClientOptions{});
  ASSERT_TRUE(client.ok());
  std::mutex hmu;
  std::set<std::string> live, deleted;
  Informer<api::Pod> informer("Pod", &api::DecodePod,
                              {[&](auto p) {
                                 std::lock_guard<std::mutex> l(hmu);
                                 live.insert(p->meta.name);
                               },
                               nullptr,
                               [&](auto p) {
                                 std::lock_guard<std::mutex> l(hmu);
                                 live.erase(p->meta.name);
                                 deleted.insert(p->meta.name);
                               }});
  ReflectorOptions opts;
  opts.name = "pods";
  opts.path = "/api/v1/pods";
  opts.page_size = 1;
  Reflector reflector(**client, opts, &informer);
  std::atomic<bool> stop{false};
  std::thread t([&] { reflector.Run(&stop); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!reflector.HasSynced() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop.store(true);
  t.join();
  ASSERT_TRUE(reflector.HasSynced());
  EXPECT_EQ(lists.load(), 4);
  EXPECT_EQ(reflector.stats().relists_gone.load(), 1);
  EXPECT_EQ(reflector.last_resource_version(), "20");
  std::lock_guard<std::mutex> l(hmu);
  EXPECT_EQ(live, (std::set<std::string>{"b", "c"}));
  EXPECT_EQ(deleted, (std::set<std::string>{"ghost"}));
  EXPECT_EQ(informer.size(), 2u);
}

// Waits up to `millis` for `pred`.
template <typename Pred>
bool WaitFor(Pred pred, int millis) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(millis);
  while (!pred() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

std::string Event(const std::string& type, const std::string& object) {
  return "{\"type\":\"" + type + "\",\"object\":" + object + "}\n";
}

// A watch that is accepted and then sends nothing (no event, no bookmark,
// no FIN) is restarted after the stall timeout, from the last
// resourceVersion (no relist), and counted.
TEST(Reflector, StalledWatchIsRestartedAndCounted) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto srv = std::make_unique<httplib::Server>();
  std::atomic<int> lists{0}, watches{0};
  std::mutex mu;
  std::vector<std::string> watch_rvs;
  srv->Get("/api/v1/pods", [&, release](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("watch")) {
      lists.fetch_add(1);
      res.set_content(
          R"({"metadata":{"resourceVersion":"10"},"items":[)" + PodJson("a", "9") + "]}",
          "application/json");
      return;
    }
    EXPECT_EQ(req.get_param_value("allowWatchBookmarks"), "true");
    {
      std::lock_guard<std::mutex> lock(mu);
      watch_rvs.push_back(req.get_param_value("resourceVersion"));
    }
    if (watches.fetch_add(1) == 0) {
      testing::HoldOpenWithoutData(res, release);
      return;
    }
    res.set_content(Event("ADDED", PodJson("b", "11")), "application/json");
  });
  Running<httplib::Server> server(std::move(srv));
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  metrics::Registry registry;
  ClientMetrics counted(registry);
  ClientOptions co;
  co.metrics = &counted;
  auto client = HttpClient::Create(cfg, co);
  ASSERT_TRUE(client.ok());
  std::atomic<int> adds{0};
  Informer<api::Pod> informer("Pod", &api::DecodePod,
                              {[&](auto) { adds.fetch_add(1); }, nullptr, nullptr});
  ReflectorOptions opts;
  opts.name = "pods-stall-test";
  opts.path = "/api/v1/pods";
  opts.stall_timeout_millis = 300;
  opts.backoff_initial_millis = 10;
  Reflector reflector(**client, opts, &informer);
  std::atomic<bool> stop{false};
  const auto t0 = std::chrono::steady_clock::now();
  std::thread t([&] { reflector.Run(&stop); });
  const bool restarted = WaitFor([&] { return watches.load() >= 2; }, 5000);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(WaitFor([&] { return adds.load() == 2; }, 5000));
  stop.store(true);
  release->store(true);
  t.join();
  ASSERT_TRUE(restarted) << "the stalled watch was never restarted";
  // Stall timeout (300 ms) + the transfer's once-a-second progress check + backoff.
  EXPECT_LT(ms, 300 + 1500);
  EXPECT_EQ(lists.load(), 1);
  EXPECT_EQ(reflector.stats().stalls.load(), 1);
  EXPECT_EQ(counted.watch_stalls.With({"pods-stall-test"}).Value(), 1);
  EXPECT_EQ(counted.watch_restarts.With({"pods-stall-test", "stall"}).Value(), 1);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_GE(watch_rvs.size(), 2u);
  EXPECT_EQ(watch_rvs[0], "10");
  EXPECT_EQ(watch_rvs[1], "10");
}

// A watch event over the client's line limit is skipped (not stored), the
// watch ends, and the reflector relists: the relist brings what the
// skipped event and the rest of that stream carried.
TEST(Reflector, OversizedWatchEventIsSkippedAndRelists) {
  auto srv = std::make_unique<httplib::Server>();
  std::atomic<int> lists{0}, watches{0};
  const std::string big =
      PodJson("big", "12", R"({"priority":1,"x":")" + std::string(10'000, 'x') + "\"}");
  srv->Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("watch")) {
      if (lists.fetch_add(1) == 0) {
        res.set_content(
            R"({"metadata":{"resourceVersion":"10"},"items":[)" + PodJson("a", "9") + "]}",
            "application/json");
      } else {
        res.set_content(R"({"metadata":{"resourceVersion":"13"},"items":[)" + PodJson("a", "11") +
                            "," + PodJson("c", "13") + "]}",
                        "application/json");
      }
      return;
    }
    if (watches.fetch_add(1) == 0) {
      res.set_content(Event("MODIFIED", PodJson("a", "11")) + Event("ADDED", big) +
                          Event("ADDED", PodJson("c", "13")),
                      "application/json");
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    res.set_content("", "application/json");
  });
  Running<httplib::Server> server(std::move(srv));
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  metrics::Registry registry;
  ClientMetrics counted(registry);
  ClientOptions co;
  co.max_line_bytes = 2048;
  co.metrics = &counted;
  auto client = HttpClient::Create(cfg, co);
  ASSERT_TRUE(client.ok());
  std::mutex hmu;
  std::set<std::string> live;
  Informer<api::Pod> informer("Pod", &api::DecodePod,
                              {[&](auto p) {
                                 std::lock_guard<std::mutex> l(hmu);
                                 live.insert(p->meta.name);
                               },
                               nullptr, nullptr});
  ReflectorOptions opts;
  opts.name = "pods-oversized-test";
  opts.path = "/api/v1/pods";
  opts.backoff_initial_millis = 10;
  Reflector reflector(**client, opts, &informer);
  std::atomic<bool> stop{false};
  std::thread t([&] { reflector.Run(&stop); });
  const bool relisted = WaitFor([&] { return lists.load() >= 2 && watches.load() >= 2; }, 5000);
  stop.store(true);
  t.join();
  ASSERT_TRUE(relisted);
  EXPECT_EQ(lists.load(), 2);
  EXPECT_EQ(reflector.stats().events_too_large.load(), 1);
  EXPECT_EQ(counted.watch_events_too_large.With({"pods-oversized-test"}).Value(), 1);
  EXPECT_EQ(counted.watch_restarts.With({"pods-oversized-test", "event_too_large"}).Value(), 1);
  EXPECT_EQ(reflector.last_resource_version(), "13");
  std::lock_guard<std::mutex> l(hmu);
  EXPECT_EQ(live, (std::set<std::string>{"a", "c"}));
  EXPECT_EQ(informer.Get("d/a")->meta.resource_version, "11");
}

// A LIST page over the client's response size limit is asked for again
// in halves (same continue token), and the list still completes.
TEST(Reflector, OversizedListPageIsRefetchedInSmallerPages) {
  auto srv = std::make_unique<httplib::Server>();
  std::mutex mu;
  std::vector<std::string> limits;
  const std::string pad(1500, 'p');
  srv->Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("watch")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      res.set_content("", "application/json");
      return;
    }
    const int limit = std::stoi(req.get_param_value("limit"));
    const int from = req.has_param("continue") ? std::stoi(req.get_param_value("continue")) : 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      limits.push_back(req.get_param_value("limit") + "@" + std::to_string(from));
    }
    const int total = 5;
    std::string items;
    int i = from;
    for (; i < total && i < from + limit; ++i) {
      if (!items.empty()) items += ",";
      items += PodJson("p" + std::to_string(i), "5", R"({"x":")" + pad + "\"}");
    }
    const std::string cont = i < total ? R"(,"continue":")" + std::to_string(i) + "\"" : "";
    res.set_content(
        R"({"metadata":{"resourceVersion":"10")" + cont + "},\"items\":[" + items + "]}",
        "application/json");
  });
  Running<httplib::Server> server(std::move(srv));
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  metrics::Registry registry;
  ClientMetrics counted(registry);
  ClientOptions co;
  co.max_response_bytes = 4096;  // two pods fit, four do not
  co.metrics = &counted;
  auto client = HttpClient::Create(cfg, co);
  ASSERT_TRUE(client.ok());
  Informer<api::Pod> informer("Pod", &api::DecodePod, {});
  ReflectorOptions opts;
  opts.name = "pods";
  opts.path = "/api/v1/pods";
  opts.page_size = 4;
  Reflector reflector(**client, opts, &informer);
  std::atomic<bool> stop{false};
  std::thread t([&] { reflector.Run(&stop); });
  const bool synced = WaitFor([&] { return reflector.HasSynced(); }, 5000);
  stop.store(true);
  t.join();
  ASSERT_TRUE(synced);
  EXPECT_EQ(informer.size(), 5u);
  EXPECT_EQ(counted.responses_too_large.With({"pods"}).Value(), 1);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(limits, (std::vector<std::string>{"4@0", "2@0", "2@2", "2@4"}));
}

TEST(Discovery, ServedGroupVersionsAndResources) {
  auto srv = std::make_unique<httplib::Server>();
  srv->Get("/api", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"versions":["v1"]})", "application/json");
  });
  srv->Get("/apis", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        R"({"groups":[{"name":"policy","versions":[{"groupVersion":"policy/v1","version":"v1"}]},
      {"name":"resource.k8s.io","versions":[{"groupVersion":"resource.k8s.io/v1","version":"v1"}]}]})",
        "application/json");
  });
  srv->Get("/apis/resource.k8s.io/v1", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"resources":[{"name":"resourceclaims"},{"name":"resourceslices"}]})",
                    "application/json");
  });
  srv->Get("/api/v1", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"resources":[{"name":"pods"},{"name":"pods/binding"}]})",
                    "application/json");
  });
  Running<httplib::Server> server(std::move(srv));
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  auto client = HttpClient::Create(cfg, ClientOptions{});
  ASSERT_TRUE(client.ok());
  absl::StatusOr<Discovery> d =
      Discovery::Fetch(**client, {"v1", "resource.k8s.io/v1", "scheduling.k8s.io/v1beta1"});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->ServesGroupVersion("policy/v1"));
  EXPECT_FALSE(d->ServesGroupVersion("scheduling.k8s.io/v1beta1"));
  EXPECT_TRUE(d->ServesResource("resource.k8s.io/v1", "resourceslices"));
  EXPECT_TRUE(d->ServesResource("v1", "pods/binding"));
  EXPECT_EQ(Discovery::PathPrefix("v1"), "/api/v1");
  EXPECT_EQ(Discovery::PathPrefix("policy/v1"), "/apis/policy/v1");
}

// A pending pod whose update cannot be decoded is not kept as its stale copy
// (it would be scheduled from it); a bound pod keeps counting on its node.
TEST(Informer, UndecodableUpdateDropsAPendingPodButNotABoundOne) {
  struct Case {
    const char* name;
    const char* node_name;  // of the readable first version
    bool want_deleted;
  };
  const Case cases[] = {{"pending", "", true}, {"bound", "n1", false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> deleted;
    Informer<api::Pod> informer("Pod", &api::DecodePod, {nullptr, nullptr, [&](auto p) {
                                                           deleted.push_back(p->meta.name);
                                                         }});
    simdjson::dom::parser parser;
    const std::string good =
        std::string(
            R"({"metadata":{"name":"p","namespace":"ns","uid":"u1","resourceVersion":"1"},)") +
        R"("spec":{"nodeName":")" + c.node_name + R"(","containers":[{"name":"c"}]}})";
    // A value scheduling must read and cannot (a pending pod fails; a bound
    // one decodes tolerantly and keeps its node).
    const std::string bad =
        std::string(
            R"({"metadata":{"name":"p","namespace":"ns","uid":"u1","resourceVersion":"2"},)") +
        R"("spec":{"nodeName":")" + c.node_name +
        R"(","preemptionPolicy":"Sometimes","containers":[{"name":"c"}]}})";
    api::JsonValue v;
    ASSERT_EQ(parser.parse(good).get(v), simdjson::SUCCESS);
    informer.Apply("ADDED", v);
    ASSERT_EQ(informer.size(), 1u);
    simdjson::dom::parser parser2;
    ASSERT_EQ(parser2.parse(bad).get(v), simdjson::SUCCESS);
    informer.Apply("MODIFIED", v);
    EXPECT_EQ(informer.decode_errors(), c.want_deleted ? 1 : 0);
    EXPECT_EQ(deleted.size(), c.want_deleted ? 1u : 0u);
    EXPECT_EQ(informer.size(), c.want_deleted ? 0u : 1u);
  }
}

// Items() is what the admin service reads from another thread while the
// reflector writes: each call sees whole objects, and a handler may read the
// informer it is called from (the store's lock is not held then).
TEST(Informer, ItemsAreReadableWhileTheReflectorWrites) {
  std::vector<size_t> seen_in_handler;
  Informer<api::Node>* self = nullptr;
  Informer<api::Node> informer(
      "Node", &api::DecodeNode,
      {[&](auto) { seen_in_handler.push_back(self->Items().size()); }, nullptr, nullptr});
  self = &informer;
  auto node = [](int i, int rv) {
    return "{\"metadata\":{\"name\":\"n" + std::to_string(i) + "\",\"uid\":\"u" +
           std::to_string(i) + "\",\"resourceVersion\":\"" + std::to_string(rv) + "\"}}";
  };
  std::atomic<bool> done{false};
  std::atomic<int64_t> reads{0};
  std::thread reader([&] {
    do {
      for (const auto& n : informer.Items()) EXPECT_FALSE(n->meta.name.empty());
      reads.fetch_add(1);
    } while (!done.load());
  });
  simdjson::dom::parser parser;
  for (int round = 0; round < 50; ++round) {
    informer.BeginList();
    for (int i = 0; i < 20; ++i) {
      api::JsonValue v;
      ASSERT_EQ(parser.parse(node(i + round % 2, round + 1)).get(v), simdjson::SUCCESS);
      informer.ListItem(v);
    }
    informer.EndList();
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(informer.Items().size(), 20u);
  EXPECT_GT(reads.load(), 0);
  ASSERT_FALSE(seen_in_handler.empty());
  EXPECT_EQ(seen_in_handler.front(), 1u);  // the first add sees itself
}

}  // namespace
}  // namespace gantry::client
