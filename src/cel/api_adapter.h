// Adapts decoded API objects (src/api/dra.h) to the CEL DeviceInput views,
// for the DRA allocator and the `gantry selector eval` CLI.
#ifndef GANTRY_SRC_CEL_API_ADAPTER_H_
#define GANTRY_SRC_CEL_API_ADAPTER_H_

#include <memory>
#include <string_view>
#include <vector>

#include "src/api/dra.h"
#include "src/cel/dra_env.h"
#include "src/cel/selector_tool.h"

namespace gantry::cel {

// Reusable builder: Build() fills internal buffers (no allocation once they
// have grown) and returns a DeviceInput that points into them and into
// `device`. The result is valid until the next Build() call, the builder's
// destruction, or `device`'s destruction.
class DeviceInputBuilder {
 public:
  const DeviceInput& Build(std::string_view driver, const api::Device& device);

 private:
  DeviceInput input_;
  std::vector<DeviceAttribute> attrs_;
  std::vector<DeviceCapacity> caps_;
  std::vector<std::vector<int64_t>> ints_;
  std::vector<std::unique_ptr<bool[]>> bools_;
  std::vector<std::vector<std::string_view>> strings_;
};

// All devices of `slices` as selector-tool inputs, in slice and device order.
// `storage` owns the per-device buffers and must outlive the result.
std::vector<SelectorToolDevice> SelectorToolDevices(const std::vector<api::ResourceSlice>& slices,
                                                    std::vector<std::unique_ptr<DeviceInputBuilder>>* storage);

}  // namespace gantry::cel

#endif  // GANTRY_SRC_CEL_API_ADAPTER_H_
