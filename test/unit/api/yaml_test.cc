// YAML -> JSON conversion: scalar typing by the YAML 1.2 core schema (quoted
// scalars stay strings), structure, errors, and mapping field paths back to
// source positions.
#include "src/api/yaml.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry::api {
namespace {

using ::testing::HasSubstr;

// JSON text of the single document in `yaml`.
std::string ToJson(std::string_view yaml) {
  auto docs = ParseYamlDocuments(yaml);
  EXPECT_TRUE(docs.ok()) << docs.status();
  if (!docs.ok() || docs->empty()) return "<none>";
  EXPECT_EQ(docs->size(), 1u);
  return (*docs)[0].json();
}

struct ScalarCase {
  const char* yaml_value;
  const char* json;
};

const ScalarCase kScalarCases[] = {
    // Strings: quoted scalars are never re-typed.
    {"hello", R"("hello")"},
    {"'123'", R"("123")"},
    {"\"123\"", R"("123")"},
    {"'true'", R"("true")"},
    {"\"null\"", R"("null")"},
    {"'0x10'", R"("0x10")"},
    {"\"1.5\"", R"("1.5")"},
    {"''", R"("")"},
    {"!!str 42", R"("42")"},
    {"100m", R"("100m")"},
    {"1Gi", R"("1Gi")"},
    {"v1", R"("v1")"},
    {"1.2.3", R"("1.2.3")"},
    {"10.0.0.1", R"("10.0.0.1")"},
    {"12:30", R"("12:30")"},
    {"0x", R"("0x")"},
    {"0xZZ", R"("0xZZ")"},
    {"0o9", R"("0o9")"},
    {"1e", R"("1e")"},
    {"e3", R"("e3")"},
    {"+", R"("+")"},
    {".", R"(".")"},
    // YAML 1.1 booleans are strings in YAML 1.2's core schema.
    {"yes", R"("yes")"},
    {"no", R"("no")"},
    {"on", R"("on")"},
    {"off", R"("off")"},
    {"y", R"("y")"},
    {"tRUE", R"("tRUE")"},
    {"Nil", R"("Nil")"},
    // Nulls.
    {"null", "null"},
    {"Null", "null"},
    {"NULL", "null"},
    {"~", "null"},
    {"", "null"},
    // Booleans.
    {"true", "true"},
    {"True", "true"},
    {"TRUE", "true"},
    {"false", "false"},
    {"False", "false"},
    {"FALSE", "false"},
    // Integers.
    {"0", "0"},
    {"42", "42"},
    {"-42", "-42"},
    {"+42", "42"},
    {"007", "7"},
    {"-0", "0"},
    {"9223372036854775807", "9223372036854775807"},
    {"0x10", "16"},
    {"0xff", "255"},
    {"0xFF", "255"},
    {"0o17", "15"},
    {"0x-1", R"("0x-1")"},
    {"0x+1", R"("0x+1")"},
    {"0x1FFFFFFFFFFFFFFFF", R"("0x1FFFFFFFFFFFFFFFF")"},
    {"18446744073709551615", "18446744073709551615"},
    {"-9223372036854775808", "-9223372036854775808"},
    // Beyond 64 bits: a float, as Kubernetes' YAML decoder makes it.
    {"18446744073709551616", "1.8446744073709552e+19"},
    {"-9223372036854775809", "-9.2233720368547758e+18"},
    {"123456789012345678901234567890", "1.2345678901234568e+29"},
    // Floats.
    {"1.5", "1.5"},
    {"-0.25", "-0.25"},
    {".5", "0.5"},
    {"1.", "1"},
    {"1e3", "1000"},
    {"1E3", "1000"},
    {"1.5e-3", "0.0015"},
    {"+2.5E+2", "250"},
    // Non-finite floats have no JSON form; they stay strings so numeric
    // fields fail with a type error instead of silently becoming a number.
    {".inf", R"(".inf")"},
    {"-.inf", R"("-.inf")"},
    {".nan", R"(".nan")"},
};

class YamlScalarTest : public testing::TestWithParam<ScalarCase> {};

TEST_P(YamlScalarTest, Typing) {
  const ScalarCase& c = GetParam();
  std::string yaml = std::string("v: ") + c.yaml_value + "\n";
  EXPECT_EQ(ToJson(yaml), std::string(R"({"v":)") + c.json + "}") << "value: " << c.yaml_value;
}

INSTANTIATE_TEST_SUITE_P(CoreSchema, YamlScalarTest, testing::ValuesIn(kScalarCases));

TEST(YamlTest, FloatsRoundTripThroughJson) {
  // The JSON text must parse back to the same double (17 significant digits).
  std::string json = ToJson("v: 0.1\n");
  EXPECT_THAT(json, HasSubstr("0.1"));
  EXPECT_EQ(std::stod(json.substr(5, json.size() - 6)), 0.1);
}

TEST(YamlTest, StringEscaping) {
  EXPECT_EQ(ToJson("v: 'a\"b\\\\c'\n"), R"({"v":"a\"b\\\\c"})");
  EXPECT_EQ(ToJson("v: \"tab\\there\\nnew\"\n"), R"({"v":"tab\there\nnew"})");
  EXPECT_EQ(ToJson("v: \"\\x01\"\n"), R"({"v":"\u0001"})");
  EXPECT_EQ(ToJson("v: \"héllo ☃\"\n"), R"({"v":"héllo ☃"})");
  EXPECT_EQ(ToJson("\"we\\\"ird\": 1\n"), R"({"we\"ird":1})");
}

TEST(YamlTest, Structure) {
  EXPECT_EQ(ToJson("a: {b: [1, two, {c: null}]}\nd: []\ne: {}\n"),
            R"({"a":{"b":[1,"two",{"c":null}]},"d":[],"e":{}})");
  EXPECT_EQ(ToJson("- 1\n- - x\n  - y\n"), R"([1,["x","y"]])");
  EXPECT_EQ(ToJson("key:\n"), R"({"key":null})");
  EXPECT_EQ(ToJson("a: &anchor {x: 1}\nb: *anchor\n"), R"({"a":{"x":1},"b":{"x":1}})");
  EXPECT_EQ(ToJson("text: |\n  line1\n  line2\n"), R"({"text":"line1\nline2\n"})");
  EXPECT_EQ(ToJson("text: >\n  folded\n  line\n"), R"({"text":"folded line\n"})");
  EXPECT_EQ(ToJson("1: one\ntrue: yes\n"), R"({"1":"one","true":"yes"})");
}

TEST(YamlTest, MultiDocumentStream) {
  auto docs = ParseYamlDocuments("---\na: 1\n---\n---\n# only a comment\n---\nb: 2\n...\n");
  ASSERT_TRUE(docs.ok()) << docs.status();
  std::vector<std::string> non_empty;
  for (const YamlDocument& d : *docs) {
    if (!d.empty()) non_empty.push_back(d.json());
  }
  EXPECT_EQ(non_empty, (std::vector<std::string>{R"({"a":1})", R"({"b":2})"}));
  auto empty = ParseYamlDocuments("");
  ASSERT_TRUE(empty.ok());
  for (const YamlDocument& d : *empty) EXPECT_TRUE(d.empty());
}

TEST(YamlTest, DocumentStartPositions) {
  auto docs = ParseYamlDocuments("a: 1\n---\n\nb: 2\n");
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0].start().line, 1);
  EXPECT_EQ((*docs)[1].start().line, 4);
}

TEST(YamlTest, SyntaxErrorsHaveLineAndColumn) {
  struct Case {
    const char* yaml;
    const char* prefix;  // "line:col:"
  };
  const Case cases[] = {
      {"a: [1, 2\n", "2:1:"},     {"a: 1\n b: 2\n", "2:3:"}, {"a: {b: 1\nc: 2\n", nullptr},
      {"a: *missing\n", nullptr}, {"\t- tab\n", nullptr},
  };
  for (const Case& c : cases) {
    auto docs = ParseYamlDocuments(c.yaml);
    ASSERT_FALSE(docs.ok()) << c.yaml;
    EXPECT_EQ(docs.status().code(), absl::StatusCode::kInvalidArgument);
    std::string msg(docs.status().message());
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(msg[0]))) << msg;
    if (c.prefix != nullptr) {
      EXPECT_EQ(msg.rfind(c.prefix, 0), 0u) << c.yaml << " -> " << msg;
    }
  }
}

// JSON is UTF-8: a scalar (value or key) that is not valid UTF-8 is an
// error at its position, never JSON text the decoders would then reject.
TEST(YamlTest, TextThatIsNotUtf8IsAnErrorWithItsPosition) {
  struct Case {
    std::string yaml;
    const char* want;  // the whole message; nullptr: the input is accepted
  };
  const Case cases[] = {
      {"a: caf\xc3\xa9\n", nullptr},   // UTF-8 bytes
      {"a: \"caf\\xe9\"\n", nullptr},  // a YAML escape in a double-quoted scalar
      {"a: b\nname: caf\xe9\n", "2:7: text is not valid UTF-8"},   // a Latin-1 byte
      {"caf\xe9: x\n", "1:1: text is not valid UTF-8"},            // in a key
      {"- ok\n- \xed\xa0\x80\n", "2:3: text is not valid UTF-8"},  // an encoded surrogate
      {"a: \xc0\xaf\n", "1:4: text is not valid UTF-8"},           // an overlong encoding
  };
  for (const Case& c : cases) {
    auto docs = ParseYamlDocuments(c.yaml);
    if (c.want == nullptr) {
      EXPECT_TRUE(docs.ok()) << c.yaml << ": " << docs.status();
      continue;
    }
    ASSERT_FALSE(docs.ok()) << c.yaml;
    EXPECT_EQ(docs.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(docs.status().message(), c.want) << c.yaml;
  }
}

TEST(YamlTest, NonScalarKeysAreErrors) {
  auto docs = ParseYamlDocuments("? [a, b]\n: value\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_THAT(std::string(docs.status().message()), HasSubstr("map keys must be scalars"));
}

TEST(YamlTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "[";
  for (int i = 0; i < 300; ++i) deep += "]";
  auto docs = ParseYamlDocuments("a: " + deep + "\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_THAT(std::string(docs.status().message()), HasSubstr("nests deeper than"));
}

TEST(YamlTest, ResolvePositions) {
  const char* yaml =
      "apiVersion: v1\n"                 // 1
      "kind: Pod\n"                      // 2
      "metadata:\n"                      // 3
      "  name: web\n"                    // 4
      "spec:\n"                          // 5
      "  containers:\n"                  // 6
      "  - name: a\n"                    // 7
      "    image: nginx\n"               // 8
      "  - name: b\n"                    // 9
      "    resources:\n"                 // 10
      "      requests: {cpu: lots}\n"    // 11
      "  nodeSelector:\n"                // 12
      "    \"example.com/rack\": r1\n";  // 13
  auto docs = ParseYamlDocuments(yaml);
  ASSERT_TRUE(docs.ok());
  const YamlDocument& doc = (*docs)[0];
  using P = std::vector<PathSegment>;
  struct Case {
    P path;
    int line, column;
  };
  const Case cases[] = {
      {P{}, 1, 1},
      {P{std::string("kind")}, 2, 7},
      {P{std::string("metadata"), std::string("name")}, 4, 9},
      {P{std::string("spec"), std::string("containers"), size_t{1}, std::string("name")}, 9, 11},
      {P{std::string("spec"), std::string("containers"), size_t{1}, std::string("resources"),
         std::string("requests"), std::string("cpu")},
       11, 23},
      {P{std::string("spec"), std::string("containers"), size_t{0}}, 7, 5},
      {P{std::string("spec"), std::string("nodeSelector"), std::string("example.com/rack")}, 13,
       25},
      // Unknown tails resolve to the value of the deepest field that exists.
      {P{std::string("spec"), std::string("containers"), size_t{7}, std::string("name")}, 7, 3},
      {P{std::string("metadata"), std::string("labels"), std::string("x")}, 4, 3},
  };
  for (const Case& c : cases) {
    SourcePosition pos = doc.Resolve(c.path);
    EXPECT_EQ(pos.line, c.line) << FormatFieldPath(c.path);
    EXPECT_EQ(pos.column, c.column) << FormatFieldPath(c.path);
  }
}

TEST(YamlTest, ResolveJsonPositions) {
  const char* json =
      "{\n"
      "  \"kind\": \"List\",\n"
      "  \"items\": [\n"
      "    {\"metadata\": {\"name\": \"a\"}},\n"
      "    {\"metadata\": {\"name\": \"b\"},\n"
      "     \"spec\": {\"priority\": \"x\"}}\n"
      "  ]\n"
      "}\n";
  using P = std::vector<PathSegment>;
  SourcePosition pos = ResolveJsonPosition(
      json, P{std::string("items"), size_t{1}, std::string("spec"), std::string("priority")});
  EXPECT_EQ(pos.line, 6);
  EXPECT_EQ(pos.column, 27);
  pos = ResolveJsonPosition(json, P{std::string("items"), size_t{0}});
  EXPECT_EQ(pos.line, 4);
  EXPECT_EQ(pos.column, 5);
  EXPECT_EQ(ResolveJsonPosition("{not json", P{std::string("a")}).line, 0);
}

TEST(YamlTest, OffsetToPosition) {
  std::string_view text = "ab\ncd\n\nef";
  EXPECT_EQ(OffsetToPosition(text, 0).line, 1);
  EXPECT_EQ(OffsetToPosition(text, 0).column, 1);
  EXPECT_EQ(OffsetToPosition(text, 4).line, 2);
  EXPECT_EQ(OffsetToPosition(text, 4).column, 2);
  EXPECT_EQ(OffsetToPosition(text, 7).line, 4);
  EXPECT_EQ(OffsetToPosition(text, 7).column, 1);
  EXPECT_EQ(OffsetToPosition(text, 1000).line, 4);  // clamped to the text
}

TEST(YamlTest, FieldPathFormatting) {
  using P = std::vector<PathSegment>;
  EXPECT_EQ(FormatFieldPath(P{}), "");
  EXPECT_EQ(FormatFieldPath(
                P{std::string("spec"), std::string("containers"), size_t{2}, std::string("image")}),
            "spec.containers[2].image");
  EXPECT_EQ(FormatFieldPath(P{std::string("metadata"), std::string("labels"),
                              std::string("app.kubernetes.io/name")}),
            "metadata.labels[\"app.kubernetes.io/name\"]");
  EXPECT_EQ(FormatFieldPath(P{size_t{0}, std::string("kind")}), "[0].kind");
  EXPECT_EQ(FormatFieldPath(P{std::string("a"), std::string("9lives")}), "a[\"9lives\"]");
}

// --- Expansion budget ---------------------------------------------------------

// The classic "billion laughs": nine levels of nine aliases each stand for
// 9^9 (387 million) scalars in a few hundred bytes.
std::string BillionLaughs() {
  std::string out = "a0: &a0 [\"lol\"]\n";
  for (int level = 1; level <= 9; ++level) {
    out += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) out += (i ? ", *a" : "*a") + std::to_string(level - 1);
    out += "]\n";
  }
  return out;
}

TEST(YamlBudgetTest, BillionLaughsIsRejectedAtTheAlias) {
  const std::string text = BillionLaughs();
  auto docs = ParseYamlDocuments(text);
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().code(), absl::StatusCode::kInvalidArgument);
  // The aliases add up to more than a million nodes at the seventh *a5 of
  // a6 (line 7): the error names that alias.
  EXPECT_THAT(std::string(docs.status().message()),
              testing::MatchesRegex(
                  "7:40: alias \\*a5 exceeds the YAML alias budget: aliases expand to more "
                  "than 1000000 nodes"));
  EXPECT_FALSE(CheckYamlBudget(text).ok());
}

struct BudgetCase {
  const char* name;
  std::string text;
  YamlLimits limits;
  const char* error;  // regex; nullptr: the document loads
};

std::string ManyAliases(int n) {
  std::string out = "base: &b {x: 1}\nuses:\n";
  for (int i = 0; i < n; ++i) out += "- *b\n";
  return out;
}

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(YamlBudgetTest, Table) {
  YamlLimits few_aliases;
  few_aliases.max_aliases = 3;
  YamlLimits few_bytes;
  few_bytes.max_alias_bytes = 10;
  YamlLimits shallow;
  shallow.max_depth = 3;
  const BudgetCase cases[] = {
      {"legitimate aliases load",
       "defaults: &d {cpu: '1', memory: 1Gi}\na: *d\nb: *d\nc: [*d, *d]\n",
       {},
       nullptr},
      {"aliases within the count", ManyAliases(3), few_aliases, nullptr},
      {"one alias too many", ManyAliases(4), few_aliases,
       "6:3: alias \\*b exceeds the YAML alias budget: more than 3 aliases"},
      {"bytes through aliases", "s: &s 0123456789\nt: *s\nu: *s\n", few_bytes,
       "3:4: alias \\*s exceeds the YAML alias budget: aliases expand to more than 10 bytes"},
      {"depth through an alias", "a: &a [[1]]\nb: [*a]\n", shallow,
       "2:5: alias \\*a nests the document deeper than 3 levels"},
      {"depth without aliases", Nested(4) + " # *", shallow,
       "1:4: document nests deeper than 3 levels"},
      {"a node that contains its alias",
       "a: &a [1, *a]\n",
       {},
       "1:11: alias \\*a refers to a node that contains it"},
      {"anchors are per document", "a: &a 1\n---\nb: *a\n", {}, "3:4: .*"},
      {"a star inside a string is no alias", "a: '*x'\nb: \"**\"\n", {}, nullptr},
  };
  for (const BudgetCase& c : cases) {
    auto docs = ParseYamlDocuments(c.text, c.limits);
    if (c.error == nullptr) {
      EXPECT_TRUE(docs.ok()) << c.name << ": " << docs.status();
      EXPECT_TRUE(CheckYamlBudget(c.text, c.limits).ok()) << c.name;
    } else {
      ASSERT_FALSE(docs.ok()) << c.name;
      EXPECT_THAT(std::string(docs.status().message()), testing::MatchesRegex(c.error)) << c.name;
    }
  }
}

TEST(YamlBudgetTest, AliasesExpandInTheJson) {
  EXPECT_EQ(ToJson("d: &d {cpu: 1}\na: *d\nl: [*d]\n"),
            R"({"d":{"cpu":1},"a":{"cpu":1},"l":[{"cpu":1}]})");
}

// yaml-cpp's document loop never ends on a flow indicator where a node should
// start (it reports empty documents at one place forever): such input is an
// error naming the place, and every other multi-document stream still loads.
TEST(YamlBudgetTest, FlowIndicatorAtANodeStartIsAnErrorNotAHang) {
  struct Case {
    const char* name;
    std::string text;
    std::string want_error;  // "" = loads
    size_t want_docs;
    bool any_outcome = false;  // only that it ends (yaml-cpp reads NULs as UTF-32)
  };
  const Case cases[] = {
      {"a bare comma", ",", "1:1: no YAML node can start here", 0},
      {"after a comment", "# c\n,", "2:1: no YAML node can start here", 0},
      {"after a document end marker", "...   , x", "no YAML node can start here", 0},
      {"NUL bytes around a comma", std::string("\0\0\0,\0", 5), "", 0, true},
      {"documents separated by markers", "a: 1\n---\nb: 2\n---\n", "", 3},
      {"only markers", "---\n---\n---", "", 3},
      {"commas inside flow collections", "a: [1, 2]\nb: {c: 3, d: 4}\n", "", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<std::vector<YamlDocument>> docs = ParseYamlDocuments(c.text);
    if (c.any_outcome) continue;  // returning at all is the check
    if (c.want_error.empty()) {
      ASSERT_TRUE(docs.ok()) << docs.status();
      EXPECT_EQ(docs->size(), c.want_docs);
    } else {
      ASSERT_FALSE(docs.ok());
      EXPECT_EQ(docs.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(std::string(docs.status().message()).find(c.want_error), std::string::npos)
          << docs.status();
    }
  }
}

}  // namespace
}  // namespace gantry::api
