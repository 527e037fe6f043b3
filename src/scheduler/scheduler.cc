#include "src/scheduler/scheduler.h"

#include <algorithm>

namespace gantry::scheduler {

Scheduler::Scheduler(state::ClusterState& state, framework::ClusterWriter& writer,
                     const Clock& clock, SchedulerOptions options)
    : state_(state),
      writer_(writer),
      clock_(clock),
      options_(options),
      cycles_(state, options.percentage_of_nodes_to_score, options.seed),
      events_(state, *dra_, profiles_, writer, group_status_, foreign_, observers_, cycles_) {}

Scheduler::~Scheduler() {
  // Bindings still queued finish first; then a blocked Pop is woken.
  binder_.reset();
  if (queue_) queue_->Close();
}

void Scheduler::AddProfile(std::unique_ptr<framework::Framework> fw) {
  fw->SetNominator([this](std::string_view node) {
    return queue_ ? queue_->NominatedPodsForNode(node) : std::vector<framework::PodInfoPtr>{};
  });
  fw->SetDisruptionUnits([this](const api::Pod& pod) {
    framework::DisruptionUnit unit;
    unit.group = state::GroupKeyOf(pod);
    if (unit.group.empty()) return unit;
    if (std::optional<state::GroupInfo> g = state_.FindGroup(unit.group)) {
      unit.whole_group = g->disruption_all;
      unit.group_priority = state_.GroupPriority(*g);
      // In a CompositePodGroup subtree with disruptionMode all, the subtree is the unit.
      if (!g->parent.empty()) {
        if (std::optional<TreeDisruptionUnit> tree = TreeUnitOf(state_, *g)) {
          unit.group = TreeUnitKey(tree->root);
          unit.whole_group = true;
          int32_t prio = state_.ResolvePriority(pod);  // the leaf group's priority when it has one
          if (tree->priority) prio = std::max(prio, *tree->priority);
          unit.group_priority = prio;
        }
      }
    }
    return unit;
  });
  profiles_.Add(std::move(fw));
}

void Scheduler::Start(int64_t pod_initial_backoff_micros, int64_t pod_max_backoff_micros) {
  queue::QueueOptions qo;
  qo.pod_initial_backoff_micros = pod_initial_backoff_micros;
  qo.pod_max_backoff_micros = pod_max_backoff_micros;
  if (!profiles_.all().empty())
    qo.less = queue::LessFromPlugin(profiles_.all().front()->queue_sort());
  qo.group_of = state::GroupKeyOf;  // group cycles gather members with PopGroups
  for (const auto& fw : profiles_.all()) {
    queue::ProfileQueueConfig pc;
    pc.pre_enqueue = fw->pre_enqueue_plugins();
    pc.events = fw->EventsToRegister();
    qo.profiles[std::string(fw->SchedulerName())] = std::move(pc);
  }
  queue_ = std::make_unique<queue::SchedulingQueue>(clock_, std::move(qo));
  failure_ = std::make_unique<FailureHandler>(writer_, *queue_, observers_);
  binder_ = std::make_unique<Binder>(state_, writer_, clock_, *queue_, *failure_, observers_,
                                     group_status_, options_.binding_workers);
  preemption_ = std::make_unique<GroupPreemptionEvaluator>(state_, *queue_, cycles_, *dra_, writer_,
                                                           *failure_, observers_);
  group_cycle_ = std::make_unique<GroupCycle>(state_, *queue_, cycles_, *failure_, *binder_,
                                              group_status_, foreign_, observers_, *preemption_);
  loop_ = std::make_unique<SchedulingLoop>(state_, *queue_, profiles_, cycles_, *failure_, *binder_,
                                           *group_cycle_);
  events_.SetQueue(queue_.get());
}

}  // namespace gantry::scheduler
