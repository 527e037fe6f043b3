// libFuzzer target for the API server's error bodies: the protobuf Status
// reader ("k8s\0" + runtime.Unknown{raw: meta/v1 Status}) and HttpError,
// which also reads JSON Status bodies. The first byte picks the status code
// and the content type.
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/client/http.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry::client;
  if (size < 1) return 0;
  const std::string_view body = gantry::fuzz::AsText(data + 1, size - 1);
  std::string message;
  std::string reason;
  if (DecodeProtobufStatus(body, &message, &reason)) {
    if (message.size() > body.size() || reason.size() > body.size()) {
      gantry::fuzz::PropertyFailed("Status fields longer than the body");
    }
  }
  static constexpr long kCodes[] = {400, 401, 403, 404, 409, 410, 422, 429, 500, 503, 504, 302};
  HttpResponse resp;
  resp.status = kCodes[(data[0] >> 1) % std::size(kCodes)];
  resp.content_type = (data[0] & 1) ? "application/vnd.kubernetes.protobuf" : "application/json";
  resp.body = std::string(body);
  if (HttpError(resp, "fuzz").ok()) gantry::fuzz::PropertyFailed("HttpError of a non-2xx is OK");
  return 0;
}
