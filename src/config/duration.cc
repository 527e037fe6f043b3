// Go time.Duration text, as metav1.Duration reads and writes it.
#include <cstdint>
#include <string>
#include <string_view>

#include "gantry/util/strings.h"
#include "src/config/config.h"

namespace gantry::config {
namespace {

absl::Status InvalidDuration(std::string_view text) {
  return absl::InvalidArgumentError(gantry::StrCat("time: invalid duration \"", text, "\""));
}

// Nanoseconds per unit; 0 when unknown.
uint64_t UnitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1000;  // µ (micro sign, mu)
  if (unit == "ms") return 1000 * 1000;
  if (unit == "s") return 1000ULL * 1000 * 1000;
  if (unit == "m") return 60ULL * 1000 * 1000 * 1000;
  if (unit == "h") return 3600ULL * 1000 * 1000 * 1000;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Appends, in reverse (the text is built back to front as Go does), the
// fraction of v / 10^prec without trailing zeros, and without the dot when it
// is zero; returns v / 10^prec.
uint64_t AppendFracReversed(std::string* rev, uint64_t v, int prec) {
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    uint64_t digit = v % 10;
    print = print || digit != 0;
    if (print) rev->push_back(static_cast<char>('0' + digit));
    v /= 10;
  }
  if (print) rev->push_back('.');
  return v;
}

void AppendIntReversed(std::string* rev, uint64_t v) {
  do {
    rev->push_back(static_cast<char>('0' + v % 10));
    v /= 10;
  } while (v > 0);
}

}  // namespace

absl::StatusOr<absl::Duration> ParseGoDuration(std::string_view text) {
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return absl::ZeroDuration();
  if (s.empty()) return InvalidDuration(text);
  constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || IsDigit(s[0]))) return InvalidDuration(text);
    // Integer part.
    uint64_t whole = 0;
    bool pre = false;
    size_t i = 0;
    while (i < s.size() && IsDigit(s[i])) {
      if (whole > (kMax - static_cast<uint64_t>(s[i] - '0')) / 10) return InvalidDuration(text);
      whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
      pre = true;
      ++i;
    }
    // Fraction part (kept to 18 significant digits, like Go's leadingFraction).
    uint64_t frac = 0;
    double scale = 1;
    bool post = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      bool overflow = false;
      while (i < s.size() && IsDigit(s[i])) {
        post = true;
        if (!overflow) {
          if (frac > (kMax - 9) / 10) {
            overflow = true;
          } else {
            frac = frac * 10 + static_cast<uint64_t>(s[i] - '0');
            scale *= 10;
          }
        }
        ++i;
      }
    }
    if (!pre && !post) return InvalidDuration(text);
    size_t u = i;
    while (u < s.size() && s[u] != '.' && !IsDigit(s[u])) ++u;
    std::string_view unit = s.substr(i, u - i);
    if (unit.empty()) {
      return absl::InvalidArgumentError(
          gantry::StrCat("time: missing unit in duration \"", text, "\""));
    }
    uint64_t unit_ns = UnitNanos(unit);
    if (unit_ns == 0) {
      return absl::InvalidArgumentError(
          gantry::StrCat("time: unknown unit \"", unit, "\" in duration \"", text, "\""));
    }
    if (whole > kMax / unit_ns) return InvalidDuration(text);
    uint64_t v = whole * unit_ns;
    if (frac > 0) {
      v += static_cast<uint64_t>(static_cast<double>(frac) * (static_cast<double>(unit_ns) / scale));
      if (v > kMax) return InvalidDuration(text);
    }
    total += v;
    if (total > kMax) return InvalidDuration(text);
    s.remove_prefix(u);
  }
  int64_t ns = static_cast<int64_t>(total);
  return absl::Nanoseconds(neg ? -ns : ns);
}

std::string FormatGoDuration(absl::Duration d) {
  int64_t ns = absl::ToInt64Nanoseconds(d);
  bool neg = ns < 0;
  uint64_t u = neg ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  constexpr uint64_t kSecond = 1000ULL * 1000 * 1000;
  if (u == 0) return "0s";
  std::string rev;  // built back to front
  if (u < kSecond) {
    int prec = 0;
    if (u < 1000) {
      rev = "sn";
      prec = 0;
    } else if (u < 1000 * 1000) {
      rev = "s\xB5\xC2";  // "µs" reversed byte-wise
      prec = 3;
    } else {
      rev = "sm";
      prec = 6;
    }
    u = AppendFracReversed(&rev, u, prec);
    AppendIntReversed(&rev, u);
  } else {
    rev = "s";
    u = AppendFracReversed(&rev, u, 9);
    AppendIntReversed(&rev, u % 60);
    u /= 60;
    if (u > 0) {
      rev.push_back('m');
      AppendIntReversed(&rev, u % 60);
      u /= 60;
      if (u > 0) {
        rev.push_back('h');
        AppendIntReversed(&rev, u);
      }
    }
  }
  if (neg) rev.push_back('-');
  return std::string(rev.rbegin(), rev.rend());
}

}  // namespace gantry::config
