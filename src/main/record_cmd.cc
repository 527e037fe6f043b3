// `gantry record [--kubeconfig PATH] [--context NAME] [--master URL] -o SNAPSHOT`: lists every
// object kind Gantry uses from a live cluster and writes a snapshot (.pb,
// .yaml or .json by extension) that `gantry simulate --cluster` replays.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "src/admin/recorder.h"
#include "src/client/http.h"
#include "src/client/rest_config.h"
#include "src/main/commands.h"

namespace gantry::cmd {
namespace {

struct RecordOptions {
  std::string kubeconfig;
  std::string context;
  std::string master;
  std::string output;
  int64_t page_size = 500;
  double qps = 50;
  int burst = 100;
};

int RunRecord(const RecordOptions& opts) {
  absl::StatusOr<sim::SnapshotFormat> format = sim::SnapshotFormatForPath(opts.output);
  if (!format.ok()) {
    std::fprintf(stderr, "gantry record: -o %s\n", std::string(format.status().message()).c_str());
    return 2;
  }
  client::ClientConfigSources sources;
  sources.kubeconfig = opts.kubeconfig;
  sources.context = opts.context;
  sources.master = opts.master;
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr) sources.kubeconfig_env = env;
  if (const char* home = std::getenv("HOME"); home != nullptr) sources.home = home;
  absl::StatusOr<client::RestConfig> rest = client::ResolveClientRestConfig(sources);
  if (!rest.ok()) {
    std::fprintf(stderr, "gantry record: %s\n", client::Msg(rest.status()).c_str());
    return 2;
  }
  client::ClientOptions co;
  co.qps = opts.qps;
  co.burst = opts.burst;
  co.user_agent = "gantry-record";
  absl::StatusOr<std::unique_ptr<client::HttpClient>> http = client::HttpClient::Create(*rest, co);
  if (!http.ok()) {
    std::fprintf(stderr, "gantry record: %s\n", client::Msg(http.status()).c_str());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<admin::Recording> rec = admin::RecordCluster(**http, opts.page_size);
  if (!rec.ok()) {
    std::fprintf(stderr, "gantry record: %s: %s\n", rest->server.c_str(),
                 client::Msg(rec.status()).c_str());
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (absl::Status st = sim::WriteSnapshot(
          opts.output, *format, admin::RecordingHeader(*rec, "gantry record"), rec->objects);
      !st.ok()) {
    std::fprintf(stderr, "gantry record: %s\n", client::Msg(st).c_str());
    return 1;
  }
  std::printf("Recorded %zu object(s) from %s in %.2f s into %s\n", rec->objects.size(),
              rec->server.c_str(), seconds, opts.output.c_str());
  for (const auto& [kind, count] : rec->counts)
    std::printf("  %-40s %lld\n", kind.c_str(), static_cast<long long>(count));
  for (const std::string& k : rec->not_served) std::printf("  %-40s not served\n", k.c_str());
  return 0;
}

}  // namespace

void RegisterRecord(CLI::App& app, RunFn* run) {
  auto opts = std::make_shared<RecordOptions>();
  CLI::App* sub =
      app.add_subcommand("record", "Record a live cluster's state into a snapshot file");
  sub->add_option("--kubeconfig", opts->kubeconfig,
                  "kubeconfig file (default: the first existing file of $KUBECONFIG, else "
                  "~/.kube/config, else the in-cluster configuration)");
  sub->add_option("--context", opts->context,
                  "kubeconfig context to use (default: its current-context)");
  sub->add_option("--master", opts->master, "API server URL; overrides the kubeconfig's server");
  sub->add_option("-o,--output", opts->output,
                  "Snapshot file; the format follows the extension (.pb, .yaml, .json)")
      ->required();
  sub->add_option("--page-size", opts->page_size, "Objects per LIST page")
      ->check(CLI::Range(1, 10000));
  sub->add_option("--kube-api-qps", opts->qps, "Client-side request rate limit");
  sub->add_option("--kube-api-burst", opts->burst, "Client-side burst");
  sub->callback([opts, run] { *run = [opts] { return RunRecord(*opts); }; });
}

}  // namespace gantry::cmd
