// The scheduling framework's extension points, one enum for the whole
// scheduler: the configuration names them (KubeSchedulerConfiguration
// `plugins.<field>`), the framework runs them. In configuration order; the
// last four are the workload (PodGroup) points of newer upstream versions.
#ifndef GANTRY_EXTENSION_POINT_H_
#define GANTRY_EXTENSION_POINT_H_

#include <array>
#include <cstddef>
#include <cstdint>
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
// The configuration field of each point, in enum order.
inline constexpr std::array<std::string_view, kNumExtensionPoints> kExtensionPointNames = {
    "preEnqueue",        "queueSort",         "preFilter",      "filter",
    "postFilter",        "preScore",          "score",          "reserve",
    "permit",            "preBind",           "bind",           "postBind",
    "placementGenerate", "placementFeasible", "placementScore", "podGroupPostFilter",
};
}  // namespace internal

// The configuration's spelling ("preFilter").
constexpr std::string_view ExtensionPointName(ExtensionPoint p) {
  return internal::kExtensionPointNames[static_cast<size_t>(p)];
}

}  // namespace gantry::framework

#endif  // GANTRY_EXTENSION_POINT_H_
