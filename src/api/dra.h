// Dynamic Resource Allocation objects (resource.k8s.io/v1): DeviceClass,
// ResourceSlice, ResourceClaim (spec and status), ResourceClaimTemplate and
// DeviceTaintRule, as the structured allocator and the DynamicResources
// plugin consume them.
//
// Compactness: the scheduler holds thousands of slices and claims. Names
// from bounded vocabularies (drivers, pools, devices, attribute and capacity
// names, class names) are interned Symbols; CEL expressions, uids and opaque
// parameters are plain strings. Attribute and capacity maps are vectors
// sorted by the fully qualified name ("<domain>/<id>"): a name written
// without a domain belongs to the slice's driver and is stored qualified
// with it, so one lookup serves both spellings (the original spelling is
// kept in `unqualified`, because results echo the slice's spelling).
//
// Device taints reuse `Taint` from selectors.h; the DRA effect "None" is
// represented as TaintEffect::kNone (it never blocks allocation).
#ifndef GANTRY_SRC_API_DRA_H_
#define GANTRY_SRC_API_DRA_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "src/api/decode.h"
#include "src/api/meta.h"
#include "src/api/policy.h"
#include "src/api/quantity.h"
#include "src/api/resources.h"
#include "src/api/selectors.h"

namespace gantry::api {

// Limits from resource.k8s.io/v1 validation.
inline constexpr size_t kResourceSliceMaxDevices = 128;
// When any device uses taints, counters or list attributes.
inline constexpr size_t kResourceSliceMaxDevicesWithTaintsOrCounters = 64;
inline constexpr size_t kResourceSliceMaxSharedCounters = 8;
inline constexpr size_t kResourceSliceMaxCountersPerSet = 32;
inline constexpr size_t kDeviceMaxAttributesAndCapacities = 32;
inline constexpr size_t kDeviceMaxConsumesCounters = 2;
inline constexpr size_t kDeviceMaxTaints = 16;
inline constexpr size_t kDeviceMaxBindingConditions = 4;
inline constexpr size_t kDeviceAttributeMaxValueLength = 64;
inline constexpr size_t kCapacityMaxValidValues = 10;
inline constexpr size_t kDeviceRequestsMax = 32;
inline constexpr size_t kFirstAvailableMax = 8;
inline constexpr size_t kDeviceSelectorsMax = 32;
inline constexpr size_t kDeviceConstraintsMax = 32;
inline constexpr size_t kDeviceConfigMax = 32;
inline constexpr size_t kDeviceTolerationsMax = 16;
inline constexpr size_t kAllocationResultsMaxSize = 32;
inline constexpr size_t kAllocationConfigMax = 64;
inline constexpr size_t kReservedForMaxSize = 256;
inline constexpr size_t kCELSelectorExpressionMaxLength = 10 * 1024;
inline constexpr size_t kOpaqueParametersMaxLength = 10 * 1024;
inline constexpr size_t kDriverNameMaxLength = 63;

inline constexpr std::string_view kDeleteProtectionFinalizer =
    "resource.kubernetes.io/delete-protection";
inline constexpr std::string_view kPodClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name";
inline constexpr std::string_view kExtendedResourceClaimAnnotation =
    "resource.kubernetes.io/extended-resource-claim";
inline constexpr std::string_view kAdminAccessNamespaceLabel =
    "resource.kubernetes.io/admin-access";

// Splits a qualified name at the first '/': ("domain", "id"); a name without
// '/' has an empty domain.
std::pair<std::string_view, std::string_view> SplitQualifiedName(std::string_view name);
// "<driver>/<name>" when `name` has no domain, else `name`.
Symbol QualifyName(std::string_view name, Symbol driver);

// ---- Devices ---------------------------------------------------------------

enum class AttributeType : uint8_t { kInt, kBool, kString, kVersion };
std::string_view AttributeTypeName(AttributeType t);

// One typed scalar value. Strings and versions are interned (<= 64 chars).
struct AttributeValue {
  AttributeType type = AttributeType::kInt;
  bool bool_value = false;
  int64_t int_value = 0;
  Symbol string_value;  // kString and kVersion

  friend bool operator==(const AttributeValue& a, const AttributeValue& b) {
    return a.type == b.type && a.bool_value == b.bool_value && a.int_value == b.int_value &&
           a.string_value == b.string_value;
  }
};

struct DeviceAttribute {
  Symbol name;               // fully qualified
  bool unqualified = false;  // written without a domain in the slice
  AttributeValue value;
};

// Alpha list attributes (ints/bools/strings/versions); kept apart so scalar
// attributes stay small. Values are in source order and non-empty.
struct DeviceListAttribute {
  Symbol name;  // fully qualified
  bool unqualified = false;
  AttributeType type = AttributeType::kInt;
  std::vector<AttributeValue> values;
};

struct CapacityRequestPolicyRange {
  Quantity min;  // required
  std::optional<Quantity> max;
  std::optional<Quantity> step;
};

// capacity[].requestPolicy: at most one of valid_values / valid_range.
struct CapacityRequestPolicy {
  std::optional<Quantity> default_value;  // JSON `default`
  std::vector<Quantity> valid_values;     // ascending, <= 10, includes default
  std::optional<CapacityRequestPolicyRange> valid_range;
};

struct DeviceCapacity {
  Symbol name;  // fully qualified
  bool unqualified = false;
  Quantity value;
  std::shared_ptr<const CapacityRequestPolicy> request_policy;  // null when absent
};

// One counter {name: {value}}; lists of counters are sorted by name.
struct Counter {
  Symbol name;
  Quantity value;
};

// ResourceSlice spec.sharedCounters[].
struct CounterSet {
  Symbol name;
  std::vector<Counter> counters;
};

// Device consumesCounters[].
struct DeviceCounterConsumption {
  Symbol counter_set;
  std::vector<Counter> counters;
};

struct Device {
  Symbol name;
  std::vector<DeviceAttribute> attributes;            // sorted by name
  std::vector<DeviceListAttribute> list_attributes;   // sorted by name
  std::vector<DeviceCapacity> capacity;               // sorted by name
  std::vector<DeviceCounterConsumption> consumes_counters;
  std::vector<Taint> taints;
  // Per-device node selection (only with spec.perDeviceNodeSelection).
  Symbol node_name;
  std::shared_ptr<const NodeSelector> node_selector;
  bool all_nodes = false;
  bool binds_to_node = false;
  bool allow_multiple_allocations = false;
  std::vector<Symbol> binding_conditions;
  std::vector<Symbol> binding_failure_conditions;

  // Attribute by fully qualified name, or null.
  const DeviceAttribute* FindAttribute(Symbol qualified_name) const;
  const DeviceAttribute* FindAttribute(std::string_view qualified_name) const;
  // Attribute by (domain, id) as CEL addresses it: device.attributes[domain].id.
  const DeviceAttribute* FindAttribute(std::string_view domain, std::string_view id) const;
  const DeviceListAttribute* FindListAttribute(Symbol qualified_name) const;
  const DeviceCapacity* FindCapacity(Symbol qualified_name) const;
  const DeviceCapacity* FindCapacity(std::string_view domain, std::string_view id) const;
};

// ---- ResourceSlice ---------------------------------------------------------

struct ResourcePool {
  Symbol name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
};

// Which of the mutually exclusive node-selection fields the slice sets.
enum class SliceNodeSelection : uint8_t { kNodeName, kNodeSelector, kAllNodes, kPerDevice };

struct ResourceSlice {
  ObjectMeta meta;
  struct Spec {
    Symbol driver;
    ResourcePool pool;
    SliceNodeSelection node_selection = SliceNodeSelection::kNodeName;
    Symbol node_name;                                   // kNodeName
    std::shared_ptr<const NodeSelector> node_selector;  // kNodeSelector (exactly one term)
    std::vector<Device> devices;
    std::vector<CounterSet> shared_counters;  // sorted by name
  } spec;

  const Device* FindDevice(Symbol name) const;
};
ResourceSlice DecodeResourceSlice(Decoder& d, JsonValue root);
absl::StatusOr<ResourceSlice> DecodeResourceSlice(JsonValue root);

// ---- DeviceClass -------------------------------------------------------------

// A device selector: only CEL exists today (`{cel: {expression}}`, required).
struct DeviceSelector {
  std::string cel_expression;
};

// {driver, parameters}; `parameters` is the minified JSON of the raw object.
struct OpaqueDeviceConfiguration {
  Symbol driver;
  std::string parameters;
};

struct DeviceClass {
  ObjectMeta meta;
  struct Spec {
    std::vector<DeviceSelector> selectors;
    std::vector<OpaqueDeviceConfiguration> config;  // spec.config[].opaque
    Symbol extended_resource_name;                  // empty when unset
  } spec;

  // spec.extendedResourceName, or the implicit
  // "deviceclass.resource.kubernetes.io/<name>".
  std::string EffectiveExtendedResourceName() const;
};
DeviceClass DecodeDeviceClass(Decoder& d, JsonValue root);
absl::StatusOr<DeviceClass> DecodeDeviceClass(JsonValue root);

// ---- ResourceClaim -----------------------------------------------------------

enum class AllocationMode : uint8_t { kExactCount, kAll };
std::string_view AllocationModeName(AllocationMode m);

// A capacity request keyed by the name as written (qualified or not: the
// allocator resolves it against each device's driver).
struct CapacityRequest {
  Symbol name;
  Quantity value;
};

// The fields of `exactly` and of each firstAvailable subrequest.
struct ExactDeviceRequest {
  Symbol device_class_name;  // required
  std::vector<DeviceSelector> selectors;
  AllocationMode allocation_mode = AllocationMode::kExactCount;
  int64_t count = 1;  // 1..32 for ExactCount; 0 for All
  bool admin_access = false;  // never set on subrequests
  std::vector<Toleration> tolerations;
  std::vector<CapacityRequest> capacity_requests;  // capacity.requests, sorted by name
};

struct DeviceSubRequest {
  Symbol name;
  ExactDeviceRequest spec;
};

// spec.devices.requests[]: exactly one of `exactly` / `firstAvailable`.
struct DeviceRequest {
  Symbol name;
  std::optional<ExactDeviceRequest> exactly;
  std::vector<DeviceSubRequest> first_available;
};

// spec.devices.constraints[]: exactly one of the two attributes is set.
struct DeviceConstraint {
  std::vector<Symbol> requests;  // empty: all requests; "req" or "req/sub"
  Symbol match_attribute;        // fully qualified
  Symbol distinct_attribute;     // fully qualified
};

struct DeviceClaimConfiguration {
  std::vector<Symbol> requests;  // empty: all requests
  OpaqueDeviceConfiguration opaque;
};

struct ResourceClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;

  const DeviceRequest* FindRequest(std::string_view name) const;
};
// Decodes a ResourceClaimSpec (the object at `spec`), validating request
// names and references between constraints/config and requests.
ResourceClaimSpec DecodeResourceClaimSpec(Decoder& d, JsonValue v);

struct DeviceRequestAllocationResult {
  Symbol request;  // "req" or "req/sub"
  Symbol driver;
  Symbol pool;
  Symbol device;
  bool admin_access = false;
  std::vector<Toleration> tolerations;
  std::vector<Symbol> binding_conditions;
  std::vector<Symbol> binding_failure_conditions;
  std::string share_id;
  std::vector<CapacityRequest> consumed_capacity;  // sorted by name
};

enum class AllocationConfigSource : uint8_t { kFromClass, kFromClaim };
std::string_view AllocationConfigSourceName(AllocationConfigSource s);

struct DeviceAllocationConfiguration {
  AllocationConfigSource source = AllocationConfigSource::kFromClaim;
  std::vector<Symbol> requests;
  OpaqueDeviceConfiguration opaque;
};

struct AllocationResult {
  std::vector<DeviceRequestAllocationResult> results;  // devices.results
  std::vector<DeviceAllocationConfiguration> config;   // devices.config
  std::shared_ptr<const NodeSelector> node_selector;   // null: available everywhere
  int64_t allocation_timestamp_micros = 0;
};

struct ResourceClaimConsumerReference {
  Symbol api_group;  // empty for pods
  Symbol resource;   // "pods", "podgroups", ...
  std::string name;
  std::string uid;
};

struct NetworkDeviceData {
  std::string interface_name;
  std::vector<std::string> ips;
  std::string hardware_address;
};

// status.devices[] (keyed by driver+pool+device+shareID).
struct AllocatedDeviceStatus {
  Symbol driver;
  Symbol pool;
  Symbol device;
  std::string share_id;
  std::vector<Condition> conditions;
  std::string data;  // minified JSON, empty when absent
  std::optional<NetworkDeviceData> network_data;
};

struct ResourceClaim {
  ObjectMeta meta;
  ResourceClaimSpec spec;
  struct Status {
    std::optional<AllocationResult> allocation;
    std::vector<ResourceClaimConsumerReference> reserved_for;
    std::vector<AllocatedDeviceStatus> devices;
  } status;

  bool IsAllocated() const { return status.allocation.has_value(); }
  bool IsReservedFor(std::string_view uid) const;
};
ResourceClaim DecodeResourceClaim(Decoder& d, JsonValue root);
absl::StatusOr<ResourceClaim> DecodeResourceClaim(JsonValue root);

// ---- ResourceClaimTemplate -------------------------------------------------

struct ResourceClaimTemplate {
  ObjectMeta meta;
  struct Spec {
    ObjectMeta metadata;  // labels/annotations for the generated claims
    ResourceClaimSpec spec;
  } spec;
};
ResourceClaimTemplate DecodeResourceClaimTemplate(Decoder& d, JsonValue root);
absl::StatusOr<ResourceClaimTemplate> DecodeResourceClaimTemplate(JsonValue root);

// ---- DeviceTaintRule -------------------------------------------------------

// Empty fields match everything.
struct DeviceTaintSelector {
  Symbol driver;
  Symbol pool;
  Symbol device;

  bool Matches(Symbol device_driver, Symbol device_pool, Symbol device_name) const;
};

struct DeviceTaintRule {
  ObjectMeta meta;
  struct Spec {
    // nullopt (absent selector) matches no device; an empty one matches all.
    std::optional<DeviceTaintSelector> device_selector;
    Taint taint;
  } spec;
  struct Status {
    std::vector<Condition> conditions;
  } status;
};
DeviceTaintRule DecodeDeviceTaintRule(Decoder& d, JsonValue root);
absl::StatusOr<DeviceTaintRule> DecodeDeviceTaintRule(JsonValue root);

// Decodes a DeviceTaint ({key, value, effect: None|NoSchedule|NoExecute, timeAdded}).
Taint DecodeDeviceTaint(Decoder& d, JsonValue v);
// Whether `taint` prevents allocation: NoSchedule/NoExecute and not tolerated.
bool DeviceTaintBlocks(const Taint& taint, const std::vector<Toleration>& tolerations);

}  // namespace gantry::api

#endif  // GANTRY_SRC_API_DRA_H_
