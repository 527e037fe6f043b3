// The DRA device-selector environment: the input struct the allocator fills
// per device, the `device` variable's declaration, and evaluation of a
// compiled selector against one device.
//
// DeviceInput is a set of views: it copies nothing, so building one per
// device is cheap. Everything it points to must outlive the evaluation.
//
// Semantics follow Kubernetes (k8s.io/dynamic-resource-allocation/cel):
//  - attribute and capacity names are "domain/id"; a name without '/' is in
//    the driver's domain;
//  - `device.attributes[d]` / `device.capacity[d]` for an unknown domain is an
//    empty map, while `d in device.attributes` stays false;
//  - a missing id is the runtime error "no such key: <id>" plus Kubernetes'
//    hint about optional chaining / has();
//  - the result must be a bool.
#ifndef GANTRY_SRC_CEL_DRA_ENV_H_
#define GANTRY_SRC_CEL_DRA_ENV_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "src/api/quantity.h"
#include "src/cel/cel.h"

namespace gantry::cel {

struct AttributeValue {
  enum class Type : uint8_t { kInt, kBool, kString, kVersion, kInts, kBools, kStrings, kVersions };
  Type type = Type::kInt;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string_view string_value;               // kString and kVersion
  std::span<const int64_t> ints;               // kInts
  std::span<const bool> bools;                 // kBools
  std::span<const std::string_view> strings;   // kStrings and kVersions

  static AttributeValue Int(int64_t v) { AttributeValue a; a.type = Type::kInt; a.int_value = v; return a; }
  static AttributeValue Bool(bool v) { AttributeValue a; a.type = Type::kBool; a.bool_value = v; return a; }
  static AttributeValue String(std::string_view v) {
    AttributeValue a; a.type = Type::kString; a.string_value = v; return a;
  }
  static AttributeValue Version(std::string_view v) {
    AttributeValue a; a.type = Type::kVersion; a.string_value = v; return a;
  }
  static AttributeValue Ints(std::span<const int64_t> v) { AttributeValue a; a.type = Type::kInts; a.ints = v; return a; }
  static AttributeValue Bools(std::span<const bool> v) { AttributeValue a; a.type = Type::kBools; a.bools = v; return a; }
  static AttributeValue Strings(std::span<const std::string_view> v) {
    AttributeValue a; a.type = Type::kStrings; a.strings = v; return a;
  }
  static AttributeValue Versions(std::span<const std::string_view> v) {
    AttributeValue a; a.type = Type::kVersions; a.strings = v; return a;
  }
};

struct DeviceAttribute {
  std::string_view name;  // "domain/id" or "id" (driver's domain)
  AttributeValue value;
};

struct DeviceCapacity {
  std::string_view name;  // "domain/id" or "id"
  api::Quantity value;
};

struct DeviceInput {
  std::string_view driver;
  std::span<const DeviceAttribute> attributes;
  std::span<const DeviceCapacity> capacity;
  bool allow_multiple_allocations = false;
};

// The environment Kubernetes' scheduler uses for DRA selectors
// (StoredExpressions): variable `device` of type kubernetes.DRADevice,
// result must be bool or dyn, errors prefixed "compilation failed: ".
Env DraSelectorEnv();

// Hint Kubernetes appends to "no such key" runtime errors.
inline constexpr std::string_view kNoSuchKeyHint =
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
    "with has() for optional fields";

// The `device` variable for `input` (a view; `input` must outlive it).
Value DeviceValue(const DeviceInput& input);

// Checks that every version attribute parses as a semantic version; the
// error reads "attribute <name>: parse semantic version: ...".
absl::Status ValidateDeviceInput(const DeviceInput& device);

// Evaluates a program compiled with DraSelectorEnv() (see cel.h) against
// one device. Version attributes are validated when accessed; call
// ValidateDeviceInput() once per device to reject invalid ones up front as
// Kubernetes does. Errors: runtime errors (with Kubernetes' hint for "no such
// key"), cost limit, or "CEL result of type <T> could not be converted to
// bool". Never allocates for typical selectors.
absl::StatusOr<bool> EvaluateSelector(const Program& program, const DeviceInput& device);

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_DRA_ENV_H_
