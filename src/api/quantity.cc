#include "src/api/quantity.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "gantry/util/strings.h"

namespace gantry::api {
namespace {

using Wide = __int128;

constexpr const char* kErrFormat =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr const char* kErrSuffix = "unable to parse quantity's suffix";
constexpr int32_t kMinExponent = -9;  // nano: finer precision is rounded up.
constexpr Wide kWideLimit = Wide(1) << 120;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Multiplies `*v` by `f`, returning false when the result leaves +-2^120.
bool CheckedMul(Wide* v, Wide f) {
  if (*v == 0 || f == 0) {
    *v = 0;
    return true;
  }
  Wide a = *v < 0 ? -*v : *v;
  if (a > kWideLimit / f) return false;
  *v *= f;
  return true;
}

Wide Pow10(int n) {
  Wide r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

int64_t Saturate(Wide v) {
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// Returns m * 10^e rounded to an integer away from zero (upstream's
// negativeScaleInt64), computed in wide arithmetic, saturating.
int64_t RoundAwayScaled(int64_t m, int32_t e) {
  if (m == 0) return 0;
  if (e >= 0) {
    if (e > 38) return m > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    Wide v = m;
    if (!CheckedMul(&v, Pow10(e))) {
      return m > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    }
    return Saturate(v);
  }
  if (-e > 30) return m > 0 ? 1 : -1;
  Wide d = Pow10(-e);
  Wide q = Wide(m) / d;
  Wide r = Wide(m) % d;
  if (r != 0) q += m > 0 ? 1 : -1;
  return Saturate(q);
}

// Number of decimal digits of |v| (v != 0).
int DigitCount(int64_t v) {
  uint64_t a = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int n = 0;
  while (a > 0) {
    a /= 10;
    ++n;
  }
  return n;
}

}  // namespace

absl::StatusOr<Quantity> Quantity::FromWide(Wide m, int32_t e, Format format) {
  if (m == 0) return Quantity(0, 0, format);
  const bool negative = m < 0;
  bool sticky = false;
  while (e < kMinExponent) {
    if (m % 10 != 0) sticky = true;
    m /= 10;
    ++e;
  }
  if (sticky) m += negative ? -1 : 1;
  if (m == 0) return Quantity(0, 0, format);
  while (m % 10 == 0) {
    m /= 10;
    ++e;
  }
  if (m > std::numeric_limits<int64_t>::max() || m < -std::numeric_limits<int64_t>::max()) {
    return absl::OutOfRangeError("quantity is too large: its value does not fit in 64 bits");
  }
  return Quantity(static_cast<int64_t>(m), e, format);
}

absl::StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError(kErrFormat);
  size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') {
    negative = text[i] == '-';
    ++i;
  }
  std::string digits;
  int32_t exponent = 0;
  bool seen_dot = false;
  size_t num_start = i;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (IsDigit(c)) {
      if (!(digits.empty() && c == '0')) digits.push_back(c);
      if (seen_dot) --exponent;
    } else if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else {
      break;  // a second '.' starts the suffix, which the scan below rejects
    }
  }
  size_t num_len = i - num_start;
  if (num_len == 0 || (seen_dot && num_len == 1)) return absl::InvalidArgumentError(kErrFormat);

  // Suffix. Upstream first scans it as [eEinumkKMGTP]*[-+]?[0-9]* and reports
  // anything else as a format error; only a suffix of that shape that names
  // no unit is "unable to parse quantity's suffix".
  std::string_view suffix = text.substr(i);
  {
    size_t s = 0;
    while (s < suffix.size() && std::string_view("eEinumkKMGTP").find(suffix[s]) != std::string_view::npos) ++s;
    if (s < suffix.size() && (suffix[s] == '+' || suffix[s] == '-')) ++s;
    while (s < suffix.size() && IsDigit(suffix[s])) ++s;
    if (s != suffix.size()) return absl::InvalidArgumentError(kErrFormat);
  }
  Format format = Format::kDecimalSI;
  int binary_power = 0;  // multiples of 2^10
  if (suffix.empty()) {
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    format = Format::kBinarySI;
    switch (suffix[0]) {
      case 'K': binary_power = 1; break;
      case 'M': binary_power = 2; break;
      case 'G': binary_power = 3; break;
      case 'T': binary_power = 4; break;
      case 'P': binary_power = 5; break;
      case 'E': binary_power = 6; break;
      default: return absl::InvalidArgumentError(kErrSuffix);
    }
  } else if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n': exponent -= 9; break;
      case 'u': exponent -= 6; break;
      case 'm': exponent -= 3; break;
      case 'k': exponent += 3; break;
      case 'M': exponent += 6; break;
      case 'G': exponent += 9; break;
      case 'T': exponent += 12; break;
      case 'P': exponent += 15; break;
      case 'E': exponent += 18; break;
      default:
        return absl::InvalidArgumentError(kErrSuffix);
    }
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    format = Format::kDecimalExponent;
    size_t j = 1;
    bool exp_negative = false;
    if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) {
      exp_negative = suffix[j] == '-';
      ++j;
    }
    if (j >= suffix.size()) return absl::InvalidArgumentError(kErrSuffix);
    int64_t e = 0;
    for (; j < suffix.size(); ++j) {
      if (!IsDigit(suffix[j])) return absl::InvalidArgumentError(kErrSuffix);
      e = e * 10 + (suffix[j] - '0');
      if (e > 1000) return absl::OutOfRangeError("quantity exponent is out of range");
    }
    exponent += static_cast<int32_t>(exp_negative ? -e : e);
  } else {
    return absl::InvalidArgumentError(kErrSuffix);
  }

  // Drop trailing zeros of the digit string into the exponent.
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }
  if (digits.empty()) return Quantity(0, 0, format);
  // Precision below 1n (after any binary scaling, which only grows values)
  // rounds up; trim digits that fall below it before they can overflow.
  bool sticky = false;
  if (binary_power == 0 && exponent < kMinExponent) {
    int64_t drop = static_cast<int64_t>(kMinExponent) - exponent;
    if (drop >= static_cast<int64_t>(digits.size())) {
      digits = "1";
      exponent = kMinExponent;
    } else {
      for (size_t k = digits.size() - drop; k < digits.size(); ++k) {
        if (digits[k] != '0') sticky = true;
      }
      digits.resize(digits.size() - drop);
      exponent = kMinExponent;
    }
  }
  if (digits.size() > 36) {
    return absl::OutOfRangeError("quantity is too large: its value does not fit in 64 bits");
  }
  Wide m = 0;
  for (char c : digits) m = m * 10 + (c - '0');
  if (sticky) m += 1;
  if (!CheckedMul(&m, Wide(1) << (10 * binary_power))) {
    return absl::OutOfRangeError("quantity is too large: its value does not fit in 64 bits");
  }
  // The binary scaling can end in decimal zeros again: fold them into the
  // exponent before the range check, so a value is accepted exactly when its
  // canonical form (which has no trailing zeros) is.
  while (m != 0 && m % 10 == 0) {
    m /= 10;
    ++exponent;
  }
  if (exponent > 18 + 20) {
    return absl::OutOfRangeError("quantity is too large: its value does not fit in 64 bits");
  }
  if (negative) m = -m;
  absl::StatusOr<Quantity> q = FromWide(m, exponent, format);
  // A binary quantity strictly between -1 and 1 is kept as DecimalSI, as upstream does.
  if (q.ok() && format == Format::kBinarySI && !q->IsZero() &&
      DigitCount(q->mantissa_) + q->exponent_ <= 0) {
    q->format_ = Format::kDecimalSI;
  }
  return q;
}

Quantity Quantity::FromInt64(int64_t value, Format format) {
  auto q = FromWide(value, 0, format);
  return q.ok() ? *q : Quantity(value, 0, format);
}

Quantity Quantity::FromMilli(int64_t milli, Format format) {
  auto q = FromWide(milli, -3, format);
  return q.ok() ? *q : Quantity(milli, -3, format);
}

int Quantity::Compare(const Quantity& other) const {
  int sa = Sign(), sb = other.Sign();
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  // Same sign, both non-zero: compare orders of magnitude first.
  int oa = DigitCount(mantissa_) + exponent_;
  int ob = DigitCount(other.mantissa_) + other.exponent_;
  if (oa != ob) return (oa < ob) == (sa > 0) ? -1 : 1;
  // Same magnitude: exponents differ by at most 18, so alignment fits 128 bits.
  int32_t e = std::min(exponent_, other.exponent_);
  Wide a = Wide(mantissa_) * Pow10(exponent_ - e);
  Wide b = Wide(other.mantissa_) * Pow10(other.exponent_ - e);
  return a < b ? -1 : (a > b ? 1 : 0);
}

bool Quantity::IsInteger() const { return exponent_ >= 0 || mantissa_ == 0; }

int64_t Quantity::Value() const { return RoundAwayScaled(mantissa_, exponent_); }

int64_t Quantity::MilliValue() const { return RoundAwayScaled(mantissa_, exponent_ + 3); }

absl::StatusOr<int64_t> Quantity::AsInt64() const {
  if (!IsInteger()) return absl::InvalidArgumentError("quantity is not an integer");
  if (exponent_ > 18) return absl::OutOfRangeError("quantity overflows int64");
  Wide v = mantissa_;
  if (!CheckedMul(&v, Pow10(exponent_)) || v > std::numeric_limits<int64_t>::max() ||
      v < std::numeric_limits<int64_t>::min()) {
    return absl::OutOfRangeError("quantity overflows int64");
  }
  return static_cast<int64_t>(v);
}

double Quantity::AsApproximateFloat() const {
  return static_cast<double>(mantissa_) * std::pow(10.0, exponent_);
}

absl::StatusOr<Quantity> Quantity::Add(const Quantity& other) const {
  Format f = (mantissa_ == 0 && other.mantissa_ != 0) ? other.format_ : format_;
  if (other.mantissa_ == 0) return Quantity(mantissa_, exponent_, f);
  if (mantissa_ == 0) return Quantity(other.mantissa_, other.exponent_, f);
  int32_t e = std::min(exponent_, other.exponent_);
  Wide a = mantissa_, b = other.mantissa_;
  if (exponent_ - e > 36 || other.exponent_ - e > 36 || !CheckedMul(&a, Pow10(exponent_ - e)) ||
      !CheckedMul(&b, Pow10(other.exponent_ - e))) {
    return absl::OutOfRangeError("quantity arithmetic overflow");
  }
  return FromWide(a + b, e, f);
}

absl::StatusOr<Quantity> Quantity::Sub(const Quantity& other) const {
  return Add(Quantity(-other.mantissa_, other.exponent_, other.format_));
}

std::string Quantity::ToString() const {
  if (mantissa_ == 0) return "0";
  Format format = format_;
  if (format == Format::kBinarySI) {
    auto v = AsInt64();
    if (!v.ok() || (*v > -1024 && *v < 1024)) {
      format = Format::kDecimalSI;
    } else {
      int64_t n = *v;
      int power = 0;
      while (power < 6 && n % 1024 == 0) {
        n /= 1024;
        ++power;
      }
      static constexpr std::string_view kSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      return gantry::StrCat(n, kSuffixes[power]);
    }
  }
  // Largest exponent that is a multiple of 3 (at most 18) keeping an integer mantissa.
  int32_t e = exponent_;
  int32_t target = e >= 0 ? (e / 3) * 3 : -(((-e) + 2) / 3) * 3;
  if (target < -9) target = -9;
  if (e - target > 18) return gantry::StrCat(mantissa_, "e", e);
  Wide m = Wide(mantissa_) * Pow10(e - target);
  std::string digits;
  bool neg = m < 0;
  if (neg) m = -m;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  } while (m > 0);
  if (neg) digits.insert(digits.begin(), '-');
  if (target == 0) return digits;
  // DecimalSI has no suffix above E (10^18); larger exponents use "e" notation.
  if (format == Format::kDecimalExponent || target > 18) return gantry::StrCat(digits, "e", target);
  switch (target) {
    case -9: return digits + "n";
    case -6: return digits + "u";
    case -3: return digits + "m";
    case 3: return digits + "k";
    case 6: return digits + "M";
    case 9: return digits + "G";
    case 12: return digits + "T";
    case 15: return digits + "P";
    default: return digits + "E";
  }
}

}  // namespace gantry::api
