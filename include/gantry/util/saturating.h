// Saturating int64 arithmetic for resource amounts.
//
// Resource sums (a node's requested CPU, memory, extended resources) are
// int64 and fed by user input: two pods asking for 8Ei of memory overflow a
// plain `+`, which is undefined behaviour. These helpers clamp to the int64
// range instead.
//
// Contract: a value equal to INT64_MAX or INT64_MIN is *saturated*: the true
// sum it stands for is not known any more. A saturated value is sticky:
// adding or subtracting a finite amount leaves it where it is, so that
// removing one of two huge pods from a sum does not make the sum look
// smaller than what is still there. Owners of a sum that can recompute it
// from its parts (NodeInfo does, when a pod leaves) do so once it saturates.
#ifndef GANTRY_UTIL_SATURATING_H_
#define GANTRY_UTIL_SATURATING_H_

#include <cstdint>
#include <limits>

namespace gantry {

inline constexpr int64_t kSaturatedMax = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kSaturatedMin = std::numeric_limits<int64_t>::min();

inline constexpr bool IsSaturated(int64_t v) { return v == kSaturatedMax || v == kSaturatedMin; }

// a + b, clamped to [INT64_MIN, INT64_MAX]; a saturated `a` is returned as is.
// A saturated `b` saturates the result in its direction.
inline constexpr int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (IsSaturated(a)) return a;
  if (IsSaturated(b)) return b;
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return b > 0 ? kSaturatedMax : kSaturatedMin;
  return out;
}

// a - b with the same contract: a saturated `a` stays; subtracting a
// saturated `b` saturates the result in the opposite direction.
inline constexpr int64_t SaturatingSub(int64_t a, int64_t b) {
  if (IsSaturated(a)) return a;
  if (b == kSaturatedMax) return kSaturatedMin;
  if (b == kSaturatedMin) return kSaturatedMax;
  int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out)) return b < 0 ? kSaturatedMax : kSaturatedMin;
  return out;
}

}  // namespace gantry

#endif  // GANTRY_UTIL_SATURATING_H_
