// Time source for everything that waits or times out (backoff, assumed-pod
// expiry, permit timeouts). Live runs use the system clock; the simulator
// uses a virtual clock that only moves when it is advanced.
#ifndef GANTRY_CLOCK_H_
#define GANTRY_CLOCK_H_

#include <atomic>
#include <cstdint>

namespace gantry {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since an arbitrary epoch (Unix epoch for the real clock).
  virtual int64_t NowMicros() const = 0;
};

// Wall clock (CLOCK_REALTIME), microsecond resolution.
class RealClock final : public Clock {
 public:
  int64_t NowMicros() const override;
  static RealClock& Get();
};

// The cost of work in real elapsed microseconds (steady clock): for attempt
// and extension point durations, which measure the scheduler itself and so
// run on real time in simulations too. Anything that decides, waits or
// expires reads the injected Clock instead.
int64_t MonotonicMicros();

// Virtual time for simulations and tests. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_micros = 0) : now_(start_micros) {}
  int64_t NowMicros() const override { return now_.load(std::memory_order_acquire); }
  void Advance(int64_t micros) { now_.fetch_add(micros, std::memory_order_acq_rel); }
  void Set(int64_t micros) { now_.store(micros, std::memory_order_release); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace gantry

#endif  // GANTRY_CLOCK_H_
