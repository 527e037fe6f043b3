// API -> DeviceInput adapter. See api_adapter.h.
#include "src/cel/api_adapter.h"

namespace gantry::cel {

namespace {

AttributeValue Scalar(const api::AttributeValue& v) {
  switch (v.type) {
    case api::AttributeType::kInt: return AttributeValue::Int(v.int_value);
    case api::AttributeType::kBool: return AttributeValue::Bool(v.bool_value);
    case api::AttributeType::kString: return AttributeValue::String(v.string_value.view());
    case api::AttributeType::kVersion: return AttributeValue::Version(v.string_value.view());
  }
  return AttributeValue::Int(0);
}

}  // namespace

const DeviceInput& DeviceInputBuilder::Build(std::string_view driver, const api::Device& device) {
  attrs_.clear();
  caps_.clear();
  size_t lists = device.list_attributes.size();
  if (ints_.size() < lists) ints_.resize(lists);
  if (bools_.size() < lists) bools_.resize(lists);
  if (strings_.size() < lists) strings_.resize(lists);
  for (const api::DeviceAttribute& a : device.attributes) {
    attrs_.push_back({a.name.view(), Scalar(a.value)});
  }
  for (size_t i = 0; i < lists; ++i) {
    const api::DeviceListAttribute& l = device.list_attributes[i];
    AttributeValue v;
    switch (l.type) {
      case api::AttributeType::kInt:
        ints_[i].clear();
        for (const auto& e : l.values) ints_[i].push_back(e.int_value);
        v = AttributeValue::Ints(ints_[i]);
        break;
      case api::AttributeType::kBool:
        bools_[i] = std::make_unique<bool[]>(l.values.size());
        for (size_t j = 0; j < l.values.size(); ++j) bools_[i][j] = l.values[j].bool_value;
        v = AttributeValue::Bools(std::span<const bool>(bools_[i].get(), l.values.size()));
        break;
      case api::AttributeType::kString:
      case api::AttributeType::kVersion:
        strings_[i].clear();
        for (const auto& e : l.values) strings_[i].push_back(e.string_value.view());
        v = l.type == api::AttributeType::kString ? AttributeValue::Strings(strings_[i])
                                                  : AttributeValue::Versions(strings_[i]);
        break;
    }
    attrs_.push_back({l.name.view(), v});
  }
  for (const api::DeviceCapacity& c : device.capacity) caps_.push_back({c.name.view(), c.value});
  input_.driver = driver;
  input_.attributes = attrs_;
  input_.capacity = caps_;
  input_.allow_multiple_allocations = device.allow_multiple_allocations;
  return input_;
}

std::vector<SelectorToolDevice> SelectorToolDevices(const std::vector<api::ResourceSlice>& slices,
                                                    std::vector<std::unique_ptr<DeviceInputBuilder>>* storage) {
  std::vector<SelectorToolDevice> out;
  for (const api::ResourceSlice& s : slices) {
    for (const api::Device& d : s.spec.devices) {
      storage->push_back(std::make_unique<DeviceInputBuilder>());
      const DeviceInput& in = storage->back()->Build(s.spec.driver.view(), d);
      out.push_back({s.spec.pool.name.view(), d.name.view(), in});
    }
  }
  return out;
}

}  // namespace gantry::cel
