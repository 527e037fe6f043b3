#include "src/scheduler/binding_pool.h"

#include <algorithm>

namespace gantry::scheduler {

BindingPool::~BindingPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void BindingPool::Run(absl::AnyInvocable<void()> job, int64_t pods) {
  if (max_threads_ <= 0) {
    job();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
    ++in_flight_;
    started_ += pods;
    peak_ = std::max(peak_, in_flight_);
    // Every waiting thread will take one of the queued jobs; start another
    // thread for a job none of them can take (up to the limit).
    if (static_cast<int>(jobs_.size()) > idle_ &&
        static_cast<int>(threads_.size()) < max_threads_) {
      threads_.emplace_back([this] { Worker(); });
    }
  }
  work_cv_.notify_one();
}

void BindingPool::Worker() {
  while (true) {
    absl::AnyInvocable<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++idle_;
      work_cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
    }
    idle_cv_.notify_all();
  }
}

void BindingPool::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return in_flight_ == 0; });
}

BindingPoolStats BindingPool::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return BindingPoolStats{static_cast<int>(threads_.size()), in_flight_, peak_, started_};
}

}  // namespace gantry::scheduler
