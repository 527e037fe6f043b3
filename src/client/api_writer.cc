#include "src/client/api_writer.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "absl/hash/hash.h"
#include "gantry/util/strings.h"
#include "nlohmann/json.hpp"
#include "simdjson.h"
#include "spdlog/spdlog.h"

namespace gantry::client {
namespace {

int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string PodPath(const api::Pod& pod, std::string_view sub) {
  std::string p = StrCat("/api/v1/namespaces/", UrlEncode(pod.meta.namespace_.view()), "/pods/",
                         UrlEncode(pod.meta.name));
  if (!sub.empty()) p += StrCat("/", sub);
  return p;
}

// A write whose answer Gantry reads only for its status code and error
// message: the answer in protobuf (cheaper for the API server to encode than
// JSON), and no server-side field validation of a JSON body (the default,
// Warn, decodes it strictly; Gantry sends only fields it knows). DELETE
// takes no fieldValidation.
HttpRequest CheapWrite(HttpRequest req) {
  req.accept = kAcceptProtobufOrJson;
  if (req.method != "DELETE" && req.method != "GET") {
    req.path += req.path.find('?') == std::string::npos ? "?" : "&";
    req.path += "fieldValidation=Ignore";
  }
  return req;
}

bool Retryable(const absl::StatusOr<HttpResponse>& r) {
  if (!r.ok()) return r.status().code() == absl::StatusCode::kUnavailable;
  return r->status >= 500 || r->status == 429;
}

std::string ClaimPath(const api::ResourceClaim& claim, std::string_view sub) {
  std::string p =
      StrCat("/apis/resource.k8s.io/v1/namespaces/", UrlEncode(claim.meta.namespace_.view()),
             "/resourceclaims/", UrlEncode(claim.meta.name));
  if (!sub.empty()) p += StrCat("/", sub);
  return p;
}

std::vector<std::string> SymStrings(const std::vector<api::Symbol>& v) {
  std::vector<std::string> out;
  for (const api::Symbol& s : v) out.emplace_back(s.view());
  return out;
}

nlohmann::json RequirementsJson(const std::vector<api::Requirement>& reqs) {
  nlohmann::json out = nlohmann::json::array();
  for (const api::Requirement& r : reqs) {
    nlohmann::json j = {{"key", std::string(r.key.view())},
                        {"operator", std::string(api::SelectorOpName(r.op))}};
    if (!r.values.empty()) j["values"] = SymStrings(r.values);
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json AllocationJson(const api::AllocationResult& a, int64_t now_micros);

// The claim's UID and (with `with_resource_version`) resourceVersion as
// metadata preconditions of a merge patch; resourceVersion makes the patch
// conditional (a Conflict when the claim changed since it was read).
void AddClaimPreconditions(const api::ResourceClaim& claim, bool with_resource_version,
                           nlohmann::json* meta) {
  if (!claim.meta.uid.empty()) (*meta)["uid"] = claim.meta.uid;
  if (with_resource_version && !claim.meta.resource_version.empty()) {
    (*meta)["resourceVersion"] = claim.meta.resource_version;
  }
}

// A merge patch of the claim (`sub` "" or "status") with body `body`.
HttpRequest ClaimMergePatch(const api::ResourceClaim& claim, std::string_view sub,
                            std::string body) {
  HttpRequest req;
  req.method = "PATCH";
  req.path = ClaimPath(claim, sub);
  req.content_type = "application/merge-patch+json";
  req.body = std::move(body);
  return req;
}

// A merge patch of the claim's metadata.finalizers (UID precondition, and
// resourceVersion when `with_resource_version`).
HttpRequest FinalizersPatch(const api::ResourceClaim& claim,
                            const std::vector<std::string>& finalizers,
                            bool with_resource_version) {
  nlohmann::json meta = {{"finalizers", finalizers}};
  AddClaimPreconditions(claim, with_resource_version, &meta);
  return ClaimMergePatch(claim, "", nlohmann::json{{"metadata", meta}}.dump());
}

absl::Status ClaimWriteResult(const absl::StatusOr<HttpResponse>& r, std::string_view what) {
  if (!r.ok()) return r.status();
  if (r->status >= 200 && r->status < 300) return absl::OkStatus();
  return HttpError(*r, what);
}

}  // namespace

namespace {

nlohmann::json AllocationJson(const api::AllocationResult& a, int64_t now_micros) {
  nlohmann::json results = nlohmann::json::array();
  for (const api::DeviceRequestAllocationResult& r : a.results) {
    nlohmann::json j = {{"request", std::string(r.request.view())},
                        {"driver", std::string(r.driver.view())},
                        {"pool", std::string(r.pool.view())},
                        {"device", std::string(r.device.view())}};
    if (r.admin_access) j["adminAccess"] = true;
    if (!r.tolerations.empty()) {
      nlohmann::json tols = nlohmann::json::array();
      for (const api::Toleration& t : r.tolerations) {
        nlohmann::json tj = nlohmann::json::object();
        if (!t.key.empty()) tj["key"] = std::string(t.key.view());
        tj["operator"] = t.op == api::TolerationOp::kExists ? "Exists" : "Equal";
        if (!t.value.empty()) tj["value"] = std::string(t.value.view());
        if (t.effect != api::TaintEffect::kNone)
          tj["effect"] = std::string(api::TaintEffectName(t.effect));
        if (t.toleration_seconds) tj["tolerationSeconds"] = *t.toleration_seconds;
        tols.push_back(std::move(tj));
      }
      j["tolerations"] = std::move(tols);
    }
    if (!r.binding_conditions.empty()) j["bindingConditions"] = SymStrings(r.binding_conditions);
    if (!r.binding_failure_conditions.empty())
      j["bindingFailureConditions"] = SymStrings(r.binding_failure_conditions);
    if (!r.share_id.empty()) j["shareID"] = r.share_id;
    if (!r.consumed_capacity.empty()) {
      nlohmann::json cap = nlohmann::json::object();
      for (const api::CapacityRequest& c : r.consumed_capacity)
        cap[std::string(c.name.view())] = c.value.ToString();
      j["consumedCapacity"] = std::move(cap);
    }
    results.push_back(std::move(j));
  }
  nlohmann::json devices = {{"results", std::move(results)}};
  if (!a.config.empty()) {
    nlohmann::json cfg = nlohmann::json::array();
    for (const api::DeviceAllocationConfiguration& c : a.config) {
      nlohmann::json j = {{"source", std::string(api::AllocationConfigSourceName(c.source))}};
      if (!c.requests.empty()) j["requests"] = SymStrings(c.requests);
      nlohmann::json opaque = {{"driver", std::string(c.opaque.driver.view())}};
      try {
        opaque["parameters"] = c.opaque.parameters.empty()
                                   ? nlohmann::json::object()
                                   : nlohmann::json::parse(c.opaque.parameters);
      } catch (const std::exception&) {
        opaque["parameters"] = nlohmann::json::object();
      }
      j["opaque"] = std::move(opaque);
      cfg.push_back(std::move(j));
    }
    devices["config"] = std::move(cfg);
  }
  nlohmann::json out = {{"devices", std::move(devices)}};
  if (a.node_selector) {
    nlohmann::json terms = nlohmann::json::array();
    for (const api::NodeSelectorTerm& t : a.node_selector->terms) {
      nlohmann::json tj = nlohmann::json::object();
      if (!t.match_expressions.empty())
        tj["matchExpressions"] = RequirementsJson(t.match_expressions);
      if (!t.match_fields.empty()) tj["matchFields"] = RequirementsJson(t.match_fields);
      terms.push_back(std::move(tj));
    }
    out["nodeSelector"] = {{"nodeSelectorTerms", std::move(terms)}};
  }
  out["allocationTimestamp"] = ApiClusterWriter::FormatTime(
      a.allocation_timestamp_micros > 0 ? a.allocation_timestamp_micros : now_micros);
  return out;
}

}  // namespace

std::string ApiClusterWriter::ClaimStatusPatch(
    const api::ResourceClaim& claim, const api::AllocationResult& allocation,
    const std::vector<api::ResourceClaimConsumerReference>& reserved_for) {
  nlohmann::json reserved = nlohmann::json::array();
  for (const api::ResourceClaimConsumerReference& r : reserved_for) {
    nlohmann::json j = {
        {"resource", std::string(r.resource.view())}, {"name", r.name}, {"uid", r.uid}};
    if (!r.api_group.empty()) j["apiGroup"] = std::string(r.api_group.view());
    reserved.push_back(std::move(j));
  }
  nlohmann::json patch = {
      {"status",
       {{"allocation", AllocationJson(allocation, WallMicros())}, {"reservedFor", reserved}}}};
  // reservedFor is replaced whole, so a version someone else changed must be a Conflict.
  nlohmann::json meta = nlohmann::json::object();
  AddClaimPreconditions(claim, /*with_resource_version=*/true, &meta);
  if (!meta.empty()) patch["metadata"] = std::move(meta);
  return patch.dump();
}

namespace {

bool SameResults(const api::AllocationResult& a, const api::AllocationResult& b) {
  if (a.results.size() != b.results.size()) return false;
  for (size_t i = 0; i < a.results.size(); ++i) {
    const api::DeviceRequestAllocationResult& x = a.results[i];
    const api::DeviceRequestAllocationResult& y = b.results[i];
    if (x.request != y.request || x.driver != y.driver || x.pool != y.pool ||
        x.device != y.device || x.share_id != y.share_id) {
      return false;
    }
  }
  return true;
}

bool HasConsumer(const std::vector<api::ResourceClaimConsumerReference>& list,
                 std::string_view uid) {
  return std::any_of(list.begin(), list.end(),
                     [&](const api::ResourceClaimConsumerReference& r) { return r.uid == uid; });
}

}  // namespace

absl::StatusOr<api::ResourceClaim> ApiClusterWriter::ReadClaim(const api::ResourceClaim& claim,
                                                               std::string_view what) {
  HttpRequest get;
  get.method = "GET";
  get.path = ClaimPath(claim, "");
  absl::StatusOr<HttpResponse> r = client_.Do(get);
  if (absl::Status st = ClaimWriteResult(r, what); !st.ok()) return st;
  simdjson::dom::parser parser;
  api::JsonValue root;
  if (parser.parse(r->body).get(root) != simdjson::SUCCESS) {
    return absl::InternalError(StrCat(what, ": the claim read after a conflict is not JSON"));
  }
  absl::StatusOr<api::ResourceClaim> fresh = api::DecodeResourceClaim(root);
  if (fresh.ok() && !claim.meta.uid.empty() && fresh->meta.uid != claim.meta.uid) {
    return absl::NotFoundError(StrCat(what, ": the claim was deleted and created again"));
  }
  return fresh;
}

absl::StatusOr<std::string> ApiClusterWriter::ConditionalClaimWrite(
    const api::ResourceClaim& claim, std::string_view what,
    const std::function<HttpRequest(const api::ResourceClaim&)>& request,
    const std::function<absl::StatusOr<bool>(const api::ResourceClaim&)>& reapply) {
  api::ResourceClaim base = claim;
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<HttpResponse> r = client_.Do(CheapWrite(request(base)));
    if (r.ok() && r->status >= 200 && r->status < 300) {
      return ResponseResourceVersion(*r);
    }
    if (!r.ok() || r->status != 409 || attempt >= kClaimConflictRetries) {
      absl::Status st = ClaimWriteResult(r, what);
      if (r.ok() && r->status == 409) {
        return absl::AbortedError(
            StrCat(st.message(), " (still conflicting after ", attempt, " attempts)"));
      }
      return st;
    }
    claim_conflicts_.fetch_add(1, std::memory_order_relaxed);
    absl::StatusOr<api::ResourceClaim> fresh = ReadClaim(base, what);
    if (!fresh.ok()) return fresh.status();
    absl::StatusOr<bool> again = reapply(*fresh);
    if (!again.ok()) return again.status();
    if (!*again) return fresh->meta.resource_version;  // the newer version already has it
    base = *std::move(fresh);
  }
}

absl::StatusOr<std::string> ApiClusterWriter::AddResourceClaimFinalizer(
    const api::ResourceClaim& claim, std::string_view finalizer) {
  auto has = [&](const api::ResourceClaim& c) {
    return std::find(c.meta.finalizers.begin(), c.meta.finalizers.end(), finalizer) !=
           c.meta.finalizers.end();
  };
  if (has(claim)) return claim.meta.resource_version;
  return ConditionalClaimWrite(
      claim, StrCat("add finalizer to ResourceClaim ", claim.meta.Key()),
      [&](const api::ResourceClaim& base) {
        std::vector<std::string> finalizers = base.meta.finalizers;
        finalizers.emplace_back(finalizer);
        return FinalizersPatch(base, finalizers, /*with_resource_version=*/true);
      },
      [&](const api::ResourceClaim& fresh) -> absl::StatusOr<bool> { return !has(fresh); });
}

absl::StatusOr<std::string> ApiClusterWriter::UpdateResourceClaimStatus(
    const api::ResourceClaim& claim, const api::AllocationResult& allocation,
    const std::vector<api::ResourceClaimConsumerReference>& reserved_for) {
  const std::string what = StrCat("update status of ResourceClaim ", claim.meta.Key());
  // The change relative to `claim`, re-applied to a newer version on Conflict.
  std::vector<api::ResourceClaimConsumerReference> added;
  std::vector<std::string> dropped;
  for (const api::ResourceClaimConsumerReference& r : reserved_for) {
    if (!HasConsumer(claim.status.reserved_for, r.uid)) added.push_back(r);
  }
  for (const api::ResourceClaimConsumerReference& r : claim.status.reserved_for) {
    if (!HasConsumer(reserved_for, r.uid)) dropped.push_back(r.uid);
  }
  const bool allocating = !claim.status.allocation.has_value();
  std::vector<api::ResourceClaimConsumerReference> wanted = reserved_for;
  return ConditionalClaimWrite(
      claim, what,
      [&](const api::ResourceClaim& base) {
        return ClaimMergePatch(base, "status", ClaimStatusPatch(base, allocation, wanted));
      },
      [&](const api::ResourceClaim& fresh) -> absl::StatusOr<bool> {
        if (fresh.meta.deletion_micros.has_value() && allocating) {
          return absl::FailedPreconditionError(StrCat(what, ": the claim is being deleted"));
        }
        if (fresh.status.allocation.has_value()) {
          if (!SameResults(*fresh.status.allocation, allocation)) {
            return absl::AbortedError(StrCat(
                what, ": allocated differently by another writer since the scheduler read it"));
          }
        } else if (!allocating) {
          return absl::AbortedError(
              StrCat(what, ": deallocated by another writer since the scheduler read it"));
        }
        std::vector<api::ResourceClaimConsumerReference> next;
        for (const api::ResourceClaimConsumerReference& r : fresh.status.reserved_for) {
          if (std::find(dropped.begin(), dropped.end(), r.uid) == dropped.end()) next.push_back(r);
        }
        for (const api::ResourceClaimConsumerReference& r : added) {
          if (!HasConsumer(next, r.uid)) next.push_back(r);
        }
        if (next.size() > api::kReservedForMaxSize) {
          return absl::ResourceExhaustedError(
              StrCat(what, ": reservedFor would exceed ", api::kReservedForMaxSize, " entries"));
        }
        bool same =
            fresh.status.allocation.has_value() && next.size() == fresh.status.reserved_for.size();
        for (size_t i = 0; same && i < next.size(); ++i)
          same = next[i].uid == fresh.status.reserved_for[i].uid;
        wanted = std::move(next);
        return !same;
      });
}

absl::StatusOr<std::string> ApiClusterWriter::DeallocateResourceClaim(
    const api::ResourceClaim& claim) {
  const std::string what = StrCat("deallocate ResourceClaim ", claim.meta.Key());
  return ConditionalClaimWrite(
      claim, what,
      [&](const api::ResourceClaim& base) {
        nlohmann::json patch = {
            {"status", {{"allocation", nullptr}, {"reservedFor", nullptr}, {"devices", nullptr}}}};
        nlohmann::json meta = nlohmann::json::object();
        AddClaimPreconditions(base, /*with_resource_version=*/true, &meta);
        if (!meta.empty()) patch["metadata"] = std::move(meta);
        return ClaimMergePatch(base, "status", patch.dump());
      },
      [&](const api::ResourceClaim& fresh) -> absl::StatusOr<bool> {
        if (!fresh.status.allocation.has_value()) return false;  // already deallocated
        for (const api::ResourceClaimConsumerReference& r : fresh.status.reserved_for) {
          if (!HasConsumer(claim.status.reserved_for, r.uid)) {
            return absl::FailedPreconditionError(StrCat(what, ": reserved for ", r.resource.view(),
                                                        " ", r.name,
                                                        " since the scheduler read it"));
          }
        }
        return true;
      });
}

std::string ApiClusterWriter::ClaimCreateBody(const api::ResourceClaim& claim,
                                              std::string_view generate_name) {
  nlohmann::json meta = {{"generateName", std::string(generate_name)},
                         {"namespace", std::string(claim.meta.namespace_.view())}};
  nlohmann::json owners = nlohmann::json::array();
  for (const api::OwnerReference& o : claim.meta.owner_references) {
    nlohmann::json j = {{"apiVersion", std::string(o.api_version.view())},
                        {"kind", std::string(o.kind.view())},
                        {"name", o.name},
                        {"uid", o.uid}};
    if (o.controller) j["controller"] = true;
    owners.push_back(std::move(j));
  }
  if (!owners.empty()) meta["ownerReferences"] = std::move(owners);
  if (!claim.meta.annotations.empty()) {
    nlohmann::json annotations = nlohmann::json::object();
    for (const auto& [k, v] : claim.meta.annotations) annotations[std::string(k.view())] = v;
    meta["annotations"] = std::move(annotations);
  }
  if (!claim.meta.labels.empty()) {
    nlohmann::json labels = nlohmann::json::object();
    for (const auto& [k, v] : claim.meta.labels)
      labels[std::string(k.view())] = std::string(v.view());
    meta["labels"] = std::move(labels);
  }
  if (!claim.meta.finalizers.empty()) meta["finalizers"] = claim.meta.finalizers;
  nlohmann::json requests = nlohmann::json::array();
  for (const api::DeviceRequest& r : claim.spec.requests) {
    if (!r.exactly) continue;
    requests.push_back({{"name", std::string(r.name.view())},
                        {"exactly",
                         {{"deviceClassName", std::string(r.exactly->device_class_name.view())},
                          {"allocationMode", "ExactCount"},
                          {"count", r.exactly->count}}}});
  }
  nlohmann::json body = {{"apiVersion", "resource.k8s.io/v1"},
                         {"kind", "ResourceClaim"},
                         {"metadata", std::move(meta)},
                         {"spec", {{"devices", {{"requests", std::move(requests)}}}}}};
  return body.dump();
}

absl::StatusOr<api::ResourceClaim> ApiClusterWriter::CreateResourceClaim(
    const api::ResourceClaim& claim, std::string_view generate_name) {
  HttpRequest req;
  req.method = "POST";
  req.path = StrCat("/apis/resource.k8s.io/v1/namespaces/", UrlEncode(claim.meta.namespace_.view()),
                    "/resourceclaims");
  req.content_type = "application/json";
  req.body = ClaimCreateBody(claim, generate_name);
  const std::string what =
      StrCat("create ResourceClaim ", claim.meta.namespace_.view(), "/", generate_name, "*");
  absl::StatusOr<HttpResponse> r = client_.Do(req);
  if (absl::Status st = ClaimWriteResult(r, what); !st.ok()) return st;
  simdjson::dom::parser parser;
  api::JsonValue root;
  if (parser.parse(r->body).get(root) != simdjson::SUCCESS) {
    return absl::InternalError(StrCat(what, ": the response is not JSON"));
  }
  return api::DecodeResourceClaim(root);
}

absl::Status ApiClusterWriter::DeleteResourceClaim(const api::ResourceClaim& claim) {
  const std::string what = StrCat("delete ResourceClaim ", claim.meta.Key());
  std::vector<std::string> kept;
  for (const std::string& f : claim.meta.finalizers) {
    if (f != api::kDeleteProtectionFinalizer) kept.push_back(f);
  }
  if (kept.size() != claim.meta.finalizers.size()) {
    // The finalizer first, as it would hold the deletion otherwise.
    absl::StatusOr<HttpResponse> r =
        client_.Do(CheapWrite(FinalizersPatch(claim, kept, /*with_resource_version=*/false)));
    if (r.ok() && r->status == 404) return absl::OkStatus();
    if (absl::Status st = ClaimWriteResult(r, what); !st.ok()) return st;
  }
  HttpRequest del;
  del.method = "DELETE";
  del.path = ClaimPath(claim, "");
  del.content_type = "application/json";
  nlohmann::json opts = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!claim.meta.uid.empty()) opts["preconditions"] = {{"uid", claim.meta.uid}};
  del.body = opts.dump();
  absl::StatusOr<HttpResponse> r = client_.Do(CheapWrite(del));
  if (r.ok() && r->status == 404) return absl::OkStatus();
  return ClaimWriteResult(r, what);
}

std::string ApiClusterWriter::ExtendedResourceClaimStatusPatch(
    const api::Pod& pod, const framework::ExtendedResourceClaimStatus& status) {
  nlohmann::json mappings = nlohmann::json::array();
  for (const framework::ExtendedResourceClaimStatus::RequestMapping& m : status.request_mappings) {
    mappings.push_back({{"containerName", m.container_name},
                        {"resourceName", m.resource_name},
                        {"requestName", m.request_name}});
  }
  nlohmann::json patch = {{"status",
                           {{"extendedResourceClaimStatus",
                             {{"resourceClaimName", status.resource_claim_name},
                              {"requestMappings", std::move(mappings)}}}}}};
  if (!pod.meta.uid.empty()) patch["metadata"] = {{"uid", pod.meta.uid}};
  return patch.dump();
}

absl::Status ApiClusterWriter::UpdatePodExtendedResourceClaimStatus(
    const api::Pod& pod, const framework::ExtendedResourceClaimStatus& status) {
  HttpRequest req;
  req.method = "PATCH";
  req.path = PodPath(pod, "status");
  req.content_type = "application/merge-patch+json";
  req.body = ExtendedResourceClaimStatusPatch(pod, status);
  return ClaimWriteResult(client_.Do(CheapWrite(req)),
                          StrCat("record the extended resource claim of pod ", pod.meta.Key()));
}

std::optional<HttpRequest> ApiClusterWriter::PodGroupConditionRequest(
    const framework::PodGroupRef& g, const framework::PodGroupCondition& c,
    int64_t transition_micros) {
  HttpRequest req;
  req.method = "PATCH";
  const bool disruption = c.type == "DisruptionTarget";
  const bool quorum = c.type == framework::kPodGroupBoundBelowQuorum;
  if (g.api_group == "scheduling.x-k8s.io") {
    // scheduler-plugins PodGroups have a phase, not conditions; its
    // controller moves a scheduled group to Running as members run. Nothing
    // represents DisruptionTarget or BoundBelowQuorum there (the event does).
    if (c.status == "True" || disruption || quorum) return std::nullopt;
    req.path = StrCat("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/", UrlEncode(g.namespace_),
                      "/podgroups/", UrlEncode(g.name), "/status");
    req.content_type = "application/merge-patch+json";
    nlohmann::json patch = {{"status", {{"phase", "Scheduling"}}}};
    if (!g.uid.empty()) patch["metadata"] = {{"uid", g.uid}};
    req.body = patch.dump();
    return req;
  }
  const bool composite = g.kind == "CompositePodGroup";
  const std::string version = composite ? "v1alpha3" : "v1beta1";
  req.path = StrCat("/apis/scheduling.k8s.io/", version, "/namespaces/", UrlEncode(g.namespace_),
                    composite ? "/compositepodgroups/" : "/podgroups/", UrlEncode(g.name),
                    "/status?fieldManager=",
                    // One field manager per condition type: an apply that omits a
                    // condition its manager applied before would remove it.
                    disruption ? "gantry-scheduler-preemption"
                    : quorum   ? "gantry-scheduler-quorum"
                               : "gantry-scheduler",
                    "&force=true");
  req.content_type = "application/apply-patch+yaml";  // JSON is YAML
  nlohmann::json cond = {{"type", c.type},
                         {"status", c.status},
                         {"reason", c.reason},
                         {"message", c.message},
                         {"lastTransitionTime", FormatTime(transition_micros)}};
  if (g.generation > 0) cond["observedGeneration"] = g.generation;
  nlohmann::json meta = {{"name", g.name}, {"namespace", g.namespace_}};
  if (!g.uid.empty()) meta["uid"] = g.uid;
  nlohmann::json body = {{"apiVersion", StrCat("scheduling.k8s.io/", version)},
                         {"kind", g.kind},
                         {"metadata", meta},
                         {"status", {{"conditions", nlohmann::json::array({cond})}}}};
  req.body = body.dump();
  return req;
}

void ApiClusterWriter::ForgetPodGroup(std::string_view key) {
  std::lock_guard<std::mutex> lock(group_mu_);
  group_transitions_.erase(std::string(key));
}

absl::Status ApiClusterWriter::UpdatePodGroupCondition(
    const framework::PodGroupRef& group, const framework::PodGroupCondition& condition) {
  const int64_t now = WallMicros();
  int64_t transition = now;
  {
    // The transition time only moves when the status changes.
    std::lock_guard<std::mutex> lock(group_mu_);
    const std::string group_key = StrCat(group.namespace_, "/", group.name);
    if (group_transitions_.size() >= options_.group_transition_capacity &&
        !group_transitions_.contains(group_key)) {
      // Bounded: forget the groups whose transitions are all older than an
      // hour, or every group (a forgotten group's next condition gets a fresh
      // transition time).
      const size_t before = group_transitions_.size();
      for (auto it = group_transitions_.begin(); it != group_transitions_.end();) {
        bool recent = false;
        for (const auto& [type, t] : it->second)
          recent = recent || t.since >= now - 3'600'000'000LL;
        if (!recent) {
          group_transitions_.erase(it++);
        } else {
          ++it;
        }
      }
      if (group_transitions_.size() >= options_.group_transition_capacity)
        group_transitions_.clear();
      std::lock_guard<std::mutex> stats_lock(stats_mu_);
      stats_.group_transitions_pruned += static_cast<int64_t>(before - group_transitions_.size());
    }
    GroupTransition& t = group_transitions_[group_key][StrCat(group.api_group, "/", group.kind, " ",
                                                              condition.type)];
    if (t.status == condition.status) {
      transition = t.since;
    } else {
      t.status = condition.status;
      t.since = now;
    }
  }
  std::optional<HttpRequest> req = PodGroupConditionRequest(group, condition, transition);
  if (!req) return absl::OkStatus();
  std::string key = StrCat(group.kind, " ", group.namespace_, "/", group.name);
  if (!Enqueue([this, req = std::move(*req), key] {
        SendStatusPatch(req, "the scheduling condition", key, "patch status");
      })) {
    return absl::ResourceExhaustedError(StrCat("the condition of ", key,
                                               " dropped: ", options_.status_patch_queue_capacity,
                                               " status patches are waiting"));
  }
  return absl::OkStatus();
}

std::string ApiClusterWriter::FormatMicroTime(int64_t unix_micros) {
  time_t secs = static_cast<time_t>(unix_micros / 1'000'000);
  int64_t frac = unix_micros % 1'000'000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

std::string ApiClusterWriter::FormatTime(int64_t unix_micros) {
  time_t secs = static_cast<time_t>(unix_micros / 1'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string ApiClusterWriter::BindingBody(const api::Pod& pod, std::string_view node) {
  nlohmann::json j = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata",
       {{"name", pod.meta.name}, {"namespace", std::string(pod.meta.namespace_.view())}}},
      {"target", {{"kind", "Node"}, {"name", std::string(node)}}}};
  if (!pod.meta.uid.empty()) j["metadata"]["uid"] = pod.meta.uid;
  return j.dump();
}

std::string ApiClusterWriter::PodScheduledPatch(const api::Pod& pod,
                                                const framework::PodScheduledCondition& c,
                                                const std::string* nominated_node,
                                                int64_t now_micros) {
  nlohmann::json cond = {{"type", "PodScheduled"},
                         {"status", c.status},
                         {"reason", c.reason},
                         {"message", c.message},
                         {"lastProbeTime", nullptr}};
  // The transition time only moves when the status changes.
  bool same_status = false;
  for (const api::PodCondition& pc : pod.conditions) {
    if (pc.type.view() == "PodScheduled" && pc.status.view() == c.status) same_status = true;
  }
  if (!same_status) cond["lastTransitionTime"] = FormatTime(now_micros);
  if (pod.meta.generation > 0) cond["observedGeneration"] = pod.meta.generation;
  nlohmann::json status = {{"conditions", nlohmann::json::array({cond})}};
  if (nominated_node != nullptr) {
    if (nominated_node->empty()) {
      status["nominatedNodeName"] = nullptr;
    } else {
      status["nominatedNodeName"] = *nominated_node;
    }
  }
  return nlohmann::json{{"status", status}}.dump();
}

ApiClusterWriter::ApiClusterWriter(HttpClient& client, HttpClient& events_client,
                                   WriterOptions options)
    : client_(client), events_client_(events_client), options_(std::move(options)) {
  worker_ = std::thread([this] { Worker(); });
  const int workers = std::max(1, options_.event_workers);
  for (int i = 0; i < workers; ++i) event_shards_.push_back(std::make_unique<EventShard>());
  for (auto& shard : event_shards_) {
    shard->thread = std::thread([this, s = shard.get()] { EventWorker(*s); });
  }
}

ApiClusterWriter::~ApiClusterWriter() {
  Flush(5'000);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_flag_.store(true);
  for (auto& shard : event_shards_) {
    // A worker checks stop_flag_ under its mutex: it either sees the flag or
    // is already waiting for the notification below.
    std::lock_guard<std::mutex> lock(shard->mu);
  }
  cv_.notify_all();
  for (auto& shard : event_shards_) shard->cv.notify_all();
  worker_.join();
  for (auto& shard : event_shards_) shard->thread.join();
}

WriterStats ApiClusterWriter::Stats() const {
  // The gauges are read before stats_mu_ is taken: code holding mu_ or
  // group_mu_ takes stats_mu_ inside them.
  int64_t patches_queued = 0;
  int64_t transitions = 0;
  {
    std::lock_guard<std::mutex> tasks_lock(mu_);
    patches_queued = static_cast<int64_t>(tasks_.size());
  }
  {
    std::lock_guard<std::mutex> group_lock(group_mu_);
    transitions = static_cast<int64_t>(group_transitions_.size());
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  WriterStats out = stats_;
  out.events_queued = events_queued_.load();
  out.status_patches_queued = patches_queued;
  out.group_transitions = transitions;
  return out;
}

void ApiClusterWriter::SendStatusPatch(const HttpRequest& req, std::string_view what,
                                       const std::string& key, std::string_view verb) {
  Backoff backoff(100, 2'000);
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<HttpResponse> r = client_.Do(CheapWrite(req), &stop_flag_);
    if (r.ok() && r->status >= 200 && r->status < 300) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.status_patches;
      return;
    }
    if (r.ok() && r->status == 404) return;  // the object is gone
    if (Retryable(r) && attempt < options_.status_patch_retries && !stop_flag_.load()) {
      SleepFor(backoff.NextMillis(), &stop_flag_);
      continue;
    }
    spdlog::warn("updating {} of {}: {}", what, key,
                 r.ok() ? Msg(HttpError(*r, verb)) : Msg(r.status()));
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.status_patch_failures;
    return;
  }
}

bool ApiClusterWriter::Enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (tasks_.size() >= options_.status_patch_queue_capacity) {
      std::lock_guard<std::mutex> stats_lock(stats_mu_);
      ++stats_.status_patches_dropped;
      return false;
    }
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void ApiClusterWriter::Worker() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) {
      if (stopping_) return;
      continue;
    }
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    busy_ = true;
    lock.unlock();
    task();
    lock.lock();
    busy_ = false;
    if (tasks_.empty()) idle_cv_.notify_all();
  }
}

void ApiClusterWriter::EventWorker(EventShard& shard) {
  std::unique_lock<std::mutex> lock(shard.mu);
  while (true) {
    shard.cv.wait(lock, [&] { return stop_flag_.load() || !shard.queue.empty(); });
    if (shard.queue.empty()) {
      if (stop_flag_.load()) return;
      continue;
    }
    auto [event, recorded] = std::move(shard.queue.front());
    shard.queue.pop_front();
    events_queued_.fetch_sub(1);
    shard.busy = true;
    lock.unlock();
    WriteEvent(shard, event, recorded);
    lock.lock();
    shard.busy = false;
    if (shard.queue.empty()) shard.idle_cv.notify_all();
  }
}

bool ApiClusterWriter::Flush(int64_t timeout_millis) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_millis);
  bool done = true;
  {
    std::unique_lock<std::mutex> lock(mu_);
    done &= idle_cv_.wait_until(lock, deadline, [&] { return tasks_.empty() && !busy_; });
  }
  for (auto& shard : event_shards_) {
    std::unique_lock<std::mutex> lock(shard->mu);
    done &= shard->idle_cv.wait_until(lock, deadline,
                                      [&] { return shard->queue.empty() && !shard->busy; });
  }
  return done;
}

absl::Status ApiClusterWriter::BindPod(const api::Pod& pod, std::string_view node) {
  if (!pod.meta.uid.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_status_.find(pod.meta.uid);
    if (it != pending_status_.end()) it->second.bound_seq = ++write_seq_;
  }
  HttpRequest req;
  req.method = "POST";
  req.path = PodPath(pod, "binding");
  req.body = BindingBody(pod, node);
  const std::string what = StrCat("bind ", pod.meta.Key(), " to ", node);
  absl::StatusOr<HttpResponse> r = client_.Do(CheapWrite(req));
  if (r.ok() && (r->status == 200 || r->status == 201)) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.bindings;
    return absl::OkStatus();
  }
  absl::Status err = r.ok() ? HttpError(*r, what) : r.status();
  // A transport error, a timeout, a 5xx, or a 409 (an earlier attempt of
  // ours may have landed) says nothing certain about whether the binding was
  // made: read the pod before anyone undoes the reservation of a pod that did bind.
  const bool ambiguous = !r.ok() || r->status >= 500 || r->status == 409 || r->status == 429;
  if (ambiguous) {
    absl::StatusOr<std::string> bound_to = BoundNode(pod, what);
    if (bound_to.ok() && *bound_to == node) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.bindings;
      ++stats_.bindings_confirmed_by_read;
      return absl::OkStatus();
    }
    if (bound_to.ok() && !bound_to->empty()) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.binding_conflicts;
      return absl::AlreadyExistsError(
          StrCat(what, ": the pod is bound to node ", *bound_to, " already"));
    }
    if (!bound_to.ok()) {
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.bindings_unresolved;
      }
      spdlog::warn("{}: {}; the pod could not be read back either ({})", what, Msg(err),
                   Msg(bound_to.status()));
    }
  }
  if (r.ok() && r->status == 409) {
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.binding_conflicts;
    }
    return absl::AlreadyExistsError(err.message());
  }
  return err;
}

absl::StatusOr<std::string> ApiClusterWriter::BoundNode(const api::Pod& pod,
                                                        std::string_view what) {
  HttpRequest get;
  get.method = "GET";
  get.path = PodPath(pod, "");
  absl::Status last = absl::UnavailableError("not read");
  for (int attempt = 0; attempt < options_.bind_readback_attempts; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(options_.bind_readback_interval_millis));
    }
    absl::StatusOr<HttpResponse> r = client_.Do(get);
    if (!r.ok()) {
      last = r.status();
      continue;
    }
    if (r->status == 404) return std::string();  // gone: not bound by us
    if (r->status != 200) {
      last = HttpError(*r, StrCat(what, ": read the pod back"));
      if (r->status < 500 && r->status != 429) return last;
      continue;
    }
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(r->body).get(root) != simdjson::SUCCESS) {
      return absl::InternalError(StrCat(what, ": the pod read back is not JSON"));
    }
    std::string_view uid, node_name;
    if (root["metadata"]["uid"].get(uid) != simdjson::SUCCESS) uid = {};
    if (root["spec"]["nodeName"].get(node_name) != simdjson::SUCCESS) node_name = {};
    if (!pod.meta.uid.empty() && uid != pod.meta.uid) return std::string();  // another pod now
    return std::string(node_name);
  }
  return last;
}

absl::Status ApiClusterWriter::UpdatePodScheduledCondition(
    const api::Pod& pod, const framework::PodScheduledCondition& condition,
    const std::string* nominated_node) {
  HttpRequest req;
  req.method = "PATCH";
  req.path = PodPath(pod, "status");
  req.content_type = "application/strategic-merge-patch+json";
  req.body = PodScheduledPatch(pod, condition, nominated_node, WallMicros());
  std::string key = pod.meta.Key();
  std::string uid = pod.meta.uid;
  uint64_t seq = 0;
  if (!uid.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    seq = ++write_seq_;
    ++pending_status_[uid].queued;
  }
  const bool queued = Enqueue([this, req = std::move(req), key, uid, seq] {
    if (!uid.empty()) {
      bool superseded = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = pending_status_.find(uid);
        if (it != pending_status_.end()) {
          superseded = it->second.bound_seq > seq;
          if (--it->second.queued <= 0) pending_status_.erase(it);
        }
      }
      if (superseded) {
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.status_patches_superseded;
        return;
      }
    }
    SendStatusPatch(req, "PodScheduled", key, "patch pods/status");
  });
  if (!queued && !uid.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_status_.find(uid);
    if (it != pending_status_.end() && --it->second.queued <= 0) pending_status_.erase(it);
  }
  if (!queued) {
    return absl::ResourceExhaustedError(StrCat("PodScheduled of ", key,
                                               " dropped: ", options_.status_patch_queue_capacity,
                                               " status patches are waiting"));
  }
  return absl::OkStatus();
}

absl::Status ApiClusterWriter::DeletePodForPreemption(const api::Pod& victim,
                                                      const api::Pod& preemptor,
                                                      std::string_view node) {
  const int64_t now = WallMicros();
  // 1. DisruptionTarget condition (best effort, as upstream).
  {
    nlohmann::json cond = {
        {"type", "DisruptionTarget"},
        {"status", "True"},
        {"reason", "PreemptionByScheduler"},
        // A member of a native PodGroup preempts for its group (upstream 1.37 wording).
        {"message", StrCat(preemptor.scheduler_name.view(),
                           ": preempting to accommodate a higher priority pod",
                           preemptor.pod_group_name.empty() ? "" : " group")},
        {"lastTransitionTime", FormatTime(now)}};
    HttpRequest req;
    req.method = "PATCH";
    req.path = PodPath(victim, "status");
    req.content_type = "application/strategic-merge-patch+json";
    req.body = nlohmann::json{{"status", {{"conditions", nlohmann::json::array({cond})}}}}.dump();
    absl::StatusOr<HttpResponse> r = client_.Do(CheapWrite(req));
    if (r.ok() && r->status == 404) return absl::OkStatus();  // already gone
    if (!r.ok() || r->status >= 300) {
      spdlog::warn("setting DisruptionTarget on {}: {}", victim.meta.Key(),
                   r.ok() ? Msg(HttpError(*r, "patch")) : Msg(r.status()));
    }
  }
  // 2. DELETE with a UID precondition so a recreated pod of the same name survives.
  HttpRequest del;
  del.method = "DELETE";
  del.path = PodPath(victim, "");
  nlohmann::json opts = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!victim.meta.uid.empty()) opts["preconditions"] = {{"uid", victim.meta.uid}};
  del.body = opts.dump();
  absl::StatusOr<HttpResponse> r = client_.Do(CheapWrite(del));
  if (!r.ok()) return r.status();
  if (r->status == 404) return absl::OkStatus();
  if (r->status >= 300)
    return HttpError(*r, StrCat("delete preemption victim ", victim.meta.Key()));
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.deletions;
  }
  // 3. Preempted event on the victim.
  RecordEvent(
      framework::EventRecord{"Pod", std::string(victim.meta.namespace_.view()), victim.meta.name,
                             victim.meta.uid, "Normal", "Preempted", "Preempting",
                             StrCat("Preempted by pod ", preemptor.meta.uid, " on node ", node),
                             std::string(preemptor.scheduler_name.view())});
  return absl::OkStatus();
}

size_t ApiClusterWriter::EventWorkerFor(const framework::EventRecord& event, size_t workers) {
  // One worker per object keeps its events (and every isomorphic series) in order.
  return absl::HashOf(event.regarding_kind, event.namespace_, event.name) %
         std::max<size_t>(1, workers);
}

void ApiClusterWriter::RecordEvent(const framework::EventRecord& event) {
  const int64_t now = WallMicros();
  if (events_queued_.fetch_add(1) >= static_cast<int64_t>(options_.event_queue_capacity)) {
    events_queued_.fetch_sub(1);
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.events_dropped;
    return;
  }
  EventShard& shard = *event_shards_[EventWorkerFor(event, event_shards_.size())];
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.queue.emplace_back(event, now);
  }
  shard.cv.notify_one();
}

absl::Status ApiClusterWriter::CreateEvent(const framework::EventRecord& e, int64_t now,
                                           std::string* name, std::string* ns) {
  *ns = e.namespace_.empty() ? "default" : e.namespace_;
  char hex[32];
  std::snprintf(hex, sizeof(hex), "%llx", static_cast<unsigned long long>(now) * 1000ULL);
  *name = StrCat(e.name, ".", hex);
  const std::string controller =
      e.reporting_controller.empty() ? "gantry-scheduler" : e.reporting_controller;
  nlohmann::json regarding = {{"kind", e.regarding_kind}, {"name", e.name}};
  if (e.regarding_kind == "Pod") {
    regarding["apiVersion"] = "v1";
  } else if (e.regarding_kind == "PodGroup") {
    regarding["apiVersion"] = "scheduling.k8s.io/v1beta1";
  } else if (e.regarding_kind == "CompositePodGroup") {
    regarding["apiVersion"] = "scheduling.k8s.io/v1alpha3";
  }
  if (!e.namespace_.empty()) regarding["namespace"] = e.namespace_;
  if (!e.uid.empty()) regarding["uid"] = e.uid;
  nlohmann::json body = {{"apiVersion", "events.k8s.io/v1"},
                         {"kind", "Event"},
                         {"metadata", {{"name", *name}, {"namespace", *ns}}},
                         {"eventTime", FormatMicroTime(now)},
                         {"reportingController", controller},
                         {"reportingInstance", StrCat(controller, "-", options_.hostname)},
                         {"action", e.action},
                         {"reason", e.reason},
                         {"regarding", regarding},
                         {"note", e.note},
                         {"type", e.type}};
  HttpRequest req;
  req.method = "POST";
  req.path = StrCat("/apis/events.k8s.io/v1/namespaces/", UrlEncode(*ns), "/events");
  req.body = body.dump();
  absl::StatusOr<HttpResponse> r = events_client_.Do(CheapWrite(req), &stop_flag_);
  if (!r.ok()) return r.status();
  if (r->status >= 300) return HttpError(*r, "create event");
  return absl::OkStatus();
}

void ApiClusterWriter::WriteEvent(EventShard& shard, const framework::EventRecord& e, int64_t now) {
  absl::flat_hash_map<std::string, Series>& series = shard.series;
  // Isomorphic events: same object, reason, action, type, note, controller.
  std::string key = StrCat(e.regarding_kind, "\x1f", e.namespace_, "\x1f", e.name, "\x1f", e.uid,
                           "\x1f", e.reason, "\x1f", e.action, "\x1f", e.type, "\x1f",
                           e.reporting_controller, "\x1f", e.note);
  // Forget stale series now and then so the map stays small.
  if (series.size() > 4096) {
    for (auto it = series.begin(); it != series.end();) {
      if (now - it->second.last_micros > options_.series_window_micros) {
        series.erase(it++);
      } else {
        ++it;
      }
    }
  }
  auto it = series.find(key);
  if (it != series.end() && now - it->second.last_micros <= options_.series_window_micros) {
    Series& s = it->second;
    s.count++;
    s.last_micros = now;
    HttpRequest req;
    req.method = "PATCH";
    req.path = StrCat("/apis/events.k8s.io/v1/namespaces/", UrlEncode(s.namespace_), "/events/",
                      UrlEncode(s.name));
    req.content_type = "application/merge-patch+json";
    req.body =
        nlohmann::json{{"series", {{"count", s.count}, {"lastObservedTime", FormatMicroTime(now)}}}}
            .dump();
    absl::StatusOr<HttpResponse> r = events_client_.Do(CheapWrite(req), &stop_flag_);
    if (r.ok() && r->status < 300) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.events_folded;
      return;
    }
    series.erase(it);  // the event expired or was deleted: start a new one
  }
  Series s;
  absl::Status st = CreateEvent(e, now, &s.name, &s.namespace_);
  if (!st.ok()) {
    spdlog::debug("event {} on {}/{}: {}", e.reason, e.namespace_, e.name, Msg(st));
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.event_failures;
    return;
  }
  s.last_micros = now;
  series[key] = std::move(s);
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.events_created;
}

}  // namespace gantry::client
