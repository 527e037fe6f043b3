#include "bench/fgd/policies.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "bench/fgd/replay.h"
#include "gantry/plugin.h"
#include "gantry/util/strings.h"
#include "nlohmann/json.hpp"
#include "plugins/gpu_fragmentation/gpu_fragmentation.h"
#include "plugins/helper/helper.h"

namespace gantry::fgd {
namespace {

using framework::Status;

constexpr std::string_view kBestFit = "FgdBestFit";
constexpr std::string_view kRandom = "FgdRandom";

// The paper's BestFit: score = 1 - [0.5 (cpuLeft - cpuReq) / 128000 +
// 0.5 (gpuMilliLeft - gpuReq) / 8000], min-max normalised across nodes.
// GPU amounts come from the DRA state (capacity gpu.gantry.dev/milli).
class BestFit final : public framework::PreScorePlugin, public framework::ScorePlugin {
 public:
  explicit BestFit(framework::FrameworkHandle& handle)
      : handle_(handle),
        capacity_(api::Symbol::Intern(gantry::StrCat(kGpuDriver, "/", kGpuCapacity))) {}
  std::string_view Name() const override { return kBestFit; }
  Status PreScore(framework::CycleState&, const framework::PodInfo& pod,
                  const std::vector<const framework::NodeInfo*>&) override {
    if (handle_.Dra() == nullptr) return Status::Skip();
    snapshot_ = handle_.Dra()->Snapshot();
    pod_gpu_ = 0;
    for (const api::PodResourceClaim& rc : pod.p().resource_claims) {
      auto claim = handle_.Dra()->GetClaim(pod.p().meta.namespace_.view(), rc.resource_claim_name);
      if (claim == nullptr) continue;
      for (const api::DeviceRequest& r : claim->spec.requests) {
        if (!r.exactly) continue;
        for (const api::CapacityRequest& c : r.exactly->capacity_requests) {
          pod_gpu_ += r.exactly->count * c.value.MilliValue() / 1000;
        }
      }
    }
    return Status();
  }
  Status Score(const framework::CycleState&, const framework::PodInfo& pod,
               const framework::NodeInfo& node, int64_t* score) override {
    plugins::gpu_fragmentation::NodeGpus g =
        plugins::gpu_fragmentation::ReadNodeGpus(*snapshot_, node, capacity_);
    int64_t gpu_left = 0;
    for (int64_t f : g.free) gpu_left += f / 1000;
    const double cost = 0.5 * static_cast<double>(g.cpu_free - pod.requests.milli_cpu) / 128000.0 +
                        0.5 * static_cast<double>(gpu_left - pod_gpu_) / 8000.0;
    *score = std::llround(-cost * 1e6);
    return Status();
  }
  bool HasNormalizeScore() const override { return true; }
  Status NormalizeScore(const framework::CycleState&, const framework::PodInfo&,
                        std::vector<framework::NodeScore>& scores) override {
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (const auto& s : scores) lo = std::min(lo, s.score), hi = std::max(hi, s.score);
    for (auto& s : scores) {
      s.score = hi > lo ? std::llround(100.0 * static_cast<double>(s.score - lo) /
                                       static_cast<double>(hi - lo))
                        : 0;
    }
    return Status();
  }

 private:
  framework::FrameworkHandle& handle_;
  api::Symbol capacity_;
  std::shared_ptr<const state::DraSnapshot> snapshot_;  // PreScore and Score run in one cycle
  int64_t pod_gpu_ = 0;
};

// Random: PreScore draws one feasible node; it scores 100, the rest 0.
class RandomNode final : public framework::PreScorePlugin, public framework::ScorePlugin {
 public:
  explicit RandomNode(uint64_t seed) : rng_(seed) {}
  std::string_view Name() const override { return kRandom; }
  Status PreScore(framework::CycleState&, const framework::PodInfo&,
                  const std::vector<const framework::NodeInfo*>& nodes) override {
    chosen_.clear();
    if (!nodes.empty()) chosen_ = std::string(nodes[rng_.Below(nodes.size())]->name());
    return Status();
  }
  Status Score(const framework::CycleState&, const framework::PodInfo&,
               const framework::NodeInfo& node, int64_t* score) override {
    *score = node.name() == chosen_ ? framework::kMaxNodeScore : 0;
    return Status();
  }

 private:
  Rng rng_;
  std::string chosen_;
};

nlohmann::json BaseConfig() {
  return {{"apiVersion", "kubescheduler.config.k8s.io/v1"},
          {"kind", "KubeSchedulerConfiguration"},
          {"percentageOfNodesToScore", 100},
          {"profiles",
           {{{"schedulerName", "gantry-scheduler"},
             {"plugins", {{"postFilter", {{"disabled", {{{"name", "*"}}}}}}}}}}}};
}

nlohmann::json WithOnlyScore(std::string_view plugin) {
  nlohmann::json c = BaseConfig();
  c["profiles"][0]["plugins"]["score"] = {{"disabled", {{{"name", "*"}}}},
                                          {"enabled", {{{"name", plugin}, {"weight", 1}}}}};
  c["profiles"][0]["plugins"]["preScore"] = {{"disabled", {{{"name", "*"}}}},
                                             {"enabled", {{{"name", plugin}}}}};
  return c;
}

// Typical pods: shapes (cpu, gpu milli, gpu count, gpu spec; with
// `memory_and_demand` also memory) counted over the untuned list. FGD's
// weights count pods; with `memory_and_demand` a shape weighs pods x GPU
// milli (so CPU-only shapes drop out), as GpuFragmentation's Demand weighting.
nlohmann::json TypicalShapes(const std::vector<TracePod>& pods, bool memory_and_demand) {
  std::map<std::tuple<int64_t, int32_t, int32_t, std::string, int64_t>, int64_t> counts;
  for (const TracePod& p : pods) {
    counts[{p.cpu_milli, p.num_gpu, p.gpu_milli, ModelSelector(p.gpu_spec),
            memory_and_demand ? p.memory_mib : 0}]++;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [k, n] : counts) {
    const auto& [cpu, num, milli, sel, memory_mib] = k;
    const int64_t weight = memory_and_demand ? n * num * milli : n;
    if (weight <= 0) continue;
    nlohmann::json s = {{"cpuMilli", cpu}, {"count", num}, {"weight", weight}};
    if (memory_mib > 0) s["memory"] = gantry::StrCat(memory_mib, "Mi");
    if (num > 0) {
      s["deviceClassName"] = kGpuClass;
      s["capacity"] = std::to_string(milli);
      if (!sel.empty()) s["selectors"] = {sel};
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::vector<std::string> PolicyNames() {
  return {"default",     "gpufrag",   "gpufrag-typical", "fgd",   "fgd-coarse",
          "fgd-surplus", "fgd-aware", "bestfit",         "random"};
}

absl::StatusOr<std::string> PolicyConfig(const std::string& policy, uint64_t seed,
                                         const std::vector<TracePod>& pods,
                                         const std::string& plugin_args) {
  nlohmann::json c;
  if (policy == "default") {
    c = BaseConfig();
  } else if (policy == "gpufrag") {
    c = WithOnlyScore(plugins::gpu_fragmentation::kName);
    // GpuFragmentation learns from PreFilter; it is in the default set only through this profile.
    c["profiles"][0]["plugins"]["preFilter"] = {
        {"enabled", {{{"name", plugins::gpu_fragmentation::kName}}}}};
  } else if (policy == "gpufrag-typical") {
    c = WithOnlyScore(plugins::gpu_fragmentation::kName);
    c["profiles"][0]["pluginConfig"] = {{{"name", plugins::gpu_fragmentation::kName},
                                         {"args", {{"shapes", TypicalShapes(pods, true)}}}}};
  } else if (policy == "fgd" || policy == "fgd-coarse" || policy == "fgd-surplus" ||
             policy == "fgd-aware") {
    c = WithOnlyScore(plugins::gpu_fragmentation::kName);
    c["profiles"][0]["pluginConfig"] = {{{"name", plugins::gpu_fragmentation::kName},
                                         {"args",
                                          {{"weighting", "Pods"},
                                           {"coverage", 0.95},
                                           {"scoreMapping", "Sigmoid"},
                                           {"tieBreak", "Stable"},
                                           {"shapes", TypicalShapes(pods, false)}}}}};
    // Half the sigmoid's slope: one score point is about 80 milli-GPU near
    // a decrease of 0 instead of 40, so more near-equal nodes tie and go to
    // the fixed order.
    if (policy == "fgd-coarse")
      c["profiles"][0]["pluginConfig"][0]["args"]["sigmoidScale"] = "2000";
    // Pods without GPUs to the nodes with the most CPU beyond what their
    // free GPUs' typical pods need, instead of the fixed order.
    if (policy == "fgd-surplus" || policy == "fgd-aware")
      c["profiles"][0]["pluginConfig"][0]["args"]["cpuPodTieBreak"] = "Surplus";
    // And pods without selectors of their own to the nodes whose GPUs the
    // model-pinned typical pods need least.
    if (policy == "fgd-aware") c["profiles"][0]["pluginConfig"][0]["args"]["avoidPinned"] = true;
  } else if (policy == "bestfit") {
    c = WithOnlyScore(kBestFit);
  } else if (policy == "random") {
    c = WithOnlyScore(kRandom);
    c["profiles"][0]["pluginConfig"] = {{{"name", kRandom}, {"args", {{"seed", seed}}}}};
  } else {
    std::string names;
    for (const std::string& n : PolicyNames()) names += (names.empty() ? "" : ", ") + n;
    return absl::InvalidArgumentError(
        gantry::StrCat("unknown policy \"", policy, "\" (known: ", names, ")"));
  }
  const bool gpufrag_policy = policy == "gpufrag" || policy == "gpufrag-typical" ||
                              policy == "fgd" || policy == "fgd-coarse" ||
                              policy == "fgd-surplus" || policy == "fgd-aware";
  if (gpufrag_policy) {
    // One fixed node order per seed for the Stable tie-breaks, as the
    // artifact's per-seed random node-name prefix.
    nlohmann::json& pc = c["profiles"][0]["pluginConfig"];
    if (pc.is_null())
      pc = {{{"name", plugins::gpu_fragmentation::kName}, {"args", nlohmann::json::object()}}};
    pc[0]["args"]["tieSeed"] = seed;
  }
  if (!plugin_args.empty()) {
    if (!gpufrag_policy) {
      return absl::InvalidArgumentError(
          "--plugin-args applies to the gpufrag and fgd policies only");
    }
    nlohmann::json extra = nlohmann::json::parse(plugin_args, nullptr, /*allow_exceptions=*/false);
    if (!extra.is_object())
      return absl::InvalidArgumentError("--plugin-args must be a JSON object");
    c["profiles"][0]["pluginConfig"][0]["args"].update(extra);
  }
  return c.dump();
}

absl::Status RegisterBaselinePlugins(framework::Registry& registry) {
  absl::Status st = registry.Register(framework::PluginRegistration{
      std::string(kBestFit),
      [](api::Decoder&, api::JsonValue,
         framework::FrameworkHandle& handle) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        return std::make_unique<BestFit>(handle);
      },
      nullptr, ""});
  if (!st.ok()) return st;
  return registry.Register(framework::PluginRegistration{
      std::string(kRandom),
      [](api::Decoder& d, api::JsonValue args,
         framework::FrameworkHandle&) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        uint64_t seed = 1;
        plugins::helper::DecodeArgsObject(
            d, args, "FgdRandomArgs", [&](std::string_view key, api::JsonValue v) {
              if (key != "seed") return false;
              seed = static_cast<uint64_t>(d.IntInRange(v, 0, std::numeric_limits<int64_t>::max()));
              return true;
            });
        if (!d.ok()) return plugins::helper::DecoderStatus(d);
        return std::make_unique<RandomNode>(seed);
      },
      [](api::Decoder&, api::JsonValue args) -> nlohmann::json {
        return plugins::helper::ToNlohmann(args);
      },
      "FgdRandomArgs"});
}

}  // namespace gantry::fgd
