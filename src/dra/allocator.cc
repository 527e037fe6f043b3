#include "src/dra/allocator.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "gantry/util/strings.h"
#include "src/cel/api_adapter.h"
#include "src/cel/dra_env.h"

namespace gantry::dra {

cel::ProgramCache& DefaultProgramCache() {
  static cel::ProgramCache* cache = new cel::ProgramCache(cel::DraSelectorEnv(), 1024);
  return *cache;
}

std::optional<int64_t> RoundCapacity(const api::DeviceCapacity& capacity, std::optional<int64_t> requested) {
  const api::CapacityRequestPolicy* policy = capacity.request_policy.get();
  const int64_t full = capacity.value.MilliValue();
  if (!requested) {
    if (policy != nullptr && policy->default_value) return policy->default_value->MilliValue();
    return full;
  }
  int64_t want = *requested;
  if (policy == nullptr) return want;
  if (!policy->valid_values.empty()) {
    for (const api::Quantity& v : policy->valid_values) {
      if (v.MilliValue() >= want) return v.MilliValue();
    }
    return std::nullopt;
  }
  if (policy->valid_range) {
    const api::CapacityRequestPolicyRange& r = *policy->valid_range;
    const int64_t min = r.min.MilliValue();
    if (want < min) want = min;
    if (r.step) {
      const int64_t step = r.step->MilliValue();
      if (step > 0) {
        const int64_t n = (want - min + step - 1) / step;
        want = min + n * step;
      }
    }
    if (r.max && want > r.max->MilliValue()) return std::nullopt;
  }
  return want;
}

namespace {

using Clock = std::chrono::steady_clock;
using state::DraDevice;

constexpr size_t kMaxResults = api::kAllocationResultsMaxSize;

struct Selector {
  absl::StatusOr<std::shared_ptr<const cel::Program>> program;
  const state::SelectorMemo* memo = nullptr;
  std::string label;  // "class X: selector #i" / "claim X: selector #i"
};

// One request alternative: the `exactly` of a request or one subrequest.
struct ReqSpec {
  std::string name;    // "req" or "req/sub"
  api::Symbol parent;  // "req"
  const api::ExactDeviceRequest* spec = nullptr;
  const api::DeviceClass* cls = nullptr;
  std::vector<Selector> selectors;  // class selectors, then request selectors
  int sub_index = -1;
  api::Symbol name_sym;  // `name`, interned once
  int alt_id = 0;        // dense index over all alternatives of all claims
  int ri = 0;            // index of the request in its claim
};

struct ReqInfo {
  api::Symbol name;
  bool first_available = false;
  std::vector<ReqSpec> alts;
};

struct ConstraintInfo {
  const api::DeviceConstraint* c = nullptr;
  bool match = false;
  api::Symbol attribute;
  const state::AttributeTable* table = nullptr;  // the attribute's values per device
  bool Applies(const ReqSpec& r) const {
    if (c->requests.empty()) return true;
    for (api::Symbol s : c->requests) {
      if (s == r.parent || s.view() == r.name) return true;
    }
    return false;
  }
};

struct ClaimInfo {
  std::shared_ptr<const api::ResourceClaim> claim;
  std::vector<ReqInfo> reqs;
  std::vector<ConstraintInfo> constraints;
  std::string label;  // "claim ns/name"
  int req_offset = 0;  // first index of this claim's requests in flat per-request arrays
  int con_offset = 0;  // first index of this claim's constraints in flat per-constraint arrays
};

}  // namespace

struct Allocator::Impl {
  AllocatorOptions options;
  std::vector<ClaimInfo> claims;
  int num_alts = 0;
  int num_reqs = 0;
  int num_constraints = 0;
  std::vector<const ReqSpec*> alts;  // by alt_id
};

Allocator::~Allocator() = default;

absl::StatusOr<std::unique_ptr<Allocator>> Allocator::Create(
    const AllocatorOptions& options, std::shared_ptr<const state::DraSnapshot> snapshot,
    std::vector<std::shared_ptr<const api::ResourceClaim>> claims, cel::ProgramCache* programs) {
  if (programs == nullptr) programs = &DefaultProgramCache();
  std::unique_ptr<Allocator> a(new Allocator());
  a->snapshot_ = std::move(snapshot);
  a->impl_ = std::make_unique<Impl>();
  a->impl_->options = options;
  const Features& f = options.features;
  const state::DraInventory& inv = *a->snapshot_->inventory;
  for (auto& claim : claims) {
    ClaimInfo ci;
    ci.label = gantry::StrCat("claim ", claim->meta.namespace_.view(), "/", claim->meta.name);
    const api::ResourceClaimSpec& spec = claim->spec;
    auto make_spec = [&](const std::string& name, api::Symbol parent, const api::ExactDeviceRequest& ex,
                         int sub) -> absl::StatusOr<ReqSpec> {
      ReqSpec rs;
      rs.name = name;
      rs.parent = parent;
      rs.spec = &ex;
      rs.sub_index = sub;
      if (ex.admin_access && !f.admin_access) {
        return absl::InvalidArgumentError(gantry::StrCat(ci.label, ", request ", name,
                                                         ": admin access is requested, but the feature is disabled"));
      }
      if (!ex.capacity_requests.empty() && !f.consumable_capacity) {
        return absl::InvalidArgumentError(gantry::StrCat(
            ci.label, ", request ", name, ": has capacity requests, but the feature is disabled"));
      }
      if (ex.device_class_name.empty()) {
        return absl::InvalidArgumentError(gantry::StrCat(ci.label, ", request ", name, ": missing device class name"));
      }
      rs.cls = a->snapshot_->FindClass(ex.device_class_name.view());
      if (rs.cls == nullptr) {
        return absl::NotFoundError(gantry::StrCat(ci.label, ", request ", name,
                                                  ": could not retrieve device class ",
                                                  ex.device_class_name.view()));
      }
      for (size_t i = 0; i < rs.cls->spec.selectors.size(); ++i) {
        const std::string& expr = rs.cls->spec.selectors[i].cel_expression;
        if (expr.empty()) {
          return absl::InvalidArgumentError(gantry::StrCat("class ", rs.cls->meta.name, ": selector #", i,
                                                           ": CEL expression empty (unsupported selector type?)"));
        }
        rs.selectors.push_back(Selector{programs->Get(expr), inv.Memo(expr),
                                        gantry::StrCat("class ", rs.cls->meta.name, ": selector #", i)});
      }
      for (size_t i = 0; i < ex.selectors.size(); ++i) {
        const std::string& expr = ex.selectors[i].cel_expression;
        if (expr.empty()) {
          return absl::InvalidArgumentError(gantry::StrCat(ci.label, ": selector #", i,
                                                           ": CEL expression empty (unsupported selector type?)"));
        }
        rs.selectors.push_back(Selector{programs->Get(expr), inv.Memo(expr),
                                        gantry::StrCat(ci.label, ", request ", name, ": selector #", i)});
      }
      // Capacity names spelled both ways.
      for (size_t i = 0; i < ex.capacity_requests.size(); ++i) {
        for (size_t j = i + 1; j < ex.capacity_requests.size(); ++j) {
          auto [di, ii] = api::SplitQualifiedName(ex.capacity_requests[i].name.view());
          auto [dj, ij] = api::SplitQualifiedName(ex.capacity_requests[j].name.view());
          if (ii == ij && (di.empty() != dj.empty())) {
            // Ambiguous only when the qualified one might be the driver's domain; treat as fatal as upstream.
            return absl::InvalidArgumentError(gantry::StrCat(ci.label, ", request ", name, ": capacity ", ii,
                                                             " is requested both qualified and unqualified"));
          }
        }
        if (ex.capacity_requests[i].value.Sign() < 0) {
          return absl::InvalidArgumentError(gantry::StrCat(ci.label, ", request ", name,
                                                           ": negative capacity request"));
        }
      }
      return rs;
    };
    for (const api::DeviceRequest& r : spec.requests) {
      ReqInfo ri;
      ri.name = r.name;
      if (r.exactly) {
        auto rs = make_spec(r.name.str(), r.name, *r.exactly, -1);
        if (!rs.ok()) return rs.status();
        ri.alts.push_back(std::move(*rs));
      } else {
        if (!f.prioritized_list) {
          return absl::InvalidArgumentError(gantry::StrCat(
              ci.label, ", request ", r.name.view(), ": has subrequests, but the DRAPrioritizedList feature is disabled"));
        }
        if (r.first_available.empty()) {
          return absl::InvalidArgumentError(gantry::StrCat(ci.label, ", request ", r.name.view(),
                                                           ": neither exactly nor firstAvailable is set"));
        }
        ri.first_available = true;
        for (size_t i = 0; i < r.first_available.size(); ++i) {
          const api::DeviceSubRequest& sub = r.first_available[i];
          auto rs = make_spec(gantry::StrCat(r.name.view(), "/", sub.name.view()), r.name, sub.spec,
                              static_cast<int>(i));
          if (!rs.ok()) return rs.status();
          ri.alts.push_back(std::move(*rs));
        }
      }
      ci.reqs.push_back(std::move(ri));
    }
    for (const api::DeviceConstraint& c : spec.constraints) {
      ConstraintInfo k;
      k.c = &c;
      if (!c.match_attribute.empty()) {
        k.match = true;
        k.attribute = c.match_attribute;
      } else if (!c.distinct_attribute.empty()) {
        if (!f.consumable_capacity) {
          return absl::InvalidArgumentError(
              gantry::StrCat(ci.label, ": distinctAttribute constraint requires the DRAConsumableCapacity feature"));
        }
        k.attribute = c.distinct_attribute;
      } else {
        return absl::InvalidArgumentError(
            gantry::StrCat(ci.label, ": empty constraint (unsupported constraint type?)"));
      }
      k.table = inv.Attributes(k.attribute);
      ci.constraints.push_back(k);
    }
    // Minimum number of results (ExactCount counts; All counts 1; firstAvailable its minimum).
    int64_t min_total = 0;
    for (const ReqInfo& ri : ci.reqs) {
      int64_t m = INT64_MAX;
      for (const ReqSpec& rs : ri.alts) {
        m = std::min<int64_t>(m, rs.spec->allocation_mode == api::AllocationMode::kAll ? 1 : rs.spec->count);
      }
      if (!ri.first_available) min_total += m;
      else min_total += m;
    }
    if (min_total > static_cast<int64_t>(kMaxResults)) {
      return absl::InvalidArgumentError(gantry::StrCat(ci.label, ": number of requested devices ", min_total,
                                                       " exceeds the claim limit of ", kMaxResults));
    }
    ci.claim = std::move(claim);
    ci.req_offset = a->impl_->num_reqs;
    ci.con_offset = a->impl_->num_constraints;
    a->impl_->num_reqs += static_cast<int>(ci.reqs.size());
    a->impl_->num_constraints += static_cast<int>(ci.constraints.size());
    for (size_t r = 0; r < ci.reqs.size(); ++r) {
      for (ReqSpec& rs : ci.reqs[r].alts) {
        rs.name_sym = api::Symbol::Intern(rs.name);
        rs.alt_id = a->impl_->num_alts++;
        rs.ri = static_cast<int>(r);
      }
    }
    a->impl_->claims.push_back(std::move(ci));
  }
  a->impl_->alts.resize(static_cast<size_t>(a->impl_->num_alts));
  for (const ClaimInfo& ci : a->impl_->claims) {
    for (const ReqInfo& ri : ci.reqs) {
      for (const ReqSpec& rs : ri.alts) a->impl_->alts[static_cast<size_t>(rs.alt_id)] = &rs;
    }
  }
  return a;
}

namespace {

template <typename It>
bool ContainsIn(It begin, It end, const api::AttributeValue& x) {
  return std::find(begin, end, x) != end;
}

// Candidate devices of one request alternative on the node.
struct Candidates {
  bool computed = false;
  std::vector<int32_t> devices;
  int64_t free = 0;
  std::string error;  // fatal (CEL)
  void Reset() {
    computed = false;
    devices.clear();
    free = 0;
    error.clear();
  }
};

// Values pushed by the devices added under one constraint: entry i is
// values[frames[i] .. frames[i+1]) (the last one ends at values.end()).
// matchAttribute pushes the running intersection, distinctAttribute the
// device's own values.
struct ConstraintStack {
  std::vector<api::AttributeValue> values;
  std::vector<uint32_t> frames;
  void Clear() {
    values.clear();
    frames.clear();
  }
};

struct PickRec {
  int32_t device = 0;
  int claim = 0;
  bool admin = false;
  bool shared = false;  // multi-allocation device (never marked in use)
  const ReqSpec* rs = nullptr;
  uint32_t pushed_begin = 0, pushed_end = 0;      // Scratch::pushed
  uint32_t counters_begin = 0, counters_end = 0;  // Scratch::counter_deltas
  uint32_t capacity_begin = 0, capacity_end = 0;  // Scratch::capacity_deltas (= consumedCapacity)
};

// Buffers of one search, kept per thread and reused, so that a Filter call
// on the common path does not allocate until it builds its result.
struct Scratch {
  std::vector<int32_t> node_devices;
  std::vector<int32_t> ordered_devices;  // node_devices with the preferred ones first
  std::vector<int32_t> slices;
  std::vector<Candidates> cands;             // per alternative (ReqSpec::alt_id)
  std::vector<int> chosen_alt;               // per request (ClaimInfo::req_offset + ri)
  std::vector<int> results_count;            // per claim
  std::vector<ConstraintStack> constraints;  // per constraint (ClaimInfo::con_offset + k)
  std::vector<PickRec> picks;
  std::vector<int32_t> pushed;  // flat constraint indexes pushed by picks
  std::vector<std::pair<std::pair<int32_t, int64_t>, int64_t>> counter_deltas;  // ((pool, key), delta)
  std::vector<std::pair<std::pair<int32_t, api::Symbol>, int64_t>> capacity_deltas;  // ((device, name), delta)
  // Counters: (pool, set*1000+counter) -> consumed in this run; base availability per pool.
  absl::flat_hash_map<std::pair<int32_t, int64_t>, int64_t> run_counters;
  absl::flat_hash_map<int32_t, absl::flat_hash_map<int64_t, int64_t>> pool_available;
  absl::flat_hash_map<std::pair<int32_t, api::Symbol>, int64_t> run_capacity;
  std::vector<api::AttributeValue> values2;
  std::vector<std::pair<api::Symbol, int64_t>> consumed;
  cel::DeviceInputBuilder builder;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Per-search state (one per Allocate call); buffers live in a Scratch.
class Search {
 public:
  Search(const Allocator::Impl& impl, const state::DraSnapshot& snap, const api::Node& node,
         Clock::time_point deadline, absl::Span<const int32_t> preferred, Scratch& scratch)
      : impl_(impl),
        f_(impl.options.features),
        inv_(*snap.inventory),
        alloc_(*snap.allocations),
        node_(node),
        deadline_(deadline),
        preferred_(preferred),
        s_(scratch) {}

  NodeAllocation Run(bool materialize);
  int64_t cel_evaluations() const { return cel_evaluations_; }

 private:
  enum class Step : uint8_t { kOk, kFail, kSizeExceeded, kAbort };

  const std::vector<int32_t>& NodeDevices();
  // The node's devices in inventory order, before the preference.
  const std::vector<int32_t>& InventoryOrder();
  const Candidates& CandidatesFor(const ClaimInfo& claim, const ReqSpec& rs);
  std::optional<bool> Selectable(const ReqSpec& rs, int32_t dev, std::string* error);
  Step SearchFrom(int ci, int ri, int slot, size_t start);
  bool TryAdd(int ci, const ReqSpec& rs, int32_t dev);
  void Undo();
  bool ConstraintsAccept(int ci, const ReqSpec& rs, int32_t dev);
  // Whether `dev` is taken for `rs` of claim `ci` by an earlier pick or
  // an allocation in the snapshot: an exclusive device by anything that
  // holds it (admin access only by picks of its own claim), a shared one by
  // an exclusive allocation (admin access: never).
  bool Taken(int ci, const ReqSpec& rs, bool multi, int32_t dev) const;
  bool CountersFit(int32_t dev);
  // Consumed capacities of a multi-allocation device for the request, into
  // s_.consumed; false when the device cannot serve it.
  bool CapacityFor(const ReqSpec& rs, int32_t dev, std::vector<std::pair<api::Symbol, int64_t>>* out) const;

  const Allocator::Impl& impl_;
  const Features& f_;
  const state::DraInventory& inv_;
  const state::DraAllocations& alloc_;
  const api::Node& node_;
  Clock::time_point deadline_;
  absl::Span<const int32_t> preferred_;
  Scratch& s_;
  int64_t steps_ = 0;
  int64_t cel_evaluations_ = 0;
  bool aborted_ = false;
  std::string fatal_;
  bool saw_invalid_pool_ = false;
  const std::vector<int32_t>* node_devices_ = nullptr;  // devices visible from the node, in order
};

const std::vector<int32_t>& Search::NodeDevices() {
  if (node_devices_ != nullptr) return *node_devices_;
  const std::vector<int32_t>& base = InventoryOrder();
  if (preferred_.empty()) {
    node_devices_ = &base;
    return *node_devices_;
  }
  std::vector<int32_t>& out = s_.ordered_devices;
  out.clear();
  for (int32_t dev : preferred_) {
    if (std::find(base.begin(), base.end(), dev) != base.end() &&
        std::find(out.begin(), out.end(), dev) == out.end()) {
      out.push_back(dev);
    }
  }
  const size_t first = out.size();
  for (int32_t dev : base) {
    if (std::find(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(first), dev) ==
        out.begin() + static_cast<std::ptrdiff_t>(first)) {
      out.push_back(dev);
    }
  }
  node_devices_ = &out;
  return *node_devices_;
}

const std::vector<int32_t>& Search::InventoryOrder() {
  if (inv_.other_slices.empty()) {
    // Only nodeName slices: the inventory has the list ready.
    static const std::vector<int32_t> kNone;
    const state::DraNodeEntry* entry = inv_.FindNode(node_.meta.name);
    return entry != nullptr ? entry->devices : kNone;
  }
  s_.node_devices.clear();
  inv_.SlicesForNode(node_, &s_.slices);
  for (int32_t si : s_.slices) {
    const state::DraSlice& sl = inv_.slices[si];
    const bool per_device = sl.slice->spec.node_selection == api::SliceNodeSelection::kPerDevice;
    if (per_device && !f_.partitionable_devices) continue;
    for (int32_t i = sl.first_device; i < sl.first_device + sl.num_devices; ++i) {
      if (per_device && !inv_.DeviceOnNode(i, node_)) continue;
      s_.node_devices.push_back(i);
    }
  }
  return s_.node_devices;
}

std::optional<bool> Search::Selectable(const ReqSpec& rs, int32_t dev, std::string* error) {
  const DraDevice& d = inv_.devices[dev];
  const cel::DeviceInput* input = nullptr;
  for (const Selector& s : rs.selectors) {
    uint8_t m = s.memo->Get(dev);
    if (m == 1) continue;
    if (m == 2) return false;
    if (!s.program.ok()) {
      *error = gantry::StrCat(s.label, ": ", s.program.status().message());
      return std::nullopt;
    }
    if (input == nullptr) input = &s_.builder.Build(d.driver.view(), *d.device);
    ++cel_evaluations_;
    absl::StatusOr<bool> r = cel::EvaluateSelector(**s.program, *input);
    if (!r.ok()) {
      s.memo->Set(dev, 3);
      *error = gantry::StrCat(s.label, " on device ", d.device->name.view(), ": CEL runtime error: ",
                              r.status().message());
      return std::nullopt;
    }
    s.memo->Set(dev, *r ? 1 : 2);
    if (!*r) return false;
  }
  return true;
}

bool Search::CapacityFor(const ReqSpec& rs, int32_t dev, std::vector<std::pair<api::Symbol, int64_t>>* out) const {
  const DraDevice& d = inv_.devices[dev];
  out->clear();
  // Requested capacities must exist on the device.
  for (const api::CapacityRequest& c : rs.spec->capacity_requests) {
    if (d.device->FindCapacity(api::QualifyName(c.name.view(), d.driver)) == nullptr) return false;
  }
  for (const api::DeviceCapacity& cap : d.device->capacity) {
    std::optional<int64_t> want;
    for (const api::CapacityRequest& c : rs.spec->capacity_requests) {
      if (api::QualifyName(c.name.view(), d.driver) == cap.name) want = c.value.MilliValue();
    }
    std::optional<int64_t> r = RoundCapacity(cap, want);
    if (!r) return false;
    if (*r > cap.value.MilliValue()) return false;
    out->emplace_back(cap.name, *r);
  }
  return true;
}

const Candidates& Search::CandidatesFor(const ClaimInfo& claim, const ReqSpec& rs) {
  Candidates& c = s_.cands[static_cast<size_t>(rs.alt_id)];
  if (c.computed) return c;
  c.computed = true;
  const bool all = rs.spec->allocation_mode == api::AllocationMode::kAll;
  const bool has_capacity = !rs.spec->capacity_requests.empty();
  using Inv = state::DraInventory;
  for (int32_t dev : NodeDevices()) {
    const uint8_t flags = inv_.device_flags[static_cast<size_t>(dev)];
    if (flags & (Inv::kPoolIncomplete | Inv::kPoolInvalid)) {
      const state::DraPool& pool = inv_.pools[inv_.devices[dev].pool_index];
      if (pool.incomplete) {
        if (all) {
          c.error = gantry::StrCat(claim.label, ", request ", rs.name, ": asks for all devices, but resource pool ",
                                   pool.key, " is currently being updated");
          return c;
        }
        continue;
      }
      saw_invalid_pool_ = true;
      if (all) {
        c.error = gantry::StrCat(claim.label, ", request ", rs.name, ": asks for all devices, but resource pool ",
                                 pool.key, " is invalid: ", pool.invalid_reason);
        return c;
      }
      continue;
    }
    if ((flags & Inv::kBindingConditions) && !f_.binding_conditions) continue;
    std::optional<bool> sel = Selectable(rs, dev, &c.error);
    if (!sel) return c;
    if (!*sel) continue;
    const bool multi = (flags & Inv::kMultiAllocation) && f_.consumable_capacity;
    if (has_capacity) {
      const DraDevice& d = inv_.devices[dev];
      if (multi) {
        if (!CapacityFor(rs, dev, &s_.consumed)) continue;
      } else {
        bool fits = true;
        for (const api::CapacityRequest& cr : rs.spec->capacity_requests) {
          const api::DeviceCapacity* cap = d.device->FindCapacity(api::QualifyName(cr.name.view(), d.driver));
          if (cap == nullptr || cap->value.Compare(cr.value) < 0) fits = false;
        }
        if (!fits) continue;
      }
    }
    c.devices.push_back(dev);
    if (rs.spec->admin_access || !(multi ? alloc_.InUse(dev) : alloc_.Held(dev))) ++c.free;
  }
  return c;
}

bool Search::Taken(int ci, const ReqSpec& rs, bool multi, int32_t dev) const {
  const bool admin = rs.spec->admin_access;
  if (multi) return !admin && alloc_.InUse(dev);
  for (const PickRec& p : s_.picks) {
    if (p.device != dev || p.shared) continue;
    if (!admin || p.claim == ci) return true;
  }
  return !admin && alloc_.Held(dev);
}

bool Search::ConstraintsAccept(int ci, const ReqSpec& rs, int32_t dev) {
  const ClaimInfo& claim = impl_.claims[ci];
  if (claim.constraints.empty()) return true;
  for (size_t k = 0; k < claim.constraints.size(); ++k) {
    const ConstraintInfo& c = claim.constraints[k];
    if (!c.Applies(rs)) continue;
    const state::AttributeTable::Entry& e = c.table->entries[static_cast<size_t>(dev)];
    if (!e.present) return false;
    const api::AttributeValue* vb = e.values;
    const api::AttributeValue* ve = e.values + e.count;
    const ConstraintStack& st = s_.constraints[static_cast<size_t>(claim.con_offset) + k];
    if (c.match) {
      if (st.frames.empty()) continue;
      auto top = st.values.begin() + st.frames.back();
      bool any = false;
      for (const api::AttributeValue* v = vb; v != ve && !any; ++v) any = ContainsIn(top, st.values.end(), *v);
      if (!any) return false;
    } else {
      for (const api::AttributeValue* v = vb; v != ve; ++v) {
        if (ContainsIn(st.values.begin(), st.values.end(), *v)) return false;
      }
    }
  }
  return true;
}

bool Search::CountersFit(int32_t dev) {
  const DraDevice& d = inv_.devices[dev];
  const int32_t pi = d.pool_index;
  const state::DraPool& pool = inv_.pools[pi];
  auto key_of = [&](api::Symbol set, api::Symbol counter) -> int64_t {
    int64_t si = -1, ci = -1;
    for (size_t i = 0; i < pool.counter_sets.size(); ++i) {
      if (pool.counter_sets[i]->name == set) {
        si = static_cast<int64_t>(i);
        for (size_t j = 0; j < pool.counter_sets[i]->counters.size(); ++j) {
          if (pool.counter_sets[i]->counters[j].name == counter) ci = static_cast<int64_t>(j);
        }
      }
    }
    return si < 0 || ci < 0 ? -1 : si * 1000 + ci;
  };
  auto it = s_.pool_available.find(pi);
  if (it == s_.pool_available.end()) {
    absl::flat_hash_map<int64_t, int64_t> avail;
    for (size_t i = 0; i < pool.counter_sets.size(); ++i) {
      for (size_t j = 0; j < pool.counter_sets[i]->counters.size(); ++j) {
        avail[static_cast<int64_t>(i) * 1000 + static_cast<int64_t>(j)] =
            pool.counter_sets[i]->counters[j].value.MilliValue();
      }
    }
    for (int32_t other : pool.counter_consumers) {
      if (!alloc_.Held(other)) continue;
      for (const api::DeviceCounterConsumption& cc : inv_.devices[other].device->consumes_counters) {
        for (const api::Counter& c : cc.counters) {
          int64_t k = key_of(cc.counter_set, c.name);
          if (k >= 0) avail[k] -= c.value.MilliValue();
        }
      }
    }
    it = s_.pool_available.emplace(pi, std::move(avail)).first;
  }
  for (const api::DeviceCounterConsumption& cc : d.device->consumes_counters) {
    for (const api::Counter& c : cc.counters) {
      int64_t k = key_of(cc.counter_set, c.name);
      if (k < 0) return false;
      auto used = s_.run_counters.find({pi, k});
      const int64_t u = used == s_.run_counters.end() ? 0 : used->second;
      if (it->second[k] - u - c.value.MilliValue() < 0) return false;
    }
  }
  PickRec& p = s_.picks.back();
  p.counters_begin = static_cast<uint32_t>(s_.counter_deltas.size());
  for (const api::DeviceCounterConsumption& cc : d.device->consumes_counters) {
    for (const api::Counter& c : cc.counters) {
      int64_t k = key_of(cc.counter_set, c.name);
      s_.run_counters[{pi, k}] += c.value.MilliValue();
      s_.counter_deltas.push_back({{pi, k}, c.value.MilliValue()});
    }
  }
  p.counters_end = static_cast<uint32_t>(s_.counter_deltas.size());
  return true;
}

bool Search::TryAdd(int ci, const ReqSpec& rs, int32_t dev) {
  ++steps_;
  if ((steps_ & 255) == 0 && Clock::now() > deadline_) aborted_ = true;
  if (steps_ > impl_.options.max_steps) aborted_ = true;
  if (aborted_) return false;
  using Inv = state::DraInventory;
  const uint8_t flags = inv_.device_flags[static_cast<size_t>(dev)];
  const DraDevice& d = inv_.devices[dev];
  const bool admin = rs.spec->admin_access;
  const bool multi = (flags & Inv::kMultiAllocation) && f_.consumable_capacity;
  if (Taken(ci, rs, multi, dev)) return false;
  if ((flags & Inv::kConsumesCounters) && !f_.partitionable_devices) return false;
  if ((flags & Inv::kTainted) && f_.device_taints) {
    for (const api::Taint& t : d.taints) {
      if (api::DeviceTaintBlocks(t, rs.spec->tolerations)) return false;
    }
  }
  if (multi) {
    if (!CapacityFor(rs, dev, &s_.consumed)) return false;
    for (auto& [name, v] : s_.consumed) {
      const api::DeviceCapacity* c = d.device->FindCapacity(name);
      auto run = s_.run_capacity.find({dev, name});
      const int64_t total = alloc_.Consumed(dev, name) + (run == s_.run_capacity.end() ? 0 : run->second) + v;
      if (c == nullptr || total > c->value.MilliValue()) return false;
    }
  }
  if (!ConstraintsAccept(ci, rs, dev)) return false;
  // Commit. A shared device already held (in the snapshot or by an
  // earlier pick) holds its counters already.
  bool counters_in_use = false;
  if (multi) {
    counters_in_use = alloc_.Shared(dev);
    for (const PickRec& p : s_.picks) counters_in_use |= p.device == dev;
  }
  PickRec rec;
  rec.device = dev;
  rec.claim = ci;
  rec.admin = admin;
  rec.shared = multi;
  rec.rs = &rs;
  rec.counters_begin = rec.counters_end = static_cast<uint32_t>(s_.counter_deltas.size());
  s_.picks.push_back(rec);
  if (!counters_in_use && (flags & Inv::kConsumesCounters) && !CountersFit(dev)) {
    s_.picks.pop_back();
    return false;
  }
  PickRec& cur = s_.picks.back();
  const ClaimInfo& claim = impl_.claims[ci];
  cur.pushed_begin = static_cast<uint32_t>(s_.pushed.size());
  for (size_t k = 0; k < claim.constraints.size(); ++k) {
    const ConstraintInfo& c = claim.constraints[k];
    if (!c.Applies(rs)) continue;
    const size_t flat = static_cast<size_t>(claim.con_offset) + k;
    ConstraintStack& st = s_.constraints[flat];
    const state::AttributeTable::Entry& e = c.table->entries[static_cast<size_t>(dev)];
    const api::AttributeValue* vb = e.values;
    const api::AttributeValue* ve = e.values + e.count;
    const uint32_t start = static_cast<uint32_t>(st.values.size());
    if (c.match && !st.frames.empty()) {
      s_.values2.clear();
      for (auto it = st.values.begin() + st.frames.back(); it != st.values.end(); ++it) {
        if (ContainsIn(vb, ve, *it)) s_.values2.push_back(*it);
      }
      st.values.insert(st.values.end(), s_.values2.begin(), s_.values2.end());
    } else {
      st.values.insert(st.values.end(), vb, ve);
    }
    st.frames.push_back(start);
    s_.pushed.push_back(static_cast<int32_t>(flat));
  }
  cur.pushed_end = static_cast<uint32_t>(s_.pushed.size());
  cur.capacity_begin = static_cast<uint32_t>(s_.capacity_deltas.size());
  if (multi) {
    for (auto& [name, v] : s_.consumed) {
      s_.run_capacity[{dev, name}] += v;
      s_.capacity_deltas.push_back({{dev, name}, v});
    }
  }
  cur.capacity_end = static_cast<uint32_t>(s_.capacity_deltas.size());
  ++s_.results_count[static_cast<size_t>(ci)];
  return true;
}

void Search::Undo() {
  const PickRec& p = s_.picks.back();
  for (uint32_t i = p.counters_begin; i < p.counters_end; ++i) {
    s_.run_counters[s_.counter_deltas[i].first] -= s_.counter_deltas[i].second;
  }
  s_.counter_deltas.resize(p.counters_begin);
  for (uint32_t i = p.capacity_begin; i < p.capacity_end; ++i) {
    s_.run_capacity[s_.capacity_deltas[i].first] -= s_.capacity_deltas[i].second;
  }
  s_.capacity_deltas.resize(p.capacity_begin);
  for (uint32_t i = p.pushed_begin; i < p.pushed_end; ++i) {
    ConstraintStack& st = s_.constraints[static_cast<size_t>(s_.pushed[i])];
    st.values.resize(st.frames.back());
    st.frames.pop_back();
  }
  s_.pushed.resize(p.pushed_begin);
  --s_.results_count[static_cast<size_t>(p.claim)];
  s_.picks.pop_back();
}

Search::Step Search::SearchFrom(int ci, int ri, int slot, size_t start) {
  if (aborted_ || !fatal_.empty()) return Step::kAbort;
  if (ci == static_cast<int>(impl_.claims.size())) return Step::kOk;
  const ClaimInfo& claim = impl_.claims[ci];
  if (ri == static_cast<int>(claim.reqs.size())) {
    Step s = SearchFrom(ci + 1, 0, 0, 0);
    return s == Step::kSizeExceeded ? Step::kFail : s;
  }
  const ReqInfo& req = claim.reqs[ri];
  int& alt = s_.chosen_alt[static_cast<size_t>(claim.req_offset + ri)];
  if (slot == 0 && alt < 0) {
    bool all_exceeded = true;
    for (int a = 0; a < static_cast<int>(req.alts.size()); ++a) {
      alt = a;
      Step s = SearchFrom(ci, ri, 0, 0);
      if (s == Step::kOk || s == Step::kAbort) return s;
      all_exceeded &= s == Step::kSizeExceeded;
    }
    alt = -1;
    return all_exceeded ? Step::kSizeExceeded : Step::kFail;
  }
  const ReqSpec& rs = req.alts[alt];
  const Candidates& c = CandidatesFor(claim, rs);
  if (!c.error.empty()) {
    fatal_ = c.error;
    return Step::kAbort;
  }
  const bool all = rs.spec->allocation_mode == api::AllocationMode::kAll;
  const int64_t need = all ? static_cast<int64_t>(c.devices.size()) : rs.spec->count;
  if (all && need == 0) return Step::kFail;  // All over nothing is no solution
  if (slot == need) return SearchFrom(ci, ri + 1, 0, 0);
  if (static_cast<int64_t>(s_.results_count[static_cast<size_t>(ci)]) + need - slot >
      static_cast<int64_t>(kMaxResults)) {
    return Step::kSizeExceeded;
  }
  if (all) {
    const int32_t dev = c.devices[static_cast<size_t>(slot)];
    // Constraint violations in All mode are fatal upstream.
    const DraDevice& d = inv_.devices[dev];
    const bool multi = d.device->allow_multiple_allocations && f_.consumable_capacity;
    if (!Taken(ci, rs, multi, dev) && !ConstraintsAccept(ci, rs, dev)) {
      fatal_ = gantry::StrCat(claim.label, ", request ", rs.name, ": cannot add device ", d.pool.view(), "/",
                              d.device->name.view(), " because a claim constraint would not be satisfied");
      return Step::kAbort;
    }
    if (!TryAdd(ci, rs, dev)) return aborted_ ? Step::kAbort : Step::kFail;
    Step s = SearchFrom(ci, ri, slot + 1, 0);
    if (s != Step::kOk) Undo();
    return s;
  }
  const bool has_constraints = !claim.constraints.empty();
  for (size_t i = start; i < c.devices.size(); ++i) {
    const int64_t remaining_slots = need - slot;
    if (static_cast<int64_t>(c.devices.size() - i) < remaining_slots) break;
    const int32_t dev = c.devices[i];
    if (!TryAdd(ci, rs, dev)) {
      if (aborted_) return Step::kAbort;
      continue;
    }
    // Prune: enough compatible, free candidates left for the remaining slots?
    if (has_constraints && remaining_slots > 1) {
      int64_t ok = 0;
      for (size_t j = i + 1; j < c.devices.size() && ok < remaining_slots - 1; ++j) {
        const int32_t o = c.devices[j];
        const bool multi = inv_.devices[o].device->allow_multiple_allocations && f_.consumable_capacity;
        if (Taken(ci, rs, multi, o)) continue;
        if (ConstraintsAccept(ci, rs, o)) ++ok;
      }
      if (ok < remaining_slots - 1) {
        Undo();
        continue;
      }
    }
    Step s = SearchFrom(ci, ri, slot + 1, i + 1);
    if (s == Step::kOk) return s;
    Undo();
    if (s == Step::kAbort || s == Step::kSizeExceeded) return s;
  }
  return Step::kFail;
}

// Deterministic share id from the claim, device and pick position.
std::string ShareId(const ClaimInfo& claim, const api::Device& device, int32_t position) {
  const std::string& uid = claim.claim->meta.uid.empty() ? claim.claim->meta.name : claim.claim->meta.uid;
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::string_view s) {
    for (char ch : s) h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
  };
  mix(uid);
  mix(device.name.view());
  mix(std::to_string(position));
  char buf[17];
  snprintf(buf, sizeof(buf), "%08llx", static_cast<unsigned long long>(h & 0xffffffffull));
  return buf;
}

// The AllocationResult of claim `ci` in `sol` on node `node_name`.
api::AllocationResult BuildResult(const Allocator::Impl& impl_, const state::DraInventory& inv_,
                                  std::string_view node_name, const Solution& sol, int ci) {
  const ClaimInfo& claim = impl_.claims[ci];
  api::AllocationResult out;
  bool pin_node = false;
  std::vector<const api::NodeSelectorTerm*> terms;
  for (const Solution::Pick& p : sol.picks) {
    if (p.claim != ci) continue;
    const DraDevice& d = inv_.devices[p.device];
    const ReqSpec& rs = *impl_.alts[static_cast<size_t>(p.alt)];
    api::DeviceRequestAllocationResult& r = out.results.emplace_back();
    r.request = rs.name_sym;
    r.driver = d.driver;
    r.pool = d.pool;
    r.device = d.device->name;
    r.admin_access = p.admin;
    r.tolerations = rs.spec->tolerations;
    r.binding_conditions = d.device->binding_conditions;
    r.binding_failure_conditions = d.device->binding_failure_conditions;
    if (p.shared) {
      r.share_id = ShareId(claim, *d.device, p.position);
      for (uint32_t i = p.consumed_begin; i < p.consumed_end; ++i) {
        const api::Symbol name = sol.consumed[i].first;
        const api::DeviceCapacity* c = d.device->FindCapacity(name);
        api::Symbol spelled = name;
        if (c != nullptr && c->unqualified) spelled = api::Symbol::Intern(api::SplitQualifiedName(name.view()).second);
        r.consumed_capacity.push_back(api::CapacityRequest{
            spelled, api::Quantity::FromMilli(sol.consumed[i].second, api::Quantity::Format::kBinarySI)});
      }
    }
    const api::ResourceSlice& s = *inv_.slices[d.slice_index].slice;
    if (d.device->binds_to_node) pin_node = true;
    switch (s.spec.node_selection) {
      case api::SliceNodeSelection::kNodeName:
        pin_node = true;
        break;
      case api::SliceNodeSelection::kNodeSelector:
        if (s.spec.node_selector && !s.spec.node_selector->terms.empty()) terms.push_back(&s.spec.node_selector->terms[0]);
        break;
      case api::SliceNodeSelection::kAllNodes:
        break;
      case api::SliceNodeSelection::kPerDevice:
        if (!d.device->node_name.empty()) pin_node = true;
        else if (d.device->node_selector && !d.device->node_selector->terms.empty())
          terms.push_back(&d.device->node_selector->terms[0]);
        break;
    }
  }
  if (pin_node) {
    out.node_selector = inv_.NodePinSelector(node_name);
  } else if (!terms.empty()) {
    auto sel = std::make_shared<api::NodeSelector>();
    api::NodeSelectorTerm merged;
    auto same = [](const api::Requirement& a, const api::Requirement& b) {
      return a.key == b.key && a.op == b.op && a.values == b.values;
    };
    for (const api::NodeSelectorTerm* t : terms) {
      for (const api::Requirement& r : t->match_expressions) {
        if (std::none_of(merged.match_expressions.begin(), merged.match_expressions.end(),
                         [&](const api::Requirement& x) { return same(x, r); }))
          merged.match_expressions.push_back(r);
      }
      for (const api::Requirement& r : t->match_fields) {
        if (std::none_of(merged.match_fields.begin(), merged.match_fields.end(),
                         [&](const api::Requirement& x) { return same(x, r); }))
          merged.match_fields.push_back(r);
      }
    }
    sel->terms.push_back(std::move(merged));
    out.node_selector = std::move(sel);
  }
  // Config: class configs (once per class, with the requests using it), then claim configs.
  std::vector<std::pair<const api::DeviceClass*, size_t>> class_entries;  // class -> first config index
  for (size_t ri = 0; ri < claim.reqs.size(); ++ri) {
    const int alt = sol.chosen_alt[static_cast<size_t>(claim.req_offset) + ri];
    if (alt < 0) continue;
    const ReqSpec& rs = claim.reqs[ri].alts[alt];
    api::Symbol name = rs.name_sym;
    auto it = std::find_if(class_entries.begin(), class_entries.end(),
                           [&](const auto& e) { return e.first == rs.cls; });
    if (it != class_entries.end()) {
      for (size_t k = 0; k < rs.cls->spec.config.size(); ++k) out.config[it->second + k].requests.push_back(name);
      continue;
    }
    class_entries.emplace_back(rs.cls, out.config.size());
    for (const api::OpaqueDeviceConfiguration& oc : rs.cls->spec.config) {
      out.config.push_back(api::DeviceAllocationConfiguration{api::AllocationConfigSource::kFromClass, {name}, oc});
    }
  }
  for (const api::DeviceClaimConfiguration& cc : claim.claim->spec.config) {
    if (cc.requests.empty()) {
      out.config.push_back(api::DeviceAllocationConfiguration{api::AllocationConfigSource::kFromClaim, {}, cc.opaque});
      continue;
    }
    for (size_t ri = 0; ri < claim.reqs.size(); ++ri) {
      const int alt = sol.chosen_alt[static_cast<size_t>(claim.req_offset) + ri];
      if (alt < 0) continue;
      const ReqSpec& rs = claim.reqs[ri].alts[alt];
      bool listed = false;
      for (api::Symbol s : cc.requests) listed |= s == rs.parent || s.view() == rs.name;
      if (listed) {
        out.config.push_back(
            api::DeviceAllocationConfiguration{api::AllocationConfigSource::kFromClaim, cc.requests, cc.opaque});
      }
    }
  }
  for (api::DeviceAllocationConfiguration& c : out.config) {
    if (c.requests.size() == claim.reqs.size() && !claim.reqs.empty()) c.requests.clear();
  }
  return out;
}

NodeAllocation Search::Run(bool materialize) {
  NodeAllocation out;
  const size_t n = impl_.claims.size();
  s_.cands.resize(static_cast<size_t>(impl_.num_alts));
  for (Candidates& c : s_.cands) c.Reset();
  s_.chosen_alt.assign(static_cast<size_t>(impl_.num_reqs), -1);
  s_.results_count.assign(n, 0);
  s_.constraints.resize(static_cast<size_t>(impl_.num_constraints));
  for (ConstraintStack& c : s_.constraints) c.Clear();
  s_.picks.clear();
  s_.pushed.clear();
  s_.counter_deltas.clear();
  s_.capacity_deltas.clear();
  s_.run_counters.clear();
  s_.pool_available.clear();
  s_.run_capacity.clear();
  // Quick count check per claim/request (only for requests without
  // alternatives; firstAvailable is left to the search).
  for (size_t ci = 0; ci < n; ++ci) {
    const ClaimInfo& claim = impl_.claims[ci];
    for (size_t ri = 0; ri < claim.reqs.size(); ++ri) {
      const ReqInfo& req = claim.reqs[ri];
      std::string first_reason;  // starts with the claim's label
      bool any_ok = false;
      for (size_t a = 0; a < req.alts.size(); ++a) {
        const ReqSpec& rs = req.alts[a];
        const Candidates& c = CandidatesFor(claim, rs);
        if (!c.error.empty()) {
          out.result = NodeAllocation::Result::kFatal;
          out.message = c.error;
          return out;
        }
        const bool all = rs.spec->allocation_mode == api::AllocationMode::kAll;
        if (all) {
          if (c.devices.empty()) {
            if (first_reason.empty())
              first_reason = gantry::StrCat(claim.label, ": request \"", rs.name, "\": all devices wanted, none match");
            continue;
          }
          if (c.free < static_cast<int64_t>(c.devices.size()) && !rs.spec->admin_access) {
            if (first_reason.empty())
              first_reason = gantry::StrCat(claim.label, ": request \"", rs.name, "\": all ", c.devices.size(),
                                            " matching devices wanted, ", c.devices.size() - static_cast<size_t>(c.free),
                                            " already allocated");
            continue;
          }
          if (c.devices.size() > kMaxResults) {
            if (first_reason.empty())
              first_reason = gantry::StrCat(claim.label, ": request \"", rs.name, "\": all ", c.devices.size(),
                                            " devices wanted, more than the claim limit of ", kMaxResults);
            continue;
          }
        } else if (c.free < rs.spec->count) {
          if (first_reason.empty())
            first_reason = gantry::StrCat(claim.label, ": request \"", rs.name, "\": ", rs.spec->count, " device",
                                          rs.spec->count == 1 ? "" : "s", " wanted, ", c.free, " free match");
          continue;
        }
        any_ok = true;
      }
      if (!any_ok) {
        out.result = saw_invalid_pool_ ? NodeAllocation::Result::kNodeError : NodeAllocation::Result::kUnsatisfiable;
        if (saw_invalid_pool_) out.message = "invalid resource pools were encountered; ";
        out.labels.push_back({static_cast<uint32_t>(out.message.size()),
                              static_cast<uint32_t>(claim.label.size()), static_cast<int32_t>(ci)});
        out.message += first_reason;
        return out;
      }
    }
  }
  Step s = SearchFrom(0, 0, 0, 0);
  out.steps = steps_;
  if (!fatal_.empty()) {
    out.result = NodeAllocation::Result::kFatal;
    out.message = fatal_;
    return out;
  }
  if (aborted_) {
    out.result = NodeAllocation::Result::kTimeout;
    out.message = gantry::StrCat("device allocation search stopped after ", steps_,
                                 " attempts (timeout or search budget)");
    return out;
  }
  if (s != Step::kOk) {
    if (saw_invalid_pool_) {
      out.result = NodeAllocation::Result::kNodeError;
      out.message = "invalid resource pools were encountered";
      return out;
    }
    out.result = NodeAllocation::Result::kUnsatisfiable;
    bool any_constraint = false;
    for (const ClaimInfo& c : impl_.claims) any_constraint |= !c.constraints.empty();
    if (!any_constraint) {
      out.message =
          "cannot allocate all claims: free matching devices are taken by other requests, counters "
          "or capacity";
      return out;
    }
    out.message = "cannot allocate all claims: no device combination satisfies ";
    bool first = true;
    for (size_t ci = 0; ci < impl_.claims.size(); ++ci) {
      const ClaimInfo& c = impl_.claims[ci];
      for (const ConstraintInfo& k : c.constraints) {
        if (!first) out.message += ", ";
        first = false;
        out.labels.push_back({static_cast<uint32_t>(out.message.size()),
                              static_cast<uint32_t>(c.label.size()), static_cast<int32_t>(ci)});
        gantry::StrAppend(&out.message, c.label, ": ",
                          k.match ? "matchAttribute " : "distinctAttribute ", k.attribute.view());
      }
    }
    out.message += " (and counters, capacity, taints)";
    return out;
  }
  out.result = NodeAllocation::Result::kSuccess;
  Solution& sol = out.solution;
  for (size_t i = 0; i < s_.picks.size(); ++i) {
    const PickRec& p = s_.picks[i];
    Solution::Pick& q = sol.picks.emplace_back();
    q.device = p.device;
    q.claim = p.claim;
    q.alt = p.rs->alt_id;
    q.admin = p.admin;
    q.shared = p.shared;
    q.position = static_cast<int32_t>(i + 1);
    q.consumed_begin = static_cast<uint32_t>(sol.consumed.size());
    for (uint32_t k = p.capacity_begin; k < p.capacity_end; ++k) {
      sol.consumed.emplace_back(s_.capacity_deltas[k].first.second, s_.capacity_deltas[k].second);
    }
    q.consumed_end = static_cast<uint32_t>(sol.consumed.size());
  }
  sol.chosen_alt.resize(s_.chosen_alt.size());
  for (size_t i = 0; i < s_.chosen_alt.size(); ++i) sol.chosen_alt[i] = static_cast<int16_t>(s_.chosen_alt[i]);
  for (const ClaimInfo& claim : impl_.claims) {
    for (size_t ri = 0; ri < claim.reqs.size(); ++ri) {
      const int alt = s_.chosen_alt[static_cast<size_t>(claim.req_offset) + ri];
      if (claim.reqs[ri].first_available && alt >= 0) out.prioritized_score += 8 - alt;
    }
  }
  if (materialize) {
    for (size_t ci = 0; ci < n; ++ci) {
      out.allocations.push_back(BuildResult(impl_, inv_, node_.meta.name, sol, static_cast<int>(ci)));
    }
  }
  return out;
}

}  // namespace

NodeAllocation Allocator::Allocate(const api::Node& node, Clock::time_point deadline, bool materialize,
                                   absl::Span<const int32_t> preferred) const {
  Search s(*impl_, *snapshot_, node, deadline, preferred, ThreadScratch());
  NodeAllocation out = s.Run(materialize);
  out.cel_evaluations = s.cel_evaluations();
  return out;
}

std::string Allocator::Restate(const NodeAllocation& from) const {
  if (from.labels.empty()) return from.message;
  size_t size = from.message.size();
  for (const NodeAllocation::Label& l : from.labels) {
    if (l.claim >= 0 && static_cast<size_t>(l.claim) < impl_->claims.size())
      size += impl_->claims[static_cast<size_t>(l.claim)].label.size() - l.length;
  }
  std::string out;
  out.reserve(size);
  size_t pos = 0;
  for (const NodeAllocation::Label& l : from.labels) {
    if (l.offset < pos || l.offset + l.length > from.message.size())
      break;  // not this message's labels
    out.append(from.message, pos, l.offset - pos);
    if (l.claim >= 0 && static_cast<size_t>(l.claim) < impl_->claims.size()) {
      out += impl_->claims[static_cast<size_t>(l.claim)].label;
    } else {
      out.append(from.message, l.offset, l.length);
    }
    pos = l.offset + l.length;
  }
  out.append(from.message, pos);
  return out;
}

const AllocatorOptions& Allocator::options() const { return impl_->options; }

size_t Allocator::num_claims() const { return impl_->claims.size(); }

const std::shared_ptr<const api::ResourceClaim>& Allocator::claim(size_t i) const {
  return impl_->claims[i].claim;
}

std::vector<api::AllocationResult> Allocator::Materialize(std::string_view node_name, const Solution& solution) const {
  std::vector<api::AllocationResult> out;
  out.reserve(impl_->claims.size());
  for (size_t ci = 0; ci < impl_->claims.size(); ++ci) {
    out.push_back(BuildResult(*impl_, *snapshot_->inventory, node_name, solution, static_cast<int>(ci)));
  }
  return out;
}

}  // namespace gantry::dra
