#include "src/scheduler/outcome.h"

#include <algorithm>

namespace gantry::scheduler {

void Observers::Add(AttemptObserver* observer) {
  std::lock_guard<std::mutex> lock(mu_);
  observers_.push_back(observer);
}

void Observers::Remove(AttemptObserver* observer) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase(observers_, observer);
}

void Observers::Attempt(const AttemptOutcome& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  for (AttemptObserver* o : observers_) o->OnAttempt(outcome);
}

void Observers::Group(const GroupOutcome& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  for (AttemptObserver* o : observers_) o->OnGroup(outcome);
}

void Observers::PodDeleted(const api::Pod& pod) {
  std::lock_guard<std::mutex> lock(mu_);
  for (AttemptObserver* o : observers_) o->OnPodDeleted(pod);
}

}  // namespace gantry::scheduler
