// Table-driven tests of the language core: parse errors (line:column and
// caret), checker errors, runtime error messages, limits and the cache.
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cel/cel.h"

namespace gantry::cel {
namespace {

using ::testing::HasSubstr;

struct ErrorCase {
  const char* expr;
  const char* error;  // substring of the compile or runtime error
};

std::string ErrorOf(const std::string& expr) {
  Env env = Env::Standard();
  env.AddVariable("x", Type::Of(TypeKind::kInt));
  env.AddVariable("m", Type::Map(Type::Of(TypeKind::kString), Type::Of(TypeKind::kInt)));
  auto p = Compile(expr, env);
  if (!p.ok()) return std::string(p.status().message());
  auto data = std::make_shared<MapData>();
  data->entries.emplace_back(Value::String("a"), Value::Int(1));
  Value vars[] = {Value::Int(5), Value::Map(data)};
  Value v = (*p)->Evaluate(vars);
  if (v.is_error()) return v.error_message();
  return "no error: " + DebugString(v);
}

class ErrorMessageTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorMessageTest, HasMessage) {
  EXPECT_THAT(ErrorOf(GetParam().expr), HasSubstr(GetParam().error)) << GetParam().expr;
}

const ErrorCase kErrors[] = {
    // Parser.
    {"1 +", "ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting an expression"},
    {"a.b(", "Syntax error"},
    {"x = 1", "token recognition error at: '='"},
    {"'abc", "unterminated string literal"},
    {"'\\q'", "invalid escape sequence"},
    {"9223372036854775808", "invalid int literal"},
    {"18446744073709551616u", "invalid uint literal"},
    {"if", "reserved identifier: if"},
    {"[1, 2", "mismatched input '<EOF>' expecting ']'"},
    {"has(x)", "invalid argument to has() macro"},
    {"[1].all(1, true)", "argument must be a simple name"},
    {"T{a: 1}", "message construction is not supported"},
    // Checker.
    {"y", "undeclared reference to 'y' (in container '')"},
    {"nofn(1)", "undeclared reference to 'nofn'"},
    {"x + 'a'", "found no matching overload for '_+_' applied to '(int, string)'"},
    {"'a'.contains(1)", "found no matching overload for 'contains' applied to 'string.(int)'"},
    {"x.f", "type 'int' does not support field selection"},
    {"x.all(i, true)", "cannot be range of a comprehension"},
    {"[1, 'a']", "expected type 'int' but found 'string'"},
    {"'a'.matches('(')", "invalid regex pattern"},
    {"[1].all(i, i)", "expected type 'bool' but found 'int'"},
    // Runtime.
    {"x / 0", "divide by zero"},
    {"x % 0", "modulus by zero"},
    {"9223372036854775807 + x", "return error for overflow"},
    {"-9223372036854775807 - x", "return error for overflow"},
    {"0u - 1u", "return error for overflow"},
    {"int(1e20)", "range error"},
    {"uint(-1)", "range error"},
    {"int('abc')", "cannot convert string 'abc' to int"},
    {"m['b']", "no such key: b"},
    {"m.b", "no such key: b"},
    {"[1, 2][5]", "index out of bounds: 5"},
    {"optional.none().value()", "optional.none() dereference"},
    {"'abc'.charAt(9)", "index out of range: 9"},
    {"'abc'.substring(2, 1)", "invalid substring range"},
    {"dyn('a') + 1 == 2", "no such overload"},
    {"lists.range(10000).all(a, lists.range(10000).all(b, true))", "actual cost limit exceeded"},
    {"{'a': 1, 'a': 2}", "repeated key"},
    {"[].max() == 1", "max called on empty list"},
};

INSTANTIATE_TEST_SUITE_P(All, ErrorMessageTest, ::testing::ValuesIn(kErrors));

TEST(Parser, CaretLine) {
  auto p = Compile("true &&\n  1 +", Env::Standard());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(std::string(p.status().message()),
            "ERROR: <input>:2:6: Syntax error: mismatched input '<EOF>' expecting an expression\n"
            " |   1 +\n"
            " | .....^");
}

TEST(Parser, LongChainsStayShallow) {
  std::string expr = "true";
  for (int i = 0; i < 1000; ++i) expr += " && true";
  auto p = Compile(expr, Env::Standard());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE((*p)->Evaluate({}).bool_value());
}

TEST(Parser, HostileInputDoesNotCrash) {
  const char* inputs[] = {"((((((((((", "[[[[[[[[", "{{{{{", "a.?b[?c]", "'\\", "\xff\xfe", "`x`", "!-!-!-1",
                          "1e999999", "0x", ".", "a.b.c.d.e.f()", "[?1]", "{?1: 2}", "has(a.?b)"};
  for (const char* in : inputs) {
    auto p = Compile(in, Env::Standard());
    if (p.ok()) (*p)->Evaluate({});
  }
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "-";
  deep += "1";
  auto p = Compile(deep, Env::Standard());
  if (p.ok()) (*p)->Evaluate({});
}

struct ValueCase {
  const char* expr;
  const char* want;  // DebugString of the result
};

class EvalTest : public ::testing::TestWithParam<ValueCase> {};

TEST_P(EvalTest, Value) {
  auto p = Compile(GetParam().expr, Env::Standard());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(DebugString((*p)->Evaluate({})), GetParam().want) << GetParam().expr;
}

const ValueCase kValues[] = {
    {"1 < 1.5 && 2u > 1 && 1.0 == dyn(1)", "true"},
    {"[1, 2, 3].map(x, x * 2)", "[2, 4, 6]"},
    {"[1, 2, 3].filter(x, x > 1)", "[2, 3]"},
    {"[1, 2, 3].exists_one(x, x == 2)", "true"},
    {"{'a': 1}.transformMap(k, v, v + 1)", "{\"a\": 2}"},
    {"[1, 2].transformList(i, v, i + v)", "[1, 3]"},
    {"cel.bind(y, 2, y * y)", "4"},
    {"optional.of(1).optMap(v, v + 1).value()", "2"},
    {"'a,b'.split(',')", "[\"a\", \"b\"]"},
    {"'%d-%s'.format([1, 'x'])", "\"1-x\""},
    {"'abc'.findAll('[a-c]')", "[\"a\", \"b\", \"c\"]"},
    {"[3, 1, 2].sort()", "[1, 2, 3]"},
    {"[[1], [2, 3]].flatten()", "[1, 2, 3]"},
    {"[1, 2, 2].distinct()", "[1, 2]"},
    {"type(1) == int && type('a') == string", "true"},
    {"string(1.5) + string(1e6) + string(true)", "\"1.51e+06true\""},
    {"(1 / 0 == 1) || true", "true"},
    {"false && (1 / 0 == 1)", "false"},
    {"[1, 2].all(x, x / (x - 1) > 0) || true", "true"},
};

INSTANTIATE_TEST_SUITE_P(All, EvalTest, ::testing::ValuesIn(kValues));

TEST(Cost, TracksEvaluationCost) {
  auto p = Compile("lists.range(100).all(i, i >= 0)", Env::Standard());
  ASSERT_TRUE(p.ok());
  EvalStats stats;
  EXPECT_TRUE((*p)->Evaluate({}, &stats).bool_value());
  EXPECT_GT(stats.cost, 100u);
  EXPECT_LT(stats.cost, 10000u);
}

TEST(Cost, CustomLimit) {
  Env env = Env::Standard();
  env.cost_limit = 50;
  auto p = Compile("lists.range(100).all(i, i >= 0)", env);
  ASSERT_TRUE(p.ok());
  Value v = (*p)->Evaluate({});
  ASSERT_TRUE(v.is_error());
  EXPECT_EQ(v.error_message(), "operation cancelled: actual cost limit exceeded");
}

TEST(Cost, DoublingValuesHitLimitBeforeAllocating) {
  for (std::string seed : {"'" + std::string(100, 'x') + "'", std::string("[1, 2, 3, 4]")}) {
    std::string e = seed;
    for (int i = 0; i < 45; ++i) {
      std::string v = "v" + std::to_string(i);
      e = "cel.bind(" + v + ", " + e + ", " + v + " + " + v + ")";
    }
    auto p = Compile("size(" + e + ") > 0", Env::Standard());
    ASSERT_TRUE(p.ok()) << p.status().message();
    Value r = (*p)->Evaluate({});
    ASSERT_TRUE(r.is_error());
    EXPECT_THAT(r.error_message(), HasSubstr("actual cost limit exceeded"));
  }
}

TEST(Cache, ReturnsSameProgramAndCachesErrors) {
  ProgramCache cache(Env::Standard(), 2);
  auto a = cache.Get("1 + 1 == 2");
  auto b = cache.Get("1 + 1 == 2");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_FALSE(cache.Get("1 +").ok());
  (void)cache.Get("2 == 2");
  (void)cache.Get("3 == 3");  // evicts the oldest
  auto c = cache.Get("1 + 1 == 2");
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->get(), c->get());
}

TEST(Cache, ThreadSafe) {
  ProgramCache cache(Env::Standard(), 8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 200; ++i) {
        auto p = cache.Get("[1, 2, 3].exists(x, x == " + std::to_string((i + t) % 10) + ")");
        ASSERT_TRUE(p.ok());
        (*p)->Evaluate({});
      }
    });
  }
  for (auto& th : threads) th.join();
}

}  // namespace
}  // namespace gantry::cel
