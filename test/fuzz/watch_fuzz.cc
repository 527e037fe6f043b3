// libFuzzer target for the watch-event path of the informers: the input is
// a newline-delimited stream of {"type": ..., "object": ...} events as an
// API server sends them; each event goes to a typed Informer (Pod, Node,
// ResourceSlice, ResourceClaim or PodGroup, picked by the first byte), whose
// store must stay consistent with what its handlers were told. Lines whose
// type is "LIST" hand their object's "items" to the informer as a relist.
//
// The line splitting and the event checks mirror the reflector's contract
// (src/client/reflector.h): a bad line is skipped, never fatal.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "simdjson.h"
#include "spdlog/spdlog.h"
#include "src/api/dra.h"
#include "src/api/node.h"
#include "src/api/pod.h"
#include "src/api/workload.h"
#include "src/client/reflector.h"
#include "test/fuzz/fuzz_util.h"

namespace {

using gantry::api::Decoder;
using gantry::api::JsonValue;
using gantry::client::Informer;

template <typename T>
void RunStream(const char* kind, T (*decode)(Decoder&, JsonValue), std::string_view stream) {
  int64_t live = 0;
  typename Informer<T>::Handlers handlers;
  handlers.add = [&](typename Informer<T>::Ptr p) {
    if (p == nullptr) gantry::fuzz::PropertyFailed("add handler got null");
    ++live;
  };
  handlers.update = [&](typename Informer<T>::Ptr a, typename Informer<T>::Ptr b) {
    if (a == nullptr || b == nullptr) gantry::fuzz::PropertyFailed("update handler got null");
  };
  handlers.del = [&](typename Informer<T>::Ptr p) {
    if (p == nullptr) gantry::fuzz::PropertyFailed("delete handler got null");
    --live;
  };
  Informer<T> informer(kind, decode, handlers);
  simdjson::dom::parser parser;
  size_t start = 0;
  while (start < stream.size()) {
    size_t nl = stream.find('\n', start);
    if (nl == std::string_view::npos) nl = stream.size();
    std::string_view line = stream.substr(start, nl - start);
    start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    simdjson::dom::element ev;
    if (parser.parse(line.data(), line.size(), true).get(ev) != simdjson::SUCCESS) continue;
    std::string_view type;
    simdjson::dom::element obj;
    if (ev["type"].get_string().get(type) != simdjson::SUCCESS) continue;
    if (ev["object"].get(obj) != simdjson::SUCCESS) continue;
    if (type == "LIST") {
      simdjson::dom::array items;
      if (obj["items"].get_array().get(items) != simdjson::SUCCESS) continue;
      informer.BeginList();
      for (simdjson::dom::element item : items) informer.ListItem(item);
      informer.EndList();
    } else if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
      informer.Apply(type, obj);
    }
    if (static_cast<int64_t>(informer.size()) != live) {
      gantry::fuzz::PropertyFailed("informer size differs from add - delete");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry::api;
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  if (size < 1) return 0;
  const std::string_view stream = gantry::fuzz::AsText(data + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      RunStream<Pod>("Pod", static_cast<Pod (*)(Decoder&, JsonValue)>(&DecodePod), stream);
      break;
    case 1:
      RunStream<Node>("Node", static_cast<Node (*)(Decoder&, JsonValue)>(&DecodeNode), stream);
      break;
    case 2:
      RunStream<ResourceSlice>(
          "ResourceSlice",
          static_cast<ResourceSlice (*)(Decoder&, JsonValue)>(&DecodeResourceSlice), stream);
      break;
    case 3:
      RunStream<ResourceClaim>(
          "ResourceClaim",
          static_cast<ResourceClaim (*)(Decoder&, JsonValue)>(&DecodeResourceClaim), stream);
      break;
    default:
      RunStream<PodGroup>("PodGroup",
                          static_cast<PodGroup (*)(Decoder&, JsonValue)>(&DecodePodGroup), stream);
      break;
  }
  return 0;
}
