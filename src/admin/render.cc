#include "src/admin/render.h"

#include <algorithm>
#include <vector>

#include "gantry/util/strings.h"
#include "google/protobuf/util/json_util.h"

namespace gantry::admin {
namespace {

// Left-aligned columns separated by two spaces; the last column is not padded.
std::string Table(const std::vector<std::vector<std::string>>& rows,
                  std::string_view indent = "  ") {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line(indent);
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string NodeSample(const v1::NodeGroup& g) {
  if (g.nodes_size() == 0) return "";
  std::string s;
  for (const std::string& n : g.nodes()) s += (s.empty() ? "" : ", ") + n;
  if (g.node_count() > g.nodes_size())
    s += gantry::StrCat(", ... (", g.node_count() - g.nodes_size(), " more)");
  return s;
}

std::string ReasonTable(const google::protobuf::RepeatedPtrField<v1::NodeGroup>& groups) {
  std::vector<std::vector<std::string>> rows = {{"NODES", "PLUGIN", "REASON", "EXAMPLES"}};
  for (const v1::NodeGroup& g : groups) {
    rows.push_back({gantry::StrCat(g.node_count()), g.plugin().empty() ? "-" : g.plugin(),
                    g.reason(), NodeSample(g)});
  }
  return Table(rows);
}

void RenderGroup(const v1::GroupDiagnosis& g, std::string* out) {
  gantry::StrAppend(out, "\nPodGroup ", g.key(), ": ");
  if (g.min_count() == 0 && g.message().empty() && g.domains_size() == 0 && !g.scheduled()) {
    gantry::StrAppend(out, "no group cycle yet\n");
  } else {
    const char* source =
        g.recorded() ? "recorded by the scheduler" : "run on demand on a copy of the cluster";
    if (g.scheduled()) {
      gantry::StrAppend(out, "scheduled (", source, "), ", g.placed(), " member(s) placed",
                        g.domain().empty() ? "" : " in " + g.domain(), "\n");
    } else {
      gantry::StrAppend(out, "not scheduled (", source, "; minCount ", g.min_count(), ")\n  ",
                        g.message(), "\n");
    }
  }
  if (g.domains_size() > 0) {
    gantry::StrAppend(out, "Domains tried:\n");
    std::vector<std::vector<std::string>> rows = {{"DOMAIN", "FIT", "QUORUM", "WHY NOT"}};
    for (const v1::DomainTrial& d : g.domains()) {
      rows.push_back({d.domain().empty() ? "(whole cluster)" : d.domain(),
                      gantry::StrCat(d.placed()), d.satisfied() ? "yes" : "no",
                      d.satisfied() ? "" : d.failure()});
    }
    *out += Table(rows);
  }
  if (g.members_size() > 0) {
    gantry::StrAppend(out, "Members:\n");
    std::vector<std::vector<std::string>> rows = {{"POD", "NODE", "WHY NOT"}};
    for (const v1::GroupMember& m : g.members()) {
      rows.push_back(
          {m.pod(), m.node().empty() ? "-" : m.node(), m.node().empty() ? m.failure() : ""});
    }
    *out += Table(rows);
  }
}

}  // namespace

std::string RenderExplain(const v1::ExplainResponse& r) {
  std::string out;
  if (!r.pod().empty()) {
    gantry::StrAppend(&out, "Pod ", r.pod(), ": ", r.phase(),
                      r.node().empty() ? "" : " on " + r.node(), "\n");
    const v1::Attempt& a = r.last_attempt();
    if (a.result().empty()) {
      gantry::StrAppend(&out, "No scheduling attempt recorded.\n");
    } else {
      gantry::StrAppend(
          &out, "Last attempt (",
          r.recorded() ? "recorded by the scheduler" : "run on demand on a copy of the cluster",
          a.attempts() > 1 ? gantry::StrCat(", ", a.attempts(), " failed attempts") : "",
          "): ", a.result(), a.node().empty() ? "" : " on " + a.node(), "\n");
      if (!a.message().empty()) gantry::StrAppend(&out, "  ", a.message(), "\n");
      if (!a.nominated_node().empty())
        gantry::StrAppend(&out, "  nominated node: ", a.nominated_node(), "\n");
    }
    if (a.filtered_size() > 0) {
      gantry::StrAppend(&out, "\nNodes filtered out (", a.num_all_nodes(),
                        " node(s) considered):\n");
      out += ReasonTable(a.filtered());
    }
    const v1::DeviceDiagnosis& d = r.devices();
    if (d.requests_size() > 0) {
      gantry::StrAppend(&out, "\nDevice requests (DRA):\n");
      std::vector<std::vector<std::string>> rows = {
          {"CLAIM", "REQUEST", "CLASS", "MODE", "COUNT", "ALLOCATED", "SELECTORS"}};
      for (const v1::DeviceRequest& q : d.requests()) {
        std::string sel;
        for (const std::string& s : q.selectors()) sel += (sel.empty() ? "" : " && ") + s;
        for (const std::string& s : q.subrequests())
          sel += (sel.empty() ? "firstAvailable: " : "; ") + s;
        rows.push_back({q.claim().empty() ? q.pod_claim() + " (not created)" : q.claim(),
                        q.request().empty() ? "-" : q.request(), q.device_class(),
                        q.allocation_mode(), gantry::StrCat(q.count()),
                        q.allocated() ? "yes" : "no", sel});
      }
      out += Table(rows);
      for (const std::string& c : d.constraints())
        gantry::StrAppend(&out, "  constraint ", c, "\n");
      if (d.nodes_size() > 0) {
        gantry::StrAppend(&out, "DynamicResources verdicts:\n");
        out += ReasonTable(d.nodes());
      }
    }
    if (r.candidates_size() > 0) {
      gantry::StrAppend(&out, "\nBest candidates (", r.feasible_nodes(),
                        " feasible node(s) on the current state):\n");
      std::vector<std::vector<std::string>> rows = {{"NODE", "TOTAL"}};
      for (const v1::PluginScore& s : r.candidates(0).scores()) rows[0].push_back(s.plugin());
      for (const v1::Candidate& c : r.candidates()) {
        std::vector<std::string> row = {c.node(), gantry::StrCat(c.total())};
        for (const v1::PluginScore& s : c.scores()) row.push_back(gantry::StrCat(s.score()));
        rows.push_back(std::move(row));
      }
      out += Table(rows);
    } else if (r.phase() == "Pending") {
      gantry::StrAppend(&out,
                        "\nNo node is feasible for this pod on its own on the current state.\n");
    }
  }
  if (!r.group().key().empty()) RenderGroup(r.group(), &out);
  return out;
}

std::string RenderWhatIf(const v1::WhatIfResponse& r) {
  std::string out = gantry::StrCat("What-if (", r.source(), "): ", r.scheduled(), " pod(s) fit, ",
                                   r.unschedulable(), " do not\n");
  std::vector<std::vector<std::string>> rows = {{"POD", "NODE", "WHY NOT"}};
  for (const v1::Placement& p : r.placements())
    rows.push_back({p.pod(), p.node().empty() ? "-" : p.node(), p.message()});
  out += Table(rows);
  if (r.groups_size() > 0) {
    out += "PodGroups:\n";
    std::vector<std::vector<std::string>> g = {
        {"GROUP", "SCHEDULED", "PLACED", "DOMAIN", "MESSAGE"}};
    for (const v1::GroupResult& x : r.groups()) {
      g.push_back({x.key(), x.scheduled() ? "yes" : "no", gantry::StrCat(x.placed()),
                   x.domain().empty() ? "-" : x.domain(), x.message()});
    }
    out += Table(g);
  }
  if (r.allocations_size() > 0) {
    out += "Device allocations:\n";
    std::vector<std::vector<std::string>> a = {{"CLAIM", "REQUEST", "DEVICE"}};
    for (const v1::Allocation& x : r.allocations()) {
      for (const v1::AllocatedDevice& d : x.devices()) {
        a.push_back(
            {x.claim(), d.request(), gantry::StrCat(d.driver(), "/", d.pool(), "/", d.device())});
      }
    }
    out += Table(a);
  }
  return out;
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  auto st = google::protobuf::util::MessageToJsonString(message, &out, opts);
  if (!st.ok()) return absl::InternalError(std::string(st.message()));
  return out;
}

}  // namespace gantry::admin
