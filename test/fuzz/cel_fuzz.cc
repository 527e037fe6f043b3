// libFuzzer target for the CEL engine: parse + check + evaluate arbitrary
// input in the DRA selector environment (against a sample device) and in the
// standard environment. Any crash or sanitizer report is a bug; errors are
// expected and ignored.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "src/cel/cel.h"
#include "src/cel/dra_env.h"

namespace {

struct Sample {
  std::vector<std::string_view> strings = {"a", "b"};
  std::vector<int64_t> ints = {1, 2, 3};
  std::vector<gantry::cel::DeviceAttribute> attrs;
  std::vector<gantry::cel::DeviceCapacity> caps;
  gantry::cel::DeviceInput input;
  Sample() {
    using gantry::cel::AttributeValue;
    attrs = {{"model", AttributeValue::String("H100")},
             {"index", AttributeValue::Int(3)},
             {"healthy", AttributeValue::Bool(true)},
             {"driverVersion", AttributeValue::Version("1.2.3")},
             {"other.example.com/x", AttributeValue::Strings(strings)},
             {"ints", AttributeValue::Ints(ints)}};
    caps = {{"memory", *gantry::api::Quantity::Parse("80Gi")}};
    input.driver = "gpu.example.com";
    input.attributes = attrs;
    input.capacity = caps;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Sample* sample = new Sample();
  static const gantry::cel::Env* dra = new gantry::cel::Env(gantry::cel::DraSelectorEnv());
  static const gantry::cel::Env* plain = [] {
    auto* e = new gantry::cel::Env(gantry::cel::Env::Standard());
    e->check = false;  // also exercise runtime type errors
    return e;
  }();
  std::string_view expr(reinterpret_cast<const char*>(data), size);
  if (auto p = gantry::cel::Compile(expr, *dra); p.ok()) {
    (void)gantry::cel::EvaluateSelector(**p, sample->input);
  }
  if (auto p = gantry::cel::Compile(expr, *plain); p.ok()) {
    (void)(*p)->Evaluate({});
  }
  return 0;
}
