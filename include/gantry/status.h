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
#include <memory>
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
  Status(Code code, std::string reason) : code_(code) { MutableRep().reasons.push_back(std::move(reason)); }
  Status(Code code, std::vector<std::string> reasons) : code_(code) {
    if (!reasons.empty()) MutableRep().reasons = std::move(reasons);
  }
  Status(const Status& other) : code_(other.code_), rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

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
  // An Error carrying `st`'s message and code (infra_code()).
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

  const std::vector<std::string>& reasons() const { return rep_ ? rep_->reasons : NoReasons(); }
  // Reasons joined with ", ".
  std::string Message() const;

  // The plugin that produced a non-success verdict (set by the framework).
  std::string_view plugin() const { return rep_ ? std::string_view(rep_->plugin) : std::string_view(); }
  // For an Error made by FromAbsl, the infrastructure error's code (e.g.
  // kUnavailable for an API server that did not answer); kOk otherwise.
  absl::StatusCode infra_code() const { return rep_ ? rep_->infra : absl::StatusCode::kOk; }

  Status& WithPlugin(std::string_view plugin) {
    if (rep_ != nullptr || !plugin.empty()) MutableRep().plugin = std::string(plugin);
    return *this;
  }

 private:
  // Reasons and plugin live out of line: a verdict without them (every
  // Success on the Filter/Score path) is a code and a null pointer.
  struct Rep {
    std::vector<std::string> reasons;
    std::string plugin;
    absl::StatusCode infra = absl::StatusCode::kOk;
  };
  Rep& MutableRep() {
    if (rep_ == nullptr) rep_ = std::make_unique<Rep>();
    return *rep_;
  }
  static const std::vector<std::string>& NoReasons();

  Code code_ = Code::kSuccess;
  std::unique_ptr<Rep> rep_;
};

}  // namespace gantry::framework

#endif  // GANTRY_STATUS_H_
