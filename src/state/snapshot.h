// The per-cycle, immutable view of all nodes (design rule 1). Owned by the
// scheduling loop and refreshed by ClusterState::UpdateSnapshot at the start
// of each cycle; plugins read it through framework::SnapshotLister.
#ifndef GANTRY_SRC_STATE_SNAPSHOT_H_
#define GANTRY_SRC_STATE_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gantry/handle.h"
#include "gantry/types.h"
#include "src/api/policy.h"

namespace gantry::state {

class Snapshot final : public framework::SnapshotLister {
 public:
  const std::vector<framework::NodeInfo*>& NodeInfos() const override { return list_; }
  const std::vector<framework::NodeInfo*>& HavePodsWithAffinity() const override {
    return with_affinity_;
  }
  const std::vector<framework::NodeInfo*>& HavePodsWithRequiredAntiAffinity() const override {
    return with_required_anti_affinity_;
  }
  const framework::NodeInfo* Get(std::string_view node_name) const override;
  framework::NodeInfo* GetMutable(std::string_view node_name);
  const std::vector<framework::NominatedPod>& NominatedPods() const override { return nominated_; }
  // Kept by scheduler::NominatedRoom, which adds the pods to the NodeInfos.
  std::vector<framework::NominatedPod>& mutable_nominated_pods() { return nominated_; }

  size_t size() const { return list_.size(); }
  // Generations()[i] == NodeInfos()[i]->generation(), kept in step by the
  // NodeInfos themselves (NodeInfo::MirrorGenerationTo): one dense array to
  // scan instead of every NodeInfo.
  const std::vector<uint64_t>& Generations() const { return generations_; }
  // Changes (to a value no other snapshot had) whenever UpdateSnapshot adds
  // or removes a node or replaces a node's Node object (labels, taints,
  // allocatable, images); not when only pods change. What is derived from
  // the nodes alone (e.g. topology domains) stays valid while it holds.
  uint64_t nodes_version() const { return nodes_version_; }
  const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& PodDisruptionBudgets() const {
    return pdbs_;
  }
  // Labels of a namespace as of the last update (nullptr if unknown).
  const api::Labels* NamespaceLabels(api::Symbol ns) const {
    auto it = namespaces_.find(ns);
    return it == namespaces_.end() ? nullptr : &it->second;
  }

 private:
  friend class ClusterState;
  // Rebuilds the ordered lists after nodes changed.
  void RebuildLists(const std::vector<std::string>& order);

  absl::flat_hash_map<std::string, std::unique_ptr<framework::NodeInfo>> nodes_;
  std::vector<framework::NodeInfo*> list_;
  std::vector<uint64_t> generations_;  // by position in list_
  std::vector<framework::NodeInfo*> with_affinity_;
  std::vector<framework::NodeInfo*> with_required_anti_affinity_;
  absl::flat_hash_map<api::Symbol, api::Labels> namespaces_;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs_;
  std::vector<framework::NominatedPod> nominated_;
  uint64_t nodes_version_ = 0;
};

}  // namespace gantry::state

#endif  // GANTRY_SRC_STATE_SNAPSHOT_H_
