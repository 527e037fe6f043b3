#include "test/testing/objects.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "simdjson.h"
#include "src/api/yaml.h"

namespace gantry::testing {
namespace {

std::string ToJson(std::string_view yaml) {
  auto docs = api::ParseYamlDocuments(yaml);
  if (!docs.ok() || docs->empty()) {
    ADD_FAILURE() << "bad test YAML: " << docs.status();
    return "{}";
  }
  return (*docs)[0].json();
}

}  // namespace

api::Pod ParsePod(std::string_view yaml) {
  simdjson::dom::parser parser;
  std::string json = ToJson(yaml);
  api::JsonValue root;
  if (parser.parse(json).get(root) != simdjson::SUCCESS) {
    ADD_FAILURE() << "bad test JSON";
    return api::Pod();
  }
  auto pod = api::DecodePod(root);
  if (!pod.ok()) {
    ADD_FAILURE() << pod.status();
    return api::Pod();
  }
  if (pod->meta.uid.empty()) pod->meta.uid = "uid-" + pod->meta.Key();
  return *std::move(pod);
}

api::Node ParseNode(std::string_view yaml) {
  simdjson::dom::parser parser;
  std::string json = ToJson(yaml);
  api::JsonValue root;
  if (parser.parse(json).get(root) != simdjson::SUCCESS) {
    ADD_FAILURE() << "bad test JSON";
    return api::Node();
  }
  auto node = api::DecodeNode(root);
  if (!node.ok()) {
    ADD_FAILURE() << node.status();
    return api::Node();
  }
  return *std::move(node);
}

api::Pod SimplePod(std::string_view name, int64_t milli_cpu, int64_t memory, std::string_view ns) {
  api::Pod pod;
  pod.meta.name = std::string(name);
  pod.meta.namespace_ = api::Symbol::Intern(ns);
  pod.meta.uid = "uid-" + pod.meta.Key();
  pod.scheduler_name = api::Symbol::Intern("gantry-scheduler");
  const api::ResourceNames& n = api::ResourceNames::Get();
  if (milli_cpu) pod.requests.Set(n.cpu, milli_cpu);
  if (memory) pod.requests.Set(n.memory, memory);
  return pod;
}

api::Node SimpleNode(std::string_view name, int64_t milli_cpu, int64_t memory, int64_t pods,
                     std::vector<std::pair<std::string, std::string>> labels) {
  api::Node node;
  node.meta.name = std::string(name);
  const api::ResourceNames& n = api::ResourceNames::Get();
  node.allocatable.Set(n.cpu, milli_cpu);
  node.allocatable.Set(n.memory, memory);
  node.allocatable.Set(n.pods, pods);
  node.capacity = node.allocatable;
  for (auto& [k, v] : labels) {
    node.meta.labels.emplace_back(api::Symbol::Intern(k), api::Symbol::Intern(v));
  }
  std::sort(node.meta.labels.begin(), node.meta.labels.end(),
            [](const auto& a, const auto& b) { return a.first.view() < b.first.view(); });
  return node;
}

framework::PodInfoPtr MakePodInfo(api::Pod pod, int32_t priority) {
  if (pod.priority) priority = *pod.priority;
  return framework::PodInfo::Create(std::make_shared<const api::Pod>(std::move(pod)), priority);
}

framework::PodInfoPtr PodInfoFromYaml(std::string_view yaml) { return MakePodInfo(ParsePod(yaml)); }

std::unique_ptr<framework::NodeInfo> MakeNodeInfo(api::Node node, const std::vector<api::Pod>& pods) {
  auto ni = std::make_unique<framework::NodeInfo>(std::make_shared<const api::Node>(std::move(node)));
  for (const api::Pod& p : pods) ni->AddPod(MakePodInfo(p));
  return ni;
}

void FakeHandle::AddNode(std::unique_ptr<framework::NodeInfo> node) {
  nodes_.push_back(node.get());
  owned_.push_back(std::move(node));
}

void FakeHandle::SetNamespaceLabels(std::string_view ns, api::Labels labels) {
  std::sort(labels.begin(), labels.end(),
            [](const auto& a, const auto& b) { return a.first.view() < b.first.view(); });
  namespaces_.emplace_back(api::Symbol::Intern(ns), std::move(labels));
}

const api::Labels* FakeHandle::NamespaceLabels(api::Symbol ns) const {
  for (const auto& [name, labels] : namespaces_) {
    if (name == ns) return &labels;
  }
  return nullptr;
}

const std::vector<framework::NodeInfo*>& FakeHandle::HavePodsWithAffinity() const {
  with_affinity_.clear();
  for (auto* n : nodes_) {
    if (!n->pods_with_affinity().empty()) with_affinity_.push_back(n);
  }
  return with_affinity_;
}

const std::vector<framework::NodeInfo*>& FakeHandle::HavePodsWithRequiredAntiAffinity() const {
  with_anti_affinity_.clear();
  for (auto* n : nodes_) {
    if (!n->pods_with_required_anti_affinity().empty()) with_anti_affinity_.push_back(n);
  }
  return with_anti_affinity_;
}

const framework::NodeInfo* FakeHandle::Get(std::string_view name) const {
  for (auto* n : nodes_) {
    if (n->name() == name) return n;
  }
  return nullptr;
}

absl::Status FakeHandle::BindPod(const api::Pod& pod, std::string_view node) {
  bindings.emplace_back(pod.meta.Key(), std::string(node));
  return absl::OkStatus();
}

absl::Status FakeHandle::UpdatePodScheduledCondition(const api::Pod&, const framework::PodScheduledCondition&,
                                                     const std::string*) {
  return absl::OkStatus();
}

absl::Status FakeHandle::DeletePodForPreemption(const api::Pod& victim, const api::Pod&, std::string_view) {
  deleted.push_back(victim.meta.Key());
  return absl::OkStatus();
}

absl::StatusOr<std::string> FakeHandle::AddResourceClaimFinalizer(const api::ResourceClaim& claim,
                                                                  std::string_view) {
  if (!dra_write_status.ok()) return dra_write_status;
  claim_finalizers.push_back(claim.meta.Key());
  return std::string();
}

absl::StatusOr<std::string> FakeHandle::UpdateResourceClaimStatus(
    const api::ResourceClaim& claim, const api::AllocationResult& allocation,
    const std::vector<api::ResourceClaimConsumerReference>& reserved_for) {
  if (!dra_write_status.ok()) return dra_write_status;
  if (fail_claim_status_writes) return absl::UnavailableError("api down");
  claim_allocations.emplace_back(claim.meta.Key(), allocation);
  claim_reservations.push_back(reserved_for);
  return std::string();
}

absl::StatusOr<std::string> FakeHandle::DeallocateResourceClaim(const api::ResourceClaim& claim) {
  if (!dra_write_status.ok()) return dra_write_status;
  deallocated_claims.push_back(claim.meta.Key());
  return std::string();
}

absl::StatusOr<api::ResourceClaim> FakeHandle::CreateResourceClaim(const api::ResourceClaim& claim,
                                                                   std::string_view generate_name) {
  if (!dra_write_status.ok()) return dra_write_status;
  api::ResourceClaim created = claim;
  created.meta.name = std::string(generate_name) + "x";
  created.meta.uid = "uid-" + created.meta.name;
  created_claims.push_back(created);
  return created;
}

absl::Status FakeHandle::DeleteResourceClaim(const api::ResourceClaim& claim) {
  if (!dra_write_status.ok()) return dra_write_status;
  deleted_claims.push_back(claim.meta.Key());
  return absl::OkStatus();
}

absl::Status FakeHandle::UpdatePodExtendedResourceClaimStatus(
    const api::Pod& pod, const framework::ExtendedResourceClaimStatus& status) {
  if (!dra_write_status.ok()) return dra_write_status;
  extended_statuses.emplace_back(pod.meta.Key(), status);
  return absl::OkStatus();
}

}  // namespace gantry::testing
