#include "src/client/event_source.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "spdlog/spdlog.h"
#include "src/api/dra.h"
#include "src/api/node.h"
#include "src/api/pod.h"
#include "src/api/policy.h"

namespace gantry::client {

namespace {

// Where each informed kind goes in an ObjectSet.
void Put(api::ObjectSet* s, const api::Pod& o) { s->pods.push_back(o); }
void Put(api::ObjectSet* s, const api::Node& o) { s->nodes.push_back(o); }
void Put(api::ObjectSet* s, const api::Namespace& o) { s->namespaces.push_back(o); }
void Put(api::ObjectSet* s, const api::PriorityClass& o) { s->priority_classes.push_back(o); }
void Put(api::ObjectSet* s, const api::PodDisruptionBudget& o) { s->pdbs.push_back(o); }
void Put(api::ObjectSet* s, const api::PodGroup& o) { s->pod_groups.push_back(o); }
void Put(api::ObjectSet* s, const api::CompositePodGroup& o) {
  s->composite_pod_groups.push_back(o);
}
void Put(api::ObjectSet* s, const api::CoschedulingPodGroup& o) {
  s->coscheduling_pod_groups.push_back(o);
}
void Put(api::ObjectSet* s, const api::ResourceSlice& o) { s->resource_slices.push_back(o); }
void Put(api::ObjectSet* s, const api::DeviceClass& o) { s->device_classes.push_back(o); }
void Put(api::ObjectSet* s, const api::ResourceClaim& o) { s->resource_claims.push_back(o); }
void Put(api::ObjectSet* s, const api::ResourceClaimTemplate& o) {
  s->resource_claim_templates.push_back(o);
}
void Put(api::ObjectSet* s, const api::DeviceTaintRule& o) { s->device_taint_rules.push_back(o); }

}  // namespace

template <typename T>
void EventSource::Add(std::string name, std::string path, std::string field_selector,
                      std::string kind, T (*decode)(api::Decoder&, api::JsonValue),
                      typename Informer<T>::Handlers handlers) {
  // Wrap every handler with the shared mutex.
  typename Informer<T>::Handlers locked;
  if (handlers.add) {
    locked.add = [this, h = handlers.add](typename Informer<T>::Ptr o) {
      std::lock_guard<std::mutex> lock(handler_mu_);
      h(std::move(o));
    };
  }
  if (handlers.update) {
    locked.update = [this, h = handlers.update](typename Informer<T>::Ptr a,
                                                typename Informer<T>::Ptr b) {
      std::lock_guard<std::mutex> lock(handler_mu_);
      h(std::move(a), std::move(b));
    };
  }
  if (handlers.del) {
    locked.del = [this, h = handlers.del](typename Informer<T>::Ptr o) {
      std::lock_guard<std::mutex> lock(handler_mu_);
      h(std::move(o));
    };
  }
  std::string kind_label = kind;
  auto informer = std::make_unique<Informer<T>>(std::move(kind), decode, std::move(locked));
  Informer<T>* raw = informer.get();
  ReflectorOptions opts;
  opts.name = std::move(name);
  opts.path = std::move(path);
  opts.field_selector = std::move(field_selector);
  Entry e;
  e.reflector = std::make_unique<Reflector>(client_, std::move(opts), raw);
  e.decode_errors = [raw] { return raw->decode_errors(); };
  e.copy_to = [raw](api::ObjectSet* out) {
    for (const typename Informer<T>::Ptr& o : raw->Items()) Put(out, *o);
  };
  e.kind = std::move(kind_label);
  e.sink = std::move(informer);
  entries_.push_back(std::move(e));
}

EventSource::EventSource(HttpClient& client, const Discovery& discovery,
                         state::ClusterEventHandler& sched)
    : client_(client), scheduler_(sched) {
  using PodPtr = std::shared_ptr<const api::Pod>;
  using NodePtr = std::shared_ptr<const api::Node>;
  // A bound pod that does not decode whole arrives as an undecodable pod that
  // keeps its node (api::Pod::decode_error); each arrival is counted with the
  // Pod decode errors and logged.
  auto undecodable = std::make_shared<std::atomic<int64_t>>(0);
  auto note = [undecodable](const PodPtr& p) {
    if (!p->Undecodable()) return;
    undecodable->fetch_add(1);
    spdlog::warn("bound pod {} kept on node {} with only the requests that could be read: {}",
                 p->meta.Key(), p->node_name.view(), p->decode_error);
  };
  Add<api::Pod>("pods", "/api/v1/pods", kPodFieldSelector, "Pod", &api::DecodePod,
                {[this, note](PodPtr p) {
                   note(p);
                   scheduler_.OnPodAdd(std::move(p));
                 },
                 [this, note](PodPtr a, PodPtr b) {
                   note(b);
                   scheduler_.OnPodUpdate(std::move(a), std::move(b));
                 },
                 [this](PodPtr p) { scheduler_.OnPodDelete(std::move(p)); }});
  entries_.back().decode_errors = [inner = entries_.back().decode_errors, undecodable] {
    return inner() + undecodable->load();
  };
  Add<api::Node>(
      "nodes", "/api/v1/nodes", "", "Node", &api::DecodeNode,
      {[this](NodePtr n) { scheduler_.OnNodeAdd(std::move(n)); },
       [this](NodePtr a, NodePtr b) { scheduler_.OnNodeUpdate(std::move(a), std::move(b)); },
       [this](NodePtr n) { scheduler_.OnNodeDelete(std::move(n)); }});
  using NsPtr = std::shared_ptr<const api::Namespace>;
  auto ns_set = [this](NsPtr n) {
    scheduler_.OnNamespace(api::Symbol::Intern(n->meta.name), n->meta.labels);
  };
  Add<api::Namespace>(
      "namespaces", "/api/v1/namespaces", "", "Namespace", &api::DecodeNamespace,
      {ns_set, [ns_set](NsPtr, NsPtr n) { ns_set(std::move(n)); },
       [this](NsPtr n) { scheduler_.OnNamespaceDelete(api::Symbol::Intern(n->meta.name)); }});
  if (discovery.ServesGroupVersion("scheduling.k8s.io/v1")) {
    using PcPtr = std::shared_ptr<const api::PriorityClass>;
    auto pc_set = [this](PcPtr pc) {
      scheduler_.OnPriorityClass(
          api::Symbol::Intern(pc->meta.name),
          state::PriorityClassInfo{pc->value, pc->global_default, pc->preemption_policy});
    };
    Add<api::PriorityClass>("priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses", "",
                            "PriorityClass", &api::DecodePriorityClass,
                            {pc_set, [pc_set](PcPtr, PcPtr pc) { pc_set(std::move(pc)); },
                             [this](PcPtr pc) {
                               scheduler_.OnPriorityClassDelete(api::Symbol::Intern(pc->meta.name));
                             }});
  }
  if (discovery.ServesGroupVersion("policy/v1")) {
    using PdbPtr = std::shared_ptr<const api::PodDisruptionBudget>;
    Add<api::PodDisruptionBudget>(
        "poddisruptionbudgets", "/apis/policy/v1/poddisruptionbudgets", "", "PodDisruptionBudget",
        &api::DecodePodDisruptionBudget,
        {[this](PdbPtr p) { scheduler_.OnPodDisruptionBudget(std::move(p)); },
         [this](PdbPtr, PdbPtr p) { scheduler_.OnPodDisruptionBudget(std::move(p)); },
         [this](PdbPtr p) { scheduler_.OnPodDisruptionBudgetDelete(p->meta.Key()); }});
  }
  // PodGroups: native scheduling.k8s.io/v1beta1 and scheduler-plugins
  // scheduling.x-k8s.io/v1alpha1, each only when served.
  if (discovery.ServesResource("scheduling.k8s.io/v1beta1", "podgroups")) {
    using P = std::shared_ptr<const api::PodGroup>;
    Add<api::PodGroup>("podgroups", "/apis/scheduling.k8s.io/v1beta1/podgroups", "", "PodGroup",
                       &api::DecodePodGroup,
                       {[this](P o) { scheduler_.OnPodGroup(state::GroupInfoFrom(*o)); },
                        [this](P, P o) { scheduler_.OnPodGroup(state::GroupInfoFrom(*o)); },
                        [this](P o) { scheduler_.OnPodGroupDelete(o->meta.Key()); }});
  }
  if (discovery.ServesResource("scheduling.k8s.io/v1alpha3", "compositepodgroups")) {
    using P = std::shared_ptr<const api::CompositePodGroup>;
    Add<api::CompositePodGroup>(
        "compositepodgroups", "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups", "",
        "CompositePodGroup", &api::DecodeCompositePodGroup,
        {[this](P o) { scheduler_.OnCompositePodGroup(state::GroupInfoFrom(*o)); },
         [this](P, P o) { scheduler_.OnCompositePodGroup(state::GroupInfoFrom(*o)); },
         [this](P o) { scheduler_.OnCompositePodGroupDelete(o->meta.Key()); }});
  }
  if (discovery.ServesResource("scheduling.x-k8s.io/v1alpha1", "podgroups")) {
    using P = std::shared_ptr<const api::CoschedulingPodGroup>;
    Add<api::CoschedulingPodGroup>(
        "coschedulingpodgroups", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", "",
        "PodGroup.scheduling.x-k8s.io", &api::DecodeCoschedulingPodGroup,
        {[this](P o) { scheduler_.OnPodGroup(state::GroupInfoFrom(*o)); },
         [this](P, P o) { scheduler_.OnPodGroup(state::GroupInfoFrom(*o)); },
         [this](P o) { scheduler_.OnPodGroupDelete(o->meta.Key()); }});
  }
  // Dynamic Resource Allocation (resource.k8s.io/v1), each only when served.
  const std::string dra = "resource.k8s.io/v1";
  auto serves = [&](const char* r) { return discovery.ServesResource(dra, r); };
  if (serves("resourceslices")) {
    using P = std::shared_ptr<const api::ResourceSlice>;
    Add<api::ResourceSlice>(
        "resourceslices", "/apis/resource.k8s.io/v1/resourceslices", "", "ResourceSlice",
        &api::DecodeResourceSlice,
        {[this](P o) { scheduler_.OnResourceSlice(nullptr, std::move(o)); },
         [this](P a, P b) { scheduler_.OnResourceSlice(std::move(a), std::move(b)); },
         [this](P o) { scheduler_.OnResourceSliceDelete(std::move(o)); }});
  }
  if (serves("deviceclasses")) {
    using P = std::shared_ptr<const api::DeviceClass>;
    Add<api::DeviceClass>(
        "deviceclasses", "/apis/resource.k8s.io/v1/deviceclasses", "", "DeviceClass",
        &api::DecodeDeviceClass,
        {[this](P o) { scheduler_.OnDeviceClass(nullptr, std::move(o)); },
         [this](P a, P b) { scheduler_.OnDeviceClass(std::move(a), std::move(b)); },
         [this](P o) { scheduler_.OnDeviceClassDelete(std::move(o)); }});
  }
  if (serves("resourceclaims")) {
    using P = std::shared_ptr<const api::ResourceClaim>;
    Add<api::ResourceClaim>(
        "resourceclaims", "/apis/resource.k8s.io/v1/resourceclaims", "", "ResourceClaim",
        &api::DecodeResourceClaim,
        {[this](P o) { scheduler_.OnResourceClaim(nullptr, std::move(o)); },
         [this](P a, P b) { scheduler_.OnResourceClaim(std::move(a), std::move(b)); },
         [this](P o) { scheduler_.OnResourceClaimDelete(std::move(o)); }});
  }
  if (serves("resourceclaimtemplates")) {
    using P = std::shared_ptr<const api::ResourceClaimTemplate>;
    Add<api::ResourceClaimTemplate>(
        "resourceclaimtemplates", "/apis/resource.k8s.io/v1/resourceclaimtemplates", "",
        "ResourceClaimTemplate", &api::DecodeResourceClaimTemplate,
        {[this](P o) { scheduler_.OnResourceClaimTemplate(std::move(o)); },
         [this](P, P b) { scheduler_.OnResourceClaimTemplate(std::move(b)); },
         [this](P o) { scheduler_.OnResourceClaimTemplateDelete(std::move(o)); }});
  }
  if (serves("devicetaintrules")) {
    using P = std::shared_ptr<const api::DeviceTaintRule>;
    Add<api::DeviceTaintRule>(
        "devicetaintrules", "/apis/resource.k8s.io/v1/devicetaintrules", "", "DeviceTaintRule",
        &api::DecodeDeviceTaintRule,
        {[this](P o) { scheduler_.OnDeviceTaintRule(nullptr, std::move(o)); },
         [this](P a, P b) { scheduler_.OnDeviceTaintRule(std::move(a), std::move(b)); },
         [this](P o) { scheduler_.OnDeviceTaintRuleDelete(std::move(o)); }});
  }
}

EventSource::~EventSource() { Stop(); }

void EventSource::Start() {
  for (Entry& e : entries_) {
    Reflector* r = e.reflector.get();
    threads_.emplace_back([this, r] { r->Run(&stop_); });
  }
}

void EventSource::Stop() {
  stop_.store(true);
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

bool EventSource::HasSynced() const {
  for (const Entry& e : entries_) {
    if (!e.reflector->HasSynced()) return false;
  }
  return true;
}

bool EventSource::WaitForSync(const std::atomic<bool>* stop, int64_t timeout_millis) const {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_millis);
  while (!HasSynced()) {
    if ((stop != nullptr && stop->load()) || std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

EventSourceStats EventSource::Stats() const {
  EventSourceStats s;
  for (const Entry& e : entries_) {
    s.decode_errors += e.decode_errors();
    s.relists += e.reflector->stats().relists_gone.load();
    s.watch_errors += e.reflector->stats().watch_errors.load();
    s.events += e.reflector->stats().events.load();
  }
  return s;
}

std::vector<std::pair<std::string, int64_t>> EventSource::DecodeErrorsByKind() const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const Entry& e : entries_) {
    if (int64_t n = e.decode_errors(); n > 0) out.emplace_back(e.kind, n);
  }
  return out;
}

std::vector<std::string> EventSource::ResourceNames() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.reflector->name());
  return out;
}

api::ObjectSet EventSource::CachedObjects() const {
  api::ObjectSet out;
  for (const Entry& e : entries_) e.copy_to(&out);
  return out;
}

}  // namespace gantry::client
