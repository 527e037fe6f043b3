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

void WorkerPool::RunChunks() {
  while (true) {
    int start = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (start >= n_) return;
    int end = std::min(n_, start + chunk_);
    for (int i = start; i < end; ++i) (*fn_)(i);
  }
}

void WorkerPool::WorkerLoop() {
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || epoch_ != seen; });
      if (stop_) return;
      seen = epoch_;
      ++active_workers_;
    }
    RunChunks();
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(n))));
    next_.store(0, std::memory_order_relaxed);
    ++epoch_;
  }
  work_cv_.notify_all();
  RunChunks();
  std::unique_lock<std::mutex> lock(mu_);
  // Workers that woke for this epoch finish their chunks; late wakers find no work.
  done_cv_.wait(lock, [&] { return active_workers_ == 0 && next_.load() >= n_; });
  fn_ = nullptr;
}

}  // namespace gantry::framework
