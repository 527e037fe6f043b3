// Semantic versions for the Kubernetes semver CEL library
// (k8s.io/apiserver/pkg/cel/library/semverlib.go, blang/semver v4 rules).
// Parsing works on views and never allocates.
#ifndef GANTRY_SRC_CEL_SEMVER_H_
#define GANTRY_SRC_CEL_SEMVER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gantry::cel {

struct SemverParts {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  std::string_view prerelease;  // without '-', may be empty
  std::string_view build;       // without '+', may be empty
};

// Strict parse (MAJOR.MINOR.PATCH[-pre][+build]). On failure returns false and,
// if `error` is not null, stores blang/semver's message.
bool ParseSemver(std::string_view text, SemverParts* out, std::string* error = nullptr);

// Compares by precedence (build metadata ignored): -1, 0 or 1.
int CompareSemver(const SemverParts& a, const SemverParts& b);

// Kubernetes' normalizeAndParse preprocessing: strips a leading "v", drops
// leading zeros, pads "1" / "1.2" with ".0". Returns the normalised text
// (which still has to pass ParseSemver) or an error.
absl::StatusOr<std::string> NormalizeSemver(std::string_view text);

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_SEMVER_H_
