#include "src/sim/simulation.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gantry/util/strings.h"

namespace gantry::sim {

absl::Status InMemoryWriter::BindPod(const api::Pod& pod, std::string_view node) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fault_hook_) {
    if (absl::Status st = fault_hook_("bind", pod.meta.Key()); !st.ok()) return st;
  }
  auto [it, inserted] = bound_.emplace(pod.meta.uid, std::string(node));
  if (!inserted) {
    return absl::AlreadyExistsError(gantry::StrCat("pod ", pod.meta.Key(), " is already assigned to node \"",
                                                   it->second, "\""));
  }
  pending_.push_back(Binding{std::make_shared<const api::Pod>(pod), std::string(node)});
  return absl::OkStatus();
}

absl::Status InMemoryWriter::UpdatePodScheduledCondition(const api::Pod&, const framework::PodScheduledCondition&,
                                                         const std::string*) {
  return absl::OkStatus();
}

absl::Status InMemoryWriter::DeletePodForPreemption(const api::Pod& victim, const api::Pod& preemptor,
                                                    std::string_view node) {
  std::lock_guard<std::mutex> lock(mu_);
  evictions_.push_back(Eviction{std::make_shared<const api::Pod>(victim), std::string(node), preemptor.meta.Key()});
  return absl::OkStatus();
}

std::vector<InMemoryWriter::Eviction> InMemoryWriter::TakeEvictions() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Eviction> out;
  out.swap(evictions_);
  return out;
}

void InMemoryWriter::RecordEvent(const framework::EventRecord& event) {
  std::lock_guard<std::mutex> lock(mu_);
  ++events_;
  if (event.regarding_kind != "Pod") group_events_.push_back(event);
}

std::vector<framework::EventRecord> InMemoryWriter::GroupEvents() const {
  std::lock_guard<std::mutex> lock(mu_);
  return group_events_;
}

void InMemoryWriter::SetFaultHook(FaultHook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  fault_hook_ = std::move(hook);
}

absl::StatusOr<std::string> InMemoryWriter::AddResourceClaimFinalizer(
    const api::ResourceClaim& claim, std::string_view finalizer) {
  std::lock_guard<std::mutex> lock(mu_);
  claim_finalizers_[claim.meta.uid].emplace_back(finalizer);
  return claim.meta.resource_version;
}

absl::StatusOr<std::string> InMemoryWriter::UpdateResourceClaimStatus(
    const api::ResourceClaim& claim, const api::AllocationResult& allocation,
    const std::vector<api::ResourceClaimConsumerReference>& reserved_for) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fault_hook_) {
    if (absl::Status st = fault_hook_("claim-status", claim.meta.Key()); !st.ok()) return st;
  }
  auto updated = std::make_shared<api::ResourceClaim>(claim);
  for (const std::string& f : claim_finalizers_[claim.meta.uid]) {
    if (std::find(updated->meta.finalizers.begin(), updated->meta.finalizers.end(), f) == updated->meta.finalizers.end())
      updated->meta.finalizers.push_back(f);
  }
  updated->status.allocation = allocation;
  updated->status.reserved_for = reserved_for;
  claim_updates_.push_back(ClaimUpdate{std::make_shared<const api::ResourceClaim>(claim), std::move(updated)});
  return claim.meta.resource_version;  // the simulator keeps the claim's version
}

absl::StatusOr<std::string> InMemoryWriter::DeallocateResourceClaim(
    const api::ResourceClaim& claim) {
  std::lock_guard<std::mutex> lock(mu_);
  auto updated = std::make_shared<api::ResourceClaim>(claim);
  updated->status = {};
  claim_updates_.push_back(ClaimUpdate{std::make_shared<const api::ResourceClaim>(claim), std::move(updated)});
  return claim.meta.resource_version;
}

absl::StatusOr<api::ResourceClaim> InMemoryWriter::CreateResourceClaim(
    const api::ResourceClaim& claim, std::string_view generate_name) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  static constexpr uint64_t kNames = 27ull * 27 * 27 * 27 * 27;  // 5 characters of the alphabet
  std::lock_guard<std::mutex> lock(mu_);
  if (created_claims_ >= kNames) {
    return absl::ResourceExhaustedError("the simulator ran out of generated ResourceClaim names");
  }
  // The counter's digits, least significant first: unique for every claim of the run.
  uint64_t n = created_claims_++;
  std::string name(generate_name.substr(0, 58));
  for (int i = 0; i < 5; ++i, n /= kAlphabet.size())
    name.push_back(kAlphabet[n % kAlphabet.size()]);
  auto created = std::make_shared<api::ResourceClaim>(claim);
  created->meta.name = std::move(name);
  created->meta.uid =
      gantry::StrCat("sim-claim-", created->meta.namespace_.view(), "/", created->meta.name);
  created->status = {};
  claim_updates_.push_back(ClaimUpdate{nullptr, created});
  return *created;
}

absl::Status InMemoryWriter::DeleteResourceClaim(const api::ResourceClaim& claim) {
  std::lock_guard<std::mutex> lock(mu_);
  claim_deletions_.push_back(std::make_shared<const api::ResourceClaim>(claim));
  return absl::OkStatus();
}

std::vector<std::shared_ptr<const api::ResourceClaim>> InMemoryWriter::TakeClaimDeletions() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<const api::ResourceClaim>> out;
  out.swap(claim_deletions_);
  return out;
}

absl::Status InMemoryWriter::UpdatePodExtendedResourceClaimStatus(
    const api::Pod& pod, const framework::ExtendedResourceClaimStatus& status) {
  std::lock_guard<std::mutex> lock(mu_);
  extended_statuses_[pod.meta.uid] = status;
  return absl::OkStatus();
}

std::optional<framework::ExtendedResourceClaimStatus> InMemoryWriter::ExtendedResourceClaimStatusOf(
    const std::string& uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = extended_statuses_.find(uid);
  if (it == extended_statuses_.end()) return std::nullopt;
  return it->second;
}

absl::Status InMemoryWriter::UpdatePodGroupCondition(const framework::PodGroupRef& group,
                                                     const framework::PodGroupCondition& condition) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string kind = group.api_group == "scheduling.x-k8s.io" ? "PodGroup.scheduling.x-k8s.io" : group.kind;
  GroupCondition& gc = group_conditions_[gantry::StrCat(kind, " ", group.namespace_, "/", group.name)];
  gc.group = group;
  if (condition.type == scheduler::kDisruptionTarget) {
    gc.disruption_target = condition;
    gc.disruption_writes++;
  } else if (condition.type == framework::kPodGroupBoundBelowQuorum) {
    gc.below_quorum = condition;
  } else {
    gc.condition = condition;
    gc.writes++;
  }
  return absl::OkStatus();
}

std::map<std::string, InMemoryWriter::GroupCondition> InMemoryWriter::GroupConditions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return group_conditions_;
}

std::vector<InMemoryWriter::ClaimUpdate> InMemoryWriter::TakeClaimUpdates() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ClaimUpdate> out;
  out.swap(claim_updates_);
  return out;
}

std::vector<InMemoryWriter::Binding> InMemoryWriter::TakeBindings() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Binding> out;
  out.swap(pending_);
  return out;
}

int64_t InMemoryWriter::events_recorded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

class AttemptRecorder final : public scheduler::AttemptObserver {
 public:
  explicit AttemptRecorder(SimulationResult* result) : result_(result) {}
  // Wall-clock origin for scheduled_wall_micros (the loop start).
  void StartClock() { start_ = std::chrono::steady_clock::now(); }
  void OnAttempt(const scheduler::AttemptOutcome& o) override {
    result_->attempts++;
    result_->attempt_micros.push_back(o.duration_micros);
    const std::string key = o.pod->Key();
    if (o.result == "scheduled") {
      result_->scheduled_wall_micros.push_back(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_).count());
      result_->scheduled_keys.push_back(key);
      result_->placements[key] = o.node;
      result_->failures.erase(key);
    } else {
      result_->failures[key] = o.message;
    }
  }
  void OnGroup(const scheduler::GroupOutcome& g) override {
    result_->podgroups[g.key] = SimulationResult::GroupResult{g.scheduled, g.placed, g.domain, g.message};
  }

 private:
  SimulationResult* result_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

namespace {

double ProcessCpuSeconds() {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

std::shared_ptr<api::Pod> WithUid(api::Pod pod) {
  auto owned = std::make_shared<api::Pod>(std::move(pod));
  if (owned->meta.uid.empty()) owned->meta.uid = gantry::StrCat("sim-", owned->meta.Key());
  return owned;
}

}  // namespace

namespace {

// generateName-style suffix: 5 characters of Kubernetes' alphabet, derived
// from `seed` and `key`.
std::string NameSuffix(std::string_view key, uint64_t seed) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : key) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  std::string suffix;
  for (int i = 0; i < 5; ++i) {
    suffix.push_back(kAlphabet[h % kAlphabet.size()]);
    h /= kAlphabet.size();
    h = h * 6364136223846793005ull + 1442695040888963407ull;
  }
  return suffix;
}

// A claim named `<owner>-<claim>-<suffix>` from `tmpl`, controlled by the owner.
api::ResourceClaim ClaimFromTemplate(const api::ObjectMeta& owner_meta,
                                     std::string_view owner_api_version,
                                     std::string_view owner_kind, api::Symbol claim_name,
                                     std::string_view annotation,
                                     const api::ResourceClaimTemplate& tmpl, uint64_t seed) {
  api::ResourceClaim claim;
  claim.meta.name =
      gantry::StrCat(owner_meta.name, "-", claim_name.view(), "-",
                     NameSuffix(gantry::StrCat(owner_meta.Key(), "/", claim_name.view()), seed));
  claim.meta.namespace_ = owner_meta.namespace_;
  claim.meta.uid = gantry::StrCat("sim-claim-", owner_meta.namespace_.view(), "/", claim.meta.name);
  claim.meta.labels = tmpl.spec.metadata.labels;
  claim.meta.annotations = tmpl.spec.metadata.annotations;
  claim.meta.annotations.emplace_back(api::Symbol::Intern(annotation), claim_name.str());
  api::OwnerReference owner;
  owner.api_version = api::Symbol::Intern(owner_api_version);
  owner.kind = api::Symbol::Intern(owner_kind);
  owner.name = owner_meta.name;
  owner.uid = owner_meta.uid;
  owner.controller = true;
  claim.meta.owner_references.push_back(std::move(owner));
  claim.spec = tmpl.spec.spec;
  return claim;
}

}  // namespace

api::ResourceClaim InstantiateClaim(const api::Pod& pod, api::Symbol claim_name,
                                    const api::ResourceClaimTemplate& tmpl, uint64_t seed) {
  return ClaimFromTemplate(pod.meta, "v1", "Pod", claim_name, api::kPodClaimNameAnnotation, tmpl,
                           seed);
}

api::ResourceClaim InstantiateGroupClaim(const api::PodGroup& group, api::Symbol claim_name,
                                         const api::ResourceClaimTemplate& tmpl, uint64_t seed) {
  api::ObjectMeta meta = group.meta;
  if (meta.uid.empty()) meta.uid = gantry::StrCat("sim-podgroup-", group.meta.Key());
  return ClaimFromTemplate(meta, "scheduling.k8s.io/v1beta1", "PodGroup", claim_name,
                           kPodGroupClaimNameAnnotation, tmpl, seed);
}

namespace {

// RunSimulation; with `take_pods`, the pods are moved out of it (it is
// objects.pods) rather than copied.
SimulationResult Run(const api::ObjectSet& objects, std::deque<api::Pod>* take_pods, scheduler::Scheduler& sched,
                     InMemoryWriter& writer, FakeClock& clock, uint64_t seed, const ProgressFn& progress) {
  SimulationResult result;
  AttemptRecorder recorder(&result);
  sched.AddObserver(&recorder);
  const int64_t virtual_start = clock.NowMicros();

  for (const api::Namespace& ns : objects.namespaces) {
    sched.events().OnNamespace(
        ns.meta.namespace_.empty() ? api::Symbol::Intern(ns.meta.name) : ns.meta.namespace_,
        ns.meta.labels);
  }
  for (const api::PriorityClass& pc : objects.priority_classes) {
    sched.events().OnPriorityClass(
        api::Symbol::Intern(pc.meta.name),
        state::PriorityClassInfo{pc.value, pc.global_default, pc.preemption_policy});
  }
  for (const api::Node& node : objects.nodes)
    sched.events().OnNodeAdd(std::make_shared<const api::Node>(node));
  absl::flat_hash_map<std::string, const api::PodGroup*> pod_groups;  // "ns/name"
  for (const api::PodGroup& g : objects.pod_groups) {
    state::GroupInfo info = state::GroupInfoFrom(g);
    if (info.uid.empty()) info.uid = gantry::StrCat("sim-podgroup-", info.key);
    sched.events().OnPodGroup(std::move(info));
    pod_groups[g.meta.Key()] = &g;
  }
  for (const api::CoschedulingPodGroup& g : objects.coscheduling_pod_groups) {
    sched.events().OnPodGroup(state::GroupInfoFrom(g));
  }
  for (const api::CompositePodGroup& g : objects.composite_pod_groups) {
    sched.events().OnCompositePodGroup(state::GroupInfoFrom(g));
  }
  // DRA objects (before pods, as an informer sync would deliver them).
  for (const api::DeviceClass& c : objects.device_classes) {
    sched.events().OnDeviceClass(nullptr, std::make_shared<const api::DeviceClass>(c));
  }
  for (const api::ResourceSlice& s : objects.resource_slices) {
    sched.events().OnResourceSlice(nullptr, std::make_shared<const api::ResourceSlice>(s));
  }
  for (const api::DeviceTaintRule& r : objects.device_taint_rules) {
    sched.events().OnDeviceTaintRule(nullptr, std::make_shared<const api::DeviceTaintRule>(r));
  }
  absl::flat_hash_map<std::string, const api::ResourceClaimTemplate*> templates;
  for (const api::ResourceClaimTemplate& t : objects.resource_claim_templates) {
    sched.events().OnResourceClaimTemplate(std::make_shared<const api::ResourceClaimTemplate>(t));
    templates[gantry::StrCat(t.meta.namespace_.view(), "/", t.meta.name)] = &t;
  }
  for (const api::ResourceClaim& c : objects.resource_claims) {
    auto claim = std::make_shared<api::ResourceClaim>(c);
    if (claim->meta.uid.empty()) claim->meta.uid = gantry::StrCat("sim-claim-", claim->meta.Key());
    sched.events().OnResourceClaim(nullptr, std::move(claim));
  }
  // The ResourceClaim controller: claims from templates for pending pods;
  // an entry that matches one of the pod's PodGroup's claims exactly gets the
  // group's claim, created once per group.
  absl::flat_hash_map<std::string, std::string> group_claims;  // "ns/group/claim" -> claim name
  auto with_claims = [&](std::shared_ptr<const api::Pod> pod) -> std::shared_ptr<const api::Pod> {
    if (pod->IsBound() || pod->resource_claims.empty()) return pod;
    std::shared_ptr<api::Pod> copy;
    const api::PodGroup* group = nullptr;
    if (!pod->pod_group_name.empty()) {
      auto g = pod_groups.find(
          gantry::StrCat(pod->meta.namespace_.view(), "/", pod->pod_group_name.view()));
      if (g != pod_groups.end()) group = g->second;
    }
    for (const api::PodResourceClaim& rc : pod->resource_claims) {
      if (rc.resource_claim_template_name.empty()) continue;
      bool has_status = false;
      for (const api::PodResourceClaimStatus& st : pod->resource_claim_statuses) has_status |= st.name == rc.name;
      if (has_status) continue;
      auto it = templates.find(gantry::StrCat(pod->meta.namespace_.view(), "/", rc.resource_claim_template_name));
      if (it == templates.end()) continue;  // stays gated until the template exists
      if (!copy) copy = std::make_shared<api::Pod>(*pod);
      const bool for_group =
          group != nullptr &&
          std::any_of(group->spec.resource_claims.begin(), group->spec.resource_claims.end(),
                      [&](const api::PodGroupResourceClaim& g) {
                        return g.name == rc.name &&
                               g.resource_claim_template_name == rc.resource_claim_template_name;
                      });
      if (for_group) {
        auto [gc, created] = group_claims.try_emplace(
            gantry::StrCat(group->meta.Key(), "/", rc.name.view()), std::string());
        if (created) {
          auto claim = std::make_shared<api::ResourceClaim>(
              InstantiateGroupClaim(*group, rc.name, *it->second, seed));
          gc->second = claim->meta.name;
          sched.events().OnResourceClaim(nullptr, std::move(claim));
        }
        copy->resource_claim_statuses.push_back(api::PodResourceClaimStatus{rc.name, gc->second});
        continue;
      }
      auto claim = std::make_shared<api::ResourceClaim>(InstantiateClaim(*copy, rc.name, *it->second, seed));
      copy->resource_claim_statuses.push_back(api::PodResourceClaimStatus{rc.name, claim->meta.name});
      sched.events().OnResourceClaim(nullptr, std::move(claim));
    }
    return copy ? std::shared_ptr<const api::Pod>(copy) : pod;
  };
  // Running members per native PodGroup ("ns/name" -> pod UIDs): a claim
  // reserved for a PodGroup is released once none of its members runs.
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> group_running;
  auto group_of = [](const api::Pod& pod) {
    return pod.pod_group_name.empty()
               ? std::string()
               : gantry::StrCat(pod.meta.namespace_.view(), "/", pod.pod_group_name.view());
  };
  auto add_bound = [&](std::shared_ptr<api::Pod> pod) {
    if (std::string g = group_of(*pod); !g.empty()) group_running[g].insert(pod->meta.uid);
    sched.events().OnPodAdd(std::move(pod));
  };
  // Bound pods first, then the pending ones, each in snapshot order.
  int64_t pending_total = 0;
  if (take_pods != nullptr) {
    std::vector<std::shared_ptr<api::Pod>> pending;
    while (!take_pods->empty()) {
      if (!take_pods->front().IsTerminal()) {
        std::shared_ptr<api::Pod> pod = WithUid(std::move(take_pods->front()));
        if (pod->IsBound()) {
          add_bound(std::move(pod));
        } else {
          pending.push_back(std::move(pod));
        }
      }
      take_pods->pop_front();  // frees the deque's blocks as they empty
    }
    for (std::shared_ptr<api::Pod>& pod : pending) {
      sched.events().OnPodAdd(with_claims(std::move(pod)));
      ++pending_total;
    }
  } else {
    for (const api::Pod& pod : objects.pods) {
      if (pod.IsBound() && !pod.IsTerminal()) add_bound(WithUid(pod));
    }
    for (const api::Pod& pod : objects.pods) {
      if (!pod.IsBound() && !pod.IsTerminal()) {
        sched.events().OnPodAdd(with_claims(WithUid(pod)));
        ++pending_total;
      }
    }
  }

  // Pods that finish in virtual time: (finish time, sequence) -> bound pod.
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<const api::Pod>> completions;
  int64_t completion_seq = 0;
  auto schedule_completion = [&](const std::shared_ptr<const api::Pod>& bound) {
    const std::string* d = bound->meta.FindAnnotation(kRunDurationAnnotation);
    if (d == nullptr) return;
    double seconds = 0;
    try {
      seconds = std::stod(*d);
    } catch (const std::exception&) {
      return;  // not a number: the pod runs forever, as without the annotation
    }
    if (!(seconds >= 0)) return;
    completions[{clock.NowMicros() + static_cast<int64_t>(seconds * 1e6), completion_seq++}] = bound;
  };
  // The ResourceClaim controller, for a pod that finished or was deleted:
  // the pod leaves reservedFor of its claims, and so does its PodGroup when
  // no member of the group runs any more; a claim nobody reserves any more
  // is deallocated (its devices are free again), and a claim generated for
  // the deleted pod from a template is deleted with it.
  auto release_claims = [&](const api::Pod& pod, bool deleted) {
    const std::string group = group_of(pod);
    bool group_gone = false;
    if (!group.empty()) {
      auto it = group_running.find(group);
      if (it != group_running.end()) {
        it->second.erase(pod.meta.uid);
        if (it->second.empty()) {
          group_running.erase(it);
          group_gone = true;
        }
      } else {
        group_gone = true;
      }
    }
    auto leaves = [&](const api::ResourceClaimConsumerReference& r) {
      if (r.resource.view() == "podgroups")
        return group_gone && r.name == pod.pod_group_name.view();
      return r.uid == pod.meta.uid;
    };
    for (const std::string& key : state::PodClaimKeys(pod)) {
      const size_t slash = key.find('/');
      std::shared_ptr<const api::ResourceClaim> claim = sched.dra().GetClaim(
          std::string_view(key).substr(0, slash), std::string_view(key).substr(slash + 1));
      if (claim == nullptr) continue;
      bool owned = false;
      for (const api::OwnerReference& o : claim->meta.owner_references)
        owned = owned || o.uid == pod.meta.uid;
      if (deleted && owned) {
        sched.events().OnResourceClaimDelete(claim);
        continue;
      }
      const auto& rf = claim->status.reserved_for;
      if (std::none_of(rf.begin(), rf.end(), leaves)) continue;
      auto updated = std::make_shared<api::ResourceClaim>(*claim);
      std::erase_if(updated->status.reserved_for, leaves);
      if (updated->status.reserved_for.empty()) updated->status = {};
      sched.events().OnResourceClaim(claim, std::move(updated));
    }
  };
  auto run_due_completions = [&]() {
    bool any = false;
    while (!completions.empty() && completions.begin()->first.first <= clock.NowMicros()) {
      std::shared_ptr<const api::Pod> pod = completions.begin()->second;
      completions.erase(completions.begin());
      auto done = std::make_shared<api::Pod>(*pod);
      done->phase = api::PodPhase::kSucceeded;
      release_claims(*done, /*deleted=*/false);
      sched.events().OnPodUpdate(pod, std::move(done));
      result.completed++;
      any = true;
    }
    return any;
  };

  // Preemption victims: marked terminating when evicted, deleted after their
  // terminationGracePeriodSeconds: (delete time, sequence) -> terminating pod.
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<const api::Pod>> deletions;
  absl::flat_hash_set<std::string> evicted;  // victim uids
  int64_t deletion_seq = 0;
  auto feed_evictions = [&]() {
    for (InMemoryWriter::Eviction& e : writer.TakeEvictions()) {
      if (!evicted.insert(e.victim->meta.uid).second) continue;  // already terminating
      result.evictions.push_back({e.victim->meta.Key(), e.node, e.preemptor});
      auto terminating = std::make_shared<api::Pod>(*e.victim);
      terminating->meta.deletion_micros = clock.NowMicros();
      std::shared_ptr<const api::Pod> t = terminating;
      sched.events().OnPodUpdate(e.victim, t);
      const int64_t grace = std::max<int64_t>(0, e.victim->termination_grace_period_seconds);
      deletions[{clock.NowMicros() + grace * 1'000'000, deletion_seq++}] = t;
    }
  };
  auto run_due_deletions = [&]() {
    while (!deletions.empty() && deletions.begin()->first.first <= clock.NowMicros()) {
      std::shared_ptr<const api::Pod> pod = deletions.begin()->second;
      deletions.erase(deletions.begin());
      sched.events().OnPodDelete(pod);
      release_claims(*pod, /*deleted=*/true);
      result.placements.erase(pod->meta.Key());
    }
  };

  // Simulated drivers for binding conditions (kBindingDelayAnnotation).
  struct DriverBehaviour {
    int64_t delay_micros = 0;
    std::string outcome = "success";  // "success" | "failure" (the first binding of each device)
  };
  absl::flat_hash_set<std::string> failed_once;  // "driver/pool/device" whose first binding failed
  absl::flat_hash_map<std::string, DriverBehaviour> drivers;  // "driver/pool"
  for (const api::ResourceSlice& sl : objects.resource_slices) {
    DriverBehaviour b;
    if (const std::string* d = sl.meta.FindAnnotation(kBindingDelayAnnotation)) {
      char* end = nullptr;
      const double seconds = std::strtod(d->c_str(), &end);
      if (end != d->c_str() && seconds >= 0) b.delay_micros = static_cast<int64_t>(seconds * 1e6);
    }
    if (const std::string* o = sl.meta.FindAnnotation(kBindingOutcomeAnnotation)) b.outcome = *o;
    drivers[gantry::StrCat(sl.spec.driver.view(), "/", sl.spec.pool.name.view())] = b;
  }
  // Sets the device conditions that are due on every allocated claim.
  auto play_drivers = [&]() {
    for (const std::shared_ptr<const api::ResourceClaim>& claim : sched.dra().Claims()) {
      if (!claim->IsAllocated()) continue;
      std::shared_ptr<api::ResourceClaim> updated;
      for (const api::DeviceRequestAllocationResult& res : claim->status.allocation->results) {
        if (res.binding_conditions.empty()) continue;
        auto d = drivers.find(gantry::StrCat(res.driver.view(), "/", res.pool.view()));
        const DriverBehaviour b = d == drivers.end() ? DriverBehaviour{} : d->second;
        if (clock.NowMicros() <
            claim->status.allocation->allocation_timestamp_micros + b.delay_micros)
          continue;
        const auto& devices = (updated ? updated : claim)->status.devices;
        if (std::any_of(devices.begin(), devices.end(), [&](const api::AllocatedDeviceStatus& s) {
              return s.driver == res.driver && s.pool == res.pool && s.device == res.device;
            })) {
          continue;  // already reported
        }
        if (!updated) updated = std::make_shared<api::ResourceClaim>(*claim);
        api::AllocatedDeviceStatus status;
        status.driver = res.driver;
        status.pool = res.pool;
        status.device = res.device;
        auto condition = [&](api::Symbol type, std::string_view reason) {
          api::Condition c;
          c.type = type;
          c.status = api::ConditionStatus::kTrue;
          c.reason = api::Symbol::Intern(reason);
          c.last_transition_micros = clock.NowMicros();
          return c;
        };
        if (b.outcome == "failure" && !res.binding_failure_conditions.empty() &&
            failed_once
                .insert(
                    gantry::StrCat(res.driver.view(), "/", res.pool.view(), "/", res.device.view()))
                .second) {
          status.conditions.push_back(
              condition(res.binding_failure_conditions.front(), "SimulatedDriverFailure"));
        } else {
          for (api::Symbol t : res.binding_conditions)
            status.conditions.push_back(condition(t, "SimulatedDriver"));
        }
        updated->status.devices.push_back(std::move(status));
      }
      if (updated) sched.events().OnResourceClaim(claim, std::move(updated));
    }
  };
  // PreBind waits in virtual time while the drivers work.
  sched.dra().SetDeviceStatusWait([&](int64_t micros) {
    clock.Advance(micros);
    play_drivers();
    return true;
  });

  auto feed_bindings = [&]() {
    std::vector<InMemoryWriter::ClaimUpdate> claims = writer.TakeClaimUpdates();
    for (InMemoryWriter::ClaimUpdate& u : claims) {
      // A status write made before a driver reported device conditions does
      // not erase them (the API server would have rejected it as stale).
      if (u.claim != nullptr && u.claim->status.devices.empty() && u.claim->IsAllocated()) {
        auto current = sched.dra().GetClaim(u.claim->meta.namespace_.view(), u.claim->meta.name);
        if (current != nullptr && !current->status.devices.empty()) {
          auto merged = std::make_shared<api::ResourceClaim>(*u.claim);
          merged->status.devices = current->status.devices;
          u.claim = std::move(merged);
        }
      }
      sched.events().OnResourceClaim(std::move(u.old_claim), std::move(u.claim));
    }
    for (std::shared_ptr<const api::ResourceClaim>& c : writer.TakeClaimDeletions()) {
      sched.events().OnResourceClaimDelete(std::move(c));
    }
    std::vector<InMemoryWriter::Binding> bindings = writer.TakeBindings();
    for (InMemoryWriter::Binding& b : bindings) {
      auto bound = std::make_shared<api::Pod>(*b.pod);
      bound->node_name = api::Symbol::Intern(b.node);
      bound->phase = api::PodPhase::kRunning;
      if (auto ext = writer.ExtendedResourceClaimStatusOf(bound->meta.uid)) {
        bound->extended_resource_claim_name = ext->resource_claim_name;
        result.extended_resource_claims[bound->meta.Key()] = std::move(*ext);
      }
      if (std::string g = group_of(*bound); !g.empty()) group_running[g].insert(bound->meta.uid);
      std::shared_ptr<const api::Pod> bound_const = bound;
      sched.events().OnPodUpdate(b.pod, bound_const);
      schedule_completion(bound_const);
    }
    return !bindings.empty();
  };

  const auto wall_start = std::chrono::steady_clock::now();
  recorder.StartClock();
  queue::SchedulingQueue& q = sched.queue();
  const double cpu_start = ProcessCpuSeconds();
  auto next_progress = wall_start + std::chrono::milliseconds(kProgressIntervalMillis);
  int64_t iterations = 0;
  auto report_progress = [&](bool done) {
    SimulationProgress p;
    p.pending_total = pending_total;
    p.scheduled = static_cast<int64_t>(result.scheduled_wall_micros.size());
    p.attempts = result.attempts;
    p.loop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    p.done = done;
    progress(p);
  };
  while (true) {
    // Look at the clock only every 64 iterations: the callback stays off the hot path.
    if (progress && (++iterations & 63) == 0 && std::chrono::steady_clock::now() >= next_progress) {
      report_progress(false);
      next_progress = std::chrono::steady_clock::now() + std::chrono::milliseconds(kProgressIntervalMillis);
    }
    feed_bindings();
    feed_evictions();
    run_due_completions();
    run_due_deletions();
    q.FlushBackoffQCompleted();
    if (sched.ScheduleOne(/*blocking=*/false)) continue;
    if (feed_bindings()) continue;
    // Nothing to do now: jump virtual time to the next backoff expiry or
    // pod completion, whichever comes first.
    std::optional<int64_t> next = q.NextBackoffExpiryMicros();
    if (!completions.empty() && (!next || completions.begin()->first.first < *next)) {
      next = completions.begin()->first.first;
    }
    if (!deletions.empty() && (!next || deletions.begin()->first.first < *next)) {
      next = deletions.begin()->first.first;
    }
    if (!next) break;  // only unschedulable (or gated) pods remain and no event can come
    if (*next > clock.NowMicros()) clock.Set(*next);
  }
  sched.dra().SetDeviceStatusWait(nullptr);
  result.cpu_seconds = ProcessCpuSeconds() - cpu_start;
  result.loop_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (progress) report_progress(true);
  result.virtual_seconds = static_cast<double>(clock.NowMicros() - virtual_start) / 1e6;
  for (const auto& claim : sched.dra().Claims()) {
    if (!claim->IsAllocated()) continue;
    auto& devs = result.allocations[claim->meta.Key()];
    for (const api::DeviceRequestAllocationResult& r : claim->status.allocation->results) {
      devs.push_back({r.request.str(), r.driver.str(), r.pool.str(), r.device.str()});
    }
  }
  result.group_conditions = writer.GroupConditions();
  result.scheduled = static_cast<int64_t>(result.placements.size());
  result.unschedulable = static_cast<int64_t>(result.failures.size());
  sched.RemoveObserver(&recorder);
  return result;
}

}  // namespace

SimulationResult RunSimulation(const api::ObjectSet& objects, scheduler::Scheduler& sched,
                               InMemoryWriter& writer, FakeClock& clock, uint64_t seed,
                               const ProgressFn& progress) {
  return Run(objects, nullptr, sched, writer, clock, seed, progress);
}

SimulationResult RunSimulation(api::ObjectSet&& objects, scheduler::Scheduler& sched,
                               InMemoryWriter& writer, FakeClock& clock, uint64_t seed,
                               const ProgressFn& progress) {
  return Run(objects, &objects.pods, sched, writer, clock, seed, progress);
}

namespace {

void AddRequests(const api::ResourceList& requests,
                 std::map<std::string, std::pair<int64_t, int64_t>>* totals) {
  for (const api::ResourceAmount& a : requests.items()) (*totals)[a.name.str()].first += a.value;
  (*totals)["pods"].first += 1;
}

}  // namespace

UtilisationBase TakeUtilisationBase(const api::ObjectSet& objects) {
  UtilisationBase base;
  for (const api::Node& n : objects.nodes) {
    for (const api::ResourceAmount& a : n.allocatable.items()) base.totals[a.name.str()].second += a.value;
  }
  for (const api::Pod& p : objects.pods) {
    if (p.IsTerminal()) continue;
    if (p.IsBound()) {
      AddRequests(p.requests, &base.totals);
    } else {
      base.pending.emplace(p.meta.Key(), p.requests);
    }
  }
  return base;
}

nlohmann::json UtilisationJson(const api::ObjectSet& objects, const SimulationResult& result) {
  return UtilisationJson(TakeUtilisationBase(objects), result);
}

nlohmann::json UtilisationJson(const UtilisationBase& base, const SimulationResult& result) {
  std::map<std::string, std::pair<int64_t, int64_t>> totals = base.totals;
  for (const auto& [key, node] : result.placements) {
    auto it = base.pending.find(key);
    if (it != base.pending.end()) AddRequests(it->second, &totals);
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, t] : totals) {
    if (t.second <= 0) continue;
    out[name] = {{"requested", t.first},
                 {"allocatable", t.second},
                 {"ratio", static_cast<double>(t.first) / static_cast<double>(t.second)}};
  }
  return out;
}

nlohmann::json ResultJson(const SimulationResult& r) {
  std::vector<int64_t> lat = r.attempt_micros;
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) -> int64_t {
    if (lat.empty()) return 0;
    size_t idx = static_cast<size_t>(p * static_cast<double>(lat.size() - 1));
    return lat[idx];
  };
  nlohmann::json j;
  j["attempts"] = r.attempts;
  j["scheduled"] = r.scheduled;
  j["unschedulable"] = r.unschedulable;
  j["loop_seconds"] = r.loop_seconds;
  j["virtual_seconds"] = r.virtual_seconds;
  j["pods_per_second"] = r.loop_seconds > 0 ? static_cast<double>(r.scheduled) / r.loop_seconds : 0.0;
  j["attempt_latency_micros"] = {{"p50", pct(0.50)}, {"p90", pct(0.90)}, {"p99", pct(0.99)},
                                 {"max", lat.empty() ? 0 : lat.back()}};
  j["cpu_seconds"] = r.cpu_seconds;
  j["completed"] = r.completed;
  nlohmann::json evictions = nlohmann::json::array();
  for (const auto& e : r.evictions) evictions.push_back({{"pod", e.pod}, {"node", e.node}, {"preemptor", e.preemptor}});
  j["evictions"] = std::move(evictions);
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [key, g] : r.podgroups) {
    groups[key] = {{"scheduled", g.scheduled}, {"placed", g.placed}, {"domain", g.domain}};
    if (!g.message.empty()) groups[key]["message"] = g.message;
  }
  for (const auto& [key, gc] : r.group_conditions) {
    // "Kind ns/name": attach the condition to the group's entry.
    const std::string name = key.substr(key.find(' ') + 1);
    auto to_json = [](const framework::PodGroupCondition& c) {
      return nlohmann::json{
          {"type", c.type}, {"status", c.status}, {"reason", c.reason}, {"message", c.message}};
    };
    if (!gc.condition.type.empty()) groups[name]["condition"] = to_json(gc.condition);
    if (gc.disruption_target) groups[name]["disruptionTarget"] = to_json(*gc.disruption_target);
  }
  j["podgroups"] = groups;
  j["placements"] = r.placements;
  j["failures"] = r.failures;
  nlohmann::json allocs = nlohmann::json::object();
  for (const auto& [claim, devs] : r.allocations) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : devs) {
      list.push_back({{"request", d.request}, {"driver", d.driver}, {"pool", d.pool}, {"device", d.device}});
    }
    allocs[claim] = std::move(list);
  }
  j["allocations"] = std::move(allocs);
  return j;
}

}  // namespace gantry::sim
