// The threads binding cycles run on (live mode): binding waits on the API
// server, so it leaves the scheduling loop.
#ifndef GANTRY_SRC_SCHEDULER_BINDING_POOL_H_
#define GANTRY_SRC_SCHEDULER_BINDING_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"

namespace gantry::scheduler {

// The binding pool's counters, for logs and tests.
struct BindingPoolStats {
  int threads = 0;         // started so far (never more than the limit)
  int in_flight = 0;       // queued or running jobs now
  int peak_in_flight = 0;  // the most there ever were at once
  int64_t started = 0;     // pods handed to the pool
};

// Runs jobs on at most `max_threads` threads. The pool grows on demand (a
// thread is started when a job is queued while every started thread is
// busy) and keeps its threads until destroyed, so at most `max_threads`
// jobs wait on the API server at once. With `max_threads` <= 0 every job
// runs inline, in Run (offline). The destructor runs the jobs still queued,
// then joins. Thread-safe.
class BindingPool {
 public:
  explicit BindingPool(int max_threads) : max_threads_(max_threads) {}
  ~BindingPool();
  BindingPool(const BindingPool&) = delete;
  BindingPool& operator=(const BindingPool&) = delete;

  // Whether jobs run on threads (false: inline).
  bool threaded() const { return max_threads_ > 0; }
  int max_threads() const { return max_threads_; }
  // Runs `job`, which binds `pods` pods.
  void Run(absl::AnyInvocable<void()> job, int64_t pods);
  // Waits until every job queued so far has finished.
  void Wait();
  BindingPoolStats Stats();

 private:
  void Worker();

  const int max_threads_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<absl::AnyInvocable<void()>> jobs_;
  int in_flight_ = 0;
  int idle_ = 0;  // threads waiting for a job
  int peak_ = 0;
  int64_t started_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gantry::scheduler

#endif  // GANTRY_SRC_SCHEDULER_BINDING_POOL_H_
