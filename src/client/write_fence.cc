#include "src/client/write_fence.h"

#include <chrono>

#include "gantry/util/strings.h"

namespace gantry::client {

int64_t MonotonicMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool WriteFence::Extend(int64_t deadline_micros) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tripped_.load()) return false;
  const int64_t now = MonotonicMicros();
  const int64_t current = deadline_micros_.load();
  if (current != 0 && now >= current) {
    reason_ = "the lease renewal deadline passed";
    tripped_.store(true);
    return false;
  }
  if (deadline_micros <= now) return false;
  if (deadline_micros > current) deadline_micros_.store(deadline_micros);
  return true;
}

void WriteFence::Trip(std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tripped_.load()) return;
  reason_ = std::string(reason);
  tripped_.store(true);
}

int64_t WriteFence::RemainingMicros() const {
  if (tripped_.load()) return 0;
  const int64_t deadline = deadline_micros_.load();
  if (deadline == 0) return 0;
  return deadline - MonotonicMicros();
}

absl::Status WriteFence::Check() const {
  if (RemainingMicros() > 0) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  if (tripped_.load()) {
    return absl::FailedPreconditionError(StrCat("leadership lost: write refused (", reason_, ")"));
  }
  if (deadline_micros_.load() != 0) {
    return absl::FailedPreconditionError(
        "leadership lost: write refused (the lease renewal deadline passed)");
  }
  return absl::FailedPreconditionError("not the leader: write refused");
}

}  // namespace gantry::client
