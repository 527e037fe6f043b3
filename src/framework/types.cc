// Implementation of the plugin-facing value types in include/gantry/.
#include "gantry/types.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>

#include "gantry/clock.h"
#include "gantry/cycle_state.h"
#include "gantry/events.h"
#include "gantry/registry.h"
#include "gantry/status.h"
#include "gantry/util/saturating.h"
#include "gantry/util/strings.h"

namespace gantry {

// ---- Clock ----------------------------------------------------------------

int64_t RealClock::NowMicros() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t MonotonicMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

RealClock& RealClock::Get() {
  static RealClock* clock = new RealClock();
  return *clock;
}

}  // namespace gantry

namespace gantry::framework {

// ---- Status ---------------------------------------------------------------

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kSuccess: return "Success";
    case Code::kError: return "Error";
    case Code::kUnschedulable: return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable: return "UnschedulableAndUnresolvable";
    case Code::kWait: return "Wait";
    case Code::kSkip: return "Skip";
    case Code::kPending: return "Pending";
  }
  return "Unknown";
}

Status Status::FromAbsl(const absl::Status& st) {
  if (st.ok()) return Status();
  Status out(Code::kError, std::string(st.message()));
  out.MutableRep().infra = st.code();
  return out;
}

std::string Status::Message() const {
  const std::vector<std::string>& r = reasons();
  std::string out;
  for (size_t i = 0; i < r.size(); ++i) {
    if (i > 0) out += ", ";
    out += r[i];
  }
  return out;
}

const std::vector<std::string>& Status::NoReasons() {
  static const std::vector<std::string>* const kNone = new std::vector<std::string>();
  return *kNone;
}

std::string_view EventResourceName(EventResource r) {
  switch (r) {
    case EventResource::kPod: return "Pod";
    case EventResource::kAssignedPod: return "AssignedPod";
    case EventResource::kUnscheduledPod: return "UnscheduledPod";
    case EventResource::kNode: return "Node";
    case EventResource::kNamespace: return "Namespace";
    case EventResource::kResourceClaim: return "ResourceClaim";
    case EventResource::kResourceSlice: return "ResourceSlice";
    case EventResource::kDeviceClass: return "DeviceClass";
    case EventResource::kDeviceTaintRule: return "DeviceTaintRule";
    case EventResource::kPodGroup: return "PodGroup";
    case EventResource::kWorkload: return "Workload";
    case EventResource::kPersistentVolumeClaim: return "PersistentVolumeClaim";
    case EventResource::kWildcard: return "*";
  }
  return "?";
}

// ---- CycleState -----------------------------------------------------------

namespace {

// Key text -> id. Ids are dense, so CycleState can index a vector by them.
struct StateKeyTable {
  std::mutex mu;
  absl::flat_hash_map<std::string, uint32_t> ids;
  std::deque<std::string> names;  // by id; a deque keeps addresses stable
};

StateKeyTable& Keys() {
  static StateKeyTable* table = new StateKeyTable();
  return *table;
}

}  // namespace

StateKey::StateKey(std::string_view name) {
  // The string_view overloads of CycleState construct a key per call, also
  // from parallel Filter/Score: a per-thread cache keeps them off the lock.
  thread_local absl::flat_hash_map<std::string, std::pair<uint32_t, const std::string*>> cache;
  if (auto it = cache.find(gantry::AsAbsl(name)); it != cache.end()) {
    id_ = it->second.first;
    name_ = it->second.second;
    return;
  }
  StateKeyTable& t = Keys();
  {
    std::lock_guard<std::mutex> lock(t.mu);
    auto [it, inserted] =
        t.ids.try_emplace(std::string(name), static_cast<uint32_t>(t.names.size()));
    if (inserted) t.names.emplace_back(name);
    id_ = it->second;
    name_ = &t.names[id_];
  }
  cache.emplace(std::string(name), std::make_pair(id_, name_));
}

absl::Status CycleState::ReadError(const StateKey& key, bool present) {
  if (!present) {
    return absl::NotFoundError(
        gantry::StrCat("error reading \"", key.name(), "\" from cycleState: not found"));
  }
  return absl::InternalError(
      gantry::StrCat("cycleState key \"", key.name(), "\" has an unexpected type"));
}

// ---- Registry -------------------------------------------------------------

absl::Status Registry::Register(PluginRegistration registration) {
  std::string name = registration.name;
  if (plugins_.contains(name)) {
    return absl::AlreadyExistsError(gantry::StrCat("a plugin named ", name, " already exists"));
  }
  plugins_.emplace(std::move(name), std::move(registration));
  return absl::OkStatus();
}

const PluginRegistration* Registry::Find(std::string_view name) const {
  auto it = plugins_.find(std::string(name));
  return it == plugins_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, reg] : plugins_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

// ---- Resource -------------------------------------------------------------

Resource Resource::FromList(const api::ResourceList& list) {
  const api::ResourceNames& n = api::ResourceNames::Get();
  Resource r;
  for (const api::ResourceAmount& a : list.items()) {
    if (a.name == n.cpu) {
      r.milli_cpu = a.value;
    } else if (a.name == n.memory) {
      r.memory = a.value;
    } else if (a.name == n.ephemeral_storage) {
      r.ephemeral_storage = a.value;
    } else if (a.name == n.pods) {
      r.allowed_pod_number = a.value;
    } else {
      r.AddScalar(a.name, a.value);
    }
  }
  return r;
}

int64_t Resource::Get(api::Symbol name) const {
  const api::ResourceNames& n = api::ResourceNames::Get();
  if (name == n.cpu) return milli_cpu;
  if (name == n.memory) return memory;
  if (name == n.ephemeral_storage) return ephemeral_storage;
  if (name == n.pods) return allowed_pod_number;
  for (const api::ResourceAmount& a : scalar) {
    if (a.name == name) return a.value;
  }
  return 0;
}

void Resource::Set(api::Symbol name, int64_t value) {
  const api::ResourceNames& n = api::ResourceNames::Get();
  if (name == n.cpu) {
    milli_cpu = value;
  } else if (name == n.memory) {
    memory = value;
  } else if (name == n.ephemeral_storage) {
    ephemeral_storage = value;
  } else if (name == n.pods) {
    allowed_pod_number = value;
  } else {
    for (api::ResourceAmount& a : scalar) {
      if (a.name == name) {
        a.value = value;
        return;
      }
    }
    scalar.push_back(api::ResourceAmount{name, value});
  }
}

void Resource::AddScalar(api::Symbol name, int64_t value) {
  for (api::ResourceAmount& a : scalar) {
    if (a.name == name) {
      a.value = SaturatingAdd(a.value, value);
      return;
    }
  }
  scalar.push_back(api::ResourceAmount{name, value});
}

void Resource::Add(const Resource& other) {
  milli_cpu = SaturatingAdd(milli_cpu, other.milli_cpu);
  memory = SaturatingAdd(memory, other.memory);
  ephemeral_storage = SaturatingAdd(ephemeral_storage, other.ephemeral_storage);
  allowed_pod_number = SaturatingAdd(allowed_pod_number, other.allowed_pod_number);
  for (const api::ResourceAmount& a : other.scalar) AddScalar(a.name, a.value);
}

void Resource::Sub(const Resource& other) {
  milli_cpu = SaturatingSub(milli_cpu, other.milli_cpu);
  memory = SaturatingSub(memory, other.memory);
  ephemeral_storage = SaturatingSub(ephemeral_storage, other.ephemeral_storage);
  allowed_pod_number = SaturatingSub(allowed_pod_number, other.allowed_pod_number);
  for (const api::ResourceAmount& a : other.scalar) {
    bool found = false;
    for (api::ResourceAmount& mine : scalar) {
      if (mine.name == a.name) {
        mine.value = SaturatingSub(mine.value, a.value);
        found = true;
        break;
      }
    }
    if (!found) scalar.push_back(api::ResourceAmount{a.name, SaturatingSub(0, a.value)});
  }
}

bool Resource::HasSaturated() const {
  if (IsSaturated(milli_cpu) || IsSaturated(memory) || IsSaturated(ephemeral_storage) ||
      IsSaturated(allowed_pod_number)) {
    return true;
  }
  for (const api::ResourceAmount& a : scalar) {
    if (IsSaturated(a.value)) return true;
  }
  return false;
}

bool Resource::IsZero() const {
  if (milli_cpu || memory || ephemeral_storage || allowed_pod_number) return false;
  for (const api::ResourceAmount& a : scalar) {
    if (a.value) return false;
  }
  return true;
}

// ---- AffinityTerm / PodInfo -----------------------------------------------

bool AffinityTerm::Matches(const api::Pod& pod, const api::Labels* ns_labels) const {
  bool ns_ok = namespaces.contains(pod.meta.namespace_);
  if (!ns_ok && namespace_selector) {
    ns_ok = ns_labels != nullptr && namespace_selector->Matches(*ns_labels);
  }
  if (!ns_ok) return false;
  if (selector_matches_nothing) return false;
  return selector.Matches(pod.meta.labels);
}

namespace {

// Resolves one term for `pod`: namespaces default to the pod's own when
// neither namespaces nor a namespaceSelector is given; matchLabelKeys /
// mismatchLabelKeys add In / NotIn requirements with the pod's values.
AffinityTerm ResolveTerm(const api::PodAffinityTerm& t, const api::Pod& pod) {
  AffinityTerm out;
  out.topology_key = t.topology_key;
  if (t.label_selector) {
    out.selector = *t.label_selector;
  } else {
    out.selector_matches_nothing = true;
  }
  for (api::Symbol ns : t.namespaces) out.namespaces.insert(ns);
  if (t.namespace_selector) {
    if (t.namespace_selector->Empty()) {
      out.namespace_selector = *t.namespace_selector;  // all namespaces
    } else {
      out.namespace_selector = *t.namespace_selector;
    }
  }
  if (t.namespaces.empty() && !t.namespace_selector) out.namespaces.insert(pod.meta.namespace_);
  if (t.label_selector) {
    for (api::Symbol key : t.match_label_keys) {
      if (auto v = api::FindLabel(pod.meta.labels, key)) {
        out.selector.requirements.push_back(api::Requirement{key, api::SelectorOp::kIn, {*v}, 0});
      }
    }
    for (api::Symbol key : t.mismatch_label_keys) {
      if (auto v = api::FindLabel(pod.meta.labels, key)) {
        out.selector.requirements.push_back(api::Requirement{key, api::SelectorOp::kNotIn, {*v}, 0});
      }
    }
  }
  return out;
}

}  // namespace

std::shared_ptr<const PodInfo> PodInfo::Create(std::shared_ptr<const api::Pod> pod,
                                               int32_t priority) {
  auto info = std::make_shared<PodInfo>();
  info->priority = priority;
  info->requests = Resource::FromList(pod->requests);
  info->non_zero_requests = info->requests;
  const api::ResourceNames& n = api::ResourceNames::Get();
  // Upstream defaults cpu/memory for scoring only when the pod does not name them.
  bool has_cpu = false, has_mem = false;
  for (const api::ResourceAmount& a : pod->requests.items()) {
    has_cpu |= a.name == n.cpu && a.value != 0;
    has_mem |= a.name == n.memory && a.value != 0;
  }
  if (!has_cpu) info->non_zero_requests.milli_cpu = kDefaultMilliCpuRequest;
  if (!has_mem) info->non_zero_requests.memory = kDefaultMemoryRequest;
  if (pod->affinity) {
    const api::Affinity& a = *pod->affinity;
    for (const auto& t : a.pod_affinity_required) info->required_affinity.push_back(ResolveTerm(t, *pod));
    for (const auto& t : a.pod_anti_affinity_required) {
      info->required_anti_affinity.push_back(ResolveTerm(t, *pod));
    }
    for (const auto& w : a.pod_affinity_preferred) {
      info->preferred_affinity.push_back({ResolveTerm(w.term, *pod), w.weight});
    }
    for (const auto& w : a.pod_anti_affinity_preferred) {
      info->preferred_anti_affinity.push_back({ResolveTerm(w.term, *pod), w.weight});
    }
  }
  info->pod = std::move(pod);
  return info;
}

// ---- HostPortInfo ---------------------------------------------------------

namespace {
bool IsWildcardIp(api::Symbol ip) { return ip.empty() || ip.view() == "0.0.0.0" || ip.view() == "::"; }
}  // namespace

void HostPortInfo::Add(api::Symbol ip, api::Symbol protocol, int32_t port) {
  for (Entry& e : entries_) {
    if (e.ip == ip && e.protocol == protocol && e.port == port) {
      e.count++;
      return;
    }
  }
  entries_.push_back(Entry{ip, protocol, port, 1});
}

void HostPortInfo::Remove(api::Symbol ip, api::Symbol protocol, int32_t port) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.ip == ip && e.protocol == protocol && e.port == port) {
      if (--e.count == 0) entries_.erase(entries_.begin() + static_cast<long>(i));
      return;
    }
  }
}

bool HostPortInfo::CheckConflict(api::Symbol ip, api::Symbol protocol, int32_t port) const {
  if (port <= 0) return false;
  for (const Entry& e : entries_) {
    if (e.port != port || e.protocol != protocol) continue;
    if (IsWildcardIp(ip) || IsWildcardIp(e.ip) || e.ip == ip) return true;
  }
  return false;
}

// ---- NodeInfo -------------------------------------------------------------

uint64_t NodeInfo::NextGeneration() {
  static std::atomic<uint64_t> generation{0};
  return generation.fetch_add(1, std::memory_order_relaxed) + 1;
}

void NodeInfo::SetNode(std::shared_ptr<const api::Node> node) {
  node_ = std::move(node);
  name_ = node_ ? std::string_view(node_->meta.name) : std::string_view();
  unschedulable_ = node_ ? node_->unschedulable : false;
  taints_ = node_ ? absl::MakeConstSpan(node_->taints) : absl::Span<const api::Taint>();
  allocatable_ = node_ ? Resource::FromList(node_->allocatable) : Resource();
  Bump();
}

void NodeInfo::Account(const PodInfo& pod, int sign) {
  if (sign > 0) {
    requested_.Add(pod.requests);
    non_zero_requested_.Add(pod.non_zero_requests);
  } else {
    requested_.Sub(pod.requests);
    non_zero_requested_.Sub(pod.non_zero_requests);
  }
  for (const api::HostPort& hp : pod.p().host_ports) {
    if (sign > 0) {
      used_ports_.Add(hp.host_ip, hp.protocol, hp.port);
    } else {
      used_ports_.Remove(hp.host_ip, hp.protocol, hp.port);
    }
  }
}

void NodeInfo::AddPod(PodInfoPtr pod) {
  Account(*pod, +1);
  const api::Pod& p = pod->p();
  if (p.affinity && p.affinity->HasPodAffinity()) {
    pods_with_affinity_.push_back(pod);
    if (!pod->required_anti_affinity.empty()) pods_with_required_anti_affinity_.push_back(pod);
  }
  pods_.push_back(std::move(pod));
  Bump();
}

bool NodeInfo::RemovePod(std::string_view uid) {
  auto erase_from = [&](std::vector<PodInfoPtr>& v) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i]->uid() == uid) {
        v[i] = std::move(v.back());
        v.pop_back();
        return true;
      }
    }
    return false;
  };
  PodInfoPtr found;
  for (const PodInfoPtr& p : pods_) {
    if (p->uid() == uid) {
      found = p;
      break;
    }
  }
  if (!found) return false;
  erase_from(pods_);
  erase_from(pods_with_affinity_);
  erase_from(pods_with_required_anti_affinity_);
  Account(*found, -1);
  if (requested_.HasSaturated() || non_zero_requested_.HasSaturated()) {
    // A saturated sum does not go down under Sub: rebuild it from the pods left.
    for (Resource* r : {&requested_, &non_zero_requested_}) {
      r->milli_cpu = r->memory = r->ephemeral_storage = r->allowed_pod_number = 0;
      r->scalar.clear();
    }
    for (const PodInfoPtr& p : pods_) {
      requested_.Add(p->requests);
      non_zero_requested_.Add(p->non_zero_requests);
    }
  }
  Bump();
  return true;
}

}  // namespace gantry::framework
