// Table-driven tests of the DRA selector environment: attribute domains,
// missing keys, quantity and semver functions, list attributes, cost limit
// and error messages (modelled on upstream's cel/compile_test.go cases).
#include <array>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cel/api_adapter.h"
#include "src/cel/dra_env.h"
#include "src/cel/selector_tool.h"

namespace gantry::cel {
namespace {

using ::testing::HasSubstr;

// Owns the storage a DeviceInput points into.
struct TestDevice {
  std::vector<std::string> names;
  std::vector<DeviceAttribute> attrs;
  std::vector<DeviceCapacity> caps;
  std::vector<int64_t> ints = {1, 2, 3};
  std::array<bool, 2> bools = {true, false};
  std::vector<std::string_view> strings = {"a", "b", "c"};
  std::vector<std::string_view> versions = {"1.0.0", "2.1.0-rc.1"};
  std::string driver = "dra.example.com";
  DeviceInput input;

  TestDevice() {
    attrs = {
        {"model", AttributeValue::String("H100")},
        {"count", AttributeValue::Int(8)},
        {"healthy", AttributeValue::Bool(true)},
        {"driverVersion", AttributeValue::Version("1.2.3")},
        {"other.example.com/family", AttributeValue::String("hopper")},
        {"ints", AttributeValue::Ints(ints)},
        {"bools", AttributeValue::Bools(bools)},
        {"strings", AttributeValue::Strings(strings)},
        {"versions", AttributeValue::Versions(versions)},
    };
    caps = {{"memory", *api::Quantity::Parse("80Gi")},
            {"other.example.com/slots", *api::Quantity::Parse("1500m")}};
    Refresh();
  }
  void Refresh() {
    input.driver = driver;
    input.attributes = attrs;
    input.capacity = caps;
  }
};

struct Case {
  const char* name;
  const char* expr;
  bool want = true;
  const char* error = nullptr;  // substring of the expected error (compile or runtime)
};

absl::StatusOr<bool> RunExpr(const std::string& expr, const DeviceInput& dev) {
  auto p = Compile(expr, DraSelectorEnv());
  if (!p.ok()) return p.status();
  return EvaluateSelector(**p, dev);
}

class DraEnvTest : public ::testing::TestWithParam<Case> {};

TEST_P(DraEnvTest, Evaluates) {
  const Case& c = GetParam();
  TestDevice dev;
  absl::StatusOr<bool> r = RunExpr(c.expr, dev.input);
  if (c.error != nullptr) {
    ASSERT_FALSE(r.ok()) << c.expr << " gave " << (r.ok() && *r);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.error)) << c.expr;
  } else {
    ASSERT_TRUE(r.ok()) << c.expr << ": " << r.status().message();
    EXPECT_EQ(*r, c.want) << c.expr;
  }
}

const Case kCases[] = {
    // Domains and qualified names.
    {"driver_domain", "device.attributes['dra.example.com'].model == 'H100'"},
    {"other_domain", "device.attributes['other.example.com'].family == 'hopper'"},
    {"driver_field", "device.driver == 'dra.example.com'"},
    {"unknown_domain_empty", "size(device.attributes['no-such-domain']) == 0"},
    {"unknown_domain_not_in", "!('no-such-domain' in device.attributes)"},
    {"known_domain_in", "'other.example.com' in device.attributes"},
    {"missing_key", "device.attributes['dra.example.com'].noSuchAttr == 1", false, "no such key: noSuchAttr"},
    {"missing_key_hint", "device.attributes['dra.example.com'].noSuchAttr",  false,
     "consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has()"},
    {"missing_domain_key", "device.attributes['no-such-domain'].noSuchAttr", false, "no such key: noSuchAttr"},
    {"has_missing", "!has(device.attributes['dra.example.com'].noSuchAttr)"},
    {"has_present", "has(device.attributes['dra.example.com'].model)"},
    {"optional_or_value", "device.attributes['dra.example.com'].?noSuchAttr.orValue(7) == 7"},
    {"key_in_domain", "'model' in device.attributes['dra.example.com']"},
    {"bind", "cel.bind(dra, device.attributes['dra.example.com'], dra.healthy && dra.count > 4)"},
    {"allow_multiple", "device.allowMultipleAllocations == false"},
    {"int_attr", "device.attributes['dra.example.com'].count * 2 == 16"},
    // Capacity and quantity.
    {"capacity_compare", "device.capacity['dra.example.com'].memory.compareTo(quantity('40Gi')) >= 0"},
    {"capacity_other_domain", "device.capacity['other.example.com'].slots == quantity('1.5')"},
    {"quantity_eq_numeric", "quantity('1Ki') == quantity('1024')"},
    {"quantity_greater", "quantity('1Gi').isGreaterThan(quantity('1G'))"},
    {"quantity_less", "quantity('500m').isLessThan(quantity('1'))"},
    {"quantity_sign", "sign(quantity('-1')) == -1"},
    {"quantity_as_integer", "quantity('5k').asInteger() == 5000"},
    {"quantity_as_integer_fraction", "quantity('1500m').asInteger() == 1", false, "cannot convert value to integer"},
    {"quantity_is_integer", "!quantity('1500m').isInteger()"},
    {"quantity_float", "quantity('1500m').asApproximateFloat() == 1.5"},
    {"quantity_add", "quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi')"},
    {"quantity_add_int", "quantity('1').add(2) == quantity('3')"},
    {"quantity_sub", "quantity('1').sub(quantity('500m')) == quantity('0.5')"},
    {"is_quantity", "isQuantity('1Gi') && !isQuantity('200K') && !isQuantity('Mi')"},
    {"quantity_invalid", "quantity('bogus') == quantity('1')", false, "quantities must match"},
    {"quantity_lt_not_defined", "quantity('1') < quantity('2')", false, "found no matching overload for '_<_'"},
    // Semver.
    {"semver_attr", "device.attributes['dra.example.com'].driverVersion.isGreaterThan(semver('1.2.0'))"},
    {"semver_eq_build", "semver('1.0.0+build1') == semver('1.0.0+build2')"},
    {"semver_compare", "semver('1.0.0-alpha').compareTo(semver('1.0.0')) == -1"},
    {"semver_parts", "semver('3.4.5').major() == 3 && semver('3.4.5').minor() == 4 && semver('3.4.5').patch() == 5"},
    {"semver_normalize", "isSemver('v1.0.0', true) && semver('v01.2', true) == semver('1.2.0')"},
    {"semver_strict", "!isSemver('v1.0.0') && !isSemver('1.0') && !isSemver('01.0.0')"},
    {"semver_prerelease", "semver('1.0.0-rc.1').isLessThan(semver('1.0.0-rc.2'))"},
    {"semver_invalid", "semver('1.0') == semver('1.0.0')", false, "could not parse semver"},
    // List attributes and includes.
    {"list_includes", "device.attributes['dra.example.com'].strings.includes('b')"},
    {"list_not_includes", "!device.attributes['dra.example.com'].ints.includes(7)"},
    {"scalar_includes", "device.attributes['dra.example.com'].model.includes('H100')"},
    {"includes_type_mismatch", "!device.attributes['dra.example.com'].model.includes(1)"},
    {"list_macro", "device.attributes['dra.example.com'].ints.all(i, i > 0)"},
    {"list_size", "size(device.attributes['dra.example.com'].bools) == 2"},
    {"version_list", "device.attributes['dra.example.com'].versions.exists(v, v.isLessThan(semver('2.0.0')))"},
    {"exists_on_scalar", "device.attributes['dra.example.com'].count.exists(x, x == 1)", false,
     "got 'types.Int', expected iterable type"},
    {"exists_on_version", "device.attributes['dra.example.com'].driverVersion.exists(x, true)", false,
     "got 'cel.Semver', expected iterable type"},
    {"map_over_domain", "device.attributes['dra.example.com'].map(k, k).size() == 8"},
    // Libraries available in the environment.
    {"regex_find", "device.attributes['dra.example.com'].model.find('[0-9]+') == '100'"},
    {"strings_ext", "device.attributes['dra.example.com'].model.lowerAscii().startsWith('h1')"},
    {"sets", "sets.contains(device.attributes['dra.example.com'].strings, ['a'])"},
    {"lists_lib", "device.attributes['dra.example.com'].ints.sum() == 6"},
    // Compile errors.
    {"not_bool", "1", false, "must evaluate to bool or the unknown type, not int"},
    {"undeclared", "noSuchVar", false, "undeclared reference to 'noSuchVar'"},
    {"undefined_field", "device.noSuchField", false, "undefined field 'noSuchField'"},
    {"syntax", "device.driver ==", false, "compilation failed: ERROR: <input>:1:17: Syntax error"},
    {"bad_regex", "device.driver.matches('[')", false, "invalid regex pattern"},
    {"heterogeneous", "[1, 'a'].size() == 2", false, "expected type 'int' but found 'string'"},
    // Runtime errors.
    {"cost_limit",
     "device.attributes['dra.example.com'].ints.all(a, lists.range(1000).all(b, lists.range(1000).all(c, c >= 0)))",
     false, "actual cost limit exceeded"},
    {"division_by_zero", "device.attributes['dra.example.com'].count / 0 == 1", false, "divide by zero"},
    {"overflow", "device.attributes['dra.example.com'].count * 9223372036854775807 > 0", false, "overflow"},
};

INSTANTIATE_TEST_SUITE_P(Cases, DraEnvTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(DraEnv, EmptyDriverMatchesEmptyString) {
  TestDevice dev;
  dev.driver = "";
  dev.Refresh();
  auto r = RunExpr("device.driver == ''", dev.input);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(*r);
}

TEST(DraEnv, NonBoolRuntimeResult) {
  TestDevice dev;
  auto r = RunExpr("device.attributes['dra.example.com'].model", dev.input);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("CEL result of type string could not be converted to bool"));
}

TEST(DraEnv, InvalidVersionAttribute) {
  TestDevice dev;
  dev.attrs.push_back({"badVersion", AttributeValue::Version("1.0")});
  dev.Refresh();
  absl::Status valid = ValidateDeviceInput(dev.input);
  EXPECT_THAT(std::string(valid.message()), HasSubstr("attribute badVersion: parse semantic version"));
  auto r = RunExpr("device.attributes['dra.example.com'].badVersion.major() == 1", dev.input);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("attribute badVersion: parse semantic version"));
}

TEST(DraEnv, IncludesListTooLong) {
  TestDevice dev;
  std::vector<std::string> storage;
  for (int i = 0; i < 49; ++i) storage.push_back("value-" + std::to_string(i));
  std::vector<std::string_view> views(storage.begin(), storage.end());
  dev.attrs.push_back({"long", AttributeValue::Strings(views)});
  dev.Refresh();
  auto r = RunExpr("device.attributes['dra.example.com'].long.includes('value-48')", dev.input);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("'includes' function cannot be applied to lists longer than 48 values"));
  auto ok = RunExpr("device.attributes['dra.example.com'].long.includes('value-3')", dev.input);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(*ok);
}

TEST(DraEnv, ExpensiveExpressionHitsCostLimit) {
  // Upstream's "expensive" case: 32 attributes, nested comprehensions.
  std::vector<std::string> names;
  for (int i = 0; i < 32; ++i) names.push_back("dra.example.com/attr-" + std::to_string(i));
  std::vector<DeviceAttribute> attrs;
  for (int i = 0; i < 32; ++i) attrs.push_back({names[i], AttributeValue::Int(i)});
  DeviceInput in;
  in.driver = "dra.example.com";
  in.attributes = attrs;
  auto r = RunExpr(
      "device.attributes['dra.example.com'].map(a, device.attributes['dra.example.com'].map(b, "
      "device.attributes['dra.example.com'].map(c, device.attributes['dra.example.com'].map(d, "
      "a + b + c + d)))).size() > 0",
      in);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("actual cost limit exceeded"));
}

TEST(DraEnv, ExpressionSizeLimit) {
  std::string big = "device.driver == '" + std::string(11 * 1024, 'x') + "'";
  TestDevice dev;
  auto r = RunExpr(big, dev.input);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("exceeds the limit of 10240 bytes"));
}

TEST(DraEnv, DepthLimit) {
  std::string deep(300, '(');
  deep += "true";
  deep += std::string(300, ')');
  TestDevice dev;
  auto r = RunExpr(deep, dev.input);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("recursion limit exceeded"));
}

TEST(SelectorTool, PrintsOneLinePerDevice) {
  TestDevice a, b;
  b.attrs[0].value = AttributeValue::String("A100");
  b.Refresh();
  std::vector<SelectorToolDevice> devices = {{"pool-1", "gpu-0", a.input}, {"pool-1", "gpu-1", b.input}};
  std::ostringstream out, err;
  int code = RunSelectorEval(devices, {}, "device.attributes['dra.example.com'].model == 'H100'", out, err);
  EXPECT_EQ(code, kSelectorToolOk);
  EXPECT_EQ(out.str(), "pool-1/gpu-0 true\npool-1/gpu-1 false\n");
}

TEST(SelectorTool, ClassSelectorsFirstAndErrors) {
  TestDevice a;
  std::vector<SelectorToolDevice> devices = {{"p", "d", a.input}};
  std::vector<std::string> cls = {"device.driver == 'dra.example.com'"};
  std::ostringstream out, err;
  int code = RunSelectorEval(devices, cls, "device.attributes['dra.example.com'].missing", out, err);
  EXPECT_EQ(code, kSelectorToolEvalError);
  EXPECT_THAT(out.str(), HasSubstr("p/d error: no such key: missing"));

  std::ostringstream out2, err2;
  code = RunSelectorEval(devices, cls, "device.driver ==", out2, err2);
  EXPECT_EQ(code, kSelectorToolBadInput);
  EXPECT_THAT(err2.str(), HasSubstr("<input>:1:17"));
  EXPECT_THAT(err2.str(), HasSubstr(" | device.driver ==\n | ................^"));
}

}  // namespace
}  // namespace gantry::cel

namespace gantry::cel {
namespace {

TEST(ApiAdapter, BuildsDeviceInputFromDecodedDevice) {
  api::Device d;
  d.name = api::Symbol::Intern("gpu-0");
  api::DeviceAttribute model;
  model.name = api::Symbol::Intern("gpu.example.com/model");
  model.value.type = api::AttributeType::kString;
  model.value.string_value = api::Symbol::Intern("H100");
  d.attributes.push_back(model);
  api::DeviceListAttribute ints;
  ints.name = api::Symbol::Intern("gpu.example.com/ids");
  ints.type = api::AttributeType::kInt;
  for (int i = 1; i <= 3; ++i) {
    api::AttributeValue v;
    v.int_value = i;
    ints.values.push_back(v);
  }
  d.list_attributes.push_back(ints);
  api::DeviceCapacity mem;
  mem.name = api::Symbol::Intern("gpu.example.com/memory");
  mem.value = *api::Quantity::Parse("80Gi");
  d.capacity.push_back(mem);
  DeviceInputBuilder builder;
  const DeviceInput& in = builder.Build("gpu.example.com", d);
  auto p = Compile(
      "device.attributes['gpu.example.com'].model == 'H100' && device.attributes['gpu.example.com'].ids.includes(2) && "
      "device.capacity['gpu.example.com'].memory.isGreaterThan(quantity('40Gi'))",
      DraSelectorEnv());
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto r = EvaluateSelector(**p, in);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(*r);
}

}  // namespace
}  // namespace gantry::cel
