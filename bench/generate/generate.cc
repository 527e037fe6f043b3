#include "bench/generate/generate.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gantry/util/strings.h"

namespace gantry::bench {
namespace {

// Streams nested maps, sequences and scalars as JSON or block-style YAML.
// Each top-level object is one item of a JSON `kind: List` or one YAML
// document. Callers pair every Begin* with its End*; a map value must follow
// each Key(). Sequences of sequences are not supported (not needed here).
class Emitter {
 public:
  Emitter(OutputFormat format, std::ostream& out) : json_(format == OutputFormat::kJson), out_(out) {}

  void BeginStream(std::string_view comment) {
    if (json_) {
      buf_ += R"({"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[)";
      frames_.push_back(Frame{false, 0, 0, false, false});
    } else {
      gantry::StrAppend(&buf_, "# ", comment, "\n");
    }
  }
  void EndStream() {
    if (json_) {
      frames_.pop_back();
      buf_ += "\n]}\n";
    }
    Flush();
  }

  void BeginObject() {
    if (json_) {
      if (frames_.back().count > 0) buf_ += ',';
      buf_ += '\n';
      frames_.back().count++;
      buf_ += '{';
      frames_.push_back(Frame{true, 0, 0, false, false});
    } else {
      if (objects_ > 0) buf_ += "---\n";
      frames_.push_back(Frame{true, 0, 0, false, false});
    }
    ++objects_;
  }
  void EndObject() {
    frames_.pop_back();
    if (json_) buf_ += '}';
    if (buf_.size() > (1 << 20)) Flush();
  }

  void Key(std::string_view key) {
    Frame& f = frames_.back();
    if (json_) {
      if (f.count > 0) buf_ += ',';
      AppendJsonString(key);
      buf_ += ':';
    } else if (f.count == 0 && f.in_seq_item) {
      buf_.append(static_cast<size_t>(f.indent - 2), ' ');
      buf_ += "- ";
      AppendYamlScalar(key);
      buf_ += ':';
    } else {
      OpenIfNeeded(f);
      buf_.append(static_cast<size_t>(f.indent), ' ');
      AppendYamlScalar(key);
      buf_ += ':';
    }
    f.count++;
  }

  void BeginMap() {
    if (json_) {
      JsonValuePrefix();
      buf_ += '{';
      frames_.push_back(Frame{true, 0, 0, false, false});
      return;
    }
    Frame& parent = frames_.back();
    if (parent.is_map) {
      frames_.push_back(Frame{true, parent.indent + 2, 0, true, false});
    } else {
      OpenIfNeeded(parent);
      parent.count++;
      frames_.push_back(Frame{true, parent.indent + 2, 0, false, true});
    }
  }
  void EndMap() {
    Frame f = frames_.back();
    frames_.pop_back();
    if (json_) {
      buf_ += '}';
    } else if (f.count == 0) {
      if (f.after_key) {
        buf_ += " {}\n";
      } else {
        buf_.append(static_cast<size_t>(f.indent - 2), ' ');
        buf_ += "- {}\n";
      }
    }
  }

  void BeginSeq() {
    if (json_) {
      JsonValuePrefix();
      buf_ += '[';
      frames_.push_back(Frame{false, 0, 0, false, false});
      return;
    }
    // kubectl style: items of a sequence value sit at the key's indentation.
    frames_.push_back(Frame{false, frames_.back().indent, 0, true, false});
  }
  void EndSeq() {
    Frame f = frames_.back();
    frames_.pop_back();
    if (json_) {
      buf_ += ']';
    } else if (f.count == 0) {
      buf_ += " []\n";
    }
  }

  void Str(std::string_view s) {
    if (json_) {
      JsonValuePrefix();
      AppendJsonString(s);
    } else {
      YamlScalarPrefix();
      AppendYamlScalar(s);
      buf_ += '\n';
    }
  }
  void Int(int64_t v) {
    if (json_) {
      JsonValuePrefix();
    } else {
      YamlScalarPrefix();
    }
    gantry::StrAppend(&buf_, v);
    if (!json_) buf_ += '\n';
  }
  void Bool(bool v) {
    if (json_) {
      JsonValuePrefix();
    } else {
      YamlScalarPrefix();
    }
    buf_ += v ? "true" : "false";
    if (!json_) buf_ += '\n';
  }

  void KV(std::string_view k, std::string_view v) {
    Key(k);
    Str(v);
  }
  void KVInt(std::string_view k, int64_t v) {
    Key(k);
    Int(v);
  }

  bool Flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
    return static_cast<bool>(out_);
  }

 private:
  struct Frame {
    bool is_map;
    int indent;        // YAML: column of keys ("- " for sequences)
    int count;         // entries written so far
    bool after_key;    // YAML: the value of a key (opens on a new line)
    bool in_seq_item;  // YAML: a map that is a sequence item ("- k: v")
  };

  void OpenIfNeeded(const Frame& f) {
    if (f.count == 0 && f.after_key) buf_ += '\n';
  }
  void JsonValuePrefix() {
    Frame& f = frames_.back();
    if (f.is_map) return;  // Key() wrote the separator
    if (f.count > 0) buf_ += ',';
    f.count++;
  }
  void YamlScalarPrefix() {
    Frame& f = frames_.back();
    if (f.is_map) {
      buf_ += ' ';
      return;
    }
    OpenIfNeeded(f);
    buf_.append(static_cast<size_t>(f.indent), ' ');
    buf_ += "- ";
    f.count++;
  }

  void AppendJsonString(std::string_view s) {
    buf_ += '"';
    for (char c : s) {
      switch (c) {
        case '"': buf_ += "\\\""; break;
        case '\\': buf_ += "\\\\"; break;
        case '\n': buf_ += "\\n"; break;
        case '\t': buf_ += "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            buf_ += absl::StrFormat("\\u%04x", c);
          } else {
            buf_ += c;
          }
      }
    }
    buf_ += '"';
  }

  // Plain when unambiguous as a YAML string; double-quoted otherwise.
  void AppendYamlScalar(std::string_view s) {
    if (IsPlainSafe(s)) {
      buf_ += s;
    } else if (s.find('\'') == std::string_view::npos &&
               std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
      buf_ += '\'';  // single quotes keep CEL expressions readable
      buf_ += s;
      buf_ += '\'';
    } else {
      AppendJsonString(s);  // a JSON string is a valid YAML double-quoted scalar
    }
  }
  static bool IsPlainSafe(std::string_view s) {
    if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' || c == '-')) {
        return false;
      }
    }
    std::string lower(s);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* kw : {"true", "false", "null", "yes", "no", "on", "off", "y", "n"}) {
      if (lower == kw) return false;
    }
    return true;
  }

  bool json_;
  std::ostream& out_;
  std::string buf_;
  std::vector<Frame> frames_;
  int64_t objects_ = 0;
};

// {cpu: "4", memory: "32Gi", ...} from name/value pairs.
void ResourceMap(Emitter& e, std::initializer_list<std::pair<std::string_view, std::string_view>> kv) {
  e.BeginMap();
  for (const auto& [k, v] : kv) e.KV(k, v);
  e.EndMap();
}

void ReadyConditions(Emitter& e) {
  e.Key("conditions");
  e.BeginSeq();
  e.BeginMap();
  e.KV("type", "Ready");
  e.KV("status", "True");
  e.EndMap();
  e.EndSeq();
}

void Metadata(Emitter& e, std::string_view name, std::string_view ns,
              std::initializer_list<std::pair<std::string_view, std::string_view>> labels) {
  e.Key("metadata");
  e.BeginMap();
  e.KV("name", name);
  if (!ns.empty()) e.KV("namespace", ns);
  if (labels.size() > 0) {
    e.Key("labels");
    ResourceMap(e, labels);
  }
  e.EndMap();
}

// --- scheduler_perf-style ---------------------------------------------------

void PerfNode(Emitter& e, int i, int zones) {
  const std::string name = gantry::StrCat("node-", i);
  const std::string zone = gantry::StrCat("zone-", i % zones);
  e.BeginObject();
  e.KV("apiVersion", "v1");
  e.KV("kind", "Node");
  Metadata(e, name, "",
           {{"kubernetes.io/hostname", name}, {"kubernetes.io/os", "linux"}, {"topology.kubernetes.io/zone", zone}});
  e.Key("status");
  e.BeginMap();
  e.Key("capacity");
  ResourceMap(e, {{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}});
  e.Key("allocatable");
  ResourceMap(e, {{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}});
  ReadyConditions(e);
  e.EndMap();
  e.EndObject();
}

void PerfPod(Emitter& e, std::string_view name, const PerfClusterOptions& o, std::string_view node_name) {
  e.BeginObject();
  e.KV("apiVersion", "v1");
  e.KV("kind", "Pod");
  Metadata(e, name, o.pod_namespace, {{"app", "perf"}});
  e.Key("spec");
  e.BeginMap();
  e.KV("schedulerName", o.scheduler_name);
  if (!node_name.empty()) e.KV("nodeName", node_name);
  e.Key("containers");
  e.BeginSeq();
  e.BeginMap();
  e.KV("name", "pause");
  e.KV("image", "registry.k8s.io/pause:3.10");
  e.Key("resources");
  e.BeginMap();
  e.Key("requests");
  ResourceMap(e, {{"cpu", "100m"}, {"memory", "500Mi"}});
  e.EndMap();
  e.EndMap();
  e.EndSeq();
  e.EndMap();
  e.Key("status");
  e.BeginMap();
  e.KV("phase", node_name.empty() ? "Pending" : "Running");
  e.EndMap();
  e.EndObject();
}

// --- AI clusters --------------------------------------------------------------

constexpr std::string_view kGpuDriver = "gpu.example.com";
constexpr std::string_view kNicClass = "nic.example.com";

std::string_view GpuMemory(std::string_view model) {
  if (model == "H100" || model == "H200") return "80Gi";
  if (model == "A100") return "40Gi";
  return "48Gi";
}

void DeviceClass(Emitter& e, std::string_view name, std::string_view type) {
  e.BeginObject();
  e.KV("apiVersion", "resource.k8s.io/v1");
  e.KV("kind", "DeviceClass");
  Metadata(e, name, "", {});
  e.Key("spec");
  e.BeginMap();
  e.Key("selectors");
  e.BeginSeq();
  e.BeginMap();
  e.Key("cel");
  e.BeginMap();
  e.KV("expression", gantry::StrCat("device.driver == \"", kGpuDriver, "\" && device.attributes[\"", kGpuDriver,
                                    "\"].type == \"", type, "\""));
  e.EndMap();
  e.EndMap();
  e.EndSeq();
  e.EndMap();
  e.EndObject();
}

void Attr(Emitter& e, std::string_view name, std::string_view type, std::string_view value) {
  e.Key(name);
  e.BeginMap();
  e.KV(type, value);
  e.EndMap();
}
void IntAttr(Emitter& e, std::string_view name, int64_t value) {
  e.Key(name);
  e.BeginMap();
  e.KVInt("int", value);
  e.EndMap();
}

std::string PcieRoot(int root) { return absl::StrFormat("pci0000:%02x", root); }

void ResourceSlice(Emitter& e, const std::string& node, std::string_view model, const AiClusterOptions& o) {
  e.BeginObject();
  e.KV("apiVersion", "resource.k8s.io/v1");
  e.KV("kind", "ResourceSlice");
  Metadata(e, gantry::StrCat(node, "-", kGpuDriver), "", {});
  e.Key("spec");
  e.BeginMap();
  e.KV("driver", kGpuDriver);
  e.Key("pool");
  e.BeginMap();
  e.KV("name", node);
  e.KVInt("generation", 1);
  e.KVInt("resourceSliceCount", 1);
  e.EndMap();
  e.KV("nodeName", node);
  e.Key("devices");
  e.BeginSeq();
  // Two GPUs per PCIe root, half of the GPUs per NUMA node.
  const int gpus = o.gpus_per_node;
  for (int i = 0; i < gpus; ++i) {
    e.BeginMap();
    e.KV("name", gantry::StrCat("gpu-", i));
    e.Key("attributes");
    e.BeginMap();
    Attr(e, "type", "string", "gpu");
    Attr(e, "model", "string", model);
    IntAttr(e, "index", i);
    IntAttr(e, "numaNode", gpus > 1 ? (2 * i) / gpus : 0);
    Attr(e, "resource.kubernetes.io/pcieRoot", "string", PcieRoot(i / 2));
    e.EndMap();
    e.Key("capacity");
    e.BeginMap();
    e.Key("memory");
    e.BeginMap();
    e.KV("value", GpuMemory(model));
    e.EndMap();
    e.EndMap();
    e.EndMap();
  }
  // NICs spread evenly over the GPUs' PCIe roots.
  const int roots = (gpus + 1) / 2;
  for (int j = 0; j < o.nics_per_node; ++j) {
    const int root = o.nics_per_node > 0 ? (j * roots) / o.nics_per_node : 0;
    e.BeginMap();
    e.KV("name", gantry::StrCat("nic-", j));
    e.Key("attributes");
    e.BeginMap();
    Attr(e, "type", "string", "nic");
    Attr(e, "model", "string", "ConnectX-7");
    IntAttr(e, "numaNode", roots > 1 ? (2 * root) / roots : 0);
    Attr(e, "resource.kubernetes.io/pcieRoot", "string", PcieRoot(root));
    e.Key("rdma");
    e.BeginMap();
    e.Key("bool");
    e.Bool(true);
    e.EndMap();
    e.EndMap();
    e.Key("capacity");
    e.BeginMap();
    e.Key("bandwidth");
    e.BeginMap();
    e.KV("value", "400G");
    e.EndMap();
    e.EndMap();
    e.EndMap();
  }
  e.EndSeq();
  e.EndMap();
  e.EndObject();
}

void AiNode(Emitter& e, const std::string& name, int zone, int rack, std::string_view model) {
  e.BeginObject();
  e.KV("apiVersion", "v1");
  e.KV("kind", "Node");
  const std::string zone_name = gantry::StrCat("zone-", zone);
  const std::string rack_name = gantry::StrCat("rack-", zone, "-", rack);
  Metadata(e, name, "",
           {{"example.com/gpu.product", model},
            {"example.com/rack", rack_name},
            {"kubernetes.io/hostname", name},
            {"topology.kubernetes.io/zone", zone_name}});
  e.Key("status");
  e.BeginMap();
  e.Key("capacity");
  ResourceMap(e, {{"cpu", "96"}, {"memory", "1Ti"}, {"pods", "110"}, {"ephemeral-storage", "2Ti"}});
  e.Key("allocatable");
  ResourceMap(e, {{"cpu", "96"}, {"memory", "1Ti"}, {"pods", "110"}, {"ephemeral-storage", "2Ti"}});
  ReadyConditions(e);
  e.EndMap();
  e.EndObject();
}

// One device request {name, exactly: {deviceClassName, allocationMode, count, selectors}}.
void ExactRequest(Emitter& e, std::string_view name, std::string_view device_class, int count,
                  std::string_view cel) {
  e.BeginMap();
  e.KV("name", name);
  e.Key("exactly");
  e.BeginMap();
  e.KV("deviceClassName", device_class);
  e.KV("allocationMode", "ExactCount");
  e.KVInt("count", count);
  if (!cel.empty()) {
    e.Key("selectors");
    e.BeginSeq();
    e.BeginMap();
    e.Key("cel");
    e.BeginMap();
    e.KV("expression", cel);
    e.EndMap();
    e.EndMap();
    e.EndSeq();
  }
  e.EndMap();
  e.EndMap();
}

void ClaimTemplateHeader(Emitter& e, std::string_view name, std::string_view ns) {
  e.BeginObject();
  e.KV("apiVersion", "resource.k8s.io/v1");
  e.KV("kind", "ResourceClaimTemplate");
  Metadata(e, name, ns, {});
  e.Key("spec");
  e.BeginMap();
  e.Key("spec");
  e.BeginMap();
  e.Key("devices");
  e.BeginMap();
}
void ClaimTemplateFooter(Emitter& e) {
  e.EndMap();  // devices
  e.EndMap();  // spec.spec
  e.EndMap();  // spec
  e.EndObject();
}

void TrainingClaimTemplate(Emitter& e, std::string_view name, std::string_view ns, std::string_view model,
                           int count) {
  ClaimTemplateHeader(e, name, ns);
  e.Key("requests");
  e.BeginSeq();
  ExactRequest(e, "gpus", kGpuDriver, count,
               gantry::StrCat("device.attributes[\"", kGpuDriver, "\"].model == \"", model, "\" && device.capacity[\"",
                              kGpuDriver, "\"].memory.compareTo(quantity(\"", GpuMemory(model), "\")) >= 0"));
  e.EndSeq();
  ClaimTemplateFooter(e);
}

void InferenceClaimTemplate(Emitter& e, std::string_view name, std::string_view ns) {
  ClaimTemplateHeader(e, name, ns);
  e.Key("requests");
  e.BeginSeq();
  ExactRequest(e, "gpu", kGpuDriver, 1,
               gantry::StrCat("device.capacity[\"", kGpuDriver, "\"].memory.compareTo(quantity(\"40Gi\")) >= 0"));
  ExactRequest(e, "nic", kNicClass, 1,
               gantry::StrCat("device.attributes[\"", kGpuDriver, "\"].?rdma.orValue(false)"));
  e.EndSeq();
  e.Key("constraints");
  e.BeginSeq();
  e.BeginMap();
  e.Key("requests");
  e.BeginSeq();
  e.Str("gpu");
  e.Str("nic");
  e.EndSeq();
  e.KV("matchAttribute", "resource.kubernetes.io/pcieRoot");
  e.EndMap();
  e.EndSeq();
  ClaimTemplateFooter(e);
}

void PodGroup(Emitter& e, std::string_view name, std::string_view ns, int min_count) {
  e.BeginObject();
  e.KV("apiVersion", "scheduling.k8s.io/v1beta1");
  e.KV("kind", "PodGroup");
  Metadata(e, name, ns, {});
  e.Key("spec");
  e.BeginMap();
  e.Key("schedulingPolicy");
  e.BeginMap();
  e.Key("gang");
  e.BeginMap();
  e.KVInt("minCount", min_count);
  e.EndMap();
  e.EndMap();
  e.EndMap();
  e.EndObject();
}

struct AiPodSpec {
  std::string name;
  std::string_view label_key, label_value;
  std::string_view pod_group;  // empty: none
  std::string_view claim_name;
  std::string claim_template;
  std::string_view image, cpu, memory;
  int64_t priority = 0;
};

void AiPod(Emitter& e, const AiPodSpec& p, const AiClusterOptions& o) {
  e.BeginObject();
  e.KV("apiVersion", "v1");
  e.KV("kind", "Pod");
  Metadata(e, p.name, o.pod_namespace, {{p.label_key, p.label_value}});
  e.Key("spec");
  e.BeginMap();
  e.KV("schedulerName", o.scheduler_name);
  if (p.priority != 0) e.KVInt("priority", p.priority);
  if (!p.pod_group.empty()) {
    e.Key("schedulingGroup");
    e.BeginMap();
    e.KV("podGroupName", p.pod_group);
    e.EndMap();
  }
  e.Key("resourceClaims");
  e.BeginSeq();
  e.BeginMap();
  e.KV("name", p.claim_name);
  e.KV("resourceClaimTemplateName", p.claim_template);
  e.EndMap();
  e.EndSeq();
  e.Key("containers");
  e.BeginSeq();
  e.BeginMap();
  e.KV("name", "main");
  e.KV("image", p.image);
  e.Key("resources");
  e.BeginMap();
  e.Key("requests");
  ResourceMap(e, {{"cpu", p.cpu}, {"memory", p.memory}});
  e.Key("claims");
  e.BeginSeq();
  e.BeginMap();
  e.KV("name", p.claim_name);
  e.EndMap();
  e.EndSeq();
  e.EndMap();
  e.EndMap();
  e.EndSeq();
  e.EndMap();
  e.EndObject();
}

absl::Status StreamStatus(Emitter& e) {
  if (!e.Flush()) return absl::UnavailableError("writing the snapshot failed");
  return absl::OkStatus();
}

}  // namespace

OutputFormat FormatForPath(std::string_view path) {
  return path.ends_with(".json") ? OutputFormat::kJson : OutputFormat::kYaml;
}

absl::Status WritePerfCluster(const PerfClusterOptions& o, OutputFormat format, std::ostream& out) {
  if (o.nodes < 0 || o.pods < 0 || o.bound_pods < 0 || o.zones < 1) {
    return absl::InvalidArgumentError("nodes, pods and bound pods must be >= 0 and zones >= 1");
  }
  if (o.bound_pods > 0 && o.nodes == 0) return absl::InvalidArgumentError("bound pods need at least one node");
  Emitter e(format, out);
  e.BeginStream(absl::StrFormat("scheduler_perf-style cluster: %d nodes (4 CPU / 32Gi / 110 pods), %d pending "
                                "pods (100m / 500Mi), %d bound pods",
                                o.nodes, o.pods, o.bound_pods));
  for (int i = 0; i < o.nodes; ++i) PerfNode(e, i, o.zones);
  for (int i = 0; i < o.bound_pods; ++i) {
    PerfPod(e, gantry::StrCat("existing-", i), o, gantry::StrCat("node-", i % o.nodes));
  }
  for (int i = 0; i < o.pods; ++i) PerfPod(e, gantry::StrCat("pod-", i), o, "");
  e.EndStream();
  return StreamStatus(e);
}

absl::Status WriteAiCluster(const AiClusterOptions& o, OutputFormat format, std::ostream& out) {
  if (o.zones < 1 || o.racks_per_zone < 1 || o.nodes_per_rack < 1) {
    return absl::InvalidArgumentError("zones, racks per zone and nodes per rack must be >= 1");
  }
  if (o.gpus_per_node < 1 || o.gpus_per_node + o.nics_per_node > 128 || o.nics_per_node < 0) {
    return absl::InvalidArgumentError("a node needs 1..128 devices (GPUs + NICs) in its ResourceSlice");
  }
  if (o.gpus_per_worker < 1 || o.gpus_per_worker > 32) {
    return absl::InvalidArgumentError("gpus per worker must be in 1..32 (the claim limit)");
  }
  if (o.gangs < 0 || o.gang_size < 1 || o.inference_pods < 0 || o.gpu_models.empty()) {
    return absl::InvalidArgumentError("gangs and inference pods must be >= 0, gang size >= 1, and a GPU model given");
  }
  std::mt19937_64 rng(o.seed);
  const int nodes = o.zones * o.racks_per_zone * o.nodes_per_rack;
  Emitter e(format, out);
  e.BeginStream(absl::StrFormat(
      "AI cluster: %d GPU nodes (%d zones x %d racks x %d nodes, %d GPUs + %d NICs each as ResourceSlices), "
      "%d gangs of %d, %d inference pods; seed %d",
      nodes, o.zones, o.racks_per_zone, o.nodes_per_rack, o.gpus_per_node, o.nics_per_node, o.gangs, o.gang_size,
      o.inference_pods, o.seed));
  DeviceClass(e, kGpuDriver, "gpu");
  DeviceClass(e, kNicClass, "nic");
  // Nodes and their slices; one GPU model per rack.
  std::vector<std::string> models_in_use;
  for (int z = 0; z < o.zones; ++z) {
    for (int r = 0; r < o.racks_per_zone; ++r) {
      const std::string& model = o.gpu_models[rng() % o.gpu_models.size()];
      if (std::find(models_in_use.begin(), models_in_use.end(), model) == models_in_use.end()) {
        models_in_use.push_back(model);
      }
      for (int n = 0; n < o.nodes_per_rack; ++n) {
        const std::string name = absl::StrFormat("gpu-z%d-r%d-n%d", z, r, n);
        AiNode(e, name, z, r, model);
        ResourceSlice(e, name, model, o);
      }
    }
  }
  // Gangs: a claim template and a PodGroup each, then the workers.
  for (int g = 0; g < o.gangs; ++g) {
    const std::string job = gantry::StrCat("train-", g);
    const std::string& model = models_in_use[rng() % models_in_use.size()];
    TrainingClaimTemplate(e, gantry::StrCat(job, "-gpus"), o.pod_namespace, model,
                          std::min(o.gpus_per_worker, o.gpus_per_node));
    PodGroup(e, job, o.pod_namespace, o.gang_size);
    for (int w = 0; w < o.gang_size; ++w) {
      AiPodSpec p;
      p.name = gantry::StrCat(job, "-worker-", w);
      p.label_key = "job";
      p.label_value = job;
      p.pod_group = job;
      p.claim_name = "gpus";
      p.claim_template = gantry::StrCat(job, "-gpus");
      p.image = "registry.example.com/trainer:2.0";
      p.cpu = "32";
      p.memory = "256Gi";
      p.priority = 1000;
      AiPod(e, p, o);
    }
  }
  if (o.inference_pods > 0) InferenceClaimTemplate(e, "infer-gpu-nic", o.pod_namespace);
  for (int i = 0; i < o.inference_pods; ++i) {
    static constexpr std::string_view kCpu[] = {"4", "8", "16"};
    static constexpr std::string_view kMemory[] = {"32Gi", "64Gi", "128Gi"};
    const size_t size = rng() % 3;
    AiPodSpec p;
    p.name = gantry::StrCat("infer-", i);
    p.label_key = "app";
    p.label_value = "infer";
    p.claim_name = "gpu";
    p.claim_template = "infer-gpu-nic";
    p.image = "registry.example.com/llm-server:1.4";
    p.cpu = kCpu[size];
    p.memory = kMemory[size];
    AiPod(e, p, o);
  }
  e.EndStream();
  return StreamStatus(e);
}

}  // namespace gantry::bench
