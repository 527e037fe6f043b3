// gantry-bench: benchmark tooling.
//
//   gantry-bench generate --kind perf|ai --out FILE [options]
//       Writes a synthetic snapshot (JSON for *.json, YAML otherwise).
//   gantry-bench --workload NAME[/SIZE] [--quick] [--json OUT.json] [--config FILE]
//       Runs an offline equivalent of an upstream scheduler_perf workload
//       (bench/generate/workloads.h) and reports upstream-style throughput.
//   gantry-bench --list-workloads
//   gantry-bench loadtest [--nodes 5000] [--pods 150000]
//       Generates a scheduler_perf-style JSON snapshot to a temporary file,
//       loads it with the snapshot loader, and reports wall time, peak RSS
//       and resident memory per pod.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "bench/generate/generate.h"
#include "bench/generate/workloads.h"
#include "src/sim/loader.h"

namespace {

using gantry::bench::AiClusterOptions;
using gantry::bench::OutputFormat;
using gantry::bench::PerfClusterOptions;

// Resident set size now, in KiB (from /proc/self/statm).
int64_t CurrentRssKiB() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// Peak resident set size of the process so far, in KiB.
int64_t PeakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

int Generate(const std::string& kind, const std::string& out_path, const std::string& format_name,
             const PerfClusterOptions& perf, const AiClusterOptions& ai) {
  OutputFormat format = gantry::bench::FormatForPath(out_path);
  if (format_name == "json") format = OutputFormat::kJson;
  if (format_name == "yaml") format = OutputFormat::kYaml;
  std::ofstream file;
  std::ostream* out = &std::cout;
  if (out_path != "-") {
    file.open(out_path, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "gantry-bench: cannot write " << out_path << "\n";
      return 1;
    }
    out = &file;
  }
  absl::Status st = kind == "ai" ? gantry::bench::WriteAiCluster(ai, format, *out)
                                 : gantry::bench::WritePerfCluster(perf, format, *out);
  if (!st.ok()) {
    std::cerr << "gantry-bench generate: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

int LoadTest(const PerfClusterOptions& perf, const std::string& keep, bool json_report) {
  namespace fs = std::filesystem;
  const fs::path path = keep.empty() ? fs::temp_directory_path() /
                                           ("gantry-loadtest-" + std::to_string(::getpid()) + ".json")
                                     : fs::path(keep);
  const auto t_gen = std::chrono::steady_clock::now();
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    absl::Status st = gantry::bench::WritePerfCluster(perf, OutputFormat::kJson, file);
    if (!st.ok() || !file) {
      std::cerr << "gantry-bench loadtest: generating " << path << " failed: " << st.message() << "\n";
      return 1;
    }
  }
  const double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_gen).count();
  const int64_t file_bytes = static_cast<int64_t>(fs::file_size(path));

  const int64_t rss_before = CurrentRssKiB();
  const int64_t peak_before = PeakRssKiB();
  gantry::api::ObjectSet objects;
  gantry::sim::LoadStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  absl::Status st = gantry::sim::LoadClusterPath(path.string(), &objects, &stats);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int64_t rss_after = CurrentRssKiB();
  const int64_t peak_after = PeakRssKiB();
  if (keep.empty()) fs::remove(path);
  if (!st.ok()) {
    std::cerr << "gantry-bench loadtest: " << st.message() << "\n";
    return 1;
  }
  const int64_t pods = static_cast<int64_t>(objects.pods.size());
  const double retained_per_pod = pods > 0 ? 1024.0 * static_cast<double>(rss_after - rss_before) / pods : 0;
  const double peak_per_pod = pods > 0 ? 1024.0 * static_cast<double>(peak_after) / pods : 0;
  if (json_report) {
    std::printf(
        "{\"nodes\": %zu, \"pods\": %lld, \"file_bytes\": %lld, \"generate_seconds\": %.3f, \"load_seconds\": %.3f, "
        "\"rss_before_kib\": %lld, \"rss_after_kib\": %lld, \"peak_rss_kib\": %lld, \"peak_rss_before_load_kib\": "
        "%lld, \"retained_bytes_per_pod\": %.1f, \"peak_bytes_per_pod\": %.1f}\n",
        objects.nodes.size(), static_cast<long long>(pods), static_cast<long long>(file_bytes), gen_s, load_s,
        static_cast<long long>(rss_before), static_cast<long long>(rss_after), static_cast<long long>(peak_after),
        static_cast<long long>(peak_before), retained_per_pod, peak_per_pod);
  } else {
    std::printf("snapshot        %zu nodes, %lld pods, %.1f MiB JSON (generated in %.2f s)\n", objects.nodes.size(),
                static_cast<long long>(pods), file_bytes / 1048576.0, gen_s);
    std::printf("load            %.3f s wall\n", load_s);
    std::printf("RSS             %.1f MiB before load, %.1f MiB after load, %.1f MiB peak\n", rss_before / 1024.0,
                rss_after / 1024.0, peak_after / 1024.0);
    std::printf("per pod         %.0f B resident after load (retained), %.0f B peak RSS / pods\n", retained_per_pod,
                peak_per_pod);
  }
  return 0;
}

}  // namespace

int RunWorkloadCommand(const gantry::bench::WorkloadOptions& opts, const std::string& json_path) {
  absl::StatusOr<nlohmann::json> report = gantry::bench::RunWorkload(opts);
  if (!report.ok()) {
    std::cerr << "gantry-bench --workload: " << report.status().message() << "\n";
    return 1;
  }
  const nlohmann::json& r = *report;
  const nlohmann::json& t = r["throughput"];
  std::printf("%s: %lld nodes, %lld init pods, %lld measured pods\n", r["workload"].get<std::string>().c_str(),
              static_cast<long long>(r["nodes"].get<int64_t>()), static_cast<long long>(r["init_pods"].get<int64_t>()),
              static_cast<long long>(r["measure_pods"].get<int64_t>()));
  std::printf("scheduled %lld, unschedulable %lld, %lld attempts in %.3f s: %.0f pods/s\n",
              static_cast<long long>(r["scheduled"].get<int64_t>()),
              static_cast<long long>(r["unschedulable"].get<int64_t>()),
              static_cast<long long>(r["attempts"].get<int64_t>()), r["loop_seconds"].get<double>(),
              r["pods_per_second"].get<double>());
  std::printf("SchedulingThroughput (1 s samples): Average %.0f, Perc50 %.0f, Perc90 %.0f, Perc95 %.0f, Perc99 %.0f "
              "pods/s (upstream floor %.0f)\n",
              t["Average"].get<double>(), t["Perc50"].get<double>(), t["Perc90"].get<double>(),
              t["Perc95"].get<double>(), t["Perc99"].get<double>(), r["upstream_threshold"].get<double>());
  std::printf("CPU %.3f s (%.3f s per 1,000 pods), peak RSS %.1f MiB\n", r["cpu_seconds"].get<double>(),
              r["cpu_seconds_per_1000_pods"].get<double>(), r["peak_rss_mib"].get<double>());
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    if (!out) {
      std::cerr << "gantry-bench: cannot write " << json_path << "\n";
      return 1;
    }
    out << r.dump(2) << "\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"gantry-bench: benchmark tooling for Gantry"};
  app.require_subcommand(0, 1);

  gantry::bench::WorkloadOptions workload;
  std::string workload_json;
  bool list_workloads = false;
  app.add_option("--workload", workload.name, "Run a scheduler_perf workload: NAME or NAME/SIZE");
  app.add_flag("--quick", workload.quick, "Use the workload's smallest size (smoke test)");
  app.add_option("--json", workload_json, "Write the workload report (with perf-dash dataItems) here");
  app.add_option("--config", workload.config_path, "KubeSchedulerConfiguration for the workload run");
  app.add_flag(
      "!--no-node-result-reuse", workload.node_result_reuse,
      "Evaluate every node for every pod (no per-node result reuse between pods of one spec)");
  app.add_flag("--list-workloads", list_workloads, "List the workloads and their sizes");

  PerfClusterOptions perf;
  AiClusterOptions ai;
  std::string kind = "perf", out_path, format_name;
  uint64_t seed = 1;
  std::string scheduler_name = "gantry-scheduler";
  int zones = -1;

  CLI::App* gen = app.add_subcommand("generate", "Write a synthetic cluster snapshot");
  gen->add_option("--kind", kind, "perf (scheduler_perf-style) or ai (GPU nodes, DRA, gangs)")
      ->check(CLI::IsMember({"perf", "ai"}));
  gen->add_option("--out,-o", out_path, "Output file (.json = JSON, else YAML; - = stdout)")->required();
  gen->add_option("--format", format_name, "Override the format: json or yaml")->check(CLI::IsMember({"json", "yaml"}));
  gen->add_option("--seed", seed, "Random seed (output is deterministic per seed)");
  gen->add_option("--scheduler-name", scheduler_name, "spec.schedulerName of generated pods");
  gen->add_option("--zones", zones, "Zones (perf default 3, ai default 2)");
  gen->add_option("--nodes", perf.nodes, "perf: nodes");
  gen->add_option("--pods", perf.pods, "perf: pending pods");
  gen->add_option("--bound-pods", perf.bound_pods, "perf: running pods bound round-robin to the nodes");
  gen->add_option("--namespace", perf.pod_namespace, "Namespace of generated pods");
  gen->add_option("--racks-per-zone", ai.racks_per_zone, "ai: racks per zone");
  gen->add_option("--nodes-per-rack", ai.nodes_per_rack, "ai: nodes per rack");
  gen->add_option("--gpus-per-node", ai.gpus_per_node, "ai: GPU devices per node");
  gen->add_option("--nics-per-node", ai.nics_per_node, "ai: NIC devices per node");
  gen->add_option("--gpu-models", ai.gpu_models, "ai: GPU models, one picked per rack");
  gen->add_option("--gangs", ai.gangs, "ai: training gangs (PodGroups)");
  gen->add_option("--gang-size", ai.gang_size, "ai: pods per gang (gang minCount)");
  gen->add_option("--gpus-per-worker", ai.gpus_per_worker, "ai: GPUs claimed by each training pod");
  gen->add_option("--inference-pods", ai.inference_pods, "ai: single-GPU inference pods");

  std::string keep;
  bool json_report = false;
  PerfClusterOptions load;
  load.nodes = 5000;
  load.pods = 150000;
  CLI::App* lt = app.add_subcommand("loadtest", "Measure snapshot loading time and memory (JSON input)");
  lt->add_option("--nodes", load.nodes, "Nodes");
  lt->add_option("--pods", load.pods, "Pending pods");
  lt->add_option("--bound-pods", load.bound_pods, "Bound pods");
  lt->add_option("--keep", keep, "Write the snapshot here and keep it");
  lt->add_flag("--json", json_report, "Print one JSON line instead of text");

  CLI11_PARSE(app, argc, argv);

  if (list_workloads) {
    for (const gantry::bench::WorkloadCase& c : gantry::bench::WorkloadCases()) {
      for (const gantry::bench::WorkloadSize& sz : c.sizes) {
        std::printf("%s/%s\t%d nodes, %d init pods, %d measured pods\n", c.name.c_str(), sz.name.c_str(), sz.nodes,
                    sz.init_pods, sz.measure_pods);
      }
    }
    return 0;
  }
  if (!workload.name.empty()) {
    if (gen->parsed() || lt->parsed()) {
      std::cerr << "gantry-bench: --workload does not combine with a subcommand\n";
      return 2;
    }
    return RunWorkloadCommand(workload, workload_json);
  }
  if (!gen->parsed() && !lt->parsed()) {
    std::cerr << "gantry-bench: give a subcommand (generate, loadtest) or --workload NAME; see --help\n";
    return 2;
  }

  if (gen->parsed()) {
    perf.seed = ai.seed = seed;
    perf.scheduler_name = ai.scheduler_name = scheduler_name;
    if (zones > 0) perf.zones = ai.zones = zones;
    if (gen->count("--namespace") > 0) ai.pod_namespace = perf.pod_namespace;
    return Generate(kind, out_path, format_name, perf, ai);
  }
  return LoadTest(load, keep, json_report);
}
