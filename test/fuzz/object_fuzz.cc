// libFuzzer target for the object decoders: the first byte picks the kind
// (Pod, Node, Namespace, PriorityClass, PodDisruptionBudget, DeviceClass,
// ResourceSlice, ResourceClaim, ResourceClaimTemplate, DeviceTaintRule,
// Workload, PodGroup (v1beta1 and v1alpha3 shapes), CompositePodGroup,
// Coscheduling PodGroup), the rest is the object's JSON. A decode error must
// render as a message and map back to a source position.
#include <cstddef>
#include <cstdint>

#include "simdjson.h"
#include "src/api/objects.h"
#include "src/api/yaml.h"
#include "test/fuzz/fuzz_util.h"

namespace {
constexpr int kKinds = static_cast<int>(gantry::api::Kind::kCoschedulingPodGroup);
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry::api;
  if (size < 1) return 0;
  const Kind kind = static_cast<Kind>(1 + data[0] % kKinds);
  const std::string_view text = gantry::fuzz::AsText(data + 1, size - 1);
  static simdjson::dom::parser* parser = new simdjson::dom::parser();
  simdjson::dom::element root;
  if (parser->parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root) !=
      simdjson::SUCCESS) {
    return 0;
  }
  Decoder d(KindName(kind));
  ObjectSet out;
  DecodeInto(kind, d, root, &out);
  if (d.ok()) {
    if (out.TotalObjects() != 1) gantry::fuzz::PropertyFailed("a clean decode appends one object");
    return 0;
  }
  if (out.TotalObjects() != 0) gantry::fuzz::PropertyFailed("a failed decode appends nothing");
  if (d.Finish(root).ok()) gantry::fuzz::PropertyFailed("a failed decode finishes with an error");
  std::optional<DecodeError> err = d.TakeError(root);
  if (!err.has_value()) gantry::fuzz::PropertyFailed("a failed decode keeps its error");
  (void)err->ToString();
  (void)ResolveJsonPosition(text, err->path);
  return 0;
}
