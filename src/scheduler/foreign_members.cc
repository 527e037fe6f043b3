#include "src/scheduler/foreign_members.h"

#include "src/state/cluster_state.h"

namespace gantry::scheduler {

void ForeignGroupMembers::Add(const api::Pod& pod) {
  std::string group = state::GroupKeyOf(pod);
  if (group.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (members_.contains(pod.meta.uid)) return;
  ++schedulers_[group][pod.scheduler_name.str()];
  members_[pod.meta.uid] = Member{std::move(group), pod.scheduler_name.str()};
}

void ForeignGroupMembers::Forget(std::string_view uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto m = members_.find(std::string(uid));
  if (m == members_.end()) return;
  auto g = schedulers_.find(m->second.group);
  if (g != schedulers_.end()) {
    auto n = g->second.find(m->second.scheduler);
    if (n != g->second.end() && --n->second <= 0) g->second.erase(n);
    if (g->second.empty()) schedulers_.erase(g);
  }
  members_.erase(m);
}

std::string ForeignGroupMembers::SchedulersOf(const std::vector<std::string>& groups) {
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& group : groups) {
    auto it = schedulers_.find(group);
    if (it == schedulers_.end()) continue;
    for (const auto& [name, pods] : it->second) out += ", " + name;
  }
  return out;
}

size_t ForeignGroupMembers::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return members_.size();
}

}  // namespace gantry::scheduler
