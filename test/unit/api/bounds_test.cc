// Bounds on sizes and counts taken from input: each object at the bound
// decodes, one past it fails with an error naming the object and the field.
#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/dra.h"
#include "src/api/node.h"
#include "src/api/pod.h"
#include "test/unit/api/test_json.h"

namespace gantry::api {
namespace {

using ::gantry::api::testing_util::Json;
using ::testing::HasSubstr;

// `n` copies of `item`, comma-separated; `{i}` in `item` becomes the index.
std::string Repeat(std::string_view item, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ",";
    std::string one(item);
    for (size_t at; (at = one.find("{i}")) != std::string::npos;)
      one.replace(at, 3, std::to_string(i));
    out += one;
  }
  return out;
}

absl::Status DecodeAs(std::string_view kind, const std::string& text) {
  Json json(text);
  if (kind == "Pod") return DecodePod(json.root()).status();
  if (kind == "Node") return DecodeNode(json.root()).status();
  if (kind == "ResourceSlice") return DecodeResourceSlice(json.root()).status();
  if (kind == "ResourceClaim") return DecodeResourceClaim(json.root()).status();
  if (kind == "DeviceClass") return DecodeDeviceClass(json.root()).status();
  return absl::InternalError("unknown kind");
}

std::string PodWithSpec(const std::string& spec) {
  return R"({"metadata": {"name": "p", "namespace": "ml"}, "spec": {)" + spec + "}}";
}
std::string PodWithMeta(const std::string& meta) {
  return R"({"metadata": {"name": "p", "namespace": "ml", )" + meta + "}}";
}
std::string Slice(size_t devices) {
  return R"({"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com", "nodeName": "n",
      "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "devices": [)" +
         Repeat(R"({"name": "d{i}"})", devices) + "]}}";
}
std::string Claim(size_t requests) {
  return R"({"metadata": {"name": "c", "namespace": "ml"}, "spec": {"devices": {"requests": [)" +
         Repeat(R"({"name": "r{i}", "exactly": {"deviceClassName": "gpu"}})", requests) + "]}}}";
}
std::string ClassWithCel(size_t length) {
  std::string expr = "device.driver == '" + std::string(length - 20, 'x') + "'";
  expr.resize(length, ' ');
  return R"({"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": ")" + expr +
         "\"}}]}}";
}

struct BoundCase {
  const char* name;
  const char* kind;
  std::function<std::string(size_t)> make;  // the object with `n` of the bounded thing
  size_t bound;
  const char* error;  // substring of the error one past the bound
};

TEST(DecodeBoundsTest, Table) {
  const BoundCase cases[] = {
      {"containers", "Pod",
       [](size_t n) {
         return PodWithSpec(R"("containers": [)" + Repeat(R"({"name": "c{i}"})", n) + "]");
       },
       kMaxContainers, "Pod ml/p: spec.containers: Too many: 1025: must have at most 1024 items"},
      {"init containers", "Pod",
       [](size_t n) {
         return PodWithSpec(R"("initContainers": [)" + Repeat(R"({"name": "c{i}"})", n) + "]");
       },
       kMaxContainers, "Pod ml/p: spec.initContainers: Too many: 1025"},
      {"tolerations (generic list bound)", "Pod",
       [](size_t n) {
         return PodWithSpec(R"("tolerations": [)" + Repeat(R"({"operator": "Exists"})", n) + "]");
       },
       kMaxListItems, "Pod ml/p: spec.tolerations: Too many: 10001: must have at most 10000 items"},
      {"volumes (generic list bound)", "Pod",
       [](size_t n) {
         return PodWithSpec(R"("volumes": [)" + Repeat(R"({"name": "v{i}"})", n) + "]");
       },
       kMaxListItems, "Pod ml/p: spec.volumes: Too many: 10001"},
      {"label count (generic map bound)", "Pod",
       [](size_t n) { return PodWithMeta(R"("labels": {)" + Repeat(R"("k{i}": "v")", n) + "}"); },
       kMaxMapEntries, "Pod ml/p: metadata.labels: Too many: 10001: must have at most 10000 items"},
      {"label value length", "Pod",
       [](size_t n) { return PodWithMeta(R"("labels": {"a": ")" + std::string(n, 'v') + "\"}"); },
       kMaxLabelValueLength, "Pod ml/p: metadata.labels.a: Invalid value: \"vvvv"},
      {"label key name length", "Pod",
       [](size_t n) {
         return PodWithMeta(R"("labels": {"example.com/)" + std::string(n, 'k') + "\": \"v\"}");
       },
       kMaxLabelNameLength, "name part must be no more than 63 characters"},
      {"nodeSelector value length", "Pod",
       [](size_t n) {
         return PodWithSpec(R"("nodeSelector": {"zone": ")" + std::string(n, 'z') + "\"}");
       },
       kMaxLabelValueLength, "Pod ml/p: spec.nodeSelector.zone: Invalid value"},
      {"annotations total size", "Pod",
       [](size_t n) {
         return PodWithMeta(R"("annotations": {"a": ")" + std::string(n - 1, 'x') + "\"}");
       },
       kMaxAnnotationsBytes,
       "Pod ml/p: metadata.annotations.a: Too long: all annotations together may not be more "
       "than 262144 bytes"},
      {"name length", "Node",
       [](size_t n) { return R"({"metadata": {"name": ")" + std::string(n, 'n') + "\"}}"; },
       kMaxNameLength, "metadata.name: Too long: may not be more than 253 bytes"},
      {"string length (generic)", "Pod",
       [](size_t n) {
         return PodWithSpec(R"("priorityClassName": ")" + std::string(n, 'x') + "\"");
       },
       kMaxStringBytes,
       "Pod ml/p: spec.priorityClassName: Too long: may not be more than 1048576 bytes"},
      {"devices per ResourceSlice", "ResourceSlice", Slice, kResourceSliceMaxDevices,
       "ResourceSlice s: spec.devices: Too many: 129: must have at most 128 items"},
      {"requests per ResourceClaim", "ResourceClaim", Claim, kDeviceRequestsMax,
       "ResourceClaim ml/c: spec.devices.requests: Too many: 33: must have at most 32 items"},
      {"CEL selector length", "DeviceClass", ClassWithCel, kCELSelectorExpressionMaxLength,
       "DeviceClass gpu: spec.selectors[0].cel.expression: Too long"},
  };
  for (const BoundCase& c : cases) {
    absl::Status at = DecodeAs(c.kind, c.make(c.bound));
    EXPECT_TRUE(at.ok()) << c.name << " at the bound: " << at;
    absl::Status past = DecodeAs(c.kind, c.make(c.bound + 1));
    ASSERT_FALSE(past.ok()) << c.name << " past the bound";
    EXPECT_THAT(std::string(past.message()), HasSubstr(c.error)) << c.name;
    EXPECT_LT(past.message().size(), 1024u) << c.name << ": the error does not echo the input";
  }
}

}  // namespace
}  // namespace gantry::api
