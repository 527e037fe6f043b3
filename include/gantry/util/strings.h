// Bridges between std::string_view and absl::string_view.
//
// Debian's abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so
// absl::string_view is a distinct type and absl::StrCat / SimpleAtoi /
// ParseTime do not accept std::string_view. Gantry code uses std::string_view
// everywhere and goes through these helpers at the abseil boundary.
#ifndef GANTRY_UTIL_STRINGS_H_
#define GANTRY_UTIL_STRINGS_H_

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace gantry {

inline absl::string_view AsAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view AsStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

namespace strings_internal {

template <typename T>
decltype(auto) Adapt(const T& v) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return AsAbsl(v);
  } else {
    return (v);
  }
}

}  // namespace strings_internal

// absl::StrCat that also accepts std::string_view arguments.
template <typename... Args>
std::string StrCat(const Args&... args) {
  return absl::StrCat(strings_internal::Adapt(args)...);
}

// absl::StrAppend that also accepts std::string_view arguments.
template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  absl::StrAppend(out, strings_internal::Adapt(args)...);
}

}  // namespace gantry

#endif  // GANTRY_UTIL_STRINGS_H_
