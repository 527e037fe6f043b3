// Process logging on spdlog, klog-style.
//
//   server::SetupLogging({.verbosity = 2, .format = server::LogFormat::kJson});
//   GANTRY_LOG_INFO("bound {} to {}", pod, node);
//   GANTRY_VLOG(4, "filter {} rejected {}", plugin, node);   // only with -v >= 4
//   GANTRY_LOG_WARNING(...); GANTRY_LOG_ERROR(...);
//
// Text lines carry a klog-like header:
//   I0102 15:04:05.123456   12345 scheduler.cc:123] message
// (severity letter I/W/E/F, month+day, wall time with microseconds, thread
// id, source file:line). JSON lines are one object each, as klog's JSON
// format: {"ts":<unix seconds>,"caller":"file.cc:123","msg":"...","v":N}
// with "v" for info lines and "err"-less "level" for warnings and errors.
//
// Before SetupLogging the macros log through spdlog's default logger.
#ifndef GANTRY_SRC_SERVER_LOG_H_
#define GANTRY_SRC_SERVER_LOG_H_

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "spdlog/sinks/sink.h"
#include "spdlog/spdlog.h"

namespace gantry::server {

enum class LogFormat { kText, kJson };

struct LogOptions {
  int verbosity = 0;            // -v / --v
  LogFormat format = LogFormat::kText;
  // Tests: where lines go (nullptr = stderr).
  std::shared_ptr<spdlog::sinks::sink> sink;
};

// "text" | "json"; anything else is InvalidArgument.
absl::Status ParseLogFormat(std::string_view text, LogFormat* out);

// Installs the default spdlog logger (thread-safe, flushed on every line at
// warning and above). May be called again to reconfigure.
absl::Status SetupLogging(const LogOptions& options);

namespace log_internal {
inline std::atomic<int> g_verbosity{0};
// The V level of the line being formatted (JSON "v").
int& CurrentV();
struct VScope {
  explicit VScope(int v) : saved(CurrentV()) { CurrentV() = v; }
  ~VScope() { CurrentV() = saved; }
  int saved;
};
}  // namespace log_internal

inline int Verbosity() { return log_internal::g_verbosity.load(std::memory_order_relaxed); }
inline bool VLogIsOn(int level) { return level <= Verbosity(); }

}  // namespace gantry::server

#define GANTRY_LOG_AT_(lvl, ...) SPDLOG_LOGGER_CALL(::spdlog::default_logger_raw(), lvl, __VA_ARGS__)
#define GANTRY_LOG_INFO(...) GANTRY_LOG_AT_(::spdlog::level::info, __VA_ARGS__)
#define GANTRY_LOG_WARNING(...) GANTRY_LOG_AT_(::spdlog::level::warn, __VA_ARGS__)
#define GANTRY_LOG_ERROR(...) GANTRY_LOG_AT_(::spdlog::level::err, __VA_ARGS__)
#define GANTRY_LOG_FATAL(...) GANTRY_LOG_AT_(::spdlog::level::critical, __VA_ARGS__)
// klog's V(level).Info: formatted only when -v >= level.
#define GANTRY_VLOG(gantry_v_, ...)                                      \
  do {                                                                   \
    if (::gantry::server::VLogIsOn(gantry_v_)) {                         \
      ::gantry::server::log_internal::VScope gantry_vscope_((gantry_v_)); \
      GANTRY_LOG_AT_(::spdlog::level::info, __VA_ARGS__);                \
    }                                                                    \
  } while (0)

#endif  // GANTRY_SRC_SERVER_LOG_H_
