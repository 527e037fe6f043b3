// Kubernetes resource quantities ("500m", "1.5Gi", "2e3").
//
// A Quantity is an exact decimal `mantissa * 10^exponent` with the format it
// was written in (binary SI, decimal SI or decimal exponent), which decides
// its canonical string form. Parsing follows k8s.io/apimachinery semantics:
// precision finer than 1n is rounded up (away from zero) to 1n. Values whose
// mantissa does not fit in int64 after normalisation are rejected as
// overflow instead of being silently clamped.
#ifndef GANTRY_SRC_API_QUANTITY_H_
#define GANTRY_SRC_API_QUANTITY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gantry::api {

class Quantity {
 public:
  enum class Format : uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };

  constexpr Quantity() = default;

  // Parses the Kubernetes quantity grammar. Errors are InvalidArgument with
  // upstream's wording ("quantities must match the regular expression ...").
  static absl::StatusOr<Quantity> Parse(std::string_view text);
  static Quantity FromInt64(int64_t value, Format format = Format::kDecimalSI);
  // `milli` thousandths, e.g. FromMilli(1500) == 1.5.
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);

  // -1, 0 or +1 as *this is less than, equal to or greater than `other`.
  int Compare(const Quantity& other) const;
  int Sign() const { return mantissa_ > 0 ? 1 : (mantissa_ < 0 ? -1 : 0); }
  bool IsZero() const { return mantissa_ == 0; }
  bool IsInteger() const;

  // The value rounded to an integer away from zero, as upstream's Value()
  // (saturating at the int64 range).
  int64_t Value() const;
  // The value in thousandths, rounded away from zero (saturating).
  int64_t MilliValue() const;
  // The exact integer value; an error when not an integer or out of range.
  absl::StatusOr<int64_t> AsInt64() const;
  double AsApproximateFloat() const;

  absl::StatusOr<Quantity> Add(const Quantity& other) const;
  absl::StatusOr<Quantity> Sub(const Quantity& other) const;

  // Canonical form as Kubernetes prints it ("1500m", "1Gi", "1k", "1e3").
  std::string ToString() const;

  Format format() const { return format_; }
  int64_t mantissa() const { return mantissa_; }
  int32_t exponent() const { return exponent_; }

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.Compare(b) == 0; }
  friend bool operator<(const Quantity& a, const Quantity& b) { return a.Compare(b) < 0; }

 private:
  constexpr Quantity(int64_t mantissa, int32_t exponent, Format format)
      : mantissa_(mantissa), exponent_(exponent), format_(format) {}
  // Builds a normalised quantity from an exact 128-bit mantissa; error on overflow.
  static absl::StatusOr<Quantity> FromWide(__int128 mantissa, int32_t exponent, Format format);

  int64_t mantissa_ = 0;
  int32_t exponent_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_QUANTITY_H_
