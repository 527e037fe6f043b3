#include "src/admin/engine.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "gantry/clock.h"
#include "gantry/util/strings.h"
#include "src/framework/schedule_pod.h"
#include "src/scheduler/setup.h"
#include "src/sim/loader.h"
#include "src/sim/simulation.h"
#include "src/state/cluster_state.h"

namespace gantry::admin {
namespace {

constexpr int32_t kDefaultCandidates = 10;
constexpr int32_t kMaxCandidates = 1000;
constexpr int64_t kReplayEpochMicros = 1'700'000'000'000'000;

std::string PodKey(const api::Pod& p) {
  return gantry::StrCat(p.meta.namespace_.view(), "/", p.meta.name);
}

// A DNS-1123 subdomain, as Kubernetes requires of object names.
bool ValidName(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return s.front() != '-' && s.back() != '-' && s.front() != '.' && s.back() != '.';
}

void FillGroups(const std::vector<ReasonGroup>& groups,
                google::protobuf::RepeatedPtrField<v1::NodeGroup>* out,
                std::string_view only_plugin = "") {
  for (const ReasonGroup& g : groups) {
    if (!only_plugin.empty() && g.plugin != only_plugin) continue;
    v1::NodeGroup* ng = out->Add();
    ng->set_plugin(g.plugin);
    ng->set_reason(g.reason);
    ng->set_code(g.code);
    ng->set_node_count(g.node_count);
    for (const std::string& n : g.nodes) ng->add_nodes(n);
  }
}

void FillAttempt(const RecordedAttempt& rec, v1::Attempt* a) {
  a->set_result(rec.result);
  a->set_message(rec.message);
  a->set_nominated_node(rec.nominated_node);
  a->set_unix_micros(rec.unix_micros);
  a->set_num_all_nodes(rec.num_all_nodes);
  a->set_pre_filter_message(rec.pre_filter_message);
  a->set_post_filter_message(rec.post_filter_message);
  a->set_attempts(rec.attempts);
  for (const std::string& p : rec.unschedulable_plugins) a->add_unschedulable_plugins(p);
  FillGroups(rec.filtered, a->mutable_filtered());
}

// The cluster with its unbound pods left out, plus `keep` (pods to place).
api::ObjectSet BoundOnly(const api::ObjectSet& cluster) {
  api::ObjectSet out = cluster;
  std::erase_if(out.pods, [](const api::Pod& p) { return !p.IsBound(); });
  return out;
}

// The offline engine: a scheduler built from the configuration, its replay
// result and the attempts recorded during the replay.
struct Replay {
  FakeClock clock{kReplayEpochMicros};
  state::ClusterState cluster{clock};
  sim::InMemoryWriter writer;
  std::unique_ptr<DiagnosisStore> store;
  scheduler::SchedulerBundle bundle;
  sim::SimulationResult result;
};

absl::StatusOr<std::unique_ptr<Replay>> RunReplay(const api::ObjectSet& objects,
                                                  const EngineOptions& opts) {
  if (opts.config == nullptr || opts.registry == nullptr) {
    return absl::InternalError("admin engine: no configuration or plugin registry");
  }
  auto r = std::make_unique<Replay>();
  r->store = std::make_unique<DiagnosisStore>(r->clock);
  absl::StatusOr<scheduler::SchedulerBundle> bundle = scheduler::BuildScheduler(
      *opts.config, *opts.registry, r->cluster, r->writer, r->clock, opts.seed == 0 ? 1 : opts.seed,
      /*binding_workers=*/0);
  if (!bundle.ok()) return bundle.status();
  r->bundle = std::move(*bundle);
  r->bundle.scheduler->AddObserver(r->store.get());
  r->result = sim::RunSimulation(objects, *r->bundle.scheduler, r->writer, r->clock,
                                 opts.seed == 0 ? 1 : opts.seed);
  r->bundle.scheduler->RemoveObserver(r->store.get());
  return r;
}

// Runs `pod` once more on the replay's final state and returns the feasible
// nodes with per-plugin scores, best first. The replay's scheduler is idle,
// so its framework and cache are ours to use (and to change).
void ScoreCandidates(Replay& r, const api::ObjectSet& objects, const api::Pod& pod, int32_t max,
                     v1::ExplainResponse* out) {
  scheduler::Scheduler& sched = *r.bundle.scheduler;
  framework::Framework* fw = sched.Profile(pod.scheduler_name.view());
  if (fw == nullptr) return;
  auto copy = std::make_shared<api::Pod>(pod);
  if (copy->meta.uid.empty()) copy->meta.uid = gantry::StrCat("sim-", copy->meta.Key());
  // Placed during the replay: score it as if it were not there yet (its
  // claims keep the replay's allocation).
  if (r.cluster.NodeOf(copy->meta.uid)) r.cluster.RemovePod(copy->meta.uid);
  framework::PodInfoPtr info = r.cluster.MakePodInfo(copy);
  // The cache hands a snapshot only what changed since the loop's last
  // one: touch every node so this fresh snapshot gets them all.
  for (const api::Node& n : objects.nodes)
    r.cluster.AddOrUpdateNode(std::make_shared<api::Node>(n));
  state::Snapshot snapshot;
  r.cluster.UpdateSnapshot(&snapshot);
  fw->SetSnapshot(&snapshot);
  framework::CycleState cs;
  framework::PreFilterResult pre;
  if (!fw->RunPreFilterPlugins(cs, *info, &pre).IsSuccess()) return;
  const std::vector<framework::FilterPlugin*> filters = fw->ActiveFilterPlugins(cs);
  std::vector<const framework::NodeInfo*> feasible;
  for (const framework::NodeInfo* n : snapshot.NodeInfos()) {
    if (pre.node_names && !pre.node_names->contains(std::string(n->name()))) continue;
    if (fw->RunFilterPlugins(filters, cs, *info, *n).IsSuccess()) feasible.push_back(n);
  }
  out->set_feasible_nodes(static_cast<int32_t>(feasible.size()));
  if (feasible.empty()) return;
  std::vector<int64_t> totals(feasible.size(), 0);
  std::vector<framework::PluginScores> by_plugin;
  if (fw->RunPreScorePlugins(cs, *info, feasible).IsSuccess()) {
    if (!fw->RunScorePlugins(cs, *info, feasible, &totals, &by_plugin).IsSuccess())
      by_plugin.clear();
  }
  std::vector<size_t> order(feasible.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (totals[a] != totals[b]) return totals[a] > totals[b];
    return feasible[a]->name() < feasible[b]->name();
  });
  for (size_t k = 0; k < order.size() && static_cast<int32_t>(k) < max; ++k) {
    const size_t i = order[k];
    v1::Candidate* c = out->add_candidates();
    c->set_node(std::string(feasible[i]->name()));
    c->set_total(totals[i]);
    for (const framework::PluginScores& ps : by_plugin) {
      v1::PluginScore* s = c->add_scores();
      s->set_plugin(ps.plugin);
      s->set_weight(ps.weight);
      s->set_score(ps.scores[i]);
    }
  }
}

const api::ResourceClaim* FindClaim(const api::ObjectSet& cluster, api::Symbol ns,
                                    std::string_view name) {
  for (const api::ResourceClaim& c : cluster.resource_claims) {
    if (c.meta.namespace_ == ns && c.meta.name == name) return &c;
  }
  return nullptr;
}

// The pod's claims and their requests, from the cluster's objects.
void DescribeDevices(const api::ObjectSet& cluster, const api::Pod& pod, v1::DeviceDiagnosis* out) {
  for (const api::PodResourceClaim& pc : pod.resource_claims) {
    std::string claim_name = pc.resource_claim_name;
    if (claim_name.empty()) {
      for (const api::PodResourceClaimStatus& s : pod.resource_claim_statuses) {
        if (s.name == pc.name) claim_name = s.resource_claim_name;
      }
    }
    const api::ResourceClaimSpec* spec = nullptr;
    const api::ResourceClaim* claim =
        claim_name.empty() ? nullptr : FindClaim(cluster, pod.meta.namespace_, claim_name);
    if (claim != nullptr) {
      spec = &claim->spec;
    } else if (!pc.resource_claim_template_name.empty()) {
      for (const api::ResourceClaimTemplate& t : cluster.resource_claim_templates) {
        if (t.meta.namespace_ == pod.meta.namespace_ &&
            t.meta.name == pc.resource_claim_template_name) {
          spec = &t.spec.spec;
        }
      }
    }
    const std::string label = claim_name.empty()
                                  ? gantry::StrCat(pc.name.view(), " (from template ",
                                                   pc.resource_claim_template_name, ")")
                                  : claim_name;
    if (spec == nullptr) {
      v1::DeviceRequest* r = out->add_requests();
      r->set_pod_claim(pc.name.str());
      r->set_claim(claim_name);
      r->set_request("");
      r->set_device_class(
          claim_name.empty()
              ? gantry::StrCat("(template ", pc.resource_claim_template_name, " not found)")
              : "(claim not found)");
      continue;
    }
    auto fill = [&](v1::DeviceRequest* r, const api::ExactDeviceRequest& e) {
      r->set_device_class(e.device_class_name.str());
      r->set_allocation_mode(e.allocation_mode == api::AllocationMode::kAll ? "All" : "ExactCount");
      r->set_count(e.count);
      for (const api::DeviceSelector& s : e.selectors) r->add_selectors(s.cel_expression);
    };
    for (const api::DeviceRequest& dr : spec->requests) {
      v1::DeviceRequest* r = out->add_requests();
      r->set_pod_claim(pc.name.str());
      r->set_claim(claim_name);
      r->set_request(dr.name.str());
      r->set_allocated(claim != nullptr && claim->IsAllocated());
      if (dr.exactly) {
        fill(r, *dr.exactly);
      } else if (!dr.first_available.empty()) {
        fill(r, dr.first_available.front().spec);
        for (const api::DeviceSubRequest& sub : dr.first_available) {
          r->add_subrequests(gantry::StrCat(sub.name.view(), ": ", sub.spec.count, " x ",
                                            sub.spec.device_class_name.view()));
        }
      }
    }
    for (const api::DeviceConstraint& c : spec->constraints) {
      std::string reqs;
      for (api::Symbol s : c.requests) reqs += (reqs.empty() ? "" : ", ") + s.str();
      out->add_constraints(gantry::StrCat(
          label, ": ", c.match_attribute.empty() ? "distinctAttribute " : "matchAttribute ",
          c.match_attribute.empty() ? c.distinct_attribute.view() : c.match_attribute.view(),
          " (requests: ", reqs.empty() ? "all" : reqs, ")"));
    }
  }
}

// The PodGroup objects of `cluster` by "namespace/name" (native and scheduler-plugins).
bool GroupExists(const api::ObjectSet& cluster, std::string_view key) {
  for (const api::PodGroup& g : cluster.pod_groups) {
    if (g.meta.Key() == key) return true;
  }
  for (const api::CoschedulingPodGroup& g : cluster.coscheduling_pod_groups) {
    if (g.meta.Key() == key) return true;
  }
  return false;
}

void FillGroup(const std::string& key, const api::ObjectSet& cluster,
               const std::optional<RecordedGroup>& rec, bool recorded,
               const sim::SimulationResult* replay,
               const std::map<std::string, std::string>& member_nodes, v1::GroupDiagnosis* out) {
  out->set_key(key);
  std::map<std::string, std::string> failures;
  if (rec) {
    const scheduler::GroupOutcome& o = rec->outcome;
    out->set_recorded(recorded);
    out->set_scheduled(o.scheduled);
    out->set_placed(o.placed);
    out->set_min_count(o.min_count);
    out->set_domain(o.domain);
    out->set_message(o.message);
    out->set_unix_micros(rec->unix_micros);
    for (const scheduler::DomainTrial& t : o.domains) {
      v1::DomainTrial* d = out->add_domains();
      d->set_domain(t.domain);
      d->set_placed(t.placed);
      d->set_satisfied(t.satisfied);
      d->set_failure(t.failure);
    }
    for (const scheduler::MemberFailure& m : o.members) failures[m.pod] = m.failure;
  }
  for (const api::Pod& p : cluster.pods) {
    if (state::GroupKeyOf(p) != key) continue;
    v1::GroupMember* m = out->add_members();
    const std::string pk = PodKey(p);
    m->set_pod(pk);
    if (p.IsBound()) {
      m->set_node(p.node_name.str());
    } else if (auto it = member_nodes.find(pk); it != member_nodes.end()) {
      m->set_node(it->second);
    }
    if (auto it = failures.find(pk); it != failures.end()) {
      m->set_failure(it->second);
    } else if (replay != nullptr && m->node().empty()) {
      if (auto f = replay->failures.find(pk); f != replay->failures.end())
        m->set_failure(f->second);
    }
  }
}

}  // namespace

absl::StatusOr<v1::ExplainResponse> Explain(const v1::ExplainRequest& request,
                                            const api::ObjectSet& cluster,
                                            const EngineOptions& options,
                                            const DiagnosisStore* live) {
  const std::string ns = request.namespace_().empty() ? "default" : request.namespace_();
  const bool group_request = request.kind() == v1::ExplainRequest::POD_GROUP;
  const char* what = group_request ? "PodGroup" : "Pod";
  if (request.name().empty())
    return absl::InvalidArgumentError(gantry::StrCat(what, ": name: Required value"));
  if (!ValidName(request.name())) {
    return absl::InvalidArgumentError(gantry::StrCat(
        what, " ", ns, "/", request.name(), ": name: Invalid value: must be a DNS-1123 subdomain"));
  }
  if (!ValidName(ns)) {
    return absl::InvalidArgumentError(
        gantry::StrCat(what, " ", ns, "/", request.name(),
                       ": namespace: Invalid value: must be a DNS-1123 label"));
  }
  if (request.max_candidates() < 0 || request.max_candidates() > kMaxCandidates) {
    return absl::InvalidArgumentError(
        gantry::StrCat("max_candidates: Invalid value: ", request.max_candidates(),
                       ": must be in [0, ", kMaxCandidates, "]"));
  }
  const int32_t max_candidates =
      request.max_candidates() == 0 ? kDefaultCandidates : request.max_candidates();
  const std::string key = gantry::StrCat(ns, "/", request.name());

  const api::Pod* target = nullptr;
  std::string group_key;
  if (group_request) {
    if (!GroupExists(cluster, key)) {
      // Members may name a group that does not exist yet; that is worth explaining too.
      bool has_members = false;
      for (const api::Pod& p : cluster.pods) has_members |= state::GroupKeyOf(p) == key;
      if (!has_members)
        return absl::NotFoundError(
            gantry::StrCat("PodGroup ", key, " not found (and no pod names it)"));
    }
    group_key = key;
    for (const api::Pod& p : cluster.pods) {
      if (state::GroupKeyOf(p) == key && !p.IsBound()) {
        target = &p;
        break;
      }
    }
  } else {
    for (const api::Pod& p : cluster.pods) {
      if (PodKey(p) == key) target = &p;
    }
    if (target == nullptr) return absl::NotFoundError(gantry::StrCat("Pod ", key, " not found"));
    group_key = state::GroupKeyOf(*target);
  }

  // The replay: the whole snapshot offline; only the target (and its group) live.
  const api::ObjectSet* replay_objects = &cluster;
  api::ObjectSet subset;
  if (live != nullptr) {
    subset = BoundOnly(cluster);
    for (const api::Pod& p : cluster.pods) {
      if (p.IsBound()) continue;
      if ((target != nullptr && PodKey(p) == PodKey(*target)) ||
          (!group_key.empty() && state::GroupKeyOf(p) == group_key)) {
        subset.pods.push_back(p);
      }
    }
    replay_objects = &subset;
  }
  absl::StatusOr<std::unique_ptr<Replay>> replay = RunReplay(*replay_objects, options);
  if (!replay.ok()) return replay.status();
  Replay& r = **replay;

  v1::ExplainResponse resp;
  resp.set_source(options.source);
  if (target != nullptr && !group_request) {
    resp.set_pod(key);
    if (target->IsBound()) {
      resp.set_phase("Bound");
      resp.set_node(target->node_name.str());
    } else {
      resp.set_phase("Pending");
    }
    std::optional<RecordedAttempt> rec = live != nullptr ? live->FindPod(key) : std::nullopt;
    resp.set_recorded(rec.has_value());
    if (!rec) rec = r.store->FindPod(key);
    if (rec) {
      FillAttempt(*rec, resp.mutable_last_attempt());
      FillGroups(rec->filtered, resp.mutable_devices()->mutable_nodes(), "DynamicResources");
    } else if (auto it = r.result.placements.find(key);
               it != r.result.placements.end() && !target->IsBound()) {
      resp.mutable_last_attempt()->set_result("scheduled");
      resp.mutable_last_attempt()->set_node(it->second);
    }
    if (!target->IsBound()) ScoreCandidates(r, *replay_objects, *target, max_candidates, &resp);
    DescribeDevices(cluster, *target, resp.mutable_devices());
  }
  if (!group_key.empty()) {
    std::optional<RecordedGroup> grec = live != nullptr ? live->FindGroup(group_key) : std::nullopt;
    const bool recorded = grec.has_value();
    if (!grec) grec = r.store->FindGroup(group_key);
    FillGroup(group_key, cluster, grec, recorded, &r.result, r.result.placements,
              resp.mutable_group());
  }
  return resp;
}

absl::StatusOr<v1::WhatIfResponse> WhatIf(const v1::WhatIfRequest& request,
                                          const api::ObjectSet& cluster,
                                          const EngineOptions& options) {
  const std::string& format = request.format();
  if (!format.empty() && format != "yaml" && format != "json") {
    return absl::InvalidArgumentError(gantry::StrCat("format: Unsupported value: \"", format,
                                                     "\": supported values: \"yaml\", \"json\""));
  }
  if (request.objects().empty())
    return absl::InvalidArgumentError("objects: Required value: no objects to place");
  api::ObjectSet added;
  sim::LoadStats stats;
  // Workload controllers (Deployment, StatefulSet, Job, JobSet, ...) stand
  // for the pods they would create.
  stats.expand_workloads_up_to = kMaxWhatIfObjects;
  if (absl::Status st =
          sim::LoadClusterText("objects", request.objects(), format == "json", &added, &stats);
      !st.ok()) {
    return absl::InvalidArgumentError(st.message());
  }
  if (!stats.skipped_kinds.empty()) {
    return absl::InvalidArgumentError(gantry::StrCat(
        "objects: kind ", stats.skipped_kinds.begin()->first, " is not used by the scheduler"));
  }
  if (added.TotalObjects() > kMaxWhatIfObjects) {
    return absl::ResourceExhaustedError(gantry::StrCat("objects: ", added.TotalObjects(),
                                                       " objects, at most ", kMaxWhatIfObjects,
                                                       " per what-if"));
  }
  auto reject_kind = [](std::string_view kind, size_t n) -> absl::Status {
    if (n == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(gantry::StrCat(
        "objects: ", kind,
        ": what-if places Pods, PodGroups, CompositePodGroups, Workloads, ResourceClaims and "
        "ResourceClaimTemplates on the current cluster; ",
        kind, " objects cannot be added"));
  };
  for (auto [kind, n] : std::initializer_list<std::pair<std::string_view, size_t>>{
           {"Node", added.nodes.size()},
           {"Namespace", added.namespaces.size()},
           {"PriorityClass", added.priority_classes.size()},
           {"PodDisruptionBudget", added.pdbs.size()},
           {"DeviceClass", added.device_classes.size()},
           {"ResourceSlice", added.resource_slices.size()},
           {"DeviceTaintRule", added.device_taint_rules.size()}}) {
    if (absl::Status st = reject_kind(kind, n); !st.ok()) return st;
  }
  if (added.pods.empty()) return absl::InvalidArgumentError("objects: no Pod to place");

  std::set<std::string> profiles;
  for (const config::Profile& p : options.config->profiles) profiles.insert(p.scheduler_name);
  std::set<std::string> existing_pods;
  for (const api::Pod& p : cluster.pods) existing_pods.insert(PodKey(p));
  std::set<std::string> added_keys;
  for (const api::Pod& p : added.pods) {
    const std::string k = PodKey(p);
    if (p.IsBound()) {
      return absl::InvalidArgumentError(
          gantry::StrCat("Pod ", k, ": spec.nodeName: Invalid value: \"", p.node_name.view(),
                         "\": what-if places unbound pods"));
    }
    if (!profiles.contains(p.scheduler_name.str())) {
      std::string names;
      for (const std::string& n : profiles) names += (names.empty() ? "" : ", ") + n;
      return absl::InvalidArgumentError(
          gantry::StrCat("Pod ", k, ": spec.schedulerName: Unsupported value: \"",
                         p.scheduler_name.view(), "\": this scheduler serves ", names));
    }
    if (existing_pods.contains(k))
      return absl::AlreadyExistsError(gantry::StrCat("Pod ", k, " already exists in the cluster"));
    if (!added_keys.insert(k).second)
      return absl::InvalidArgumentError(gantry::StrCat("Pod ", k, ": duplicate in the request"));
  }
  for (const api::ResourceClaim& c : added.resource_claims) {
    if (FindClaim(cluster, c.meta.namespace_, c.meta.name) != nullptr) {
      return absl::AlreadyExistsError(
          gantry::StrCat("ResourceClaim ", c.meta.Key(), " already exists in the cluster"));
    }
  }
  for (const api::PodGroup& g : added.pod_groups) {
    if (GroupExists(cluster, g.meta.Key()))
      return absl::AlreadyExistsError(
          gantry::StrCat("PodGroup ", g.meta.Key(), " already exists in the cluster"));
  }
  for (const api::CoschedulingPodGroup& g : added.coscheduling_pod_groups) {
    if (GroupExists(cluster, g.meta.Key()))
      return absl::AlreadyExistsError(
          gantry::StrCat("PodGroup ", g.meta.Key(), " already exists in the cluster"));
  }

  api::ObjectSet objects = BoundOnly(cluster);
  std::set<std::string> allocated_before;
  for (const api::ResourceClaim& c : objects.resource_claims) {
    if (c.IsAllocated()) allocated_before.insert(c.meta.Key());
  }
  auto append = [](auto& to, auto& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  std::vector<api::Pod> pods(added.pods.begin(), added.pods.end());
  append(objects.pods, added.pods);
  append(objects.pod_groups, added.pod_groups);
  append(objects.composite_pod_groups, added.composite_pod_groups);
  append(objects.coscheduling_pod_groups, added.coscheduling_pod_groups);
  append(objects.workloads, added.workloads);
  append(objects.resource_claims, added.resource_claims);
  append(objects.resource_claim_templates, added.resource_claim_templates);

  absl::StatusOr<std::unique_ptr<Replay>> replay = RunReplay(objects, options);
  if (!replay.ok()) return replay.status();
  const sim::SimulationResult& res = (*replay)->result;

  v1::WhatIfResponse resp;
  resp.set_source(options.source);
  for (const api::Pod& p : pods) {
    const std::string k = PodKey(p);
    v1::Placement* pl = resp.add_placements();
    pl->set_pod(k);
    if (auto it = res.placements.find(k); it != res.placements.end()) {
      pl->set_node(it->second);
      resp.set_scheduled(resp.scheduled() + 1);
    } else {
      auto f = res.failures.find(k);
      pl->set_message(f != res.failures.end() ? f->second : "not attempted");
      resp.set_unschedulable(resp.unschedulable() + 1);
    }
  }
  for (const auto& [claim, devices] : res.allocations) {
    if (allocated_before.contains(claim)) continue;
    v1::Allocation* a = resp.add_allocations();
    a->set_claim(claim);
    for (const sim::SimulationResult::AllocatedDevice& d : devices) {
      v1::AllocatedDevice* ad = a->add_devices();
      ad->set_request(d.request);
      ad->set_driver(d.driver);
      ad->set_pool(d.pool);
      ad->set_device(d.device);
    }
  }
  for (const auto& [key, g] : res.podgroups) {
    v1::GroupResult* gr = resp.add_groups();
    gr->set_key(key);
    gr->set_scheduled(g.scheduled);
    gr->set_placed(g.placed);
    gr->set_domain(g.domain);
    gr->set_message(g.message);
  }
  return resp;
}

}  // namespace gantry::admin
