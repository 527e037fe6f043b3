// Property tests of the structured allocator: random small
// inventories and claims from fixed seeds. Whatever the allocator returns
// must satisfy every selector, constraint (matchAttribute /
// distinctAttribute), shared counter, consumable capacity and taint rule of
// the generated model and never hand an exclusive device to two requests;
// when it reports "no solution", an exhaustive search over the same model
// must agree. Devices allocated or shared by an earlier claim hold their
// shared counters (a shared device once, whatever capacity its shares
// consumed). The checker works on the generator's own model (plain structs),
// not on the decoded API objects, so it does not share code with the
// allocator.
//
// A second property drives DraState through random allocate / release
// cycles (claims written, rewritten, deallocated, deleted; in-flight
// allocations added, replaced, dropped) and checks after every step that
// its snapshot counts exactly the live allocation results: exclusive counts,
// and per shared device its holders and consumed capacity, with no entry for
// a device nobody shares. Deterministic: no clocks, no randomness beyond the
// seeds.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "src/dra/allocator.h"
#include "src/sim/loader.h"
#include "src/state/dra_state.h"

namespace gantry {
namespace {

constexpr int kCounterValue = 4;  // the gpu pool's shared counter "mem"
constexpr int kBandwidth = 4;     // capacity "bw" of multi-allocation devices

struct MDevice {
  std::string driver;  // "gpu.example.com" or "nic.example.com"
  std::string name;
  std::string root;  // example.com/root; "" = attribute missing
  std::string model;  // gpu only: "x" or "y"
  bool tainted = false;  // taint t=v:NoSchedule
  bool multi = false;    // allowMultipleAllocations with capacity bw
  int counter_use = 0;   // consumes mem from the gpu pool's counter set (gpu only)
  bool allocated = false;  // exclusively, by an earlier claim
  // Multi-allocation devices: shared by the earlier claim, which consumed
  // `shared_bw` of bw (0: a share that consumes nothing); -1: not shared.
  int shared_bw = -1;
  bool held() const { return allocated || shared_bw >= 0; }
};

struct MAlt {
  std::string sub;  // subrequest name ("" for exactly)
  std::string cls;  // "gpu", "nic" or "any"
  bool model_x = false;  // selector: model == "x"
  int count = 1;
  int bw = 0;  // capacity request (0: none)
  bool tolerate = false;
};

struct MReq {
  std::string name;
  bool first_available = false;
  std::vector<MAlt> alts;
};

struct MConstraint {
  bool match = true;  // matchAttribute, else distinctAttribute
  std::vector<std::string> requests;  // empty: all
};

struct MClaim {
  std::string name;
  std::vector<MReq> reqs;
  std::vector<MConstraint> constraints;
};

struct Model {
  std::vector<MDevice> devices;
  std::vector<MClaim> claims;
};

// One device picked for one request of one claim.
struct MPick {
  int claim, req, alt, device;
};

bool Selected(const MDevice& d, const MAlt& a) {
  if (a.cls == "gpu" && d.driver != "gpu.example.com") return false;
  if (a.cls == "nic" && d.driver != "nic.example.com") return false;
  if (a.model_x && d.model != "x") return false;
  if (a.bw > 0 && !d.multi) return false;  // capacity must exist on the device
  if (a.bw > kBandwidth) return false;
  if (d.tainted && !a.tolerate) return false;
  return true;
}

// Full validity of a complete assignment; "" when valid, else why not.
std::string Check(const Model& m, const std::vector<MPick>& picks) {
  std::map<int, int> exclusive;  // device -> picks
  std::map<int, int> bw;         // device -> consumed bandwidth
  int counter = 0, picked_counter = 0;
  // A held device holds its counters, a shared one once however many
  // allocations share it; picking a shared device that nobody holds yet
  // takes them.
  std::set<int> holding;
  for (size_t i = 0; i < m.devices.size(); ++i) {
    if (!m.devices[i].held()) continue;
    counter += m.devices[i].counter_use;
    holding.insert(static_cast<int>(i));
    if (m.devices[i].shared_bw >= 0) bw[static_cast<int>(i)] = m.devices[i].shared_bw;
  }
  std::map<std::pair<int, int>, std::set<int>> alt_of;  // (claim, req) -> alts used
  std::map<std::pair<int, int>, int> count_of;
  for (const MPick& p : picks) {
    const MDevice& d = m.devices[static_cast<size_t>(p.device)];
    const MAlt& a = m.claims[p.claim].reqs[p.req].alts[p.alt];
    if (!Selected(d, a)) return StrCat("device ", d.name, " does not match request ", m.claims[p.claim].reqs[p.req].name);
    if (d.multi) {
      bw[p.device] += a.bw > 0 ? a.bw : kBandwidth;
      if (holding.insert(p.device).second) {
        counter += d.counter_use;
        picked_counter += d.counter_use;
      }
    } else {
      if (d.allocated) return StrCat("device ", d.name, " is already allocated");
      if (++exclusive[p.device] > 1) return StrCat("device ", d.name, " handed out twice");
      counter += d.counter_use;
      picked_counter += d.counter_use;
    }
    alt_of[{p.claim, p.req}].insert(p.alt);
    ++count_of[{p.claim, p.req}];
  }
  for (const auto& [dev, used] : bw) {
    if (used > kBandwidth) return StrCat("device ", m.devices[dev].name, " bandwidth ", used, " > ", kBandwidth);
  }
  // Counters are checked when a consuming device is added (an already
  // overcommitted set only blocks new consumers).
  if (picked_counter > 0 && counter > kCounterValue) return StrCat("counter mem ", counter, " > ", kCounterValue);
  for (size_t c = 0; c < m.claims.size(); ++c) {
    const MClaim& claim = m.claims[c];
    for (size_t r = 0; r < claim.reqs.size(); ++r) {
      auto key = std::make_pair(static_cast<int>(c), static_cast<int>(r));
      if (alt_of[key].size() != 1) return StrCat(claim.name, "/", claim.reqs[r].name, ": not one alternative");
      const MAlt& a = claim.reqs[r].alts[*alt_of[key].begin()];
      if (count_of[key] != a.count) return StrCat(claim.name, "/", claim.reqs[r].name, ": wrong count");
    }
    for (const MConstraint& k : claim.constraints) {
      std::vector<std::string> values;
      for (const MPick& p : picks) {
        if (p.claim != static_cast<int>(c)) continue;
        const std::string& rn = claim.reqs[p.req].name;
        if (!k.requests.empty() && std::find(k.requests.begin(), k.requests.end(), rn) == k.requests.end()) continue;
        const MDevice& d = m.devices[static_cast<size_t>(p.device)];
        if (d.root.empty()) return StrCat(claim.name, ": device ", d.name, " lacks the constrained attribute");
        values.push_back(d.root);
      }
      std::set<std::string> distinct(values.begin(), values.end());
      if (k.match && distinct.size() > 1) return StrCat(claim.name, ": matchAttribute violated");
      if (!k.match && distinct.size() != values.size()) return StrCat(claim.name, ": distinctAttribute violated");
    }
  }
  return "";
}

// Exhaustive search: claims -> requests -> alternative -> combination of
// devices. Prunes only on per-device properties and exclusivity (both
// order-independent), then checks the whole assignment.
bool BruteForce(const Model& m, size_t c, size_t r, std::vector<MPick>* picks) {
  if (c == m.claims.size()) return Check(m, *picks).empty();
  const MClaim& claim = m.claims[c];
  if (r == claim.reqs.size()) return BruteForce(m, c + 1, 0, picks);
  const MReq& req = claim.reqs[r];
  for (size_t a = 0; a < req.alts.size(); ++a) {
    const MAlt& alt = req.alts[a];
    std::vector<int> options;
    for (size_t d = 0; d < m.devices.size(); ++d) {
      const MDevice& dev = m.devices[d];
      if (!Selected(dev, alt) || (!dev.multi && dev.allocated)) continue;
      bool taken = false;
      for (const MPick& p : *picks) taken |= p.device == static_cast<int>(d) && !dev.multi;
      if (!taken) options.push_back(static_cast<int>(d));
    }
    // Combinations of alt.count options.
    std::vector<int> idx;
    std::function<bool(size_t)> rec = [&](size_t from) -> bool {
      if (static_cast<int>(idx.size()) == alt.count) {
        for (int i : idx) {
          picks->push_back({static_cast<int>(c), static_cast<int>(r), static_cast<int>(a), options[i]});
        }
        bool ok = BruteForce(m, c, r + 1, picks);
        picks->resize(picks->size() - idx.size());
        return ok;
      }
      for (size_t i = from; i < options.size(); ++i) {
        idx.push_back(static_cast<int>(i));
        if (rec(i + 1)) return true;
        idx.pop_back();
      }
      return false;
    };
    if (rec(0)) return true;
  }
  return false;
}

Model Generate(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  auto chance = [&](int percent) { return pick(100) < percent; };
  // Counters and earlier shares of multi-allocation devices come from a
  // second stream, so that the rest of each seed's model stays as it was.
  std::mt19937 shared_rng(seed ^ 0x5ca1ab1eu);
  auto shared_chance = [&](int percent) { return static_cast<int>(shared_rng() % 100u) < percent; };
  Model m;
  const int gpus = 2 + pick(4), nics = pick(3);
  const char* roots[] = {"a", "b", "c"};
  for (int i = 0; i < gpus + nics; ++i) {
    MDevice d;
    const bool gpu = i < gpus;
    d.driver = gpu ? "gpu.example.com" : "nic.example.com";
    d.name = StrCat(gpu ? "gpu-" : "nic-", i);
    d.root = chance(85) ? roots[pick(3)] : "";
    d.model = gpu ? (chance(60) ? "x" : "y") : "";
    d.tainted = chance(15);
    d.multi = chance(15);
    d.counter_use = gpu && !d.multi && chance(40) ? 1 + pick(3) : 0;
    d.allocated = !d.multi && chance(20);
    if (d.multi) {
      if (gpu && shared_chance(50)) d.counter_use = 1 + static_cast<int>(shared_rng() % 4u);
      if (shared_chance(35)) d.shared_bw = static_cast<int>(shared_rng() % 3u);
    }
    m.devices.push_back(d);
  }
  const int nclaims = 1 + pick(2);
  int slots = 0;
  for (int c = 0; c < nclaims; ++c) {
    MClaim claim;
    claim.name = StrCat("claim-", c);
    const int nreqs = 1 + pick(2);
    for (int r = 0; r < nreqs; ++r) {
      MReq req;
      req.name = StrCat("req-", r);
      req.first_available = chance(25);
      const int nalts = req.first_available ? 2 : 1;
      for (int a = 0; a < nalts; ++a) {
        MAlt alt;
        alt.sub = req.first_available ? StrCat("sub-", a) : "";
        const char* classes[] = {"gpu", "nic", "any"};
        alt.cls = classes[pick(3)];
        alt.model_x = alt.cls == "gpu" && chance(30);
        alt.count = 1 + pick(slots >= 3 ? 1 : 2);
        alt.bw = chance(15) ? 1 + pick(3) : 0;
        alt.tolerate = chance(30);
        req.alts.push_back(alt);
      }
      slots += req.alts[0].count;
      claim.reqs.push_back(req);
    }
    if (chance(50)) {
      MConstraint k;
      k.match = chance(60);
      if (claim.reqs.size() > 1 && chance(50)) k.requests.push_back(claim.reqs[static_cast<size_t>(pick(2))].name);
      claim.constraints.push_back(k);
    }
    m.claims.push_back(claim);
  }
  return m;
}

std::string Yaml(const Model& m) {
  std::string y =
      "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
      "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: nic}\n"
      "spec: {selectors: [{cel: {expression: 'device.driver == \"nic.example.com\"'}}]}\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: any}\nspec: {}\n---\n";
  y += StrCat(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: gpu-counters}\nspec:\n"
      "  driver: gpu.example.com\n  pool: {name: gpu-pool, generation: 1, resourceSliceCount: 2}\n"
      "  nodeName: node-1\n  sharedCounters: [{name: cs, counters: {mem: {value: '",
      kCounterValue, "'}}}]\n---\n");
  for (const char* driver : {"gpu.example.com", "nic.example.com"}) {
    const bool gpu = std::string(driver) == "gpu.example.com";
    std::string devs;
    for (const MDevice& d : m.devices) {
      if (d.driver != driver) continue;
      devs += StrCat("  - name: ", d.name, "\n    attributes: {");
      std::string attrs;
      if (!d.root.empty()) attrs += StrCat("example.com/root: {string: ", d.root, "}");
      if (!d.model.empty()) attrs += StrCat(attrs.empty() ? "" : ", ", "model: {string: ", d.model, "}");
      devs += attrs + "}\n";
      if (d.multi) devs += StrCat("    allowMultipleAllocations: true\n    capacity: {bw: {value: '", kBandwidth, "'}}\n");
      if (d.tainted) devs += "    taints: [{key: t, value: v, effect: NoSchedule}]\n";
      if (d.counter_use > 0) {
        devs += StrCat("    consumesCounters: [{counterSet: cs, counters: {mem: {value: '", d.counter_use, "'}}}]\n");
      }
    }
    if (devs.empty() && !gpu) continue;
    y += StrCat("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ", gpu ? "gpu" : "nic",
                "-devices}\nspec:\n  driver: ", driver, "\n  pool: {name: ", gpu ? "gpu-pool" : "nic-pool",
                ", generation: 1, resourceSliceCount: ", gpu ? 2 : 1, "}\n  nodeName: node-1\n  devices:\n",
                devs.empty() ? "  []\n" : devs, "---\n");
  }
  // The earlier claim that holds the allocated and shared devices. A share
  // of bw 0 is written either with consumedCapacity bw: 0 or without any.
  std::string results;
  for (const MDevice& d : m.devices) {
    if (!d.held()) continue;
    std::string share;
    if (d.shared_bw > 0 || (d.shared_bw == 0 && d.name.back() % 2 == 0)) {
      share = StrCat(", shareID: s-", d.name, ", consumedCapacity: {bw: '", d.shared_bw, "'}");
    } else if (d.shared_bw == 0) {
      share = StrCat(", shareID: s-", d.name);
    }
    results += StrCat("      - {request: r, driver: ", d.driver,
                      ", pool: ", d.driver == "gpu.example.com" ? "gpu-pool" : "nic-pool",
                      ", device: ", d.name, share, "}\n");
  }
  if (!results.empty()) {
    y += StrCat(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: earlier, namespace: default, uid: "
        "earlier}\nspec: {devices: {requests: [{name: r, exactly: {deviceClassName: any}}]}}\n"
        "status:\n  allocation:\n    devices:\n      results:\n",
        results, "---\n");
  }
  auto alt_yaml = [](const MAlt& a) {
    std::string s = StrCat("deviceClassName: ", a.cls, ", count: ", a.count);
    if (a.model_x) s += ", selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"].model == \"x\"'}}]";
    if (a.bw > 0) s += StrCat(", capacity: {requests: {bw: '", a.bw, "'}}");
    if (a.tolerate) s += ", tolerations: [{key: t, operator: Exists}]";
    return s;
  };
  for (const MClaim& c : m.claims) {
    y += StrCat("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: ", c.name,
                ", namespace: default, uid: uid-", c.name, "}\nspec:\n  devices:\n    requests:\n");
    for (const MReq& r : c.reqs) {
      if (!r.first_available) {
        y += StrCat("    - name: ", r.name, "\n      exactly: {", alt_yaml(r.alts[0]), "}\n");
        continue;
      }
      y += StrCat("    - name: ", r.name, "\n      firstAvailable:\n");
      for (const MAlt& a : r.alts) y += StrCat("      - {name: ", a.sub, ", ", alt_yaml(a), "}\n");
    }
    if (!c.constraints.empty()) {
      y += "    constraints:\n";
      for (const MConstraint& k : c.constraints) {
        std::string reqs;
        for (const std::string& r : k.requests) reqs += (reqs.empty() ? "" : ", ") + r;
        y += StrCat("    - {", k.match ? "matchAttribute" : "distinctAttribute", ": example.com/root, requests: [",
                    reqs, "]}\n");
      }
    }
    y += "---\n";
  }
  return y;
}

// Maps the allocator's results back onto the model.
std::vector<MPick> ToPicks(const Model& m, const std::vector<api::AllocationResult>& out, std::string* error) {
  std::vector<MPick> picks;
  for (size_t c = 0; c < out.size(); ++c) {
    for (const api::DeviceRequestAllocationResult& r : out[c].results) {
      MPick p{static_cast<int>(c), -1, 0, -1};
      for (size_t d = 0; d < m.devices.size(); ++d) {
        if (m.devices[d].name == r.device.view() && m.devices[d].driver == r.driver.view()) p.device = static_cast<int>(d);
      }
      const std::string_view request = r.request.view();
      const size_t slash = request.find('/');
      const std::string_view parent = request.substr(0, slash);
      const std::string_view sub = slash == std::string_view::npos ? "" : request.substr(slash + 1);
      const MClaim& claim = m.claims[c];
      for (size_t i = 0; i < claim.reqs.size(); ++i) {
        if (claim.reqs[i].name != parent) continue;
        p.req = static_cast<int>(i);
        for (size_t a = 0; a < claim.reqs[i].alts.size(); ++a) {
          if (claim.reqs[i].alts[a].sub == sub) p.alt = static_cast<int>(a);
        }
      }
      if (p.device < 0 || p.req < 0) {
        *error = StrCat("unknown result ", r.request.view(), " -> ", r.device.view());
        return {};
      }
      const MDevice& d = m.devices[static_cast<size_t>(p.device)];
      if (d.multi != !r.share_id.empty()) *error = StrCat("device ", d.name, ": shareID set iff multi-allocation");
      picks.push_back(p);
    }
  }
  return picks;
}

struct SeedRange {
  uint32_t first;
  uint32_t count;
};

class AllocatorProperty : public ::testing::TestWithParam<SeedRange> {};

TEST_P(AllocatorProperty, ResultsAreValidAndNoSolutionIsConfirmedByBruteForce) {
  int solved = 0, unsolved = 0;
  for (uint32_t seed = GetParam().first; seed < GetParam().first + GetParam().count; ++seed) {
    SCOPED_TRACE(StrCat("seed ", seed));
    const Model m = Generate(seed);
    const std::string yaml = Yaml(m);
    api::ObjectSet objects;
    sim::LoadStats stats;
    absl::Status load = sim::LoadClusterText("property", yaml, false, &objects, &stats);
    ASSERT_TRUE(load.ok()) << load << "\n" << yaml;
    state::DraState dra;
    for (const auto& s : objects.resource_slices) dra.UpsertSlice(std::make_shared<const api::ResourceSlice>(s));
    for (const auto& c : objects.device_classes) dra.UpsertClass(std::make_shared<const api::DeviceClass>(c));
    std::vector<std::shared_ptr<const api::ResourceClaim>> claims;
    for (const auto& c : objects.resource_claims) {
      auto p = std::make_shared<const api::ResourceClaim>(c);
      dra.UpsertClaim(p);
      if (!c.IsAllocated()) claims.push_back(p);
    }
    ASSERT_EQ(claims.size(), m.claims.size());
    auto allocator = dra::Allocator::Create({}, dra.Snapshot(), claims);
    ASSERT_TRUE(allocator.ok()) << allocator.status() << "\n" << yaml;
    dra::NodeAllocation out = (*allocator)->Allocate(objects.nodes.at(0));
    std::vector<MPick> none;
    switch (out.result) {
      case dra::NodeAllocation::Result::kSuccess: {
        ++solved;
        std::string error;
        std::vector<MPick> picks = ToPicks(m, out.allocations, &error);
        ASSERT_EQ(error, "") << yaml;
        EXPECT_EQ(Check(m, picks), "") << yaml;
        // Filter's compact solution materializes to the same results.
        auto again = (*allocator)->Materialize("node-1", out.solution);
        ASSERT_EQ(again.size(), out.allocations.size());
        for (size_t i = 0; i < again.size(); ++i) {
          ASSERT_EQ(again[i].results.size(), out.allocations[i].results.size());
          for (size_t j = 0; j < again[i].results.size(); ++j) {
            const auto& x = again[i].results[j];
            const auto& y = out.allocations[i].results[j];
            EXPECT_TRUE(x.request == y.request && x.driver == y.driver && x.pool == y.pool && x.device == y.device &&
                        x.share_id == y.share_id);
          }
        }
        break;
      }
      case dra::NodeAllocation::Result::kUnsatisfiable:
        ++unsolved;
        EXPECT_FALSE(BruteForce(m, 0, 0, &none)) << "allocator found no solution, brute force did: " << out.message
                                                 << "\n" << yaml;
        break;
      default:
        ADD_FAILURE() << "unexpected outcome " << static_cast<int>(out.result) << ": " << out.message << "\n" << yaml;
    }
  }
  // The generator must exercise both outcomes.
  EXPECT_GT(solved, 0);
  EXPECT_GT(unsolved, 0);
}

INSTANTIATE_TEST_SUITE_P(Seeds, AllocatorProperty,
                         ::testing::Values(SeedRange{1, 400}, SeedRange{1000, 400}, SeedRange{77777, 400},
                                           SeedRange{424242, 400}, SeedRange{9000000, 400}));

// ---- DraState through allocate / release cycles -------------------------------------------

// A random allocation over the model's devices: 1-3 results; on a
// multi-allocation device mostly a share (consuming nothing, bw 0 or 1-3),
// sometimes exclusive; now and then admin access (never counted).
api::AllocationResult RandomAllocation(const Model& m, std::mt19937& rng, int* share_ids) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  api::AllocationResult a;
  const int n = 1 + pick(3);
  for (int i = 0; i < n; ++i) {
    const MDevice& d = m.devices[static_cast<size_t>(pick(static_cast<int>(m.devices.size())))];
    api::DeviceRequestAllocationResult& r = a.results.emplace_back();
    r.request = api::Symbol::Intern("r");
    r.driver = api::Symbol::Intern(d.driver);
    r.pool = api::Symbol::Intern(d.driver == "gpu.example.com" ? "gpu-pool" : "nic-pool");
    r.device = api::Symbol::Intern(d.name);
    r.admin_access = pick(10) == 0;
    if (!d.multi || pick(4) == 0) continue;
    r.share_id = StrCat("s", ++*share_ids);
    const int kind = pick(3);
    if (kind == 0) continue;  // consumes nothing, says nothing
    r.consumed_capacity.push_back(api::CapacityRequest{
        api::Symbol::Intern("bw"), api::Quantity::FromMilli(kind == 1 ? 0 : 1000 * (1 + pick(3)),
                                                            api::Quantity::Format::kDecimalSI)});
  }
  return a;
}

TEST(DraStateProperty, SnapshotCountsExactlyTheLiveAllocations) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(StrCat("seed ", seed));
    const Model m = Generate(seed);
    api::ObjectSet objects;
    sim::LoadStats stats;
    absl::Status load = sim::LoadClusterText("property", Yaml(m), false, &objects, &stats);
    ASSERT_TRUE(load.ok()) << load;
    state::DraState dra;
    for (const auto& sl : objects.resource_slices)
      dra.UpsertSlice(std::make_shared<const api::ResourceSlice>(sl));
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    int share_ids = 0;
    // The model: what DraState was told, by claim name (uid "uid-<name>").
    std::map<std::string, std::optional<api::AllocationResult>>
        stored;  // nullopt: stored unallocated
    std::map<std::string, api::AllocationResult> in_flight;
    auto store = [&](const std::string& name, std::optional<api::AllocationResult> a, bool assume) {
      auto c = std::make_shared<api::ResourceClaim>();
      c->meta.name = name;
      c->meta.namespace_ = api::Symbol::Intern("default");
      c->meta.uid = "uid-" + name;
      c->status.allocation = a;
      if (assume) {
        dra.AssumeClaim(c);
      } else {
        dra.UpsertClaim(c);
      }
      // An allocated claim is no longer in flight.
      if (a) in_flight.erase(name);
      stored[name] = std::move(a);
    };
    for (int step = 0; step < 60; ++step) {
      SCOPED_TRACE(StrCat("step ", step));
      const std::string name = StrCat("c", pick(4));
      switch (pick(7)) {
        case 0:  // allocated (a write of ours or another scheduler's)
          store(name, RandomAllocation(m, rng, &share_ids), false);
          break;
        case 1:  // written again unchanged (AssumeClaim, then the watch event)
          if (stored.contains(name)) store(name, stored[name], pick(2) == 0);
          break;
        case 2:  // deallocated
          if (stored.contains(name)) store(name, std::nullopt, false);
          break;
        case 3:
          dra.DeleteClaim("default", name);
          stored.erase(name);
          break;
        case 4: {  // Reserve (replaces an earlier in-flight allocation of the claim)
          api::AllocationResult a = RandomAllocation(m, rng, &share_ids);
          dra.AddInFlight("uid-" + name, a);
          in_flight[name] = std::move(a);
          break;
        }
        case 5:  // Unreserve
          dra.RemoveInFlight("uid-" + name);
          in_flight.erase(name);
          break;
        case 6:  // PreBind wrote the in-flight allocation
          if (in_flight.contains(name)) store(name, in_flight[name], true);
          break;
      }
      if (pick(3) == 0) continue;  // let changes pile up between snapshots
      std::shared_ptr<const state::DraSnapshot> snap = dra.Snapshot();
      const state::DraInventory& inv = *snap->inventory;
      // Expected counts from the model.
      std::vector<int> exclusive(inv.devices.size(), 0), holders(inv.devices.size(), 0);
      std::vector<std::map<std::string, int64_t>> capacity(inv.devices.size());
      auto count = [&](const api::AllocationResult& a) {
        for (const api::DeviceRequestAllocationResult& r : a.results) {
          if (r.admin_access) continue;
          const int32_t i = inv.Find(r.driver, r.pool, r.device);
          ASSERT_GE(i, 0);
          if (r.share_id.empty()) {
            ++exclusive[static_cast<size_t>(i)];
            continue;
          }
          ++holders[static_cast<size_t>(i)];
          for (const api::CapacityRequest& c : r.consumed_capacity)
            capacity[static_cast<size_t>(i)][StrCat(r.driver.view(), "/", c.name.view())] +=
                c.value.MilliValue();
        }
      };
      for (const auto& [n, a] : stored) {
        if (a) count(*a);
      }
      for (const auto& [n, a] : in_flight) count(a);
      for (size_t i = 0; i < inv.devices.size(); ++i) {
        const int32_t d = static_cast<int32_t>(i);
        const std::string dev(inv.devices[i].device->name.view());
        EXPECT_EQ(snap->allocations->in_use[i], exclusive[i]) << dev;
        auto it = snap->allocations->shared.find(d);
        if (holders[i] == 0) {
          EXPECT_TRUE(it == snap->allocations->shared.end())
              << dev << " has a shared entry without holders";
          EXPECT_FALSE(snap->allocations->Held(d) && exclusive[i] == 0) << dev;
          continue;
        }
        ASSERT_TRUE(it != snap->allocations->shared.end())
            << dev << " has " << holders[i] << " holders";
        EXPECT_EQ(it->second.holders, holders[i]) << dev;
        std::map<std::string, int64_t> got, want;
        for (const auto& [cap, v] : it->second.capacity) got[std::string(cap.view())] += v;
        for (const auto& [cap, v] : capacity[i]) {
          if (v != 0) want[cap] = v;
        }
        EXPECT_EQ(got, want) << dev;
        for (const auto& [cap, v] : want)
          EXPECT_EQ(snap->allocations->Consumed(d, api::Symbol::Intern(cap)), v) << dev;
      }
    }
  }
}

}  // namespace
}  // namespace gantry
