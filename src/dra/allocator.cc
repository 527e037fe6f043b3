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
  // capacity.requests resolved per driver lazily; kept as written here.
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
};

}  // namespace

struct Allocator::Impl {
  AllocatorOptions options;
  std::vector<ClaimInfo> claims;
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
    a->impl_->claims.push_back(std::move(ci));
  }
  return a;
}

namespace {

// Attribute values of a device for a constraint (a scalar is a 1-element list).
bool DeviceValues(const api::Device& d, api::Symbol attr, std::vector<api::AttributeValue>* out) {
  out->clear();
  if (const api::DeviceAttribute* a = d.FindAttribute(attr)) {
    out->push_back(a->value);
    return true;
  }
  if (const api::DeviceListAttribute* l = d.FindListAttribute(attr)) {
    *out = l->values;
    return true;
  }
  return false;
}

bool Contains(const std::vector<api::AttributeValue>& v, const api::AttributeValue& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Per-search mutable state (one per Allocate call).
class Search {
 public:
  Search(const Allocator::Impl& impl, const state::DraSnapshot& snap, const api::Node& node,
         Clock::time_point deadline)
      : impl_(impl),
        f_(impl.options.features),
        snap_(snap),
        inv_(*snap.inventory),
        alloc_(*snap.allocations),
        node_(node),
        deadline_(deadline) {}

  NodeAllocation Run();

 private:
  struct Pick {
    int32_t device;
    int claim;
    bool admin;
    bool shared;
  };
  struct ConstraintState {
    std::vector<std::vector<api::AttributeValue>> stack;  // match: intersections; distinct: values per device
  };
  enum class Step : uint8_t { kOk, kFail, kSizeExceeded, kAbort };

  // Candidate devices of a request alternative on this node.
  struct Candidates {
    bool computed = false;
    std::vector<int32_t> devices;
    int64_t free = 0;
    std::string error;  // fatal (CEL)
    bool incomplete_pool = false;
    bool invalid_pool = false;
  };

  const Candidates& CandidatesFor(int ci, int ri, int alt);
  std::optional<bool> Selectable(const ReqSpec& rs, int32_t dev, std::string* error);
  Step SearchFrom(int ci, int ri, int slot, size_t start);
  bool TryAdd(int ci, const ReqSpec& rs, int32_t dev);
  void Undo();
  bool ConstraintsAccept(int ci, const ReqSpec& rs, int32_t dev);
  bool InUse(int ci, bool admin, int32_t dev) const;
  bool CountersFit(int32_t dev, bool apply);
  std::optional<std::vector<std::pair<api::Symbol, int64_t>>> CapacityFor(const ReqSpec& rs, int32_t dev) const;
  api::AllocationResult BuildResult(int ci);

  const Allocator::Impl& impl_;
  const Features& f_;
  const state::DraSnapshot& snap_;
  const state::DraInventory& inv_;
  const state::DraAllocations& alloc_;
  const api::Node& node_;
  Clock::time_point deadline_;
  int64_t steps_ = 0;
  bool aborted_ = false;
  std::string fatal_;
  bool saw_invalid_pool_ = false;

  std::vector<int32_t> node_devices_;  // devices visible from the node, in order
  bool node_devices_done_ = false;
  absl::flat_hash_map<int64_t, Candidates> cands_;  // (ci, ri, alt)
  std::vector<std::vector<int>> chosen_alt_;         // per claim, per request
  std::vector<std::vector<int64_t>> all_counts_;     // per claim, per request: All-mode size

  struct Undoable {
    Pick pick;
    api::DeviceRequestAllocationResult result;
    std::vector<std::pair<int, size_t>> constraint_pushes;  // (constraint index, previous stack size)
    std::vector<std::pair<std::pair<int32_t, int64_t>, int64_t>> counter_deltas;  // ((pool, key), delta)
    std::vector<std::pair<std::pair<int32_t, api::Symbol>, int64_t>> capacity_deltas;
  };
  std::vector<Undoable> picks_;
  std::vector<std::vector<ConstraintState>> constraint_state_;  // per claim
  std::vector<std::vector<size_t>> results_per_claim_;          // indexes into picks_
  // Counters: (pool, set*1000+counter) -> consumed in this run; base availability per pool.
  absl::flat_hash_map<std::pair<int32_t, int64_t>, int64_t> run_counters_;
  absl::flat_hash_map<int32_t, absl::flat_hash_map<int64_t, int64_t>> pool_available_;
  absl::flat_hash_map<std::pair<int32_t, api::Symbol>, int64_t> run_capacity_;
  std::vector<api::AttributeValue> scratch_;
  cel::DeviceInputBuilder builder_;
};

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
    if (input == nullptr) input = &builder_.Build(d.driver.view(), *d.device);
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

std::optional<std::vector<std::pair<api::Symbol, int64_t>>> Search::CapacityFor(const ReqSpec& rs,
                                                                                 int32_t dev) const {
  const DraDevice& d = inv_.devices[dev];
  std::vector<std::pair<api::Symbol, int64_t>> out;
  // Requested capacities must exist on the device.
  std::vector<std::pair<api::Symbol, int64_t>> requested;
  for (const api::CapacityRequest& c : rs.spec->capacity_requests) {
    api::Symbol q = api::QualifyName(c.name.view(), d.driver);
    if (d.device->FindCapacity(q) == nullptr) return std::nullopt;
    requested.emplace_back(q, c.value.MilliValue());
  }
  for (const api::DeviceCapacity& cap : d.device->capacity) {
    std::optional<int64_t> want;
    for (auto& [n, v] : requested) {
      if (n == cap.name) want = v;
    }
    std::optional<int64_t> r = RoundCapacity(cap, want);
    if (!r) return std::nullopt;
    if (*r > cap.value.MilliValue()) return std::nullopt;
    out.emplace_back(cap.name, *r);
  }
  return out;
}

const Search::Candidates& Search::CandidatesFor(int ci, int ri, int alt) {
  const int64_t key = (static_cast<int64_t>(ci) << 32) | (static_cast<int64_t>(ri) << 8) | alt;
  Candidates& c = cands_[key];
  if (c.computed) return c;
  c.computed = true;
  if (!node_devices_done_) {
    node_devices_done_ = true;
    std::vector<int32_t> slices;
    inv_.SlicesForNode(node_, &slices);
    for (int32_t si : slices) {
      const state::DraSlice& s = inv_.slices[si];
      const bool per_device = s.slice->spec.node_selection == api::SliceNodeSelection::kPerDevice;
      if (per_device && !f_.partitionable_devices) continue;
      for (int32_t i = s.first_device; i < s.first_device + s.num_devices; ++i) {
        if (per_device && !inv_.DeviceOnNode(i, node_)) continue;
        node_devices_.push_back(i);
      }
    }
  }
  const ReqSpec& rs = impl_.claims[ci].reqs[ri].alts[alt];
  const bool all = rs.spec->allocation_mode == api::AllocationMode::kAll;
  for (int32_t dev : node_devices_) {
    const DraDevice& d = inv_.devices[dev];
    const state::DraPool& pool = inv_.pools[d.pool_index];
    if (pool.incomplete) {
      c.incomplete_pool = true;
      if (all) {
        c.error = gantry::StrCat(impl_.claims[ci].label, ", request ", rs.name,
                                 ": asks for all devices, but resource pool ", pool.key,
                                 " is currently being updated");
        return c;
      }
      continue;
    }
    if (pool.invalid) {
      c.invalid_pool = true;
      saw_invalid_pool_ = true;
      if (all) {
        c.error = gantry::StrCat(impl_.claims[ci].label, ", request ", rs.name,
                                 ": asks for all devices, but resource pool ", pool.key, " is invalid: ",
                                 pool.invalid_reason);
        return c;
      }
      continue;
    }
    if (!d.device->binding_conditions.empty() && !f_.binding_conditions) continue;
    std::string err;
    std::optional<bool> sel = Selectable(rs, dev, &err);
    if (!sel) {
      c.error = std::move(err);
      return c;
    }
    if (!*sel) continue;
    const bool multi = d.device->allow_multiple_allocations && f_.consumable_capacity;
    if (!rs.spec->capacity_requests.empty()) {
      if (multi) {
        if (!CapacityFor(rs, dev)) continue;
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
    if (multi || rs.spec->admin_access || !alloc_.InUse(dev)) ++c.free;
  }
  return c;
}

bool Search::InUse(int ci, bool admin, int32_t dev) const {
  for (const Undoable& u : picks_) {
    if (u.pick.device != dev || u.pick.shared) continue;
    if (!admin || u.pick.claim == ci) return true;
  }
  if (admin) return false;
  return alloc_.InUse(dev);
}

bool Search::ConstraintsAccept(int ci, const ReqSpec& rs, int32_t dev) {
  const ClaimInfo& claim = impl_.claims[ci];
  std::vector<ConstraintState>& states = constraint_state_[ci];
  const api::Device& d = *inv_.devices[dev].device;
  for (size_t k = 0; k < claim.constraints.size(); ++k) {
    const ConstraintInfo& c = claim.constraints[k];
    if (!c.Applies(rs)) continue;
    if (!DeviceValues(d, c.attribute, &scratch_)) return false;
    const ConstraintState& st = states[k];
    if (c.match) {
      if (st.stack.empty()) continue;
      const std::vector<api::AttributeValue>& cur = st.stack.back();
      bool any = false;
      for (const auto& v : scratch_) any |= Contains(cur, v);
      if (!any) return false;
    } else {
      for (const auto& prev : st.stack) {
        for (const auto& v : scratch_) {
          if (Contains(prev, v)) return false;
        }
      }
    }
  }
  return true;
}

bool Search::CountersFit(int32_t dev, bool apply) {
  const DraDevice& d = inv_.devices[dev];
  if (d.device->consumes_counters.empty()) return true;
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
  auto it = pool_available_.find(pi);
  if (it == pool_available_.end()) {
    absl::flat_hash_map<int64_t, int64_t> avail;
    for (size_t i = 0; i < pool.counter_sets.size(); ++i) {
      for (size_t j = 0; j < pool.counter_sets[i]->counters.size(); ++j) {
        avail[static_cast<int64_t>(i) * 1000 + static_cast<int64_t>(j)] =
            pool.counter_sets[i]->counters[j].value.MilliValue();
      }
    }
    for (int32_t other : pool.counter_consumers) {
      if (!alloc_.InUse(other)) continue;
      for (const api::DeviceCounterConsumption& cc : inv_.devices[other].device->consumes_counters) {
        for (const api::Counter& c : cc.counters) {
          int64_t k = key_of(cc.counter_set, c.name);
          if (k >= 0) avail[k] -= c.value.MilliValue();
        }
      }
    }
    it = pool_available_.emplace(pi, std::move(avail)).first;
  }
  for (const api::DeviceCounterConsumption& cc : d.device->consumes_counters) {
    for (const api::Counter& c : cc.counters) {
      int64_t k = key_of(cc.counter_set, c.name);
      if (k < 0) return false;
      const int64_t used = run_counters_[{pi, k}];
      if (it->second[k] - used - c.value.MilliValue() < 0) return false;
    }
  }
  if (apply) {
    for (const api::DeviceCounterConsumption& cc : d.device->consumes_counters) {
      for (const api::Counter& c : cc.counters) {
        int64_t k = key_of(cc.counter_set, c.name);
        run_counters_[{pi, k}] += c.value.MilliValue();
        picks_.back().counter_deltas.push_back({{pi, k}, c.value.MilliValue()});
      }
    }
  }
  return true;
}

bool Search::TryAdd(int ci, const ReqSpec& rs, int32_t dev) {
  ++steps_;
  if ((steps_ & 255) == 0 && Clock::now() > deadline_) aborted_ = true;
  if (steps_ > impl_.options.max_steps) aborted_ = true;
  if (aborted_) return false;
  const DraDevice& d = inv_.devices[dev];
  const bool admin = rs.spec->admin_access;
  const bool multi = d.device->allow_multiple_allocations && f_.consumable_capacity;
  if (!multi && InUse(ci, admin, dev)) return false;
  if (!d.device->consumes_counters.empty() && !f_.partitionable_devices) return false;
  if (f_.device_taints) {
    for (const api::Taint& t : d.taints) {
      if (api::DeviceTaintBlocks(t, rs.spec->tolerations)) return false;
    }
  }
  std::vector<std::pair<api::Symbol, int64_t>> consumed;
  if (multi) {
    auto cap = CapacityFor(rs, dev);
    if (!cap) return false;
    for (auto& [name, v] : *cap) {
      const api::DeviceCapacity* c = d.device->FindCapacity(name);
      const int64_t total = alloc_.Consumed(dev, name) + run_capacity_[{dev, name}] + v;
      if (c == nullptr || total > c->value.MilliValue()) return false;
    }
    consumed = std::move(*cap);
  }
  if (!ConstraintsAccept(ci, rs, dev)) return false;
  // Commit.
  Undoable u;
  u.pick = Pick{dev, ci, admin, multi};
  picks_.push_back(std::move(u));
  bool counters_in_use = multi && (alloc_.consumed.contains(dev) || [&] {
                           for (size_t i = 0; i + 1 < picks_.size(); ++i) {
                             if (picks_[i].pick.device == dev) return true;
                           }
                           return false;
                         }());
  if (!counters_in_use && !CountersFit(dev, /*apply=*/true)) {
    for (auto& [k, v] : picks_.back().counter_deltas) run_counters_[k] -= v;
    picks_.pop_back();
    return false;
  }
  Undoable& cur = picks_.back();
  const ClaimInfo& claim = impl_.claims[ci];
  for (size_t k = 0; k < claim.constraints.size(); ++k) {
    const ConstraintInfo& c = claim.constraints[k];
    if (!c.Applies(rs)) continue;
    DeviceValues(*d.device, c.attribute, &scratch_);
    ConstraintState& st = constraint_state_[ci][k];
    cur.constraint_pushes.emplace_back(static_cast<int>(k), st.stack.size());
    if (c.match) {
      if (st.stack.empty()) {
        st.stack.push_back(scratch_);
      } else {
        std::vector<api::AttributeValue> inter;
        for (const auto& v : st.stack.back()) {
          if (Contains(scratch_, v)) inter.push_back(v);
        }
        st.stack.push_back(std::move(inter));
      }
    } else {
      st.stack.push_back(scratch_);
    }
  }
  for (auto& [name, v] : consumed) {
    run_capacity_[{dev, name}] += v;
    cur.capacity_deltas.push_back({{dev, name}, v});
  }
  api::DeviceRequestAllocationResult& r = cur.result;
  r.request = api::Symbol::Intern(rs.name);
  r.driver = d.driver;
  r.pool = d.pool;
  r.device = d.device->name;
  r.admin_access = admin;
  r.tolerations = rs.spec->tolerations;
  r.binding_conditions = d.device->binding_conditions;
  r.binding_failure_conditions = d.device->binding_failure_conditions;
  if (multi) {
    // Deterministic share id from the claim, device and pick position.
    const std::string& uid = claim.claim->meta.uid.empty() ? claim.claim->meta.name : claim.claim->meta.uid;
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](std::string_view s) {
      for (char ch : s) h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
    };
    mix(uid);
    mix(d.device->name.view());
    mix(std::to_string(picks_.size()));
    char buf[17];
    snprintf(buf, sizeof(buf), "%08llx", static_cast<unsigned long long>(h & 0xffffffffull));
    r.share_id = buf;
    for (auto& [name, v] : consumed) {
      const api::DeviceCapacity* c = d.device->FindCapacity(name);
      api::Symbol spelled = name;
      if (c != nullptr && c->unqualified) spelled = api::Symbol::Intern(api::SplitQualifiedName(name.view()).second);
      r.consumed_capacity.push_back(api::CapacityRequest{spelled, api::Quantity::FromMilli(v, api::Quantity::Format::kBinarySI)});
    }
  }
  results_per_claim_[ci].push_back(picks_.size() - 1);
  return true;
}

void Search::Undo() {
  Undoable& u = picks_.back();
  for (auto& [k, v] : u.counter_deltas) run_counters_[k] -= v;
  for (auto& [k, v] : u.capacity_deltas) run_capacity_[k] -= v;
  for (auto& [k, size] : u.constraint_pushes) constraint_state_[u.pick.claim][k].stack.resize(size);
  results_per_claim_[u.pick.claim].pop_back();
  picks_.pop_back();
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
  int& alt = chosen_alt_[ci][ri];
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
  const Candidates& c = CandidatesFor(ci, ri, alt);
  if (!c.error.empty()) {
    fatal_ = c.error;
    return Step::kAbort;
  }
  const bool all = rs.spec->allocation_mode == api::AllocationMode::kAll;
  const int64_t need = all ? static_cast<int64_t>(c.devices.size()) : rs.spec->count;
  if (all && need == 0) return Step::kFail;  // All over nothing is no solution
  if (slot == need) return SearchFrom(ci, ri + 1, 0, 0);
  if (static_cast<int64_t>(results_per_claim_[ci].size()) + need - slot > static_cast<int64_t>(kMaxResults)) {
    return Step::kSizeExceeded;
  }
  if (all) {
    if (c.devices.empty()) return Step::kFail;
    const int32_t dev = c.devices[static_cast<size_t>(slot)];
    // Constraint violations in All mode are fatal upstream.
    const bool admin = rs.spec->admin_access;
    const DraDevice& d = inv_.devices[dev];
    const bool multi = d.device->allow_multiple_allocations && f_.consumable_capacity;
    if ((multi || !InUse(ci, admin, dev)) && !ConstraintsAccept(ci, rs, dev)) {
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
        if (!multi && InUse(ci, rs.spec->admin_access, o)) continue;
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

api::AllocationResult Search::BuildResult(int ci) {
  const ClaimInfo& claim = impl_.claims[ci];
  api::AllocationResult out;
  bool pin_node = false;
  std::vector<const api::NodeSelectorTerm*> terms;
  for (size_t idx : results_per_claim_[ci]) {
    const Undoable& u = picks_[idx];
    out.results.push_back(u.result);
    const DraDevice& d = inv_.devices[u.pick.device];
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
    auto sel = std::make_shared<api::NodeSelector>();
    api::NodeSelectorTerm t;
    api::Requirement r;
    r.key = api::Symbol::Intern("metadata.name");
    r.op = api::SelectorOp::kIn;
    r.values.push_back(api::Symbol::Intern(node_.meta.name));
    t.match_fields.push_back(std::move(r));
    sel->terms.push_back(std::move(t));
    out.node_selector = std::move(sel);
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
    const int alt = chosen_alt_[ci][ri];
    if (alt < 0) continue;
    const ReqSpec& rs = claim.reqs[ri].alts[alt];
    api::Symbol name = api::Symbol::Intern(rs.name);
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
      const int alt = chosen_alt_[ci][ri];
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

NodeAllocation Search::Run() {
  NodeAllocation out;
  const size_t n = impl_.claims.size();
  chosen_alt_.resize(n);
  constraint_state_.resize(n);
  results_per_claim_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    chosen_alt_[i].assign(impl_.claims[i].reqs.size(), -1);
    constraint_state_[i].resize(impl_.claims[i].constraints.size());
  }
  // Quick count check per claim/request (only for requests without
  // alternatives; firstAvailable is left to the search).
  for (size_t ci = 0; ci < n; ++ci) {
    const ClaimInfo& claim = impl_.claims[ci];
    for (size_t ri = 0; ri < claim.reqs.size(); ++ri) {
      const ReqInfo& req = claim.reqs[ri];
      std::string first_reason;
      bool any_ok = false;
      for (size_t a = 0; a < req.alts.size(); ++a) {
        const ReqSpec& rs = req.alts[a];
        const Candidates& c = CandidatesFor(static_cast<int>(ci), static_cast<int>(ri), static_cast<int>(a));
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
        out.message = first_reason;
        out.result = saw_invalid_pool_ ? NodeAllocation::Result::kNodeError : NodeAllocation::Result::kUnsatisfiable;
        if (saw_invalid_pool_) out.message = gantry::StrCat("invalid resource pools were encountered; ", out.message);
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
    std::string what;
    for (const ClaimInfo& c : impl_.claims) {
      for (const ConstraintInfo& k : c.constraints) {
        if (!what.empty()) what += ", ";
        what += gantry::StrCat(c.label, ": ", k.match ? "matchAttribute " : "distinctAttribute ", k.attribute.view());
      }
    }
    out.message = what.empty()
                      ? "cannot allocate all claims: free matching devices are taken by other requests, counters or capacity"
                      : gantry::StrCat("cannot allocate all claims: no device combination satisfies ", what,
                                       " (and counters, capacity, taints)");
    return out;
  }
  out.result = NodeAllocation::Result::kSuccess;
  for (size_t ci = 0; ci < n; ++ci) out.allocations.push_back(BuildResult(static_cast<int>(ci)));
  return out;
}

}  // namespace

NodeAllocation Allocator::Allocate(const api::Node& node, Clock::time_point deadline) const {
  Search s(*impl_, *snapshot_, node, deadline);
  return s.Run();
}

}  // namespace gantry::dra
