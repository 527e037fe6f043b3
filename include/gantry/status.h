// Scheduling verdicts returned by plugins and the framework.
//
// `Status` is the scheduling channel (design rule 3): it says whether a pod
// fits, not whether the infrastructure works. Infrastructure failures travel
// as absl::Status and are turned into a kError verdict with FromAbsl().
// Codes and their order follow upstream kube-scheduler:
//
//   kSuccess                      the plugin ran and the pod may proceed.
//   kError                        internal failure or unexpected input; the
//                                 attempt fails and the pod is retried with backoff.
//   kUnschedulable                does not fit now; preemption may help.
//   kUnschedulableAndUnresolvable does not fit and preemption cannot help.
//   kWait                         Permit / gang placement: not yet decided.
//   kSkip                         skip the coupled Filter/Score (from PreFilter/
//                                 PreScore) or let the next Bind plugin bind.
//   kPending                      waiting for an external event (e.g. a claim).
#ifndef GANTRY_STATUS_H_
#define GANTRY_STATUS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace gantry::framework {

enum class Code : uint8_t {
  kSuccess,
  kError,
  kUnschedulable,
  kUnschedulableAndUnresolvable,
  kWait,
  kSkip,
  kPending,
};

// Upstream's spelling of each code ("Success", "Unschedulable", ...), used in
// metrics labels and logs.
std::string_view CodeName(Code code);

class Status {
 public:
  Status() = default;  // Success
  explicit Status(Code code) : code_(code) {}
  Status(Code code, std::string reason) : code_(code) { reasons_.push_back(std::move(reason)); }
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}

  static Status Success() { return Status(); }
  static Status Error(std::string reason) { return Status(Code::kError, std::move(reason)); }
  static Status Unschedulable(std::string reason) {
    return Status(Code::kUnschedulable, std::move(reason));
  }
  static Status Unresolvable(std::string reason) {
    return Status(Code::kUnschedulableAndUnresolvable, std::move(reason));
  }
  static Status Skip() { return Status(Code::kSkip); }
  // Maps an infrastructure error to a kError verdict carrying its message.
  static Status FromAbsl(const absl::Status& st);

  Code code() const { return code_; }
  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  bool IsWait() const { return code_ == Code::kWait; }
  // Unschedulable or UnschedulableAndUnresolvable.
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable ||
           code_ == Code::kPending;
  }
  bool IsError() const { return code_ == Code::kError; }

  const std::vector<std::string>& reasons() const { return reasons_; }
  // Reasons joined with ", ".
  std::string Message() const;

  // The plugin that produced a non-success verdict (set by the framework).
  std::string_view plugin() const { return plugin_; }
  Status& WithPlugin(std::string_view plugin) {
    plugin_ = std::string(plugin);
    return *this;
  }

 private:
  Code code_ = Code::kSuccess;
  std::vector<std::string> reasons_;
  std::string plugin_;
};

}  // namespace gantry::framework

#endif  // GANTRY_STATUS_H_
