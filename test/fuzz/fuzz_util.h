// Helpers shared by the libFuzzer targets.
#ifndef GANTRY_TEST_FUZZ_FUZZ_UTIL_H_
#define GANTRY_TEST_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace gantry::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A violated property (not a crash of the code under test, but a wrong
// answer): print it and abort so that libFuzzer keeps the input.
[[noreturn]] inline void PropertyFailed(const char* what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what);
  std::abort();
}

}  // namespace gantry::fuzz

#endif  // GANTRY_TEST_FUZZ_FUZZ_UTIL_H_
