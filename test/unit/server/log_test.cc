#include "src/server/log.h"

#include <mutex>
#include <regex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/ostream_sink.h"

namespace gantry::server {
namespace {

using ::testing::HasSubstr;

class LogTest : public ::testing::Test {
 protected:
  void Configure(LogFormat format, int v) {
    sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    LogOptions o;
    o.verbosity = v;
    o.format = format;
    o.sink = sink_;
    ASSERT_TRUE(SetupLogging(o).ok());
  }
  ~LogTest() override { (void)SetupLogging(LogOptions()); }
  std::ostringstream out_;
  std::shared_ptr<spdlog::sinks::sink> sink_;
};

TEST_F(LogTest, TextHeaderIsKlogLike) {
  Configure(LogFormat::kText, 0);
  GANTRY_LOG_INFO("bound {} to {}", "default/p", "n1");
  GANTRY_LOG_WARNING("careful");
  spdlog::info("plain {}", 1);
  std::string text = out_.str();
  std::regex header(R"(I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ log_test\.cc:\d+\] bound default/p to n1\n)");
  EXPECT_TRUE(std::regex_search(text, header)) << text;
  EXPECT_THAT(text, HasSubstr("log_test.cc"));
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\nW\d{4} .*\] careful\n)"))) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\nI\d{4} [0-9:.]+ +\d+\] plain 1\n)"))) << text;
}

TEST_F(LogTest, VerbosityGates) {
  Configure(LogFormat::kText, 2);
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  GANTRY_VLOG(2, "shown {}", count());
  GANTRY_VLOG(3, "hidden {}", count());
  EXPECT_EQ(evaluated, 1);  // arguments of disabled lines are not evaluated
  EXPECT_THAT(out_.str(), HasSubstr("shown 1"));
  EXPECT_THAT(out_.str(), ::testing::Not(HasSubstr("hidden")));
  EXPECT_TRUE(VLogIsOn(2));
  EXPECT_FALSE(VLogIsOn(3));
}

TEST_F(LogTest, JsonLines) {
  Configure(LogFormat::kJson, 4);
  GANTRY_VLOG(4, "quote \" and\nnewline");
  GANTRY_LOG_ERROR("boom");
  std::istringstream lines(out_.str());
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["msg"], "quote \" and\nnewline");
  EXPECT_EQ(j["v"], 4);
  EXPECT_THAT(j["caller"].get<std::string>(), ::testing::StartsWith("log_test.cc:"));
  EXPECT_TRUE(j["ts"].is_number());
  ASSERT_TRUE(std::getline(lines, line));
  j = nlohmann::json::parse(line);
  EXPECT_EQ(j["msg"], "boom");
  EXPECT_EQ(j["level"], "error");
  EXPECT_FALSE(j.contains("v"));
}

TEST(LogFormatTest, Parse) {
  LogFormat f;
  EXPECT_TRUE(ParseLogFormat("json", &f).ok());
  EXPECT_EQ(f, LogFormat::kJson);
  EXPECT_TRUE(ParseLogFormat("text", &f).ok());
  EXPECT_FALSE(ParseLogFormat("xml", &f).ok());
  LogOptions bad;
  bad.verbosity = -1;
  EXPECT_FALSE(SetupLogging(bad).ok());
}

}  // namespace
}  // namespace gantry::server
