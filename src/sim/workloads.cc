#include "src/sim/workloads.h"

#include <algorithm>

#include "gantry/util/strings.h"

namespace gantry::sim {
namespace {

using api::JsonValue;
using api::PathSegment;
using Path = std::vector<PathSegment>;

std::string_view Group(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

// Walks the workload, collecting templates; stops at the first error.
class Planner {
 public:
  Planner(int64_t max_pods, std::vector<TemplatePods>* out, api::DecodeError* error)
      : max_pods_(max_pods), out_(out), error_(error) {}

  bool ok() const { return ok_; }

  // The field at `path` below `obj`, or nullopt (no error) when absent.
  std::optional<JsonValue> Field(JsonValue obj, const Path& path) {
    JsonValue v = obj;
    for (const PathSegment& s : path) {
      if (const std::string* key = std::get_if<std::string>(&s)) {
        if (!v.is_object() || v[*key].get(v) != simdjson::SUCCESS) return std::nullopt;
      } else {
        if (!v.is_array() || v.at(std::get<size_t>(s)).get(v) != simdjson::SUCCESS)
          return std::nullopt;
      }
    }
    if (v.is_null()) return std::nullopt;
    return v;
  }

  // A count field: absent means `absent`; otherwise a non-negative integer.
  int64_t Count(JsonValue obj, const Path& path, int64_t absent) {
    std::optional<JsonValue> v = Field(obj, path);
    if (!v) return absent;
    int64_t n = 0;
    if (v->get_int64().get(n) != simdjson::SUCCESS || n < 0) {
      Fail(path, "Invalid value: must be a non-negative integer");
      return 0;
    }
    return n;
  }

  std::string String(JsonValue obj, const Path& path) {
    std::optional<JsonValue> v = Field(obj, path);
    std::string_view s;
    if (v && v->get_string().get(s) == simdjson::SUCCESS) return std::string(s);
    return {};
  }

  // Adds `n` pods named by `name(i)` from the template at `path`.
  template <typename NameFn>
  void Add(JsonValue obj, const Path& path, int64_t n, NameFn&& name) {
    if (!ok_ || n == 0) return;
    std::optional<JsonValue> t = Field(obj, path);
    if (!t || !t->is_object()) {
      Fail(path, "Required value: a pod template");
      return;
    }
    if (n > max_pods_ - total_) {
      Fail(path,
           gantry::StrCat("Too many: the workload expands to more than ", max_pods_, " pods"));
      return;
    }
    TemplatePods tp;
    tp.path = path;
    for (int64_t i = 0; i < n; ++i) tp.pods.push_back(name(i));
    total_ += n;
    out_->push_back(std::move(tp));
  }

  void Fail(const Path& path, std::string message) {
    if (!ok_) return;
    ok_ = false;
    error_->path = path;
    error_->message = std::move(message);
  }

 private:
  int64_t max_pods_;
  int64_t total_ = 0;
  std::vector<TemplatePods>* out_;
  api::DecodeError* error_;
  bool ok_ = true;
};

Path Join(const Path& a, std::initializer_list<PathSegment> b) {
  Path p = a;
  p.insert(p.end(), b.begin(), b.end());
  return p;
}

// The pods of one Job (`job` is the path of its JobSpec): min(parallelism,
// completions), parallelism defaulting to 1.
int64_t JobPods(Planner& p, JsonValue obj, const Path& job) {
  int64_t parallelism = p.Count(obj, Join(job, {std::string("parallelism")}), 1);
  const int64_t completions = p.Count(obj, Join(job, {std::string("completions")}), -1);
  if (completions >= 0) parallelism = std::min(parallelism, completions);
  return parallelism;
}

}  // namespace

bool IsExpandableWorkload(std::string_view api_version, std::string_view kind) {
  const std::string_view group = Group(api_version);
  if (group == "apps") return kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet";
  if (group == "batch") return kind == "Job";
  if (group == "jobset.x-k8s.io") return kind == "JobSet";
  if (group == "leaderworkerset.x-k8s.io") return kind == "LeaderWorkerSet";
  return false;
}

bool PlanWorkloadPods(JsonValue obj, std::string_view kind, int64_t max_pods,
                      std::vector<TemplatePods>* out, api::DecodeError* error) {
  Planner p(max_pods, out, error);
  const std::string name = p.String(obj, {std::string("metadata"), std::string("name")});
  if (name.empty()) {
    p.Fail({std::string("metadata"), std::string("name")}, "Required value");
    return false;
  }
  using Pod = TemplatePods::PodName;
  const Path spec = {std::string("spec")};
  if (kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet") {
    const int64_t replicas = p.Count(obj, Join(spec, {std::string("replicas")}), 1);
    const bool ordered = kind == "StatefulSet";
    p.Add(obj, Join(spec, {std::string("template")}), replicas, [&](int64_t i) {
      Pod pod{gantry::StrCat(name, "-", i), {}};
      if (ordered) {
        pod.labels = {{"statefulset.kubernetes.io/pod-name", pod.name},
                      {"apps.kubernetes.io/pod-index", std::to_string(i)}};
      }
      return pod;
    });
  } else if (kind == "Job") {
    const int64_t n = JobPods(p, obj, spec);
    p.Add(obj, Join(spec, {std::string("template")}), n, [&](int64_t i) {
      return Pod{gantry::StrCat(name, "-", i),
                 {{"batch.kubernetes.io/job-name", name}, {"job-name", name}}};
    });
  } else if (kind == "JobSet") {
    std::optional<JsonValue> jobs = p.Field(obj, Join(spec, {std::string("replicatedJobs")}));
    api::JsonArray arr;
    if (!jobs || jobs->get_array().get(arr) != simdjson::SUCCESS) {
      p.Fail(Join(spec, {std::string("replicatedJobs")}), "Required value: a list of jobs");
      return false;
    }
    size_t k = 0;
    for (JsonValue rj : arr) {
      (void)rj;
      const Path rjp = Join(spec, {std::string("replicatedJobs"), k++});
      const std::string rj_name = p.String(obj, Join(rjp, {std::string("name")}));
      if (rj_name.empty()) {
        p.Fail(Join(rjp, {std::string("name")}), "Required value");
        break;
      }
      const int64_t replicas = p.Count(obj, Join(rjp, {std::string("replicas")}), 1);
      const Path job_spec = Join(rjp, {std::string("template"), std::string("spec")});
      const int64_t per_job = JobPods(p, obj, job_spec);
      for (int64_t j = 0; j < replicas && p.ok(); ++j) {
        const std::string job = gantry::StrCat(name, "-", rj_name, "-", j);
        p.Add(obj, Join(job_spec, {std::string("template")}), per_job, [&](int64_t i) {
          return Pod{gantry::StrCat(job, "-", i),
                     {{"jobset.sigs.k8s.io/jobset-name", name},
                      {"jobset.sigs.k8s.io/replicatedjob-name", rj_name},
                      {"jobset.sigs.k8s.io/job-index", std::to_string(j)},
                      {"batch.kubernetes.io/job-name", job},
                      {"job-name", job}}};
        });
      }
    }
  } else if (kind == "LeaderWorkerSet") {
    const int64_t groups = p.Count(obj, Join(spec, {std::string("replicas")}), 1);
    const Path lwt = Join(spec, {std::string("leaderWorkerTemplate")});
    const int64_t size = p.Count(obj, Join(lwt, {std::string("size")}), 1);
    const Path workers = Join(lwt, {std::string("workerTemplate")});
    const Path leader = p.Field(obj, Join(lwt, {std::string("leaderTemplate")}))
                            ? Join(lwt, {std::string("leaderTemplate")})
                            : workers;
    auto labels = [&](int64_t g, int64_t w) {
      return std::vector<std::pair<std::string, std::string>>{
          {"leaderworkerset.sigs.k8s.io/name", name},
          {"leaderworkerset.sigs.k8s.io/group-index", std::to_string(g)},
          {"leaderworkerset.sigs.k8s.io/worker-index", std::to_string(w)}};
    };
    for (int64_t g = 0; g < groups && p.ok() && size > 0; ++g) {
      p.Add(obj, leader, 1, [&](int64_t) {
        return Pod{gantry::StrCat(name, "-", g), labels(g, 0)};
      });
      p.Add(obj, workers, size - 1, [&](int64_t w) {
        return Pod{gantry::StrCat(name, "-", g, "-", w + 1), labels(g, w + 1)};
      });
    }
  }
  return p.ok();
}

}  // namespace gantry::sim
