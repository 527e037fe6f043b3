#include "src/state/dra_state.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gantry/util/strings.h"

namespace gantry::state {

int32_t DraInventory::Find(api::Symbol driver, api::Symbol pool, api::Symbol device) const {
  auto it = device_index.find(DeviceKey{driver, pool, device});
  return it == device_index.end() ? -1 : it->second;
}

namespace {

bool SliceOnNode(const api::ResourceSlice& s, const api::Node& node) {
  switch (s.spec.node_selection) {
    case api::SliceNodeSelection::kNodeName:
      return s.spec.node_name.view() == node.meta.name;
    case api::SliceNodeSelection::kAllNodes:
      return true;
    case api::SliceNodeSelection::kNodeSelector:
      return s.spec.node_selector != nullptr &&
             s.spec.node_selector->Matches(node.meta.labels, node.meta.name);
    case api::SliceNodeSelection::kPerDevice:
      return true;  // checked per device
  }
  return false;
}

}  // namespace

void DraInventory::SlicesForNode(const api::Node& node, std::vector<int32_t>* out) const {
  out->clear();
  if (const DraNodeEntry* e = FindNode(node.meta.name))
    out->insert(out->end(), e->slices.begin(), e->slices.end());
  bool added = false;
  for (int32_t s : other_slices) {
    if (SliceOnNode(*slices[s].slice, node)) {
      out->push_back(s);
      added = true;
    }
  }
  if (added) std::sort(out->begin(), out->end());
}

const DraNodeEntry* DraInventory::FindNode(std::string_view node_name) const {
  auto it = nodes.find(gantry::AsAbsl(node_name));
  return it == nodes.end() ? nullptr : &it->second;
}

namespace {

std::shared_ptr<const api::NodeSelector> MakePinSelector(std::string_view node_name) {
  auto sel = std::make_shared<api::NodeSelector>();
  api::NodeSelectorTerm t;
  api::Requirement r;
  r.key = api::Symbol::Intern("metadata.name");
  r.op = api::SelectorOp::kIn;
  r.values.push_back(api::Symbol::Intern(node_name));
  t.match_fields.push_back(std::move(r));
  sel->terms.push_back(std::move(t));
  return sel;
}

}  // namespace

std::shared_ptr<const api::NodeSelector> DraInventory::NodePinSelector(
    std::string_view node_name) const {
  if (const DraNodeEntry* e = FindNode(node_name)) return e->pin;
  return MakePinSelector(node_name);
}

bool DraInventory::DeviceOnNode(int32_t i, const api::Node& node) const {
  const DraDevice& d = devices[i];
  const api::ResourceSlice& s = *slices[d.slice_index].slice;
  if (s.spec.node_selection != api::SliceNodeSelection::kPerDevice) return SliceOnNode(s, node);
  const api::Device& dev = *d.device;
  if (!dev.node_name.empty()) return dev.node_name.view() == node.meta.name;
  if (dev.all_nodes) return true;
  if (dev.node_selector) return dev.node_selector->Matches(node.meta.labels, node.meta.name);
  return false;
}

const AttributeTable* DraInventory::Attributes(api::Symbol name) const {
  std::lock_guard<std::mutex> lock(memo_mu_);
  auto it = attributes_.find(name);
  if (it != attributes_.end()) return it->second.get();
  auto table = std::make_unique<AttributeTable>();
  table->entries.resize(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    const api::Device& d = *devices[i].device;
    AttributeTable::Entry& e = table->entries[i];
    if (const api::DeviceAttribute* a = d.FindAttribute(name)) {
      e = {&a->value, 1, true};
    } else if (const api::DeviceListAttribute* l = d.FindListAttribute(name)) {
      e = {l->values.data(), static_cast<uint32_t>(l->values.size()), true};
    }
  }
  const AttributeTable* raw = table.get();
  attributes_.emplace(name, std::move(table));
  return raw;
}

const SelectorMemo* DraInventory::Memo(std::string_view expression) const {
  std::lock_guard<std::mutex> lock(memo_mu_);
  auto it = memo_.find(gantry::AsAbsl(expression));
  if (it != memo_.end()) return it->second.get();
  auto memo = std::make_unique<SelectorMemo>(devices.size());
  const SelectorMemo* raw = memo.get();
  memo_.emplace(std::string(expression), std::move(memo));
  return raw;
}

bool SharedUse::Apply(const api::DeviceRequestAllocationResult& result, int sign) {
  holders += sign;
  for (const api::CapacityRequest& c : result.consumed_capacity) {
    const int64_t v = sign * c.value.MilliValue();
    if (v == 0) continue;
    // Capacity names in results use the slice's spelling; stored qualified.
    const api::Symbol name = api::QualifyName(c.name.view(), result.driver);
    auto it = std::find_if(capacity.begin(), capacity.end(),
                           [&](const auto& entry) { return entry.first == name; });
    if (it == capacity.end()) {
      capacity.emplace_back(name, v);
    } else if ((it->second += v) == 0) {
      capacity.erase(it);
    }
  }
  return holders > 0;
}

int64_t DraAllocations::Consumed(int32_t device, api::Symbol capacity) const {
  auto it = shared.find(device);
  if (it == shared.end()) return 0;
  for (const auto& [name, v] : it->second.capacity) {
    if (name == capacity) return v;
  }
  return 0;
}

const api::DeviceClass* DraSnapshot::FindClass(std::string_view name) const {
  if (!classes) return nullptr;
  auto it = classes->find(gantry::AsAbsl(name));
  return it == classes->end() ? nullptr : it->second.get();
}

// ---------------------------------------------------------------------------

struct DraState::Impl {
  std::map<std::string, std::shared_ptr<const api::ResourceSlice>> slices;  // by name
  std::map<std::string, std::shared_ptr<const api::DeviceTaintRule>> rules;
  std::shared_ptr<DeviceClassMap> classes = std::make_shared<DeviceClassMap>();
  absl::flat_hash_map<std::string, std::shared_ptr<const api::ResourceClaim>> claims;  // ns/name
  // Claims whose stored version was written by the scheduler (AssumeClaim)
  // and not yet confirmed by the informer: ns/name -> the informer's newest
  // version of it (null when the informer has delivered none yet).
  absl::flat_hash_map<std::string, std::shared_ptr<const api::ResourceClaim>> assumed;
  int64_t stale_claim_events = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<const api::ResourceClaimTemplate>> templates;
  struct InFlight {
    api::AllocationResult allocation;
    std::string group_uid;                     // PodGroup claims: the group the allocation is for
    absl::flat_hash_set<std::string> sharers;  // PodGroup claims: member pods holding it
  };
  absl::flat_hash_map<std::string, InFlight> in_flight;  // claim uid
  // PodGroup-level claims of native PodGroups, by "ns/name".
  absl::flat_hash_map<std::string, PodGroupClaims> pod_group_claims;
  // Extended resource name -> the DeviceClass serving it (explicit and
  // implicit names), rebuilt with the classes.
  absl::flat_hash_map<std::string, std::string> extended_resources;
  // Claims the scheduler created for pods' extended resources (annotation
  // resource.kubernetes.io/extended-resource-claim: "true"): controlling pod
  // UID -> "ns/name".
  absl::flat_hash_map<std::string, std::string> extended_claims;

  // Source of truth for allocations.
  absl::flat_hash_map<DeviceKey, int32_t> exclusive;
  absl::flat_hash_map<DeviceKey, SharedUse> shared;  // devices with at least one holder

  std::shared_ptr<const DraInventory> inventory;
  bool inventory_dirty = true;
  std::vector<uint16_t> dense;  // exclusive counts by inventory index
  int64_t unknown = 0;          // keys of `exclusive` not in the inventory
  uint64_t alloc_generation = 1;
  uint64_t inventory_generation = 0;
  bool classes_dirty = true;
  std::shared_ptr<const DraSnapshot> snapshot;
  std::shared_ptr<const DraAllocations> allocations;
  uint64_t snapshot_alloc_generation = 0;
  int64_t rebuilds = 0;
  // Preemption what-if: claims shown as released, and the derived view of
  // `released_base` (rebuilt when the base snapshot changes).
  std::vector<std::shared_ptr<const api::ResourceClaim>> released;
  std::shared_ptr<const DraSnapshot> released_base;
  std::shared_ptr<const DraSnapshot> released_snapshot;
};

DraState::DraState() : impl_(std::make_unique<Impl>()) {}
DraState::~DraState() = default;

namespace {
std::string NsKey(std::string_view ns, std::string_view name) {
  return gantry::StrCat(ns, "/", name);
}
}  // namespace

void DraState::UpsertSlice(std::shared_ptr<const api::ResourceSlice> slice) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->slices[slice->meta.name] = std::move(slice);
  impl_->inventory_dirty = true;
}

void DraState::DeleteSlice(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->slices.erase(std::string(name));
  impl_->inventory_dirty = true;
}

void DraState::UpsertTaintRule(std::shared_ptr<const api::DeviceTaintRule> rule) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->rules[rule->meta.name] = std::move(rule);
  impl_->inventory_dirty = true;
}

void DraState::DeleteTaintRule(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->rules.erase(std::string(name));
  impl_->inventory_dirty = true;
}

void DraState::UpsertClass(std::shared_ptr<const api::DeviceClass> cls) {
  std::lock_guard<std::mutex> lock(mu_);
  auto copy = std::make_shared<DeviceClassMap>(*impl_->classes);
  (*copy)[cls->meta.name] = std::move(cls);
  impl_->classes = std::move(copy);
  impl_->classes_dirty = true;
  RebuildExtendedResourcesLocked();
}

void DraState::DeleteClass(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto copy = std::make_shared<DeviceClassMap>(*impl_->classes);
  copy->erase(gantry::AsAbsl(name));
  impl_->classes = std::move(copy);
  impl_->classes_dirty = true;
  RebuildExtendedResourcesLocked();
}

void DraState::RebuildExtendedResourcesLocked() {
  absl::flat_hash_map<std::string, std::string>& out = impl_->extended_resources;
  out.clear();
  // Explicit names: of several classes naming one resource, the newest
  // (creationTimestamp) wins, on a tie the lexicographically first name.
  absl::flat_hash_map<std::string_view, const api::DeviceClass*> winner;
  for (const auto& [name, cls] : *impl_->classes) {
    if (cls->spec.extended_resource_name.empty()) continue;
    const api::DeviceClass*& w = winner[cls->spec.extended_resource_name.view()];
    if (w == nullptr || cls->meta.creation_micros > w->meta.creation_micros ||
        (cls->meta.creation_micros == w->meta.creation_micros && cls->meta.name < w->meta.name)) {
      w = cls.get();
    }
  }
  for (const auto& [resource, cls] : winner) out.emplace(resource, cls->meta.name);
  // Every class also serves its implicit name (validation keeps explicit
  // names out of that prefix).
  for (const auto& [name, cls] : *impl_->classes) {
    out.insert_or_assign(gantry::StrCat(api::kImplicitExtendedResourcePrefix, name), name);
  }
}

std::string DraState::ExtendedResourceClass(std::string_view resource) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = impl_->extended_resources.find(gantry::AsAbsl(resource));
  return it == impl_->extended_resources.end() ? std::string() : it->second;
}

void DraState::ApplyAllocationLocked(const api::AllocationResult& a, int sign) {
  Impl& m = *impl_;
  const DraInventory* inv = m.inventory.get();
  for (const api::DeviceRequestAllocationResult& r : a.results) {
    if (r.admin_access) continue;  // admin access never takes a device away
    DeviceKey key{r.driver, r.pool, r.device};
    if (!r.share_id.empty()) {
      auto it = m.shared.try_emplace(key).first;
      if (!it->second.Apply(r, sign)) m.shared.erase(it);
      continue;
    }
    int32_t& count = m.exclusive[key];
    const bool was_present = count > 0;
    count += sign;
    const bool present = count > 0;
    if (!present) m.exclusive.erase(key);
    if (inv != nullptr && !m.inventory_dirty) {
      int32_t idx = inv->Find(r.driver, r.pool, r.device);
      if (idx >= 0) {
        int32_t v = static_cast<int32_t>(m.dense[idx]) + sign;
        m.dense[idx] = static_cast<uint16_t>(std::clamp(v, 0, 65535));
      } else if (was_present != present) {
        m.unknown += present ? 1 : -1;
      }
    }
  }
  ++m.alloc_generation;
}

void DraState::UpsertClaimLocked(std::shared_ptr<const api::ResourceClaim> claim) {
  Impl& m = *impl_;
  const std::string key = NsKey(claim->meta.namespace_.view(), claim->meta.name);
  auto it = m.claims.find(key);
  if (it != m.claims.end() && it->second->status.allocation) {
    ApplyAllocationLocked(*it->second->status.allocation, -1);
  }
  if (claim->status.allocation) {
    ApplyAllocationLocked(*claim->status.allocation, +1);
    // Once the allocation is visible in the claim, it is no longer in flight.
    auto fl = m.in_flight.find(claim->meta.uid);
    if (fl != m.in_flight.end()) {
      ApplyAllocationLocked(fl->second.allocation, -1);
      m.in_flight.erase(fl);
    }
  }
  if (const std::string* a = claim->meta.FindAnnotation(api::kExtendedResourceClaimAnnotation);
      a != nullptr && *a == "true") {
    const api::OwnerReference* owner = claim->meta.ControllerRef();
    if (owner != nullptr && owner->kind.view() == "Pod" && !owner->uid.empty())
      m.extended_claims[owner->uid] = key;
  }
  m.claims[key] = std::move(claim);
}

namespace {

// resourceVersions are opaque to clients but etcd-backed servers issue
// increasing integers, which the assume cache compares as upstream's does; a
// version that is not an integer (or is empty, as in snapshots) orders
// nothing: both comparisons below are false for it.
bool ParseVersion(std::string_view v, uint64_t* out) {
  const char* end = v.data() + v.size();
  auto [ptr, ec] = std::from_chars(v.data(), end, *out);
  return !v.empty() && ec == std::errc() && ptr == end;
}

// True when both versions are integers and `a` is older than `b`.
bool OlderVersion(std::string_view a, std::string_view b) {
  uint64_t va = 0, vb = 0;
  return ParseVersion(a, &va) && ParseVersion(b, &vb) && va < vb;
}

// True when both versions are integers and `a` is not older than `b`.
bool SameOrNewerVersion(std::string_view a, std::string_view b) {
  uint64_t va = 0, vb = 0;
  return ParseVersion(a, &va) && ParseVersion(b, &vb) && va >= vb;
}

}  // namespace

void DraState::UpsertClaim(std::shared_ptr<const api::ResourceClaim> claim) {
  std::lock_guard<std::mutex> lock(mu_);
  Impl& m = *impl_;
  const std::string key = NsKey(claim->meta.namespace_.view(), claim->meta.name);
  auto it = m.claims.find(key);
  if (it != m.claims.end() && it->second->meta.uid == claim->meta.uid &&
      OlderVersion(claim->meta.resource_version, it->second->meta.resource_version)) {
    // A late event (an older LIST item, the answer to an earlier write of
    // ours): the stored claim is newer, keep it.
    ++m.stale_claim_events;
    if (auto a = m.assumed.find(key); a != m.assumed.end()) a->second = std::move(claim);
    return;
  }
  m.assumed.erase(key);  // the informer has caught up with what we wrote
  UpsertClaimLocked(std::move(claim));
}

void DraState::AssumeClaim(std::shared_ptr<const api::ResourceClaim> claim) {
  std::lock_guard<std::mutex> lock(mu_);
  Impl& m = *impl_;
  const std::string key = NsKey(claim->meta.namespace_.view(), claim->meta.name);
  auto it = m.claims.find(key);
  if (it != m.claims.end() && it->second->meta.uid == claim->meta.uid &&
      SameOrNewerVersion(it->second->meta.resource_version, claim->meta.resource_version)) {
    // The informer delivered this write (or a newer version) before the
    // writer's caller got here: the stored claim is at least as new as what
    // we wrote, so there is nothing to assume and nothing to replace; the
    // in-flight entry goes as it would on a store.
    if (auto fl = m.in_flight.find(claim->meta.uid); fl != m.in_flight.end()) {
      ApplyAllocationLocked(fl->second.allocation, -1);
      m.in_flight.erase(fl);
    }
    return;
  }
  if (!m.assumed.contains(key)) {
    m.assumed[key] = it != m.claims.end() ? it->second : nullptr;
  }
  UpsertClaimLocked(std::move(claim));
}

bool DraState::IsClaimAssumed(std::string_view ns, std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->assumed.contains(NsKey(ns, name));
}

void DraState::RestoreClaim(std::string_view ns, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  Impl& m = *impl_;
  auto a = m.assumed.find(NsKey(ns, name));
  if (a == m.assumed.end()) return;
  std::shared_ptr<const api::ResourceClaim> informer = std::move(a->second);
  m.assumed.erase(a);
  if (informer != nullptr) {
    UpsertClaimLocked(std::move(informer));
    return;
  }
  // The informer never delivered the claim: it is not known to exist.
  auto it = m.claims.find(NsKey(ns, name));
  if (it == m.claims.end()) return;
  if (it->second->status.allocation) ApplyAllocationLocked(*it->second->status.allocation, -1);
  m.claims.erase(it);
}

void DraState::DeleteClaim(std::string_view ns, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->assumed.erase(NsKey(ns, name));
  auto it = impl_->claims.find(NsKey(ns, name));
  if (it == impl_->claims.end()) return;
  if (it->second->status.allocation) ApplyAllocationLocked(*it->second->status.allocation, -1);
  if (const api::OwnerReference* owner = it->second->meta.ControllerRef(); owner != nullptr) {
    auto e = impl_->extended_claims.find(owner->uid);
    if (e != impl_->extended_claims.end() && e->second == it->first)
      impl_->extended_claims.erase(e);
  }
  impl_->claims.erase(it);
}

std::shared_ptr<const api::ResourceClaim> DraState::FindExtendedResourceClaim(
    std::string_view pod_uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto e = impl_->extended_claims.find(gantry::AsAbsl(pod_uid));
  if (e == impl_->extended_claims.end()) return nullptr;
  auto it = impl_->claims.find(e->second);
  return it == impl_->claims.end() ? nullptr : it->second;
}

void DraState::UpsertTemplate(std::shared_ptr<const api::ResourceClaimTemplate> tmpl) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->templates[NsKey(tmpl->meta.namespace_.view(), tmpl->meta.name)] = std::move(tmpl);
}

void DraState::DeleteTemplate(std::string_view ns, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->templates.erase(NsKey(ns, name));
}

std::shared_ptr<const api::ResourceClaim> DraState::GetClaim(std::string_view ns,
                                                             std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = impl_->claims.find(NsKey(ns, name));
  return it == impl_->claims.end() ? nullptr : it->second;
}

std::shared_ptr<const api::ResourceClaimTemplate> DraState::GetTemplate(
    std::string_view ns, std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = impl_->templates.find(NsKey(ns, name));
  return it == impl_->templates.end() ? nullptr : it->second;
}

std::shared_ptr<const api::DeviceClass> DraState::GetClass(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = impl_->classes->find(gantry::AsAbsl(name));
  return it == impl_->classes->end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const api::ResourceClaim>> DraState::Claims() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<const api::ResourceClaim>> out;
  out.reserve(impl_->claims.size());
  for (const auto& [k, c] : impl_->claims) out.push_back(c);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a->meta.namespace_.view(), std::string_view(a->meta.name)) <
           std::make_pair(b->meta.namespace_.view(), std::string_view(b->meta.name));
  });
  return out;
}

void DraState::AddInFlight(const std::string& claim_uid, const api::AllocationResult& allocation) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = impl_->in_flight.find(claim_uid);
  if (it != impl_->in_flight.end()) {
    ApplyAllocationLocked(it->second.allocation, -1);
    impl_->in_flight.erase(it);
  }
  ApplyAllocationLocked(allocation, +1);
  impl_->in_flight.emplace(claim_uid, Impl::InFlight{allocation, {}, {}});
}

void DraState::AddInFlightForGroup(const std::string& claim_uid,
                                   const api::AllocationResult& allocation,
                                   const std::string& group_uid, const std::string& sharer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = impl_->in_flight.find(claim_uid);
  if (it != impl_->in_flight.end()) {
    if (it->second.group_uid == group_uid) {
      it->second.sharers.insert(sharer);
      return;
    }
    ApplyAllocationLocked(it->second.allocation, -1);
    impl_->in_flight.erase(it);
  }
  ApplyAllocationLocked(allocation, +1);
  impl_->in_flight.emplace(claim_uid, Impl::InFlight{allocation, group_uid, {sharer}});
}

std::optional<api::AllocationResult> DraState::InFlightForGroup(
    const std::string& claim_uid, const std::string& group_uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = impl_->in_flight.find(claim_uid);
  if (it == impl_->in_flight.end() || group_uid.empty() || it->second.group_uid != group_uid)
    return std::nullopt;
  return it->second.allocation;
}

void DraState::RemoveInFlight(const std::string& claim_uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = impl_->in_flight.find(claim_uid);
  if (it == impl_->in_flight.end()) return;
  ApplyAllocationLocked(it->second.allocation, -1);
  impl_->in_flight.erase(it);
}

void DraState::RemoveInFlightSharer(const std::string& claim_uid, const std::string& sharer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = impl_->in_flight.find(claim_uid);
  if (it == impl_->in_flight.end() || it->second.group_uid.empty()) return;
  it->second.sharers.erase(sharer);
  if (!it->second.sharers.empty()) return;
  ApplyAllocationLocked(it->second.allocation, -1);
  impl_->in_flight.erase(it);
}

void DraState::SetPodGroupClaims(PodGroupClaims group) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string key = NsKey(group.namespace_, group.name);
  if (group.claims.empty()) {
    impl_->pod_group_claims.erase(key);
  } else {
    impl_->pod_group_claims.insert_or_assign(std::move(key), std::move(group));
  }
}

void DraState::RemovePodGroupClaims(std::string_view ns, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->pod_group_claims.erase(NsKey(ns, name));
}

std::optional<PodGroupClaims> DraState::FindPodGroupClaims(std::string_view ns,
                                                           std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (impl_->pod_group_claims.empty()) return std::nullopt;
  auto it = impl_->pod_group_claims.find(NsKey(ns, name));
  if (it == impl_->pod_group_claims.end()) return std::nullopt;
  return it->second;
}

void DraState::SetDeviceStatusWait(DeviceStatusWait wait) {
  std::lock_guard<std::mutex> lock(mu_);
  device_status_wait_ = std::move(wait);
}

bool DraState::HasDeviceStatusWait() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<bool>(device_status_wait_);
}

bool DraState::WaitForDeviceStatus(int64_t micros) const {
  DeviceStatusWait wait;
  {
    std::lock_guard<std::mutex> lock(mu_);
    wait = device_status_wait_;
  }
  return wait ? wait(micros) : false;
}

bool DraState::IsInFlight(const std::string& claim_uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->in_flight.contains(claim_uid);
}

namespace {

// Validates one pool: duplicate device names, duplicate counter sets,
// references to unknown counter sets or counters.
void ValidatePool(DraPool& pool, const std::vector<DraSlice>& slices) {
  absl::flat_hash_set<api::Symbol> names;
  absl::flat_hash_map<api::Symbol, const api::CounterSet*> sets;
  for (int32_t si : pool.slices) {
    for (const api::CounterSet& cs : slices[si].slice->spec.shared_counters) {
      if (!sets.emplace(cs.name, &cs).second) {
        pool.invalid = true;
        pool.invalid_reason = gantry::StrCat("duplicate counter set name ", cs.name.view());
        return;
      }
    }
  }
  for (int32_t si : pool.slices) {
    for (const api::Device& d : slices[si].slice->spec.devices) {
      if (!names.insert(d.name).second) {
        pool.invalid = true;
        pool.invalid_reason = gantry::StrCat("duplicate device name ", d.name.view());
        return;
      }
      for (const api::DeviceCounterConsumption& cc : d.consumes_counters) {
        auto it = sets.find(cc.counter_set);
        if (it == sets.end()) {
          pool.invalid = true;
          pool.invalid_reason = gantry::StrCat(
              "device ", d.name.view(), " references unknown counter set ", cc.counter_set.view());
          return;
        }
        for (const api::Counter& c : cc.counters) {
          bool found = false;
          for (const api::Counter& have : it->second->counters) found |= have.name == c.name;
          if (!found) {
            pool.invalid = true;
            pool.invalid_reason =
                gantry::StrCat("device ", d.name.view(), " references unknown counter ",
                               c.name.view(), " in counter set ", cc.counter_set.view());
            return;
          }
        }
      }
    }
  }
}

}  // namespace

void DraState::RebuildInventoryLocked() {
  Impl& m = *impl_;
  auto inv = std::make_shared<DraInventory>();
  inv->generation = ++m.inventory_generation;
  // Group by (driver, pool), keeping the highest generation.
  struct Group {
    int64_t generation = 0;
    int64_t count_hint = 0;
    std::vector<const std::shared_ptr<const api::ResourceSlice>*> slices;
  };
  std::map<std::string, Group> groups;  // "driver/pool"
  for (const auto& [name, s] : m.slices) {
    std::string key = gantry::StrCat(s->spec.driver.view(), "/", s->spec.pool.name.view());
    Group& g = groups[key];
    if (g.slices.empty() || s->spec.pool.generation > g.generation) {
      g.slices.clear();
      g.generation = s->spec.pool.generation;
      g.count_hint = s->spec.pool.resource_slice_count;
    } else if (s->spec.pool.generation < g.generation) {
      continue;
    }
    g.slices.push_back(&s);  // m.slices is ordered by name, so slices are sorted
  }
  // Pools in key order, pools with binding conditions last.
  std::vector<std::pair<bool, const std::string*>> order;
  for (const auto& [key, g] : groups) {
    bool bc = false;
    for (auto* sp : g.slices) {
      for (const api::Device& d : (*sp)->spec.devices) bc |= !d.binding_conditions.empty();
    }
    order.emplace_back(bc, &key);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return !a.first && b.first; });
  for (const auto& [bc, keyp] : order) {
    const Group& g = groups[*keyp];
    DraPool pool;
    const api::ResourceSlice& first = **g.slices.front();
    pool.driver = first.spec.driver;
    pool.name = first.spec.pool.name;
    pool.key = *keyp;
    pool.generation = g.generation;
    pool.has_binding_conditions = bc;
    pool.incomplete = static_cast<int64_t>(g.slices.size()) != g.count_hint;
    const int32_t pool_index = static_cast<int32_t>(inv->pools.size());
    for (auto* sp : g.slices) {
      DraSlice ds;
      ds.slice = *sp;
      ds.pool_index = pool_index;
      ds.first_device = static_cast<int32_t>(inv->devices.size());
      ds.num_devices = static_cast<int32_t>((*sp)->spec.devices.size());
      const int32_t slice_index = static_cast<int32_t>(inv->slices.size());
      for (const api::CounterSet& cs : (*sp)->spec.shared_counters)
        pool.counter_sets.push_back(&cs);
      for (const api::Device& d : (*sp)->spec.devices) {
        DraDevice dd;
        dd.device = &d;
        dd.driver = pool.driver;
        dd.pool = pool.name;
        dd.pool_index = pool_index;
        dd.slice_index = slice_index;
        dd.taints = d.taints;
        const int32_t di = static_cast<int32_t>(inv->devices.size());
        if (!d.consumes_counters.empty()) pool.counter_consumers.push_back(di);
        inv->device_index.emplace(DeviceKey{pool.driver, pool.name, d.name}, di);
        inv->devices.push_back(std::move(dd));
      }
      pool.slices.push_back(slice_index);
      if (ds.num_devices > 0) {
        if ((*sp)->spec.node_selection == api::SliceNodeSelection::kNodeName) {
          DraNodeEntry& e = inv->nodes[gantry::AsAbsl((*sp)->spec.node_name.view())];
          e.slices.push_back(slice_index);
          for (int32_t i = 0; i < ds.num_devices; ++i) e.devices.push_back(ds.first_device + i);
        } else {
          inv->other_slices.push_back(slice_index);
        }
      }
      inv->slices.push_back(std::move(ds));
    }
    ValidatePool(pool, inv->slices);
    inv->pools.push_back(std::move(pool));
  }
  for (auto& [name, e] : inv->nodes) e.pin = MakePinSelector(name);
  // DeviceTaintRules.
  for (const auto& [name, rule] : m.rules) {
    if (!rule->spec.device_selector) continue;
    const api::DeviceTaintSelector& sel = *rule->spec.device_selector;
    for (DraDevice& d : inv->devices) {
      if (sel.Matches(d.driver, d.pool, d.device->name)) d.taints.push_back(rule->spec.taint);
    }
  }
  inv->device_flags.assign(inv->devices.size(), 0);
  for (size_t i = 0; i < inv->devices.size(); ++i) {
    const DraDevice& d = inv->devices[i];
    const DraPool& pool = inv->pools[static_cast<size_t>(d.pool_index)];
    uint8_t f = 0;
    if (pool.incomplete) f |= DraInventory::kPoolIncomplete;
    if (pool.invalid) f |= DraInventory::kPoolInvalid;
    if (!d.device->binding_conditions.empty()) f |= DraInventory::kBindingConditions;
    if (d.device->allow_multiple_allocations) f |= DraInventory::kMultiAllocation;
    if (!d.device->consumes_counters.empty()) f |= DraInventory::kConsumesCounters;
    if (!d.taints.empty()) f |= DraInventory::kTainted;
    inv->device_flags[i] = f;
  }
  m.inventory = std::move(inv);
  m.inventory_dirty = false;
  // Dense allocation counters.
  m.dense.assign(m.inventory->devices.size(), 0);
  m.unknown = 0;
  for (const auto& [key, count] : m.exclusive) {
    int32_t idx = m.inventory->Find(key.driver, key.pool, key.device);
    if (idx >= 0) {
      m.dense[idx] = static_cast<uint16_t>(std::clamp(count, 0, 65535));
    } else {
      ++m.unknown;
    }
  }
  ++m.alloc_generation;
  ++m.rebuilds;
}

std::shared_ptr<const DraSnapshot> DraState::Snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  Impl& m = *impl_;
  bool changed = false;
  if (m.inventory_dirty || !m.inventory) {
    RebuildInventoryLocked();
    changed = true;
  }
  if (m.snapshot_alloc_generation != m.alloc_generation || !m.allocations) {
    auto a = std::make_shared<DraAllocations>();
    a->generation = m.alloc_generation;
    a->in_use = m.dense;
    for (const auto& [key, use] : m.shared) {
      int32_t idx = m.inventory->Find(key.driver, key.pool, key.device);
      if (idx >= 0) a->shared[idx] = use;
    }
    a->unknown_devices = m.unknown;
    m.allocations = std::move(a);
    m.snapshot_alloc_generation = m.alloc_generation;
    changed = true;
  }
  if (m.classes_dirty) {
    m.classes_dirty = false;
    changed = true;
  }
  if (changed || !m.snapshot) {
    auto s = std::make_shared<DraSnapshot>();
    s->inventory = m.inventory;
    s->allocations = m.allocations;
    s->classes = m.classes;
    m.snapshot = std::move(s);
  }
  if (m.released.empty()) return m.snapshot;
  if (m.released_base != m.snapshot) {
    std::vector<const api::AllocationResult*> allocations;
    for (const auto& c : m.released) {
      if (c->status.allocation) allocations.push_back(&*c->status.allocation);
    }
    m.released_snapshot = SnapshotWithReleased(*m.snapshot, allocations);
    m.released_base = m.snapshot;
  }
  return m.released_snapshot;
}

void DraState::SetReleasedClaims(std::vector<std::shared_ptr<const api::ResourceClaim>> claims) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->released = std::move(claims);
  impl_->released_base.reset();
  impl_->released_snapshot.reset();
}

std::vector<std::shared_ptr<const api::ResourceClaim>> DraState::ReleasableClaims(
    const std::vector<std::string>& claim_keys, const LeavingConsumer& leaving) const {
  std::vector<std::shared_ptr<const api::ResourceClaim>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& key : claim_keys) {
    auto it = impl_->claims.find(key);
    if (it == impl_->claims.end() || !it->second->IsAllocated()) continue;
    const auto& rf = it->second->status.reserved_for;
    if (rf.empty()) continue;  // held by no pod: evicting pods frees nothing
    bool all = true;
    for (const api::ResourceClaimConsumerReference& c : rf) all = all && leaving(*it->second, c);
    if (!all) continue;
    bool dup = false;
    for (const auto& o : out) dup = dup || o.get() == it->second.get();
    if (!dup) out.push_back(it->second);
  }
  return out;
}

namespace {

// Adds (sign +1) or gives back (sign -1) the devices of `r` in `a`.
void ApplyResults(const DraInventory& inv, const api::AllocationResult& r, int sign,
                  DraAllocations* a) {
  for (const api::DeviceRequestAllocationResult& d : r.results) {
    if (d.admin_access) continue;
    const int32_t idx = inv.Find(d.driver, d.pool, d.device);
    if (idx < 0) continue;
    if (d.share_id.empty()) {
      if (static_cast<size_t>(idx) >= a->in_use.size()) continue;
      uint16_t& n = a->in_use[static_cast<size_t>(idx)];
      if (sign > 0) {
        ++n;
      } else if (n > 0) {
        --n;
      }
      continue;
    }
    auto it = a->shared.find(idx);
    if (sign < 0 && it == a->shared.end()) continue;  // not shared in `base`
    if (it == a->shared.end()) it = a->shared.try_emplace(idx).first;
    if (!it->second.Apply(d, sign)) a->shared.erase(it);
  }
}

}  // namespace

std::shared_ptr<const DraSnapshot> SnapshotWithReleased(
    const DraSnapshot& base, const std::vector<const api::AllocationResult*>& released,
    const std::vector<const api::AllocationResult*>& held) {
  auto s = std::make_shared<DraSnapshot>(base);
  if ((released.empty() && held.empty()) || !base.inventory || !base.allocations) return s;
  auto a = std::make_shared<DraAllocations>(*base.allocations);
  const DraInventory& inv = *base.inventory;
  for (const api::AllocationResult* r : released) ApplyResults(inv, *r, -1, a.get());
  for (const api::AllocationResult* r : held) ApplyResults(inv, *r, +1, a.get());
  s->allocations = std::move(a);
  return s;
}

bool AllocationsFit(const DraSnapshot& view,
                    const std::vector<const api::AllocationResult*>& allocations) {
  if (!view.inventory || !view.allocations) return true;
  const DraInventory& inv = *view.inventory;
  const DraAllocations& held = *view.allocations;
  // What the results add per device, in the order the devices first appear.
  struct Added {
    int32_t device = -1;
    int32_t exclusive = 0;  // results without a shareID
    SharedUse shares;       // results with one, and what they consume together
  };
  std::vector<Added> added;
  for (const api::AllocationResult* a : allocations) {
    for (const api::DeviceRequestAllocationResult& r : a->results) {
      if (r.admin_access) continue;
      const int32_t idx = inv.Find(r.driver, r.pool, r.device);
      if (idx < 0) continue;
      auto it =
          std::find_if(added.begin(), added.end(), [&](const Added& x) { return x.device == idx; });
      if (it == added.end()) {
        added.emplace_back();
        it = added.end() - 1;
        it->device = idx;
      }
      if (r.share_id.empty()) {
        ++it->exclusive;
        continue;
      }
      it->shares.Apply(r, +1);
    }
  }
  // Double allocations and capacities.
  for (const Added& a : added) {
    if (a.exclusive > 0) {
      if (a.exclusive > 1 || a.shares.holders > 0 || held.Held(a.device)) return false;
      continue;
    }
    if (held.InUse(a.device)) return false;
    const api::Device& d = *inv.devices[static_cast<size_t>(a.device)].device;
    for (const auto& [name, v] : a.shares.capacity) {
      const api::DeviceCapacity* cap = d.FindCapacity(name);
      if (cap != nullptr && held.Consumed(a.device, name) + v > cap->value.MilliValue())
        return false;
    }
  }
  // Counters: per pool with a newly held device that consumes counters, the
  // consumption of every held device of the pool plus the new ones.
  using CounterKey = std::pair<api::Symbol, api::Symbol>;  // (counter set, counter)
  auto add_consumption = [&](int32_t device, absl::flat_hash_map<CounterKey, int64_t>* used) {
    for (const api::DeviceCounterConsumption& cc :
         inv.devices[static_cast<size_t>(device)].device->consumes_counters) {
      for (const api::Counter& c : cc.counters)
        (*used)[CounterKey{cc.counter_set, c.name}] += c.value.MilliValue();
    }
  };
  std::vector<int32_t> pools_done;
  for (const Added& a : added) {
    const int32_t pi = inv.devices[static_cast<size_t>(a.device)].pool_index;
    if (held.Held(a.device) ||
        inv.devices[static_cast<size_t>(a.device)].device->consumes_counters.empty() ||
        std::find(pools_done.begin(), pools_done.end(), pi) != pools_done.end())
      continue;
    pools_done.push_back(pi);
    const DraPool& pool = inv.pools[static_cast<size_t>(pi)];
    absl::flat_hash_map<CounterKey, int64_t> used;   // all held devices and the new ones
    absl::flat_hash_map<CounterKey, int64_t> asked;  // the new ones: the counters to check
    for (int32_t other : pool.counter_consumers) {
      if (held.Held(other)) add_consumption(other, &used);
    }
    for (const Added& b : added) {
      if (inv.devices[static_cast<size_t>(b.device)].pool_index != pi || held.Held(b.device))
        continue;
      add_consumption(b.device, &used);
      add_consumption(b.device, &asked);
    }
    for (const auto& entry : asked) {
      const CounterKey& key = entry.first;
      for (const api::CounterSet* set : pool.counter_sets) {
        if (set->name != key.first) continue;
        for (const api::Counter& c : set->counters) {
          if (c.name == key.second && used.at(key) > c.value.MilliValue()) return false;
        }
      }
    }
  }
  return true;
}

std::vector<std::string> PodClaimKeys(const api::Pod& pod) {
  std::vector<std::string> out;
  const std::string_view ns = pod.meta.namespace_.view();
  for (const api::PodResourceClaim& rc : pod.resource_claims) {
    if (!rc.resource_claim_name.empty()) {
      out.push_back(NsKey(ns, rc.resource_claim_name));
      continue;
    }
    for (const api::PodResourceClaimStatus& st : pod.resource_claim_statuses) {
      if (st.name == rc.name && !st.resource_claim_name.empty())
        out.push_back(NsKey(ns, st.resource_claim_name));
    }
  }
  if (!pod.extended_resource_claim_name.empty())
    out.push_back(NsKey(ns, pod.extended_resource_claim_name));
  return out;
}

DraStats DraState::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  DraStats st;
  st.slices = static_cast<int64_t>(impl_->slices.size());
  if (impl_->inventory) {
    st.pools = static_cast<int64_t>(impl_->inventory->pools.size());
    st.devices = static_cast<int64_t>(impl_->inventory->devices.size());
  }
  st.classes = static_cast<int64_t>(impl_->classes->size());
  st.claims = static_cast<int64_t>(impl_->claims.size());
  for (const auto& [k, c] : impl_->claims) st.allocated_claims += c->IsAllocated() ? 1 : 0;
  st.in_flight = static_cast<int64_t>(impl_->in_flight.size());
  st.claim_templates = static_cast<int64_t>(impl_->templates.size());
  st.assumed_claims = static_cast<int64_t>(impl_->assumed.size());
  st.stale_claim_events = impl_->stale_claim_events;
  st.inventory_rebuilds = impl_->rebuilds;
  return st;
}

}  // namespace gantry::state
