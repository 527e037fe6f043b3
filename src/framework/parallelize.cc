#include "src/framework/parallelize.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace gantry::framework {

WorkerPool::WorkerPool(int parallelism)
    : parallelism_(std::max(1, std::min<int>(parallelism,
                                             static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))))) {
  for (int i = 1; i < parallelism_; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::RunChunks(const Job& job) {
  while (true) {
    const int start = next_.fetch_add(job.chunk, std::memory_order_relaxed);
    if (start >= job.n) return;
    const int end = std::min(job.n, start + job.chunk);
    for (int i = start; i < end; ++i) (*job.fn)(i);
  }
}

void WorkerPool::WorkerLoop() {
  uint64_t seen = 0;
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || epoch_ != seen; });
      if (stop_) return;
      seen = epoch_;
      // Woke after the caller finished that job alone: nothing to join (its
      // chunk size and count must not be used with the next job's next_).
      if (job_.fn == nullptr) continue;
      job = job_;
      ++active_workers_;
    }
    RunChunks(job);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--active_workers_ == 0) done_cv_.notify_all();
    }
  }
}

void WorkerPool::Until(int n, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  // Small jobs are not worth waking threads for.
  if (threads_.empty() || n < 32) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  Job job;
  job.fn = &fn;
  job.n = n;
  job.chunk = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(n))));
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = job;
    next_.store(0, std::memory_order_relaxed);
    ++epoch_;
  }
  work_cv_.notify_all();
  RunChunks(job);
  std::unique_lock<std::mutex> lock(mu_);
  // Every chunk is claimed (the caller's RunChunks returned); the workers
  // that joined finish theirs. Closing the job under the same lock keeps
  // late wakers out of it.
  done_cv_.wait(lock, [&] { return active_workers_ == 0; });
  job_ = Job();
}

}  // namespace gantry::framework
