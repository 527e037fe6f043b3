// libFuzzer target for cluster snapshot files: the first byte picks the
// format (Gantry's .pb snapshot, a JSON stream or List, a YAML stream), the
// rest is the file. Loaded objects are also kept as raw JSON, as the
// snapshot converter does, and each must re-render as YAML.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/api/objects.h"
#include "src/sim/loader.h"
#include "src/sim/snapshot_file.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  if (size < 1) return 0;
  const std::string_view bytes = fuzz::AsText(data + 1, size - 1);
  api::ObjectSet out;
  sim::LoadStats stats;
  std::vector<sim::RawObject> raw;
  absl::Status st;
  switch (data[0] % 3) {
    case 0:
      (void)sim::LooksLikeSnapshotProto(bytes);
      st = sim::LoadClusterProto("fuzz.pb", bytes, &out, &stats, &raw);
      break;
    case 1:
      st = sim::LoadClusterText("fuzz.json", bytes, /*is_json=*/true, &out, &stats, &raw);
      break;
    default:
      st = sim::LoadClusterText("fuzz.yaml", bytes, /*is_json=*/false, &out, &stats, &raw);
      break;
  }
  if (!st.ok()) return 0;
  for (const sim::RawObject& obj : raw) {
    if (!sim::JsonToYaml(obj.json).ok())
      fuzz::PropertyFailed("a loaded object does not render as YAML");
  }
  return 0;
}
