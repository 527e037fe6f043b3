// kube-scheduler-compatible top-level flags of `gantry` (no subcommand: run
// the scheduler against the API server). See docs/operations.md#flags.
//
// Precedence follows kube-scheduler: with --config, the file is the source
// of truth, except that explicitly given --leader-elect* flags override its
// leaderElection; --kubeconfig and the deprecated --kube-api-*/--profiling
// flags are ignored (with a warning). Without --config, the defaults are
// used and every flag applies. Removed upstream flags are rejected with an
// explanation (CheckRemovedFlags, before CLI11 parses).
#ifndef GANTRY_SRC_MAIN_FLAGS_H_
#define GANTRY_SRC_MAIN_FLAGS_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/config/config.h"
#include "src/server/health_server.h"

namespace gantry::cmd {

struct RunFlags {
  std::string config;
  std::string kubeconfig;  // deprecated; ignored with --config
  std::string master;
  std::string write_config_to;

  bool leader_elect = true;
  std::string leader_elect_lease_duration = "15s";
  std::string leader_elect_renew_deadline = "10s";
  std::string leader_elect_retry_period = "2s";
  std::string leader_elect_resource_lock = "leases";
  std::string leader_elect_resource_name = std::string(config::kDefaultLeaseName);
  std::string leader_elect_resource_namespace = "kube-system";

  server::ServingOptions serving;
  // The gRPC admin service (src/server/admin_server.h); empty address disables it.
  std::string admin_address = "127.0.0.1:10260";
  std::string admin_tls_cert_file;
  std::string admin_tls_private_key_file;
  std::string admin_tls_client_ca_file;
  int admin_max_concurrent_calls = 4;
  bool admin_insecure = false;  // removed; set only to be refused at start
  int verbosity = 0;
  std::string logging_format = "text";
  std::string feature_gates;
  // Gantry-only: the most binding cycles (PreBind + Bind API writes) in flight at once.
  int binding_workers = 64;
  // Gantry-only: event writer threads and the most events waiting for them.
  int event_workers = 32;
  int event_queue_size = 10'000;

  // Deprecated (ignored with --config, as upstream).
  float kube_api_qps = 50;
  int kube_api_burst = 100;
  std::string kube_api_content_type = "application/vnd.kubernetes.protobuf";
  bool profiling = true;
  bool contention_profiling = true;

  // Long names (without "--") given explicitly on the command line.
  std::set<std::string> explicitly_set;
  bool IsSet(std::string_view name) const { return explicitly_set.count(std::string(name)) > 0; }
};

// Adds the top-level options to `app`.
void AddRunFlags(CLI::App& app, RunFlags* flags);
// After a successful parse: records which of them were given.
void RecordExplicitFlags(const CLI::App& app, RunFlags* flags);

// Go/pflag spellings CLI11 does not take: "-v=4" -> "--v=4", "-v" "4" is
// fine as is. Arguments after the first subcommand name are left alone.
std::vector<std::string> NormalizeArgs(const std::vector<std::string>& args,
                                       const std::set<std::string>& subcommands);

// Rejects removed kube-scheduler flags (--port, --address, --scheduler-name,
// --policy-config-file, ...) that appear before any subcommand name, with a
// message saying what replaces them.
absl::Status CheckRemovedFlags(const std::vector<std::string>& args, const std::set<std::string>& subcommands);

// --feature-gates "A=true,B=false" (Go ParseBool values). Names must be known
// upstream gates (KnownFeatureGates), else InvalidArgument, as kube-scheduler.
absl::StatusOr<std::map<std::string, bool>> ParseFeatureGates(std::string_view spec);
// Sorted upstream gate names (Kubernetes v1.30 to v1.37) accepted by --feature-gates.
const std::vector<std::string_view>& KnownFeatureGates();

// Applies the flags to `cfg` (loaded from --config when `from_file`, else the
// defaults) with upstream precedence; appends warnings for ignored flags.
absl::Status ApplyFlags(const RunFlags& flags, bool from_file, config::Configuration* cfg,
                        std::vector<std::string>* warnings);

}  // namespace gantry::cmd

#endif  // GANTRY_SRC_MAIN_FLAGS_H_
