// gantry-fgd: the FGD paper's GPU trace replay through Gantry's engine.
//
//   gantry-fgd --nodes NODES.csv --pods PODS.csv [--seeds 42-51] --policy NAME
//              [--tune 1.3] [--max-pods N] [--json OUT.json]
//       Runs the protocol of bench/fgd/replay.h once per seed (sequentially)
//       and prints unallocated GPU % at 100% arrived demand (mean ± sd) and
//       the curve; per seed also where the free GPU capacity is at 100%
//       arrived and which pod classes failed before. --json writes every run
//       (curve, failed_before_100, use_at_100: per node CPU, memory and GPU
//       milli used when arrived demand first reached capacity).
//   gantry-fgd plot --out FIG.svg [--title T] [--from 75] [--to 130] RUN.json...
//       Draws unallocated GPU % against arrived demand, one line per file
//       (mean over seeds, with a min-max band), like the paper's Fig. 9(a).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/fgd/plot.h"
#include "bench/fgd/policies.h"
#include "bench/fgd/replay.h"
#include "bench/fgd/trace.h"
#include "gantry/registry.h"
#include "nlohmann/json.hpp"
#include "plugins/registry/registry.h"

namespace {

using gantry::fgd::ReplayResult;

bool ParseSeeds(const std::string& text, std::vector<uint64_t>* out) {
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    size_t dash = part.find('-');
    try {
      if (dash == std::string::npos) {
        out->push_back(std::stoull(part));
      } else {
        uint64_t a = std::stoull(part.substr(0, dash)), b = std::stoull(part.substr(dash + 1));
        if (b < a || b - a > 10000) return false;
        for (uint64_t s = a; s <= b; ++s) out->push_back(s);
      }
    } catch (const std::exception&) {
      return false;
    }
  }
  return !out->empty();
}

std::pair<double, double> MeanSd(const std::vector<double>& v) {
  if (v.empty()) return {NAN, NAN};
  double m = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return {m, v.size() > 1 ? std::sqrt(s / static_cast<double>(v.size() - 1)) : 0.0};
}

nlohmann::json Nullable(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

int Run(const std::string& nodes_path, const std::string& pods_path, const std::string& seeds_text,
        const std::string& policy, const std::string& plugin_args, double tune, int64_t max_pods,
        const std::string& json_path) {
  std::vector<uint64_t> seeds;
  if (!ParseSeeds(seeds_text, &seeds)) {
    std::fprintf(stderr, "gantry-fgd: --seeds \"%s\": expected N, A-B or a comma list\n",
                 seeds_text.c_str());
    return 2;
  }
  auto nodes = gantry::fgd::LoadNodeCsv(nodes_path);
  if (!nodes.ok()) {
    std::fprintf(stderr, "gantry-fgd: %s\n", std::string(nodes.status().message()).c_str());
    return 1;
  }
  auto pods = gantry::fgd::LoadPodCsv(pods_path);
  if (!pods.ok()) {
    std::fprintf(stderr, "gantry-fgd: %s\n", std::string(pods.status().message()).c_str());
    return 1;
  }
  gantry::framework::Registry registry;
  if (absl::Status st = gantry::plugins::RegisterBuiltinPlugins(registry); !st.ok()) {
    std::fprintf(stderr, "gantry-fgd: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  if (absl::Status st = gantry::fgd::RegisterBaselinePlugins(registry); !st.ok()) {
    std::fprintf(stderr, "gantry-fgd: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  std::vector<ReplayResult> runs;
  for (uint64_t seed : seeds) {
    auto cfg = gantry::fgd::PolicyConfig(policy, seed, *pods, plugin_args);
    if (!cfg.ok()) {
      std::fprintf(stderr, "gantry-fgd: %s\n", std::string(cfg.status().message()).c_str());
      return 2;
    }
    gantry::fgd::ReplayOptions opts;
    opts.seed = seed;
    opts.tune_ratio = tune;
    opts.config_yaml = *cfg;
    opts.max_pods = max_pods;
    auto r = gantry::fgd::RunReplay(*nodes, *pods, registry, opts);
    if (!r.ok()) {
      std::fprintf(stderr, "gantry-fgd: seed %llu: %s\n", static_cast<unsigned long long>(seed),
                   std::string(r.status().message()).c_str());
      return 1;
    }
    auto u = r->UnallocatedAt(100);
    std::printf(
        "seed %llu: %lld pods (%lld clones), %lld placed, %lld failed; unallocated at 100%%: %s; "
        "%.1f s wall, %.1f s CPU\n",
        static_cast<unsigned long long>(seed), static_cast<long long>(r->submitted),
        static_cast<long long>(r->plan.clones), static_cast<long long>(r->placed),
        static_cast<long long>(r->failed), u ? std::to_string(*u).c_str() : "n/a", r->wall_seconds,
        r->cpu_seconds);
    for (const std::string& f : r->failure_samples) std::printf("  failed %s\n", f.c_str());
    if (!r->use_at_100.empty()) {
      // Where the unallocated GPUs are when arrived demand reaches capacity:
      // whole idle GPUs and the remainders of shared ones, largest first.
      int64_t whole = 0, partial = 0;
      std::map<int64_t, int64_t> remainders;  // free milli -> total milli
      for (const gantry::fgd::ReplayResult::NodeUse& u : r->use_at_100) {
        for (int64_t used : u.gpu_milli) {
          if (used == 0) {
            whole += 1000;
          } else if (used < 1000) {
            partial += 1000 - used;
            remainders[1000 - used] += 1000 - used;
          }
        }
      }
      std::vector<std::pair<int64_t, int64_t>> top(remainders.begin(), remainders.end());
      std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
      });
      const double cap = static_cast<double>(r->plan.capacity_milli);
      std::printf("  free GPU at 100%% arrived (%% of capacity): idle GPUs %.2f, remainders %.2f (",
                  100.0 * static_cast<double>(whole) / cap,
                  100.0 * static_cast<double>(partial) / cap);
      for (size_t i = 0; i < top.size() && i < 5; ++i) {
        std::printf("%s%lld milli: %.2f", i ? ", " : "", static_cast<long long>(top[i].first),
                    100.0 * static_cast<double>(top[i].second) / cap);
      }
      std::printf(")\n");
    }
    if (!r->failed_before_100.empty()) {
      std::printf("  failed before 100%% arrived (class: pods, GPU %% of capacity):");
      for (const auto& [cls, f] : r->failed_before_100) {
        std::printf(
            " %s: %lld, %.2f", cls.c_str(), static_cast<long long>(f.pods),
            100.0 * static_cast<double>(f.gpu_milli) / static_cast<double>(r->plan.capacity_milli));
      }
      std::printf("\n");
    }
    std::fflush(stdout);
    runs.push_back(std::move(*r));
  }
  std::vector<double> at100;
  for (const ReplayResult& r : runs) {
    if (auto u = r.UnallocatedAt(100)) at100.push_back(*u);
  }
  auto [mean, sd] = MeanSd(at100);
  std::printf("policy %s, %s: unallocated GPU at 100%% arrived = %.2f ± %.2f %% (%zu seeds)\n",
              policy.c_str(), pods_path.c_str(), mean, sd, at100.size());
  std::printf("curve (arrived %%: mean unallocated %%):");
  for (int x = 80; x <= gantry::fgd::kCurveMax; x += 5) {
    std::vector<double> v;
    for (const ReplayResult& r : runs) {
      if (auto u = r.UnallocatedAt(x)) v.push_back(*u);
    }
    if (!v.empty()) std::printf(" %d:%.2f", x, MeanSd(v).first);
  }
  std::printf("\n");
  if (!json_path.empty()) {
    nlohmann::json j;
    j["policy"] = policy;
    if (!plugin_args.empty()) j["plugin_args"] = plugin_args;
    j["nodes"] = nodes_path;
    j["pods"] = pods_path;
    j["tune_ratio"] = tune;
    j["seeds"] = seeds;
    j["unallocated_at_100"] = {{"mean", mean}, {"sd", sd}, {"per_seed", at100}};
    nlohmann::json rs = nlohmann::json::array();
    for (const ReplayResult& r : runs) {
      nlohmann::json curve = nlohmann::json::array();
      for (const auto& c : r.curve)
        curve.push_back(c ? nlohmann::json(100.0 - *c) : nlohmann::json());
      nlohmann::json failed = nlohmann::json::object();
      for (const auto& [cls, f] : r.failed_before_100)
        failed[cls] = {{"pods", f.pods}, {"gpu_milli", f.gpu_milli}};
      nlohmann::json use = nlohmann::json::array();
      for (const ReplayResult::NodeUse& u : r.use_at_100)
        use.push_back({u.cpu_milli, u.memory_mib, u.gpu_milli});
      rs.push_back({{"seed", r.seed},
                    {"capacity_milli", r.plan.capacity_milli},
                    {"target_milli", r.plan.target_milli},
                    {"planned_milli", r.plan.planned_milli},
                    {"clones", r.plan.clones},
                    {"removed", r.plan.removed},
                    {"submitted", r.submitted},
                    {"placed", r.placed},
                    {"failed", r.failed},
                    {"wall_seconds", r.wall_seconds},
                    {"cpu_seconds", r.cpu_seconds},
                    {"unallocated_at_100", Nullable(r.UnallocatedAt(100))},
                    {"unallocated_curve", curve},
                    {"failed_before_100", failed},
                    {"use_at_100", use}});
    }
    j["runs"] = rs;
    std::ofstream out(json_path);
    out << j.dump(1) << "\n";
    if (!out) {
      std::fprintf(stderr, "gantry-fgd: cannot write %s\n", json_path.c_str());
      return 1;
    }
  }
  return 0;
}

int Plot(const std::string& out_path, const std::string& title, int from, int to,
         const std::vector<std::string>& inputs) {
  std::vector<gantry::fgd::PlotSeries> series;
  for (const std::string& path : inputs) {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "gantry-fgd plot: cannot read %s\n", path.c_str());
      return 1;
    }
    nlohmann::json j;
    try {
      in >> j;
      gantry::fgd::PlotSeries s;
      s.label = j.at("policy").get<std::string>();
      for (const auto& run : j.at("runs")) {
        std::vector<std::optional<double>> c;
        for (const auto& v : run.at("unallocated_curve")) {
          c.push_back(v.is_null() ? std::nullopt : std::optional<double>(v.get<double>()));
        }
        s.runs.push_back(std::move(c));
      }
      series.push_back(std::move(s));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gantry-fgd plot: %s: %s\n", path.c_str(), e.what());
      return 1;
    }
  }
  std::ofstream out(out_path);
  out << gantry::fgd::RenderSvg(series, title, from, to);
  if (!out) {
    std::fprintf(stderr, "gantry-fgd plot: cannot write %s\n", out_path.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gantry-fgd: the FGD GPU trace replay (Alibaba openb) through Gantry's engine"};
  std::string nodes, pods, seeds = "42-51", policy, json;
  double tune = 1.3;
  int64_t max_pods = 0;
  app.add_option("--nodes", nodes, "Node list CSV (openb_node_list_gpu_node.csv)");
  app.add_option("--pods", pods, "Pod list CSV (openb_pod_list_*.csv)");
  app.add_option("--seeds", seeds, "Seeds: N, A-B or a comma list (default 42-51)");
  std::string policies;
  for (const std::string& n : gantry::fgd::PolicyNames())
    policies += (policies.empty() ? "" : ", ") + n;
  app.add_option("--policy", policy, "One of: " + policies);
  std::string plugin_args;
  app.add_option("--plugin-args", plugin_args,
                 "JSON merged into GpuFragmentation's args (gpufrag, fgd)");
  app.add_option("--tune", tune,
                 "Inflate the GPU request to this multiple of capacity (default 1.3)");
  app.add_option("--max-pods", max_pods, "Submit only the first N arrivals (smoke runs)");
  app.add_option("--json", json, "Write every run (curve per seed) to this file");

  std::string out_svg, title = "Unallocated GPU vs arrived workload";
  int from = 75, to = 130;
  std::vector<std::string> inputs;
  CLI::App* plot = app.add_subcommand("plot", "Draw an SVG from --json outputs");
  plot->add_option("--out", out_svg, "SVG file")->required();
  plot->add_option("--title", title, "Figure title");
  plot->add_option("--from", from, "First arrived % on the x axis");
  plot->add_option("--to", to, "Last arrived % on the x axis");
  plot->add_option("inputs", inputs, "JSON files written by --json")->required();
  CLI11_PARSE(app, argc, argv);
  if (plot->parsed()) return Plot(out_svg, title, from, to, inputs);
  if (nodes.empty() || pods.empty() || policy.empty()) {
    std::fprintf(stderr, "gantry-fgd: --nodes, --pods and --policy are required\n");
    return 2;
  }
  return Run(nodes, pods, seeds, policy, plugin_args, tune, max_pods, json);
}
