// Resource amounts as the scheduler counts them.
//
// A `ResourceList` holds integer amounts per resource name: CPU in
// millicores, every other resource in whole units (bytes for memory and
// storage), exactly as upstream's framework.Resource converts quantities
// (MilliValue for cpu, Value otherwise — both rounding up).
#ifndef GANTRY_SRC_API_RESOURCES_H_
#define GANTRY_SRC_API_RESOURCES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "src/api/decode.h"
#include "src/api/intern.h"

namespace gantry::api {

// Well-known resource names, interned once.
struct ResourceNames {
  Symbol cpu, memory, ephemeral_storage, pods;
  static const ResourceNames& Get();
};

// True for names Kubernetes treats as extended resources (domain-prefixed,
// not in kubernetes.io/, not requests.*).
bool IsExtendedResourceName(std::string_view name);
bool IsHugePageResourceName(std::string_view name);

// Prefix of a DeviceClass's implicit extended resource name
// ("deviceclass.resource.kubernetes.io/<class>").
inline constexpr std::string_view kImplicitExtendedResourcePrefix =
    "deviceclass.resource.kubernetes.io/";
// True for names a DeviceClass may serve (extended resources backed by DRA):
// extended resource names and implicit DeviceClass names.
bool IsDraExtendedResourceName(std::string_view name);

struct ResourceAmount {
  Symbol name;
  int64_t value = 0;
};

class ResourceList {
 public:
  ResourceList() = default;

  int64_t Get(Symbol name) const;
  void Set(Symbol name, int64_t value);
  void Add(Symbol name, int64_t value);
  // Add, AddAll and SubAll saturate at INT64_MAX / INT64_MIN instead of
  // overflowing, with the contract of gantry/util/saturating.h (a saturated
  // amount stays saturated).
  // Element-wise: this = this + other.
  void AddAll(const ResourceList& other);
  // Element-wise: this = this - other (may go negative).
  void SubAll(const ResourceList& other);
  // Element-wise max.
  void MaxAll(const ResourceList& other);
  bool empty() const { return items_.empty(); }
  const std::vector<ResourceAmount>& items() const { return items_; }

  friend bool operator==(const ResourceList& a, const ResourceList& b);

 private:
  std::vector<ResourceAmount> items_;  // sorted by Symbol id, zero entries kept
};

// Converts one quantity for `name` into the scheduler's integer unit.
int64_t ResourceValue(Symbol name, const Quantity& q);

// Decodes a {name: quantity} map into integer amounts.
ResourceList DecodeResourceList(Decoder& d, JsonValue v);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_RESOURCES_H_
