// libFuzzer target for label and field selectors: the input is a JSON object
// {"labelSelector": metav1.LabelSelector, "nodeSelector": v1.NodeSelector
// (matchExpressions and matchFields), "tolerations": [...], "taints": [...],
// "labels": {...}, "name": "..."}; every decoded selector is evaluated
// against the labels, name and taints.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "simdjson.h"
#include "src/api/decode.h"
#include "src/api/selectors.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry::api;
  const std::string_view text = gantry::fuzz::AsText(data, size);
  static simdjson::dom::parser* parser = new simdjson::dom::parser();
  simdjson::dom::element root;
  if (parser->parse(text.data(), text.size(), true).get(root) != simdjson::SUCCESS) return 0;
  Decoder d("SelectorFuzz");
  LabelSelector label_selector;
  NodeSelector node_selector;
  std::vector<Toleration> tolerations;
  std::vector<Taint> taints;
  Labels labels;
  std::string_view name;
  d.ForEachField(root, [&](std::string_view key, JsonValue v) {
    if (key == "labelSelector") {
      label_selector = DecodeLabelSelector(d, v);
    } else if (key == "nodeSelector") {
      node_selector = DecodeNodeSelector(d, v);
    } else if (key == "tolerations") {
      d.ForEachItem(v, [&](size_t, JsonValue t) { tolerations.push_back(DecodeToleration(d, t)); });
    } else if (key == "taints") {
      d.ForEachItem(v, [&](size_t, JsonValue t) { taints.push_back(DecodeTaint(d, t)); });
    } else if (key == "labels") {
      labels = d.SymbolMap(v);
    } else if (key == "name") {
      name = d.String(v);
    }
  });
  if (!d.ok()) {
    (void)d.Finish(root);
    return 0;
  }
  (void)label_selector.Matches(labels);
  for (const Requirement& r : label_selector.requirements) (void)r.Matches(labels);
  (void)node_selector.Matches(labels, name);
  for (const NodeSelectorTerm& t : node_selector.terms) (void)t.Matches(labels, name);
  for (const Taint& taint : taints) (void)TaintTolerated(taint, tolerations);
  return 0;
}
