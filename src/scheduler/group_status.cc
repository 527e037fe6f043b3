#include "src/scheduler/group_status.h"

#include "gantry/util/strings.h"

namespace gantry::scheduler {
namespace {

constexpr std::string_view kTrueMark = "True";

}  // namespace

framework::PodGroupRef PodGroupRefOf(const state::GroupInfo& group) {
  framework::PodGroupRef ref;
  ref.api_group = group.native ? "scheduling.k8s.io" : "scheduling.x-k8s.io";
  ref.kind = group.composite ? "CompositePodGroup" : "PodGroup";
  const size_t slash = group.key.find('/');
  if (slash == std::string::npos) {
    ref.name = group.key;
  } else {
    ref.namespace_ = group.key.substr(0, slash);
    ref.name = group.key.substr(slash + 1);
  }
  ref.uid = group.uid;
  ref.generation = group.generation;
  return ref;
}

void GroupStatusWriter::Scheduled(const state::GroupInfo& group, const std::string& message) {
  Write(group, framework::PodGroupCondition{"", "True", "Scheduled", message});
}

void GroupStatusWriter::Failed(const state::GroupInfo& group, std::string_view reason, const std::string& message) {
  Write(group, framework::PodGroupCondition{"", "False", std::string(reason), message});
}

void GroupStatusWriter::Write(const state::GroupInfo& group, framework::PodGroupCondition condition) {
  condition.type = std::string(group.composite ? kCompositePodGroupInitiallyScheduled : kPodGroupInitiallyScheduled);
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::string& last = last_[group.key];
    if (group.initially_scheduled && last.empty()) last = std::string(kTrueMark);
    if (last == kTrueMark) return;  // terminal
    std::string mark = condition.status == "True"
                           ? std::string(kTrueMark)
                           : gantry::StrCat(condition.status, "\x1f", condition.reason, "\x1f", condition.message);
    if (mark == last) return;
    last = std::move(mark);
  }
  // The writer logs and counts its own failures (ClusterWriter contract).
  (void)writer_.UpdatePodGroupCondition(PodGroupRefOf(group), condition);
}

void GroupStatusWriter::Forget(std::string_view key) {
  std::lock_guard<std::mutex> lock(mu_);
  last_.erase(std::string(key));
}

bool GroupStatusWriter::IsScheduled(std::string_view key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = last_.find(std::string(key));
  return it != last_.end() && it->second == kTrueMark;
}

}  // namespace gantry::scheduler
