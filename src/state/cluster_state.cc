#include "src/state/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <string_view>

#include "gantry/util/strings.h"

namespace gantry::state {

std::string GroupKeyOf(const api::Pod& pod) {
  if (!pod.pod_group_name.empty()) {
    return gantry::StrCat(pod.meta.namespace_.view(), "/", pod.pod_group_name.view());
  }
  static const api::Symbol kLabel = api::Symbol::Intern("scheduling.x-k8s.io/pod-group");
  if (auto v = api::FindLabel(pod.meta.labels, kLabel); v && !v->empty()) {
    return gantry::StrCat(pod.meta.namespace_.view(), "/", v->view());
  }
  return "";
}

namespace {

// The fields native PodGroups and CompositePodGroups share; `scheduled_type`
// is the condition type that marks the group as initially scheduled.
template <typename Group>
GroupInfo NativeGroupInfo(const Group& g, int32_t gang_min, std::string_view scheduled_type) {
  GroupInfo info;
  info.key = g.meta.Key();
  info.native = true;
  info.gang = g.spec.scheduling_policy.IsGang();
  info.min_count = info.gang ? gang_min : 1;
  if (!g.spec.scheduling_constraints.topology.empty()) {
    info.topology_key = g.spec.scheduling_constraints.topology.front().key;
  }
  info.priority = g.spec.priority;
  info.priority_class_name = g.spec.priority_class_name;
  info.disruption_all = g.spec.disruption_mode == api::DisruptionMode::kAll;
  info.preemption_policy = g.spec.preemption_policy;
  info.uid = g.meta.uid;
  info.generation = g.meta.generation;
  if (const api::Condition* c = api::FindCondition(g.status.conditions, scheduled_type)) {
    info.initially_scheduled = c->status == api::ConditionStatus::kTrue;
  }
  if (!g.spec.parent_composite_pod_group_name.empty()) {
    info.parent = gantry::StrCat(g.meta.namespace_.view(), "/", g.spec.parent_composite_pod_group_name);
  }
  return info;
}

}  // namespace

GroupInfo GroupInfoFrom(const api::PodGroup& g) {
  GroupInfo info = NativeGroupInfo(g, g.spec.scheduling_policy.min_count, "PodGroupInitiallyScheduled");
  info.resource_claims = g.spec.resource_claims;
  return info;
}

GroupInfo GroupInfoFrom(const api::CoschedulingPodGroup& g) {
  GroupInfo info;
  info.key = g.meta.Key();
  info.native = false;
  info.gang = g.spec.min_member > 1;
  info.min_count = std::max(1, g.spec.min_member);
  info.uid = g.meta.uid;
  info.generation = g.meta.generation;
  return info;
}

GroupInfo GroupInfoFrom(const api::CompositePodGroup& g) {
  GroupInfo info =
      NativeGroupInfo(g, g.spec.scheduling_policy.min_group_count, "CompositePodGroupInitiallyScheduled");
  info.composite = true;
  return info;
}

bool InGroup(const api::Pod& pod, std::string_view key) {
  const std::string_view ns = pod.meta.namespace_.view();
  if (key.size() <= ns.size() || key.substr(0, ns.size()) != ns || key[ns.size()] != '/') return false;
  const std::string_view name = key.substr(ns.size() + 1);
  if (!pod.pod_group_name.empty()) return pod.pod_group_name.view() == name;
  static const api::Symbol kLabel = api::Symbol::Intern("scheduling.x-k8s.io/pod-group");
  auto v = api::FindLabel(pod.meta.labels, kLabel);
  return v && v->view() == name;
}

void ClusterState::SetCompositeGroup(GroupInfo group) {
  absl::MutexLock lock(&mu_);
  std::string key = group.key;
  composites_[key] = std::move(group);
}

void ClusterState::RemoveCompositeGroup(std::string_view key) {
  absl::MutexLock lock(&mu_);
  composites_.erase(std::string(key));
}

std::optional<GroupInfo> ClusterState::FindCompositeGroup(std::string_view key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = composites_.find(std::string(key));
  if (it == composites_.end()) return std::nullopt;
  return it->second;
}

std::vector<GroupInfo> ClusterState::ChildGroups(std::string_view key) const {
  std::vector<GroupInfo> leaves, composites;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [k, g] : groups_) {
      if (g.parent == key) leaves.push_back(g);
    }
    for (const auto& [k, g] : composites_) {
      if (g.parent == key) composites.push_back(g);
    }
  }
  auto by_key = [](const GroupInfo& a, const GroupInfo& b) { return a.key < b.key; };
  std::sort(leaves.begin(), leaves.end(), by_key);
  std::sort(composites.begin(), composites.end(), by_key);
  for (GroupInfo& c : composites) leaves.push_back(std::move(c));
  return leaves;
}

void ClusterState::SetGroup(GroupInfo group) {
  absl::MutexLock lock(&mu_);
  std::string key = group.key;
  groups_[key] = std::move(group);
}

void ClusterState::RemoveGroup(std::string_view key) {
  absl::MutexLock lock(&mu_);
  groups_.erase(std::string(key));
}

std::optional<GroupInfo> ClusterState::FindGroup(std::string_view key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = groups_.find(std::string(key));
  if (it == groups_.end()) return std::nullopt;
  return it->second;
}

int32_t ClusterState::PlacedMembers(std::string_view key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = placed_members_.find(std::string(key));
  return it == placed_members_.end() ? 0 : it->second;
}

std::vector<std::string> ClusterState::PlacedMemberNodes(std::string_view key) const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::string> out;
  if (!placed_members_.contains(std::string(key))) return out;
  for (const auto& [uid, ps] : pods_) {
    if (InGroup(ps.info->p(), key)) out.push_back(ps.node);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ClusterState::ClusterState(const Clock& clock, int64_t assumed_ttl_micros)
    : clock_(clock), assumed_ttl_micros_(assumed_ttl_micros) {}

framework::NodeInfo* ClusterState::GetOrCreateNodeLocked(const std::string& name) {
  auto it = nodes_.find(name);
  if (it != nodes_.end()) return it->second.get();
  auto ni = std::make_unique<framework::NodeInfo>();
  framework::NodeInfo* raw = ni.get();
  nodes_.emplace(name, std::move(ni));
  return raw;
}

void ClusterState::UpdateImagesLocked(const api::Node* old_node, const api::Node* new_node) {
  auto apply = [&](const api::Node* n, int delta) {
    if (n == nullptr) return;
    for (const api::ContainerImage& img : n->images) {
      for (api::Symbol name : img.names) {
        framework::ImageStateSummary& s = images_[name];
        s.size_bytes = img.size_bytes;
        s.num_nodes += delta;
        if (s.num_nodes <= 0) images_.erase(name);
      }
    }
  };
  apply(old_node, -1);
  apply(new_node, +1);
}

void ClusterState::AddOrUpdateNode(std::shared_ptr<const api::Node> node) {
  absl::MutexLock lock(&mu_);
  const std::string name = node->meta.name;
  framework::NodeInfo* ni = GetOrCreateNodeLocked(name);
  if (ni->node() == nullptr) {
    // New, or a placeholder that only held pods: now schedulable, append.
    node_order_.push_back(name);
    order_changed_ = true;
  }
  UpdateImagesLocked(ni->node(), node.get());
  ni->SetNode(std::move(node));
  dirty_nodes_.insert(name);
}

void ClusterState::RemoveNode(std::string_view name) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(std::string(name));
  if (it == nodes_.end()) return;
  UpdateImagesLocked(it->second->node(), nullptr);
  // Pods still on the node stay in the cache (as upstream): the node entry
  // keeps them with no Node object until they are deleted. Without the Node
  // it is not schedulable, so it leaves the snapshot.
  if (!it->second->pods().empty()) {
    it->second->SetNode(nullptr);
  } else {
    nodes_.erase(it);
  }
  node_order_.erase(std::remove(node_order_.begin(), node_order_.end(), std::string(name)),
                    node_order_.end());
  order_changed_ = true;
  dirty_nodes_.insert(std::string(name));
}

void ClusterState::AddPodLocked(const framework::PodInfoPtr& info, const std::string& node) {
  framework::NodeInfo* ni = nullptr;
  auto it = nodes_.find(node);
  if (it != nodes_.end()) {
    ni = it->second.get();
  } else {
    // A pod bound to a node we have not seen yet: keep it on a placeholder
    // entry so it counts once the Node arrives.
    auto placeholder = std::make_unique<framework::NodeInfo>();
    ni = placeholder.get();
    nodes_.emplace(node, std::move(placeholder));
  }
  ni->AddPod(info);
  dirty_nodes_.insert(node);
  if (std::string group = GroupKeyOf(info->p()); !group.empty()) placed_members_[group]++;
}

void ClusterState::RemovePodLocked(std::string_view uid) {
  auto it = pods_.find(std::string(uid));
  if (it == pods_.end()) return;
  if (std::string group = GroupKeyOf(it->second.info->p()); !group.empty()) {
    if (--placed_members_[group] <= 0) placed_members_.erase(group);
  }
  auto nit = nodes_.find(it->second.node);
  if (nit != nodes_.end()) {
    nit->second->RemovePod(uid);
    dirty_nodes_.insert(it->second.node);
    if (nit->second->node() == nullptr && nit->second->pods().empty()) nodes_.erase(nit);
  }
  pods_.erase(it);
}

void ClusterState::AddOrUpdateBoundPod(std::shared_ptr<const api::Pod> pod) {
  absl::MutexLock lock(&mu_);
  const std::string uid = pod->meta.uid;
  const std::string node(pod->node_name.view());
  int32_t prio = ResolvePriorityLocked(*pod);
  framework::PodInfoPtr info = framework::PodInfo::Create(std::move(pod), prio);
  RemovePodLocked(uid);  // assumed or older version
  AddPodLocked(info, node);
  pods_[uid] = PodState{info, node, false, false, 0};
}

void ClusterState::RemovePod(std::string_view uid) {
  absl::MutexLock lock(&mu_);
  RemovePodLocked(uid);
}

void ClusterState::SetNamespace(api::Symbol name, api::Labels labels) {
  absl::MutexLock lock(&mu_);
  namespaces_[name] = std::move(labels);
  namespaces_changed_ = true;
}

void ClusterState::RemoveNamespace(api::Symbol name) {
  absl::MutexLock lock(&mu_);
  namespaces_.erase(name);
  namespaces_changed_ = true;
}

void ClusterState::SetPodDisruptionBudget(std::shared_ptr<const api::PodDisruptionBudget> pdb) {
  absl::MutexLock lock(&mu_);
  pdbs_[pdb->meta.Key()] = std::move(pdb);
  pdbs_changed_ = true;
}

void ClusterState::RemovePodDisruptionBudget(std::string_view key) {
  absl::MutexLock lock(&mu_);
  pdbs_.erase(std::string(key));
  pdbs_changed_ = true;
}

void ClusterState::SetPriorityClass(api::Symbol name, PriorityClassInfo info) {
  absl::MutexLock lock(&mu_);
  priority_classes_[name] = info;
}

void ClusterState::RemovePriorityClass(api::Symbol name) {
  absl::MutexLock lock(&mu_);
  priority_classes_.erase(name);
}

std::optional<int32_t> ClusterState::GroupPriorityLocked(const GroupInfo& group) const {
  if (group.priority) return *group.priority;
  if (!group.priority_class_name.empty()) {
    auto it = priority_classes_.find(group.priority_class_name);
    if (it != priority_classes_.end()) return it->second.value;
  }
  return std::nullopt;
}

std::optional<int32_t> ClusterState::GroupPriority(const GroupInfo& group) const {
  absl::ReaderMutexLock lock(&mu_);
  return GroupPriorityLocked(group);
}

api::PreemptionPolicy ClusterState::GroupPreemptionPolicy(const GroupInfo& group) const {
  if (group.preemption_policy) return *group.preemption_policy;
  absl::ReaderMutexLock lock(&mu_);
  if (!group.priority_class_name.empty()) {
    auto it = priority_classes_.find(group.priority_class_name);
    if (it != priority_classes_.end() && it->second.preemption_policy) return *it->second.preemption_policy;
  }
  return api::PreemptionPolicy::kPreemptLowerPriority;
}

int32_t ClusterState::ResolvePriorityLocked(const api::Pod& pod) const {
  if (!pod.pod_group_name.empty() || !pod.meta.labels.empty()) {
    if (std::string key = GroupKeyOf(pod); !key.empty()) {
      auto git = groups_.find(key);
      if (git != groups_.end()) {
        if (std::optional<int32_t> p = GroupPriorityLocked(git->second)) return *p;
      }
    }
  }
  if (pod.priority) return *pod.priority;
  if (!pod.priority_class_name.empty()) {
    auto it = priority_classes_.find(pod.priority_class_name);
    if (it != priority_classes_.end()) return it->second.value;
    return 0;
  }
  for (const auto& [name, pc] : priority_classes_) {
    if (pc.global_default) return pc.value;
  }
  return 0;
}

int32_t ClusterState::ResolvePriority(const api::Pod& pod) const {
  absl::ReaderMutexLock lock(&mu_);
  return ResolvePriorityLocked(pod);
}

framework::PodInfoPtr ClusterState::MakePodInfo(std::shared_ptr<const api::Pod> pod) const {
  int32_t prio = 0;
  std::optional<api::PreemptionPolicy> class_policy;
  {
    absl::ReaderMutexLock lock(&mu_);
    prio = ResolvePriorityLocked(*pod);
    if (!pod->preemption_policy.has_value()) {
      // What the Priority admission plugin would have copied from the class.
      const PriorityClassInfo* pc = nullptr;
      if (!pod->priority_class_name.empty()) {
        auto it = priority_classes_.find(pod->priority_class_name);
        if (it != priority_classes_.end()) pc = &it->second;
      } else {
        for (const auto& [name, c] : priority_classes_) {
          if (c.global_default) pc = &c;
        }
      }
      if (pc != nullptr) class_policy = pc->preemption_policy;
    }
  }
  // Only Never changes behaviour (absent means PreemptLowerPriority), so the
  // pod is copied only then.
  if (class_policy == api::PreemptionPolicy::kNever) {
    auto copy = std::make_shared<api::Pod>(*pod);
    copy->preemption_policy = class_policy;
    pod = std::move(copy);
  }
  return framework::PodInfo::Create(std::move(pod), prio);
}

absl::Status ClusterState::Assume(framework::PodInfoPtr pod, std::string_view node) {
  absl::MutexLock lock(&mu_);
  const std::string& uid = pod->uid();
  if (pods_.contains(uid)) {
    return absl::AlreadyExistsError(gantry::StrCat("pod ", pod->Key(), " (uid ", uid,
                                                   ") is already in the cache, cannot assume it"));
  }
  std::string node_name(node);
  if (!nodes_.contains(node_name)) {
    return absl::NotFoundError(gantry::StrCat("node ", node, " is not in the cache"));
  }
  AddPodLocked(pod, node_name);
  pods_[uid] = PodState{std::move(pod), node_name, true, false, 0};
  return absl::OkStatus();
}

void ClusterState::FinishBinding(std::string_view uid) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(std::string(uid));
  if (it == pods_.end() || !it->second.assumed) return;
  it->second.binding_finished = true;
  it->second.deadline_micros =
      assumed_ttl_micros_ > 0 ? clock_.NowMicros() + assumed_ttl_micros_ : 0;
}

absl::Status ClusterState::Forget(std::string_view uid) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(std::string(uid));
  if (it == pods_.end()) return absl::NotFoundError(gantry::StrCat("pod uid ", uid, " not in the cache"));
  if (!it->second.assumed) {
    return absl::FailedPreconditionError(gantry::StrCat("pod uid ", uid, " is bound, not assumed"));
  }
  RemovePodLocked(uid);
  return absl::OkStatus();
}

std::vector<std::string> ClusterState::CleanupExpiredAssumedPods() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> expired_uids, expired_keys;
  const int64_t now = clock_.NowMicros();
  for (const auto& [uid, st] : pods_) {
    if (st.assumed && st.binding_finished && st.deadline_micros > 0 && now >= st.deadline_micros) {
      expired_uids.push_back(uid);
      expired_keys.push_back(st.info->Key());
    }
  }
  for (const std::string& uid : expired_uids) RemovePodLocked(uid);
  return expired_keys;
}

bool ClusterState::IsAssumed(std::string_view uid) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = pods_.find(std::string(uid));
  return it != pods_.end() && it->second.assumed;
}

std::optional<std::string> ClusterState::NodeOf(std::string_view uid) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = pods_.find(std::string(uid));
  if (it == pods_.end()) return std::nullopt;
  return it->second.node;
}

size_t ClusterState::NodeCount() const {
  absl::ReaderMutexLock lock(&mu_);
  return node_order_.size();
}

size_t ClusterState::PodCount() const {
  absl::ReaderMutexLock lock(&mu_);
  return pods_.size();
}

size_t ClusterState::AssumedPodCount() const {
  absl::ReaderMutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [uid, p] : pods_) n += p.assumed ? 1 : 0;
  return n;
}

size_t ClusterState::GroupCount() const {
  absl::ReaderMutexLock lock(&mu_);
  return groups_.size() + composites_.size();
}

void ClusterState::UpdateSnapshot(Snapshot* snapshot) {
  absl::MutexLock lock(&mu_);
  // Membership of the ordered lists changes only when a node appears or
  // goes (then the lists are rebuilt by name) or a node starts or stops
  // having pods with (anti-)affinity (then they are refiltered from list_,
  // whose NodeInfo pointers stay valid).
  bool nodes_changed = order_changed_;
  bool node_objects_changed = false;
  bool affinity_changed = false;
  for (const std::string& name : dirty_nodes_) {
    auto it = nodes_.find(name);
    auto sit = snapshot->nodes_.find(name);
    const bool had_affinity = sit != snapshot->nodes_.end() && !sit->second->pods_with_affinity().empty();
    const bool had_anti =
        sit != snapshot->nodes_.end() && !sit->second->pods_with_required_anti_affinity().empty();
    if (it == nodes_.end() || it->second->node() == nullptr) {
      if (sit != snapshot->nodes_.end()) {
        snapshot->nodes_.erase(sit);
        nodes_changed = true;
      }
      continue;
    }
    const framework::NodeInfo& src = *it->second;
    if (sit == snapshot->nodes_.end()) {
      sit = snapshot->nodes_.emplace(name, std::make_unique<framework::NodeInfo>()).first;
      nodes_changed = true;
    }
    if (sit->second->generation() != src.generation()) {
      node_objects_changed |= sit->second->node() != src.node();
      *sit->second = src;
      // Refresh the cluster-wide spread of this node's images.
      auto& states = sit->second->image_states();
      states.clear();
      for (const api::ContainerImage& img : src.node()->images) {
        for (api::Symbol image : img.names) {
          auto iit = images_.find(image);
          if (iit != images_.end()) states[image] = iit->second;
        }
      }
    }
    if (had_affinity != !sit->second->pods_with_affinity().empty() ||
        had_anti != !sit->second->pods_with_required_anti_affinity().empty()) {
      affinity_changed = true;
    }
  }
  dirty_nodes_.clear();
  if (pdbs_changed_) {
    snapshot->pdbs_.clear();
    for (const auto& [key, pdb] : pdbs_) snapshot->pdbs_.push_back(pdb);
    pdbs_changed_ = false;
  }
  if (namespaces_changed_) {
    snapshot->namespaces_ = namespaces_;
    namespaces_changed_ = false;
  }
  if (nodes_changed || node_objects_changed) {
    static std::atomic<uint64_t> next_nodes_version{0};
    snapshot->nodes_version_ = next_nodes_version.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  if (nodes_changed) {
    snapshot->RebuildLists(node_order_);
    order_changed_ = false;
  } else if (affinity_changed) {
    snapshot->with_affinity_.clear();
    snapshot->with_required_anti_affinity_.clear();
    for (framework::NodeInfo* ni : snapshot->list_) {
      if (!ni->pods_with_affinity().empty()) snapshot->with_affinity_.push_back(ni);
      if (!ni->pods_with_required_anti_affinity().empty())
        snapshot->with_required_anti_affinity_.push_back(ni);
    }
  }
}

}  // namespace gantry::state
