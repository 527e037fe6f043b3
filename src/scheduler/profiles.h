// The scheduler's profiles: one framework per schedulerName.
#ifndef GANTRY_SRC_SCHEDULER_PROFILES_H_
#define GANTRY_SRC_SCHEDULER_PROFILES_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/framework/framework.h"

namespace gantry::scheduler {

// Filled before the scheduler starts, read-only afterwards (so reads need no lock).
class Profiles {
 public:
  void Add(std::unique_ptr<framework::Framework> fw) {
    by_name_[std::string(fw->SchedulerName())] = fw.get();
    all_.push_back(std::move(fw));
  }
  // The profile for `scheduler_name`, or null when no profile has that name.
  framework::Framework* Get(std::string_view scheduler_name) const {
    auto it = by_name_.find(std::string(scheduler_name));
    return it == by_name_.end() ? nullptr : it->second;
  }
  bool Serves(std::string_view scheduler_name) const {
    return by_name_.contains(std::string(scheduler_name));
  }
  const std::vector<std::unique_ptr<framework::Framework>>& all() const { return all_; }

 private:
  std::vector<std::unique_ptr<framework::Framework>> all_;
  absl::flat_hash_map<std::string, framework::Framework*> by_name_;
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_PROFILES_H_
