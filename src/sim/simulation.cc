#include "src/sim/simulation.h"

#include <algorithm>
#include <chrono>

#include "gantry/util/strings.h"

namespace gantry::sim {

absl::Status InMemoryWriter::BindPod(const api::Pod& pod, std::string_view node) {
  std::lock_guard<std::mutex> lock(mu_);
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

absl::Status InMemoryWriter::DeletePodForPreemption(const api::Pod& victim, const api::Pod&, std::string_view) {
  return absl::UnimplementedError(gantry::StrCat("offline preemption of ", victim.meta.Key(),
                                                 " is not supported yet"));
}

void InMemoryWriter::RecordEvent(const framework::EventRecord&) {
  std::lock_guard<std::mutex> lock(mu_);
  ++events_;
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
  void OnAttempt(const scheduler::AttemptOutcome& o) override {
    result_->attempts++;
    result_->attempt_micros.push_back(o.duration_micros);
    const std::string key = o.pod->Key();
    if (o.result == "scheduled") {
      result_->placements[key] = o.node;
      result_->failures.erase(key);
    } else {
      result_->failures[key] = o.message;
    }
  }

 private:
  SimulationResult* result_;
};

namespace {

std::shared_ptr<const api::Pod> WithUid(const api::Pod& pod) {
  auto copy = std::make_shared<api::Pod>(pod);
  if (copy->meta.uid.empty()) copy->meta.uid = gantry::StrCat("sim-", copy->meta.Key());
  return copy;
}

}  // namespace

SimulationResult RunSimulation(const api::ObjectSet& objects, scheduler::Scheduler& sched,
                               InMemoryWriter& writer, FakeClock& clock) {
  SimulationResult result;
  AttemptRecorder recorder(&result);
  sched.SetObserver(&recorder);
  const int64_t virtual_start = clock.NowMicros();

  for (const api::Namespace& ns : objects.namespaces) {
    sched.OnNamespace(ns.meta.namespace_.empty() ? api::Symbol::Intern(ns.meta.name) : ns.meta.namespace_,
                      ns.meta.labels);
  }
  for (const api::PriorityClass& pc : objects.priority_classes) {
    sched.OnPriorityClass(api::Symbol::Intern(pc.meta.name),
                          state::PriorityClassInfo{pc.value, pc.global_default, pc.preemption_policy});
  }
  for (const api::Node& node : objects.nodes) sched.OnNodeAdd(std::make_shared<const api::Node>(node));
  for (const api::Pod& pod : objects.pods) {
    if (pod.IsBound() && !pod.IsTerminal()) sched.OnPodAdd(WithUid(pod));
  }
  for (const api::Pod& pod : objects.pods) {
    if (!pod.IsBound() && !pod.IsTerminal()) sched.OnPodAdd(WithUid(pod));
  }

  auto feed_bindings = [&]() {
    std::vector<InMemoryWriter::Binding> bindings = writer.TakeBindings();
    for (InMemoryWriter::Binding& b : bindings) {
      auto bound = std::make_shared<api::Pod>(*b.pod);
      bound->node_name = api::Symbol::Intern(b.node);
      bound->phase = api::PodPhase::kRunning;
      sched.OnPodUpdate(b.pod, std::move(bound));
    }
    return !bindings.empty();
  };

  const auto wall_start = std::chrono::steady_clock::now();
  queue::SchedulingQueue& q = sched.queue();
  while (true) {
    feed_bindings();
    q.FlushBackoffQCompleted();
    if (sched.ScheduleOne(/*blocking=*/false)) continue;
    if (feed_bindings()) continue;
    if (auto next = q.NextBackoffExpiryMicros(); next && *next > clock.NowMicros()) {
      clock.Set(*next);
      continue;
    } else if (next) {
      continue;
    }
    break;  // only unschedulable (or gated) pods remain and no event can come
  }
  result.loop_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  result.virtual_seconds = static_cast<double>(clock.NowMicros() - virtual_start) / 1e6;
  result.scheduled = static_cast<int64_t>(result.placements.size());
  result.unschedulable = static_cast<int64_t>(result.failures.size());
  sched.SetObserver(nullptr);
  return result;
}

nlohmann::json UtilisationJson(const api::ObjectSet& objects, const SimulationResult& result) {
  absl::flat_hash_map<std::string, const api::Pod*> by_key;
  for (const api::Pod& p : objects.pods) by_key[p.meta.Key()] = &p;
  std::map<std::string, std::pair<int64_t, int64_t>> totals;  // name -> (requested, allocatable)
  for (const api::Node& n : objects.nodes) {
    for (const api::ResourceAmount& a : n.allocatable.items()) totals[a.name.str()].second += a.value;
  }
  auto add_pod = [&](const api::Pod& p) {
    for (const api::ResourceAmount& a : p.requests.items()) totals[a.name.str()].first += a.value;
    totals["pods"].first += 1;
  };
  for (const api::Pod& p : objects.pods) {
    if (p.IsBound() && !p.IsTerminal()) add_pod(p);
  }
  for (const auto& [key, node] : result.placements) {
    auto it = by_key.find(key);
    if (it != by_key.end()) add_pod(*it->second);
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
  j["placements"] = r.placements;
  j["failures"] = r.failures;
  return j;
}

}  // namespace gantry::sim
