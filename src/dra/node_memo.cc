#include "src/dra/node_memo.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace gantry::dra {

struct NodeMemo::Era {
  uint64_t id = 0;
  std::shared_ptr<const state::DraInventory> inventory;
  std::shared_ptr<const state::DeviceClassMap> classes;
  // Per pool: the epoch of the last view in which a device of the pool
  // changed (0: none since the era began). Written by Begin only.
  std::unique_ptr<std::atomic<uint64_t>[]> pool_epochs;
  size_t num_pools = 0;
  uint64_t first_epoch = 0;  // the epoch of the era's first view
};

namespace {

bool SameExact(const api::ExactDeviceRequest& a, const api::ExactDeviceRequest& b) {
  if (a.device_class_name != b.device_class_name || a.allocation_mode != b.allocation_mode ||
      a.count != b.count || a.admin_access != b.admin_access || a.tolerations != b.tolerations ||
      a.selectors.size() != b.selectors.size() ||
      a.capacity_requests.size() != b.capacity_requests.size()) {
    return false;
  }
  for (size_t i = 0; i < a.selectors.size(); ++i) {
    if (a.selectors[i].cel_expression != b.selectors[i].cel_expression) return false;
  }
  for (size_t i = 0; i < a.capacity_requests.size(); ++i) {
    const api::CapacityRequest& x = a.capacity_requests[i];
    const api::CapacityRequest& y = b.capacity_requests[i];
    if (x.name != y.name || x.value.Compare(y.value) != 0) return false;
  }
  return true;
}

// FNV-1a style mixing; only has to agree with SameSearchSpec (equal specs
// hash equally).
struct Hasher {
  uint64_t h = 1469598103934665603ull;
  void Mix(uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  }
  void Mix(std::string_view s) {
    Mix(s.size());
    for (char c : s) Mix(static_cast<uint8_t>(c));
  }
  void Mix(const api::ExactDeviceRequest& r) {
    Mix(r.device_class_name.id());
    Mix(static_cast<uint64_t>(r.allocation_mode));
    Mix(static_cast<uint64_t>(r.count));
    Mix(r.admin_access ? 1 : 0);
    Mix(r.tolerations.size());
    Mix(r.selectors.size());
    for (const api::DeviceSelector& s : r.selectors) Mix(s.cel_expression);
    Mix(r.capacity_requests.size());
    for (const api::CapacityRequest& c : r.capacity_requests) {
      Mix(c.name.id());
      Mix(static_cast<uint64_t>(c.value.MilliValue()));
    }
  }
};

size_t HashSpec(const api::ResourceClaimSpec& spec, Hasher& h) {
  h.Mix(spec.requests.size());
  for (const api::DeviceRequest& r : spec.requests) {
    h.Mix(r.name.id());
    if (r.exactly) {
      h.Mix(1);
      h.Mix(*r.exactly);
    }
    h.Mix(r.first_available.size());
    for (const api::DeviceSubRequest& sub : r.first_available) {
      h.Mix(sub.name.id());
      h.Mix(sub.spec);
    }
  }
  h.Mix(spec.constraints.size());
  for (const api::DeviceConstraint& c : spec.constraints) {
    h.Mix(c.requests.size());
    for (api::Symbol s : c.requests) h.Mix(s.id());
    h.Mix(c.match_attribute.id());
    h.Mix(c.distinct_attribute.id());
  }
  return static_cast<size_t>(h.h);
}

size_t HashOptions(const AllocatorOptions& o, Hasher& h) {
  const Features& f = o.features;
  h.Mix((f.admin_access ? 1u : 0u) | (f.prioritized_list ? 2u : 0u) |
        (f.partitionable_devices ? 4u : 0u) | (f.device_taints ? 8u : 0u) |
        (f.consumable_capacity ? 16u : 0u) | (f.binding_conditions ? 32u : 0u));
  h.Mix(static_cast<uint64_t>(o.max_steps));
  return static_cast<size_t>(h.h);
}

// Adds to `pools` the pools with a device whose exclusive count or shared
// use (holders, consumed capacity) differs between `a` and `b` (both of one
// inventory).
void ChangedPools(const state::DraInventory& inv, const state::DraAllocations& a,
                  const state::DraAllocations& b, std::vector<int32_t>* pools) {
  auto mark = [&](int32_t dev) {
    if (dev < 0 || static_cast<size_t>(dev) >= inv.devices.size()) return;
    pools->push_back(inv.devices[static_cast<size_t>(dev)].pool_index);
  };
  const size_t n = a.in_use.size();
  constexpr size_t kBlock = 64;
  for (size_t i = 0; i < n; i += kBlock) {
    const size_t len = std::min(kBlock, n - i);
    if (std::memcmp(a.in_use.data() + i, b.in_use.data() + i, len * sizeof(uint16_t)) == 0)
      continue;
    for (size_t j = i; j < i + len; ++j) {
      if (a.in_use[j] != b.in_use[j]) mark(static_cast<int32_t>(j));
    }
  }
  for (const auto& [dev, use] : b.shared) {
    auto it = a.shared.find(dev);
    if (it == a.shared.end() || it->second != use) mark(dev);
  }
  for (const auto& [dev, use] : a.shared) {
    if (!b.shared.contains(dev)) mark(dev);
  }
  std::sort(pools->begin(), pools->end());
  pools->erase(std::unique(pools->begin(), pools->end()), pools->end());
}

}  // namespace

bool SameSearchSpec(const api::ResourceClaimSpec& a, const api::ResourceClaimSpec& b) {
  if (a.requests.size() != b.requests.size() || a.constraints.size() != b.constraints.size())
    return false;
  for (size_t i = 0; i < a.requests.size(); ++i) {
    const api::DeviceRequest& x = a.requests[i];
    const api::DeviceRequest& y = b.requests[i];
    if (x.name != y.name || x.exactly.has_value() != y.exactly.has_value() ||
        x.first_available.size() != y.first_available.size()) {
      return false;
    }
    if (x.exactly && !SameExact(*x.exactly, *y.exactly)) return false;
    for (size_t j = 0; j < x.first_available.size(); ++j) {
      if (x.first_available[j].name != y.first_available[j].name ||
          !SameExact(x.first_available[j].spec, y.first_available[j].spec)) {
        return false;
      }
    }
  }
  for (size_t i = 0; i < a.constraints.size(); ++i) {
    const api::DeviceConstraint& x = a.constraints[i];
    const api::DeviceConstraint& y = b.constraints[i];
    if (x.requests != y.requests || x.match_attribute != y.match_attribute ||
        x.distinct_attribute != y.distinct_attribute) {
      return false;
    }
  }
  return true;
}

NodeMemo::NodeMemo() = default;
NodeMemo::~NodeMemo() = default;

std::shared_ptr<const NodeMemo::View> NodeMemo::Begin(
    const std::shared_ptr<const state::DraSnapshot>& snapshot, size_t live_nodes) {
  if (snapshot == nullptr || snapshot->inventory == nullptr || snapshot->allocations == nullptr)
    return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  const bool same_era = era_ != nullptr && era_->inventory == snapshot->inventory &&
                        era_->classes == snapshot->classes && tracked_ != nullptr &&
                        tracked_->in_use.size() == snapshot->allocations->in_use.size();
  if (!same_era) {
    auto era = std::make_shared<Era>();
    era->id = static_cast<uint64_t>(++eras_);
    era->inventory = snapshot->inventory;
    era->classes = snapshot->classes;
    era->num_pools = snapshot->inventory->pools.size();
    era->pool_epochs = std::make_unique<std::atomic<uint64_t>[]>(era->num_pools);
    for (size_t i = 0; i < era->num_pools; ++i)
      era->pool_epochs[i].store(0, std::memory_order_relaxed);
    era_ = std::move(era);
    tracked_ = snapshot->allocations;
    ++epoch_;
    era_->first_epoch = epoch_;
    pool_log_.clear();
    node_log_.clear();
    log_floor_ = epoch_;
  } else if (tracked_ != snapshot->allocations) {
    std::vector<int32_t> pools;
    ChangedPools(*era_->inventory, *tracked_, *snapshot->allocations, &pools);
    tracked_ = snapshot->allocations;
    if (!pools.empty()) {
      ++epoch_;
      for (int32_t p : pools) {
        if (static_cast<size_t>(p) < era_->num_pools)
          era_->pool_epochs[p].store(epoch_, std::memory_order_relaxed);
        pool_log_.emplace_back(epoch_, p);
      }
      TrimLocked(pool_log_);
      changed_pools_ += static_cast<int64_t>(pools.size());
    }
  }
  if (entries_.load(std::memory_order_relaxed) > 2 * live_nodes + 64) SweepLocked();
  auto view = std::make_shared<View>();
  view->era_ = era_;
  view->epoch_ = epoch_;
  return view;
}

void NodeMemo::SweepLocked() {
  const uint64_t era = era_ != nullptr ? era_->id : 0;
  for (Shard& sh : shards_) {
    std::lock_guard<SpinLock> lock(sh.mu);
    // Entries of an old era, or of a Node object nobody else holds any more
    // (the node was updated or deleted).
    const size_t before = sh.entries.size();
    absl::erase_if(sh.entries, [&](const auto& kv) {
      return kv.second.era != era || kv.second.node.use_count() <= 1;
    });
    entries_.fetch_sub(before - sh.entries.size(), std::memory_order_relaxed);
  }
}

uint64_t NodeMemo::SpecOf(const Allocator& allocator) {
  Hasher h;
  HashOptions(allocator.options(), h);
  h.Mix(allocator.num_claims());
  for (size_t i = 0; i < allocator.num_claims(); ++i) HashSpec(allocator.claim(i)->spec, h);
  const size_t hash = static_cast<size_t>(h.h);
  std::lock_guard<std::mutex> lock(mu_);
  for (const Spec& s : specs_) {
    if (s.hash != hash || !(s.options == allocator.options()) ||
        s.claims.size() != allocator.num_claims())
      continue;
    bool same = true;
    for (size_t i = 0; i < s.claims.size() && same; ++i) {
      same = SameSearchSpec(s.claims[i]->spec, allocator.claim(i)->spec);
    }
    if (same) return s.id;
  }
  // Ids are never reused: entries of forgotten specs simply stop matching.
  if (specs_.size() >= kMaxSpecs) specs_.clear();
  Spec& s = specs_.emplace_back();
  s.hash = hash;
  s.id = next_spec_++;
  s.options = allocator.options();
  for (size_t i = 0; i < allocator.num_claims(); ++i) s.claims.push_back(allocator.claim(i));
  return s.id;
}

std::shared_ptr<const NodeAllocation> NodeMemo::Find(const View& view, uint64_t spec,
                                                     const api::Node* node) {
  Shard& sh = ShardOf(node);
  std::lock_guard<SpinLock> lock(sh.mu);
  auto it = sh.entries.find(node);
  if (it != sh.entries.end() && it->second.era == view.era_->id) {
    const Entry& e = it->second;
    for (const Slot& s : e.slots) {
      if (s.spec != spec) continue;
      // Computed on this view or an earlier one, and no pool the node sees
      // changed since.
      bool valid = s.epoch <= view.epoch_;
      for (int32_t p : e.pools) {
        valid = valid && view.era_->pool_epochs[p].load(std::memory_order_relaxed) <= s.epoch;
      }
      if (!valid) break;
      ++sh.hits;
      return s.outcome;
    }
  }
  ++sh.misses;
  return nullptr;
}

void NodeMemo::Store(const View& view, uint64_t spec, const std::shared_ptr<const api::Node>& node,
                     std::shared_ptr<const NodeAllocation> outcome) {
  using R = NodeAllocation::Result;
  if (outcome == nullptr || node == nullptr || spec == 0) return;
  if (outcome->result != R::kSuccess && outcome->result != R::kUnsatisfiable &&
      outcome->result != R::kNodeError)
    return;
  Shard& sh = ShardOf(node.get());
  std::lock_guard<SpinLock> lock(sh.mu);
  auto [it, inserted] = sh.entries.try_emplace(node.get());
  Entry& e = it->second;
  if (inserted) entries_.fetch_add(1, std::memory_order_relaxed);
  if (inserted || e.era != view.era_->id) {
    e.node = node;
    e.era = view.era_->id;
    e.slots.clear();
    e.pools.clear();
    std::vector<int32_t> slices;
    view.era_->inventory->SlicesForNode(*node, &slices);
    for (int32_t si : slices) {
      const int32_t p = view.era_->inventory->slices[static_cast<size_t>(si)].pool_index;
      if (std::find(e.pools.begin(), e.pools.end(), p) == e.pools.end()) e.pools.push_back(p);
    }
  }
  Slot* slot = nullptr;
  for (Slot& s : e.slots) {
    if (s.spec == spec) slot = &s;
  }
  if (slot == nullptr && e.slots.size() < kSlotsPerNode) slot = &e.slots.emplace_back();
  if (slot == nullptr) {
    slot = &*std::min_element(e.slots.begin(), e.slots.end(),
                              [](const Slot& a, const Slot& b) { return a.epoch < b.epoch; });
  }
  slot->spec = spec;
  slot->epoch = view.epoch_;
  slot->outcome = std::move(outcome);
  ++sh.stores;
}

bool NodeMemo::PoolNodes(const Era& era, int32_t pool, std::vector<std::string>* out) {
  const state::DraInventory& inv = *era.inventory;
  if (pool < 0 || static_cast<size_t>(pool) >= inv.pools.size()) return false;
  for (int32_t si : inv.pools[static_cast<size_t>(pool)].slices) {
    const state::DraSlice& s = inv.slices[static_cast<size_t>(si)];
    if (s.num_devices == 0) continue;  // no device of it is visible anywhere
    if (s.slice->spec.node_selection != api::SliceNodeSelection::kNodeName) return false;
    out->emplace_back(s.slice->spec.node_name.view());
  }
  return true;
}

bool NodeMemo::ChangedNodesSince(const View& view, uint64_t* since,
                                 std::vector<std::string>* changed) {
  const uint64_t from = *since;
  const uint64_t to = view.epoch_;
  *since = to;
  std::lock_guard<std::mutex> lock(mu_);
  if (from == 0 || from > to || era_ != view.era_ || from < view.era_->first_epoch ||
      from < log_floor_) {
    return false;
  }
  const size_t before = changed->size();
  // Entries are in epoch order: walk back from the newest one past `from`.
  for (auto it = pool_log_.rbegin(); it != pool_log_.rend() && it->first > from; ++it) {
    if (it->first > to) continue;
    if (!PoolNodes(*view.era_, it->second, changed)) {
      changed->resize(before);
      return false;
    }
  }
  for (auto it = node_log_.rbegin(); it != node_log_.rend() && it->first > from; ++it) {
    if (it->first <= to) changed->push_back(it->second);
  }
  return true;
}

void NodeMemo::Invalidate(const View& view, std::string_view node_name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (era_ != view.era_) return;  // the era's results are all dropped anyway
  // A new epoch: the next views report it to marks set before it, once.
  node_log_.emplace_back(++epoch_, std::string(node_name));
  TrimLocked(node_log_);
}

NodeMemo::Counters NodeMemo::counters() const {
  Counters c;
  for (const Shard& sh : shards_) {
    std::lock_guard<SpinLock> lock(sh.mu);
    c.hits += sh.hits;
    c.misses += sh.misses;
    c.stores += sh.stores;
  }
  std::lock_guard<std::mutex> lock(mu_);
  c.eras = eras_;
  c.changed_pools = changed_pools_;
  return c;
}

}  // namespace gantry::dra
