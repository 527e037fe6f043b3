#include "plugins/registry/registry.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "simdjson.h"
#include "test/testing/objects.h"

namespace gantry::plugins {
namespace {

TEST(RegisterBuiltinPlugins, RegistersEveryCorePlugin) {
  framework::Registry r;
  ASSERT_TRUE(RegisterBuiltinPlugins(r).ok());
  for (const char* name : {"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration",
                           "NodeAffinity", "NodePorts", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
                           "ImageLocality", "DefaultBinder"}) {
    EXPECT_NE(r.Find(name), nullptr) << name;
  }
  // A second registration collides.
  EXPECT_EQ(RegisterBuiltinPlugins(r).code(), absl::StatusCode::kAlreadyExists);
}

TEST(RegisterBuiltinPlugins, FactoriesBuildWithDefaultArgs) {
  framework::Registry r;
  ASSERT_TRUE(RegisterBuiltinPlugins(r).ok());
  gantry::testing::FakeHandle handle;
  simdjson::dom::parser parser;
  for (const std::string& name : r.Names()) {
    SCOPED_TRACE(name);
    const framework::PluginRegistration* reg = r.Find(name);
    api::JsonValue null_args;
    ASSERT_EQ(parser.parse(std::string_view("null")).get(null_args), simdjson::SUCCESS);
    api::JsonValue args = null_args;
    std::string defaulted;
    simdjson::dom::parser args_parser;
    if (reg->default_args) {
      api::Decoder d(reg->args_kind);
      nlohmann::json json = reg->default_args(d, null_args);
      ASSERT_TRUE(d.ok()) << d.error()->ToString();
      EXPECT_FALSE(reg->args_kind.empty());
      defaulted = json.dump();
      ASSERT_EQ(args_parser.parse(defaulted).get(args), simdjson::SUCCESS);
      // Defaulting is idempotent.
      api::Decoder d2(reg->args_kind);
      EXPECT_EQ(reg->default_args(d2, args), json);
    }
    api::Decoder d(reg->args_kind.empty() ? name + "Args" : reg->args_kind);
    auto plugin = reg->factory(d, args, handle);
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    EXPECT_EQ((*plugin)->Name(), name);
  }
}

}  // namespace
}  // namespace gantry::plugins
