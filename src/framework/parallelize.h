// A fixed pool of worker threads that runs index ranges in parallel
// (`parallelism` from the configuration). The calling thread takes part, so
// a pool of size 1 runs everything inline.
#ifndef GANTRY_SRC_FRAMEWORK_PARALLELIZE_H_
#define GANTRY_SRC_FRAMEWORK_PARALLELIZE_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "gantry/handle.h"

namespace gantry::framework {

class WorkerPool final : public Parallelizer {
 public:
  // Uses min(parallelism, hardware threads) threads including the caller.
  explicit WorkerPool(int parallelism);
  ~WorkerPool() override;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Not reentrant: fn must not call Until on the same pool.
  void Until(int n, const std::function<void(int)>& fn) override;
  int parallelism() const override { return parallelism_; }

 private:
  void WorkerLoop();
  void RunChunks();

  const int parallelism_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  uint64_t epoch_ = 0;
  bool stop_ = false;
  int active_workers_ = 0;
  // Current job.
  const std::function<void(int)>* fn_ = nullptr;
  int n_ = 0;
  int chunk_ = 1;
  std::atomic<int> next_{0};
};

}  // namespace gantry::framework

#endif  // GANTRY_SRC_FRAMEWORK_PARALLELIZE_H_
