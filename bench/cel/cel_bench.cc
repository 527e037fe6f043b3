// Benchmarks of typical DRA selectors: compile once, evaluate per device.
// Run: build/bench/cel_bench --benchmark_filter=BM_CEL_
#include <benchmark/benchmark.h>

#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/cel/cel.h"
#include "src/cel/dra_env.h"

namespace gantry::cel {
namespace {

struct GpuDevice {
  std::array<DeviceAttribute, 6> attrs;
  std::array<DeviceCapacity, 2> caps;
  std::array<std::string_view, 3> profiles = {"1g.10gb", "2g.20gb", "7g.80gb"};
  DeviceInput input;

  GpuDevice() {
    attrs = {DeviceAttribute{"model", AttributeValue::String("H100")},
             DeviceAttribute{"index", AttributeValue::Int(3)},
             DeviceAttribute{"uuid", AttributeValue::String("GPU-8d2f3c6e-1c1f-4e0a-9d55-1f2f6c0b0a11")},
             DeviceAttribute{"driverVersion", AttributeValue::Version("550.54.15")},
             DeviceAttribute{"numa.example.com/node", AttributeValue::Int(1)},
             DeviceAttribute{"profiles", AttributeValue::Strings(profiles)}};
    caps = {DeviceCapacity{"memory", *api::Quantity::Parse("80Gi")},
            DeviceCapacity{"cores", *api::Quantity::Parse("132")}};
    input.driver = "gpu.example.com";
    input.attributes = attrs;
    input.capacity = caps;
  }
};

void RunSelector(benchmark::State& state, const char* expr) {
  auto program = Compile(expr, DraSelectorEnv());
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return;
  }
  GpuDevice dev;
  auto first = EvaluateSelector(**program, dev.input);
  if (!first.ok() || !*first) {
    state.SkipWithError("selector does not evaluate to true");
    return;
  }
  for (auto _ : state) {
    auto r = EvaluateSelector(**program, dev.input);
    benchmark::DoNotOptimize(r);
  }
}

void BM_CEL_ModelAndMemory(benchmark::State& state) {
  RunSelector(state,
              "device.attributes[\"gpu.example.com\"].model == \"H100\" && "
              "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0");
}
BENCHMARK(BM_CEL_ModelAndMemory);

void BM_CEL_DriverEquals(benchmark::State& state) {
  RunSelector(state, "device.driver == \"gpu.example.com\"");
}
BENCHMARK(BM_CEL_DriverEquals);

void BM_CEL_ModelIn(benchmark::State& state) {
  RunSelector(state, "device.attributes[\"gpu.example.com\"].model in [\"A100\", \"H100\", \"H200\"]");
}
BENCHMARK(BM_CEL_ModelIn);

void BM_CEL_SemverCompare(benchmark::State& state) {
  RunSelector(state,
              "device.attributes[\"gpu.example.com\"].driverVersion.isGreaterThan(semver(\"535.0.0\"))");
}
BENCHMARK(BM_CEL_SemverCompare);

void BM_CEL_OptionalOrValue(benchmark::State& state) {
  RunSelector(state, "device.attributes[\"gpu.example.com\"].?mig.orValue(false) == false");
}
BENCHMARK(BM_CEL_OptionalOrValue);

void BM_CEL_ListIncludes(benchmark::State& state) {
  RunSelector(state, "device.attributes[\"gpu.example.com\"].profiles.includes(\"7g.80gb\")");
}
BENCHMARK(BM_CEL_ListIncludes);

void BM_CEL_RegexMatches(benchmark::State& state) {
  RunSelector(state, "device.attributes[\"gpu.example.com\"].uuid.matches(\"^GPU-[0-9a-f-]+$\")");
}
BENCHMARK(BM_CEL_RegexMatches);

void BM_CEL_ExistsOverAttributes(benchmark::State& state) {
  RunSelector(state, "device.attributes[\"gpu.example.com\"].exists(k, k == \"index\")");
}
BENCHMARK(BM_CEL_ExistsOverAttributes);

void BM_CEL_CompileCached(benchmark::State& state) {
  ProgramCache cache(DraSelectorEnv());
  const char* expr = "device.attributes[\"gpu.example.com\"].model == \"H100\"";
  for (auto _ : state) {
    auto p = cache.Get(expr);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_CEL_CompileCached);

void BM_CEL_CompileUncached(benchmark::State& state) {
  const char* expr =
      "device.attributes[\"gpu.example.com\"].model == \"H100\" && "
      "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0";
  Env env = DraSelectorEnv();
  for (auto _ : state) {
    auto p = Compile(expr, env);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_CEL_CompileUncached);

}  // namespace
}  // namespace gantry::cel

BENCHMARK_MAIN();
