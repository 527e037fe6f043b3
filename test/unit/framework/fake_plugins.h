// Small plugins for testing the framework runtime and the scheduler without
// depending on the built-in plugins.
#ifndef GANTRY_TEST_UNIT_FRAMEWORK_FAKE_PLUGINS_H_
#define GANTRY_TEST_UNIT_FRAMEWORK_FAKE_PLUGINS_H_

#include <atomic>
#include <string>

#include "gantry/plugin.h"
#include "gantry/registry.h"
#include "src/framework/framework.h"

namespace gantry::testing {

// QueueSort: priority desc, then timestamp.
class FakeSort final : public framework::QueueSortPlugin {
 public:
  std::string_view Name() const override { return "FakeSort"; }
  bool Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override {
    if (a.pod_info->priority != b.pod_info->priority) return a.pod_info->priority > b.pod_info->priority;
    return a.timestamp_micros < b.timestamp_micros;
  }
};

// Filter: CPU must fit ("Insufficient cpu"); PreFilter rejects pods labelled reject=prefilter.
class FakeFit final : public framework::PreFilterPlugin, public framework::FilterPlugin,
                      public framework::EnqueueExtensions {
 public:
  std::string_view Name() const override { return "FakeFit"; }
  framework::Status PreFilter(framework::CycleState&, const framework::PodInfo& pod,
                              const std::vector<framework::NodeInfo*>&,
                              framework::PreFilterResult* result) override {
    if (auto v = api::FindLabel(pod.p().meta.labels, "reject"); v && v->view() == "prefilter") {
      return framework::Status::Unresolvable("pod asked to be rejected");
    }
    if (auto v = api::FindLabel(pod.p().meta.labels, "only-node")) {
      result->node_names = absl::flat_hash_set<std::string>{std::string(v->view())};
    }
    return framework::Status();
  }
  framework::Status Filter(const framework::CycleState&, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override {
    calls.fetch_add(1);
    if (node.requested().milli_cpu + pod.requests.milli_cpu > node.allocatable().milli_cpu) {
      return framework::Status::Unschedulable("Insufficient cpu");
    }
    return framework::Status();
  }
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override {
    return {{framework::ClusterEvent{framework::EventResource::kNode, framework::kAdd, "NodeAdd"}, nullptr},
            {framework::ClusterEvent{framework::EventResource::kAssignedPod, framework::kDelete, "PodDelete"},
             nullptr}};
  }
  std::atomic<int> calls{0};
};

// Score: the node's "score" label value (0..100), no normalisation.
class FakeLabelScore final : public framework::ScorePlugin {
 public:
  std::string_view Name() const override { return "FakeLabelScore"; }
  framework::Status Score(const framework::CycleState&, const framework::PodInfo&,
                          const framework::NodeInfo& node, int64_t* score) override {
    *score = 0;
    if (auto v = api::FindLabel(node.node()->meta.labels, "score")) *score = std::stoll(v->str());
    return framework::Status();
  }
};

// Bind: records through the handle's writer.
class FakeBinder final : public framework::BindPlugin {
 public:
  explicit FakeBinder(framework::FrameworkHandle& h) : handle_(h) {}
  std::string_view Name() const override { return "FakeBinder"; }
  framework::Status Bind(framework::CycleState&, const framework::PodInfo& pod, std::string_view node) override {
    return framework::Status::FromAbsl(handle_.Writer().BindPod(pod.p(), node));
  }

 private:
  framework::FrameworkHandle& handle_;
};

inline void RegisterFakePlugins(framework::Registry& r) {
  auto simple = [&](std::string name, auto make) {
    (void)r.Register(framework::PluginRegistration{
        name,
        [make](api::Decoder&, api::JsonValue, framework::FrameworkHandle& h)
            -> absl::StatusOr<std::unique_ptr<framework::Plugin>> { return make(h); },
        nullptr, ""});
  };
  simple("FakeSort", [](framework::FrameworkHandle&) { return std::unique_ptr<framework::Plugin>(new FakeSort()); });
  simple("FakeFit", [](framework::FrameworkHandle&) { return std::unique_ptr<framework::Plugin>(new FakeFit()); });
  simple("FakeLabelScore",
         [](framework::FrameworkHandle&) { return std::unique_ptr<framework::Plugin>(new FakeLabelScore()); });
  simple("FakeBinder",
         [](framework::FrameworkHandle& h) { return std::unique_ptr<framework::Plugin>(new FakeBinder(h)); });
}

inline framework::ProfileSpec FakeProfile() {
  return framework::ProfileSpec::MultiPoint(
      "gantry-scheduler", {{"FakeSort", 1, ""}, {"FakeFit", 1, ""}, {"FakeLabelScore", 1, ""}, {"FakeBinder", 1, ""}});
}

}  // namespace gantry::testing

#endif  // GANTRY_TEST_UNIT_FRAMEWORK_FAKE_PLUGINS_H_
