#include "src/state/snapshot.h"

namespace gantry::state {

const framework::NodeInfo* Snapshot::Get(std::string_view node_name) const {
  auto it = nodes_.find(std::string(node_name));
  return it == nodes_.end() ? nullptr : it->second.get();
}

framework::NodeInfo* Snapshot::GetMutable(std::string_view node_name) {
  auto it = nodes_.find(std::string(node_name));
  return it == nodes_.end() ? nullptr : it->second.get();
}

void Snapshot::RebuildLists(const std::vector<std::string>& order) {
  // generations_ is reallocated below: no NodeInfo may keep a slot in it.
  for (auto& [name, ni] : nodes_) ni->MirrorGenerationTo(nullptr);
  list_.clear();
  with_affinity_.clear();
  with_required_anti_affinity_.clear();
  for (const std::string& name : order) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    framework::NodeInfo* ni = it->second.get();
    list_.push_back(ni);
    if (!ni->pods_with_affinity().empty()) with_affinity_.push_back(ni);
    if (!ni->pods_with_required_anti_affinity().empty()) with_required_anti_affinity_.push_back(ni);
  }
  generations_.assign(list_.size(), 0);
  for (size_t i = 0; i < list_.size(); ++i) list_[i]->MirrorGenerationTo(&generations_[i]);
}

}  // namespace gantry::state
