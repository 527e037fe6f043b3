#include "src/server/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "fmt/format.h"
#include "gantry/util/strings.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace gantry::server {
namespace log_internal {
int& CurrentV() {
  thread_local int v = 0;
  return v;
}
}  // namespace log_internal

namespace {

std::string_view Basename(const char* file) {
  if (file == nullptr) return {};
  std::string_view f(file);
  size_t slash = f.rfind('/');
  return slash == std::string_view::npos ? f : f.substr(slash + 1);
}

char SeverityLetter(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::warn: return 'W';
    case spdlog::level::err: return 'E';
    case spdlog::level::critical: return 'F';
    default: return 'I';
  }
}

// I0102 15:04:05.123456   12345 file.cc:123] message
class KlogTextFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    auto since = msg.time.time_since_epoch();
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(since);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since - secs).count();
    std::time_t t = static_cast<std::time_t>(secs.count());
    std::tm tm{};
    localtime_r(&t, &tm);
    fmt::format_to(std::back_inserter(dest), "{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {:>7}",
                   SeverityLetter(msg.level), tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                   micros, msg.thread_id);
    // Plain spdlog::info() calls carry no source location.
    if (!msg.source.empty()) {
      fmt::format_to(std::back_inserter(dest), " {}:{}", Basename(msg.source.filename), msg.source.line);
    }
    dest.append(std::string_view("] "));
    dest.append(msg.payload.data(), msg.payload.data() + msg.payload.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<KlogTextFormatter>(); }
};

void AppendJsonString(spdlog::memory_buf_t& dest, std::string_view s) {
  dest.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': dest.append(std::string_view("\\\"")); break;
      case '\\': dest.append(std::string_view("\\\\")); break;
      case '\n': dest.append(std::string_view("\\n")); break;
      case '\r': dest.append(std::string_view("\\r")); break;
      case '\t': dest.append(std::string_view("\\t")); break;
      default:
        if (c < 0x20) {
          fmt::format_to(std::back_inserter(dest), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          dest.push_back(static_cast<char>(c));
        }
    }
  }
  dest.push_back('"');
}

// {"ts":1700000000.123456,"caller":"file.cc:12","msg":"...","v":0}
class KlogJsonFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(msg.time.time_since_epoch()).count();
    fmt::format_to(std::back_inserter(dest), "{{\"ts\":{}.{:06}", micros / 1000000, micros % 1000000);
    if (!msg.source.empty()) {
      dest.append(std::string_view(",\"caller\":"));
      AppendJsonString(dest, fmt::format("{}:{}", Basename(msg.source.filename), msg.source.line));
    }
    dest.append(std::string_view(",\"msg\":"));
    AppendJsonString(dest, std::string_view(msg.payload.data(), msg.payload.size()));
    switch (msg.level) {
      case spdlog::level::warn: dest.append(std::string_view(",\"level\":\"warning\"")); break;
      case spdlog::level::err: dest.append(std::string_view(",\"level\":\"error\"")); break;
      case spdlog::level::critical: dest.append(std::string_view(",\"level\":\"fatal\"")); break;
      default: fmt::format_to(std::back_inserter(dest), ",\"v\":{}", log_internal::CurrentV());
    }
    dest.append(std::string_view("}\n"));
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<KlogJsonFormatter>(); }
};

}  // namespace

absl::Status ParseLogFormat(std::string_view text, LogFormat* out) {
  if (text == "text") {
    *out = LogFormat::kText;
  } else if (text == "json") {
    *out = LogFormat::kJson;
  } else {
    return absl::InvalidArgumentError(
        StrCat("--logging-format: unknown format \"", text, "\" (supported: text, json)"));
  }
  return absl::OkStatus();
}

absl::Status SetupLogging(const LogOptions& options) {
  if (options.verbosity < 0) {
    return absl::InvalidArgumentError(StrCat("-v: verbosity must be >= 0, got ", options.verbosity));
  }
  log_internal::g_verbosity.store(options.verbosity, std::memory_order_relaxed);
  std::shared_ptr<spdlog::sinks::sink> sink = options.sink;
  if (!sink) sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  if (options.format == LogFormat::kJson) {
    sink->set_formatter(std::make_unique<KlogJsonFormatter>());
  } else {
    sink->set_formatter(std::make_unique<KlogTextFormatter>());
  }
  auto logger = std::make_shared<spdlog::logger>("gantry", sink);
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

}  // namespace gantry::server
