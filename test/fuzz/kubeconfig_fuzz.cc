// libFuzzer target for kubeconfig parsing (clusters, users, contexts,
// inline *-data fields, exec plugin config). Relative file references
// resolve against a folder that does not exist, so they fail cleanly.
#include <cstddef>
#include <cstdint>

#include "src/client/rest_config.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry::client;
  const std::string_view text = gantry::fuzz::AsText(data, size);
  (void)ParseKubeconfig(text, "/nonexistent-gantry-fuzz");
  (void)ParseKubeconfig(text, "/nonexistent-gantry-fuzz", "other", "https://127.0.0.1:6443");
  (void)Base64Decode(text);
  return 0;
}
