#include "plugins/dynamic_resources/dynamic_resources.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gantry/util/strings.h"
#include "plugins/helper/helper.h"
#include "src/dra/device_preference.h"
#include "src/state/dra_state.h"

namespace gantry::plugins::dynamic_resources {
namespace {

// Absent when PreFilter skipped the pod (no claims): the later points read
// it with Get, which builds no error.
const framework::StateKey kCycleKey{kStateKey};
const framework::StateKey kPreferenceKey{dra::kDevicePreferenceKey};

using framework::Code;
using framework::Status;

// Go duration ("10s", "1m30s", "500ms", "0"); nullopt when malformed.
std::optional<int64_t> ParseDurationMicros(std::string_view s) {
  if (s == "0") return 0;
  int64_t total = 0;
  size_t i = 0;
  if (s.empty()) return std::nullopt;
  while (i < s.size()) {
    size_t j = i;
    double v = 0;
    bool digits = false;
    double frac = 0, scale = 1;
    bool dot = false;
    while (j < s.size() && (isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) {
      if (s[j] == '.') {
        dot = true;
      } else if (!dot) {
        v = v * 10 + (s[j] - '0');
      } else {
        scale /= 10;
        frac += (s[j] - '0') * scale;
      }
      digits = true;
      ++j;
    }
    if (!digits) return std::nullopt;
    size_t k = j;
    while (k < s.size() && !isdigit(static_cast<unsigned char>(s[k])) && s[k] != '.') ++k;
    std::string_view unit = s.substr(j, k - j);
    double mult;
    if (unit == "h") mult = 3600e6;
    else if (unit == "m") mult = 60e6;
    else if (unit == "s") mult = 1e6;
    else if (unit == "ms") mult = 1e3;
    else if (unit == "us" || unit == "µs") mult = 1;
    else if (unit == "ns") mult = 1e-3;
    else return std::nullopt;
    total += static_cast<int64_t>((v + frac) * mult);
    i = k;
  }
  return total;
}

std::string FormatDuration(int64_t micros) {
  if (micros % 1'000'000 == 0) return gantry::StrCat(micros / 1'000'000, "s");
  if (micros % 1000 == 0) return gantry::StrCat(micros / 1000, "ms");
  return gantry::StrCat(micros, "us");
}

// The claims of one pod, resolved in PreFilter.
struct ResolvedClaim {
  std::shared_ptr<const api::ResourceClaim> claim;
  bool allocate = false;  // not allocated yet: the allocator picks devices
  int alloc_index = -1;   // index in the allocator's claim list
  // A PodGroup-level claim (the pod's entry matches one of its PodGroup's
  // spec.resourceClaims): reserved for the group, not the pod.
  bool group = false;
  // A PodGroup-level claim that an earlier member of the group is allocating
  // (in flight): `claim` is a copy carrying that allocation, so Filter keeps
  // this member where the shared devices are reachable.
  bool pending = false;
};

// The scheduler's claim for the extended resources backed by DRA of one pod,
// as a node needs it: one request per container and resource the node has
// no device-plugin capacity of (`mask`, bit k: CycleData::extended[k]), the
// pod status mappings to those requests, and an allocator over the pod's
// claims to allocate plus this claim (last).
struct ExtendedVariant {
  std::shared_ptr<const api::ResourceClaim> claim;
  std::vector<framework::ExtendedResourceClaimStatus::RequestMapping> mappings;
  std::shared_ptr<const dra::Allocator> allocator;
  uint64_t spec = 0;  // the allocator's NodeMemo spec (0: no memo)
};

struct Shared {
  std::mutex mu;
  // Extended-resource claim variants by mask, made on first use by Filter.
  std::map<uint64_t, ExtendedVariant> variants;
  absl::flat_hash_map<std::string, uint64_t>
      node_masks;  // Filter's mask per feasible node (non-zero only)
  // Filter's solution per node (compact; materialized for the node Reserve
  // picks); shared with the NodeMemo.
  absl::flat_hash_map<std::string, std::shared_ptr<const dra::NodeAllocation>> node_allocations;
  absl::flat_hash_set<size_t> unavailable;  // allocated claims that did not fit some node
};

struct CycleData final : framework::StateData {
  std::vector<ResolvedClaim> claims;
  std::optional<state::PodGroupClaims> group;       // set when some claim is a PodGroup claim
  std::shared_ptr<const dra::Allocator> allocator;  // null when every claim is allocated
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  std::vector<api::AllocationResult> reserved;  // Reserve's choice, per to-allocate claim
  std::string reserved_node;
  // Preemption what-if (AddPod/RemovePod): the allocator's inputs, the pods
  // removed (UID -> "ns/podgroup" when the pod goes with its whole PodGroup,
  // else "") and the claims whose devices that frees.
  std::shared_ptr<const state::DraSnapshot> base;
  std::vector<std::shared_ptr<const api::ResourceClaim>> to_allocate;
  absl::flat_hash_map<std::string, std::string> removed;
  absl::flat_hash_map<std::string, int32_t> removed_groups;  // "ns/podgroup" -> members removed
  std::vector<std::shared_ptr<const api::ResourceClaim>> released;
  // Nominated room: the devices that pods nominated with >= priority would
  // get on their nominated nodes, counted as allocated (by pod and claim UID).
  absl::flat_hash_set<std::string> held_pods;
  absl::flat_hash_set<std::string> held_claims;
  std::vector<api::AllocationResult> held;
  // The view the allocators search: `base`, or `base` with `released` free.
  std::shared_ptr<const state::DraSnapshot> view;
  // The NodeMemo's view of `view` and the spec of `allocator`; null / 0 when
  // outcomes are not reused (memo off, or a preemption what-if view).
  std::shared_ptr<const dra::NodeMemo::View> memo;
  uint64_t spec = 0;
  // Extended resources backed by DRA: the pod's requested resources that a
  // DeviceClass serves, sorted by name (at most 64, one mask bit each).
  struct ExtendedResource {
    api::Symbol resource;
    std::string device_class;
  };
  std::vector<ExtendedResource> extended;
  // The pod's claim for them from an earlier attempt (stale: Filter rejects
  // every node and PostFilter deletes it), null when there is none.
  std::shared_ptr<const api::ResourceClaim> stale_extended;
  // Reserve's variant for the chosen node (claim null: none) and its
  // allocation; the claim PreBind created from it (Unreserve deletes it).
  ExtendedVariant extended_chosen;
  api::AllocationResult extended_allocation;
  std::shared_ptr<const api::ResourceClaim> extended_created;

  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<CycleData>(*this); }
};

// The claim names of the pod: {pod claim name, resource claim name ("" = none needed)}.
// Returns false (with `missing`) when a template claim has not been created yet.
bool ClaimNames(const api::Pod& pod, std::vector<std::pair<std::string, std::string>>* out, std::string* missing) {
  out->clear();
  for (const api::PodResourceClaim& rc : pod.resource_claims) {
    if (!rc.resource_claim_name.empty()) {
      out->emplace_back(rc.name.str(), rc.resource_claim_name);
      continue;
    }
    bool found = false;
    for (const api::PodResourceClaimStatus& st : pod.resource_claim_statuses) {
      if (st.name == rc.name) {
        found = true;
        if (!st.resource_claim_name.empty()) out->emplace_back(rc.name.str(), st.resource_claim_name);
      }
    }
    if (!found) {
      *missing = gantry::StrCat("pod \"", pod.meta.Key(), "\": waiting for resource claim of \"", rc.name.view(),
                                "\" (template ", rc.resource_claim_template_name, ") to be created");
      return false;
    }
  }
  return true;
}

bool IsForPod(const api::ResourceClaim& claim, const api::Pod& pod) {
  for (const api::OwnerReference& o : claim.meta.owner_references) {
    if (o.uid == pod.meta.uid) return true;
  }
  return false;
}

// Whether the pod's claim entry `rc` is one of its PodGroup's claims: the
// entries must match exactly (name, and the same claim or template name).
bool IsGroupClaim(const api::PodResourceClaim& rc, const state::PodGroupClaims* group) {
  if (group == nullptr) return false;
  for (const api::PodGroupResourceClaim& g : group->claims) {
    if (g.name == rc.name && g.resource_claim_name == rc.resource_claim_name &&
        g.resource_claim_template_name == rc.resource_claim_template_name) {
      return true;
    }
  }
  return false;
}

// A claim generated from a PodGroup's template is owned by that PodGroup.
bool IsForGroup(const api::ResourceClaim& claim, const state::PodGroupClaims& group) {
  for (const api::OwnerReference& o : claim.meta.owner_references) {
    if (!group.uid.empty() ? o.uid == group.uid
                           : (o.kind.view() == "PodGroup" && o.name == group.name))
      return true;
  }
  return false;
}

// The reservedFor entry of a PodGroup.
api::ResourceClaimConsumerReference GroupConsumer(const state::PodGroupClaims& group) {
  return api::ResourceClaimConsumerReference{api::Symbol::Intern("scheduling.k8s.io"),
                                             api::Symbol::Intern("podgroups"), group.name,
                                             group.uid};
}

// Records the resourceVersion a claim write answered with ("" = unknown: the
// version the write was based on stays).
void SetVersion(api::ResourceClaim& claim, const std::string& rv) {
  if (!rv.empty()) claim.meta.resource_version = rv;
}

bool IsReservedForGroup(const api::ResourceClaim& claim, const state::PodGroupClaims& group) {
  for (const api::ResourceClaimConsumerReference& r : claim.status.reserved_for) {
    if (r.resource.view() != "podgroups") continue;
    if (!group.uid.empty() ? r.uid == group.uid : r.name == group.name) return true;
  }
  return false;
}

// The identity of a PodGroup's in-flight allocations (its UID, or its key
// when the UID is not known).
std::string GroupInFlightId(const state::PodGroupClaims& group) {
  return group.uid.empty() ? gantry::StrCat("podgroup:", group.namespace_, "/", group.name)
                           : group.uid;
}

// Whether evicting what `data` removed frees `consumer` of `claim`: a pod
// when it was removed, a PodGroup when members of it were removed as part of
// a whole-group unit (the group goes with them).
bool Leaving(const CycleData& data, const api::ResourceClaim& claim,
             const api::ResourceClaimConsumerReference& consumer) {
  if (consumer.resource.view() == "podgroups") {
    return data.removed_groups.contains(
        gantry::StrCat(claim.meta.namespace_.view(), "/", consumer.name));
  }
  return data.removed.contains(consumer.uid);
}

// The PodGroup-level claims of the pod's native PodGroup, if it has any.
std::optional<state::PodGroupClaims> GroupOf(const api::Pod& pod, const state::DraState& dra) {
  if (pod.pod_group_name.empty()) return std::nullopt;
  return dra.FindPodGroupClaims(pod.meta.namespace_.view(), pod.pod_group_name.view());
}

bool HasBindingConditions(const api::ResourceClaim& c) {
  if (!c.status.allocation) return false;
  for (const auto& r : c.status.allocation->results) {
    if (!r.binding_conditions.empty()) return true;
  }
  return false;
}

// ---- Extended resources backed by DRA ----------------------------------------

// The in-memory name of the pod's claim for its extended resources: not a
// valid object name, so it never collides with a real claim; PreBind
// creates the claim with generateName "<pod>-extended-resources-".
constexpr std::string_view kExtendedClaimInMemoryName = "<extended-resources>";

// The in-flight identity of that claim between Reserve and PreBind.
std::string ExtendedInFlightUid(const api::Pod& pod) {
  return gantry::StrCat("extended-resources/", pod.meta.uid);
}

std::string ExtendedRequestName(const api::ContainerExtendedRequest& r) {
  return gantry::StrCat("container-", r.container_index, "-request-", r.request_index);
}

// The requests of the pod's extended-resource claim for the resources in
// `mask`, and the pod status mappings to them, as upstream builds them. Per
// resource (by name): one request per long-lived container (a regular or
// sidecar container) asking for it; a non-sidecar init container first
// reuses the requests of the long-lived containers from its own index on
// and asks only for the rest; of the init containers' own requests only the
// largest is kept and the others' mappings point to it. Requests are sorted
// by name.
std::shared_ptr<const api::ResourceClaim> ExtendedVariantClaim(
    const api::Pod& pod, const std::vector<CycleData::ExtendedResource>& resources, uint64_t mask,
    std::vector<framework::ExtendedResourceClaimStatus::RequestMapping>* mappings) {
  using Mapping = framework::ExtendedResourceClaimStatus::RequestMapping;
  auto claim = std::make_shared<api::ResourceClaim>();
  claim->meta.name = std::string(kExtendedClaimInMemoryName);
  claim->meta.namespace_ = pod.meta.namespace_;
  claim->meta.uid = ExtendedInFlightUid(pod);
  claim->meta.annotations.emplace_back(api::Symbol::Intern(api::kExtendedResourceClaimAnnotation),
                                       "true");
  api::OwnerReference owner;
  owner.api_version = api::Symbol::Intern("v1");
  owner.kind = api::Symbol::Intern("Pod");
  owner.name = pod.meta.name;
  owner.uid = pod.meta.uid;
  owner.controller = true;
  claim->meta.owner_references.push_back(std::move(owner));
  auto request = [](std::string name, std::string_view device_class, int64_t count) {
    api::DeviceRequest req;
    req.name = api::Symbol::Intern(name);
    api::ExactDeviceRequest exact;
    exact.device_class_name = api::Symbol::Intern(device_class);
    exact.count = count;
    req.exactly = std::move(exact);
    return req;
  };
  for (size_t k = 0; k < resources.size(); ++k) {
    if (!(mask & (uint64_t{1} << k))) continue;
    const CycleData::ExtendedResource& res = resources[k];
    struct LongLived {
      int32_t container = 0;
      std::string name;
      int64_t count = 0;
    };
    std::vector<LongLived> long_lived;  // in container order
    std::vector<Mapping> long_mappings, short_mappings;
    for (const api::ContainerExtendedRequest& r : pod.extended_requests) {
      if (r.resource != res.resource || r.init_only) continue;
      long_lived.push_back({r.container_index, ExtendedRequestName(r), r.value});
      long_mappings.push_back({r.container_name, r.resource.str(), long_lived.back().name});
    }
    std::optional<api::DeviceRequest> max_short;
    absl::flat_hash_set<std::string> short_names;
    for (const api::ContainerExtendedRequest& r : pod.extended_requests) {
      if (r.resource != res.resource || !r.init_only) continue;
      int64_t sum = 0;
      for (const LongLived& l : long_lived) {
        if (l.container < r.container_index || sum >= r.value) continue;
        sum += l.count;
        short_mappings.push_back({r.container_name, r.resource.str(), l.name});
      }
      if (sum >= r.value) continue;
      api::DeviceRequest own = request(ExtendedRequestName(r), res.device_class, r.value - sum);
      short_mappings.push_back({r.container_name, r.resource.str(), own.name.str()});
      short_names.insert(own.name.str());
      if (!max_short || max_short->exactly->count < own.exactly->count) max_short = std::move(own);
    }
    if (max_short) {
      for (Mapping& m : short_mappings) {
        if (short_names.contains(m.request_name)) m.request_name = max_short->name.str();
      }
      claim->spec.requests.push_back(std::move(*max_short));
    }
    for (const LongLived& l : long_lived)
      claim->spec.requests.push_back(request(l.name, res.device_class, l.count));
    mappings->insert(mappings->end(), long_mappings.begin(), long_mappings.end());
    mappings->insert(mappings->end(), short_mappings.begin(), short_mappings.end());
  }
  std::sort(claim->spec.requests.begin(), claim->spec.requests.end(),
            [](const api::DeviceRequest& a, const api::DeviceRequest& b) {
              return a.name.view() < b.name.view();
            });
  return claim;
}

// Bit k set: CycleData::extended[k] has no device-plugin capacity on the
// node (allocatable 0), so DRA serves it there.
uint64_t ExtendedMask(const CycleData& data, const framework::NodeInfo& node) {
  uint64_t mask = 0;
  for (size_t k = 0; k < data.extended.size(); ++k) {
    if (node.allocatable().Get(data.extended[k].resource) <= 0) mask |= uint64_t{1} << k;
  }
  return mask;
}

// Checks existence/ownership/deletion of every claim; "" when fine. `group`
// is the pod's PodGroup (null when none); `is_group` gets, per claim, whether
// it is a PodGroup-level claim.
std::string CheckClaims(const api::Pod& pod, state::DraState& dra,
                        const state::PodGroupClaims* group,
                        std::vector<std::shared_ptr<const api::ResourceClaim>>* out,
                        std::vector<bool>* is_group) {
  std::vector<std::pair<std::string, std::string>> names;
  std::string missing;
  if (!ClaimNames(pod, &names, &missing)) return missing;
  for (const auto& [pod_name, claim_name] : names) {
    auto claim = dra.GetClaim(pod.meta.namespace_.view(), claim_name);
    if (claim == nullptr) {
      return gantry::StrCat("resourceclaim \"", claim_name, "\" not found");
    }
    if (claim->meta.deletion_micros) {
      return gantry::StrCat("resourceclaim \"", claim_name, "\" is being deleted");
    }
    const api::PodResourceClaim* entry = nullptr;
    for (const api::PodResourceClaim& rc : pod.resource_claims) {
      if (rc.name.view() == pod_name) entry = &rc;
    }
    const bool for_group = entry != nullptr && IsGroupClaim(*entry, group);
    if (entry != nullptr && entry->resource_claim_name.empty()) {
      if (for_group && !IsForGroup(*claim, *group)) {
        return gantry::StrCat("resourceclaim \"", claim_name, "\" was not created for pod group ",
                              group->namespace_, "/", group->name);
      }
      if (!for_group && !IsForPod(*claim, pod)) {
        return gantry::StrCat("resourceclaim \"", claim_name, "\" was not created for the pod");
      }
    }
    if (out) out->push_back(std::move(claim));
    if (is_group) is_group->push_back(for_group);
  }
  return "";
}

// The snapshot the cycle's allocators search: the base snapshot with the
// released claims' devices free and the held ones taken.
std::shared_ptr<const state::DraSnapshot> ViewOf(const CycleData& data) {
  if (data.released.empty() && data.held.empty()) return data.base;
  std::vector<const api::AllocationResult*> released, held;
  for (const auto& c : data.released) released.push_back(&*c->status.allocation);
  for (const api::AllocationResult& a : data.held) held.push_back(&a);
  return state::SnapshotWithReleased(*data.base, released, held);
}

// The allocator for the cycle's claims over `data.view`.
absl::StatusOr<std::unique_ptr<dra::Allocator>> MakeAllocator(const CycleData& data,
                                                              dra::Features features) {
  dra::AllocatorOptions opts;
  opts.features = features;
  return dra::Allocator::Create(opts, data.view, data.to_allocate);
}

// Nominated room: allocates the not yet allocated claims of `nominated` on
// `node` (with the devices of lower-priority pods terminating there free) and
// holds the result in `data`. False when nothing was held.
bool HoldNominated(CycleData& data, const framework::PodInfo& nominated,
                   const framework::NodeInfo& node, state::DraState* dra, dra::Features features,
                   int64_t filter_timeout_micros, framework::PluginMetrics& metrics) {
  const api::Pod& np = nominated.p();
  if (np.resource_claims.empty() || dra == nullptr || node.node() == nullptr ||
      !data.held_pods.insert(nominated.uid()).second)
    return false;
  std::optional<state::PodGroupClaims> group = GroupOf(np, *dra);
  std::vector<std::shared_ptr<const api::ResourceClaim>> claims, to_allocate;
  if (!CheckClaims(np, *dra, group ? &*group : nullptr, &claims, nullptr).empty())
    return false;  // it cannot be scheduled as it is: it holds nothing
  for (auto& c : claims) {
    // Allocated and in-flight claims are counted in the snapshot already; a
    // claim the pod being scheduled allocates too is shared, not taken.
    if (c->IsAllocated() || dra->IsInFlight(c->meta.uid) ||
        data.held_claims.contains(c->meta.uid) ||
        std::any_of(data.to_allocate.begin(), data.to_allocate.end(),
                    [&](const auto& own) { return own->meta.uid == c->meta.uid; }))
      continue;
    to_allocate.push_back(std::move(c));
  }
  if (to_allocate.empty()) return false;
  // It waits for the lower-priority pods terminating on its node: their
  // devices are part of its room.
  std::vector<std::string> keys;
  absl::flat_hash_set<std::string> terminating;
  for (const framework::PodInfoPtr& p : node.pods()) {
    if (!p->p().meta.deletion_micros.has_value() || p->priority >= nominated.priority ||
        !p->p().UsesClaims())
      continue;
    terminating.insert(p->uid());
    for (std::string& k : state::PodClaimKeys(p->p())) keys.push_back(std::move(k));
  }
  std::vector<const api::AllocationResult*> released, held;
  std::vector<std::shared_ptr<const api::ResourceClaim>> leaving;
  if (!keys.empty()) {
    leaving = dra->ReleasableClaims(
        keys, [&](const api::ResourceClaim&, const api::ResourceClaimConsumerReference& c) {
          return c.resource.view() != "podgroups" && terminating.contains(c.uid);
        });
  }
  for (const auto& c : data.released) released.push_back(&*c->status.allocation);
  for (const auto& c : leaving) released.push_back(&*c->status.allocation);
  for (const api::AllocationResult& a : data.held) held.push_back(&a);
  dra::AllocatorOptions opts;
  opts.features = features;
  auto allocator = dra::Allocator::Create(
      opts, state::SnapshotWithReleased(*data.base, released, held), to_allocate);
  if (!allocator.ok()) return false;
  auto deadline = std::chrono::steady_clock::time_point::max();
  if (filter_timeout_micros > 0) {
    deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(filter_timeout_micros);
  }
  dra::NodeAllocation out = (*allocator)->Allocate(*node.node(), deadline, /*materialize=*/true);
  metrics.CelEvaluations(out.cel_evaluations);
  if (!out.ok()) return false;  // it would not fit there either: nothing to keep for it
  for (const auto& c : to_allocate) data.held_claims.insert(c->meta.uid);
  for (api::AllocationResult& a : out.allocations) data.held.push_back(std::move(a));
  return true;
}

// The pod's requested resources that a DeviceClass serves, sorted by name;
// at most 64 (one mask bit each), the rest are left to device plugins.
std::vector<CycleData::ExtendedResource> ExtendedResources(const api::Pod& pod,
                                                           const state::DraState& dra) {
  std::vector<CycleData::ExtendedResource> out;
  for (const api::ContainerExtendedRequest& r : pod.extended_requests) {
    if (std::any_of(out.begin(), out.end(),
                    [&](const auto& e) { return e.resource == r.resource; }))
      continue;
    std::string cls = dra.ExtendedResourceClass(r.resource.view());
    if (!cls.empty()) out.push_back({r.resource, std::move(cls)});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.resource.view() < b.resource.view(); });
  if (out.size() > 64) out.resize(64);
  return out;
}

// The variant of `mask` (made once per mask and cycle; Filter calls this in
// parallel). NotFound when a class the claim names is gone.
absl::StatusOr<const ExtendedVariant*> VariantFor(const CycleData& data, const api::Pod& pod,
                                                  uint64_t mask, const dra::Features& features,
                                                  dra::NodeMemo* memo) {
  std::lock_guard<std::mutex> lock(data.shared->mu);
  auto it = data.shared->variants.find(mask);
  if (it != data.shared->variants.end()) return &it->second;
  ExtendedVariant v;
  v.claim = ExtendedVariantClaim(pod, data.extended, mask, &v.mappings);
  std::vector<std::shared_ptr<const api::ResourceClaim>> claims = data.to_allocate;
  claims.push_back(v.claim);
  dra::AllocatorOptions opts;
  opts.features = features;
  auto allocator = dra::Allocator::Create(opts, data.view, std::move(claims));
  if (!allocator.ok()) return allocator.status();
  v.allocator = std::move(*allocator);
  if (memo != nullptr && data.memo != nullptr) v.spec = memo->SpecOf(*v.allocator);
  return &data.shared->variants.emplace(mask, std::move(v)).first->second;
}

// The allocator Filter used on `node` (the extended-resource variant of the
// node's mask, else the pod's claims alone; null: the node's device plugins
// serve everything) and its NodeMemo spec.
struct NodeAllocator {
  const ExtendedVariant* variant = nullptr;
  std::shared_ptr<const dra::Allocator> allocator;
  uint64_t spec = 0;
};
NodeAllocator AllocatorOn(const CycleData& data, std::string_view node) {
  NodeAllocator out{nullptr, data.allocator, data.spec};
  std::lock_guard<std::mutex> lock(data.shared->mu);
  auto m = data.shared->node_masks.find(gantry::AsAbsl(node));
  if (m != data.shared->node_masks.end()) {
    out.variant = &data.shared->variants.at(m->second);
    out.allocator = out.variant->allocator;
    out.spec = out.variant->spec;
  }
  return out;
}

// Filter's successful outcome on `node` in this cycle, null when there is
// none: from the per-cycle map, or from the node memo where Filter used it
// (the same view validates the same entry).
std::shared_ptr<const dra::NodeAllocation> FilterOutcome(const CycleData& data, dra::NodeMemo* memo,
                                                         const NodeAllocator& na,
                                                         std::string_view node,
                                                         const api::Node* node_object) {
  {
    std::lock_guard<std::mutex> lock(data.shared->mu);
    auto it = data.shared->node_allocations.find(gantry::AsAbsl(node));
    if (it != data.shared->node_allocations.end()) return it->second;
  }
  if (memo == nullptr || data.memo == nullptr || na.spec == 0 || node_object == nullptr)
    return nullptr;
  std::shared_ptr<const dra::NodeAllocation> out = memo->Find(*data.memo, na.spec, node_object);
  return out != nullptr && out->ok() ? out : nullptr;
}

}  // namespace

BindingState CheckBindingConditions(const api::ResourceClaim& claim, int64_t now_micros, int64_t timeout_micros,
                                    std::string* why) {
  if (!claim.status.allocation) return BindingState::kPending;
  const api::AllocationResult& a = *claim.status.allocation;
  bool pending = false, has_conditions = false;
  for (const api::DeviceRequestAllocationResult& r : a.results) {
    if (r.binding_conditions.empty()) continue;
    has_conditions = true;
    const api::AllocatedDeviceStatus* status = nullptr;
    for (const api::AllocatedDeviceStatus& d : claim.status.devices) {
      if (d.driver == r.driver && d.pool == r.pool && d.device == r.device) {
        status = &d;
        break;
      }
    }
    if (status == nullptr) {
      pending = true;
      continue;
    }
    auto find = [&](api::Symbol type) -> const api::Condition* {
      for (const api::Condition& c : status->conditions) {
        if (c.type == type) return &c;
      }
      return nullptr;
    };
    for (api::Symbol f : r.binding_failure_conditions) {
      const api::Condition* c = find(f);
      if (c != nullptr && c->status == api::ConditionStatus::kTrue) {
        *why = gantry::StrCat("resourceclaim \"", claim.meta.name, "\": binding failed on device ", r.pool.view(), "/",
                              r.device.view(), ": condition ", f.view(), " is True (reason=", c->reason.view(),
                              ", message=\"", c->message, "\")");
        return BindingState::kFailed;
      }
    }
    for (api::Symbol b : r.binding_conditions) {
      const api::Condition* c = find(b);
      if (c == nullptr || c->status != api::ConditionStatus::kTrue) pending = true;
    }
  }
  if (!pending) return BindingState::kReady;
  if (has_conditions && a.allocation_timestamp_micros > 0 && a.allocation_timestamp_micros + timeout_micros < now_micros) {
    *why = gantry::StrCat("resourceclaim \"", claim.meta.name, "\": binding timeout (binding conditions not met within ",
                          FormatDuration(timeout_micros), " of the allocation)");
    return BindingState::kTimedOut;
  }
  return BindingState::kPending;
}

DynamicResourcesArgs DynamicResourcesArgs::Decode(api::Decoder& d, api::JsonValue v) {
  DynamicResourcesArgs a;
  helper::DecodeArgsObject(d, v, kArgsKind, [&](std::string_view key, api::JsonValue value) {
    if (key != "filterTimeout" && key != "bindingTimeout") return false;
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) {
      d.Fail("must be a duration string such as \"10s\"");
      return true;
    }
    std::optional<int64_t> micros = ParseDurationMicros(text);
    if (!micros || *micros < 0) {
      d.Fail(gantry::StrCat("invalid duration \"", text, "\""));
      return true;
    }
    if (key == "filterTimeout") {
      a.filter_timeout_micros = *micros;
    } else {
      if (*micros < 1'000'000) {
        d.Fail("must be at least 1s");
        return true;
      }
      a.binding_timeout_micros = *micros;
    }
    return true;
  });
  return a;
}

nlohmann::json DynamicResourcesArgs::ToJson() const {
  return {{"apiVersion", helper::kArgsApiVersion},
          {"kind", kArgsKind},
          {"filterTimeout", FormatDuration(filter_timeout_micros)},
          {"bindingTimeout", FormatDuration(binding_timeout_micros)}};
}

DynamicResources::DynamicResources(DynamicResourcesArgs args, framework::FrameworkHandle& handle,
                                   dra::Features features)
    : args_(args), handle_(handle), features_(features) {
  const char* env = std::getenv("GANTRY_DRA_NODE_MEMO");
  const std::string_view v = env != nullptr ? env : "";
  SetNodeMemo(!(v == "off" || v == "0" || v == "false"));
}

void DynamicResources::SetNodeMemo(bool on) {
  if (!on) {
    memo_.reset();
  } else if (memo_ == nullptr) {
    memo_ = std::make_unique<dra::NodeMemo>();
  }
}

Status DynamicResources::PreEnqueue(const framework::PodInfo& pod) {
  if (pod.p().resource_claims.empty()) return Status();
  state::DraState* dra = handle_.Dra();
  if (dra == nullptr) return Status::Unresolvable("dynamic resource allocation is not available in this scheduler");
  std::optional<state::PodGroupClaims> group = GroupOf(pod.p(), *dra);
  std::string why = CheckClaims(pod.p(), *dra, group ? &*group : nullptr, nullptr, nullptr);
  if (!why.empty()) return Status::Unresolvable(std::move(why));
  return Status();
}

Status DynamicResources::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                   const std::vector<framework::NodeInfo*>& nodes, framework::PreFilterResult*) {
  const api::Pod& p = pod.p();
  if (p.resource_claims.empty() && p.extended_requests.empty()) return Status::Skip();
  state::DraState* dra = handle_.Dra();
  if (dra == nullptr) {
    if (p.resource_claims.empty())
      return Status::Skip();  // extended resources: device plugins only
    return Status::Unresolvable("dynamic resource allocation is not available in this scheduler");
  }
  std::vector<CycleData::ExtendedResource> extended = ExtendedResources(p, *dra);
  if (p.resource_claims.empty() && extended.empty()) return Status::Skip();
  std::vector<std::shared_ptr<const api::ResourceClaim>> claims;
  std::vector<bool> is_group;
  std::optional<state::PodGroupClaims> group = GroupOf(p, *dra);
  std::string why = CheckClaims(p, *dra, group ? &*group : nullptr, &claims, &is_group);
  if (!why.empty()) return Status::Unresolvable(std::move(why));
  if (claims.empty() && extended.empty()) return Status::Skip();

  auto data = std::make_unique<CycleData>();
  data->extended = std::move(extended);
  if (!data->extended.empty()) data->stale_extended = dra->FindExtendedResourceClaim(p.meta.uid);
  std::vector<std::shared_ptr<const api::ResourceClaim>> to_allocate;
  const api::Labels* ns_labels = handle_.NamespaceLabels(p.meta.namespace_);
  for (size_t ci = 0; ci < claims.size(); ++ci) {
    auto& claim = claims[ci];
    ResolvedClaim rc;
    rc.claim = claim;
    rc.group = is_group[ci];
    if (rc.group) data->group = group;
    const bool reserved =
        rc.group ? IsReservedForGroup(*claim, *group) : claim->IsReservedFor(p.meta.uid);
    std::optional<api::AllocationResult> shared;
    if (rc.group && !claim->IsAllocated())
      shared = dra->InFlightForGroup(claim->meta.uid, GroupInFlightId(*group));
    if (claim->IsAllocated()) {
      if (!reserved && claim->status.reserved_for.size() >= api::kReservedForMaxSize) {
        return Status::Unresolvable(gantry::StrCat("resourceclaim \"", claim->meta.name,
                                                   "\" is in use by too many consumers"));
      }
    } else if (shared) {
      // An earlier member of the pod's group is allocating this claim: the
      // member shares that allocation and must land where it is usable.
      auto copy = std::make_shared<api::ResourceClaim>(*claim);
      copy->status.allocation = std::move(*shared);
      rc.claim = std::move(copy);
      rc.pending = true;
    } else if (dra->IsInFlight(claim->meta.uid)) {
      return Status::Unschedulable(gantry::StrCat("resourceclaim \"", claim->meta.name,
                                                  "\" is being allocated for another pod"));
    } else {
      for (const api::DeviceRequest& r : claim->spec.requests) {
        if (r.exactly && r.exactly->admin_access) {
          auto v = ns_labels ? api::FindLabel(*ns_labels, api::kAdminAccessNamespaceLabel) : std::nullopt;
          if (!v || v->view() != "true") {
            return Status::Unresolvable(gantry::StrCat(
                "resourceclaim \"", claim->meta.name, "\": request \"", r.name.view(),
                "\" asks for admin access, but namespace ", p.meta.namespace_.view(), " lacks the label ",
                api::kAdminAccessNamespaceLabel, "=true"));
          }
        }
      }
      rc.allocate = true;
      rc.alloc_index = static_cast<int>(to_allocate.size());
      to_allocate.push_back(claim);
    }
    data->claims.push_back(std::move(rc));
  }
  if (!to_allocate.empty() || !data->extended.empty()) {
    data->base = dra->Snapshot();
    data->to_allocate = std::move(to_allocate);
    // Devices that pods nominated with >= priority would take stay theirs.
    for (const framework::NominatedPod& np : handle_.Snapshot().NominatedPods()) {
      if (np.pod->uid() != pod.uid() && np.node != nullptr)
        HoldNominated(*data, *np.pod, *np.node, dra, features_, args_.filter_timeout_micros,
                      handle_.Metrics());
    }
    data->view = ViewOf(*data);
    // Without the node memo Filter inserts one solution per feasible node:
    // no rehashing under the lock.
    if (memo_ == nullptr) data->shared->node_allocations.reserve(nodes.size());
  }
  if (!data->to_allocate.empty()) {
    auto allocator = MakeAllocator(*data, features_);
    if (!allocator.ok()) {
      if (absl::IsNotFound(allocator.status())) {
        // A missing DeviceClass may still be created: wait for it.
        return Status::Unresolvable(std::string(allocator.status().message()));
      }
      return Status::Error(std::string(allocator.status().message()));
    }
    data->allocator = std::move(*allocator);
  }
  if (memo_ != nullptr && data->view != nullptr) {
    data->memo = memo_->Begin(data->view, nodes.size());
    if (data->memo != nullptr && data->allocator != nullptr)
      data->spec = memo_->SpecOf(*data->allocator);
  }
  state.Write(kCycleKey, std::move(data));
  return Status();
}

Status DynamicResources::RebuildAllocator(framework::CycleState& state) {
  auto read = state.Read<CycleData>(kCycleKey);
  if (!read.ok()) return Status::Error(std::string(read.status().message()));
  CycleData& data = **read;
  data.view = ViewOf(data);
  // A what-if view: its outcomes are not reused nor kept.
  data.memo = nullptr;
  data.spec = 0;
  if (!data.to_allocate.empty()) {
    auto allocator = MakeAllocator(data, features_);
    if (!allocator.ok()) return Status::Error(std::string(allocator.status().message()));
    data.allocator = std::move(*allocator);
  }
  // Solutions and extended-resource variants of the old view do not apply.
  data.shared = std::make_shared<Shared>();
  return Status();
}

Status DynamicResources::RemovePod(framework::CycleState& state, const framework::PodInfo&,
                                   const framework::PodInfo& to_remove,
                                   const framework::NodeInfo&) {
  auto read = state.Read<CycleData>(kCycleKey);
  if (!read.ok()) return Status::Error(std::string(read.status().message()));
  CycleData& data = **read;
  state::DraState* dra = handle_.Dra();
  const api::Pod& p = to_remove.p();
  if ((!data.allocator && data.extended.empty()) || dra == nullptr || !p.UsesClaims())
    return Status();
  // A member of a whole-group unit takes its PodGroup (and the group's
  // claims) with it.
  std::string group;
  if (!p.pod_group_name.empty() && handle_.DisruptionUnitOf(p).whole_group)
    group = gantry::StrCat(p.meta.namespace_.view(), "/", p.pod_group_name.view());
  if (!data.removed.try_emplace(to_remove.uid(), group).second) return Status();
  if (!group.empty()) data.removed_groups[group]++;
  bool grew = false;
  auto leaving = [&](const api::ResourceClaim& claim,
                     const api::ResourceClaimConsumerReference& consumer) {
    return Leaving(data, claim, consumer);
  };
  for (auto& c : dra->ReleasableClaims(state::PodClaimKeys(p), leaving)) {
    bool known = false;
    for (const auto& r : data.released) known = known || r.get() == c.get();
    if (known) continue;
    data.released.push_back(std::move(c));
    grew = true;
  }
  return grew ? RebuildAllocator(state) : Status();
}

Status DynamicResources::AddPod(framework::CycleState& state, const framework::PodInfo&,
                                const framework::PodInfo& to_add, const framework::NodeInfo& node) {
  auto read = state.Read<CycleData>(kCycleKey);
  if (!read.ok()) return Status::Error(std::string(read.status().message()));
  CycleData& data = **read;
  if (!data.allocator && data.extended.empty()) return Status();
  auto it = data.removed.find(to_add.uid());
  if (it == data.removed.end()) {
    // Not removed by this what-if: a pod nominated to `node` (upstream
    // addNominatedPods) holds the devices it would get there.
    if (!to_add.p().node_name.empty()) return Status();
    return HoldNominated(data, to_add, node, handle_.Dra(), features_, args_.filter_timeout_micros,
                         handle_.Metrics())
               ? RebuildAllocator(state)
               : Status();
  }
  if (!it->second.empty()) {
    auto g = data.removed_groups.find(it->second);
    if (g != data.removed_groups.end() && --g->second <= 0) data.removed_groups.erase(g);
  }
  data.removed.erase(it);
  // Claims of the pod are held again (and so are claims it shared).
  const size_t before = data.released.size();
  std::erase_if(data.released, [&](const std::shared_ptr<const api::ResourceClaim>& c) {
    for (const api::ResourceClaimConsumerReference& r : c->status.reserved_for) {
      if (!Leaving(data, *c, r)) return true;
    }
    return false;
  });
  return data.released.size() == before ? Status() : RebuildAllocator(state);
}

Status DynamicResources::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                const framework::NodeInfo& node) {
  CycleData* read = state.Get<CycleData>(kCycleKey);
  if (read == nullptr) {
    return Status::Error(std::string(state.Read<CycleData>(kCycleKey).status().message()));
  }
  CycleData& data = *read;
  const api::Node* n = node.node();
  if (n == nullptr) return Status::Error("node not found");
  if (data.stale_extended != nullptr) {
    // Left over from an earlier attempt: PostFilter deletes it, then the pod
    // is scheduled afresh.
    return Status::Unresolvable(gantry::StrCat("cannot schedule extended resource claim \"",
                                               data.stale_extended->meta.name, "\""));
  }
  for (size_t i = 0; i < data.claims.size(); ++i) {
    const ResolvedClaim& rc = data.claims[i];
    if (rc.allocate) continue;
    const auto& sel = rc.claim->status.allocation->node_selector;
    if (sel && !sel->Matches(n->meta.labels, n->meta.name)) {
      std::lock_guard<std::mutex> lock(data.shared->mu);
      data.shared->unavailable.insert(i);
      return Status::Unresolvable(
          gantry::StrCat("resourceclaim \"", rc.claim->meta.name, "\" not available on the node"));
    }
    if (features_.binding_conditions && !rc.pending) {
      // An allocation whose devices failed to bind (or never did) cannot be
      // used anywhere; PostFilter deallocates it.
      std::string why;
      BindingState b = CheckBindingConditions(*rc.claim, handle_.clock().NowMicros(), args_.binding_timeout_micros, &why);
      if (b == BindingState::kFailed || b == BindingState::kTimedOut) {
        std::lock_guard<std::mutex> lock(data.shared->mu);
        data.shared->unavailable.insert(i);
        return Status::Unresolvable(std::move(why));
      }
    }
  }
  // Extended resources the node has no device-plugin capacity of are
  // allocated through their DeviceClass, with the pod's claims.
  const uint64_t mask = ExtendedMask(data, node);
  const dra::Allocator* allocator = data.allocator.get();
  uint64_t spec = data.spec;
  if (mask != 0) {
    absl::StatusOr<const ExtendedVariant*> v =
        VariantFor(data, pod.p(), mask, features_, memo_.get());
    if (!v.ok()) {
      if (absl::IsNotFound(v.status()))
        return Status::Unresolvable(std::string(v.status().message()));
      return Status::Error(std::string(v.status().message()));
    }
    allocator = (*v)->allocator.get();
    spec = (*v)->spec;
  }
  if (allocator == nullptr) return Status();
  // The outcome an allocator of the same spec found on this node, while
  // nothing it depends on changed (src/dra/node_memo.h); else a search.
  const bool memo = memo_ != nullptr && data.memo != nullptr && spec != 0;
  std::shared_ptr<const dra::NodeAllocation> out;
  if (memo) out = memo_->Find(*data.memo, spec, n);
  const bool reused = out != nullptr;
  if (!reused) {
    auto deadline = std::chrono::steady_clock::time_point::max();
    const auto alloc_start = std::chrono::steady_clock::now();
    if (args_.filter_timeout_micros > 0)
      deadline = alloc_start + std::chrono::microseconds(args_.filter_timeout_micros);
    auto computed = std::make_shared<dra::NodeAllocation>(
        allocator->Allocate(*n, deadline, /*materialize=*/false));
    framework::PluginMetrics& metrics = handle_.Metrics();
    metrics.DraAllocationDuration(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - alloc_start).count());
    metrics.CelEvaluations(computed->cel_evaluations);
    out = std::move(computed);
    if (memo) memo_->Store(*data.memo, spec, node.node_ptr(), out);
  }
  using R = dra::NodeAllocation::Result;
  switch (out->result) {
    case R::kSuccess: {
      if (!memo || mask != 0) {
        // The memo holds the outcome for Score and Reserve (NodeOutcome).
        std::lock_guard<std::mutex> lock(data.shared->mu);
        if (!memo) data.shared->node_allocations.insert_or_assign(n->meta.name, std::move(out));
        if (mask != 0) data.shared->node_masks.insert_or_assign(n->meta.name, mask);
      }
      return Status();
    }
    case R::kFatal:
      return Status::Error(out->message);
    case R::kTimeout:
      // Not kept by the memo; results derived from it are not reused either.
      if (memo) memo_->Invalidate(*data.memo, n->meta.name);
      return Status::Unschedulable(
          gantry::StrCat("timed out trying to allocate devices: ", out->message));
    case R::kNodeError:
    case R::kUnsatisfiable:
      return Status::Unschedulable(reused ? allocator->Restate(*out) : out->message);
  }
  return Status();
}

uint64_t DynamicResources::NodeResultsKey(const framework::CycleState& state) const {
  const CycleData* data = state.Get<CycleData>(kCycleKey);
  if (data == nullptr || memo_ == nullptr || data->memo == nullptr || data->spec == 0 ||
      data->allocator == nullptr || data->group.has_value() || !data->extended.empty() ||
      data->stale_extended != nullptr) {
    return 0;
  }
  for (const ResolvedClaim& rc : data->claims) {
    if (!rc.allocate) return 0;  // Filter checks the allocation against the node
  }
  return data->spec;
}

bool DynamicResources::TrackedChangesSince(const framework::CycleState& state, uint64_t* mark,
                                           std::vector<std::string>* changed) const {
  const CycleData* data = state.Get<CycleData>(kCycleKey);
  if (data == nullptr || memo_ == nullptr || data->memo == nullptr) {
    *mark = 0;
    return false;
  }
  return memo_->ChangedNodesSince(*data->memo, mark, changed);
}

framework::PostFilterResult DynamicResources::PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                                         const framework::NodeToStatus&) {
  framework::PostFilterResult result;
  result.status = Status::Unschedulable("no new claims to deallocate");
  CycleData* read = state.Get<CycleData>(kCycleKey);
  if (read == nullptr) return result;
  CycleData& data = *read;
  std::vector<size_t> unavailable;
  {
    std::lock_guard<std::mutex> lock(data.shared->mu);
    unavailable.assign(data.shared->unavailable.begin(), data.shared->unavailable.end());
  }
  std::sort(unavailable.begin(), unavailable.end());
  state::DraState* dra = handle_.Dra();
  for (size_t i : unavailable) {
    if (data.claims[i].pending) continue;  // not allocated yet: nothing to deallocate
    const api::ResourceClaim& claim = *data.claims[i].claim;
    const auto& rf = claim.status.reserved_for;
    if (!(rf.empty() || (rf.size() == 1 && rf[0].uid == pod.uid()))) continue;
    absl::StatusOr<std::string> rv = handle_.Writer().DeallocateResourceClaim(claim);
    if (!rv.ok()) {
      result.status = Status::Error(std::string(rv.status().message()));
      return result;
    }
    if (dra != nullptr) {
      auto copy = std::make_shared<api::ResourceClaim>(claim);
      copy->status = {};
      SetVersion(*copy, *rv);
      dra->AssumeClaim(std::move(copy));
    }
    result.status = Status::Unschedulable("deallocation of ResourceClaim completed");
    result.message = gantry::StrCat("deallocated resourceclaim \"", claim.meta.name, "\"");
    return result;
  }
  if (data.stale_extended != nullptr) {
    // The pod's extended-resource claim from an earlier attempt: delete it,
    // so that the next attempt builds one for the node it picks.
    const api::ResourceClaim& claim = *data.stale_extended;
    absl::Status st = handle_.Writer().DeleteResourceClaim(claim);
    if (!st.ok()) {
      result.status = Status::Error(std::string(st.message()));
      return result;
    }
    if (dra != nullptr) dra->DeleteClaim(claim.meta.namespace_.view(), claim.meta.name);
    result.status = Status::Unschedulable("deletion of ResourceClaim completed");
    result.message = gantry::StrCat("deleted resourceclaim \"", claim.meta.name, "\"");
  }
  return result;
}

Status DynamicResources::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                  const std::vector<const framework::NodeInfo*>&) {
  // Without claims to allocate every node scores 0: skip the per-node calls.
  if (pod.p().resource_claims.empty()) return Status::Skip();
  auto read = state.Read<CycleData>(kCycleKey);
  if (!read.ok() || !(*read)->allocator) return Status::Skip();
  // Only prioritized lists score (extended-resource requests never have
  // subrequests): without one every node scores 0.
  for (const auto& claim : (*read)->to_allocate) {
    for (const api::DeviceRequest& r : claim->spec.requests) {
      if (!r.first_available.empty()) return Status();
    }
  }
  return Status::Skip();
}

Status DynamicResources::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo& node, int64_t* score) {
  *score = 0;
  // PreFilter skipped a pod without claims: no state to read, and a failed
  // Read would build an error message for every node.
  if (pod.p().resource_claims.empty()) return Status();
  CycleData* read = state.Get<CycleData>(kCycleKey);
  if (read == nullptr) return Status();  // PreFilter skipped: no claims
  const CycleData& data = *read;
  const NodeAllocator na = AllocatorOn(data, node.name());
  std::shared_ptr<const dra::NodeAllocation> out =
      FilterOutcome(data, memo_.get(), na, node.name(), node.node());
  if (out != nullptr) *score = out->prioritized_score;
  return Status();
}

Status DynamicResources::NormalizeScore(const framework::CycleState&, const framework::PodInfo&,
                                        std::vector<framework::NodeScore>& scores) {
  helper::DefaultNormalizeScore(framework::kMaxNodeScore, false, scores);
  return Status();
}

Status DynamicResources::Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                                 std::string_view node) {
  CycleData* read = state.Get<CycleData>(kCycleKey);
  if (read == nullptr) return Status();
  CycleData& data = *read;
  state::DraState* dra = handle_.Dra();
  if (dra != nullptr && data.group) {
    for (const ResolvedClaim& rc : data.claims) {
      if (rc.pending) {
        dra->AddInFlightForGroup(rc.claim->meta.uid, *rc.claim->status.allocation,
                                 GroupInFlightId(*data.group), pod.uid());
      }
    }
  }
  if (!data.allocator && data.extended.empty()) return Status();
  data.extended_chosen = ExtendedVariant{};
  // The allocator of the node's solution: the extended-resource variant
  // Filter used there, else the pod's claims alone.
  const NodeAllocator na = AllocatorOn(data, node);
  const ExtendedVariant* variant = na.variant;
  const std::shared_ptr<const dra::Allocator>& allocator = na.allocator;
  if (allocator == nullptr)
    return Status();  // the node's device plugins serve the extended resources
  const framework::NodeInfo* info = handle_.Snapshot().Get(node);
  const api::Node* node_object = info != nullptr ? info->node() : nullptr;
  auto deadline = [&] {
    return args_.filter_timeout_micros > 0
               ? std::chrono::steady_clock::now() +
                     std::chrono::microseconds(args_.filter_timeout_micros)
               : std::chrono::steady_clock::time_point::max();
  };
  // A score plugin's device preference for this node (src/dra/device_preference.h):
  // allocate again with those devices tried first; Filter's solution otherwise.
  dra::NodeAllocation preferred;
  if (const dra::DevicePreference* pref = state.Get<dra::DevicePreference>(kPreferenceKey)) {
    const dra::DevicePreference::Devices devices =
        pref->Get(node, allocator->snapshot().inventory.get());
    if (!devices.empty() && node_object != nullptr) {
      preferred = allocator->Allocate(*node_object, deadline(), /*materialize=*/false, devices);
      handle_.Metrics().CelEvaluations(preferred.cel_evaluations);
    }
  }
  std::shared_ptr<const dra::NodeAllocation> filtered =
      preferred.ok() ? nullptr : FilterOutcome(data, memo_.get(), na, node, node_object);
  if (!preferred.ok() && filtered == nullptr && data.memo != nullptr && node_object != nullptr) {
    // The memo no longer holds Filter's outcome (not expected within a
    // cycle): search the node again, over the same view.
    preferred = allocator->Allocate(*node_object, deadline(), /*materialize=*/false);
    handle_.Metrics().CelEvaluations(preferred.cel_evaluations);
  }
  if (!preferred.ok() && filtered == nullptr) {
    return Status::Error(gantry::StrCat("no device allocation was computed for node ", node));
  }
  {
    std::lock_guard<std::mutex> lock(data.shared->mu);
    data.reserved =
        allocator->Materialize(node, preferred.ok() ? preferred.solution : filtered->solution);
    if (variant != nullptr) {
      // The extended-resource claim is the allocator's last claim.
      data.extended_chosen = *variant;
      data.extended_allocation = std::move(data.reserved.back());
      data.reserved.pop_back();
    }
    // The node is chosen: Filter's per-node solutions are dead weight from
    // here on, and a pod waiting for a binding worker would hold them (one
    // slot per node, ~0.5 KB each).
    absl::flat_hash_map<std::string, std::shared_ptr<const dra::NodeAllocation>>().swap(
        data.shared->node_allocations);
    absl::flat_hash_map<std::string, uint64_t>().swap(data.shared->node_masks);
  }
  data.reserved_node = std::string(node);
  if (data.extended_chosen.claim != nullptr && dra != nullptr) {
    dra->AddInFlight(data.extended_chosen.claim->meta.uid, data.extended_allocation);
  }
  for (const ResolvedClaim& rc : data.claims) {
    if (!rc.allocate || dra == nullptr) continue;
    const api::AllocationResult& a = data.reserved[static_cast<size_t>(rc.alloc_index)];
    if (rc.group) {
      dra->AddInFlightForGroup(rc.claim->meta.uid, a, GroupInFlightId(*data.group), pod.uid());
    } else {
      dra->AddInFlight(rc.claim->meta.uid, a);
    }
  }
  return Status();
}

void DynamicResources::Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                                 std::string_view) {
  CycleData* read = state.Get<CycleData>(kCycleKey);
  if (read == nullptr) return;
  state::DraState* dra = handle_.Dra();
  if (dra == nullptr) return;
  CycleData& data = *read;
  if (data.extended_chosen.claim != nullptr) {
    dra->RemoveInFlight(data.extended_chosen.claim->meta.uid);
    data.extended_chosen = ExtendedVariant{};
  }
  if (data.extended_created != nullptr) {
    // PreBind created the extended-resource claim: delete it again (best
    // effort; a claim left behind is deleted by the next attempt's PostFilter).
    const api::ResourceClaim& c = *data.extended_created;
    if (handle_.Writer().DeleteResourceClaim(c).ok())
      dra->DeleteClaim(c.meta.namespace_.view(), c.meta.name);
    data.extended_created = nullptr;
  }
  for (const ResolvedClaim& rc : data.claims) {
    if (rc.group && (rc.allocate || rc.pending)) {
      dra->RemoveInFlightSharer(rc.claim->meta.uid, pod.uid());
    } else if (rc.allocate) {
      dra->RemoveInFlight(rc.claim->meta.uid);
    }
    if (rc.group) continue;  // the group's reservation stays: other members may use the claim
    // PreBind may have reserved the claim for the pod already: take the pod
    // out of reservedFor again (best effort, as upstream; the allocation stays
    // and is reused or deallocated by a later attempt).
    auto current = dra->GetClaim(rc.claim->meta.namespace_.view(), rc.claim->meta.name);
    if (current == nullptr || !current->IsAllocated() || !current->IsReservedFor(pod.uid()))
      continue;
    auto updated = std::make_shared<api::ResourceClaim>(*current);
    std::erase_if(updated->status.reserved_for,
                  [&](const api::ResourceClaimConsumerReference& r) { return r.uid == pod.uid(); });
    absl::StatusOr<std::string> rv = handle_.Writer().UpdateResourceClaimStatus(
        *current, *current->status.allocation, updated->status.reserved_for);
    if (!rv.ok()) continue;
    SetVersion(*updated, *rv);
    dra->AssumeClaim(std::move(updated));
  }
}

namespace {

// PreBind for a PodGroup-level claim: the first member to get here writes the
// allocation and the PodGroup's reservedFor entry (under `mu`, as members
// bind in parallel); later members find them written.
Status BindGroupClaim(framework::FrameworkHandle& handle, std::mutex& mu, const CycleData& data,
                      const ResolvedClaim& rc, const framework::PodInfo& pod,
                      std::vector<std::string>* with_conditions) {
  const state::PodGroupClaims& group = *data.group;
  state::DraState* dra = handle.Dra();
  framework::ClusterWriter& writer = handle.Writer();
  const api::ResourceClaim& seen = *rc.claim;
  const std::string key = gantry::StrCat(seen.meta.namespace_.view(), "/", seen.meta.name);
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<const api::ResourceClaim> current =
      dra != nullptr ? dra->GetClaim(seen.meta.namespace_.view(), seen.meta.name) : rc.claim;
  auto fail = [&](std::string why) {
    if (dra != nullptr) dra->RemoveInFlightSharer(seen.meta.uid, pod.uid());
    return Status::Error(gantry::StrCat("resourceclaim \"", seen.meta.name, "\" of pod group ",
                                        group.namespace_, "/", group.name, ": ", why));
  };
  if (current == nullptr) return fail("deleted while the group was being bound");
  if (current->IsAllocated() && IsReservedForGroup(*current, group)) {
    if (dra != nullptr) dra->RemoveInFlightSharer(seen.meta.uid, pod.uid());
    if (HasBindingConditions(*current)) with_conditions->push_back(key);
    return Status();
  }
  auto updated = std::make_shared<api::ResourceClaim>(*current);
  if (rc.allocate || rc.pending) {
    if (current->IsAllocated())
      return fail("allocated by another scheduler while the group was being scheduled");
    if (std::find(current->meta.finalizers.begin(), current->meta.finalizers.end(),
                  api::kDeleteProtectionFinalizer) == current->meta.finalizers.end()) {
      absl::StatusOr<std::string> rv =
          writer.AddResourceClaimFinalizer(*current, api::kDeleteProtectionFinalizer);
      if (!rv.ok()) return fail(std::string(rv.status().message()));
      updated->meta.finalizers.emplace_back(api::kDeleteProtectionFinalizer);
      SetVersion(*updated, *rv);
    }
    api::AllocationResult a =
        rc.allocate ? data.reserved[static_cast<size_t>(rc.alloc_index)] : *seen.status.allocation;
    a.allocation_timestamp_micros = handle.clock().NowMicros();
    updated->status.allocation = std::move(a);
  } else if (!current->IsAllocated()) {
    return fail("deallocated while the group was being scheduled");
  }
  updated->status.reserved_for.push_back(GroupConsumer(group));
  // The status write is conditional on the version after the finalizer patch.
  api::ResourceClaim base = *current;
  base.meta.finalizers = updated->meta.finalizers;
  base.meta.resource_version = updated->meta.resource_version;
  absl::StatusOr<std::string> rv = writer.UpdateResourceClaimStatus(
      base, *updated->status.allocation, updated->status.reserved_for);
  if (!rv.ok()) return fail(std::string(rv.status().message()));
  SetVersion(*updated, *rv);
  if (HasBindingConditions(*updated)) with_conditions->push_back(key);
  if (dra != nullptr) dra->AssumeClaim(std::move(updated));
  return Status();
}

// PreBind for extended resources backed by DRA: creates the claim Reserve
// chose (generateName "<pod>-extended-resources-", controlled by the pod,
// annotated, with the delete-protection finalizer), writes its allocation and
// the pod's reservation, assumes it, and records it in the pod's
// status.extendedResourceClaimStatus. On failure the created claim is left
// in `data.extended_created` for Unreserve to delete.
Status BindExtendedClaim(framework::FrameworkHandle& handle, CycleData& data,
                         const framework::PodInfo& pod, std::vector<std::string>* with_conditions) {
  state::DraState* dra = handle.Dra();
  framework::ClusterWriter& writer = handle.Writer();
  const api::Pod& p = pod.p();
  auto fail = [&](std::string_view what, const absl::Status& st) {
    return Status::Error(gantry::StrCat(what, " the claim for the extended resources of pod ",
                                        p.meta.Key(), ": ", st.message()));
  };
  api::ResourceClaim to_create = *data.extended_chosen.claim;
  to_create.meta.name.clear();
  to_create.meta.uid.clear();
  to_create.meta.finalizers = {std::string(api::kDeleteProtectionFinalizer)};
  absl::StatusOr<api::ResourceClaim> created =
      writer.CreateResourceClaim(to_create, gantry::StrCat(p.meta.name, "-extended-resources-"));
  if (!created.ok()) return fail("create", created.status());
  auto updated = std::make_shared<api::ResourceClaim>(*created);
  data.extended_created = updated;
  api::AllocationResult a = data.extended_allocation;
  a.allocation_timestamp_micros = handle.clock().NowMicros();
  updated->status.allocation = a;
  updated->status.reserved_for = {
      api::ResourceClaimConsumerReference{{}, api::Symbol::Intern("pods"), p.meta.name, pod.uid()}};
  absl::StatusOr<std::string> rv =
      writer.UpdateResourceClaimStatus(*created, a, updated->status.reserved_for);
  if (!rv.ok()) return fail("allocate", rv.status());
  SetVersion(*updated, *rv);
  if (dra != nullptr) {
    // Assumed before the in-flight entry goes, so the devices stay held.
    dra->AssumeClaim(updated);
    dra->RemoveInFlight(data.extended_chosen.claim->meta.uid);
  }
  if (HasBindingConditions(*updated)) {
    with_conditions->push_back(
        gantry::StrCat(updated->meta.namespace_.view(), "/", updated->meta.name));
  }
  framework::ExtendedResourceClaimStatus status{updated->meta.name, data.extended_chosen.mappings};
  if (absl::Status st = writer.UpdatePodExtendedResourceClaimStatus(p, status); !st.ok()) {
    return fail("record", st);
  }
  return Status();
}

}  // namespace

Status DynamicResources::PreBind(framework::CycleState& state, const framework::PodInfo& pod, std::string_view node) {
  CycleData* read = state.Get<CycleData>(kCycleKey);
  if (read == nullptr) return Status();
  CycleData& data = *read;
  state::DraState* dra = handle_.Dra();
  framework::ClusterWriter& writer = handle_.Writer();
  std::vector<std::string> with_conditions;  // "ns/name" of claims whose devices have binding conditions
  auto has_conditions = HasBindingConditions;
  for (const ResolvedClaim& rc : data.claims) {
    const api::ResourceClaim& claim = *rc.claim;
    if (rc.group) {
      Status st = BindGroupClaim(handle_, group_claims_mu_, data, rc, pod, &with_conditions);
      if (!st.IsSuccess()) return st;
      continue;
    }
    if (!rc.allocate && claim.IsReservedFor(pod.uid())) {
      if (has_conditions(claim)) with_conditions.push_back(gantry::StrCat(claim.meta.namespace_.view(), "/", claim.meta.name));
      continue;
    }
    auto updated = std::make_shared<api::ResourceClaim>(claim);
    if (rc.allocate) {
      if (std::find(claim.meta.finalizers.begin(), claim.meta.finalizers.end(), api::kDeleteProtectionFinalizer) ==
          claim.meta.finalizers.end()) {
        absl::StatusOr<std::string> rv =
            writer.AddResourceClaimFinalizer(claim, api::kDeleteProtectionFinalizer);
        if (!rv.ok()) {
          if (dra) dra->RemoveInFlight(claim.meta.uid);
          return Status::Error(
              gantry::StrCat("resourceclaim \"", claim.meta.name, "\": ", rv.status().message()));
        }
        updated->meta.finalizers.emplace_back(api::kDeleteProtectionFinalizer);
        SetVersion(*updated, *rv);
      }
      api::AllocationResult a = data.reserved[static_cast<size_t>(rc.alloc_index)];
      a.allocation_timestamp_micros = handle_.clock().NowMicros();
      updated->status.allocation = std::move(a);
    }
    updated->status.reserved_for.push_back(
        api::ResourceClaimConsumerReference{{}, api::Symbol::Intern("pods"), pod.p().meta.name, pod.uid()});
    // The status write is conditional on the version after the finalizer patch.
    api::ResourceClaim base = claim;
    base.meta.finalizers = updated->meta.finalizers;
    base.meta.resource_version = updated->meta.resource_version;
    absl::StatusOr<std::string> rv = writer.UpdateResourceClaimStatus(
        base, *updated->status.allocation, updated->status.reserved_for);
    if (!rv.ok()) {
      if (dra && rc.allocate) dra->RemoveInFlight(claim.meta.uid);
      return Status::Error(
          gantry::StrCat("resourceclaim \"", claim.meta.name, "\": ", rv.status().message()));
    }
    SetVersion(*updated, *rv);
    if (has_conditions(*updated)) with_conditions.push_back(gantry::StrCat(claim.meta.namespace_.view(), "/", claim.meta.name));
    if (dra) dra->AssumeClaim(std::move(updated));
  }
  if (data.extended_chosen.claim != nullptr && data.extended_created == nullptr) {
    Status st = BindExtendedClaim(handle_, data, pod, &with_conditions);
    if (!st.IsSuccess()) return st;
  }
  if (!features_.binding_conditions || with_conditions.empty() || dra == nullptr) return Status();
  writer.RecordEvent(framework::EventRecord{"Pod", pod.p().meta.namespace_.str(), pod.p().meta.name, pod.uid(),
                                            "Normal", "BindingConditionsPending", "Scheduling",
                                            gantry::StrCat("waiting for binding conditions for device on node ", node),
                                            std::string(handle_.SchedulerName())});
  std::string why = WaitForBindingConditions(pod, with_conditions);
  if (why.empty()) return Status();
  // Release what this attempt allocated (upstream reaches the same state
  // through Unreserve and the next attempt's PostFilter): the devices return
  // to the pool and the next attempt allocates afresh.
  for (const ResolvedClaim& rc : data.claims) {
    if (!rc.allocate) continue;
    auto current = dra->GetClaim(rc.claim->meta.namespace_.view(), rc.claim->meta.name);
    if (current == nullptr || !current->IsAllocated()) continue;
    const auto& rf = current->status.reserved_for;
    if (!(rf.empty() || (rf.size() == 1 && rf[0].uid == pod.uid()))) continue;
    if (absl::StatusOr<std::string> rv = writer.DeallocateResourceClaim(*current); rv.ok()) {
      auto copy = std::make_shared<api::ResourceClaim>(*current);
      copy->status = {};
      SetVersion(*copy, *rv);
      dra->AssumeClaim(std::move(copy));
    }
  }
  return Status::Error(std::move(why));
}

std::string DynamicResources::WaitForBindingConditions(const framework::PodInfo& pod,
                                                       const std::vector<std::string>& claim_keys) {
  state::DraState& dra = *handle_.Dra();
  const Clock& clock = handle_.clock();
  const int64_t deadline = clock.NowMicros() + args_.binding_timeout_micros;
  for (;;) {
    const int64_t now = clock.NowMicros();
    bool ready = true;
    std::string pending_device;
    for (const std::string& key : claim_keys) {
      const size_t slash = key.find('/');
      auto claim = dra.GetClaim(std::string_view(key).substr(0, slash), std::string_view(key).substr(slash + 1));
      if (claim == nullptr || claim->meta.deletion_micros) {
        return gantry::StrCat("resourceclaim \"", key, "\" was deleted while waiting for binding conditions");
      }
      std::string why;
      switch (CheckBindingConditions(*claim, now, args_.binding_timeout_micros, &why)) {
        case BindingState::kReady:
          break;
        case BindingState::kFailed:
        case BindingState::kTimedOut:
          return why;
        case BindingState::kPending:
          ready = false;
          if (pending_device.empty()) pending_device = key;
          break;
      }
    }
    if (ready) return "";
    if (now >= deadline) {
      return gantry::StrCat("pod ", pod.p().meta.Key(), ": device binding timeout (resourceclaim \"", pending_device,
                            "\" not ready after ", FormatDuration(args_.binding_timeout_micros), ")");
    }
    const int64_t wait = std::min(kBindingPollMicros, deadline - now);
    bool waited;
    if (poll_wait_) {
      waited = poll_wait_(wait);
    } else if (dra.HasDeviceStatusWait()) {
      waited = dra.WaitForDeviceStatus(wait);  // offline: the simulator's drivers
    } else if (dynamic_cast<const FakeClock*>(&clock) == nullptr) {
      std::this_thread::sleep_for(std::chrono::microseconds(wait));
      waited = true;
    } else {
      waited = false;  // virtual time: nothing would change while we wait
    }
    if (!waited) {
      return gantry::StrCat("resourceclaim \"", pending_device,
                            "\": binding conditions pending and this scheduler cannot wait for them (no real clock)");
    }
  }
}

std::vector<framework::ClusterEventWithHint> DynamicResources::EventsToRegister() const {
  using framework::ClusterEventWithHint;
  using framework::EventResource;
  using framework::QueueingHint;
  std::vector<ClusterEventWithHint> out;
  ClusterEventWithHint claim;
  claim.event = {EventResource::kResourceClaim, framework::kAdd | framework::kUpdate | framework::kDelete,
                 "ResourceClaimChange"};
  claim.hint = [](const api::Pod& pod, const framework::ClusterEvent&, const void* old_obj, const void* new_obj) {
    const auto* o = static_cast<const api::ResourceClaim*>(old_obj);
    const auto* n = static_cast<const api::ResourceClaim*>(new_obj);
    const api::ResourceClaim* c = n ? n : o;
    if (c == nullptr) return QueueingHint::kQueue;
    if (c->meta.namespace_ == pod.meta.namespace_) {
      for (const api::PodResourceClaim& rc : pod.resource_claims) {
        if (rc.resource_claim_name == c->meta.name) return QueueingHint::kQueue;
      }
      for (const api::PodResourceClaimStatus& st : pod.resource_claim_statuses) {
        if (st.resource_claim_name == c->meta.name) return QueueingHint::kQueue;
      }
      for (const api::OwnerReference& ref : c->meta.owner_references) {
        if (ref.uid == pod.meta.uid) return QueueingHint::kQueue;
      }
    }
    // Another pod's claim: only freeing devices can help.
    const bool was_allocated = o != nullptr && o->IsAllocated();
    const bool is_allocated = n != nullptr && n->IsAllocated();
    return was_allocated && !is_allocated ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  out.push_back(std::move(claim));
  out.push_back({{EventResource::kResourceSlice, framework::kAdd | framework::kUpdate | framework::kDelete,
                  "ResourceSliceChange"},
                 nullptr});
  out.push_back({{EventResource::kDeviceClass, framework::kAdd | framework::kUpdate, "DeviceClassChange"}, nullptr});
  out.push_back({{EventResource::kDeviceTaintRule, framework::kAll, "DeviceTaintRuleChange"}, nullptr});
  out.push_back({{EventResource::kNode, framework::kAdd | framework::kUpdateNodeLabel | framework::kUpdateNodeAllocatable,
                  "NodeChange"},
                 nullptr});
  return out;
}

absl::Status Register(framework::Registry& registry) {
  return registry.Register(framework::PluginRegistration{
      std::string(kName),
      [](api::Decoder& d, api::JsonValue args,
         framework::FrameworkHandle& handle) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
        DynamicResourcesArgs a = DynamicResourcesArgs::Decode(d, args);
        if (!d.ok()) return helper::DecoderStatus(d);
        return std::make_unique<DynamicResources>(a, handle);
      },
      [](api::Decoder& d, api::JsonValue args) -> nlohmann::json {
        return DynamicResourcesArgs::Decode(d, args).ToJson();
      },
      std::string(kArgsKind)});
}

}  // namespace gantry::plugins::dynamic_resources
