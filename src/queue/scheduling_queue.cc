#include "src/queue/scheduling_queue.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "gantry/util/strings.h"

namespace gantry::queue {

using framework::ActionType;
using framework::EventResource;
using framework::QueueingHint;

// One queued unit (today: one pod). Owned by entries_; collections hold pointers.
struct SchedulingQueue::Entry {
  std::string uid;
  // While in flight only `pod_info` is kept here (the latest version); the
  // caller holds the rest of the QueuedPodInfo.
  QueuedPodInfo qpi;
  // The collection it is attached to, or the last one it was in. kInFlight
  // for fresh and popped entries.
  QueueName where = QueueName::kInFlight;
  bool attached = false;
  bool in_flight = false;       // popped, attempt not yet requeued or done
  bool deleted = false;         // deleted while popped; dropped on return
  bool force_activate = false;  // Activate() while in flight
  int32_t slot = -1;            // index in its heap or slot vector
  uint64_t seq = 0;             // insertion order, heap tie-break
  int64_t backoff_expiry_micros = 0;
  int64_t gated_checked_micros = 0;
  uint64_t in_flight_start = 0;  // first event seq this attempt must see
  int32_t outstanding_pops = 0;  // Pops not yet matched by Done
  std::string group;             // QueueOptions::group_of of qpi.pod_info, as indexed
};

struct SchedulingQueue::InFlightEvent {
  uint64_t seq = 0;
  ClusterEvent event;
  std::shared_ptr<const void> old_obj;
  std::shared_ptr<const void> new_obj;
  bool objects_known = true;
};

namespace {

bool SameTolerations(const std::vector<api::Toleration>& a, const std::vector<api::Toleration>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].op != b[i].op || a[i].value != b[i].value ||
        a[i].effect != b[i].effect || a[i].toleration_seconds != b[i].toleration_seconds) {
      return false;
    }
  }
  return true;
}

bool SameClaimStatuses(const std::vector<api::PodResourceClaimStatus>& a,
                       const std::vector<api::PodResourceClaimStatus>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].resource_claim_name != b[i].resource_claim_name) return false;
  }
  return true;
}

bool IsWildcard(const ClusterEvent& e) {
  return e.resource == EventResource::kWildcard && e.actions == framework::kAll;
}

size_t IncomingIndex(QueueName q) {
  switch (q) {
    case QueueName::kActive:
      return 0;
    case QueueName::kBackoff:
      return 1;
    default:
      return 2;  // unschedulable and gated, as upstream
  }
}

constexpr std::string_view kIncomingQueueLabels[3] = {"active", "backoff", "unschedulable"};

}  // namespace

LessFn DefaultLess() {
  return [](const QueuedPodInfo& a, const QueuedPodInfo& b) {
    int32_t pa = a.pod_info ? a.pod_info->priority : 0;
    int32_t pb = b.pod_info ? b.pod_info->priority : 0;
    return pa > pb || (pa == pb && a.timestamp_micros < b.timestamp_micros);
  };
}

LessFn LessFromPlugin(const framework::QueueSortPlugin* plugin) {
  // The built-in PrioritySort orders exactly like the cached-key fast path.
  if (plugin == nullptr || plugin->Name() == "PrioritySort") return nullptr;
  return [plugin](const QueuedPodInfo& a, const QueuedPodInfo& b) { return plugin->Less(a, b); };
}

std::string_view QueueNameLabel(QueueName q) {
  switch (q) {
    case QueueName::kActive:
      return "active";
    case QueueName::kBackoff:
      return "backoff";
    case QueueName::kUnschedulable:
      return "unschedulable";
    case QueueName::kGated:
      return "gated";
    case QueueName::kInFlight:
      return "in_flight";
  }
  return "unknown";
}

uint32_t PodUpdateActions(const api::Pod& old_pod, const api::Pod& new_pod) {
  uint32_t bits = 0;
  if (old_pod.meta.labels != new_pod.meta.labels) bits |= framework::kUpdatePodLabel;
  for (const api::ResourceAmount& r : old_pod.requests.items()) {
    if (new_pod.requests.Get(r.name) < r.value) {
      bits |= framework::kUpdatePodScaleDown;
      break;
    }
  }
  if (!SameTolerations(old_pod.tolerations, new_pod.tolerations)) {
    bits |= framework::kUpdatePodToleration;
  }
  if (!old_pod.scheduling_gates.empty() && new_pod.scheduling_gates.empty()) {
    bits |= framework::kUpdatePodSchedulingGatesEliminated;
  }
  if (!SameClaimStatuses(old_pod.resource_claim_statuses, new_pod.resource_claim_statuses)) {
    bits |= framework::kUpdatePodGeneratedResourceClaim;
  }
  if (bits == 0 && old_pod.meta.generation != new_pod.meta.generation) {
    bits |= framework::kUpdateOther;
  }
  return bits;
}

// ---- Heap / Slots ----------------------------------------------------------

// A 4-ary heap: half the depth of a binary one, so fewer entries are touched
// (each move rewrites the moved entry's slot) per push and pop.
constexpr size_t kArity = 4;

SchedulingQueue::Heap::Item SchedulingQueue::Heap::MakeItem(Entry* e) const {
  Item it;
  it.e = e;
  it.seq = e->seq;
  if (custom_ == nullptr) key_(*e, &it.k1, &it.k2);
  return it;
}

bool SchedulingQueue::Heap::Less(const Item& a, const Item& b) const {
  if (custom_ != nullptr) {
    if ((*custom_)(a.e->qpi, b.e->qpi)) return true;
    if ((*custom_)(b.e->qpi, a.e->qpi)) return false;
    return a.seq < b.seq;
  }
  if (a.k1 != b.k1) return a.k1 < b.k1;
  if (a.k2 != b.k2) return a.k2 < b.k2;
  return a.seq < b.seq;
}

void SchedulingQueue::Heap::Swap(size_t i, size_t j) {
  std::swap(items_[i], items_[j]);
  items_[i].e->slot = static_cast<int32_t>(i);
  items_[j].e->slot = static_cast<int32_t>(j);
}

bool SchedulingQueue::Heap::Up(size_t i) {
  bool moved = false;
  while (i > 0) {
    size_t parent = (i - 1) / kArity;
    if (!Less(items_[i], items_[parent])) break;
    Swap(i, parent);
    i = parent;
    moved = true;
  }
  return moved;
}

void SchedulingQueue::Heap::Down(size_t i) {
  const size_t n = items_.size();
  while (true) {
    size_t first = kArity * i + 1;
    if (first >= n) break;
    size_t best = first;
    size_t end = std::min(first + kArity, n);
    for (size_t c = first + 1; c < end; ++c) {
      if (Less(items_[c], items_[best])) best = c;
    }
    if (!Less(items_[best], items_[i])) break;
    Swap(i, best);
    i = best;
  }
}

void SchedulingQueue::Heap::Push(Entry* e) {
  e->slot = static_cast<int32_t>(items_.size());
  items_.push_back(MakeItem(e));
  Up(items_.size() - 1);
}

SchedulingQueue::Entry* SchedulingQueue::Heap::PopTop() {
  if (items_.empty()) return nullptr;
  Entry* top = items_.front().e;
  Swap(0, items_.size() - 1);
  items_.pop_back();
  if (!items_.empty()) Down(0);
  top->slot = -1;
  return top;
}

void SchedulingQueue::Heap::Remove(Entry* e) {
  size_t i = static_cast<size_t>(e->slot);
  size_t last = items_.size() - 1;
  if (i != last) {
    Swap(i, last);
    items_.pop_back();
    if (!Up(i)) Down(i);
  } else {
    items_.pop_back();
  }
  e->slot = -1;
}

void SchedulingQueue::Heap::Fix(Entry* e) {
  size_t i = static_cast<size_t>(e->slot);
  items_[i] = MakeItem(e);
  if (!Up(i)) Down(i);
}

std::vector<SchedulingQueue::Entry*> SchedulingQueue::Heap::Sorted() const {
  std::vector<Item> items = items_;
  std::sort(items.begin(), items.end(), [this](const Item& a, const Item& b) { return Less(a, b); });
  std::vector<Entry*> out;
  out.reserve(items.size());
  for (const Item& it : items) out.push_back(it.e);
  return out;
}

void SchedulingQueue::Slots::Insert(Entry* e) {
  e->slot = static_cast<int32_t>(items_.size());
  items_.push_back(e);
}

void SchedulingQueue::Slots::Remove(Entry* e) {
  size_t i = static_cast<size_t>(e->slot);
  Entry* last = items_.back();
  items_[i] = last;
  last->slot = static_cast<int32_t>(i);
  items_.pop_back();
  e->slot = -1;
}

void SchedulingQueue::ActiveKey(const Entry& e, int64_t* k1, int64_t* k2) {
  *k1 = e.qpi.pod_info ? -static_cast<int64_t>(e.qpi.pod_info->priority) : 0;
  *k2 = e.qpi.timestamp_micros;
}

void SchedulingQueue::BackoffKey(const Entry& e, int64_t* k1, int64_t* k2) {
  *k1 = e.backoff_expiry_micros;
  *k2 = 0;
}

// ---- Construction ----------------------------------------------------------

SchedulingQueue::SchedulingQueue(const Clock& clock, QueueOptions options)
    : clock_(clock),
      options_(std::move(options)),
      active_(options_.less ? &options_.less : nullptr, &SchedulingQueue::ActiveKey),
      backoff_(nullptr, &SchedulingQueue::BackoffKey) {
  if (options_.pod_initial_backoff_micros < 0) options_.pod_initial_backoff_micros = 0;
  if (options_.pod_max_backoff_micros < options_.pod_initial_backoff_micros) {
    options_.pod_max_backoff_micros = options_.pod_initial_backoff_micros;
  }
}

SchedulingQueue::~SchedulingQueue() = default;

int64_t SchedulingQueue::BackoffDurationMicros(int32_t attempts) const {
  if (attempts <= 0) return 0;
  const int64_t max = options_.pod_max_backoff_micros;
  int64_t d = options_.pod_initial_backoff_micros;
  for (int32_t i = 1; i < attempts; ++i) {
    if (d > max - d) return max;
    d += d;
  }
  return std::min(d, max);
}

// ---- Internal helpers (mu_ held) ------------------------------------------

SchedulingQueue::Entry* SchedulingQueue::Find(std::string_view uid) const {
  auto it = entries_.find(AsAbsl(uid));
  if (it == entries_.end() || it->second->deleted) return nullptr;
  return it->second.get();
}

void SchedulingQueue::Detach(Entry* e) {
  if (!e->attached) return;
  switch (e->where) {
    case QueueName::kActive:
      active_.Remove(e);
      break;
    case QueueName::kBackoff:
      backoff_.Remove(e);
      break;
    case QueueName::kUnschedulable:
      unschedulable_.Remove(e);
      break;
    case QueueName::kGated:
      gated_.Remove(e);
      break;
    case QueueName::kInFlight:
      break;
  }
  e->attached = false;
}

void SchedulingQueue::Erase(Entry* e) {
  Detach(e);
  if (e->in_flight) EndInFlightAttempt(e);
  Unindex(e);
  std::string uid = e->uid;
  entries_.erase(uid);
}

void SchedulingQueue::Reindex(Entry* e) {
  if (!options_.group_of) return;
  std::string group =
      e->qpi.pod_info == nullptr ? std::string() : options_.group_of(e->qpi.pod_info->p());
  if (group == e->group) return;
  Unindex(e);
  e->group = std::move(group);
  if (!e->group.empty()) by_group_[e->group].insert(e);
}

void SchedulingQueue::Unindex(Entry* e) {
  if (e->group.empty()) return;
  auto it = by_group_.find(e->group);
  if (it != by_group_.end()) {
    it->second.erase(e);
    if (it->second.empty()) by_group_.erase(it);
  }
  e->group.clear();
}

void SchedulingQueue::CountIncoming(QueueName q, std::string_view event) {
  auto& m = incoming_[IncomingIndex(q)];
  auto it = m.find(AsAbsl(event));
  if (it == m.end()) {
    m.emplace(std::string(event), 1);
  } else {
    ++it->second;
  }
}

void SchedulingQueue::InsertActive(Entry* e, std::string_view event) {
  if (e->where != QueueName::kActive) CountIncoming(QueueName::kActive, event);
  e->where = QueueName::kActive;
  e->attached = true;
  e->seq = next_seq_++;
  active_.Push(e);
  cond_.notify_one();
}

void SchedulingQueue::InsertBackoff(Entry* e, std::string_view event) {
  if (e->where != QueueName::kBackoff) CountIncoming(QueueName::kBackoff, event);
  e->where = QueueName::kBackoff;
  e->attached = true;
  e->seq = next_seq_++;
  e->backoff_expiry_micros = e->qpi.timestamp_micros + BackoffDurationMicros(e->qpi.attempts);
  backoff_.Push(e);
}

void SchedulingQueue::InsertUnschedulable(Entry* e, std::string_view event) {
  if (e->where != QueueName::kUnschedulable) CountIncoming(QueueName::kUnschedulable, event);
  e->where = QueueName::kUnschedulable;
  e->attached = true;
  unschedulable_.Insert(e);
}

void SchedulingQueue::InsertGated(Entry* e, std::string_view event) {
  if (e->where != QueueName::kGated) CountIncoming(QueueName::kGated, event);
  e->where = QueueName::kGated;
  e->attached = true;
  e->gated_checked_micros = clock_.NowMicros();
  gated_.Insert(e);
}

bool SchedulingQueue::RunPreEnqueue(Entry* e) {
  const api::Pod& pod = e->qpi.pod_info->p();
  auto it = options_.profiles.find(AsAbsl(pod.scheduler_name.view()));
  if (it != options_.profiles.end()) {
    for (framework::PreEnqueuePlugin* p : it->second.pre_enqueue) {
      framework::Status st = p->PreEnqueue(*e->qpi.pod_info);
      if (!st.IsSuccess()) {
        e->qpi.gating_plugin = std::string(p->Name());
        return false;
      }
    }
  }
  e->qpi.gating_plugin.clear();
  return true;
}

bool SchedulingQueue::IsBackingOff(const Entry& e) const {
  if (e.qpi.attempts <= 0) return false;
  return e.qpi.timestamp_micros + BackoffDurationMicros(e.qpi.attempts) > clock_.NowMicros();
}

void SchedulingQueue::Requeue(Entry* e, Strategy s, std::string_view event) {
  if (!RunPreEnqueue(e)) {
    InsertGated(e, event);
    return;
  }
  if (s == Strategy::kQueueImmediately || !IsBackingOff(*e)) {
    InsertActive(e, event);
  } else {
    InsertBackoff(e, event);
  }
}

const PluginEvents& SchedulingQueue::EventsFor(const api::Pod& pod) const {
  auto it = options_.profiles.find(AsAbsl(pod.scheduler_name.view()));
  if (it != options_.profiles.end() && it->second.events.has_value()) return *it->second.events;
  return options_.events;
}

SchedulingQueue::Strategy SchedulingQueue::WorthRequeuing(const QueuedPodInfo& qpi,
                                                          const ClusterEvent& event,
                                                          const void* old_obj,
                                                          const void* new_obj,
                                                          bool objects_known) const {
  const bool gated = !qpi.gating_plugin.empty();
  if (!gated && qpi.unschedulable_plugins.empty() && qpi.pending_plugins.empty()) {
    return Strategy::kQueueAfterBackoff;
  }
  if (IsWildcard(event)) return Strategy::kQueueAfterBackoff;

  const api::Pod& pod = qpi.pod_info->p();
  const PluginEvents& regs = EventsFor(pod);
  auto says_queue = [&](const std::string& plugin) {
    auto it = regs.find(plugin);
    if (it == regs.end()) return true;  // registered nothing: every event may help
    for (const ClusterEventWithHint& reg : it->second) {
      if (!reg.event.Matches(event)) continue;
      if (!reg.hint || !objects_known) return true;
      if (reg.hint(pod, event, old_obj, new_obj) == QueueingHint::kQueue) return true;
    }
    return false;
  };

  if (gated) {
    return says_queue(qpi.gating_plugin) ? Strategy::kQueueAfterBackoff : Strategy::kSkip;
  }
  for (const std::string& plugin : qpi.pending_plugins) {
    if (says_queue(plugin)) return Strategy::kQueueImmediately;
  }
  for (const std::string& plugin : qpi.unschedulable_plugins) {
    if (qpi.pending_plugins.contains(plugin)) continue;
    if (says_queue(plugin)) return Strategy::kQueueAfterBackoff;
  }
  return Strategy::kSkip;
}

void SchedulingQueue::RecordInFlightEvent(const ClusterEvent& event,
                                          std::shared_ptr<const void> old_obj,
                                          std::shared_ptr<const void> new_obj,
                                          bool objects_known) {
  if (in_flight_starts_.empty()) return;
  InFlightEvent ev;
  ev.seq = next_event_seq_++;
  ev.event = event;
  if (objects_known) {
    ev.old_obj = std::move(old_obj);
    ev.new_obj = std::move(new_obj);
  }
  ev.objects_known = objects_known;
  in_flight_events_.push_back(std::move(ev));
}

void SchedulingQueue::EndInFlightAttempt(Entry* e) {
  if (!e->in_flight) return;
  e->in_flight = false;
  --in_flight_;
  auto it = in_flight_starts_.find(e->in_flight_start);
  if (it != in_flight_starts_.end()) in_flight_starts_.erase(it);
  PruneInFlightEvents();
}

void SchedulingQueue::PruneInFlightEvents() {
  if (in_flight_starts_.empty()) {
    in_flight_events_.clear();
    return;
  }
  const uint64_t oldest = *in_flight_starts_.begin();
  while (!in_flight_events_.empty() && in_flight_events_.front().seq < oldest) {
    in_flight_events_.pop_front();
  }
}

void SchedulingQueue::MoveAllLocked(const ClusterEvent& event, std::shared_ptr<const void> old_obj,
                                    std::shared_ptr<const void> new_obj, const void* old_raw,
                                    const void* new_raw, bool owned,
                                    const PreCheckFn& pre_check) {
  move_request_cycle_ = scheduling_cycle_;
  // Copies, not moves: the caller may have handed over the last reference to
  // old_raw/new_raw (an informer passes the replaced object), and the hints
  // below read them; old_obj/new_obj keep them alive until this returns.
  RecordInFlightEvent(event, old_obj, new_obj, owned);
  if (unschedulable_.size() == 0 && gated_.size() == 0) return;

  std::vector<std::pair<Entry*, Strategy>> moves;
  for (const Slots* set : {&unschedulable_, &gated_}) {
    for (Entry* e : set->items()) {
      if (pre_check && !pre_check(e->qpi.pod_info->p())) continue;
      Strategy s = WorthRequeuing(e->qpi, event, old_raw, new_raw, /*objects_known=*/true);
      if (s != Strategy::kSkip) moves.emplace_back(e, s);
    }
  }
  for (auto& [e, s] : moves) {
    Detach(e);
    Requeue(e, s, event.label);
  }
}

void SchedulingQueue::AddLocked(PodInfoPtr pod, std::string_view event) {
  const std::string& uid = pod->uid();
  auto [it, inserted] = entries_.try_emplace(uid);
  if (inserted) it->second = std::make_unique<Entry>();
  Entry* e = it->second.get();
  e->uid = uid;
  e->deleted = false;
  e->qpi = QueuedPodInfo{};
  e->qpi.pod_info = std::move(pod);
  e->qpi.timestamp_micros = clock_.NowMicros();
  Reindex(e);
  AddNominatedLocked(e->qpi.pod_info, std::nullopt);
  if (e->in_flight) return;  // re-added while its old attempt runs: requeued on return
  Requeue(e, Strategy::kQueueAfterBackoff, event);
}

std::optional<QueuedPodInfo> SchedulingQueue::PopLocked() {
  Entry* e = active_.PopTop();
  if (e == nullptr) return std::nullopt;
  return PopEntryLocked(e);
}

bool SchedulingQueue::Poppable(const Entry& e) {
  return e.attached && !e.in_flight && !e.deleted && e.where != QueueName::kGated &&
         e.qpi.pod_info != nullptr;
}

std::vector<QueuedPodInfo> SchedulingQueue::PopMatching(
    const std::function<bool(const framework::PodInfo&)>& pred) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Entry*> matches;
  for (const auto& [uid, entry] : entries_) {
    Entry* e = entry.get();
    if (Poppable(*e) && pred(*e->qpi.pod_info)) matches.push_back(e);
  }
  return PopEntriesLocked(std::move(matches));
}

std::vector<QueuedPodInfo> SchedulingQueue::PopGroups(const std::vector<std::string>& groups) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Entry*> matches;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty() ||
        std::find(groups.begin(), groups.begin() + g, groups[g]) != groups.begin() + g) {
      continue;  // no group, or named twice
    }
    auto it = by_group_.find(groups[g]);
    if (it == by_group_.end()) continue;
    for (Entry* e : it->second) {
      if (Poppable(*e)) matches.push_back(e);
    }
  }
  return PopEntriesLocked(std::move(matches));
}

std::vector<QueuedPodInfo> SchedulingQueue::PopEntriesLocked(std::vector<Entry*> matches) {
  std::sort(matches.begin(), matches.end(), [](const Entry* a, const Entry* b) {
    const int32_t pa = a->qpi.pod_info->priority, pb = b->qpi.pod_info->priority;
    if (pa != pb) return pa > pb;
    if (a->qpi.timestamp_micros != b->qpi.timestamp_micros) {
      return a->qpi.timestamp_micros < b->qpi.timestamp_micros;
    }
    return a->uid < b->uid;
  });
  std::vector<QueuedPodInfo> out;
  out.reserve(matches.size());
  for (Entry* e : matches) {
    Detach(e);
    out.push_back(PopEntryLocked(e));
  }
  return out;
}

QueuedPodInfo SchedulingQueue::PopEntryLocked(Entry* e) {
  e->attached = false;
  e->where = QueueName::kInFlight;
  e->in_flight = true;
  e->force_activate = false;
  ++in_flight_;
  ++e->outstanding_pops;
  e->in_flight_start = next_event_seq_;
  in_flight_starts_.insert(e->in_flight_start);
  ++scheduling_cycle_;

  QueuedPodInfo out = std::move(e->qpi);
  e->qpi = QueuedPodInfo{};
  e->qpi.pod_info = out.pod_info;
  e->qpi.attempts = out.attempts + 1;
  out.attempts++;
  if (out.initial_attempt_micros == 0) out.initial_attempt_micros = clock_.NowMicros();
  e->qpi.initial_attempt_micros = out.initial_attempt_micros;
  e->qpi.timestamp_micros = out.timestamp_micros;
  out.unschedulable_plugins.clear();
  out.pending_plugins.clear();
  out.gating_plugin.clear();
  return out;
}

// ---- Informer side ---------------------------------------------------------

void SchedulingQueue::Add(PodInfoPtr pod) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Find(pod->uid()) != nullptr) {
    UpdateLocked(std::move(pod));
  } else {
    AddLocked(std::move(pod), event_label::kPodAdd);
  }
}

void SchedulingQueue::Update(PodInfoPtr pod) {
  std::lock_guard<std::mutex> lock(mu_);
  UpdateLocked(std::move(pod));
}

void SchedulingQueue::UpdateLocked(PodInfoPtr pod) {
  Entry* e = Find(pod->uid());
  if (e == nullptr) {
    AddLocked(std::move(pod), event_label::kPodUpdate);
    return;
  }
  PodInfoPtr old = e->qpi.pod_info;
  UpdateNominatedLocked(old, pod);
  const uint32_t actions = PodUpdateActions(old->p(), pod->p());
  const ClusterEvent event{EventResource::kUnscheduledPod, actions,
                           std::string(event_label::kUnscheduledPodUpdate)};

  if (e->in_flight) {
    e->qpi.pod_info = pod;
    Reindex(e);
    if (actions != 0) {
      std::shared_ptr<const void> o = old->pod, n = pod->pod;
      RecordInFlightEvent(event, std::move(o), std::move(n), true);
    }
    return;
  }
  e->qpi.pod_info = std::move(pod);
  Reindex(e);
  switch (e->where) {
    case QueueName::kActive:
      active_.Fix(e);
      return;
    case QueueName::kBackoff:
      return;
    case QueueName::kGated:
      Detach(e);
      Requeue(e, Strategy::kQueueAfterBackoff, event_label::kPodUpdate);
      return;
    case QueueName::kUnschedulable: {
      if (actions == 0) return;
      Strategy s = (actions & framework::kUpdateOther)
                       ? Strategy::kQueueAfterBackoff
                       : WorthRequeuing(e->qpi, event, old->pod.get(), e->qpi.pod_info->pod.get(),
                                        true);
      if (s == Strategy::kSkip) return;
      Detach(e);
      Requeue(e, s, event_label::kPodUpdate);
      return;
    }
    case QueueName::kInFlight:
      return;
  }
}

void SchedulingQueue::Delete(std::string_view uid) {
  std::lock_guard<std::mutex> lock(mu_);
  DeleteNominatedLocked(uid);
  Entry* e = Find(uid);
  if (e == nullptr) return;
  Detach(e);
  if (e->in_flight || e->outstanding_pops > 0) {
    e->deleted = true;  // kept until its Pops are Done
    return;
  }
  Erase(e);
}

void SchedulingQueue::AssignedPodAdded(const PodInfoPtr& pod) {
  std::lock_guard<std::mutex> lock(mu_);
  DeleteNominatedLocked(pod->uid());
  const ClusterEvent event{EventResource::kAssignedPod, framework::kAdd,
                           std::string(event_label::kAssignedPodAdd)};
  std::shared_ptr<const void> n = pod->pod;
  MoveAllLocked(event, nullptr, std::move(n), nullptr, pod->pod.get(), true, nullptr);
}

void SchedulingQueue::AssignedPodUpdated(const PodInfoPtr& old_pod, const PodInfoPtr& new_pod) {
  const uint32_t actions = PodUpdateActions(old_pod->p(), new_pod->p());
  if (actions == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const ClusterEvent event{EventResource::kAssignedPod, actions,
                           std::string(event_label::kAssignedPodUpdate)};
  std::shared_ptr<const void> o = old_pod->pod, n = new_pod->pod;
  MoveAllLocked(event, std::move(o), std::move(n), old_pod->pod.get(), new_pod->pod.get(), true,
                nullptr);
}

void SchedulingQueue::AssignedPodDeleted(const PodInfoPtr& pod) {
  std::lock_guard<std::mutex> lock(mu_);
  const ClusterEvent event{EventResource::kAssignedPod, framework::kDelete,
                           std::string(event_label::kAssignedPodDelete)};
  std::shared_ptr<const void> o = pod->pod;
  MoveAllLocked(event, std::move(o), nullptr, pod->pod.get(), nullptr, true, nullptr);
}

void SchedulingQueue::MoveAllToActiveOrBackoffQueue(const ClusterEvent& event,
                                                    std::shared_ptr<const void> old_obj,
                                                    std::shared_ptr<const void> new_obj,
                                                    const PreCheckFn& pre_check) {
  std::lock_guard<std::mutex> lock(mu_);
  const void* o = old_obj.get();
  const void* n = new_obj.get();
  MoveAllLocked(event, std::move(old_obj), std::move(new_obj), o, n, true, pre_check);
}

void SchedulingQueue::MoveAllToActiveOrBackoffQueueBorrowed(const ClusterEvent& event,
                                                            const void* old_obj,
                                                            const void* new_obj,
                                                            const PreCheckFn& pre_check) {
  std::lock_guard<std::mutex> lock(mu_);
  MoveAllLocked(event, nullptr, nullptr, old_obj, new_obj, false, pre_check);
}

void SchedulingQueue::Activate(std::string_view uid) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* e = Find(uid);
  if (e == nullptr) return;
  if (e->in_flight) {
    e->force_activate = true;
    return;
  }
  if (!e->attached || e->where == QueueName::kActive) return;
  Detach(e);
  Requeue(e, Strategy::kQueueImmediately, event_label::kForceActivate);
}

// ---- Scheduling loop side --------------------------------------------------

std::optional<QueuedPodInfo> SchedulingQueue::Pop() {
  std::unique_lock<std::mutex> lock(mu_);
  cond_.wait(lock, [this] { return closed_ || active_.size() > 0; });
  if (closed_) return std::nullopt;
  return PopLocked();
}

std::optional<QueuedPodInfo> SchedulingQueue::TryPop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return std::nullopt;
  return PopLocked();
}

int64_t SchedulingQueue::SchedulingCycle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scheduling_cycle_;
}

absl::Status SchedulingQueue::AddUnschedulableIfNotPresent(QueuedPodInfo qpi,
                                                           int64_t scheduling_cycle) {
  if (!qpi.pod_info) return absl::InvalidArgumentError("QueuedPodInfo without a pod");
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& uid = qpi.pod_info->uid();
  Entry* e = nullptr;
  if (auto it = entries_.find(uid); it != entries_.end()) e = it->second.get();

  if (e != nullptr && e->deleted) {  // deleted while popped: drop it
    EndInFlightAttempt(e);
    return absl::OkStatus();
  }
  if (e != nullptr && e->attached) {
    return absl::AlreadyExistsError(
        StrCat("pod ", qpi.pod_info->Key(), " is already in the scheduling queue (",
               QueueNameLabel(e->where), ")"));
  }

  Strategy strategy = Strategy::kSkip;
  if (e != nullptr && e->in_flight) {
    qpi.pod_info = e->qpi.pod_info;  // the latest version seen while in flight
    qpi.gating_plugin.clear();
    if (e->force_activate) {
      strategy = Strategy::kQueueImmediately;
      e->force_activate = false;
    } else {
      for (const InFlightEvent& ev : in_flight_events_) {
        if (ev.seq < e->in_flight_start) continue;
        Strategy s = WorthRequeuing(qpi, ev.event, ev.old_obj.get(), ev.new_obj.get(),
                                    ev.objects_known);
        if (s > strategy) strategy = s;
        if (strategy == Strategy::kQueueImmediately) break;
      }
    }
    EndInFlightAttempt(e);
  } else {
    if (e == nullptr) {
      auto [it, inserted] = entries_.try_emplace(uid);
      (void)inserted;
      it->second = std::make_unique<Entry>();
      e = it->second.get();
      e->uid = uid;
    }
    if (move_request_cycle_ >= scheduling_cycle) strategy = Strategy::kQueueAfterBackoff;
  }

  qpi.timestamp_micros = clock_.NowMicros();
  e->qpi = std::move(qpi);
  Reindex(e);
  const bool failed_with_error =
      e->qpi.unschedulable_plugins.empty() && e->qpi.pending_plugins.empty();
  if (failed_with_error) strategy = std::max(strategy, Strategy::kQueueAfterBackoff);
  if (strategy == Strategy::kSkip) {
    InsertUnschedulable(e, event_label::kScheduleAttemptFailure);
  } else {
    Requeue(e, strategy, event_label::kScheduleAttemptFailure);
  }
  return absl::OkStatus();
}

void SchedulingQueue::Done(std::string_view uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(AsAbsl(uid));
  if (it == entries_.end()) return;
  Entry* e = it->second.get();
  if (e->outstanding_pops > 0) --e->outstanding_pops;
  if (e->outstanding_pops > 0) return;  // an older attempt's Done; the newer one still runs
  if (e->in_flight || e->deleted || !e->attached) {
    // Finished without a requeue (scheduled or dropped), or deleted meanwhile.
    Detach(e);
    EndInFlightAttempt(e);
    Unindex(e);
    entries_.erase(it);
  }
}

void SchedulingQueue::FlushBackoffQCompleted() {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = clock_.NowMicros();
  while (Entry* top = backoff_.Top()) {
    if (top->backoff_expiry_micros > now) break;
    backoff_.PopTop();
    top->attached = false;
    InsertActive(top, event_label::kBackoffComplete);
  }
}

void SchedulingQueue::FlushUnschedulablePodsLeftover() {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = clock_.NowMicros();
  const int64_t max = options_.pod_max_in_unschedulable_pods_micros;
  std::vector<Entry*> moves;
  for (Entry* e : unschedulable_.items()) {
    if (now - e->qpi.timestamp_micros > max) moves.push_back(e);
  }
  for (Entry* e : gated_.items()) {
    if (now - e->gated_checked_micros > max) moves.push_back(e);
  }
  for (Entry* e : moves) {
    Detach(e);
    Requeue(e, Strategy::kQueueAfterBackoff, event_label::kUnschedulableTimeout);
  }
}

void SchedulingQueue::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cond_.notify_all();
}

bool SchedulingQueue::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

// ---- Nominator -------------------------------------------------------------

void SchedulingQueue::AddNominatedLocked(const PodInfoPtr& pod, std::optional<std::string> node) {
  DeleteNominatedLocked(pod->uid());
  std::string target = node.has_value() ? std::move(*node) : pod->p().nominated_node_name.str();
  if (target.empty()) return;
  nominated_by_node_[target].push_back(pod->uid());
  nominated_by_uid_[pod->uid()] = Nomination{std::move(target), pod};
}

void SchedulingQueue::DeleteNominatedLocked(std::string_view uid) {
  auto it = nominated_by_uid_.find(AsAbsl(uid));
  if (it == nominated_by_uid_.end()) return;
  auto nit = nominated_by_node_.find(it->second.node);
  if (nit != nominated_by_node_.end()) {
    auto& uids = nit->second;
    uids.erase(std::remove(uids.begin(), uids.end(), uid), uids.end());
    if (uids.empty()) nominated_by_node_.erase(nit);
  }
  nominated_by_uid_.erase(it);
}

void SchedulingQueue::UpdateNominatedLocked(const PodInfoPtr& old_pod, const PodInfoPtr& new_pod) {
  auto it = nominated_by_uid_.find(new_pod->uid());
  if (it == nominated_by_uid_.end()) {
    if (!new_pod->p().nominated_node_name.empty()) AddNominatedLocked(new_pod, std::nullopt);
    return;
  }
  // An update without nominatedNodeName right after preemption nominated the
  // pod (the status write has not landed yet): keep the nomination.
  if (old_pod->p().nominated_node_name.empty() && new_pod->p().nominated_node_name.empty()) {
    it->second.pod = new_pod;
    return;
  }
  AddNominatedLocked(new_pod, std::nullopt);
}

void SchedulingQueue::AddNominatedPod(const PodInfoPtr& pod, std::optional<std::string> node) {
  std::lock_guard<std::mutex> lock(mu_);
  AddNominatedLocked(pod, std::move(node));
}

void SchedulingQueue::DeleteNominatedPodIfExists(std::string_view uid) {
  std::lock_guard<std::mutex> lock(mu_);
  DeleteNominatedLocked(uid);
}

std::vector<PodInfoPtr> SchedulingQueue::NominatedPodsForNode(std::string_view node) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PodInfoPtr> out;
  auto it = nominated_by_node_.find(AsAbsl(node));
  if (it == nominated_by_node_.end()) return out;
  out.reserve(it->second.size());
  for (const std::string& uid : it->second) {
    auto pit = nominated_by_uid_.find(uid);
    if (pit != nominated_by_uid_.end()) out.push_back(pit->second.pod);
  }
  return out;
}

std::vector<std::pair<std::string, PodInfoPtr>> SchedulingQueue::Nominations() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, PodInfoPtr>> out;
  out.reserve(nominated_by_uid_.size());
  for (const auto& [uid, n] : nominated_by_uid_) out.emplace_back(n.node, n.pod);
  return out;
}

void SchedulingQueue::ForEachNomination(
    const std::function<void(std::string_view, const PodInfoPtr&)>& fn) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [uid, n] : nominated_by_uid_) fn(n.node, n.pod);
}

bool SchedulingQueue::HasNominations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !nominated_by_uid_.empty();
}

std::optional<std::string> SchedulingQueue::NominatedNodeFor(std::string_view uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nominated_by_uid_.find(AsAbsl(uid));
  if (it == nominated_by_uid_.end()) return std::nullopt;
  return it->second.node;
}

// ---- Introspection ---------------------------------------------------------

PendingPods SchedulingQueue::Pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  PendingPods p;
  p.active = static_cast<int64_t>(active_.size());
  p.backoff = static_cast<int64_t>(backoff_.size());
  p.unschedulable = static_cast<int64_t>(unschedulable_.size());
  p.gated = static_cast<int64_t>(gated_.size());
  p.in_flight = in_flight_;
  return p;
}

QueueMetrics SchedulingQueue::Metrics() const {
  QueueMetrics m;
  m.pending = Pending();
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t q = 0; q < 3; ++q) {
    for (const auto& [event, count] : incoming_[q]) {
      m.incoming.push_back(IncomingPods{std::string(kIncomingQueueLabels[q]), event, count});
    }
  }
  std::sort(m.incoming.begin(), m.incoming.end(), [](const IncomingPods& a, const IncomingPods& b) {
    return std::tie(a.queue, a.event) < std::tie(b.queue, b.event);
  });
  return m;
}

std::optional<QueueName> SchedulingQueue::Where(std::string_view uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* e = Find(uid);
  if (e == nullptr) return std::nullopt;
  if (e->in_flight) return QueueName::kInFlight;
  if (!e->attached) return std::nullopt;
  return e->where;
}

std::optional<QueuedPodInfo> SchedulingQueue::Get(std::string_view uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* e = Find(uid);
  if (e == nullptr || !e->attached) return std::nullopt;
  return e->qpi;
}

std::vector<PodInfoPtr> SchedulingQueue::PendingPodInfos() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PodInfoPtr> out;
  std::vector<Entry*> active = active_.Sorted();
  std::vector<Entry*> backoff = backoff_.Sorted();
  const std::vector<Entry*>* lists[] = {&active, &backoff, &unschedulable_.items(),
                                        &gated_.items()};
  for (const std::vector<Entry*>* v : lists) {
    for (Entry* e : *v) out.push_back(e->qpi.pod_info);
  }
  return out;
}

std::optional<int64_t> SchedulingQueue::NextBackoffExpiryMicros() const {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* top = backoff_.Top();
  if (top == nullptr) return std::nullopt;
  return top->backoff_expiry_micros;
}

std::optional<int64_t> SchedulingQueue::NextUnschedulableTimeoutMicros() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<int64_t> next;
  const int64_t max = options_.pod_max_in_unschedulable_pods_micros;
  auto consider = [&](int64_t since) {
    int64_t t = since + max + 1;
    if (!next || t < *next) next = t;
  };
  for (Entry* e : unschedulable_.items()) consider(e->qpi.timestamp_micros);
  for (Entry* e : gated_.items()) consider(e->gated_checked_micros);
  return next;
}

}  // namespace gantry::queue
