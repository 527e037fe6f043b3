// Quantity semantics checked against k8s.io/apimachinery's documented
// behaviour. Test values come from upstream's quantity_test.go tables; where
// Gantry deliberately differs (overflow is an error instead of a silent
// clamp) the case says so.
#include "src/api/quantity.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace gantry::api {
namespace {

using Format = Quantity::Format;

constexpr const char* kErrFormat =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr const char* kErrSuffix = "unable to parse quantity's suffix";

// Strips trailing zeros so expectations can be written as upstream writes them.
void Normalize(int64_t* m, int32_t* e) {
  if (*m == 0) {
    *e = 0;
    return;
  }
  while (*m % 10 == 0) {
    *m /= 10;
    ++*e;
  }
}

Quantity MustParse(std::string_view s) {
  auto q = Quantity::Parse(s);
  EXPECT_TRUE(q.ok()) << s << ": " << q.status();
  return q.ok() ? *q : Quantity();
}

struct ParseCase {
  const char* input;
  int64_t mantissa;
  int32_t exponent;
  Format format;
};

// Upstream TestQuantityParse, values as mantissa * 10^exponent.
const ParseCase kParseCases[] = {
    {"0", 0, 0, Format::kDecimalSI},
    {"0n", 0, 0, Format::kDecimalSI},
    {"0u", 0, 0, Format::kDecimalSI},
    {"0m", 0, 0, Format::kDecimalSI},
    {"0Ki", 0, 0, Format::kBinarySI},
    {"0k", 0, 0, Format::kDecimalSI},
    {"0Mi", 0, 0, Format::kBinarySI},
    {"0M", 0, 0, Format::kDecimalSI},
    {"0Gi", 0, 0, Format::kBinarySI},
    {"0G", 0, 0, Format::kDecimalSI},
    {"0Ti", 0, 0, Format::kBinarySI},
    {"0T", 0, 0, Format::kDecimalSI},
    {"1", 1, 0, Format::kDecimalSI},
    // Binary suffixes.
    {"1Ki", 1024, 0, Format::kBinarySI},
    {"8Ki", 8 * 1024, 0, Format::kBinarySI},
    {"7Mi", 7 * 1024 * 1024, 0, Format::kBinarySI},
    {"6Gi", 6LL * 1024 * 1024 * 1024, 0, Format::kBinarySI},
    {"5Ti", 5LL * 1024 * 1024 * 1024 * 1024, 0, Format::kBinarySI},
    {"4Pi", 4LL * 1024 * 1024 * 1024 * 1024 * 1024, 0, Format::kBinarySI},
    {"3Ei", 3LL * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0, Format::kBinarySI},
    {"10Ti", 10LL * 1024 * 1024 * 1024 * 1024, 0, Format::kBinarySI},
    {"100Ti", 100LL * 1024 * 1024 * 1024 * 1024, 0, Format::kBinarySI},
    // Decimal suffixes.
    {"5n", 5, -9, Format::kDecimalSI},
    {"4u", 4, -6, Format::kDecimalSI},
    {"3m", 3, -3, Format::kDecimalSI},
    {"9", 9, 0, Format::kDecimalSI},
    {"8k", 8, 3, Format::kDecimalSI},
    {"50k", 5, 4, Format::kDecimalSI},
    {"7M", 7, 6, Format::kDecimalSI},
    {"6G", 6, 9, Format::kDecimalSI},
    {"5T", 5, 12, Format::kDecimalSI},
    {"40T", 4, 13, Format::kDecimalSI},
    {"300T", 3, 14, Format::kDecimalSI},
    {"2P", 2, 15, Format::kDecimalSI},
    {"1E", 1, 18, Format::kDecimalSI},
    // Decimal exponents.
    {"1E-3", 1, -3, Format::kDecimalExponent},
    {"1e3", 1, 3, Format::kDecimalExponent},
    {"1E6", 1, 6, Format::kDecimalExponent},
    {"1e9", 1, 9, Format::kDecimalExponent},
    {"1E12", 1, 12, Format::kDecimalExponent},
    {"1e15", 1, 15, Format::kDecimalExponent},
    {"1E18", 1, 18, Format::kDecimalExponent},
    {"1e14", 1, 14, Format::kDecimalExponent},
    {"1e13", 1, 13, Format::kDecimalExponent},
    {"100.035k", 100035, 0, Format::kDecimalSI},
    // Things that look like floating point.
    {"0.001", 1, -3, Format::kDecimalSI},
    {"0.0005k", 5, -1, Format::kDecimalSI},
    {"0.005", 5, -3, Format::kDecimalSI},
    {"0.05", 5, -2, Format::kDecimalSI},
    {"0.5", 5, -1, Format::kDecimalSI},
    {"0.00050k", 5, -1, Format::kDecimalSI},
    {"0.00500", 5, -3, Format::kDecimalSI},
    {"0.05000", 5, -2, Format::kDecimalSI},
    {"0.50000", 5, -1, Format::kDecimalSI},
    {"0.5e0", 5, -1, Format::kDecimalExponent},
    {"0.5e-1", 5, -2, Format::kDecimalExponent},
    {"0.5e-2", 5, -3, Format::kDecimalExponent},
    {"10.035M", 10035, 3, Format::kDecimalSI},
    {"1.2e3", 12, 2, Format::kDecimalExponent},
    {"1.3E+6", 13, 5, Format::kDecimalExponent},
    {"1.40e9", 14, 8, Format::kDecimalExponent},
    {"1.53E12", 153, 10, Format::kDecimalExponent},
    {"1.6e15", 16, 14, Format::kDecimalExponent},
    {"1.7E18", 17, 17, Format::kDecimalExponent},
    {"9.01", 901, -2, Format::kDecimalSI},
    {"8.1k", 81, 2, Format::kDecimalSI},
    {"7.123456M", 7123456, 0, Format::kDecimalSI},
    {"6.987654321G", 6987654321, 0, Format::kDecimalSI},
    {"5.444T", 5444, 9, Format::kDecimalSI},
    {"40.1T", 401, 11, Format::kDecimalSI},
    {"300.2T", 3002, 11, Format::kDecimalSI},
    {"2.5P", 25, 14, Format::kDecimalSI},
    {"1.01E", 101, 16, Format::kDecimalSI},
    // Precision below 1n rounds up (away from zero).
    {"3.001n", 4, -9, Format::kDecimalSI},
    {"1.1E-9", 2, -9, Format::kDecimalExponent},
    {"0.0000000001", 1, -9, Format::kDecimalSI},
    {"0.0000000005", 1, -9, Format::kDecimalSI},
    {"0.00000000050", 1, -9, Format::kDecimalSI},
    {"0.5e-9", 1, -9, Format::kDecimalExponent},
    {"0.9n", 1, -9, Format::kDecimalSI},
    {"0.00000012345", 124, -9, Format::kDecimalSI},
    {"0.00000012354", 124, -9, Format::kDecimalSI},
    {"12E", 12, 18, Format::kDecimalSI},
    // Fractional binary values.
    {"100.035Ki", 10243584, -2, Format::kBinarySI},
    {"0.5Mi", 524288, 0, Format::kBinarySI},
    {"0.05Gi", 536870912, -1, Format::kBinarySI},
    {"0.025Ti", 274877906944, -1, Format::kBinarySI},
    // Things written by trolls: a binary value below 1 becomes DecimalSI.
    {"0.000000000001Ki", 2, -9, Format::kDecimalSI},
    {".001", 1, -3, Format::kDecimalSI},
    {".0001k", 100, -3, Format::kDecimalSI},
    {"1.", 1, 0, Format::kDecimalSI},
    {"1.G", 1, 9, Format::kDecimalSI},
};

class QuantityParseTest : public testing::TestWithParam<ParseCase> {};

TEST_P(QuantityParseTest, ParsesWithSignVariants) {
  const ParseCase& c = GetParam();
  int64_t want_m = c.mantissa;
  int32_t want_e = c.exponent;
  Normalize(&want_m, &want_e);
  for (const char* sign : {"", "+", "-"}) {
    std::string input = std::string(sign) + c.input;
    auto q = Quantity::Parse(input);
    ASSERT_TRUE(q.ok()) << input << ": " << q.status();
    const int64_t m = std::string(sign) == "-" ? -want_m : want_m;
    EXPECT_EQ(q->mantissa(), m) << input;
    EXPECT_EQ(q->exponent(), want_e) << input;
    EXPECT_EQ(q->format(), c.format) << input;
    // The canonical string parses back to an equal value.
    auto again = Quantity::Parse(q->ToString());
    ASSERT_TRUE(again.ok()) << q->ToString();
    EXPECT_EQ(again->Compare(*q), 0) << input << " -> " << q->ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Upstream, QuantityParseTest, testing::ValuesIn(kParseCases));

struct ErrorCase {
  const char* input;
  absl::StatusCode code;
  const char* message;  // exact message, or nullptr to skip the check
};

// Upstream's invalid inputs with the error each one gets upstream.
const ErrorCase kErrorCases[] = {
    {"", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"1.1.M", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"1+1.0M", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"0.1mi", absl::StatusCode::kInvalidArgument, kErrSuffix},
    {"0.1am", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"aoeu", absl::StatusCode::kInvalidArgument, kErrFormat},
    {".5i", absl::StatusCode::kInvalidArgument, kErrSuffix},
    {"1i", absl::StatusCode::kInvalidArgument, kErrSuffix},
    {"-3.01i", absl::StatusCode::kInvalidArgument, kErrSuffix},
    {"-3.01e-", absl::StatusCode::kInvalidArgument, kErrSuffix},
    {" 1", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"1 ", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"1e", absl::StatusCode::kInvalidArgument, kErrSuffix},
    {"1ki", absl::StatusCode::kInvalidArgument, kErrSuffix},
    {"1mm", absl::StatusCode::kInvalidArgument, kErrSuffix},
    {"1KiB", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"1Gb", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"1,5", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"0x10", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"--1", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"1e3.5", absl::StatusCode::kInvalidArgument, kErrFormat},
    // Upstream parses these as zero; Gantry rejects a quantity with no digits.
    {".", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"-", absl::StatusCode::kInvalidArgument, kErrFormat},
    {"m", absl::StatusCode::kInvalidArgument, kErrFormat},
    // Upstream clamps binary values at 2^63-1 ("9Ei") and keeps arbitrary
    // precision decimals; Gantry makes a value that does not fit an error.
    {"9Ei", absl::StatusCode::kOutOfRange, nullptr},
    {"9223372036854775807Ki", absl::StatusCode::kOutOfRange, nullptr},
    {"18446744073709551616", absl::StatusCode::kOutOfRange, nullptr},
    {"-18446744073709551616", absl::StatusCode::kOutOfRange, nullptr},
    {"123456789012345678901234567890123456789012345", absl::StatusCode::kOutOfRange, nullptr},
    {"1e1001", absl::StatusCode::kOutOfRange, nullptr},
    {"1e99999999999999999999", absl::StatusCode::kOutOfRange, nullptr},
    {"1e39", absl::StatusCode::kOutOfRange, nullptr},
    // Binary scaling that ends in decimal zeros again: 5e38 x 2^60 is
    // 576460752303423488e39, past the largest exponent, like its canonical form
    // (found by quantity_fuzz: the value parsed, its canonical form did not).
    {"500000000000000000000000000000000000000Ei", absl::StatusCode::kOutOfRange, nullptr},
    {"576460752303423488e39", absl::StatusCode::kOutOfRange, nullptr},
};

class QuantityErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(QuantityErrorTest, Rejects) {
  const ErrorCase& c = GetParam();
  auto q = Quantity::Parse(c.input);
  ASSERT_FALSE(q.ok()) << '"' << c.input << "\" parsed as " << q->ToString();
  EXPECT_EQ(q.status().code(), c.code) << c.input << ": " << q.status();
  if (c.message != nullptr) {
    EXPECT_EQ(q.status().message(), c.message) << c.input;
  }
}

INSTANTIATE_TEST_SUITE_P(Upstream, QuantityErrorTest, testing::ValuesIn(kErrorCases));

TEST(QuantityTest, LargestValuesThatFit) {
  EXPECT_EQ(MustParse("9223372036854775807").Value(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(MustParse("-9223372036854775807").Value(), -std::numeric_limits<int64_t>::max());
  EXPECT_EQ(MustParse("7Ei").Value(), 7LL << 60);
  // Large exponents are fine as long as the mantissa fits.
  EXPECT_EQ(MustParse("1e38").ToString(), "100e36");
}

struct StringCase {
  const char* input;
  const char* canonical;
};

// Upstream TestQuantityString / TestQuantityParseEmit: each input is an
// alternate spelling whose canonical form is the expected string.
const StringCase kStringCases[] = {
    {"1Gi", "1Gi"},
    {"1024Mi", "1Gi"},
    {"307200Ki", "300Mi"},
    {"6Ki", "6Ki"},
    {"1025024Mi", "1001Gi"},
    {"1024Gi", "1Ti"},
    {"0.00048828125Ki", "500m"},  // binary below 1 prints as DecimalSI
    {"0.0048828125Ki", "5"},      // binary below 1024 prints as DecimalSI
    {"1Ki", "1Ki"},
    {"1Mi", "1Mi"},
    {".001Ki", "1024m"},
    {".000001Ki", "1024u"},
    {".000000001Ki", "1024n"},
    {".000000000001Ki", "2n"},
    {"1.5Gi", "1536Mi"},
    {"1000M", "1G"},
    {"0.001T", "1G"},
    {"1000u", "1m"},
    {"80m", "80m"},
    {"1.08", "1080m"},
    {"1080000000n", "1080m"},
    {"300M", "300M"},
    {"1T", "1T"},
    {"1E", "1E"},
    {"1000E", "1e21"},
    {"5000E", "5e21"},
    {"1000000E", "1e24"},
    {"100E", "100E"},
    {"1234567M", "1234567M"},
    {"3k", "3k"},
    {"1025", "1025"},
    {"0", "0"},
    {"00", "0"},
    {"0Gi", "0"},
    {".001e12", "1e9"},
    {"0.001e0", "1e-3"},
    {"1000e-12", "1e-9"},
    {"80e-3", "80e-3"},
    {"300e6", "300e6"},
    {"1e12", "1e12"},
    {"1e3", "1e3"},
    {"3e3", "3e3"},
    {"1n", "1n"},
    {"80n", "80n"},
    {"1080n", "1080n"},
    {"1.08u", "1080n"},
    {"1u", "1u"},
    {"80u", "80u"},
    {"1080u", "1080u"},
    {"1.5", "1500m"},
    {"0.1", "100m"},
};

class QuantityStringTest : public testing::TestWithParam<StringCase> {};

TEST_P(QuantityStringTest, Canonical) {
  const StringCase& c = GetParam();
  EXPECT_EQ(MustParse(c.input).ToString(), c.canonical) << c.input;
  if (std::string(c.canonical) != "0") {
    EXPECT_EQ(MustParse(std::string("-") + c.input).ToString(), std::string("-") + c.canonical)
        << c.input;
  }
  // Canonical strings are fixed points.
  EXPECT_EQ(MustParse(c.canonical).ToString(), c.canonical);
}

INSTANTIATE_TEST_SUITE_P(Upstream, QuantityStringTest, testing::ValuesIn(kStringCases));

struct CompareCase {
  const char* a;
  const char* b;
  int want;
};

const CompareCase kCompareCases[] = {
    {"0", "0", 0},
    {"100m", "50m", 1},
    {"50m", "100m", -1},
    {"10000T", "100Gi", 1},
    {"1Gi", "1073741824", 0},
    {"1k", "1e3", 0},
    {"1000m", "1", 0},
    {"0.5", "500m", 0},
    {"1Ki", "1k", 1},
    {"-1", "1m", -1},
    {"-1", "-2", 1},
    {"-1Gi", "-1G", -1},
    {"1n", "0", 1},
    {"-1n", "0", -1},
    {"9.01", "9010m", 0},
    {"9.01", "9", 1},
    {"800m", "790m", 1},
    {"800m", "1", -1},
    {"12E", "9223372036854775807", 1},
    {"1e36", "999999999999999999e18", 1},
    {"999999999999999999e18", "1e36", -1},
    {"1e-9", "1n", 0},
    {"0Ki", "0e3", 0},
};

class QuantityCompareTest : public testing::TestWithParam<CompareCase> {};

TEST_P(QuantityCompareTest, AcrossFormats) {
  const CompareCase& c = GetParam();
  Quantity a = MustParse(c.a), b = MustParse(c.b);
  EXPECT_EQ(a.Compare(b), c.want) << c.a << " vs " << c.b;
  EXPECT_EQ(b.Compare(a), -c.want) << c.b << " vs " << c.a;
  EXPECT_EQ(a == b, c.want == 0);
  EXPECT_EQ(a < b, c.want < 0);
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityCompareTest, testing::ValuesIn(kCompareCases));

struct ValueCase {
  const char* input;
  int64_t value;
  int64_t milli;
};

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Value and MilliValue round away from zero, as upstream's ScaledValue.
const ValueCase kValueCases[] = {
    {"0", 0, 0},
    {"1", 1, 1000},
    {"1.5", 2, 1500},
    {"100m", 1, 100},
    {"0.1m", 1, 1},
    {"1n", 1, 1},
    {"1u", 1, 1},
    {"1000001u", 2, 1001},
    {"-1.5", -2, -1500},
    {"-0.1m", -1, -1},
    {"-1n", -1, -1},
    {"9.01", 10, 9010},
    {"-9.01", -10, -9010},
    {"1Gi", 1073741824, 1073741824000},
    {"1.5Ki", 1536, 1536000},
    {"2Pi", 2251799813685248, 2251799813685248000},
    {"12E", kMax, kMax},  // saturates
    {"-12E", kMin, kMin},
    {"9223372036854775807", kMax, kMax},
    {"9223372036854775m", 9223372036855, 9223372036854775},
};

class QuantityValueTest : public testing::TestWithParam<ValueCase> {};

TEST_P(QuantityValueTest, RoundsAwayFromZero) {
  const ValueCase& c = GetParam();
  Quantity q = MustParse(c.input);
  EXPECT_EQ(q.Value(), c.value) << c.input;
  EXPECT_EQ(q.MilliValue(), c.milli) << c.input;
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityValueTest, testing::ValuesIn(kValueCases));

TEST(QuantityTest, AsInt64) {
  EXPECT_EQ(*MustParse("1k").AsInt64(), 1000);
  EXPECT_EQ(*MustParse("1Gi").AsInt64(), 1073741824);
  EXPECT_EQ(*MustParse("-5").AsInt64(), -5);
  EXPECT_FALSE(MustParse("1.5").AsInt64().ok());
  EXPECT_FALSE(MustParse("100m").AsInt64().ok());
  EXPECT_EQ(MustParse("12E").AsInt64().status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(MustParse("1.5").IsZero() == false && !MustParse("1.5").IsInteger());
  EXPECT_TRUE(MustParse("2k").IsInteger());
}

TEST(QuantityTest, FromInt64AndMilli) {
  // Upstream TestNewSet / TestMilliNewSet.
  EXPECT_EQ(Quantity::FromInt64(1).ToString(), "1");
  EXPECT_EQ(Quantity::FromInt64(1000).ToString(), "1k");
  EXPECT_EQ(Quantity::FromInt64(1234000).ToString(), "1234k");
  EXPECT_EQ(Quantity::FromInt64(1024, Format::kBinarySI).ToString(), "1Ki");
  EXPECT_EQ(Quantity::FromInt64(1000000, Format::kDecimalExponent).ToString(), "1e6");
  EXPECT_EQ(Quantity::FromInt64(1024 * 1024, Format::kBinarySI).ToString(), "1Mi");
  EXPECT_EQ(Quantity::FromMilli(1).ToString(), "1m");
  EXPECT_EQ(Quantity::FromMilli(1000).ToString(), "1");
  EXPECT_EQ(Quantity::FromMilli(1234000).ToString(), "1234");
  EXPECT_EQ(Quantity::FromMilli(1024, Format::kBinarySI).ToString(), "1024m");
  EXPECT_EQ(Quantity::FromMilli(1000000, Format::kDecimalExponent).ToString(), "1e3");
  EXPECT_EQ(Quantity::FromMilli(1024 * 1024, Format::kBinarySI).ToString(), "1048576m");
  EXPECT_EQ(Quantity::FromMilli(1500).MilliValue(), 1500);
  EXPECT_EQ(Quantity::FromInt64(kMax).Value(), kMax);
}

TEST(QuantityTest, AddSubKeepSuffix) {
  // Upstream TestQuantityAddZeroPreservesSuffix / SubZeroPreservesSuffix.
  Quantity zero = MustParse("0");
  for (const char* s : {"100m", "1Gi"}) {
    Quantity v = MustParse(s);
    EXPECT_EQ(v.Add(zero)->ToString(), s);
    EXPECT_EQ(zero.Add(v)->ToString(), s);
    EXPECT_EQ(v.Sub(zero)->ToString(), s);
    EXPECT_EQ(zero.Sub(v)->ToString(), std::string("-") + s);
  }
}

TEST(QuantityTest, AddSubTable) {
  // Upstream TestAdd / TestSub: the receiver's format wins.
  EXPECT_EQ(MustParse("10").Add(MustParse("1e1"))->Compare(MustParse("20")), 0);
  EXPECT_EQ(MustParse("10").Add(MustParse("1Ki"))->format(), Format::kDecimalSI);
  EXPECT_EQ(MustParse("1Ki").Add(MustParse("10"))->format(), Format::kBinarySI);
  EXPECT_EQ(MustParse("1Ki").Add(MustParse("1Ki"))->ToString(), "2Ki");
  EXPECT_EQ(MustParse("10").Sub(MustParse("1e1"))->IsZero(), true);
  EXPECT_EQ(MustParse("10").Sub(MustParse("1"))->ToString(), "9");
  EXPECT_EQ(MustParse("1").Sub(MustParse("1n"))->ToString(), "999999999n");
  EXPECT_EQ(MustParse("1.5").Add(MustParse("250m"))->ToString(), "1750m");
  EXPECT_EQ(MustParse("1E").Add(MustParse("1n")).status().code(), absl::StatusCode::kOutOfRange)
      << "10^27 nano units do not fit";
  EXPECT_EQ(MustParse("9223372036854775807").Add(MustParse("1")).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(QuantityTest, AddSubRoundTripAcrossScales) {
  // Upstream TestAddSubRoundTripAcrossScales with a fixed sequence.
  Quantity sum;
  std::vector<Quantity> parts;
  uint64_t x = 12345;
  for (int i = 0; i < 100; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    int64_t m = static_cast<int64_t>((x >> 20) % 1000000);
    int e = static_cast<int>(x % 10) - 5;
    auto q = Quantity::Parse(std::to_string(m) + "e" + std::to_string(e));
    ASSERT_TRUE(q.ok());
    parts.push_back(*q);
    sum = *sum.Add(*q);
  }
  for (const Quantity& q : parts) sum = *sum.Sub(q);
  EXPECT_TRUE(sum.IsZero()) << sum.ToString();
}

TEST(QuantityTest, ApproximateFloat) {
  // Upstream TestStringQuantityAsApproximateFloat64.
  EXPECT_EQ(MustParse("2Ki").AsApproximateFloat(), 2048);
  EXPECT_EQ(MustParse("1.1Ki").AsApproximateFloat(), 1126.4);
  EXPECT_EQ(MustParse("1Mi").AsApproximateFloat(), 1.048576e+06);
  EXPECT_EQ(MustParse("2Gi").AsApproximateFloat(), 2.147483648e+09);
  EXPECT_EQ(MustParse("12E").AsApproximateFloat(), 1.2e19);
  EXPECT_EQ(MustParse("0").AsApproximateFloat(), 0);
}

TEST(QuantityTest, DefaultIsZero) {
  Quantity q;
  EXPECT_TRUE(q.IsZero());
  EXPECT_EQ(q.Sign(), 0);
  EXPECT_EQ(q.ToString(), "0");
  EXPECT_EQ(q.Value(), 0);
  EXPECT_EQ(q.MilliValue(), 0);
  EXPECT_EQ(q.Compare(MustParse("0Gi")), 0);
}

}  // namespace
}  // namespace gantry::api
