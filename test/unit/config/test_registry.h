// A plugin registry for configuration tests: every default plugin name (the
// pending ones optionally), a few custom names, and two args defaulters
// shaped like upstream's NodeResourcesFitArgs and InterPodAffinityArgs.
#ifndef GANTRY_TEST_UNIT_CONFIG_TEST_REGISTRY_H_
#define GANTRY_TEST_UNIT_CONFIG_TEST_REGISTRY_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gantry/registry.h"
#include "gantry/util/strings.h"
#include "nlohmann/json.hpp"
#include "src/api/decode.h"

namespace gantry::config::testing {

inline nlohmann::json FitArgs(api::Decoder& d, api::JsonValue args) {
  std::string type = "LeastAllocated";
  nlohmann::json resources = nlohmann::json::array();
  nlohmann::json ignored = nlohmann::json::array();
  d.ForEachField(args, [&](std::string_view key, api::JsonValue v) {
    if (key == "scoringStrategy") {
      d.ForEachField(v, [&](std::string_view k, api::JsonValue sv) {
        if (k == "type") {
          type = std::string(d.String(sv));
          if (type != "LeastAllocated" && type != "MostAllocated" && type != "RequestedToCapacityRatio") {
            d.Fail(gantry::StrCat("Unsupported value: \"", type,
                                  "\": supported values: \"LeastAllocated\", \"MostAllocated\", "
                                  "\"RequestedToCapacityRatio\""));
          }
        } else if (k == "resources") {
          d.ForEachItem(sv, [&](size_t, api::JsonValue item) {
            std::string name;
            int64_t weight = 0;
            d.ForEachField(item, [&](std::string_view rk, api::JsonValue rv) {
              if (rk == "name") {
                name = std::string(d.String(rv));
              } else if (rk == "weight") {
                weight = d.IntInRange(rv, 0, 100);
              } else {
                d.Fail(gantry::StrCat("unknown field \"", rk, "\""));
              }
            });
            resources.push_back({{"name", name}, {"weight", weight == 0 ? 1 : weight}});
          });
        } else {
          d.Fail(gantry::StrCat("unknown field \"", k, "\""));
        }
      });
    } else if (key == "ignoredResources") {
      for (const std::string& s : d.StringList(v)) ignored.push_back(s);
    } else {
      d.Fail(gantry::StrCat("unknown field \"", key, "\""));
    }
  });
  if (resources.empty()) {
    resources = {{{"name", "cpu"}, {"weight", 1}}, {{"name", "memory"}, {"weight", 1}}};
  }
  nlohmann::json out = {{"scoringStrategy", {{"type", type}, {"resources", resources}}}};
  if (!ignored.empty()) out["ignoredResources"] = ignored;
  return out;
}

inline nlohmann::json InterPodAffinityArgs(api::Decoder& d, api::JsonValue args) {
  int64_t hard = 1;
  bool ignore = false;
  d.ForEachField(args, [&](std::string_view key, api::JsonValue v) {
    if (key == "hardPodAffinityWeight") {
      hard = d.IntInRange(v, 0, 100);
    } else if (key == "ignorePreferredTermsOfExistingPods") {
      ignore = d.Bool(v);
    } else {
      d.Fail(gantry::StrCat("unknown field \"", key, "\""));
    }
  });
  return {{"hardPodAffinityWeight", hard}, {"ignorePreferredTermsOfExistingPods", ignore}};
}

inline const std::vector<std::string_view>& PendingPluginNames() {
  static const std::vector<std::string_view> names = {"VolumeBinding",    "VolumeRestrictions",
                                                      "NodeVolumeLimits", "VolumeZone",
                                                      "DynamicResources", "DefaultPreemption"};
  return names;
}

inline framework::Registry TestRegistry(bool with_pending = false) {
  framework::Registry r;
  std::vector<std::string_view> names = {
      "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration",
      "NodeAffinity", "NodePorts", "PodTopologySpread", "NodeResourcesBalancedAllocation",
      "ImageLocality", "DefaultBinder", "MyPlugin", "CustomQueueSort", "CustomPlugin1",
      "CustomPlugin2"};
  if (with_pending) names.insert(names.end(), PendingPluginNames().begin(), PendingPluginNames().end());
  for (std::string_view n : names) {
    framework::PluginRegistration reg;
    reg.name = std::string(n);
    (void)r.Register(std::move(reg));
  }
  framework::PluginRegistration fit;
  fit.name = "NodeResourcesFit";
  fit.default_args = FitArgs;
  fit.args_kind = "NodeResourcesFitArgs";
  (void)r.Register(std::move(fit));
  framework::PluginRegistration ipa;
  ipa.name = "InterPodAffinity";
  ipa.default_args = InterPodAffinityArgs;
  ipa.args_kind = "InterPodAffinityArgs";
  (void)r.Register(std::move(ipa));
  return r;
}

}  // namespace gantry::config::testing

#endif  // GANTRY_TEST_UNIT_CONFIG_TEST_REGISTRY_H_
