#include "plugins/gpu_fragmentation/gpu_fragmentation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "gantry/util/strings.h"
#include "plugins/helper/helper.h"
#include "src/cel/api_adapter.h"
#include "src/cel/dra_env.h"
#include "src/dra/allocator.h"
#include "src/dra/device_preference.h"

namespace gantry::plugins::gpu_fragmentation {

namespace {
const framework::StateKey kCycleKey{kStateKey};
const framework::StateKey kPreferenceKey{dra::kDevicePreferenceKey};

using framework::Status;

// Score of a node the allocator unexpectedly rejects in Score (normalised to 0).
constexpr int64_t kInfeasible = std::numeric_limits<int64_t>::min() / 4;

// One compiled selector with its memo table in the snapshot's inventory.
struct CompiledSelector {
  std::shared_ptr<const cel::Program> program;  // null: compile error (never matches)
  const state::SelectorMemo* memo = nullptr;
};

struct PreparedShape {
  WeightedShape ws;
  bool class_found = false;
  std::vector<CompiledSelector> selectors;  // class selectors, then the shape's
};

struct CycleData final : framework::StateData {
  std::shared_ptr<const state::DraSnapshot> snapshot;
  std::shared_ptr<const dra::Allocator> allocator;  // null: nothing to allocate
  std::shared_ptr<const ShapeTable> table;
  std::vector<PreparedShape> groups;  // per selector group of `table`
  // Fast path: the pod has one unallocated claim with one ExactCount request
  // and no constraints; Score then replays the allocator's first fit itself.
  bool fast = false;
  PreparedShape request;  // class + request selectors
  int64_t count = 0;
  std::optional<int64_t> requested;  // capacity request, milli-units
  int64_t cpu_milli = 0;
  int64_t memory = 0;  // bytes
  // args.avoid_pinned applies to the pod (its request has no selectors).
  bool avoid_pinned = false;
  // CPU (millicores) the distribution's device shapes ask per milli-unit of
  // device capacity (CpuPodTieBreak::kSurplus).
  double cpu_per_unit = 0;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<CycleData>(*this);
  }
};

cel::DeviceInputBuilder& ThreadBuilder() {
  thread_local cel::DeviceInputBuilder builder;
  return builder;
}

// Selector evaluations this thread ran since its last report (see
// ReportEvaluations).
thread_local int64_t tl_cel_evaluations = 0;

// Adds the thread's selector evaluations to the metrics when it goes out of
// scope: one per PreScore / Score call, whatever path it returns by.
class ReportEvaluations {
 public:
  explicit ReportEvaluations(framework::PluginMetrics& metrics) : metrics_(metrics) {}
  ~ReportEvaluations() {
    if (tl_cel_evaluations != 0) metrics_.CelEvaluations(std::exchange(tl_cel_evaluations, 0));
  }
  ReportEvaluations(const ReportEvaluations&) = delete;
  ReportEvaluations& operator=(const ReportEvaluations&) = delete;

 private:
  framework::PluginMetrics& metrics_;
};

bool SelectorMatches(const state::DraSnapshot& snap, const CompiledSelector& s, int32_t dev) {
  if (s.program == nullptr) return false;
  uint8_t m = s.memo->Get(dev);
  if (m == 1) return true;
  if (m == 2 || m == 3) return false;
  ++tl_cel_evaluations;
  const state::DraDevice& d = snap.inventory->devices[static_cast<size_t>(dev)];
  absl::StatusOr<bool> r =
      cel::EvaluateSelector(*s.program, ThreadBuilder().Build(d.driver.view(), *d.device));
  if (!r.ok()) {
    s.memo->Set(dev, 3);
    return false;
  }
  s.memo->Set(dev, *r ? 1 : 2);
  return *r;
}

PreparedShape Prepare(const state::DraSnapshot& snap, const WeightedShape& ws) {
  PreparedShape p;
  p.ws = ws;
  if (ws.shape.count == 0) return p;
  const api::DeviceClass* cls = snap.FindClass(ws.shape.device_class);
  p.class_found = cls != nullptr;
  if (cls == nullptr) return p;
  auto add = [&](const std::string& expr) {
    CompiledSelector c;
    auto prog = dra::DefaultProgramCache().Get(expr);
    if (prog.ok()) c.program = *prog;
    c.memo = snap.inventory->Memo(expr);
    p.selectors.push_back(c);
  };
  for (const api::DeviceSelector& s : cls->spec.selectors) add(s.cel_expression);
  for (const std::string& s : ws.shape.selectors) add(s);
  return p;
}

bool PreparedMatches(const state::DraSnapshot& snap, const PreparedShape& p, int32_t dev) {
  if (!p.class_found) return false;
  for (const CompiledSelector& s : p.selectors) {
    if (!SelectorMatches(snap, s, dev)) return false;
  }
  return true;
}

// Whether a capacity request spelled `name` addresses the qualified `capacity`.
bool SameCapacity(std::string_view name, std::string_view capacity) {
  auto [d1, id1] = api::SplitQualifiedName(name);
  auto [d2, id2] = api::SplitQualifiedName(capacity);
  return id1 == id2 && (d1.empty() || d1 == d2);
}

std::vector<std::shared_ptr<const api::ResourceClaim>> PodClaims(const api::Pod& pod,
                                                                 state::DraState& dra,
                                                                 bool* missing) {
  std::vector<std::shared_ptr<const api::ResourceClaim>> out;
  *missing = false;
  for (const api::PodResourceClaim& rc : pod.resource_claims) {
    std::string name = rc.resource_claim_name;
    if (name.empty()) {
      for (const api::PodResourceClaimStatus& st : pod.resource_claim_statuses) {
        if (st.name == rc.name) name = st.resource_claim_name;
      }
    }
    if (name.empty()) {
      *missing = true;
      continue;
    }
    auto claim = dra.GetClaim(pod.meta.namespace_.view(), name);
    if (claim == nullptr) {
      *missing = true;
      continue;
    }
    out.push_back(std::move(claim));
  }
  return out;
}

double Demand(const Shape& s) {
  // Devices times capacity per device (milli-units); a whole-device request
  // (capacity 0) counts as 1000 units per device.
  return static_cast<double>(s.count) *
         static_cast<double>(s.capacity > 0 ? s.capacity : 1'000'000);
}

// The fast path's candidates on `node`: positions of the node devices that
// may serve one device of the request, with the amount each would consume
// (the requestPolicy-rounded request), in inventory order — the order in
// which the allocator (src/dra/allocator.h) tries them. False when the node
// has a device the fast path does not model (exclusive, tainted, several
// capacities or counters) or fewer than `count` fit: the caller then asks
// the allocator.
bool FastCandidates(const CycleData& data, const state::DraSnapshot& snap, api::Symbol capacity,
                    const NodeGpus& node, std::vector<std::pair<size_t, int64_t>>* out) {
  out->clear();
  for (size_t i = 0; i < node.devices.size(); ++i) {
    const state::DraDevice& d = snap.inventory->devices[static_cast<size_t>(node.devices[i])];
    if (!d.device->allow_multiple_allocations || !d.taints.empty() ||
        d.device->capacity.size() != 1 || !d.device->consumes_counters.empty()) {
      return false;
    }
    if (!PreparedMatches(snap, data.request, node.devices[i])) continue;
    const api::DeviceCapacity* c = d.device->FindCapacity(capacity);
    std::optional<int64_t> want = dra::RoundCapacity(*c, data.requested);
    if (!want || *want > node.full[i] || *want > node.free[i]) continue;
    out->emplace_back(i, *want);
  }
  return static_cast<int64_t>(out->size()) >= data.count;
}

// Whether node devices i and j are interchangeable for the fragmentation:
// same free and full capacity, and the same selector groups match them.
bool SameDeviceState(const NodeGpus& node, const std::vector<std::vector<bool>>& matches, size_t i,
                     size_t j) {
  if (node.free[i] != node.free[j] || node.full[i] != node.full[j]) return false;
  for (const std::vector<bool>& m : matches) {
    if (m[i] != m[j]) return false;
  }
  return true;
}

// The integer score of ScoreMapping::kSigmoid for a decrease `delta`
// (milli-units): floor(100 * sigmoid(delta / scale)).
int64_t SigmoidLevel(double delta, int64_t scale) {
  const double x = delta / static_cast<double>(scale);
  return static_cast<int64_t>(static_cast<double>(framework::kMaxNodeScore) / (1.0 + std::exp(-x)));
}

// How PickDevices compares candidates under ScoreMapping::kSigmoid: by the
// integer score of the node's decrease from `frag_before`.
struct SigmoidChoice {
  double frag_before = 0;
  int64_t scale = 1'000'000;
};

// Chooses `count` of the candidates and applies them to `after`; returns the
// fragmentation left and fills `picked` (positions in the node). First fit
// takes the first ones; kFragmentation takes, slot by slot, the candidate
// whose use leaves the least fragmentation (ties: the least capacity left
// on that device, then inventory order). With `sigmoid`, candidates are
// compared by the integer score instead, ties going to inventory order.
double PickDevices(const ShapeTable& table, const std::vector<std::vector<bool>>& matches,
                   const std::vector<std::pair<size_t, int64_t>>& cands, int64_t count,
                   DeviceChoice choice, const std::optional<SigmoidChoice>& sigmoid,
                   NodeGpus* after, std::vector<size_t>* picked) {
  picked->clear();
  if (choice == DeviceChoice::kFirstFit) {
    for (int64_t k = 0; k < count; ++k) {
      after->free[cands[static_cast<size_t>(k)].first] -= cands[static_cast<size_t>(k)].second;
      picked->push_back(cands[static_cast<size_t>(k)].first);
    }
    return table.Fragmentation(*after, matches);
  }
  std::vector<bool> used(cands.size(), false);
  std::vector<size_t> tried;  // candidate indexes evaluated in this slot
  double left = table.Fragmentation(*after, matches);
  for (int64_t k = 0; k < count; ++k) {
    size_t best = cands.size();
    double best_frag = 0;
    int64_t best_rest = 0;
    tried.clear();
    for (size_t j = 0; j < cands.size(); ++j) {
      if (used[j]) continue;
      const auto [i, v] = cands[j];
      bool same = false;
      for (size_t t : tried) same = same || SameDeviceState(*after, matches, cands[t].first, i);
      if (same) continue;
      tried.push_back(j);
      after->free[i] -= v;
      const double frag = table.Fragmentation(*after, matches);
      const int64_t rest = after->free[i];
      after->free[i] += v;
      bool better;
      if (best == cands.size()) {
        better = true;
      } else if (sigmoid) {
        better = SigmoidLevel(sigmoid->frag_before - frag, sigmoid->scale) >
                 SigmoidLevel(sigmoid->frag_before - best_frag, sigmoid->scale);
      } else {
        better = frag < best_frag || (frag == best_frag && rest < best_rest);
      }
      if (better) {
        best = j;
        best_frag = frag;
        best_rest = rest;
      }
    }
    used[best] = true;
    after->free[cands[best].first] -= cands[best].second;
    picked->push_back(cands[best].first);
    left = best_frag;
  }
  return left;
}

constexpr std::pair<std::string_view, Weighting> kWeightingNames[] = {
    {"Demand", Weighting::kDemand},
    {"Pods", Weighting::kPods},
};
constexpr std::pair<std::string_view, TieBreak> kTieBreakNames[] = {
    {"None", TieBreak::kNone},
    {"Packing", TieBreak::kPacking},
    {"PackingCpu", TieBreak::kPackingCpu},
    {"PackingStable", TieBreak::kPackingStable},
    {"Stable", TieBreak::kStable},
};
constexpr std::pair<std::string_view, DeviceChoice> kDeviceChoiceNames[] = {
    {"FirstFit", DeviceChoice::kFirstFit},
    {"Fragmentation", DeviceChoice::kFragmentation},
};
constexpr std::pair<std::string_view, Measure> kMeasureNames[] = {
    {"Usable", Measure::kUsable},
    {"Fill", Measure::kFill},
};
constexpr std::pair<std::string_view, CpuPodTieBreak> kCpuPodTieBreakNames[] = {
    {"Same", CpuPodTieBreak::kSame},
    {"Surplus", CpuPodTieBreak::kSurplus},
};
constexpr std::pair<std::string_view, ScoreMapping> kScoreMappingNames[] = {
    {"Linear", ScoreMapping::kLinear},
    {"Sigmoid", ScoreMapping::kSigmoid},
};

// How many copies of a shape (`count` devices of `capacity` each; 0 = a
// whole device) the matching devices of `node` can host by GPU alone, and
// the capacity one copy uses. A device hosts free / capacity slots; a copy
// takes `count` slots (for count > 1 this ignores that the slots must be on
// distinct devices, an upper bound).
struct DeviceCopies {
  int64_t copies = 0;
  double per_copy = 0;
};

DeviceCopies CountCopies(const NodeGpus& node, const std::vector<bool>& match, int32_t count,
                         int64_t capacity) {
  int64_t slots = 0, whole = 0;
  for (size_t i = 0; i < node.free.size(); ++i) {
    if (!match[i]) continue;
    if (capacity > 0) {
      slots += node.free[i] / capacity;
    } else if (node.full[i] > 0 && node.free[i] >= node.full[i]) {
      ++slots;
      whole += node.full[i];
    }
  }
  DeviceCopies out;
  if (count <= 0 || slots < count) return out;
  const double per_slot = capacity > 0 ? static_cast<double>(capacity)
                                       : static_cast<double>(whole) / static_cast<double>(slots);
  out.copies = slots / count;
  out.per_copy = per_slot * count;
  return out;
}

// `copies` bounded by the free CPU and memory (requests of 0 do not bound).
int64_t BoundCopies(int64_t copies, int64_t cpu_free, int64_t cpu, int64_t memory_free,
                    int64_t memory) {
  if (cpu > 0) copies = std::min(copies, std::max<int64_t>(0, cpu_free) / cpu);
  if (memory > 0) copies = std::min(copies, std::max<int64_t>(0, memory_free) / memory);
  return copies;
}

// The name of `value` in `names` ("" when absent).
template <typename E, size_t N>
std::string_view ChoiceName(const std::pair<std::string_view, E> (&names)[N], E value) {
  for (const auto& [name, e] : names) {
    if (e == value) return name;
  }
  return "";
}

// Decodes one of `names` into `out`; anything else fails, listing them.
template <typename E, size_t N>
void DecodeChoice(api::Decoder& d, api::JsonValue v,
                  const std::pair<std::string_view, E> (&names)[N], E* out) {
  std::string_view t = d.String(v);
  for (const auto& [name, e] : names) {
    if (t == name) {
      *out = e;
      return;
    }
  }
  std::string list;
  for (const auto& [name, e] : names)
    list += gantry::StrCat(list.empty() ? "" : ", ", "\"", name, "\"");
  d.Fail(gantry::StrCat("Unsupported value: \"", t, "\": supported values: ", list));
}

// A fixed pseudo-random rank of a node (FNV-1a of its name, the offset basis
// mixed with `seed`; seed 0 is plain FNV-1a), kTieLevelBits wide.
int64_t StableRank(std::string_view name, uint64_t seed) {
  uint64_t h = 1469598103934665603ull;
  if (seed != 0) {
    uint64_t z = seed * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    h ^= z ^ (z >> 31);
  }
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return static_cast<int64_t>((h ^ (h >> 32)) & ((uint64_t{1} << kTieLevelBits) - 1));
}

}  // namespace

std::string Shape::Key() const {
  std::string k = gantry::StrCat(cpu_milli, "/", count, "/", capacity, "/", device_class);
  for (const std::string& s : selectors) k += gantry::StrCat("/", s);
  if (memory > 0) k += gantry::StrCat("/memory=", memory);
  return k;
}

GpuFragmentationArgs GpuFragmentationArgs::Decode(api::Decoder& d, api::JsonValue v) {
  GpuFragmentationArgs a;
  helper::DecodeArgsObject(d, v, kArgsKind, [&](std::string_view key, api::JsonValue value) {
    if (key == "capacity") {
      a.capacity = std::string(d.String(value));
      if (api::SplitQualifiedName(a.capacity).first.empty()) {
        d.Fail(gantry::StrCat("\"", a.capacity, "\" must be a qualified name \"<domain>/<id>\""));
      }
      return true;
    }
    if (key == "weighting") {
      DecodeChoice(d, value, kWeightingNames, &a.weighting);
      return true;
    }
    if (key == "tieBreak") {
      DecodeChoice(d, value, kTieBreakNames, &a.tie_break);
      return true;
    }
    if (key == "deviceChoice") {
      DecodeChoice(d, value, kDeviceChoiceNames, &a.device_choice);
      return true;
    }
    if (key == "measure") {
      DecodeChoice(d, value, kMeasureNames, &a.measure);
      return true;
    }
    if (key == "scoreMapping") {
      DecodeChoice(d, value, kScoreMappingNames, &a.score_mapping);
      return true;
    }
    if (key == "cpuPodTieBreak") {
      DecodeChoice(d, value, kCpuPodTieBreakNames, &a.cpu_pod_tie_break);
      return true;
    }
    if (key == "avoidPinned") {
      a.avoid_pinned = d.Bool(value);
      return true;
    }
    if (key == "sigmoidScale") {
      a.sigmoid_scale = d.Qty(value).MilliValue();
      if (a.sigmoid_scale <= 0) d.Fail("must be positive");
      return true;
    }
    if (key == "tieSeed") {
      a.tie_seed =
          static_cast<uint64_t>(d.IntInRange(value, 0, std::numeric_limits<int64_t>::max()));
      return true;
    }
    if (key == "resolution") {
      a.resolution = d.Qty(value).MilliValue();
      if (a.resolution < 0) d.Fail("must not be negative");
      return true;
    }
    if (key == "memoryFit") {
      a.memory_fit = d.Bool(value);
      return true;
    }
    if (key == "coverage") {
      a.coverage = d.Double(value);
      if (!(a.coverage > 0 && a.coverage <= 1)) d.Fail("must be in (0, 1]");
      return true;
    }
    if (key == "shapes") {
      d.ForEachItem(value, [&](size_t, api::JsonValue item) {
        WeightedShape ws;
        ws.weight = 1;
        d.ForEachField(item, [&](std::string_view k, api::JsonValue f) {
          if (k == "cpuMilli") {
            ws.shape.cpu_milli = d.IntInRange(f, 0, std::numeric_limits<int32_t>::max());
          } else if (k == "count") {
            ws.shape.count = static_cast<int32_t>(d.IntInRange(f, 0, 32));
          } else if (k == "capacity") {
            ws.shape.capacity = d.Qty(f).MilliValue();
            if (ws.shape.capacity < 0) d.Fail("must not be negative");
          } else if (k == "memory") {
            ws.shape.memory = d.Qty(f).Value();
            if (ws.shape.memory < 0) d.Fail("must not be negative");
          } else if (k == "deviceClassName") {
            ws.shape.device_class = std::string(d.String(f));
          } else if (k == "selectors") {
            ws.shape.selectors = d.StringList(f);
          } else if (k == "weight") {
            ws.weight = d.Double(f);
            if (!(ws.weight > 0)) d.Fail("must be positive");
          } else {
            d.Fail(gantry::StrCat("unknown field \"", k, "\""));
          }
        });
        if (d.ok() && ws.shape.count > 0 && ws.shape.device_class.empty()) {
          d.FailAt("deviceClassName", "Required value: a shape with devices needs a device class");
        }
        a.shapes.push_back(std::move(ws));
      });
      return true;
    }
    return false;
  });
  return a;
}

nlohmann::json GpuFragmentationArgs::ToJson() const {
  nlohmann::json shapes_json = nlohmann::json::array();
  for (const WeightedShape& ws : shapes) {
    nlohmann::json s = {
        {"cpuMilli", ws.shape.cpu_milli}, {"count", ws.shape.count}, {"weight", ws.weight}};
    if (ws.shape.memory > 0) s["memory"] = std::to_string(ws.shape.memory);
    if (ws.shape.count > 0) {
      s["deviceClassName"] = ws.shape.device_class;
      if (ws.shape.capacity > 0) {
        s["capacity"] = ws.shape.capacity % 1000 == 0 ? std::to_string(ws.shape.capacity / 1000)
                                                      : gantry::StrCat(ws.shape.capacity, "m");
      }
      if (!ws.shape.selectors.empty()) s["selectors"] = ws.shape.selectors;
    }
    shapes_json.push_back(std::move(s));
  }
  return {{"apiVersion", helper::kArgsApiVersion},
          {"kind", kArgsKind},
          {"capacity", capacity},
          {"weighting", ChoiceName(kWeightingNames, weighting)},
          {"coverage", coverage},
          {"memoryFit", memory_fit},
          {"resolution", resolution % 1000 == 0 ? std::to_string(resolution / 1000)
                                                : gantry::StrCat(resolution, "m")},
          {"tieBreak", ChoiceName(kTieBreakNames, tie_break)},
          {"deviceChoice", ChoiceName(kDeviceChoiceNames, device_choice)},
          {"measure", ChoiceName(kMeasureNames, measure)},
          {"scoreMapping", ChoiceName(kScoreMappingNames, score_mapping)},
          {"cpuPodTieBreak", ChoiceName(kCpuPodTieBreakNames, cpu_pod_tie_break)},
          {"avoidPinned", avoid_pinned},
          {"sigmoidScale", sigmoid_scale % 1000 == 0 ? std::to_string(sigmoid_scale / 1000)
                                                     : gantry::StrCat(sigmoid_scale, "m")},
          {"tieSeed", tie_seed},
          {"shapes", shapes_json}};
}

NodeGpus ReadNodeGpus(const state::DraSnapshot& snap, const framework::NodeInfo& node,
                      api::Symbol capacity) {
  NodeGpus g;
  const api::Node* n = node.node();
  g.cpu_free = node.allocatable().milli_cpu - node.requested().milli_cpu;
  g.memory_free = node.allocatable().memory - node.requested().memory;
  if (n == nullptr || snap.inventory == nullptr) return g;
  const state::DraInventory& inv = *snap.inventory;
  std::vector<int32_t> slices;
  inv.SlicesForNode(*n, &slices);
  for (int32_t si : slices) {
    const state::DraSlice& s = inv.slices[static_cast<size_t>(si)];
    const state::DraPool& pool = inv.pools[static_cast<size_t>(s.pool_index)];
    if (pool.incomplete || pool.invalid) continue;
    for (int32_t dev = s.first_device; dev < s.first_device + s.num_devices; ++dev) {
      if (!inv.DeviceOnNode(dev, *n)) continue;
      const api::Device& d = *inv.devices[static_cast<size_t>(dev)].device;
      const api::DeviceCapacity* c = d.FindCapacity(capacity);
      if (c == nullptr) continue;
      const int64_t full = c->value.MilliValue();
      int64_t free = full;
      if (snap.allocations->InUse(dev) ||
          (!d.allow_multiple_allocations && snap.allocations->Shared(dev))) {
        free = 0;  // held exclusively, or shared though no longer shareable: not for others
      } else if (d.allow_multiple_allocations) {
        free -= snap.allocations->Consumed(dev, capacity);
      }
      g.devices.push_back(dev);
      g.free.push_back(std::max<int64_t>(0, free));
      g.full.push_back(full);
    }
  }
  return g;
}

bool ShapeMatches(const state::DraSnapshot& snap, const Shape& s, int32_t dev) {
  return PreparedMatches(snap, Prepare(snap, WeightedShape{s, 1}), dev);
}

double Fragmentation(const NodeGpus& node, const std::vector<WeightedShape>& shapes,
                     const std::vector<std::vector<bool>>& matches, Measure measure) {
  int64_t total = 0;
  for (int64_t f : node.free) total += f;
  if (total == 0) return 0;
  double out = 0;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k].shape;
    const double w = shapes[k].weight;
    if (measure == Measure::kFill) {
      const DeviceCopies d = CountCopies(node, matches[k], s.count, s.capacity);
      const int64_t copies =
          BoundCopies(d.copies, node.cpu_free, s.cpu_milli, node.memory_free, s.memory);
      out += w * (static_cast<double>(total) - static_cast<double>(copies) * d.per_copy);
      continue;
    }
    if (s.count == 0 || node.cpu_free < s.cpu_milli || node.memory_free < s.memory) {
      out += w * static_cast<double>(total);
      continue;
    }
    int32_t usable = 0;
    int64_t unusable_free = 0;
    for (size_t i = 0; i < node.free.size(); ++i) {
      const int64_t need = s.capacity > 0 ? s.capacity : node.full[i];
      if (matches[k][i] && node.free[i] >= need) {
        ++usable;
      } else {
        unusable_free += node.free[i];
      }
    }
    out += w * static_cast<double>(usable >= s.count ? unusable_free : total);
  }
  return out;
}

ShapeTable::ShapeTable(const std::vector<WeightedShape>& shapes, Measure measure)
    : measure_(measure) {
  absl::flat_hash_map<std::string, size_t> group_index;
  struct Entry {
    int64_t cpu, memory;
    double weight;
    bool operator<(const Entry& o) const {
      return std::tie(cpu, memory, weight) < std::tie(o.cpu, o.memory, o.weight);
    }
  };
  std::vector<std::map<std::pair<int32_t, int64_t>, std::vector<Entry>>> raw;
  for (const WeightedShape& ws : shapes) {
    const Shape& s = ws.shape;
    if (s.count == 0) {
      no_device_weight_ += ws.weight;
      continue;
    }
    Shape key_shape;
    key_shape.count = 1;
    key_shape.device_class = s.device_class;
    key_shape.selectors = s.selectors;
    auto [it, inserted] = group_index.emplace(key_shape.Key(), group_shapes_.size());
    if (inserted) {
      group_shapes_.push_back(key_shape);
      group_weights_.push_back(0);
      raw.emplace_back();
    }
    group_weights_[it->second] += ws.weight;
    raw[it->second][{s.count, s.capacity}].push_back(Entry{s.cpu_milli, s.memory, ws.weight});
  }
  caps_.resize(raw.size());
  for (size_t g = 0; g < raw.size(); ++g) {
    for (auto& [k, list] : raw[g]) {
      std::sort(list.begin(), list.end());
      CapGroup c;
      c.count = k.first;
      c.capacity = k.second;
      c.prefix.push_back(0);
      for (const Entry& e : list) {
        c.cpu.push_back(e.cpu);
        c.memory.push_back(e.memory);
        c.weight.push_back(e.weight);
        c.prefix.push_back(c.prefix.back() + e.weight);
        c.any_memory = c.any_memory || e.memory > 0;
      }
      caps_[g].push_back(std::move(c));
    }
  }
}

double ShapeTable::FillFragmentation(const NodeGpus& node,
                                     const std::vector<std::vector<bool>>& matches,
                                     double t) const {
  double out = no_device_weight_ * t;
  for (size_t g = 0; g < caps_.size(); ++g) {
    for (const CapGroup& c : caps_[g]) {
      const DeviceCopies d = CountCopies(node, matches[g], c.count, c.capacity);
      for (size_t j = 0; j < c.cpu.size(); ++j) {
        const int64_t copies =
            BoundCopies(d.copies, node.cpu_free, c.cpu[j], node.memory_free, c.memory[j]);
        out += c.weight[j] * (t - static_cast<double>(copies) * d.per_copy);
      }
    }
  }
  return out;
}

double ShapeTable::Fragmentation(const NodeGpus& node,
                                 const std::vector<std::vector<bool>>& matches) const {
  int64_t total = 0;
  for (int64_t f : node.free) total += f;
  if (total == 0) return 0;
  const double t = static_cast<double>(total);
  return measure_ == Measure::kFill ? FillFragmentation(node, matches, t)
                                    : UsableFragmentation(node, matches, t);
}

double ShapeTable::UsableFragmentation(const NodeGpus& node,
                                       const std::vector<std::vector<bool>>& matches,
                                       double t) const {
  double out = no_device_weight_ * t;
  for (size_t g = 0; g < caps_.size(); ++g) {
    for (const CapGroup& c : caps_[g]) {
      const double all = c.prefix.back();
      // Shapes whose CPU request fits (cpu <= cpu_free), and memory.
      const size_t fit = static_cast<size_t>(
          std::upper_bound(c.cpu.begin(), c.cpu.end(), node.cpu_free) - c.cpu.begin());
      double w_fit = c.prefix[fit];
      if (c.any_memory) {
        w_fit = 0;
        for (size_t j = 0; j < fit; ++j) {
          if (c.memory[j] <= node.memory_free) w_fit += c.weight[j];
        }
      }
      int32_t usable = 0;
      int64_t unusable_free = 0;
      for (size_t i = 0; i < node.free.size(); ++i) {
        const int64_t need = c.capacity > 0 ? c.capacity : node.full[i];
        if (matches[g][i] && node.free[i] >= need) {
          ++usable;
        } else {
          unusable_free += node.free[i];
        }
      }
      const double frag_fit = usable >= c.count ? static_cast<double>(unusable_free) : t;
      out += w_fit * frag_fit + (all - w_fit) * t;
    }
  }
  return out;
}

std::vector<WeightedShape> TopShapes(const std::vector<WeightedShape>& counts, double coverage) {
  std::vector<std::pair<std::string, const WeightedShape*>> sorted;
  double total = 0;
  for (const WeightedShape& ws : counts) {
    if (ws.weight <= 0) continue;
    sorted.emplace_back(ws.shape.Key(), &ws);
    total += ws.weight;
  }
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second->weight != b.second->weight) return a.second->weight > b.second->weight;
    return a.first < b.first;
  });
  std::vector<WeightedShape> out;
  double kept = 0;
  for (const auto& [key, ws] : sorted) {
    if (kept >= coverage * total * (1 - 1e-12)) break;
    out.push_back(*ws);
    kept += ws->weight;
  }
  for (WeightedShape& ws : out) ws.weight /= kept;
  return out;
}

GpuFragmentation::GpuFragmentation(GpuFragmentationArgs args, framework::FrameworkHandle& handle)
    : args_(std::move(args)), handle_(handle), capacity_(api::Symbol::Intern(args_.capacity)) {}

std::optional<Shape> GpuFragmentation::ShapeOf(const framework::PodInfo& pod) const {
  Shape s;
  s.cpu_milli = pod.requests.milli_cpu;
  if (args_.memory_fit) s.memory = pod.requests.memory;
  if (pod.p().resource_claims.empty()) return s;
  state::DraState* dra = handle_.Dra();
  if (dra == nullptr) return std::nullopt;
  bool missing = false;
  auto claims = PodClaims(pod.p(), *dra, &missing);
  if (missing || claims.size() != 1) return std::nullopt;
  const api::ResourceClaimSpec& spec = claims[0]->spec;
  if (spec.requests.size() != 1 || !spec.requests[0].exactly) return std::nullopt;
  const api::ExactDeviceRequest& ex = *spec.requests[0].exactly;
  if (ex.allocation_mode != api::AllocationMode::kExactCount) return std::nullopt;
  s.count = static_cast<int32_t>(ex.count);
  s.device_class = ex.device_class_name.str();
  for (const api::DeviceSelector& sel : ex.selectors) s.selectors.push_back(sel.cel_expression);
  for (const api::CapacityRequest& c : ex.capacity_requests) {
    if (SameCapacity(c.name.view(), args_.capacity)) s.capacity = c.value.MilliValue();
  }
  return s;
}

std::vector<WeightedShape> GpuFragmentation::Distribution() const {
  if (!args_.shapes.empty()) return TopShapes(args_.shapes, args_.coverage);
  std::vector<WeightedShape> counts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts.reserve(learned_.size());
    for (const auto& [key, ws] : learned_) counts.push_back(ws);
  }
  if (args_.weighting == Weighting::kDemand) {
    for (WeightedShape& ws : counts) ws.weight *= Demand(ws.shape);
  }
  return TopShapes(counts, args_.coverage);
}

Status GpuFragmentation::PreFilter(framework::CycleState&, const framework::PodInfo& pod,
                                   const std::vector<framework::NodeInfo*>&,
                                   framework::PreFilterResult*) {
  if (!args_.shapes.empty()) return Status::Skip();
  std::optional<Shape> s = ShapeOf(pod);
  if (s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (seen_.insert(std::string(pod.uid())).second) {
      WeightedShape& ws = learned_[s->Key()];
      ws.shape = std::move(*s);
      ws.weight += 1;
    }
  }
  return Status::Skip();
}

Status GpuFragmentation::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                  const std::vector<const framework::NodeInfo*>&) {
  ReportEvaluations report(handle_.Metrics());
  state::DraState* dra = handle_.Dra();
  if (dra == nullptr) return Status::Skip();
  std::vector<WeightedShape> shapes = Distribution();
  if (shapes.empty()) return Status::Skip();
  auto data = std::make_unique<CycleData>();
  data->snapshot = dra->Snapshot();
  data->cpu_milli = pod.requests.milli_cpu;
  data->memory = pod.requests.memory;
  bool missing = false;
  std::vector<std::shared_ptr<const api::ResourceClaim>> to_allocate;
  for (auto& c : PodClaims(pod.p(), *dra, &missing)) {
    if (!c->IsAllocated()) to_allocate.push_back(std::move(c));
  }
  if (missing) return Status::Skip();
  if (to_allocate.size() == 1) {
    const api::ResourceClaimSpec& spec = to_allocate[0]->spec;
    if (spec.requests.size() == 1 && spec.constraints.empty() && spec.requests[0].exactly &&
        spec.requests[0].exactly->allocation_mode == api::AllocationMode::kExactCount &&
        !spec.requests[0].exactly->admin_access && spec.requests[0].exactly->tolerations.empty()) {
      const api::ExactDeviceRequest& ex = *spec.requests[0].exactly;
      bool only_ours = true;
      for (const api::CapacityRequest& c : ex.capacity_requests) {
        if (SameCapacity(c.name.view(), args_.capacity)) {
          data->requested = c.value.MilliValue();
        } else {
          only_ours = false;
        }
      }
      Shape rs;
      rs.count = 1;
      rs.device_class = ex.device_class_name.str();
      for (const api::DeviceSelector& sel : ex.selectors)
        rs.selectors.push_back(sel.cel_expression);
      data->request = Prepare(*data->snapshot, WeightedShape{rs, 1});
      data->count = ex.count;
      data->fast = only_ours && data->request.class_found;
    }
  }
  if (!to_allocate.empty()) {
    auto allocator =
        dra::Allocator::Create(dra::AllocatorOptions{}, data->snapshot, std::move(to_allocate));
    if (!allocator.ok()) return Status::Skip();
    data->allocator = std::move(*allocator);
  }
  if (args_.cpu_pod_tie_break == CpuPodTieBreak::kSurplus) {
    double cpu = 0, units = 0;
    for (const WeightedShape& ws : shapes) {
      if (ws.shape.count == 0) continue;
      const double per_device = ws.shape.capacity > 0 ? static_cast<double>(ws.shape.capacity)
                                                      : 1e6;  // a whole 1000-unit device
      cpu += ws.weight * static_cast<double>(ws.shape.cpu_milli);
      units += ws.weight * per_device * ws.shape.count;
    }
    if (units > 0) data->cpu_per_unit = cpu / units;
  }
  auto table = std::make_shared<ShapeTable>(shapes, args_.measure);
  for (const Shape& g : table->groups())
    data->groups.push_back(Prepare(*data->snapshot, WeightedShape{g, 1}));
  data->avoid_pinned = args_.avoid_pinned && data->fast && data->request.ws.shape.selectors.empty();
  data->table = std::move(table);
  if (data->fast && args_.device_choice == DeviceChoice::kFragmentation) {
    state.Write(kPreferenceKey, std::make_unique<dra::DevicePreference>(data->snapshot->inventory));
  }
  state.Write(kCycleKey, std::move(data));
  return Status();
}

Status GpuFragmentation::Score(const framework::CycleState& state, const framework::PodInfo&,
                               const framework::NodeInfo& node, int64_t* score) {
  ReportEvaluations report(handle_.Metrics());
  *score = 0;
  auto read = state.Read<CycleData>(kCycleKey);
  if (!read.ok()) return Status();
  const CycleData& data = **read;
  const state::DraSnapshot& snap = *data.snapshot;
  NodeGpus before = ReadNodeGpus(snap, node, capacity_);
  std::vector<std::vector<bool>> matches;
  matches.reserve(data.groups.size());
  for (const PreparedShape& p : data.groups) {
    std::vector<bool> m(before.devices.size());
    for (size_t i = 0; i < before.devices.size(); ++i)
      m[i] = PreparedMatches(snap, p, before.devices[i]);
    matches.push_back(std::move(m));
  }
  NodeGpus after = before;
  after.cpu_free -= data.cpu_milli;
  after.memory_free -= data.memory;
  const double frag_before = data.table->Fragmentation(before, matches);
  std::optional<double> frag_after;
  if (data.allocator == nullptr) {
    frag_after = data.table->Fragmentation(after, matches);
  } else if (data.fast) {
    thread_local std::vector<std::pair<size_t, int64_t>> cands;
    thread_local std::vector<size_t> picked;
    if (FastCandidates(data, snap, capacity_, before, &cands)) {
      std::optional<SigmoidChoice> sigmoid;
      if (args_.score_mapping == ScoreMapping::kSigmoid)
        sigmoid = SigmoidChoice{frag_before, args_.sigmoid_scale};
      frag_after = PickDevices(*data.table, matches, cands, data.count, args_.device_choice,
                               sigmoid, &after, &picked);
      // Ask for the devices only where they differ from the allocator's own first fit.
      bool first_fit = true;
      for (size_t k = 0; k < picked.size(); ++k)
        first_fit = first_fit && picked[k] == cands[k].first;
      if (!first_fit) {
        if (dra::DevicePreference* pref = state.Get<dra::DevicePreference>(kPreferenceKey)) {
          absl::InlinedVector<int32_t, 4> devices;
          for (size_t i : picked) devices.push_back(before.devices[i]);
          pref->Set(node.name(), devices);
        }
      }
    }
  }
  if (!frag_after && node.node() != nullptr) {
    dra::NodeAllocation out = data.allocator->Allocate(*node.node());
    tl_cel_evaluations += out.cel_evaluations;
    if (!out.ok()) {
      *score = kInfeasible;
      return Status();
    }
    for (const api::AllocationResult& a : out.allocations) {
      for (const api::DeviceRequestAllocationResult& r : a.results) {
        const int32_t dev = snap.inventory->Find(r.driver, r.pool, r.device);
        auto it = std::find(after.devices.begin(), after.devices.end(), dev);
        if (it == after.devices.end()) continue;
        const size_t i = static_cast<size_t>(it - after.devices.begin());
        if (r.share_id.empty()) {
          after.free[i] = 0;
          continue;
        }
        for (const api::CapacityRequest& c : r.consumed_capacity) {
          if (c.name == capacity_ || SameCapacity(c.name.view(), args_.capacity)) {
            after.free[i] = std::max<int64_t>(0, after.free[i] - c.value.MilliValue());
          }
        }
      }
    }
    frag_after = data.table->Fragmentation(after, matches);
  }
  const double delta = frag_before - frag_after.value_or(frag_before);
  // Tie-break bonus: [first level: capacity left][second level], see TieBreak.
  constexpr int64_t kLow = int64_t{1} << kTieLevelBits;
  constexpr int64_t kHigh = int64_t{1} << (kTieBits - kTieLevelBits);
  int64_t first = 0, second = 0;
  const TieBreak tie = args_.tie_break;
  if (tie == TieBreak::kPacking || tie == TieBreak::kPackingCpu ||
      tie == TieBreak::kPackingStable) {
    int64_t left = 0;  // capacity units left on the node after the placement
    for (int64_t f : after.free) left += f / 1000;
    first = kHigh - 1 - std::min<int64_t>(left, kHigh - 1);
  }
  if (tie == TieBreak::kPackingCpu) {
    second = kLow - 1 - std::clamp<int64_t>(after.cpu_free / 1000, 0, kLow - 1);
  } else if (tie == TieBreak::kPackingStable || tie == TieBreak::kStable) {
    second = StableRank(node.name(), args_.tie_seed);
  }
  if (args_.cpu_pod_tie_break == CpuPodTieBreak::kSurplus && data.allocator == nullptr) {
    double gpu_free = 0;
    for (int64_t f : after.free) gpu_free += static_cast<double>(f);
    const double surplus = static_cast<double>(after.cpu_free) - data.cpu_per_unit * gpu_free;
    first = 0;
    second = std::clamp<int64_t>(std::llround(surplus / 1000.0) + kLow / 2, 0, kLow - 1);
  }
  if (data.avoid_pinned) {
    // The weight of the pinned groups (with selectors) that can use a device here.
    double pinned = 0;
    for (size_t g = 0; g < data.groups.size(); ++g) {
      if (data.table->groups()[g].selectors.empty()) continue;
      if (std::find(matches[g].begin(), matches[g].end(), true) != matches[g].end())
        pinned += data.table->group_weight(g);
    }
    first = kHigh - 1 - std::min<int64_t>(kHigh - 1, std::llround(pinned * 10000));
  }
  const int64_t bonus = first * kLow + second;
  // Decreases beyond +-2^32 milli-units (thousands of devices) saturate.
  constexpr double kMaxDelta = 4294967296.0;
  if (args_.score_mapping == ScoreMapping::kSigmoid) {
    *score = SigmoidLevel(delta, args_.sigmoid_scale) * kTieRange + bonus;
    return Status();
  }
  const double steps = args_.resolution > 0 ? delta / static_cast<double>(args_.resolution) : delta;
  *score = std::llround(std::clamp(steps, -kMaxDelta, kMaxDelta)) * kTieRange + bonus;
  return Status();
}

Status GpuFragmentation::NormalizeScore(const framework::CycleState&, const framework::PodInfo&,
                                        std::vector<framework::NodeScore>& scores) {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const framework::NodeScore& s : scores) {
    if (s.score == kInfeasible) continue;
    lo = std::min(lo, s.score);
    hi = std::max(hi, s.score);
  }
  for (framework::NodeScore& s : scores) {
    if (s.score == kInfeasible || hi <= lo) {
      s.score = 0;
      continue;
    }
    // Only the best raw score maps to the maximum, so rounding never makes
    // a worse node tie with the best one.
    if (s.score == hi) {
      s.score = framework::kMaxNodeScore;
      continue;
    }
    const double x = static_cast<double>(s.score - lo) / static_cast<double>(hi - lo);
    s.score =
        std::min<int64_t>(framework::kMaxNodeScore - 1,
                          static_cast<int64_t>(x * static_cast<double>(framework::kMaxNodeScore)));
  }
  return Status();
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder& d, api::JsonValue args,
         framework::FrameworkHandle& handle) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        GpuFragmentationArgs a = GpuFragmentationArgs::Decode(d, args);
        if (!d.ok()) return helper::DecoderStatus(d);
        return std::make_unique<GpuFragmentation>(std::move(a), handle);
      },
      [](api::Decoder& d, api::JsonValue args) -> nlohmann::json {
        return GpuFragmentationArgs::Decode(d, args).ToJson();
      },
      std::string(kArgsKind)});
}

}  // namespace gantry::plugins::gpu_fragmentation
