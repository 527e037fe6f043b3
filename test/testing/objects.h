// Test helpers: build api objects, PodInfos and NodeInfos from YAML text,
// and a FrameworkHandle over a fixed set of nodes. Test-only; aborts the
// test (GTest fatal failure via ADD_FAILURE + default object) on bad YAML.
#ifndef GANTRY_TEST_TESTING_OBJECTS_H_
#define GANTRY_TEST_TESTING_OBJECTS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gantry/handle.h"
#include "gantry/types.h"
#include "src/api/dra.h"
#include "src/api/node.h"
#include "src/api/pod.h"

namespace gantry::testing {

// Parses one YAML (or JSON) object. Missing apiVersion/kind are fine.
api::Pod ParsePod(std::string_view yaml);
api::Node ParseNode(std::string_view yaml);

// A pending pod `name` in namespace `ns` with cpu (millicores) and memory (bytes) requests.
api::Pod SimplePod(std::string_view name, int64_t milli_cpu, int64_t memory,
                   std::string_view ns = "default");
// A node with the given allocatable cpu (millicores), memory (bytes) and pods.
api::Node SimpleNode(std::string_view name, int64_t milli_cpu, int64_t memory, int64_t pods = 110,
                     std::vector<std::pair<std::string, std::string>> labels = {});

framework::PodInfoPtr MakePodInfo(api::Pod pod, int32_t priority = 0);
framework::PodInfoPtr PodInfoFromYaml(std::string_view yaml);

// A NodeInfo with `pods` placed on it.
std::unique_ptr<framework::NodeInfo> MakeNodeInfo(api::Node node,
                                                  const std::vector<api::Pod>& pods = {});

// A FrameworkHandle over owned NodeInfos; writes are recorded, not sent.
class FakeHandle : public framework::FrameworkHandle, public framework::SnapshotLister,
                   public framework::Parallelizer, public framework::ClusterWriter {
 public:
  FakeHandle() = default;
  void AddNode(std::unique_ptr<framework::NodeInfo> node);
  void SetNamespaceLabels(std::string_view ns, api::Labels labels);

  // FrameworkHandle
  const framework::SnapshotLister& Snapshot() const override { return *this; }
  framework::ClusterWriter& Writer() override { return *this; }
  const Clock& clock() const override { return clock_; }
  framework::Parallelizer& parallelizer() override { return *this; }
  const api::Labels* NamespaceLabels(api::Symbol ns) const override;
  std::string_view SchedulerName() const override { return "gantry-scheduler"; }

  // SnapshotLister
  const std::vector<framework::NodeInfo*>& NodeInfos() const override { return nodes_; }
  const std::vector<framework::NodeInfo*>& HavePodsWithAffinity() const override;
  const std::vector<framework::NodeInfo*>& HavePodsWithRequiredAntiAffinity() const override;
  const framework::NodeInfo* Get(std::string_view name) const override;

  // Parallelizer (serial)
  void Until(int n, const std::function<void(int)>& fn) override {
    for (int i = 0; i < n; ++i) fn(i);
  }
  int parallelism() const override { return 1; }

  // ClusterWriter (records)
  absl::Status BindPod(const api::Pod& pod, std::string_view node) override;
  absl::Status UpdatePodScheduledCondition(const api::Pod& pod,
                                           const framework::PodScheduledCondition& c,
                                           const std::string* nominated) override;
  absl::Status DeletePodForPreemption(const api::Pod& victim, const api::Pod& preemptor,
                                      std::string_view node) override;
  void RecordEvent(const framework::EventRecord& event) override { events.push_back(event); }
  // DRA writes (recorded; return `dra_write_status`).
  absl::StatusOr<std::string> AddResourceClaimFinalizer(const api::ResourceClaim& claim,
                                                        std::string_view finalizer) override;
  absl::StatusOr<std::string> UpdateResourceClaimStatus(
      const api::ResourceClaim& claim, const api::AllocationResult& allocation,
      const std::vector<api::ResourceClaimConsumerReference>& reserved_for) override;
  absl::StatusOr<std::string> DeallocateResourceClaim(const api::ResourceClaim& claim) override;
  // A created claim is named `generate_name` + "x" with UID "uid-" + name.
  absl::StatusOr<api::ResourceClaim> CreateResourceClaim(const api::ResourceClaim& claim,
                                                         std::string_view generate_name) override;
  absl::Status DeleteResourceClaim(const api::ResourceClaim& claim) override;
  absl::Status UpdatePodExtendedResourceClaimStatus(
      const api::Pod& pod, const framework::ExtendedResourceClaimStatus& status) override;
  // PodGroup conditions (recorded: "kind ns/name type=status/reason").
  absl::Status UpdatePodGroupCondition(const framework::PodGroupRef& group,
                                       const framework::PodGroupCondition& condition) override {
    group_conditions.push_back(group.kind + " " + group.namespace_ + "/" + group.name + " " +
                               condition.type + "=" + condition.status + "/" + condition.reason);
    return absl::OkStatus();
  }
  // Preemption support: the fake runs no plugins; a test that evaluates
  // victims overrides these with the plugins it wants.
  framework::Status RunFilterPluginsWithState(const framework::CycleState&,
                                              const framework::PodInfo&,
                                              const framework::NodeInfo&) override {
    return framework::Status::Error("FakeHandle runs no filter plugins");
  }
  framework::Status RunPreFilterExtensionAddPod(framework::CycleState&, const framework::PodInfo&,
                                                const framework::PodInfo&,
                                                const framework::NodeInfo&) override {
    return framework::Status::Error("FakeHandle runs no PreFilter extensions");
  }
  framework::Status RunPreFilterExtensionRemovePod(framework::CycleState&,
                                                   const framework::PodInfo&,
                                                   const framework::PodInfo&,
                                                   const framework::NodeInfo&) override {
    return framework::Status::Error("FakeHandle runs no PreFilter extensions");
  }
  // DRA state handed to plugins (not owned; null by default).
  void SetDra(state::DraState* dra) { dra_ = dra; }
  state::DraState* Dra() const override { return dra_; }

  FakeClock& fake_clock() { return clock_; }
  std::vector<std::pair<std::string, std::string>> bindings;  // pod key -> node
  std::vector<std::string> deleted;                            // victim keys
  std::vector<framework::EventRecord> events;
  std::vector<std::string> group_conditions;
  std::vector<std::string> claim_finalizers;  // "ns/name"
  std::vector<std::pair<std::string, api::AllocationResult>> claim_allocations;  // "ns/name" -> allocation
  std::vector<std::vector<api::ResourceClaimConsumerReference>> claim_reservations;
  std::vector<std::string> deallocated_claims;
  std::vector<api::ResourceClaim> created_claims;
  std::vector<std::string> deleted_claims;  // "ns/name"
  std::vector<std::pair<std::string, framework::ExtendedResourceClaimStatus>>
      extended_statuses;  // pod key
  absl::Status dra_write_status;
  bool fail_claim_status_writes = false;  // UpdateResourceClaimStatus fails with "api down"

 private:
  FakeClock clock_{1'700'000'000'000'000};
  std::vector<std::unique_ptr<framework::NodeInfo>> owned_;
  std::vector<framework::NodeInfo*> nodes_;
  mutable std::vector<framework::NodeInfo*> with_affinity_, with_anti_affinity_;
  std::vector<std::pair<api::Symbol, api::Labels>> namespaces_;
  state::DraState* dra_ = nullptr;
};

}  // namespace gantry::testing

#endif  // GANTRY_TEST_TESTING_OBJECTS_H_
