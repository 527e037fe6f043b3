#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gantry/util/strings.h"
#include "plugins/helper/node_memo.h"

namespace gantry::plugins::pod_topology_spread {
namespace {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Status;

constexpr std::string_view kPreFilterStateKey = "PreFilterPodTopologySpread";
constexpr std::string_view kPreScoreStateKey = "PreScorePodTopologySpread";
const framework::StateKey kPreFilterKey{kPreFilterStateKey};
const framework::StateKey kPreScoreKey{kPreScoreStateKey};
constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";
constexpr int32_t kNoDomain = std::numeric_limits<int32_t>::max();

// Label lookup by symbol identity: label sets are small, so a linear scan of
// integer compares beats a binary search that compares text.
inline std::optional<api::Symbol> LabelValue(const api::Labels& labels, api::Symbol key) {
  for (const auto& [k, v] : labels) {
    if (k == key) return v;
  }
  return std::nullopt;
}

bool HasAllTopologyKeys(const api::Labels& labels, const std::vector<Constraint>& constraints) {
  for (const Constraint& c : constraints) {
    if (!LabelValue(labels, c.topology_key)) return false;
  }
  return true;
}

// nodeSelector + requiredDuringScheduling node affinity of `pod`.
bool MatchesRequiredNodeAffinity(const api::Pod& pod, const api::Node& node) {
  for (const auto& [k, v] : pod.node_selector) {
    auto got = LabelValue(node.meta.labels, k);
    if (!got || *got != v) return false;
  }
  if (pod.affinity && pod.affinity->node_required) {
    return pod.affinity->node_required->Matches(node.meta.labels, node.meta.name);
  }
  return true;
}

// True if `node` has a NoSchedule/NoExecute taint the pod does not tolerate.
bool HasUntoleratedTaint(const api::Pod& pod, const api::Node& node) {
  for (const api::Taint& t : node.taints) {
    if (t.effect != api::TaintEffect::kNoSchedule && t.effect != api::TaintEffect::kNoExecute) {
      continue;
    }
    if (!api::TaintTolerated(t, pod.tolerations)) return true;
  }
  return false;
}

// Node inclusion policies, evaluated at most once per node.
class InclusionCheck {
 public:
  InclusionCheck(const api::Pod& pod, const api::Node& node) : pod_(pod), node_(node) {}
  bool Includes(const Constraint& c) {
    if (c.node_affinity_policy == api::InclusionPolicy::kHonor) {
      if (affinity_ < 0) affinity_ = MatchesRequiredNodeAffinity(pod_, node_) ? 1 : 0;
      if (affinity_ == 0) return false;
    }
    if (c.node_taints_policy == api::InclusionPolicy::kHonor) {
      if (taints_ < 0) taints_ = HasUntoleratedTaint(pod_, node_) ? 0 : 1;
      if (taints_ == 0) return false;
    }
    return true;
  }

 private:
  const api::Pod& pod_;
  const api::Node& node_;
  int8_t affinity_ = -1;
  int8_t taints_ = -1;
};

// Matching pods on one node: same namespace, not terminating.
int32_t CountMatching(const std::vector<framework::PodInfoPtr>& pods, const Constraint& c,
                      api::Symbol ns) {
  if (!c.Counts()) return 0;
  int32_t n = 0;
  for (const framework::PodInfoPtr& p : pods) {
    const api::Pod& q = p->p();
    if (q.meta.deletion_micros.has_value() || q.meta.namespace_ != ns) continue;
    if (c.selector->Matches(q.meta.labels)) ++n;
  }
  return n;
}

// Runs fn(begin, end) over [0, n) in a few chunks per worker.
template <typename F>
void ParallelChunks(framework::Parallelizer& par, int n, F&& fn) {
  if (n <= 0) return;
  int chunks = std::min(n, std::max(1, par.parallelism() * 4));
  int per = (n + chunks - 1) / chunks;
  chunks = (n + per - 1) / per;
  par.Until(chunks, [&](int c) {
    int begin = c * per;
    fn(begin, std::min(n, begin + per));
  });
}

// ---- Cycle state ----------------------------------------------------------

// Per constraint: the eligible domains (those with at least one eligible
// node, including domains without matching pods) and their matching pods.
struct DomainCounts {
  struct Domain {
    int32_t matches = 0;  // matching pods on the domain's eligible nodes
    int32_t nodes = 0;    // eligible nodes in the domain
  };
  absl::flat_hash_map<api::Symbol, Domain> counts;
  int32_t min = kNoDomain;

  void RecomputeMin() {
    min = kNoDomain;
    for (const auto& [v, d] : counts) min = std::min(min, d.matches);
  }
  // Adds an eligible node (`nodes` = +1) or removes one (-1) with its
  // `matches`, or changes the matches of a domain (`nodes` = 0). Keeps `min`
  // exact (upstream keeps two "critical paths"; see README).
  void Add(api::Symbol value, int32_t matches, int32_t nodes) {
    auto it = counts.try_emplace(value).first;
    Domain& d = it->second;
    const int32_t old = d.matches;
    d.matches += matches;
    d.nodes += nodes;
    if (nodes != 0 && d.nodes <= 0) {
      counts.erase(it);
      if (old == min) RecomputeMin();
    } else if (d.matches < min) {
      min = d.matches;
    } else if (old == min && d.matches > old) {
      RecomputeMin();
    }
  }
  int32_t Matches(api::Symbol value) const {
    auto it = counts.find(value);
    return it == counts.end() ? 0 : it->second.matches;
  }
};

class PreFilterState final : public framework::StateData {
 public:
  std::shared_ptr<const std::vector<Constraint>> constraints;
  std::vector<uint8_t> self_match;  // per constraint: the incoming pod matches its selector
  // Per constraint. Shared with the plugin's memo (read-only) until the
  // first AddPod/RemovePod, which takes a private copy.
  std::shared_ptr<std::vector<DomainCounts>> domains;

  std::vector<DomainCounts>& MutableDomains() {
    if (domains.use_count() > 1) domains = std::make_shared<std::vector<DomainCounts>>(*domains);
    return *domains;
  }
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

struct PreScoreData {
  std::vector<Constraint> constraints;
  std::vector<uint8_t> is_hostname;
  // Per constraint (not hostname): domain -> matching pods over all nodes.
  std::vector<absl::flat_hash_map<api::Symbol, int64_t>> counts;
  std::vector<double> weights;
  absl::flat_hash_set<std::string_view> ignored_nodes;  // miss a topology key
};

class PreScoreState final : public framework::StateData {
 public:
  std::shared_ptr<const PreScoreData> data;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);  // immutable after PreScore
  }
};

std::vector<Constraint> ResolveConstraints(const std::vector<api::TopologySpreadConstraint>& list,
                                           const api::Labels& pod_labels,
                                           api::UnsatisfiableAction action) {
  std::vector<Constraint> out;
  for (const api::TopologySpreadConstraint& c : list) {
    if (c.when_unsatisfiable != action) continue;
    Constraint r;
    r.max_skew = c.max_skew;
    r.topology_key = c.topology_key;
    r.selector = c.label_selector;
    r.min_domains = c.min_domains.value_or(1);
    r.node_affinity_policy = c.node_affinity_policy;
    r.node_taints_policy = c.node_taints_policy;
    // matchLabelKeys: AND the pod's values of those keys into the selector
    // (a nil selector stays nil: it matches nothing either way).
    if (r.selector) {
      for (api::Symbol key : c.match_label_keys) {
        if (auto v = LabelValue(pod_labels, key)) {
          r.selector->requirements.push_back(api::Requirement{key, api::SelectorOp::kIn, {*v}, 0});
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

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

bool SameTaints(const std::vector<api::Taint>& a, const std::vector<api::Taint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].value != b[i].value || a[i].effect != b[i].effect ||
        a[i].time_added_micros != b[i].time_added_micros) {
      return false;
    }
  }
  return true;
}

bool AnyConstraintMatches(const std::vector<Constraint>& cs, const api::Labels& labels) {
  for (const Constraint& c : cs) {
    if (c.Matches(labels)) return true;
  }
  return false;
}

// ---- Args -----------------------------------------------------------------

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// metav1validation.ValidateLabelName: [prefix/]name, name a qualified name.
std::string LabelNameError(std::string_view v) {
  std::string_view name = v;
  if (auto slash = v.find('/'); slash != std::string_view::npos) {
    std::string_view prefix = v.substr(0, slash);
    name = v.substr(slash + 1);
    bool ok = !prefix.empty() && prefix.size() <= 253 && IsAlnum(prefix.front()) && IsAlnum(prefix.back());
    for (char c : prefix) ok = ok && (IsAlnum(c) || c == '-' || c == '.');
    if (!ok) return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part must be no more than 63 characters";
  bool ok = IsAlnum(name.front()) && IsAlnum(name.back());
  for (char c : name) ok = ok && (IsAlnum(c) || c == '-' || c == '_' || c == '.');
  if (!ok) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return "";
}

api::InclusionPolicy DecodePolicy(api::Decoder& d, api::JsonValue v) {
  std::string_view s = d.String(v);
  if (s == "Honor") return api::InclusionPolicy::kHonor;
  if (s == "Ignore") return api::InclusionPolicy::kIgnore;
  if (d.ok()) d.Fail(gantry::StrCat("Unsupported value: \"", s, "\": supported values: \"Honor\", \"Ignore\""));
  return api::InclusionPolicy::kHonor;
}

api::TopologySpreadConstraint DecodeDefaultConstraint(api::Decoder& d, api::JsonValue v) {
  api::TopologySpreadConstraint c;
  c.max_skew = 0;
  std::string_view when;
  d.ForEachField(v, [&](std::string_view key, api::JsonValue value) {
    if (key == "maxSkew") {
      c.max_skew = static_cast<int32_t>(d.Int(value));
    } else if (key == "topologyKey") {
      c.topology_key = d.Sym(value);
    } else if (key == "whenUnsatisfiable") {
      when = d.String(value);
    } else if (key == "labelSelector") {
      if (!value.is_null()) d.Fail("Forbidden: constraint must not define a selector, as they deduced for each pod");
    } else if (key == "minDomains") {
      if (!value.is_null()) c.min_domains = static_cast<int32_t>(d.Int(value));
    } else if (key == "nodeAffinityPolicy") {
      if (!value.is_null()) c.node_affinity_policy = DecodePolicy(d, value);
    } else if (key == "nodeTaintsPolicy") {
      if (!value.is_null()) c.node_taints_policy = DecodePolicy(d, value);
    } else if (key == "matchLabelKeys") {
      c.match_label_keys = d.SymbolList(value);
    } else {
      d.Fail(gantry::StrCat("unknown field \"", key, "\""));
    }
  });
  if (!d.ok()) return c;
  if (c.max_skew <= 0) {
    d.FailAt("maxSkew", gantry::StrCat("Invalid value: ", c.max_skew, ": not in valid range (0, inf)"));
  } else if (c.topology_key.empty()) {
    d.FailAt("topologyKey", "Required value: can not be empty");
  } else if (std::string err = LabelNameError(c.topology_key.view()); !err.empty()) {
    d.FailAt("topologyKey", gantry::StrCat("Invalid value: \"", c.topology_key.view(), "\": ", err));
  } else if (when.empty()) {
    d.FailAt("whenUnsatisfiable", "Required value: can not be empty");
  } else if (when == "DoNotSchedule") {
    c.when_unsatisfiable = api::UnsatisfiableAction::kDoNotSchedule;
  } else if (when == "ScheduleAnyway") {
    c.when_unsatisfiable = api::UnsatisfiableAction::kScheduleAnyway;
  } else {
    d.FailAt("whenUnsatisfiable", gantry::StrCat("Unsupported value: \"", when,
                                                 "\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""));
  }
  if (d.ok() && c.min_domains && *c.min_domains <= 0) {
    d.FailAt("minDomains", gantry::StrCat("Invalid value: ", *c.min_domains, ": must be greater than 0"));
  }
  return c;
}

std::string_view ActionName(api::UnsatisfiableAction a) {
  return a == api::UnsatisfiableAction::kDoNotSchedule ? "DoNotSchedule" : "ScheduleAnyway";
}

}  // namespace

const std::vector<api::TopologySpreadConstraint>& SystemDefaultConstraints() {
  static const auto* kDefaults = [] {
    auto* v = new std::vector<api::TopologySpreadConstraint>(2);
    (*v)[0].topology_key = api::Symbol::Intern(kLabelHostname);
    (*v)[0].max_skew = 3;
    (*v)[0].when_unsatisfiable = api::UnsatisfiableAction::kScheduleAnyway;
    (*v)[1].topology_key = api::Symbol::Intern(kLabelTopologyZone);
    (*v)[1].max_skew = 5;
    (*v)[1].when_unsatisfiable = api::UnsatisfiableAction::kScheduleAnyway;
    return v;
  }();
  return *kDefaults;
}

PodTopologySpreadArgs DecodeArgs(api::Decoder& d, api::JsonValue v) {
  PodTopologySpreadArgs args;
  d.ForEachField(v, [&](std::string_view key, api::JsonValue value) {
    if (key == "apiVersion" || key == "kind") return;
    if (key == "defaultConstraints") {
      d.ForEachItem(value, [&](size_t, api::JsonValue item) {
        args.default_constraints.push_back(DecodeDefaultConstraint(d, item));
      });
    } else if (key == "defaultingType") {
      std::string_view s = d.String(value);
      if (s.empty() || s == "System") {
        args.defaulting_type = DefaultingType::kSystem;
      } else if (s == "List") {
        args.defaulting_type = DefaultingType::kList;
      } else if (d.ok()) {
        d.Fail(gantry::StrCat("Unsupported value: \"", s, "\": supported values: \"List\", \"System\""));
      }
    } else {
      d.Fail(gantry::StrCat("unknown field \"", key, "\""));
    }
  });
  if (!d.ok()) return args;
  const auto& cs = args.default_constraints;
  for (size_t i = 0; i < cs.size() && d.ok(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (cs[i].topology_key == cs[j].topology_key && cs[i].when_unsatisfiable == cs[j].when_unsatisfiable) {
        api::Decoder::Field f1(d, "defaultConstraints");
        api::Decoder::Field f2(d, i);
        d.Fail(gantry::StrCat("Duplicate value: \"{", cs[i].topology_key.view(), ", ",
                              ActionName(cs[i].when_unsatisfiable), "}\""));
        break;
      }
    }
  }
  if (d.ok() && args.defaulting_type == DefaultingType::kSystem && !cs.empty()) {
    d.FailAt("defaultingType", "Invalid value: \"System\": when .defaultConstraints are not empty");
  }
  return args;
}

nlohmann::json ArgsToJson(const PodTopologySpreadArgs& args) {
  nlohmann::json out = nlohmann::json::object();
  if (!args.default_constraints.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : args.default_constraints) {
      nlohmann::json j = {{"maxSkew", c.max_skew},
                          {"topologyKey", c.topology_key.str()},
                          {"whenUnsatisfiable", std::string(ActionName(c.when_unsatisfiable))}};
      if (c.min_domains) j["minDomains"] = *c.min_domains;
      if (c.node_affinity_policy != api::InclusionPolicy::kHonor) j["nodeAffinityPolicy"] = "Ignore";
      if (c.node_taints_policy != api::InclusionPolicy::kIgnore) j["nodeTaintsPolicy"] = "Honor";
      if (!c.match_label_keys.empty()) {
        nlohmann::json keys = nlohmann::json::array();
        for (api::Symbol k : c.match_label_keys) keys.push_back(k.str());
        j["matchLabelKeys"] = keys;
      }
      list.push_back(std::move(j));
    }
    out["defaultConstraints"] = std::move(list);
  }
  out["defaultingType"] = args.defaulting_type == DefaultingType::kSystem ? "System" : "List";
  return out;
}

std::optional<api::LabelSelector> DefaultSelector(const api::Pod& pod) {
  const api::OwnerReference* ref = pod.meta.ControllerRef();
  if (ref == nullptr) return std::nullopt;
  std::string_view kind = ref->kind.view();
  std::string_view version = ref->api_version.view();
  bool known = (version == "apps/v1" && (kind == "ReplicaSet" || kind == "StatefulSet")) ||
               (version == "v1" && kind == "ReplicationController");
  if (!known) return std::nullopt;
  static const api::Symbol kPerPod[] = {
      api::Symbol::Intern("controller-revision-hash"),
      api::Symbol::Intern("statefulset.kubernetes.io/pod-name"),
      api::Symbol::Intern("apps.kubernetes.io/pod-index"),
  };
  api::LabelSelector sel;
  for (const auto& [k, v] : pod.meta.labels) {
    if (std::find(std::begin(kPerPod), std::end(kPerPod), k) != std::end(kPerPod)) continue;
    sel.requirements.push_back(api::Requirement{k, api::SelectorOp::kIn, {v}, 0});
  }
  if (sel.Empty()) return std::nullopt;
  return sel;
}

// ---- Plugin ---------------------------------------------------------------

PodTopologySpread::PodTopologySpread(PodTopologySpreadArgs args, framework::FrameworkHandle& handle)
    : default_constraints_(std::move(args.default_constraints)), handle_(handle) {
  if (args.defaulting_type == DefaultingType::kSystem) {
    default_constraints_ = SystemDefaultConstraints();
    system_defaulted_ = true;
  }
}

std::vector<Constraint> PodTopologySpread::GetConstraints(const api::Pod& pod,
                                                          api::UnsatisfiableAction action) const {
  if (!pod.topology_spread_constraints.empty()) {
    return ResolveConstraints(pod.topology_spread_constraints, pod.meta.labels, action);
  }
  std::vector<Constraint> cs = ResolveConstraints(default_constraints_, pod.meta.labels, action);
  if (cs.empty()) return cs;
  std::optional<api::LabelSelector> sel = DefaultSelector(pod);
  if (!sel) return {};
  for (Constraint& c : cs) c.selector = *sel;
  return cs;
}

// PreFilter's per-node results of the last cycle, for pods with the same
// signature (namespace, constraints, and the node-inclusion inputs the
// constraints honour). Only the positions whose NodeInfo changed are
// recounted, and their old contribution is replaced in `domains`.
struct FilterMemo {
  std::string signature;
  size_t num_constraints = 0;
  helper::NodeChangeTracker tracker;
  // Per position and constraint: matching pods (-1: node not eligible) and
  // the node's domain.
  std::vector<int32_t> counts;
  std::vector<api::Symbol> values;
  std::shared_ptr<std::vector<DomainCounts>> domains;
  // Scratch of one pass, by index into `changed`.
  std::vector<int> changed;
  std::vector<int32_t> new_counts;
  std::vector<api::Symbol> new_values;
};

namespace {

// What PreFilter's per-node results depend on besides the NodeInfo.
std::string FilterSignature(const api::Pod& pod, const std::vector<Constraint>& cs) {
  helper::Signature sig;
  sig.Add(pod.meta.namespace_);
  bool affinity = false, taints = false;
  sig.Add(static_cast<uint64_t>(cs.size()));
  for (const Constraint& c : cs) {
    sig.Add(c.topology_key);
    sig.Add(c.selector);
    sig.Add(static_cast<uint64_t>(c.node_affinity_policy));
    sig.Add(static_cast<uint64_t>(c.node_taints_policy));
    affinity |= c.node_affinity_policy == api::InclusionPolicy::kHonor;
    taints |= c.node_taints_policy == api::InclusionPolicy::kHonor;
  }
  if (affinity) {
    sig.AddList(pod.node_selector);
    const bool required = pod.affinity && pod.affinity->node_required;
    sig.Add(static_cast<uint64_t>(required));
    if (required) sig.Add(*pod.affinity->node_required);
  }
  if (taints) sig.AddList(pod.tolerations);
  return sig.bytes();
}

// One node's (count, value) per constraint into `counts`/`values`.
void CountNode(const api::Pod& pod, const std::vector<Constraint>& cs, const NodeInfo& ni,
               int32_t* counts, api::Symbol* values) {
  const size_t nc = cs.size();
  for (size_t c = 0; c < nc; ++c) {
    counts[c] = -1;
    values[c] = api::Symbol();
  }
  const api::Node* node = ni.node();
  if (node == nullptr || !HasAllTopologyKeys(node->meta.labels, cs)) return;
  InclusionCheck inclusion(pod, *node);
  for (size_t c = 0; c < nc; ++c) {
    if (!inclusion.Includes(cs[c])) continue;
    values[c] = *LabelValue(node->meta.labels, cs[c].topology_key);
    counts[c] = CountMatching(ni.pods(), cs[c], pod.meta.namespace_);
  }
}

}  // namespace

PodTopologySpread::~PodTopologySpread() = default;

Status PodTopologySpread::PreFilter(CycleState& state, const PodInfo& pod_info,
                                    const std::vector<NodeInfo*>& nodes,
                                    framework::PreFilterResult* /*result*/) {
  const api::Pod& pod = pod_info.p();
  auto constraints = std::make_shared<const std::vector<Constraint>>(
      GetConstraints(pod, api::UnsatisfiableAction::kDoNotSchedule));
  if (constraints->empty()) return Status::Skip();
  const std::vector<Constraint>& cs = *constraints;
  const size_t nc = cs.size();
  const size_t n = nodes.size();

  std::lock_guard<std::mutex> lock(memo_mu_);
  if (memo_ == nullptr) memo_ = std::make_unique<FilterMemo>();
  FilterMemo& m = *memo_;
  std::string signature = FilterSignature(pod, cs);
  if (m.signature != signature || m.num_constraints != nc || m.domains == nullptr) {
    m.signature = std::move(signature);
    m.num_constraints = nc;
    m.tracker.Reset();
    m.counts.clear();
    m.values.clear();
    m.domains = std::make_shared<std::vector<DomainCounts>>(nc);
  } else if (m.domains.use_count() > 1) {
    // A state of an earlier cycle still reads the counts: update a copy.
    m.domains = std::make_shared<std::vector<DomainCounts>>(*m.domains);
  }
  std::vector<DomainCounts>& domains = *m.domains;
  auto apply = [&](const int32_t* counts, const api::Symbol* values, int sign) {
    for (size_t c = 0; c < nc; ++c) {
      if (counts[c] >= 0) domains[c].Add(values[c], sign * counts[c], sign);
    }
  };

  // Positions beyond the current list leave (the list shrank).
  for (size_t i = n; i < m.tracker.size(); ++i) apply(&m.counts[i * nc], &m.values[i * nc], -1);
  m.tracker.Diff(nodes, &m.changed);
  m.counts.resize(n * nc, -1);
  m.values.resize(n * nc);

  // Recount the changed nodes (in parallel when there are many), then swap
  // their contributions in.
  const int num_changed = static_cast<int>(m.changed.size());
  m.new_counts.resize(m.changed.size() * nc);
  m.new_values.resize(m.changed.size() * nc);
  auto recount = [&](int begin, int end) {
    for (int k = begin; k < end; ++k) {
      const size_t slot = static_cast<size_t>(k) * nc;
      CountNode(pod, cs, *nodes[static_cast<size_t>(m.changed[k])], &m.new_counts[slot],
                &m.new_values[slot]);
    }
  };
  if (num_changed >= 64) {
    ParallelChunks(handle_.parallelizer(), num_changed, recount);
  } else {
    recount(0, num_changed);
  }
  for (int k = 0; k < num_changed; ++k) {
    const size_t slot = static_cast<size_t>(m.changed[k]) * nc;
    const size_t fresh = static_cast<size_t>(k) * nc;
    apply(&m.counts[slot], &m.values[slot], -1);
    std::copy_n(&m.new_counts[fresh], nc, &m.counts[slot]);
    std::copy_n(&m.new_values[fresh], nc, &m.values[slot]);
    apply(&m.counts[slot], &m.values[slot], +1);
  }

  auto s = std::make_unique<PreFilterState>();
  s->self_match.resize(nc);
  for (size_t c = 0; c < nc; ++c) s->self_match[c] = cs[c].Matches(pod.meta.labels) ? 1 : 0;
  s->domains = m.domains;
  s->constraints = std::move(constraints);
  state.Write(kPreFilterKey, std::move(s));
  return Status();
}

Status PodTopologySpread::UpdateWithPod(CycleState& state, const api::Pod& preemptor,
                                        const api::Pod& updated, const NodeInfo& node_info,
                                        int delta) const {
  auto s = state.Read<PreFilterState>(kPreFilterKey);
  if (!s.ok()) return Status::FromAbsl(s.status());
  PreFilterState& st = **s;
  const api::Node* node = node_info.node();
  if (updated.meta.namespace_ != preemptor.meta.namespace_ || node == nullptr || !st.constraints) {
    return Status();
  }
  const std::vector<Constraint>& cs = *st.constraints;
  if (!HasAllTopologyKeys(node->meta.labels, cs)) return Status();
  InclusionCheck inclusion(preemptor, *node);
  for (size_t c = 0; c < cs.size(); ++c) {
    if (!cs[c].Matches(updated.meta.labels) || !inclusion.Includes(cs[c])) continue;
    st.MutableDomains()[c].Add(*LabelValue(node->meta.labels, cs[c].topology_key), delta, 0);
  }
  return Status();
}

Status PodTopologySpread::AddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                 const PodInfo& pod_to_add, const NodeInfo& node) {
  return UpdateWithPod(state, pod_to_schedule.p(), pod_to_add.p(), node, +1);
}

Status PodTopologySpread::RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                    const PodInfo& pod_to_remove, const NodeInfo& node) {
  return UpdateWithPod(state, pod_to_schedule.p(), pod_to_remove.p(), node, -1);
}

Status PodTopologySpread::Filter(const CycleState& state, const PodInfo& /*pod*/,
                                 const NodeInfo& node_info) {
  const api::Node* node = node_info.node();
  if (node == nullptr) return Status::Error("node not found");
  auto s = state.Read<PreFilterState>(kPreFilterKey);
  if (!s.ok()) return Status::FromAbsl(s.status());
  const PreFilterState& st = **s;
  if (!st.constraints) return Status();
  const std::vector<Constraint>& cs = *st.constraints;
  for (size_t c = 0; c < cs.size(); ++c) {
    auto value = LabelValue(node->meta.labels, cs[c].topology_key);
    if (!value) return Status::Unresolvable(std::string(kErrReasonNodeLabelNotMatch));
    const DomainCounts& d = (*st.domains)[c];
    int64_t min = d.min;
    if (d.counts.size() < static_cast<size_t>(std::max(cs[c].min_domains, 0))) min = 0;
    int64_t match = d.Matches(*value);
    if (match + st.self_match[c] - min > cs[c].max_skew) {
      return Status::Unschedulable(std::string(kErrReasonConstraintsNotMatch));
    }
  }
  return Status();
}

Status PodTopologySpread::PreScore(CycleState& state, const PodInfo& pod_info,
                                   const std::vector<const NodeInfo*>& filtered) {
  const std::vector<NodeInfo*>& all_nodes = handle_.Snapshot().NodeInfos();
  if (all_nodes.empty()) return Status::Skip();
  const api::Pod& pod = pod_info.p();
  // Only hard-require every topology key with user-given constraints, so
  // that nodes without a zone label still get hostname spreading.
  const bool require_all = !pod.topology_spread_constraints.empty() || !system_defaulted_;
  auto data = std::make_shared<PreScoreData>();
  data->constraints = GetConstraints(pod, api::UnsatisfiableAction::kScheduleAnyway);
  if (data->constraints.empty()) return Status::Skip();
  const std::vector<Constraint>& cs = data->constraints;
  const size_t nc = cs.size();

  data->is_hostname.resize(nc);
  data->counts.resize(nc);
  // Domains of the filtered nodes get a slot; only their counts matter.
  std::vector<absl::flat_hash_map<api::Symbol, uint32_t>> slot_of(nc);
  uint32_t num_slots = 0;
  for (size_t c = 0; c < nc; ++c) data->is_hostname[c] = cs[c].topology_key.view() == kLabelHostname;
  for (const NodeInfo* ni : filtered) {
    const api::Node* node = ni->node();
    if (node == nullptr) continue;
    if (require_all && !HasAllTopologyKeys(node->meta.labels, cs)) {
      data->ignored_nodes.insert(ni->name());
      continue;
    }
    for (size_t c = 0; c < nc; ++c) {
      if (data->is_hostname[c]) continue;
      api::Symbol value = LabelValue(node->meta.labels, cs[c].topology_key).value_or(api::Symbol());
      if (slot_of[c].try_emplace(value, num_slots).second) ++num_slots;
    }
  }
  data->weights.resize(nc);
  for (size_t c = 0; c < nc; ++c) {
    size_t size = data->is_hostname[c] ? filtered.size() - data->ignored_nodes.size() : slot_of[c].size();
    data->weights[c] = std::log(static_cast<double>(size + 2));
  }

  std::vector<std::atomic<int64_t>> slot_counts(num_slots);
  if (num_slots > 0) {
    ParallelChunks(handle_.parallelizer(), static_cast<int>(all_nodes.size()), [&](int begin, int end) {
      for (int i = begin; i < end; ++i) {
        const NodeInfo* ni = all_nodes[i];
        const api::Node* node = ni->node();
        if (node == nullptr) continue;
        if (require_all && !HasAllTopologyKeys(node->meta.labels, cs)) continue;
        InclusionCheck inclusion(pod, *node);
        for (size_t c = 0; c < nc; ++c) {
          if (data->is_hostname[c]) continue;  // counted per node in Score
          api::Symbol value = LabelValue(node->meta.labels, cs[c].topology_key).value_or(api::Symbol());
          auto it = slot_of[c].find(value);
          if (it == slot_of[c].end() || !inclusion.Includes(cs[c])) continue;
          int32_t n = CountMatching(ni->pods(), cs[c], pod.meta.namespace_);
          if (n != 0) slot_counts[it->second].fetch_add(n, std::memory_order_relaxed);
        }
      }
    });
  }
  for (size_t c = 0; c < nc; ++c) {
    data->counts[c].reserve(slot_of[c].size());
    for (const auto& [value, slot] : slot_of[c]) {
      data->counts[c][value] = slot_counts[slot].load(std::memory_order_relaxed);
    }
  }
  auto st = std::make_unique<PreScoreState>();
  st->data = std::move(data);
  state.Write(kPreScoreKey, std::move(st));
  return Status();
}

Status PodTopologySpread::Score(const CycleState& state, const PodInfo& pod_info,
                                const NodeInfo& node_info, int64_t* score) {
  *score = 0;
  auto s = state.Read<PreScoreState>(kPreScoreKey);
  if (!s.ok()) return Status::FromAbsl(s.status());
  const PreScoreData& d = *(*s)->data;
  const api::Node* node = node_info.node();
  if (node == nullptr) return Status::Error("node not found");
  if (!d.ignored_nodes.empty() && d.ignored_nodes.contains(node_info.name())) return Status();
  double total = 0;
  for (size_t c = 0; c < d.constraints.size(); ++c) {
    const Constraint& con = d.constraints[c];
    auto value = LabelValue(node->meta.labels, con.topology_key);
    if (!value) continue;
    int64_t cnt = 0;
    if (d.is_hostname[c]) {
      cnt = CountMatching(node_info.pods(), con, pod_info.p().meta.namespace_);
    } else if (auto it = d.counts[c].find(*value); it != d.counts[c].end()) {
      cnt = it->second;
    }
    total += static_cast<double>(cnt) * d.weights[c] + static_cast<double>(con.max_skew - 1);
  }
  *score = std::llround(total);
  return Status();
}

Status PodTopologySpread::NormalizeScore(const CycleState& state, const PodInfo& /*pod*/,
                                         std::vector<framework::NodeScore>& scores) {
  auto s = state.Read<PreScoreState>(kPreScoreKey);
  if (!s.ok()) return Status::FromAbsl(s.status());
  const PreScoreData& d = *(*s)->data;
  constexpr int64_t kInvalid = -1;
  int64_t min_score = std::numeric_limits<int64_t>::max();
  int64_t max_score = 0;
  for (framework::NodeScore& ns : scores) {
    if (!d.ignored_nodes.empty() && d.ignored_nodes.contains(ns.name)) {
      ns.score = kInvalid;
      continue;
    }
    min_score = std::min(min_score, ns.score);
    max_score = std::max(max_score, ns.score);
  }
  for (framework::NodeScore& ns : scores) {
    if (ns.score == kInvalid) {
      ns.score = 0;
    } else if (max_score == 0) {
      ns.score = framework::kMaxNodeScore;
    } else {
      ns.score = framework::kMaxNodeScore * (max_score + min_score - ns.score) / max_score;
    }
  }
  return Status();
}

// ---- Queueing hints -------------------------------------------------------

framework::QueueingHint PodTopologySpread::HintAfterPodChange(const api::Pod& pod,
                                                              const api::Pod* old_pod,
                                                              const api::Pod* new_pod) const {
  using framework::QueueingHint;
  // Only the pod itself, or a bound pod of its namespace, can change the counts.
  auto involved = [&](const api::Pod& other) {
    return other.meta.uid == pod.meta.uid ||
           (!other.node_name.empty() && other.meta.namespace_ == pod.meta.namespace_);
  };
  if ((new_pod != nullptr && !involved(*new_pod)) || (old_pod != nullptr && !involved(*old_pod))) {
    return QueueingHint::kSkip;
  }
  std::vector<Constraint> cs = GetConstraints(pod, api::UnsatisfiableAction::kDoNotSchedule);
  if (old_pod != nullptr && new_pod != nullptr) {
    if (pod.meta.uid == new_pod->meta.uid && !SameTolerations(old_pod->tolerations, new_pod->tolerations)) {
      for (const Constraint& c : cs) {
        if (c.node_taints_policy == api::InclusionPolicy::kHonor) return QueueingHint::kQueue;
      }
    }
    if (old_pod->meta.labels == new_pod->meta.labels) return QueueingHint::kSkip;
    for (const Constraint& c : cs) {
      if (c.Matches(old_pod->meta.labels) != c.Matches(new_pod->meta.labels)) return QueueingHint::kQueue;
    }
    return QueueingHint::kSkip;
  }
  const api::Pod* changed = new_pod != nullptr ? new_pod : old_pod;
  if (changed == nullptr) return QueueingHint::kQueue;
  return AnyConstraintMatches(cs, changed->meta.labels) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

framework::QueueingHint PodTopologySpread::HintAfterNodeChange(const api::Pod& pod,
                                                               const api::Node* old_node,
                                                               const api::Node* new_node) const {
  using framework::QueueingHint;
  std::vector<Constraint> cs = GetConstraints(pod, api::UnsatisfiableAction::kDoNotSchedule);
  bool old_match = old_node != nullptr && HasAllTopologyKeys(old_node->meta.labels, cs);
  bool new_match = new_node != nullptr && HasAllTopologyKeys(new_node->meta.labels, cs);
  if (old_node != nullptr && new_node != nullptr) {
    if (old_match != new_match) return QueueingHint::kQueue;
    if (!new_match) return QueueingHint::kSkip;
    for (const Constraint& c : cs) {
      if (LabelValue(old_node->meta.labels, c.topology_key) != LabelValue(new_node->meta.labels, c.topology_key)) {
        return QueueingHint::kQueue;
      }
    }
    return SameTaints(old_node->taints, new_node->taints) ? QueueingHint::kSkip : QueueingHint::kQueue;
  }
  if (new_node != nullptr) return new_match ? QueueingHint::kQueue : QueueingHint::kSkip;
  return old_match ? QueueingHint::kQueue : QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> PodTopologySpread::EventsToRegister() const {
  using framework::ClusterEvent;
  using framework::EventResource;
  std::vector<framework::ClusterEventWithHint> out;
  out.push_back({ClusterEvent{EventResource::kPod,
                              framework::kAdd | framework::kUpdatePodLabel |
                                  framework::kUpdatePodToleration | framework::kDelete,
                              "PodChange"},
                 [this](const api::Pod& pod, const ClusterEvent&, const void* o, const void* n) {
                   return HintAfterPodChange(pod, static_cast<const api::Pod*>(o),
                                             static_cast<const api::Pod*>(n));
                 }});
  out.push_back({ClusterEvent{EventResource::kNode,
                              framework::kAdd | framework::kDelete | framework::kUpdateNodeLabel |
                                  framework::kUpdateNodeTaint,
                              "NodeChange"},
                 [this](const api::Pod& pod, const ClusterEvent&, const void* o, const void* n) {
                   return HintAfterNodeChange(pod, static_cast<const api::Node*>(o),
                                              static_cast<const api::Node*>(n));
                 }});
  return out;
}

// ---- Registration ---------------------------------------------------------

absl::StatusOr<std::unique_ptr<framework::Plugin>> New(api::Decoder& d, api::JsonValue args,
                                                       framework::FrameworkHandle& handle) {
  PodTopologySpreadArgs parsed = DecodeArgs(d, args);
  if (!d.ok()) return absl::InvalidArgumentError(d.error()->ToString());
  return std::make_unique<PodTopologySpread>(std::move(parsed), handle);
}

nlohmann::json DefaultArgs(api::Decoder& d, api::JsonValue args) {
  return ArgsToJson(DecodeArgs(d, args));
}

framework::PluginRegistration Registration() {
  return framework::PluginRegistration{std::string(kName), &New, &DefaultArgs, std::string(kArgsKind)};
}

absl::Status Register(framework::Registry& registry) { return registry.Register(Registration()); }

}  // namespace gantry::plugins::pod_topology_spread
