// Runs the DRA allocator scenario files in a directory and prints
// "N passed, N failed". Usage: dra_conformance <cases-dir> [--filter substr] [-v]
//
// Case file format (multi-document YAML): Kubernetes objects (Node,
// ResourceSlice, DeviceClass, ResourceClaim with or without
// status.allocation, DeviceTaintRule) plus one document of kind
// AllocatorTest:
//
//   apiVersion: gantry.dev/v1alpha1
//   kind: AllocatorTest
//   node: node-1            # a Node in the file, or a bare node of that name
//   claims: [claim-0]       # to allocate, in order (default: unallocated claims)
//   features: {adminAccess: false, prioritizedList: false, partitionableDevices: false,
//              deviceTaints: false, consumableCapacity: false, bindingConditions: false}
//   inFlight: [{driver: d, pool: p, device: x}]   # devices being allocated
//   expect:                 # exactly one of:
//     results: {claim-0: [{request, driver, pool, device, adminAccess?, shareID?: true,
//                          consumedCapacity?: {name: qty}}]}
//     nodeSelector: {claim-0: "metadata.name In [node-1]" | null}  # optional with results
//     config: {claim-0: [{source: FromClass, requests: [..]}]}     # optional with results
//     unsatisfiable: true   # no solution on this node (upstream: nil result)
//     error: "substring"    # fatal or node error (incl. decode errors of the file)
//     maxSteps: 1000        # optional bound on search steps
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "src/api/yaml.h"
#include "src/dra/allocator.h"
#include "src/sim/loader.h"
#include "src/state/dra_state.h"

namespace {

using gantry::api::Symbol;
using nlohmann::json;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string RequirementString(const gantry::api::Requirement& r) {
  std::string s = gantry::api::SelectorOpName(r.op) == "In" ? "In" : std::string(gantry::api::SelectorOpName(r.op));
  std::string out = r.key.str() + " " + s + " [";
  for (size_t i = 0; i < r.values.size(); ++i) out += (i ? "," : "") + r.values[i].str();
  return out + "]";
}

std::string NodeSelectorString(const gantry::api::NodeSelector* sel) {
  if (sel == nullptr) return "null";
  std::vector<std::string> parts;
  for (const auto& t : sel->terms) {
    for (const auto& r : t.match_expressions) parts.push_back(RequirementString(r));
    for (const auto& r : t.match_fields) parts.push_back(RequirementString(r));
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

json ResultJson(const gantry::api::DeviceRequestAllocationResult& r) {
  json j = {{"request", r.request.str()}, {"driver", r.driver.str()}, {"pool", r.pool.str()},
            {"device", r.device.str()}};
  if (r.admin_access) j["adminAccess"] = true;
  if (!r.share_id.empty()) j["shareID"] = true;
  if (!r.consumed_capacity.empty()) {
    json cc = json::object();
    for (const auto& c : r.consumed_capacity) cc[c.name.str()] = c.value.ToString();
    j["consumedCapacity"] = cc;
  }
  return j;
}

// Runs one case; returns "" on success, else the failure description.
std::string RunCase(const std::filesystem::path& path) {
  const std::string text = ReadFile(path);
  auto docs = gantry::api::ParseYamlDocuments(text);
  if (!docs.ok()) return "yaml: " + std::string(docs.status().message());
  json test;
  for (const auto& d : *docs) {
    if (d.empty()) continue;
    json j = json::parse(d.json(), nullptr, false);
    if (j.is_object() && j.value("kind", "") == "AllocatorTest") test = j;
  }
  if (test.is_null()) return "no AllocatorTest document";
  const json expect = test.value("expect", json::object());
  const std::string want_error = expect.value("error", "");

  gantry::api::ObjectSet objects;
  gantry::sim::LoadStats stats;
  absl::Status load = gantry::sim::LoadClusterText(path.string(), text, false, &objects, &stats);
  if (!load.ok()) {
    std::string msg(load.message());
    if (!want_error.empty() && msg.find(want_error) != std::string::npos) return "";
    return "load: " + msg;
  }

  gantry::state::DraState dra;
  for (const auto& s : objects.resource_slices) dra.UpsertSlice(std::make_shared<const gantry::api::ResourceSlice>(s));
  for (const auto& c : objects.device_classes) dra.UpsertClass(std::make_shared<const gantry::api::DeviceClass>(c));
  for (const auto& r : objects.device_taint_rules)
    dra.UpsertTaintRule(std::make_shared<const gantry::api::DeviceTaintRule>(r));
  std::vector<std::shared_ptr<const gantry::api::ResourceClaim>> all_claims;
  for (const auto& c : objects.resource_claims) {
    auto p = std::make_shared<gantry::api::ResourceClaim>(c);
    if (p->meta.uid.empty()) p->meta.uid = "uid-" + p->meta.name;
    all_claims.push_back(p);
    dra.UpsertClaim(p);
  }
  int in_flight = 0;
  for (const json& d : test.value("inFlight", json::array())) {
    gantry::api::AllocationResult a;
    gantry::api::DeviceRequestAllocationResult r;
    r.request = Symbol::Intern("req");
    r.driver = Symbol::Intern(d.value("driver", ""));
    r.pool = Symbol::Intern(d.value("pool", ""));
    r.device = Symbol::Intern(d.value("device", ""));
    a.results.push_back(r);
    dra.AddInFlight("in-flight-" + std::to_string(in_flight++), a);
  }
  std::vector<std::shared_ptr<const gantry::api::ResourceClaim>> to_allocate;
  if (test.contains("claims")) {
    for (const json& n : test["claims"]) {
      bool found = false;
      for (const auto& c : all_claims) {
        if (c->meta.name == n.get<std::string>()) {
          to_allocate.push_back(c);
          found = true;
        }
      }
      if (!found) return "unknown claim " + n.get<std::string>();
    }
  } else {
    for (const auto& c : all_claims) {
      if (!c->IsAllocated()) to_allocate.push_back(c);
    }
  }
  gantry::api::Node node;
  node.meta.name = test.value("node", "node-1");
  for (const auto& n : objects.nodes) {
    if (n.meta.name == node.meta.name) node = n;
  }

  gantry::dra::AllocatorOptions opts;
  const json feat = test.value("features", json::object());
  opts.features.admin_access = feat.value("adminAccess", true);
  opts.features.prioritized_list = feat.value("prioritizedList", true);
  opts.features.partitionable_devices = feat.value("partitionableDevices", true);
  opts.features.device_taints = feat.value("deviceTaints", true);
  opts.features.consumable_capacity = feat.value("consumableCapacity", true);
  opts.features.binding_conditions = feat.value("bindingConditions", true);

  auto allocator = gantry::dra::Allocator::Create(opts, dra.Snapshot(), to_allocate);
  if (!allocator.ok()) {
    std::string msg(allocator.status().message());
    if (!want_error.empty() && msg.find(want_error) != std::string::npos) return "";
    return "fatal: " + msg;
  }
  gantry::dra::NodeAllocation out = (*allocator)->Allocate(node);
  using R = gantry::dra::NodeAllocation::Result;
  if (expect.contains("maxSteps") && out.steps > expect["maxSteps"].get<int64_t>()) {
    return "search took " + std::to_string(out.steps) + " steps";
  }
  if (!want_error.empty()) {
    if ((out.result == R::kFatal || out.result == R::kNodeError) && out.message.find(want_error) != std::string::npos)
      return "";
    return "want error containing \"" + want_error + "\", got result " + std::to_string(static_cast<int>(out.result)) +
           ": " + out.message;
  }
  if (expect.value("unsatisfiable", false)) {
    if (out.result == R::kUnsatisfiable) return "";
    std::string got = out.message;
    if (out.ok()) {
      got = "success: ";
      for (const auto& a : out.allocations)
        for (const auto& r : a.results) got += ResultJson(r).dump() + " ";
    }
    return "want unsatisfiable, got " + got;
  }
  if (!out.ok()) return "want results, got: " + out.message;
  const json want = expect.value("results", json::object());
  for (size_t i = 0; i < to_allocate.size(); ++i) {
    const std::string& name = to_allocate[i]->meta.name;
    std::vector<std::string> got_set, want_set;
    for (const auto& r : out.allocations[i].results) got_set.push_back(ResultJson(r).dump());
    for (const json& w : want.value(name, json::array())) {
      json ww = w;
      if (!ww.contains("request")) ww["request"] = "req-0";
      if (!ww.contains("driver")) ww["driver"] = "driver-a";
      if (!ww.contains("pool")) ww["pool"] = "pool-1";
      want_set.push_back(ww.dump());
    }
    std::sort(got_set.begin(), got_set.end());
    std::sort(want_set.begin(), want_set.end());
    if (got_set != want_set) {
      std::string msg = "claim " + name + ": got [";
      for (const auto& g : got_set) msg += g + " ";
      msg += "] want [";
      for (const auto& w : want_set) msg += w + " ";
      return msg + "]";
    }
    if (expect.contains("nodeSelector") && expect["nodeSelector"].contains(name)) {
      const json& ns = expect["nodeSelector"][name];
      std::string want_ns = ns.is_null() ? "null" : ns.get<std::string>();
      std::string got_ns = NodeSelectorString(out.allocations[i].node_selector.get());
      if (got_ns != want_ns) return "claim " + name + ": nodeSelector " + got_ns + ", want " + want_ns;
    }
    if (expect.contains("config") && expect["config"].contains(name)) {
      json got_cfg = json::array();
      for (const auto& c : out.allocations[i].config) {
        json reqs = json::array();
        for (auto r : c.requests) reqs.push_back(r.str());
        got_cfg.push_back({{"source", std::string(gantry::api::AllocationConfigSourceName(c.source))},
                           {"requests", reqs}});
      }
      if (got_cfg != expect["config"][name]) {
        return "claim " + name + ": config " + got_cfg.dump() + ", want " + expect["config"][name].dump();
      }
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: dra_conformance <cases-dir> [--filter substr] [-v]\n";
    return 2;
  }
  std::string filter;
  bool verbose = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) filter = argv[++i];
    if (a == "-v") verbose = true;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(argv[1])) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int passed = 0, failed = 0;
  for (const auto& f : files) {
    const std::string name = f.stem().string();
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    std::string err = RunCase(f);
    if (err.empty()) {
      ++passed;
      if (verbose) std::cout << "PASS " << name << "\n";
    } else {
      ++failed;
      std::cout << "FAIL " << name << ": " << err << "\n";
    }
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 && passed > 0 ? 0 : 1;
}
