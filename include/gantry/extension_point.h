// The scheduling framework's extension points, one enum for the whole
// scheduler: the configuration names them (KubeSchedulerConfiguration
// `plugins.<field>`), the framework runs them. In configuration order; the
// last four are the workload (PodGroup) points of newer upstream versions.
#ifndef GANTRY_EXTENSION_POINT_H_
#define GANTRY_EXTENSION_POINT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gantry::framework {

enum class ExtensionPoint : uint8_t {
  kPreEnqueue,
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kReserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
  kPlacementGenerate,
  kPlacementFeasible,
  kPlacementScore,
  kPodGroupPostFilter,
};
inline constexpr size_t kNumExtensionPoints = 16;
inline constexpr std::array<ExtensionPoint, kNumExtensionPoints> kAllExtensionPoints = {
    ExtensionPoint::kPreEnqueue,
    ExtensionPoint::kQueueSort,
    ExtensionPoint::kPreFilter,
    ExtensionPoint::kFilter,
    ExtensionPoint::kPostFilter,
    ExtensionPoint::kPreScore,
    ExtensionPoint::kScore,
    ExtensionPoint::kReserve,
    ExtensionPoint::kPermit,
    ExtensionPoint::kPreBind,
    ExtensionPoint::kBind,
    ExtensionPoint::kPostBind,
    ExtensionPoint::kPlacementGenerate,
    ExtensionPoint::kPlacementFeasible,
    ExtensionPoint::kPlacementScore,
    ExtensionPoint::kPodGroupPostFilter,
};

namespace internal {
struct ExtensionPointNames {
  std::string_view field;      // configuration field: "preFilter"
  std::string_view interface;  // upstream interface name: "PreFilterPlugin"
};
inline constexpr std::array<ExtensionPointNames, kNumExtensionPoints> kExtensionPointNames = {{
    {"preEnqueue", "PreEnqueuePlugin"},
    {"queueSort", "QueueSortPlugin"},
    {"preFilter", "PreFilterPlugin"},
    {"filter", "FilterPlugin"},
    {"postFilter", "PostFilterPlugin"},
    {"preScore", "PreScorePlugin"},
    {"score", "ScorePlugin"},
    {"reserve", "ReservePlugin"},
    {"permit", "PermitPlugin"},
    {"preBind", "PreBindPlugin"},
    {"bind", "BindPlugin"},
    {"postBind", "PostBindPlugin"},
    {"placementGenerate", "PlacementGeneratePlugin"},
    {"placementFeasible", "PlacementFeasiblePlugin"},
    {"placementScore", "PlacementScorePlugin"},
    {"podGroupPostFilter", "PodGroupPostFilterPlugin"},
}};
}  // namespace internal

// The configuration's spelling ("preFilter").
constexpr std::string_view ExtensionPointName(ExtensionPoint p) {
  return internal::kExtensionPointNames[static_cast<size_t>(p)].field;
}
// The interface a plugin implements to extend `p` ("PreFilterPlugin").
constexpr std::string_view ExtensionPointInterface(ExtensionPoint p) {
  return internal::kExtensionPointNames[static_cast<size_t>(p)].interface;
}
// The point spelled `field` in a configuration ("multiPoint" is not a point).
constexpr std::optional<ExtensionPoint> ParseExtensionPoint(std::string_view field) {
  for (ExtensionPoint p : kAllExtensionPoints) {
    if (ExtensionPointName(p) == field) return p;
  }
  return std::nullopt;
}

}  // namespace gantry::framework

#endif  // GANTRY_EXTENSION_POINT_H_
