#include "plugins/image_locality/image_locality.h"

#include <memory>
#include <optional>

#include "gantry/util/strings.h"

namespace gantry::plugins::image_locality {

namespace {
const framework::StateKey kPreScoreKey{kPreScoreStateKey};

struct PreScoreState final : framework::StateData {
  // Normalised names that were ever interned; absent names cannot be on any node.
  std::vector<api::Symbol> images;
  int64_t num_containers = 0;
  int64_t total_nodes = 0;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

void Fill(const api::Pod& pod, int64_t total_nodes, PreScoreState* s) {
  s->num_containers = static_cast<int64_t>(pod.images.size());
  s->total_nodes = total_nodes;
  for (api::Symbol image : pod.images) {
    std::optional<api::Symbol> sym = api::Symbol::Find(NormalizedImageName(image.view()));
    if (sym) s->images.push_back(*sym);
  }
}

int64_t SumImageScores(const PreScoreState& s, const framework::NodeInfo& node) {
  if (s.total_nodes <= 0) return 0;
  int64_t sum = 0;
  const auto& states = node.image_states();
  if (states.empty()) return 0;
  for (api::Symbol image : s.images) {
    auto it = states.find(image);
    if (it == states.end()) continue;
    double spread = static_cast<double>(it->second.num_nodes) / static_cast<double>(s.total_nodes);
    sum += static_cast<int64_t>(static_cast<double>(it->second.size_bytes) * spread);
  }
  return sum;
}

}  // namespace

std::string NormalizedImageName(std::string_view name) {
  size_t colon = name.rfind(':');
  size_t slash = name.rfind('/');
  // No tag when there is no ':' or the last ':' belongs to a registry port.
  bool untagged = colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash);
  if (untagged) return gantry::StrCat(name, ":latest");
  return std::string(name);
}

int64_t CalculatePriority(int64_t sum_scores, int64_t num_containers) {
  int64_t max_threshold = kMaxContainerThreshold * num_containers;
  if (sum_scores < kMinThreshold) {
    sum_scores = kMinThreshold;
  } else if (sum_scores > max_threshold) {
    sum_scores = max_threshold;
  }
  if (max_threshold <= kMinThreshold) return 0;  // no containers
  return framework::kMaxNodeScore * (sum_scores - kMinThreshold) / (max_threshold - kMinThreshold);
}

framework::Status ImageLocality::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                          const std::vector<const framework::NodeInfo*>&) {
  auto s = std::make_unique<PreScoreState>();
  Fill(pod.p(), static_cast<int64_t>(handle_.Snapshot().NodeInfos().size()), s.get());
  state.Write(kPreScoreKey, std::move(s));
  return framework::Status();
}

framework::Status ImageLocality::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                       const framework::NodeInfo& node, int64_t* score) {
  if (const PreScoreState* s = state.Get<PreScoreState>(kPreScoreKey)) {
    *score = CalculatePriority(SumImageScores(*s, node), s->num_containers);
    return framework::Status();
  }
  PreScoreState local;
  Fill(pod.p(), static_cast<int64_t>(handle_.Snapshot().NodeInfos().size()), &local);
  *score = CalculatePriority(SumImageScores(local, node), local.num_containers);
  return framework::Status();
}

bool ImageLocality::SameNodeResults(const framework::PodInfo& a,
                                    const framework::PodInfo& b) const {
  return a.p().images == b.p().images;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder&, api::JsonValue, framework::FrameworkHandle& handle)
          -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        return std::make_unique<ImageLocality>(handle);
      },
      nullptr, ""});
}

}  // namespace gantry::plugins::image_locality
