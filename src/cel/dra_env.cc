// DRA selector environment. See dra_env.h.
#include "src/cel/dra_env.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gantry/util/strings.h"
#include "src/cel/semver.h"

namespace gantry::cel {

Env DraSelectorEnv() {
  Env env = Env::Standard();
  env.require_bool_result = true;
  env.error_prefix = "compilation failed: ";
  env.objects["kubernetes.DRADevice"] = {
      {"driver", Type::Of(TypeKind::kString)},
      {"attributes", Type::Map(Type::Of(TypeKind::kString), Type::Map(Type::Of(TypeKind::kString), Type::Dyn()))},
      {"capacity", Type::Map(Type::Of(TypeKind::kString),
                             Type::Map(Type::Of(TypeKind::kString), Type::Opaque("kubernetes.Quantity")))},
      {"allowMultipleAllocations", Type::Of(TypeKind::kBool)},
  };
  env.AddVariable("device", Type::Object("kubernetes.DRADevice"));
  return env;
}

Value DeviceValue(const DeviceInput& input) {
  return Value::DraView(Kind::kObject, Rep::kDevice, &input, "");
}

absl::Status ValidateDeviceInput(const DeviceInput& device) {
  for (const DeviceAttribute& a : device.attributes) {
    std::string err;
    if (a.value.type == AttributeValue::Type::kVersion) {
      if (!ParseSemver(a.value.string_value, nullptr, &err)) {
        return absl::InvalidArgumentError(StrCat("attribute ", a.name, ": parse semantic version: ", err));
      }
    } else if (a.value.type == AttributeValue::Type::kVersions) {
      for (std::string_view v : a.value.strings) {
        if (!ParseSemver(v, nullptr, &err)) {
          return absl::InvalidArgumentError(StrCat("attribute ", a.name, ": parse semantic version: ", err));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> EvaluateSelector(const Program& program, const DeviceInput& device) {
  Value dev = DeviceValue(device);
  Value r = program.Evaluate(std::span<const Value>(&dev, 1));
  if (r.kind() == Kind::kBool) return r.bool_value();
  if (r.is_error()) {
    const std::string& msg = r.error_message();
    if (absl::StartsWith(msg, "no such key")) {
      return absl::InvalidArgumentError(StrCat(msg, kNoSuchKeyHint));
    }
    return absl::InvalidArgumentError(msg);
  }
  std::string shown = DebugString(r);
  if (shown.size() > 200) shown = shown.substr(0, 200) + "...";
  return absl::InvalidArgumentError(StrCat("CEL result of type ", TypeName(r),
                                           " could not be converted to bool: ", shown));
}

}  // namespace gantry::cel
