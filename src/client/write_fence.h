// WriteFence: whether this process may still write to the API server as the
// leader. The leader elector opens it on acquiring the lease and extends it
// after every successful renewal to (start of that renewal + renewDeadline);
// it closes by itself when that moment passes and is tripped for good when
// leadership is lost or given up. An HttpClient holding a fence asks it
// immediately before sending each mutating request (POST, PUT, PATCH,
// DELETE) that is not exempt (the lease's own requests), on every retry,
// and caps the request's timeout at the time the fence has left.
//
// Because the fence expires on the monotonic clock and never reopens, a
// leader whose renewals hang stops writing at most renewDeadline after the
// start of its last successful renewal, before another replica can acquire
// the lease (it waits leaseDuration > renewDeadline after observing that
// renewal).
#ifndef GANTRY_SRC_CLIENT_WRITE_FENCE_H_
#define GANTRY_SRC_CLIENT_WRITE_FENCE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace gantry::client {

// Microseconds on the steady (monotonic) clock.
int64_t MonotonicMicros();

class WriteFence {
 public:
  // Closed until the first Extend.
  WriteFence() = default;
  WriteFence(const WriteFence&) = delete;
  WriteFence& operator=(const WriteFence&) = delete;

  // Allows writes until `deadline_micros` (MonotonicMicros()). Returns false
  // without opening when the fence was tripped or `deadline_micros` has
  // passed; returns false and trips the fence when it was open and has
  // expired meanwhile (an expired lease is never taken as renewed).
  bool Extend(int64_t deadline_micros);
  // Closes the fence for good; `reason` appears in refused writes' errors.
  void Trip(std::string_view reason);

  // OK when a write may be sent now; otherwise FailedPrecondition
  // "leadership lost: write refused (<reason>)" (or "not the leader: write
  // refused" before the first Extend). Does not count.
  absl::Status Check() const;
  // Microseconds left before the fence closes (<= 0: closed).
  int64_t RemainingMicros() const;
  bool tripped() const { return tripped_.load(); }

  // Refused writes (counted by the clients that hold the fence).
  void CountRefused() { refused_.fetch_add(1); }
  int64_t refused() const { return refused_.load(); }

 private:
  mutable std::mutex mu_;  // reason_, and Extend/Trip against each other
  std::string reason_;
  std::atomic<int64_t> deadline_micros_{0};  // 0: never opened
  std::atomic<bool> tripped_{false};
  std::atomic<int64_t> refused_{0};
};

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_WRITE_FENCE_H_
