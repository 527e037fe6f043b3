// DraState: which DeviceClass serves an extended resource (explicit
// spec.extendedResourceName, implicit deviceclass.resource.kubernetes.io/<class>,
// clashes) and the index of the claims the scheduler created for pods'
// extended resources.
#include "src/state/dra_state.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "simdjson.h"

namespace gantry::state {
namespace {

// Decodes one object with `decode` (a top-level api::Decode* function).
template <typename T>
std::shared_ptr<const T> Decode(std::string_view json,
                                absl::StatusOr<T> (*decode)(api::JsonValue)) {
  simdjson::dom::parser parser;
  api::JsonValue v;
  EXPECT_EQ(parser.parse(json).get(v), simdjson::SUCCESS) << json;
  absl::StatusOr<T> obj = decode(v);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return std::make_shared<const T>(obj.ok() ? *std::move(obj) : T());
}

std::shared_ptr<const api::DeviceClass> Class(std::string_view json) {
  return Decode<api::DeviceClass>(json, &api::DecodeDeviceClass);
}

std::shared_ptr<const api::ResourceClaim> Claim(std::string_view json) {
  return Decode<api::ResourceClaim>(json, &api::DecodeResourceClaim);
}

TEST(DraStateExtendedResources, ClassServingAResource) {
  struct Case {
    const char* name;
    std::vector<std::string> classes;  // DeviceClass JSON, upserted in order
    std::vector<std::string> deleted;  // then these class names are deleted
    std::string resource;
    std::string want;  // "" = none
  };
  const std::string a_old =
      R"({"metadata":{"name":"a","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"extendedResourceName":"example.com/gpu"}})";
  const std::string b_new =
      R"({"metadata":{"name":"b","creationTimestamp":"2026-02-01T00:00:00Z"},"spec":{"extendedResourceName":"example.com/gpu"}})";
  const std::string c_same =
      R"({"metadata":{"name":"c","creationTimestamp":"2026-02-01T00:00:00Z"},"spec":{"extendedResourceName":"example.com/gpu"}})";
  const Case cases[] = {
      {"explicit name", {a_old}, {}, "example.com/gpu", "a"},
      {"implicit name of a class with an explicit one",
       {a_old},
       {},
       "deviceclass.resource.kubernetes.io/a",
       "a"},
      {"implicit name of a class without one",
       {R"({"metadata":{"name":"plain"}})"},
       {},
       "deviceclass.resource.kubernetes.io/plain",
       "plain"},
      {"unknown resource", {a_old}, {}, "example.com/nic", ""},
      {"the newer class wins a clash", {a_old, b_new}, {}, "example.com/gpu", "b"},
      {"order of arrival does not matter", {b_new, a_old}, {}, "example.com/gpu", "b"},
      {"same creation time: the first name wins", {c_same, b_new}, {}, "example.com/gpu", "b"},
      {"deleting the winner hands the name on", {a_old, b_new}, {"b"}, "example.com/gpu", "a"},
      {"deleted class serves nothing", {a_old}, {"a"}, "deviceclass.resource.kubernetes.io/a", ""},
      {"a class renaming its resource gives the old one up",
       {a_old, R"({"metadata":{"name":"a"},"spec":{"extendedResourceName":"example.com/tpu"}})"},
       {},
       "example.com/gpu",
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DraState dra;
    for (const std::string& json : c.classes) dra.UpsertClass(Class(json));
    for (const std::string& name : c.deleted) dra.DeleteClass(name);
    EXPECT_EQ(dra.ExtendedResourceClass(c.resource), c.want);
  }
}

TEST(DraStateExtendedResources, FindsTheClaimCreatedForAPod) {
  DraState dra;
  const std::string meta_tail =
      R"("namespace":"ns","annotations":{"resource.kubernetes.io/extended-resource-claim":"true"},)"
      R"("ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"pod-uid","controller":true}]})";
  dra.UpsertClaim(
      Claim(R"({"metadata":{"name":"p-extended-resources-abcde","uid":"c1",)" + meta_tail + "}"));
  // Annotation missing, or not "true", or the pod is no controller: not the pod's.
  dra.UpsertClaim(Claim(
      R"({"metadata":{"name":"other","namespace":"ns","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"q","uid":"q-uid","controller":true}]}})"));
  dra.UpsertClaim(Claim(
      R"({"metadata":{"name":"false","namespace":"ns","annotations":{"resource.kubernetes.io/extended-resource-claim":"false"},"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"r","uid":"r-uid","controller":true}]}})"));
  dra.UpsertClaim(Claim(
      R"({"metadata":{"name":"notcontroller","namespace":"ns","annotations":{"resource.kubernetes.io/extended-resource-claim":"true"},"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"s","uid":"s-uid"}]}})"));
  auto found = dra.FindExtendedResourceClaim("pod-uid");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->meta.name, "p-extended-resources-abcde");
  EXPECT_EQ(dra.FindExtendedResourceClaim("q-uid"), nullptr);
  EXPECT_EQ(dra.FindExtendedResourceClaim("r-uid"), nullptr);
  EXPECT_EQ(dra.FindExtendedResourceClaim("s-uid"), nullptr);
  dra.DeleteClaim("ns", "p-extended-resources-abcde");
  EXPECT_EQ(dra.FindExtendedResourceClaim("pod-uid"), nullptr);
}

TEST(DraStateExtendedResources, PodClaimKeysIncludeTheExtendedResourceClaim) {
  api::Pod pod;
  pod.meta.namespace_ = api::Symbol::Intern("ns");
  EXPECT_TRUE(PodClaimKeys(pod).empty());
  EXPECT_FALSE(pod.UsesClaims());
  pod.extended_resource_claim_name = "p-extended-resources-abcde";
  EXPECT_EQ(PodClaimKeys(pod), std::vector<std::string>{"ns/p-extended-resources-abcde"});
  EXPECT_TRUE(pod.UsesClaims());
}

}  // namespace
}  // namespace gantry::state
