#include "src/admin/diagnosis.h"

#include <algorithm>
#include <map>
#include <utility>

#include "gantry/util/strings.h"

namespace gantry::admin {

std::vector<ReasonGroup> GroupByReason(const framework::FitError& fit, size_t max_nodes) {
  std::map<std::pair<std::string, std::string>, ReasonGroup> groups;
  auto add = [&](const framework::Status& st, std::string_view node, int32_t count) {
    for (const std::string& r : st.reasons()) {
      ReasonGroup& g = groups[{std::string(st.plugin()), r}];
      if (g.node_count == 0) {
        g.plugin = std::string(st.plugin());
        g.reason = r;
        g.code = std::string(framework::CodeName(st.code()));
      }
      g.node_count += count;
      if (!node.empty()) {
        // Keep the smallest names: the sample does not depend on map order.
        if (g.nodes.size() < max_nodes) {
          g.nodes.emplace_back(node);
          std::push_heap(g.nodes.begin(), g.nodes.end());
        } else if (max_nodes > 0 && node < g.nodes.front()) {
          std::pop_heap(g.nodes.begin(), g.nodes.end());
          g.nodes.back() = std::string(node);
          std::push_heap(g.nodes.begin(), g.nodes.end());
        }
      }
    }
  };
  for (const auto& [node, st] : fit.diagnosis.node_to_status) add(st, node, 1);
  const int32_t absent =
      fit.num_all_nodes - static_cast<int32_t>(fit.diagnosis.node_to_status.size());
  if (fit.diagnosis.absent_nodes_status && absent > 0)
    add(*fit.diagnosis.absent_nodes_status, "", absent);
  std::vector<ReasonGroup> out;
  out.reserve(groups.size());
  for (auto& [key, g] : groups) {
    std::sort_heap(g.nodes.begin(), g.nodes.end());
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const ReasonGroup& a, const ReasonGroup& b) {
    return a.node_count > b.node_count;
  });
  return out;
}

void DiagnosisStore::OnAttempt(const scheduler::AttemptOutcome& outcome) {
  if (outcome.pod == nullptr) return;
  const api::Pod& pod = outcome.pod->p();
  std::string key = gantry::StrCat(pod.meta.namespace_.view(), "/", pod.meta.name);
  if (outcome.result == "scheduled") {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = by_key_.find(key); it != by_key_.end()) {
      pods_.erase(it->second);
      by_key_.erase(it);
    }
    return;
  }
  // Build the entry outside the lock: the admin threads only wait for the swap.
  RecordedAttempt rec;
  rec.pod = key;
  rec.uid = pod.meta.uid;
  rec.result = outcome.result;
  rec.message = outcome.message;
  rec.nominated_node = outcome.nominated_node;
  rec.unix_micros = clock_.NowMicros();
  if (const framework::FitError* fit = outcome.fit_error; fit != nullptr) {
    rec.num_all_nodes = fit->num_all_nodes;
    rec.pre_filter_message = fit->diagnosis.pre_filter_msg;
    rec.post_filter_message = fit->diagnosis.post_filter_msg;
    for (const std::string& p : fit->diagnosis.unschedulable_plugins) {
      if (!p.empty()) rec.unschedulable_plugins.push_back(p);
    }
    std::sort(rec.unschedulable_plugins.begin(), rec.unschedulable_plugins.end());
    rec.filtered = GroupByReason(*fit, max_nodes_);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    rec.attempts = it->second->attempts + 1;
    *it->second = std::move(rec);
    pods_.splice(pods_.begin(), pods_, it->second);
    return;
  }
  rec.attempts = 1;
  pods_.push_front(std::move(rec));
  by_key_[key] = pods_.begin();
  while (pods_.size() > max_pods_) {
    by_key_.erase(pods_.back().pod);
    pods_.pop_back();
  }
}

void DiagnosisStore::OnGroup(const scheduler::GroupOutcome& outcome) {
  RecordedGroup rec{outcome, clock_.NowMicros()};
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = groups_by_key_.find(outcome.key); it != groups_by_key_.end()) {
    *it->second = std::move(rec);
    groups_.splice(groups_.begin(), groups_, it->second);
    return;
  }
  groups_.push_front(std::move(rec));
  groups_by_key_[outcome.key] = groups_.begin();
  while (groups_.size() > kMaxGroups) {
    groups_by_key_.erase(groups_.back().outcome.key);
    groups_.pop_back();
  }
}

void DiagnosisStore::OnPodDeleted(const api::Pod& pod) {
  const std::string key = gantry::StrCat(pod.meta.namespace_.view(), "/", pod.meta.name);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_key_.find(key);
  if (it == by_key_.end() || it->second->uid != pod.meta.uid) return;
  pods_.erase(it->second);
  by_key_.erase(it);
}

std::optional<RecordedAttempt> DiagnosisStore::FindPod(std::string_view key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_key_.find(std::string(key));
  if (it == by_key_.end()) return std::nullopt;
  return *it->second;
}

std::optional<RecordedGroup> DiagnosisStore::FindGroup(std::string_view key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = groups_by_key_.find(std::string(key));
  if (it == groups_by_key_.end()) return std::nullopt;
  return *it->second;
}

size_t DiagnosisStore::pod_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pods_.size();
}

size_t DiagnosisStore::group_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return groups_.size();
}

}  // namespace gantry::admin
