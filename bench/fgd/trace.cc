#include "bench/fgd/trace.h"

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gantry/util/strings.h"
#include "nlohmann/json.hpp"
#include "src/sim/loader.h"

namespace gantry::fgd {
namespace {

// Published memory sizes (MiB) of the trace's public GPU models. G1/G2/G3 are
// undisclosed Alibaba codes: their devices carry no memoryMiB attribute.
const std::map<std::string, int64_t, std::less<>>& ModelMemoryMiB() {
  static const auto* m = new std::map<std::string, int64_t, std::less<>>{
      {"A10", 24576}, {"P100", 16384}, {"T4", 16384}, {"V100M16", 16384}, {"V100M32", 32768}};
  return *m;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

// A CSV table read by header name. Quoted fields do not occur in the trace
// and are rejected rather than misread.
class Table {
 public:
  static absl::StatusOr<Table> Parse(std::string_view text, std::string_view source) {
    Table t;
    t.source_ = std::string(source);
    size_t pos = 0;
    int line_no = 0;
    bool header = true;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view line =
          text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() : nl + 1;
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      if (line.find('"') != std::string_view::npos) {
        return absl::InvalidArgumentError(
            gantry::StrCat(source, ":", line_no, ": quoted CSV fields are not supported"));
      }
      std::vector<std::string_view> fields = SplitFields(line);
      if (header) {
        for (size_t i = 0; i < fields.size(); ++i) t.columns_[std::string(fields[i])] = i;
        t.width_ = fields.size();
        header = false;
        continue;
      }
      if (fields.size() != t.width_) {
        return absl::InvalidArgumentError(gantry::StrCat(source, ":", line_no, ": ", fields.size(),
                                                         " fields, the header has ", t.width_));
      }
      t.rows_.push_back(Row{line_no, std::vector<std::string>(fields.begin(), fields.end())});
    }
    if (header)
      return absl::InvalidArgumentError(gantry::StrCat(source, ": empty file (no header line)"));
    return t;
  }

  absl::Status Require(std::initializer_list<std::string_view> names) const {
    for (std::string_view n : names) {
      if (!columns_.contains(std::string(n))) {
        return absl::InvalidArgumentError(
            gantry::StrCat(source_, ":1: missing column \"", n, "\""));
      }
    }
    return absl::OkStatus();
  }
  bool Has(std::string_view name) const { return columns_.contains(std::string(name)); }
  size_t rows() const { return rows_.size(); }
  int line(size_t r) const { return rows_[r].line; }
  const std::string& Get(size_t r, std::string_view column) const {
    return rows_[r].fields[columns_.at(std::string(column))];
  }
  absl::Status Error(size_t r, std::string_view column, std::string_view message) const {
    return absl::InvalidArgumentError(
        gantry::StrCat(source_, ":", rows_[r].line, ": column \"", column, "\": ", message));
  }
  // A non-negative integer no larger than `max`.
  absl::StatusOr<int64_t> Int(size_t r, std::string_view column, int64_t max) const {
    const std::string& s = Get(r, column);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0 || v > max) {
      return Error(r, column, gantry::StrCat("\"", s, "\" is not an integer in [0, ", max, "]"));
    }
    return v;
  }

 private:
  struct Row {
    int line;
    std::vector<std::string> fields;
  };
  std::string source_;
  absl::flat_hash_map<std::string, size_t> columns_;
  size_t width_ = 0;
  std::vector<Row> rows_;
};

// A name usable as a Kubernetes object name (DNS subdomain, lower case).
bool ValidName(std::string_view s) {
  if (s.empty() || s.size() > 200) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return s.front() != '-' && s.back() != '-';
}

bool ValidModel(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_' || c == '.'))
      return false;
  }
  return true;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(gantry::StrCat(path, ": cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr int64_t kMaxCpuMilli = int64_t{1} << 40;
constexpr int64_t kMaxMemoryMiB = int64_t{1} << 40;

}  // namespace

absl::StatusOr<std::vector<TraceNode>> ParseNodeCsv(std::string_view text,
                                                    std::string_view source) {
  absl::StatusOr<Table> t = Table::Parse(text, source);
  if (!t.ok()) return t.status();
  if (absl::Status st = t->Require({"sn", "cpu_milli", "memory_mib", "gpu", "model"}); !st.ok())
    return st;
  std::vector<TraceNode> out;
  absl::flat_hash_set<std::string> seen;
  for (size_t r = 0; r < t->rows(); ++r) {
    TraceNode n;
    n.name = t->Get(r, "sn");
    if (!ValidName(n.name))
      return t->Error(r, "sn", gantry::StrCat("\"", n.name, "\" is not a valid node name"));
    if (!seen.insert(n.name).second)
      return t->Error(r, "sn", gantry::StrCat("duplicate node \"", n.name, "\""));
    auto cpu = t->Int(r, "cpu_milli", kMaxCpuMilli);
    if (!cpu.ok()) return cpu.status();
    auto mem = t->Int(r, "memory_mib", kMaxMemoryMiB);
    if (!mem.ok()) return mem.status();
    auto gpus = t->Int(r, "gpu", 128);
    if (!gpus.ok()) return gpus.status();
    n.cpu_milli = *cpu;
    n.memory_mib = *mem;
    n.gpus = static_cast<int32_t>(*gpus);
    n.model = t->Get(r, "model");
    if (n.gpus > 0 && !ValidModel(n.model)) {
      return t->Error(
          r, "model",
          gantry::StrCat("\"", n.model, "\" is not a GPU model name (node has ", n.gpus, " GPUs)"));
    }
    if (n.gpus == 0 && !n.model.empty()) return t->Error(r, "model", "set on a node without GPUs");
    out.push_back(std::move(n));
  }
  return out;
}

absl::StatusOr<std::vector<TracePod>> ParsePodCsv(std::string_view text, std::string_view source) {
  absl::StatusOr<Table> t = Table::Parse(text, source);
  if (!t.ok()) return t.status();
  if (absl::Status st = t->Require({"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"});
      !st.ok())
    return st;
  const bool has_spec = t->Has("gpu_spec");
  std::vector<TracePod> out;
  absl::flat_hash_set<std::string> seen;
  for (size_t r = 0; r < t->rows(); ++r) {
    TracePod p;
    p.name = t->Get(r, "name");
    if (!ValidName(p.name))
      return t->Error(r, "name", gantry::StrCat("\"", p.name, "\" is not a valid pod name"));
    if (!seen.insert(p.name).second)
      return t->Error(r, "name", gantry::StrCat("duplicate pod \"", p.name, "\""));
    auto cpu = t->Int(r, "cpu_milli", kMaxCpuMilli);
    if (!cpu.ok()) return cpu.status();
    auto mem = t->Int(r, "memory_mib", kMaxMemoryMiB);
    if (!mem.ok()) return mem.status();
    auto num = t->Int(r, "num_gpu", 32);
    if (!num.ok()) return num.status();
    auto milli = t->Int(r, "gpu_milli", 1000);
    if (!milli.ok()) return milli.status();
    p.cpu_milli = *cpu;
    p.memory_mib = *mem;
    p.num_gpu = static_cast<int32_t>(*num);
    p.gpu_milli = static_cast<int32_t>(*milli);
    if (p.num_gpu == 0 && p.gpu_milli != 0) {
      return t->Error(r, "gpu_milli", gantry::StrCat(p.gpu_milli, " on a pod with num_gpu 0"));
    }
    if (p.num_gpu > 0 && p.gpu_milli == 0)
      return t->Error(r, "gpu_milli", "0 on a pod that asks for GPUs");
    if (has_spec) {
      const std::string& spec = t->Get(r, "gpu_spec");
      if (!spec.empty()) {
        if (p.num_gpu == 0) return t->Error(r, "gpu_spec", "set on a pod without GPUs");
        size_t start = 0;
        while (start <= spec.size()) {
          size_t bar = spec.find('|', start);
          std::string m =
              spec.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
          if (!ValidModel(m))
            return t->Error(r, "gpu_spec", gantry::StrCat("\"", m, "\" is not a GPU model name"));
          p.gpu_spec.push_back(std::move(m));
          if (bar == std::string::npos) break;
          start = bar + 1;
        }
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

absl::StatusOr<std::vector<TraceNode>> LoadNodeCsv(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseNodeCsv(*text, path);
}

absl::StatusOr<std::vector<TracePod>> LoadPodCsv(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParsePodCsv(*text, path);
}

std::string ModelSelector(const std::vector<std::string>& models) {
  if (models.empty()) return "";
  std::string list;
  for (const std::string& m : models) {
    if (!list.empty()) list += ", ";
    list += gantry::StrCat("\"", m, "\"");
  }
  return gantry::StrCat("device.attributes[\"", kGpuDriver, "\"].model in [", list, "]");
}

absl::Status BuildCluster(const std::vector<TraceNode>& nodes, api::ObjectSet* out) {
  nlohmann::json items = nlohmann::json::array();
  items.push_back(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}});
  items.push_back(
      {{"apiVersion", "resource.k8s.io/v1"},
       {"kind", "DeviceClass"},
       {"metadata", {{"name", kGpuClass}}},
       {"spec",
        {{"selectors",
          {{{"cel",
             {{"expression", gantry::StrCat("device.driver == \"", kGpuDriver, "\"")}}}}}}}}});
  for (const TraceNode& n : nodes) {
    nlohmann::json alloc = {{"cpu", gantry::StrCat(n.cpu_milli, "m")},
                            {"memory", gantry::StrCat(n.memory_mib, "Mi")},
                            {"pods", "1001"}};
    nlohmann::json labels = {{"kubernetes.io/hostname", n.name}};
    if (!n.model.empty()) labels[std::string(kModelLabel)] = n.model;
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata", {{"name", n.name}, {"labels", labels}}},
                     {"status", {{"capacity", alloc}, {"allocatable", alloc}}}});
    if (n.gpus == 0) continue;
    nlohmann::json devices = nlohmann::json::array();
    auto mem = ModelMemoryMiB().find(n.model);
    for (int32_t i = 0; i < n.gpus; ++i) {
      nlohmann::json attrs = {{"model", {{"string", n.model}}}, {"index", {{"int", i}}}};
      if (mem != ModelMemoryMiB().end()) attrs["memoryMiB"] = {{"int", mem->second}};
      devices.push_back(
          {{"name", gantry::StrCat("gpu-", i)},
           {"attributes", attrs},
           {"allowMultipleAllocations", true},
           {"capacity",
            {{std::string(kGpuCapacity),
              {{"value", "1000"},
               {"requestPolicy",
                {{"default", "1000"}, {"validRange", {{"min", "1"}, {"step", "1"}}}}}}}}}});
    }
    items.push_back({{"apiVersion", "resource.k8s.io/v1"},
                     {"kind", "ResourceSlice"},
                     {"metadata", {{"name", gantry::StrCat(n.name, "-gpus")}}},
                     {"spec",
                      {{"driver", kGpuDriver},
                       {"nodeName", n.name},
                       {"pool", {{"name", n.name}, {"generation", 1}, {"resourceSliceCount", 1}}},
                       {"devices", devices}}}});
  }
  nlohmann::json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
  sim::LoadStats stats;
  return sim::LoadClusterText("openb-cluster", list.dump(), /*is_json=*/true, out, &stats);
}

absl::StatusOr<PodObjects> BuildPod(const TracePod& p, std::string_view name,
                                    std::string_view scheduler_name) {
  nlohmann::json items = nlohmann::json::array();
  nlohmann::json spec = {{"schedulerName", scheduler_name},
                         {"containers",
                          {{{"name", "main"},
                            {"image", "trace"},
                            {"resources",
                             {{"requests",
                               {{"cpu", gantry::StrCat(p.cpu_milli, "m")},
                                {"memory", gantry::StrCat(p.memory_mib, "Mi")}}}}}}}}};
  const std::string claim_name = gantry::StrCat(name, "-gpu");
  if (p.num_gpu > 0) {
    spec["resourceClaims"] = {{{"name", "gpu"}, {"resourceClaimName", claim_name}}};
    spec["containers"][0]["resources"]["claims"] = {{{"name", "gpu"}}};
    nlohmann::json exactly = {
        {"deviceClassName", kGpuClass},
        {"allocationMode", "ExactCount"},
        {"count", p.num_gpu},
        {"capacity", {{"requests", {{std::string(kGpuCapacity), std::to_string(p.gpu_milli)}}}}}};
    std::string sel = ModelSelector(p.gpu_spec);
    if (!sel.empty()) exactly["selectors"] = {{{"cel", {{"expression", sel}}}}};
    items.push_back(
        {{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "ResourceClaim"},
         {"metadata",
          {{"name", claim_name}, {"namespace", kNamespace}, {"uid", "claim-" + claim_name}}},
         {"spec", {{"devices", {{"requests", {{{"name", "gpu"}, {"exactly", exactly}}}}}}}}});
  }
  items.push_back(
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata",
        {{"name", name}, {"namespace", kNamespace}, {"uid", gantry::StrCat("pod-", name)}}},
       {"spec", spec}});
  nlohmann::json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
  api::ObjectSet set;
  sim::LoadStats stats;
  absl::Status st = sim::LoadClusterText(gantry::StrCat("pod ", name), list.dump(),
                                         /*is_json=*/true, &set, &stats);
  if (!st.ok()) return st;
  if (set.pods.size() != 1)
    return absl::InternalError(
        gantry::StrCat("pod ", name, ": decoded ", set.pods.size(), " pods"));
  PodObjects out;
  out.pod = std::move(set.pods[0]);
  out.claims = std::move(set.resource_claims);
  return out;
}

}  // namespace gantry::fgd
