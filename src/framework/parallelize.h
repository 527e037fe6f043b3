// A fixed pool of worker threads that runs index ranges in parallel
// (`parallelism` from the configuration). The calling thread takes part, so
// a pool of size 1 runs everything inline.
#ifndef GANTRY_SRC_FRAMEWORK_PARALLELIZE_H_
#define GANTRY_SRC_FRAMEWORK_PARALLELIZE_H_

#include <atomic>
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
  // One call of Until as its participants see it: read under mu_ by the
  // caller and by each worker that joins, so that everyone claims and runs
  // chunks of the same size of the same job.
  struct Job {
    const std::function<void(int)>* fn = nullptr;
    int n = 0;
    int chunk = 1;
  };
  void WorkerLoop();
  // Claims chunks of `job` from next_ and runs them until none is left.
  void RunChunks(const Job& job);

  const int parallelism_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  uint64_t epoch_ = 0;
  bool stop_ = false;
  // Workers that joined the open job and have not finished their chunks.
  int active_workers_ = 0;
  // The open job (fn == nullptr: none). Workers join only while it is open;
  // Until closes it, under mu_, only once no joined worker is active, so no
  // worker of one job claims chunks of the next.
  Job job_;
  std::atomic<int> next_{0};  // next unclaimed index of job_
};

}  // namespace gantry::framework

#endif  // GANTRY_SRC_FRAMEWORK_PARALLELIZE_H_
