// ImageLocality (Score): favours nodes that already have the pod's images,
// scaled by how widely each image is spread over the cluster. Upstream:
// pkg/scheduler/framework/plugins/imagelocality. Default weight 1.
//
// score = 100 * (clamp(sum, 23MiB, 1000MiB * containers) - 23MiB) /
//         (1000MiB * containers - 23MiB), with
// sum   = Σ over the pod's images present on the node of
//         size * (nodes with the image / all nodes).
#ifndef GANTRY_PLUGINS_IMAGE_LOCALITY_IMAGE_LOCALITY_H_
#define GANTRY_PLUGINS_IMAGE_LOCALITY_IMAGE_LOCALITY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gantry/handle.h"
#include "gantry/plugin.h"
#include "gantry/registry.h"

namespace gantry::plugins::image_locality {

inline constexpr std::string_view kName = "ImageLocality";
inline constexpr std::string_view kPreScoreStateKey = "PreScoreImageLocality";
inline constexpr int64_t kMiB = 1024 * 1024;
inline constexpr int64_t kMinThreshold = 23 * kMiB;
inline constexpr int64_t kMaxContainerThreshold = 1000 * kMiB;

class ImageLocality final : public framework::PreScorePlugin,
                            public framework::ScorePlugin,
                            public framework::NodeLocalPlugin {
 public:
  explicit ImageLocality(framework::FrameworkHandle& handle) : handle_(handle) {}
  std::string_view Name() const override { return kName; }
  // Normalises the pod's image names once (adds ":latest" when untagged)
  // and records the snapshot's node count. Not an upstream extension point
  // of this plugin; Score falls back to doing the same work when skipped.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;

  // Score reads the node's images (with their spread, fixed per snapshot) and the pod's images
  // only.
  bool SameNodeResults(const framework::PodInfo& a, const framework::PodInfo& b) const override;

 private:
  framework::FrameworkHandle& handle_;
};

// "nginx" -> "nginx:latest"; names with a tag or digest are unchanged.
std::string NormalizedImageName(std::string_view name);

// Upstream's calculatePriority.
int64_t CalculatePriority(int64_t sum_scores, int64_t num_containers);

absl::Status Register(framework::Registry& registry);

}  // namespace gantry::plugins::image_locality

#endif  // GANTRY_PLUGINS_IMAGE_LOCALITY_IMAGE_LOCALITY_H_
