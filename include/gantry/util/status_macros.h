// Propagation macros for absl::Status / absl::StatusOr. These are the only
// sanctioned way to forward an infrastructure error to the caller.
#ifndef GANTRY_UTIL_STATUS_MACROS_H_
#define GANTRY_UTIL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GANTRY_STATUS_CONCAT_INNER_(a, b) a##b
#define GANTRY_STATUS_CONCAT_(a, b) GANTRY_STATUS_CONCAT_INNER_(a, b)

// Returns from the current function if `expr` (an absl::Status) is not OK.
#define GANTRY_RETURN_IF_ERROR(expr)                   \
  do {                                                 \
    if (::absl::Status _gantry_st = (expr); !_gantry_st.ok()) { \
      return _gantry_st;                               \
    }                                                  \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status,
// otherwise moves the value into `lhs` (which may be a declaration).
#define GANTRY_ASSIGN_OR_RETURN(lhs, rexpr) \
  GANTRY_ASSIGN_OR_RETURN_IMPL_(GANTRY_STATUS_CONCAT_(_gantry_sor_, __LINE__), lhs, rexpr)

#define GANTRY_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                  \
  if (!tmp.ok()) {                                     \
    return std::move(tmp).status();                    \
  }                                                    \
  lhs = std::move(tmp).value()

#endif  // GANTRY_UTIL_STATUS_MACROS_H_
