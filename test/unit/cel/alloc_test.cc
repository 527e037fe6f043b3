// Checks that evaluating typical selectors does not allocate: the global
// operator new is replaced in this test binary to count allocations.
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/cel/dra_env.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace gantry::cel {
namespace {

TEST(Allocation, TypicalSelectorsDoNotAllocate) {
  std::vector<std::string_view> profiles = {"1g.10gb", "7g.80gb"};
  std::vector<DeviceAttribute> attrs = {{"model", AttributeValue::String("H100")},
                                        {"driverVersion", AttributeValue::Version("550.54.15")},
                                        {"profiles", AttributeValue::Strings(profiles)}};
  std::vector<DeviceCapacity> caps = {{"memory", *api::Quantity::Parse("80Gi")}};
  DeviceInput in;
  in.driver = "gpu.example.com";
  in.attributes = attrs;
  in.capacity = caps;
  const char* exprs[] = {
      ("device.attributes[\"gpu.example.com\"].model == \"H100\" && "
       "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"),
      "device.driver == 'gpu.example.com'",
      "device.attributes['gpu.example.com'].model in ['A100', 'H100']",
      "device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('535.0.0'))",
      "device.attributes['gpu.example.com'].?mig.orValue(false) == false",
      "device.attributes['gpu.example.com'].profiles.includes('7g.80gb')",
      "device.attributes['gpu.example.com'].model.matches('^H[0-9]+$')",
  };
  for (const char* e : exprs) {
    auto p = Compile(e, DraSelectorEnv());
    ASSERT_TRUE(p.ok()) << p.status().message();
    auto warm = EvaluateSelector(**p, in);
    ASSERT_TRUE(warm.ok() && *warm) << e;
    long before = g_allocations.load();
    for (int i = 0; i < 100; ++i) {
      auto r = EvaluateSelector(**p, in);
      ASSERT_TRUE(r.ok());
    }
    EXPECT_EQ(g_allocations.load() - before, 0) << e;
  }
}

}  // namespace
}  // namespace gantry::cel
