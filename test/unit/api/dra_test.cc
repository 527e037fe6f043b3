#include "src/api/dra.h"

#include <ostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace gantry::api {
namespace {

using ::testing::HasSubstr;

JsonValue Parse(simdjson::dom::parser& parser, const std::string& json) {
  auto result = parser.parse(simdjson::padded_string(json));
  EXPECT_EQ(result.error(), simdjson::SUCCESS) << json;
  return result.value_unsafe();
}

// The reference ResourceSlice, with `driver` deliberately after `devices`.
constexpr char kGpuSlice[] = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
  "metadata":{"name":"node-1-gpu-0"},
  "spec":{
    "pool":{"name":"node-1","generation":1,"resourceSliceCount":1},
    "nodeName":"node-1",
    "devices":[
      {"name":"gpu-0",
       "attributes":{"model":{"string":"A100"},"driverVersion":{"version":"1.2.3"},"mig":{"bool":false},
                     "index":{"int":0},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:00"}},
       "capacity":{"memory":{"value":"80Gi"}},
       "taints":[{"key":"example.com/unhealthy","value":"ecc","effect":"NoSchedule"}]},
      {"name":"gpu-1",
       "attributes":{"model":{"string":"A100"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:00"}},
       "capacity":{"memory":{"value":"80Gi"}}}],
    "driver":"gpu.example.com"}})";

TEST(ResourceSliceTest, DecodesReferenceExample) {
  simdjson::dom::parser p;
  auto slice = DecodeResourceSlice(Parse(p, kGpuSlice));
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->spec.driver.view(), "gpu.example.com");
  EXPECT_EQ(slice->spec.pool.name.view(), "node-1");
  EXPECT_EQ(slice->spec.pool.generation, 1);
  EXPECT_EQ(slice->spec.pool.resource_slice_count, 1);
  EXPECT_EQ(slice->spec.node_selection, SliceNodeSelection::kNodeName);
  EXPECT_EQ(slice->spec.node_name.view(), "node-1");
  ASSERT_EQ(slice->spec.devices.size(), 2u);
  const Device& gpu0 = slice->spec.devices[0];
  EXPECT_EQ(gpu0.name.view(), "gpu-0");
  ASSERT_EQ(gpu0.attributes.size(), 5u);
  // Unqualified names are qualified with the driver, sorted by full name.
  const DeviceAttribute* model = gpu0.FindAttribute("gpu.example.com/model");
  ASSERT_NE(model, nullptr);
  EXPECT_TRUE(model->unqualified);
  EXPECT_EQ(model->value.type, AttributeType::kString);
  EXPECT_EQ(model->value.string_value.view(), "A100");
  EXPECT_EQ(gpu0.FindAttribute("gpu.example.com", "model"), model);
  const DeviceAttribute* version = gpu0.FindAttribute("gpu.example.com", "driverVersion");
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(version->value.type, AttributeType::kVersion);
  EXPECT_EQ(version->value.string_value.view(), "1.2.3");
  EXPECT_EQ(gpu0.FindAttribute("gpu.example.com", "mig")->value.type, AttributeType::kBool);
  EXPECT_EQ(gpu0.FindAttribute("gpu.example.com", "index")->value.int_value, 0);
  const DeviceAttribute* root = gpu0.FindAttribute("resource.kubernetes.io", "pcieRoot");
  ASSERT_NE(root, nullptr);
  EXPECT_FALSE(root->unqualified);
  EXPECT_EQ(root->value.string_value.view(), "pci0000:00");
  EXPECT_EQ(gpu0.FindAttribute("gpu.example.com", "absent"), nullptr);
  const DeviceCapacity* mem = gpu0.FindCapacity("gpu.example.com", "memory");
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->value.ToString(), "80Gi");
  EXPECT_EQ(mem->request_policy, nullptr);
  ASSERT_EQ(gpu0.taints.size(), 1u);
  EXPECT_EQ(gpu0.taints[0].effect, TaintEffect::kNoSchedule);
  EXPECT_TRUE(DeviceTaintBlocks(gpu0.taints[0], {}));
  Toleration tol;
  tol.key = Symbol::Intern("example.com/unhealthy");
  tol.op = TolerationOp::kExists;
  EXPECT_FALSE(DeviceTaintBlocks(gpu0.taints[0], {tol}));
  EXPECT_EQ(slice->FindDevice(Symbol::Intern("gpu-1")), &slice->spec.devices[1]);
}

TEST(ResourceSliceTest, DecodesCountersAndConsumableCapacity) {
  simdjson::dom::parser p;
  auto counters = DecodeResourceSlice(Parse(p, R"({"metadata":{"name":"node-1-parts-counters"},
    "spec":{"driver":"gpu.example.com","pool":{"name":"node-1-parts","generation":1,"resourceSliceCount":2},
      "nodeName":"node-1",
      "sharedCounters":[{"name":"gpu-0-counters","counters":{"memory":{"value":"80Gi"},"cores":{"value":"108"}}}]}})"));
  ASSERT_TRUE(counters.ok()) << counters.status();
  ASSERT_EQ(counters->spec.shared_counters.size(), 1u);
  const CounterSet& set = counters->spec.shared_counters[0];
  ASSERT_EQ(set.counters.size(), 2u);
  EXPECT_EQ(set.counters[0].name.view(), "cores");  // sorted
  EXPECT_EQ(set.counters[1].value.ToString(), "80Gi");

  simdjson::dom::parser p2;
  auto parts = DecodeResourceSlice(Parse(p2, R"({"metadata":{"name":"node-1-parts-devices"},
    "spec":{"driver":"gpu.example.com","pool":{"name":"node-1-parts","generation":1,"resourceSliceCount":2},
      "perDeviceNodeSelection":true,
      "devices":[
        {"name":"gpu-0-half-0","nodeName":"node-1",
         "consumesCounters":[{"counterSet":"gpu-0-counters","counters":{"memory":{"value":"40Gi"}}}]},
        {"name":"nic-0","allNodes":true,"allowMultipleAllocations":true,
         "capacity":{"bandwidth":{"value":"10Gi","requestPolicy":{"default":"1Gi",
            "validRange":{"min":"1Gi","step":"1Gi"}}},
           "example.com/slots":{"value":"8","requestPolicy":{"default":"2","validValues":["1","2","4"]}}},
         "bindsToNode":true,"bindingConditions":["Attached"],"bindingFailureConditions":["AttachFailed"]},
        {"name":"remote","nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[
           {"key":"zone","operator":"In","values":["a"]}]}]}}]}})"));
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->spec.node_selection, SliceNodeSelection::kPerDevice);
  const auto& devs = parts->spec.devices;
  ASSERT_EQ(devs.size(), 3u);
  EXPECT_EQ(devs[0].node_name.view(), "node-1");
  ASSERT_EQ(devs[0].consumes_counters.size(), 1u);
  EXPECT_EQ(devs[0].consumes_counters[0].counter_set.view(), "gpu-0-counters");
  EXPECT_EQ(devs[0].consumes_counters[0].counters[0].value.ToString(), "40Gi");
  EXPECT_TRUE(devs[1].all_nodes);
  EXPECT_TRUE(devs[1].allow_multiple_allocations);
  EXPECT_TRUE(devs[1].binds_to_node);
  ASSERT_EQ(devs[1].binding_conditions.size(), 1u);
  EXPECT_EQ(devs[1].binding_failure_conditions[0].view(), "AttachFailed");
  const DeviceCapacity* bw = devs[1].FindCapacity(Symbol::Intern("gpu.example.com/bandwidth"));
  ASSERT_NE(bw, nullptr);
  ASSERT_NE(bw->request_policy, nullptr);
  EXPECT_EQ(bw->request_policy->default_value->ToString(), "1Gi");
  ASSERT_TRUE(bw->request_policy->valid_range.has_value());
  EXPECT_EQ(bw->request_policy->valid_range->min.ToString(), "1Gi");
  EXPECT_FALSE(bw->request_policy->valid_range->max.has_value());
  EXPECT_EQ(bw->request_policy->valid_range->step->ToString(), "1Gi");
  const DeviceCapacity* slots = devs[1].FindCapacity("example.com", "slots");
  ASSERT_NE(slots, nullptr);
  EXPECT_FALSE(slots->unqualified);
  EXPECT_EQ(slots->request_policy->valid_values.size(), 3u);
  ASSERT_NE(devs[2].node_selector, nullptr);
  EXPECT_EQ(devs[2].node_selector->terms.size(), 1u);
}

TEST(ResourceSliceTest, NodeSelectionModes) {
  struct Case {
    std::string fields;
    SliceNodeSelection want;
  };
  for (const Case& c : {Case{R"("nodeName":"n1")", SliceNodeSelection::kNodeName},
                        Case{R"("allNodes":true)", SliceNodeSelection::kAllNodes},
                        Case{R"("nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]})",
                             SliceNodeSelection::kNodeSelector},
                        Case{R"("perDeviceNodeSelection":true)", SliceNodeSelection::kPerDevice}}) {
    simdjson::dom::parser p;
    auto slice = DecodeResourceSlice(Parse(p, R"({"metadata":{"name":"s"},"spec":{"driver":"d.example.com",
      "pool":{"name":"p","generation":0,"resourceSliceCount":1},)" + c.fields + "}}"));
    ASSERT_TRUE(slice.ok()) << slice.status();
    EXPECT_EQ(slice->spec.node_selection, c.want) << c.fields;
  }
}

TEST(ResourceSliceTest, ListAttributesAndVersions) {
  simdjson::dom::parser p;
  auto slice = DecodeResourceSlice(Parse(p, R"({"metadata":{"name":"s"},"spec":{"driver":"d.example.com",
    "pool":{"name":"p","resourceSliceCount":1},"nodeName":"n",
    "devices":[{"name":"a","attributes":{"numaNode":{"ints":[0,1]},
      "v":{"version":"1.0.0-rc.1+build.5"}}}]}})"));
  ASSERT_TRUE(slice.ok()) << slice.status();
  const Device& dev = slice->spec.devices[0];
  ASSERT_EQ(dev.list_attributes.size(), 1u);
  const DeviceListAttribute* numa = dev.FindListAttribute(Symbol::Intern("d.example.com/numaNode"));
  ASSERT_NE(numa, nullptr);
  EXPECT_EQ(numa->type, AttributeType::kInt);
  EXPECT_EQ(numa->values.size(), 2u);
  EXPECT_EQ(dev.FindAttribute("d.example.com", "v")->value.string_value.view(), "1.0.0-rc.1+build.5");
}

TEST(DeviceClassTest, DecodesReferenceExample) {
  simdjson::dom::parser p;
  auto dc = DecodeDeviceClass(Parse(p, R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
    "metadata":{"name":"gpu.example.com"},
    "spec":{"selectors":[{"cel":{"expression":"device.driver == \"gpu.example.com\""}}],
      "extendedResourceName":"example.com/gpu",
      "config":[{"opaque":{"driver":"gpu.example.com","parameters":{"apiVersion":"gpu.example.com/v1","kind":"GpuConfig"}}}]}})"));
  ASSERT_TRUE(dc.ok()) << dc.status();
  ASSERT_EQ(dc->spec.selectors.size(), 1u);
  EXPECT_EQ(dc->spec.selectors[0].cel_expression, "device.driver == \"gpu.example.com\"");
  ASSERT_EQ(dc->spec.config.size(), 1u);
  EXPECT_EQ(dc->spec.config[0].driver.view(), "gpu.example.com");
  EXPECT_EQ(dc->spec.config[0].parameters, R"({"apiVersion":"gpu.example.com/v1","kind":"GpuConfig"})");
  EXPECT_EQ(dc->EffectiveExtendedResourceName(), "example.com/gpu");

  simdjson::dom::parser p2;
  auto implicit = DecodeDeviceClass(Parse(p2, R"({"metadata":{"name":"nic"},"spec":{}})"));
  ASSERT_TRUE(implicit.ok()) << implicit.status();
  EXPECT_EQ(implicit->EffectiveExtendedResourceName(), "deviceclass.resource.kubernetes.io/nic");
}

constexpr char kClaim[] = R"json({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
  "metadata":{"name":"gpu-nic","namespace":"default","uid":"claim-uid"},
  "spec":{"devices":{
    "requests":[
      {"name":"gpus","exactly":{"deviceClassName":"gpu.example.com","allocationMode":"ExactCount","count":2,
        "selectors":[{"cel":{"expression":"device.attributes[\"gpu.example.com\"].model == \"A100\""}}],
        "tolerations":[{"key":"example.com/unhealthy","operator":"Exists","effect":"NoSchedule"}],
        "capacity":{"requests":{"memory":"40Gi"}}}},
      {"name":"nic","firstAvailable":[
        {"name":"rdma","deviceClassName":"nic.example.com",
         "selectors":[{"cel":{"expression":"device.attributes[\"nic.example.com\"].?rdma.orValue(false)"}}]},
        {"name":"plain","deviceClassName":"nic.example.com","allocationMode":"All"}]},
      {"name":"monitor","exactly":{"deviceClassName":"gpu.example.com","allocationMode":"All","adminAccess":true}}],
    "constraints":[{"requests":["gpus","nic"],"matchAttribute":"resource.kubernetes.io/pcieRoot"},
                   {"requests":["nic/rdma"],"distinctAttribute":"nic.example.com/port"}],
    "config":[{"requests":["gpus"],"opaque":{"driver":"gpu.example.com","parameters":{"kind":"GpuConfig"}}}]}},
  "status":{
    "allocation":{
      "devices":{
        "results":[
          {"request":"gpus","driver":"gpu.example.com","pool":"node-1","device":"gpu-0",
           "tolerations":[{"key":"example.com/unhealthy","operator":"Exists","effect":"NoSchedule"}]},
          {"request":"gpus","driver":"gpu.example.com","pool":"node-1","device":"gpu-1"},
          {"request":"nic/rdma","driver":"nic.example.com","pool":"node-1","device":"eth1",
           "shareID":"4f1c","consumedCapacity":{"bandwidth":"3Gi"},
           "bindingConditions":["Attached"],"bindingFailureConditions":["Failed"],"adminAccess":false}],
        "config":[
          {"source":"FromClass","requests":["gpus"],"opaque":{"driver":"gpu.example.com","parameters":{}}},
          {"source":"FromClaim","requests":["gpus"],"opaque":{"driver":"gpu.example.com","parameters":{"kind":"GpuConfig"}}}]},
      "nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-1"]}]}]},
      "allocationTimestamp":"2026-03-01T10:00:00Z"},
    "reservedFor":[{"resource":"pods","name":"my-pod","uid":"pod-uid"}],
    "devices":[{"driver":"nic.example.com","pool":"node-1","device":"eth1","shareID":"4f1c",
      "conditions":[{"type":"Attached","status":"True"}],"data":{"x":1},
      "networkData":{"interfaceName":"eth1","ips":["10.0.0.2/24"],"hardwareAddress":"aa:bb"}}]}})json";

TEST(ResourceClaimTest, DecodesReferenceExample) {
  simdjson::dom::parser p;
  auto claim = DecodeResourceClaim(Parse(p, kClaim));
  ASSERT_TRUE(claim.ok()) << claim.status();
  const ResourceClaimSpec& spec = claim->spec;
  ASSERT_EQ(spec.requests.size(), 3u);
  const DeviceRequest* gpus = spec.FindRequest("gpus");
  ASSERT_NE(gpus, nullptr);
  ASSERT_TRUE(gpus->exactly.has_value());
  EXPECT_EQ(gpus->exactly->device_class_name.view(), "gpu.example.com");
  EXPECT_EQ(gpus->exactly->allocation_mode, AllocationMode::kExactCount);
  EXPECT_EQ(gpus->exactly->count, 2);
  EXPECT_FALSE(gpus->exactly->admin_access);
  EXPECT_EQ(gpus->exactly->selectors.size(), 1u);
  ASSERT_EQ(gpus->exactly->tolerations.size(), 1u);
  EXPECT_EQ(gpus->exactly->tolerations[0].op, TolerationOp::kExists);
  ASSERT_EQ(gpus->exactly->capacity_requests.size(), 1u);
  EXPECT_EQ(gpus->exactly->capacity_requests[0].name.view(), "memory");
  EXPECT_EQ(gpus->exactly->capacity_requests[0].value.ToString(), "40Gi");
  const DeviceRequest* nic = spec.FindRequest("nic");
  ASSERT_NE(nic, nullptr);
  EXPECT_FALSE(nic->exactly.has_value());
  ASSERT_EQ(nic->first_available.size(), 2u);
  EXPECT_EQ(nic->first_available[0].name.view(), "rdma");
  EXPECT_EQ(nic->first_available[0].spec.count, 1);  // defaulted
  EXPECT_EQ(nic->first_available[1].spec.allocation_mode, AllocationMode::kAll);
  EXPECT_EQ(nic->first_available[1].spec.count, 0);
  const DeviceRequest* monitor = spec.FindRequest("monitor");
  ASSERT_NE(monitor, nullptr);
  EXPECT_TRUE(monitor->exactly->admin_access);
  ASSERT_EQ(spec.constraints.size(), 2u);
  EXPECT_EQ(spec.constraints[0].match_attribute.view(), "resource.kubernetes.io/pcieRoot");
  EXPECT_EQ(spec.constraints[0].requests.size(), 2u);
  EXPECT_EQ(spec.constraints[1].distinct_attribute.view(), "nic.example.com/port");
  ASSERT_EQ(spec.config.size(), 1u);
  EXPECT_EQ(spec.config[0].opaque.parameters, R"({"kind":"GpuConfig"})");

  ASSERT_TRUE(claim->IsAllocated());
  const AllocationResult& a = *claim->status.allocation;
  ASSERT_EQ(a.results.size(), 3u);
  EXPECT_EQ(a.results[0].device.view(), "gpu-0");
  EXPECT_EQ(a.results[0].tolerations.size(), 1u);
  EXPECT_EQ(a.results[2].request.view(), "nic/rdma");
  EXPECT_EQ(a.results[2].share_id, "4f1c");
  EXPECT_EQ(a.results[2].consumed_capacity[0].value.ToString(), "3Gi");
  EXPECT_EQ(a.results[2].binding_conditions[0].view(), "Attached");
  ASSERT_EQ(a.config.size(), 2u);
  EXPECT_EQ(a.config[0].source, AllocationConfigSource::kFromClass);
  EXPECT_EQ(a.config[1].source, AllocationConfigSource::kFromClaim);
  ASSERT_NE(a.node_selector, nullptr);
  EXPECT_TRUE(a.node_selector->Matches({}, "node-1"));
  EXPECT_FALSE(a.node_selector->Matches({}, "node-2"));
  EXPECT_GT(a.allocation_timestamp_micros, 0);
  EXPECT_TRUE(claim->IsReservedFor("pod-uid"));
  EXPECT_FALSE(claim->IsReservedFor("other"));
  EXPECT_EQ(claim->status.reserved_for[0].resource.view(), "pods");
  EXPECT_TRUE(claim->status.reserved_for[0].api_group.empty());
  ASSERT_EQ(claim->status.devices.size(), 1u);
  EXPECT_EQ(claim->status.devices[0].data, R"({"x":1})");
  ASSERT_TRUE(claim->status.devices[0].network_data.has_value());
  EXPECT_EQ(claim->status.devices[0].network_data->ips[0], "10.0.0.2/24");
}

TEST(ResourceClaimTemplateTest, DecodesNestedSpec) {
  simdjson::dom::parser p;
  auto t = DecodeResourceClaimTemplate(Parse(p, R"({"apiVersion":"resource.k8s.io/v1",
    "kind":"ResourceClaimTemplate","metadata":{"name":"single-gpu","namespace":"ml"},
    "spec":{"metadata":{"labels":{"team":"ml"}},
            "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}}})"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(FindLabel(t->spec.metadata.labels, "team")->view(), "ml");
  ASSERT_EQ(t->spec.spec.requests.size(), 1u);
  EXPECT_EQ(t->spec.spec.requests[0].exactly->count, 1);
}

TEST(DeviceTaintRuleTest, DecodesSelectorAndTaint) {
  simdjson::dom::parser p;
  auto r = DecodeDeviceTaintRule(Parse(p, R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule",
    "metadata":{"name":"maintenance"},
    "spec":{"deviceSelector":{"driver":"gpu.example.com","pool":"node-1"},
            "taint":{"key":"maintenance","value":"planned","effect":"NoExecute","timeAdded":"2026-01-01T00:00:00Z"}},
    "status":{"conditions":[{"type":"EvictionInProgress","status":"False"}]}})"));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->spec.device_selector.has_value());
  const DeviceTaintSelector& sel = *r->spec.device_selector;
  EXPECT_TRUE(sel.Matches(Symbol::Intern("gpu.example.com"), Symbol::Intern("node-1"), Symbol::Intern("gpu-3")));
  EXPECT_FALSE(sel.Matches(Symbol::Intern("gpu.example.com"), Symbol::Intern("node-2"), Symbol::Intern("gpu-3")));
  EXPECT_EQ(r->spec.taint.effect, TaintEffect::kNoExecute);
  EXPECT_GT(r->spec.taint.time_added_micros, 0);
  EXPECT_EQ(r->status.conditions.size(), 1u);

  simdjson::dom::parser p2;
  auto none = DecodeDeviceTaintRule(Parse(p2, R"({"metadata":{"name":"x"},
    "spec":{"taint":{"key":"k","effect":"None"}}})"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->spec.device_selector.has_value());
  EXPECT_EQ(none->spec.taint.effect, TaintEffect::kNone);
  EXPECT_FALSE(DeviceTaintBlocks(none->spec.taint, {}));
}

TEST(QualifiedNameTest, SplitAndQualify) {
  EXPECT_EQ(SplitQualifiedName("a.b/c").first, "a.b");
  EXPECT_EQ(SplitQualifiedName("a.b/c").second, "c");
  EXPECT_EQ(SplitQualifiedName("c").first, "");
  EXPECT_EQ(QualifyName("c", Symbol::Intern("d.io")).view(), "d.io/c");
  EXPECT_EQ(QualifyName("x.io/c", Symbol::Intern("d.io")).view(), "x.io/c");
}

struct ErrorCase {
  std::string name;
  std::string json;
  std::string want;
};
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class DraErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(DraErrorTest, ReportsKindObjectAndPath) {
  const ErrorCase& c = GetParam();
  simdjson::dom::parser p;
  JsonValue root = Parse(p, c.json);
  std::string_view kind;
  if (root["kind"].get_string().get(kind) != simdjson::SUCCESS) kind = "";
  absl::Status status;
  if (kind == "ResourceSlice") {
    status = DecodeResourceSlice(root).status();
  } else if (kind == "DeviceClass") {
    status = DecodeDeviceClass(root).status();
  } else if (kind == "ResourceClaim") {
    status = DecodeResourceClaim(root).status();
  } else if (kind == "ResourceClaimTemplate") {
    status = DecodeResourceClaimTemplate(root).status();
  } else {
    status = DecodeDeviceTaintRule(root).status();
  }
  ASSERT_FALSE(status.ok()) << c.json;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(c.want));
}

// Slice prefix with metadata s1, driver d.example.com, pool p, node n.
#define SLICE(devices) \
  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.example.com","pool":{"name":"p","resourceSliceCount":1},"nodeName":"n","devices":)" devices "}}"
#define CLAIM(devices) \
  R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ns"},"spec":{"devices":)" devices "}}"
#define REQ(exactly) R"({"requests":[{"name":"r","exactly":)" exactly "}]}"

std::string ManyDevices(int n, const std::string& extra) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += ",";
    out += R"({"name":"d)" + std::to_string(i) + "\"" + extra + "}";
  }
  return out + "]";
}

std::string SliceWith(const std::string& devices) {
  return R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.example.com","pool":{"name":"p","resourceSliceCount":1},"nodeName":"n","devices":)" +
         devices + "}}";
}

std::string ManyRequests(int n) {
  std::string out = R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ns"},"spec":{"devices":{"requests":[)";
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += ",";
    out += R"({"name":"r)" + std::to_string(i) + R"(","exactly":{"deviceClassName":"x"}})";
  }
  return out + "]}}}";
}

std::string ManyAttributes(int n) {
  std::string out = R"([{"name":"d0","attributes":{)";
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += ",";
    out += R"("a)" + std::to_string(i) + R"(":{"int":1})";
  }
  return out + "}}]";
}

INSTANTIATE_TEST_SUITE_P(
    Errors, DraErrorTest,
    ::testing::Values(
        // ResourceSlice
        ErrorCase{"SliceNoDriver",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"pool":{"name":"p","resourceSliceCount":1},"nodeName":"n"}})",
                  "ResourceSlice s1: spec.driver: Required value"},
        ErrorCase{"SliceBadDriver",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"Bad_Driver","pool":{"name":"p","resourceSliceCount":1},"nodeName":"n"}})",
                  "ResourceSlice s1: spec.driver: Invalid value: \"Bad_Driver\": must be a DNS subdomain"},
        ErrorCase{"SliceNoPoolCount",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p"},"nodeName":"n"}})",
                  "ResourceSlice s1: spec.pool.resourceSliceCount: Required value"},
        ErrorCase{"SliceZeroPoolCount",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p","resourceSliceCount":0},"nodeName":"n"}})",
                  "spec.pool.resourceSliceCount: Invalid value: 0: must be between 1 and"},
        ErrorCase{"SliceGenerationType",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p","generation":"1","resourceSliceCount":1},"nodeName":"n"}})",
                  "spec.pool.generation: expected an integer, got string"},
        ErrorCase{"SliceBadPoolName",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"a//b","resourceSliceCount":1},"nodeName":"n"}})",
                  "spec.pool.name: Invalid value: \"a//b\""},
        ErrorCase{"SliceNoNodeSelection",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p","resourceSliceCount":1}}})",
                  "ResourceSlice s1: spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"},
        ErrorCase{"SliceTwoNodeSelections",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p","resourceSliceCount":1},"nodeName":"n","allNodes":true}})",
                  "ResourceSlice s1: spec: Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"},
        ErrorCase{"SliceSelectorTwoTerms",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p","resourceSliceCount":1},"nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Exists"}]},{"matchExpressions":[{"key":"b","operator":"Exists"}]}]}}})",
                  "ResourceSlice s1: spec.nodeSelector: Invalid value: must have exactly one node selector term, got 2"},
        ErrorCase{"SliceDevicesAndCounters",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p","resourceSliceCount":1},"nodeName":"n","devices":[{"name":"a"}],"sharedCounters":[{"name":"c","counters":{"m":{"value":"1"}}}]}})",
                  "ResourceSlice s1: spec: Invalid value: only one of `devices` and `sharedCounters` may be set"},
        ErrorCase{"SliceDuplicateCounterSet",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p","resourceSliceCount":1},"nodeName":"n","sharedCounters":[{"name":"c","counters":{"m":{"value":"1"}}},{"name":"c","counters":{"m":{"value":"1"}}}]}})",
                  "spec.sharedCounters: Duplicate value: counter set \"c\""},
        ErrorCase{"SliceCounterNoValue",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p","resourceSliceCount":1},"nodeName":"n","sharedCounters":[{"name":"c","counters":{"m":{}}}]}})",
                  "spec.sharedCounters[0].counters.m.value: Required value"},
        ErrorCase{"DeviceNoName", SLICE(R"([{"attributes":{}}])"),
                  "ResourceSlice s1: spec.devices[0].name: Required value"},
        ErrorCase{"DeviceBadName", SLICE(R"([{"name":"GPU_0"}])"),
                  "spec.devices[0].name: Invalid value: \"GPU_0\": must be a valid DNS label"},
        ErrorCase{"DeviceDuplicateName", SLICE(R"([{"name":"a"},{"name":"a"}])"),
                  "spec.devices[1].name: Duplicate value: \"a\""},
        ErrorCase{"AttributeNoValue", SLICE(R"([{"name":"a","attributes":{"model":{}}}])"),
                  "spec.devices[0].attributes.model: Required value: exactly one value must be specified"},
        ErrorCase{"AttributeTwoValues", SLICE(R"([{"name":"a","attributes":{"model":{"int":1,"string":"x"}}}])"),
                  "spec.devices[0].attributes.model: Invalid value: exactly one value must be specified"},
        ErrorCase{"AttributeIntType", SLICE(R"([{"name":"a","attributes":{"idx":{"int":"1"}}}])"),
                  "spec.devices[0].attributes.idx.int: expected an integer, got string"},
        ErrorCase{"AttributeBoolType", SLICE(R"([{"name":"a","attributes":{"mig":{"bool":"no"}}}])"),
                  "spec.devices[0].attributes.mig.bool: expected a boolean, got string"},
        ErrorCase{"AttributeStringTooLong",
                  SLICE(R"([{"name":"a","attributes":{"s":{"string":"0123456789012345678901234567890123456789012345678901234567890123456789"}}}])"),
                  "spec.devices[0].attributes.s.string: Too long: may not be more than 64 bytes"},
        ErrorCase{"AttributeBadVersion", SLICE(R"([{"name":"a","attributes":{"v":{"version":"1.2"}}}])"),
                  "spec.devices[0].attributes.v.version: Invalid value: \"1.2\": must be a string compatible with semver.org spec 2.0.0"},
        ErrorCase{"AttributeLeadingZeroVersion", SLICE(R"([{"name":"a","attributes":{"v":{"version":"01.2.3"}}}])"),
                  "attributes.v.version: Invalid value: \"01.2.3\""},
        ErrorCase{"AttributeBadName", SLICE(R"([{"name":"a","attributes":{"bad-name":{"int":1}}}])"),
                  "spec.devices[0].attributes[\"bad-name\"]: Invalid value: \"bad-name\": must be a C identifier optionally prefixed by <domain>/"},
        ErrorCase{"AttributeDuplicateAfterQualify",
                  SLICE(R"([{"name":"a","attributes":{"model":{"int":1},"d.example.com/model":{"int":2}}}])"),
                  "spec.devices[0].attributes: Duplicate value: attribute \"d.example.com/model\""},
        ErrorCase{"EmptyListAttribute", SLICE(R"([{"name":"a","attributes":{"n":{"ints":[]}}}])"),
                  "spec.devices[0].attributes.n.ints: Required value: must not be empty"},
        ErrorCase{"CapacityNoValue", SLICE(R"([{"name":"a","capacity":{"memory":{}}}])"),
                  "spec.devices[0].capacity.memory.value: Required value"},
        ErrorCase{"CapacityBadQuantity", SLICE(R"([{"name":"a","capacity":{"memory":{"value":"80 GB"}}}])"),
                  "spec.devices[0].capacity.memory.value: Invalid value: \"80 GB\""},
        ErrorCase{"CapacityNegative", SLICE(R"([{"name":"a","capacity":{"memory":{"value":"-1"}}}])"),
                  "spec.devices[0].capacity.memory.value: Invalid value: \"-1\": must be greater than or equal to 0"},
        ErrorCase{"PolicyBothKinds",
                  SLICE(R"([{"name":"a","capacity":{"bw":{"value":"10","requestPolicy":{"validValues":["1"],"validRange":{"min":"1"}}}}}])"),
                  "spec.devices[0].capacity.bw.requestPolicy: Invalid value: exactly one of `validValues`, `validRange` may be specified"},
        ErrorCase{"PolicyUnsortedValues",
                  SLICE(R"([{"name":"a","capacity":{"bw":{"value":"10","requestPolicy":{"validValues":["2","1"]}}}}])"),
                  "spec.devices[0].capacity.bw.requestPolicy.validValues[1]: Invalid value: values must be sorted in ascending order and unique"},
        ErrorCase{"PolicyDefaultNotValid",
                  SLICE(R"([{"name":"a","capacity":{"bw":{"value":"10","requestPolicy":{"default":"3","validValues":["1","2"]}}}}])"),
                  "spec.devices[0].capacity.bw.requestPolicy.default: Invalid value: \"3\": must be one of the validValues"},
        ErrorCase{"PolicyRangeNoMin",
                  SLICE(R"([{"name":"a","capacity":{"bw":{"value":"10","requestPolicy":{"validRange":{"max":"5"}}}}}])"),
                  "spec.devices[0].capacity.bw.requestPolicy.validRange.min: Required value"},
        ErrorCase{"PolicyRangeMaxBelowMin",
                  SLICE(R"([{"name":"a","capacity":{"bw":{"value":"10","requestPolicy":{"validRange":{"min":"5","max":"1"}}}}}])"),
                  "requestPolicy.validRange.max: Invalid value: \"1\": must be greater than or equal to min"},
        ErrorCase{"PolicyZeroStep",
                  SLICE(R"([{"name":"a","capacity":{"bw":{"value":"10","requestPolicy":{"validRange":{"min":"1","step":"0"}}}}}])"),
                  "requestPolicy.validRange.step: Invalid value: \"0\": must be greater than zero"},
        ErrorCase{"TaintNoEffect", SLICE(R"([{"name":"a","taints":[{"key":"k"}]}])"),
                  "spec.devices[0].taints[0].effect: Required value"},
        ErrorCase{"TaintBadEffect", SLICE(R"([{"name":"a","taints":[{"key":"k","effect":"PreferNoSchedule"}]}])"),
                  "spec.devices[0].taints[0].effect: Unsupported value: \"PreferNoSchedule\": supported values: \"NoExecute\", \"NoSchedule\", \"None\""},
        ErrorCase{"TaintNoKey", SLICE(R"([{"name":"a","taints":[{"effect":"NoSchedule"}]}])"),
                  "spec.devices[0].taints[0].key: Required value"},
        ErrorCase{"ConsumesTooMany",
                  SLICE(R"([{"name":"a","consumesCounters":[{"counterSet":"a","counters":{"m":{"value":"1"}}},{"counterSet":"b","counters":{"m":{"value":"1"}}},{"counterSet":"c","counters":{"m":{"value":"1"}}}]}])"),
                  "spec.devices[0].consumesCounters: Too many: 3: must have at most 2 items"},
        ErrorCase{"ConsumesDuplicateSet",
                  SLICE(R"([{"name":"a","consumesCounters":[{"counterSet":"a","counters":{"m":{"value":"1"}}},{"counterSet":"a","counters":{"m":{"value":"1"}}}]}])"),
                  "spec.devices[0].consumesCounters[1].counterSet: Duplicate value: \"a\""},
        ErrorCase{"ConsumesNoCounters", SLICE(R"([{"name":"a","consumesCounters":[{"counterSet":"a"}]}])"),
                  "spec.devices[0].consumesCounters[0].counters: Required value"},
        ErrorCase{"TooManyBindingConditions",
                  SLICE(R"([{"name":"a","bindingConditions":["a","b","c","d","e"],"bindingFailureConditions":["f"]}])"),
                  "spec.devices[0].bindingConditions: Too many: 5: must have at most 4 items"},
        ErrorCase{"BindingConditionsAlone", SLICE(R"([{"name":"a","bindingConditions":["a"]}])"),
                  "spec.devices[0].bindingFailureConditions: Required value: bindingConditions and bindingFailureConditions must be set together"},
        ErrorCase{"DeviceNodeWithoutPerDevice", SLICE(R"([{"name":"a","nodeName":"n"}])"),
                  "spec.devices[0]: Invalid value: `nodeName`, `nodeSelector` and `allNodes` may only be set on a device when `perDeviceNodeSelection` is set to true"},
        ErrorCase{"PerDeviceMissingNode",
                  R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{"driver":"d.io","pool":{"name":"p","resourceSliceCount":1},"perDeviceNodeSelection":true,"devices":[{"name":"a"}]}})",
                  "spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes` is required when `perDeviceNodeSelection` is set to true"},
        ErrorCase{"TooManyDevices", SliceWith(ManyDevices(129, "")),
                  "ResourceSlice s1: spec.devices: Too many: 129: must have at most 128 items"},
        ErrorCase{"TooManyTaintedDevices",
                  SliceWith(ManyDevices(65, R"(,"taints":[{"key":"k","effect":"NoSchedule"}])")),
                  "ResourceSlice s1: spec.devices: Too many: 65: must have at most 64 items"},
        ErrorCase{"TooManyAttributes", SliceWith(ManyAttributes(33)),
                  "spec.devices[0]: Too many: 33: must have at most 32 attributes and capacities combined"},
        ErrorCase{"DevicesWrongType", SLICE(R"({"name":"a"})"),
                  "ResourceSlice s1: spec.devices: expected an array, got object"},
        // DeviceClass
        ErrorCase{"ClassSelectorNoCel",
                  R"({"kind":"DeviceClass","metadata":{"name":"gpu"},"spec":{"selectors":[{}]}})",
                  "DeviceClass gpu: spec.selectors[0].cel: Required value"},
        ErrorCase{"ClassSelectorEmptyExpression",
                  R"({"kind":"DeviceClass","metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":{"expression":""}}]}})",
                  "DeviceClass gpu: spec.selectors[0].cel.expression: Required value"},
        ErrorCase{"ClassConfigNoOpaque",
                  R"({"kind":"DeviceClass","metadata":{"name":"gpu"},"spec":{"config":[{}]}})",
                  "DeviceClass gpu: spec.config[0].opaque: Required value"},
        ErrorCase{"ClassConfigNoDriver",
                  R"({"kind":"DeviceClass","metadata":{"name":"gpu"},"spec":{"config":[{"opaque":{"parameters":{}}}]}})",
                  "DeviceClass gpu: spec.config[0].opaque.driver: Required value"},
        ErrorCase{"ClassConfigNoParameters",
                  R"({"kind":"DeviceClass","metadata":{"name":"gpu"},"spec":{"config":[{"opaque":{"driver":"d.io"}}]}})",
                  "DeviceClass gpu: spec.config[0].opaque.parameters: Required value"},
        ErrorCase{"ClassBadExtendedResource",
                  R"({"kind":"DeviceClass","metadata":{"name":"gpu"},"spec":{"extendedResourceName":"gpu"}})",
                  "DeviceClass gpu: spec.extendedResourceName: Invalid value: \"gpu\""},
        ErrorCase{"ClassExpressionType",
                  R"({"kind":"DeviceClass","metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":{"expression":true}}]}})",
                  "spec.selectors[0].cel.expression: expected a string, got boolean"},
        // ResourceClaim
        ErrorCase{"RequestNoName", CLAIM(R"({"requests":[{"exactly":{"deviceClassName":"x"}}]})"),
                  "ResourceClaim ns/c: spec.devices.requests[0].name: Required value"},
        ErrorCase{"RequestDuplicate",
                  CLAIM(R"({"requests":[{"name":"a","exactly":{"deviceClassName":"x"}},{"name":"a","exactly":{"deviceClassName":"x"}}]})"),
                  "ResourceClaim ns/c: spec.devices.requests[1].name: Duplicate value: \"a\""},
        ErrorCase{"RequestNeither", CLAIM(R"({"requests":[{"name":"a"}]})"),
                  "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"},
        ErrorCase{"RequestBoth",
                  CLAIM(R"({"requests":[{"name":"a","exactly":{"deviceClassName":"x"},"firstAvailable":[{"name":"s","deviceClassName":"x"}]}]})"),
                  "spec.devices.requests[0]: Invalid value: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"},
        ErrorCase{"NoDeviceClass", CLAIM(REQ(R"({"count":1})")),
                  "ResourceClaim ns/c: spec.devices.requests[0].exactly.deviceClassName: Required value"},
        ErrorCase{"BadAllocationMode", CLAIM(REQ(R"({"deviceClassName":"x","allocationMode":"Some"})")),
                  "spec.devices.requests[0].exactly.allocationMode: Unsupported value: \"Some\": supported values: \"All\", \"ExactCount\""},
        ErrorCase{"CountZero", CLAIM(REQ(R"({"deviceClassName":"x","count":0})")),
                  "spec.devices.requests[0].exactly.count: Invalid value: 0: must be between 1 and 32, inclusive"},
        ErrorCase{"CountTooLarge", CLAIM(REQ(R"({"deviceClassName":"x","count":33})")),
                  "spec.devices.requests[0].exactly.count: Invalid value: 33: must be between 1 and 32, inclusive"},
        ErrorCase{"CountWithAll", CLAIM(REQ(R"({"deviceClassName":"x","allocationMode":"All","count":2})")),
                  "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"},
        ErrorCase{"CountType", CLAIM(REQ(R"({"deviceClassName":"x","count":"2"})")),
                  "spec.devices.requests[0].exactly.count: expected an integer, got string"},
        ErrorCase{"AdminAccessType", CLAIM(REQ(R"({"deviceClassName":"x","adminAccess":"yes"})")),
                  "spec.devices.requests[0].exactly.adminAccess: expected a boolean, got string"},
        ErrorCase{"SelectorNoCel", CLAIM(REQ(R"({"deviceClassName":"x","selectors":[{"other":{}}]})")),
                  "spec.devices.requests[0].exactly.selectors[0].cel: Required value"},
        ErrorCase{"TolerationBadOperator",
                  CLAIM(REQ(R"({"deviceClassName":"x","tolerations":[{"key":"k","operator":"In"}]})")),
                  "spec.devices.requests[0].exactly.tolerations[0].operator: Unsupported value: \"In\""},
        ErrorCase{"TolerationPreferNoSchedule",
                  CLAIM(REQ(R"({"deviceClassName":"x","tolerations":[{"key":"k","operator":"Exists","effect":"PreferNoSchedule"}]})")),
                  "spec.devices.requests[0].exactly.tolerations[0].effect: Unsupported value: \"PreferNoSchedule\""},
        ErrorCase{"CapacityRequestBad",
                  CLAIM(REQ(R"({"deviceClassName":"x","capacity":{"requests":{"memory":"huge"}}})")),
                  "spec.devices.requests[0].exactly.capacity.requests.memory: Invalid value: \"huge\""},
        ErrorCase{"SubrequestNoName",
                  CLAIM(R"({"requests":[{"name":"a","firstAvailable":[{"deviceClassName":"x"}]}]})"),
                  "spec.devices.requests[0].firstAvailable[0].name: Required value"},
        ErrorCase{"SubrequestDuplicate",
                  CLAIM(R"({"requests":[{"name":"a","firstAvailable":[{"name":"s","deviceClassName":"x"},{"name":"s","deviceClassName":"x"}]}]})"),
                  "spec.devices.requests[0].firstAvailable[1].name: Duplicate value: \"s\""},
        ErrorCase{"SubrequestNoClass",
                  CLAIM(R"({"requests":[{"name":"a","firstAvailable":[{"name":"s"}]}]})"),
                  "spec.devices.requests[0].firstAvailable[0].deviceClassName: Required value"},
        ErrorCase{"FirstAvailableEmpty", CLAIM(R"({"requests":[{"name":"a","firstAvailable":[]}]})"),
                  "spec.devices.requests[0].firstAvailable: Required value"},
        ErrorCase{"TooManyRequests", ManyRequests(33),
                  "ResourceClaim ns/c: spec.devices.requests: Too many: 33: must have at most 32 items"},
        ErrorCase{"ConstraintNeither",
                  CLAIM(R"({"requests":[{"name":"a","exactly":{"deviceClassName":"x"}}],"constraints":[{"requests":["a"]}]})"),
                  "spec.devices.constraints[0]: Required value: exactly one of `matchAttribute` or `distinctAttribute` is required"},
        ErrorCase{"ConstraintBoth",
                  CLAIM(R"({"requests":[{"name":"a","exactly":{"deviceClassName":"x"}}],"constraints":[{"matchAttribute":"d.io/a","distinctAttribute":"d.io/b"}]})"),
                  "spec.devices.constraints[0]: Invalid value: exactly one of `matchAttribute` or `distinctAttribute` is required, but multiple fields are set"},
        ErrorCase{"ConstraintUnqualified",
                  CLAIM(R"({"requests":[{"name":"a","exactly":{"deviceClassName":"x"}}],"constraints":[{"matchAttribute":"model"}]})"),
                  "spec.devices.constraints[0].matchAttribute: Invalid value: \"model\": must be a fully qualified name"},
        ErrorCase{"ConstraintUnknownRequest",
                  CLAIM(R"({"requests":[{"name":"a","exactly":{"deviceClassName":"x"}}],"constraints":[{"requests":["a","b"],"matchAttribute":"d.io/m"}]})"),
                  "ResourceClaim ns/c: spec.devices.constraints[0].requests[1]: Invalid value: \"b\": must be the name of a request in the claim"},
        ErrorCase{"ConstraintUnknownSubrequest",
                  CLAIM(R"({"requests":[{"name":"a","firstAvailable":[{"name":"s","deviceClassName":"x"}]}],"constraints":[{"requests":["a/t"],"matchAttribute":"d.io/m"}]})"),
                  "spec.devices.constraints[0].requests[0]: Invalid value: \"a/t\""},
        ErrorCase{"ConfigUnknownRequest",
                  CLAIM(R"({"requests":[{"name":"a","exactly":{"deviceClassName":"x"}}],"config":[{"requests":["z"],"opaque":{"driver":"d.io","parameters":{}}}]})"),
                  "spec.devices.config[0].requests[0]: Invalid value: \"z\""},
        ErrorCase{"ConfigNoOpaque",
                  CLAIM(R"({"requests":[{"name":"a","exactly":{"deviceClassName":"x"}}],"config":[{"requests":["a"]}]})"),
                  "spec.devices.config[0].opaque: Required value"},
        ErrorCase{"ResultMissingDevice",
                  R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ns"},"status":{"allocation":{"devices":{"results":[{"request":"r","driver":"d","pool":"p"}]}}}})",
                  "ResourceClaim ns/c: status.allocation.devices.results[0].device: Required value"},
        ErrorCase{"ConfigBadSource",
                  R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ns"},"status":{"allocation":{"devices":{"config":[{"source":"FromPod","opaque":{"driver":"d.io","parameters":{}}}]}}}})",
                  "status.allocation.devices.config[0].source: Unsupported value: \"FromPod\": supported values: \"FromClaim\", \"FromClass\""},
        ErrorCase{"ConfigNoSource",
                  R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ns"},"status":{"allocation":{"devices":{"config":[{"opaque":{"driver":"d.io","parameters":{}}}]}}}})",
                  "status.allocation.devices.config[0].source: Required value"},
        ErrorCase{"AllocationTimestamp",
                  R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ns"},"status":{"allocation":{"allocationTimestamp":"now"}}})",
                  "status.allocation.allocationTimestamp: Invalid value: \"now\": not an RFC 3339 timestamp"},
        ErrorCase{"ReservedForNoUid",
                  R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ns"},"status":{"reservedFor":[{"resource":"pods","name":"p"}]}})",
                  "ResourceClaim ns/c: status.reservedFor[0].uid: Required value"},
        ErrorCase{"ReservedForDuplicate",
                  R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ns"},"status":{"reservedFor":[{"resource":"pods","name":"p","uid":"u"},{"resource":"pods","name":"q","uid":"u"}]}})",
                  "status.reservedFor[1].uid: Duplicate value: \"u\""},
        ErrorCase{"DeviceStatusCondition",
                  R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ns"},"status":{"devices":[{"driver":"d","pool":"p","device":"x","conditions":[{"type":"Ready"}]}]}})",
                  "status.devices[0].conditions[0].status: Required value"},
        // ResourceClaimTemplate
        ErrorCase{"TemplateBadRequest",
                  R"({"kind":"ResourceClaimTemplate","metadata":{"name":"t","namespace":"ns"},"spec":{"spec":{"devices":{"requests":[{"name":"r","exactly":{}}]}}}})",
                  "ResourceClaimTemplate ns/t: spec.spec.devices.requests[0].exactly.deviceClassName: Required value"},
        ErrorCase{"TemplateBadLabels",
                  R"({"kind":"ResourceClaimTemplate","metadata":{"name":"t","namespace":"ns"},"spec":{"metadata":{"labels":[]}}})",
                  "ResourceClaimTemplate ns/t: spec.metadata.labels: expected an object, got array"},
        // DeviceTaintRule
        ErrorCase{"RuleNoTaint",
                  R"({"kind":"DeviceTaintRule","metadata":{"name":"r"},"spec":{"deviceSelector":{}}})",
                  "DeviceTaintRule r: spec.taint: Required value"},
        ErrorCase{"RuleBadEffect",
                  R"({"kind":"DeviceTaintRule","metadata":{"name":"r"},"spec":{"taint":{"key":"k","effect":"Evict"}}})",
                  "DeviceTaintRule r: spec.taint.effect: Unsupported value: \"Evict\""},
        ErrorCase{"RuleBadDriver",
                  R"({"kind":"DeviceTaintRule","metadata":{"name":"r"},"spec":{"deviceSelector":{"driver":"A B"},"taint":{"key":"k","effect":"NoSchedule"}}})",
                  "DeviceTaintRule r: spec.deviceSelector.driver: Invalid value: \"A B\""},
        ErrorCase{"RuleTimeAdded",
                  R"({"kind":"DeviceTaintRule","metadata":{"name":"r"},"spec":{"taint":{"key":"k","effect":"NoSchedule","timeAdded":5}}})",
                  "DeviceTaintRule r: spec.taint.timeAdded: expected a string, got number"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

}  // namespace
}  // namespace gantry::api
