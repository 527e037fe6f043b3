#include "src/main/flags.h"

#include <algorithm>
#include <utility>

#include "gantry/util/strings.h"

namespace gantry::cmd {
namespace {

// Upstream feature gate names (kube_features.go and the component-base /
// apiserver / client-go gates every component registers), v1.30 to v1.37.
// kube-scheduler accepts any gate its binary knows and rejects the rest.
const std::vector<std::string_view>& GateList() {
  static const std::vector<std::string_view>* gates = [] {
    auto* v = new std::vector<std::string_view>{
        "APIResponseCompression", "APIServerIdentity", "APIServerTracing", "APIServingWithRoutine",
        "AllAlpha", "AllBeta", "AllowDNSOnlyNodeCSR", "AllowInsecureKubeletCertificateSigningRequests",
        "AllowParsingUserUIDFromCertAuth", "AllowServiceLBStatusOnNonLB", "AllowUnsafeMalformedObjectDeletion",
        "AnonymousAuthConfigurableEndpoints", "AnyVolumeDataSource", "AuthorizeNodeWithSelectors",
        "AuthorizeWithSelectors", "BtreeWatchCache", "CBORServingAndStorage", "CPUManagerPolicyAlphaOptions",
        "CPUManagerPolicyBetaOptions", "CPUManagerPolicyOptions", "CRDValidationRatcheting",
        "CSIMigrationPortworx", "CSIVolumeHealth", "ClearingNominatedNodeNameAfterBinding", "ClientsAllowCBOR",
        "ClientsPreferCBOR", "CloudControllerManagerWebhook", "ClusterTrustBundle",
        "ClusterTrustBundleProjection", "ComponentFlagz", "ComponentSLIs", "ComponentStatusz",
        "CompositePodGroup", "ConcurrentWatchObjectDecode", "ConsistentListFromCache", "ContainerCheckpoint",
        "ContainerRestartRules", "ContainerStopSignals", "ContextualLogging", "CoordinatedLeaderElection",
        "CronJobsScheduledAnnotation", "CrossNamespaceVolumeDataSource", "CustomCPUCFSQuotaPeriod",
        "DRAAdminAccess", "DRAConsumableCapacity", "DRADerivedAttributes", "DRADeviceBindingConditions",
        "DRADeviceCompatibilityGroups", "DRADeviceTaintRules", "DRADeviceTaints", "DRAExtendedResource",
        "DRAFractionalCapacityRange", "DRAListTypeAttributes", "DRANodeAllocatableResources",
        "DRAOptionalNodeOperations", "DRAPartitionableDevices", "DRAPrioritizedList",
        "DRAResourceClaimDeviceStatus", "DRAResourceClaimGranularStatusAuthorization",
        "DRAResourcePoolStatus", "DRASchedulerFilterTimeout", "DRAWorkloadResourceClaims",
        "DeclarativeValidation", "DeclarativeValidationTakeover", "DeploymentReplicaSetTerminatingReplicas",
        "DetectCacheInconsistency", "DisableAllocatorDualWrite", "DisableCPUQuotaWithExclusiveCPUs",
        "DisableNodeKubeProxyVersion", "DynamicResourceAllocation", "EnvFiles", "EventedPLEG",
        "EvictionRequestAPI", "ExternalServiceAccountTokenSigner", "GangScheduling", "GenericWorkload",
        "GitRepoVolumeDriver", "GracefulNodeShutdown", "GracefulNodeShutdownBasedOnPodPriority",
        "HPAConfigurableTolerance", "HPAScaleToZero", "HonorPVReclaimPolicy", "HostnameOverride",
        "ImageMaximumGCAge", "ImageVolume", "InOrderInformers", "InPlacePodVerticalScaling",
        "InPlacePodVerticalScalingAllocatedStatus", "InPlacePodVerticalScalingExclusiveCPUs",
        "InPlacePodVerticalScalingExclusiveMemory", "InTreePluginPortworxUnregister", "InformerResourceVersion",
        "InterPodAffinityHostnameFastPath", "JobBackoffLimitPerIndex", "JobManagedBy",
        "JobPodReplacementPolicy", "JobSuccessPolicy", "KubeletCgroupDriverFromCRI",
        "KubeletCrashLoopBackOffMax", "KubeletEnsureSecretPulledImages", "KubeletFineGrainedAuthz",
        "KubeletInUserNamespace", "KubeletPSI", "KubeletPodResourcesDynamicResources",
        "KubeletPodResourcesGet", "KubeletRegistrationGetOnExistsOnly", "KubeletSeparateDiskGC",
        "KubeletServiceAccountTokenForCredentialProviders", "KubeletTracing", "ListFromCacheSnapshot",
        "LoadBalancerIPMode", "LocalStorageCapacityIsolationFSQuotaMonitoring", "LoggingAlphaOptions",
        "LoggingBetaOptions", "MatchLabelKeysInPodAffinity", "MatchLabelKeysInPodTopologySpread",
        "MatchLabelKeysInPodTopologySpreadSelectorMerge", "MaxUnavailableStatefulSet", "MemoryQoS",
        "MultiCIDRServiceAllocator", "MutableCSINodeAllocatableCount", "MutatingAdmissionPolicy",
        "NodeInclusionPolicyInPodTopologySpread", "NodeLogQuery", "NodeSwap", "NominatedNodeNameForExpectation",
        "OpenAPIEnums", "OpportunisticBatching", "OrderedNamespaceDeletion", "PodAndContainerStatsFromCRI",
        "PodCertificateRequest", "PodDeletionCost", "PodDisruptionConditions", "PodGroupPreemptionPolicy",
        "PodLevelResources", "PodLifecycleSleepAction", "PodLifecycleSleepActionAllowZero",
        "PodLogsQuerySplitStreams", "PodObservedGenerationTracking", "PodReadyToStartContainersCondition",
        "PodSchedulingReadiness", "PodTopologyLabelsAdmission", "PortForwardWebsockets",
        "PreferSameTrafficDistribution", "ProcMountType", "QOSReserved", "RecoverVolumeExpansionFailure",
        "RecursiveReadOnlyMounts", "ReduceDefaultCrashLoopBackOffDecay", "RelaxedDNSSearchValidation",
        "RelaxedEnvironmentVariableValidation", "RelaxedServiceNameValidation",
        "ReloadKubeletServerCertificateFile", "RemoteRequestHeaderUID", "ResilientWatchCacheInitialization",
        "ResourceHealthStatus", "RetryGenerateName", "RotateKubeletServerCertificate",
        "RuntimeClassInImageCriApi", "SELinuxChangePolicy", "SELinuxMount", "SELinuxMountReadWriteOncePod",
        "SchedulerAsyncAPICalls", "SchedulerAsyncPreemption", "SchedulerPopFromBackoffQ",
        "SchedulerPreQueueingHints", "SchedulerQueueingHints", "SeparateTaintEvictionController",
        "ServiceAccountNodeAudienceRestriction", "ServiceAccountTokenJTI", "ServiceAccountTokenNodeBinding",
        "ServiceAccountTokenNodeBindingValidation", "ServiceAccountTokenPodNodeInfo",
        "ServiceTrafficDistribution", "SidecarContainers", "SizeBasedListCostEstimate",
        "StatefulSetAutoDeletePVC", "StorageCapacityScoring", "StorageNamespaceIndex", "StorageVersionAPI",
        "StorageVersionHash", "StorageVersionMigrator", "StreamingCollectionEncodingToJSON",
        "StreamingCollectionEncodingToProtobuf", "StrictCostEnforcementForVAP",
        "StrictCostEnforcementForWebhooks", "StructuredAuthenticationConfiguration",
        "StructuredAuthorizationConfiguration", "SupplementalGroupsPolicy", "SystemdWatchdog",
        "TokenRequestServiceAccountUIDValidation", "TopologyAwareHints", "TopologyAwareWorkloadScheduling",
        "TopologyManagerPolicyAlphaOptions", "TopologyManagerPolicyBetaOptions", "TopologyManagerPolicyOptions",
        "TranslateStreamCloseWebsocketRequests", "UnauthenticatedHTTP2DOSMitigation",
        "UnknownVersionInteroperabilityProxy", "UserNamespacesHostNetworkSupport", "UserNamespacesSupport",
        "VolumeAttributesClass", "VolumeLimitScaling", "WatchCacheInitializationPostStartHook",
        "WatchFromStorageWithoutResourceVersion", "WatchList", "WatchListClient", "WinDSR", "WinOverlay",
        "WindowsCPUAndMemoryAffinity", "WindowsGracefulNodeShutdown", "WorkloadAwarePreemption",
        "WorkloadBasicPolicyDesiredCount", "WorkloadWithJob",
    };
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
    return v;
  }();
  return *gates;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Go strconv.ParseBool.
bool ParseGoBool(std::string_view s, bool* out) {
  static const std::string_view kTrue[] = {"1", "t", "T", "TRUE", "true", "True"};
  static const std::string_view kFalse[] = {"0", "f", "F", "FALSE", "false", "False"};
  for (std::string_view t : kTrue) {
    if (s == t) return *out = true, true;
  }
  for (std::string_view f : kFalse) {
    if (s == f) return *out = false, true;
  }
  return false;
}

struct RemovedFlag {
  std::string_view name;  // without "--"; a trailing '*' matches a prefix
  std::string_view why;
};

constexpr RemovedFlag kRemoved[] = {
    {"address", "insecure serving was removed; use --bind-address with --secure-port (HTTPS, default 10259)"},
    {"port", "insecure serving was removed; use --secure-port (HTTPS, default 10259)"},
    {"scheduler-name",
     "set profiles[].schedulerName in the KubeSchedulerConfiguration given with --config"},
    {"policy-config-file", "scheduling policies were removed; use profiles and plugins in --config"},
    {"policy-configmap", "scheduling policies were removed; use profiles and plugins in --config"},
    {"policy-configmap-namespace", "scheduling policies were removed; use profiles and plugins in --config"},
    {"use-legacy-policy-config", "scheduling policies were removed; use profiles and plugins in --config"},
    {"algorithm-provider", "algorithm providers were removed; configure plugins in the profiles of --config"},
    {"lock-object-*",
     "use --leader-elect-resource-name / --leader-elect-resource-namespace (or leaderElection in --config)"},
    {"hard-pod-affinity-symmetric-weight",
     "set hardPodAffinityWeight in the InterPodAffinity pluginConfig args of --config"},
};

std::string LongName(const std::string& arg) {
  if (arg.size() < 3 || arg[0] != '-' || arg[1] != '-') return {};
  std::string name = arg.substr(2);
  size_t eq = name.find('=');
  if (eq != std::string::npos) name.resize(eq);
  return name;
}

}  // namespace

const std::vector<std::string_view>& KnownFeatureGates() { return GateList(); }

void AddRunFlags(CLI::App& app, RunFlags* f) {
  const char* kMisc = "Misc flags";
  const char* kLE = "Leader election flags";
  const char* kServing = "Secure serving flags";
  const char* kLog = "Logs flags";
  const char* kDeprecated = "Deprecated flags";
  app.add_option("--config", f->config, "The path to the KubeSchedulerConfiguration file.")->group(kMisc);
  app.add_option("--master", f->master,
                 "The address of the Kubernetes API server (overrides any value in kubeconfig).")
      ->group(kMisc);
  app.add_option("--write-config-to", f->write_config_to,
                 "If set, write the defaulted configuration (after --config and flags) to this file and exit.")
      ->group(kMisc);
  app.add_option("--feature-gates", f->feature_gates,
                 "Comma-separated Key=true|false pairs of Kubernetes feature gates (unknown names are errors).")
      ->group(kMisc);
  app.add_option("--binding-workers", f->binding_workers,
                 "Gantry only: the most pods whose binding (PreBind and Bind API writes) runs at "
                 "once; threads are started as needed up to this many.")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str()
      ->group(kMisc);
  app.add_option("--event-workers", f->event_workers,
                 "Gantry only: threads writing Events to the API server; each object's events go "
                 "to one of them, in order.")
      ->check(CLI::Range(1, 256))
      ->capture_default_str()
      ->group(kMisc);
  app.add_option("--event-queue-size", f->event_queue_size,
                 "Gantry only: the most Events waiting to be written; more are dropped and counted "
                 "(gantry_events_total{result=\"dropped\"}).")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str()
      ->group(kMisc);

  app.add_flag("--leader-elect", f->leader_elect,
               "Elect a leader with a Lease before scheduling (--leader-elect=false to disable).")
      ->group(kLE);
  app.add_option("--leader-elect-lease-duration", f->leader_elect_lease_duration,
                 "How long standbys wait after the last renewal before taking over (Go duration).")
      ->group(kLE);
  app.add_option("--leader-elect-renew-deadline", f->leader_elect_renew_deadline,
                 "How long the leader keeps retrying a renewal before giving up (<= lease duration).")
      ->group(kLE);
  app.add_option("--leader-elect-retry-period", f->leader_elect_retry_period,
                 "Wait between attempts to acquire or renew the lease.")
      ->group(kLE);
  app.add_option("--leader-elect-resource-lock", f->leader_elect_resource_lock,
                 "The lock object type; only 'leases' is supported.")
      ->group(kLE);
  app.add_option("--leader-elect-resource-name", f->leader_elect_resource_name,
                 "The name of the Lease (default gantry-scheduler).")
      ->group(kLE);
  app.add_option("--leader-elect-resource-namespace", f->leader_elect_resource_namespace,
                 "The namespace of the Lease.")
      ->group(kLE);

  app.add_option("--secure-port", f->serving.secure_port,
                 "HTTPS port for /healthz, /livez, /readyz and /metrics. 0 disables serving.")
      ->group(kServing);
  app.add_option("--bind-address", f->serving.bind_address, "The IP address to listen on for --secure-port.")
      ->group(kServing);
  app.add_option("--cert-dir", f->serving.cert_dir,
                 "Directory holding gantry.crt/gantry.key; a self-signed pair is generated there when absent. "
                 "Ignored with --tls-cert-file.")
      ->group(kServing);
  app.add_option("--tls-cert-file", f->serving.tls_cert_file,
                 "PEM certificate (followed by any intermediates) for HTTPS. Without it and --cert-dir, a "
                 "self-signed certificate is generated in memory.")
      ->group(kServing);
  app.add_option("--tls-private-key-file", f->serving.tls_private_key_file,
                 "PEM private key matching --tls-cert-file.")
      ->group(kServing);

  constexpr char kAdmin[] = "Admin API (gRPC: explain, what-if, snapshots)";
  app.add_option("--admin-address", f->admin_address,
                 "host:port of the gRPC admin service (default 127.0.0.1:10260, loopback only). "
                 "Empty disables it. A non-loopback address needs mutual TLS: "
                 "--admin-tls-cert-file, --admin-tls-private-key-file and --admin-tls-client-ca-file.")
      ->group(kAdmin);
  app.add_option("--admin-tls-cert-file", f->admin_tls_cert_file,
                 "PEM certificate for the admin service (TLS).")
      ->group(kAdmin);
  app.add_option("--admin-tls-private-key-file", f->admin_tls_private_key_file,
                 "PEM private key matching --admin-tls-cert-file.")
      ->group(kAdmin);
  app.add_option("--admin-tls-client-ca-file", f->admin_tls_client_ca_file,
                 "Require admin clients to present a certificate signed by this CA (mutual TLS; "
                 "required for a non-loopback --admin-address).")
      ->group(kAdmin);
  app.add_option("--admin-max-concurrent-calls", f->admin_max_concurrent_calls,
                 "Most admin calls served at once; a call beyond it is answered RESOURCE_EXHAUSTED.")
      ->check(CLI::Range(1, 1024))
      ->group(kAdmin);
  // Accepted only to refuse it with a clear error (plaintext off loopback is gone).
  app.add_flag("--admin-insecure", f->admin_insecure, "Removed: a non-loopback admin address needs mutual TLS.")
      ->group("");

  app.add_option("-v,--v", f->verbosity, "Log verbosity (klog levels: 2 useful steady state, 4 debug, 5+ trace).")
      ->group(kLog);
  app.add_option("--logging-format", f->logging_format, "Log format: text or json.")->group(kLog);

  app.add_option("--kubeconfig", f->kubeconfig,
                 "DEPRECATED: path to a kubeconfig; use clientConnection.kubeconfig in --config. Ignored with "
                 "--config.")
      ->group(kDeprecated);
  app.add_option("--kube-api-qps", f->kube_api_qps, "DEPRECATED: QPS to the API server. Ignored with --config.")
      ->group(kDeprecated);
  app.add_option("--kube-api-burst", f->kube_api_burst, "DEPRECATED: burst to the API server. Ignored with --config.")
      ->group(kDeprecated);
  app.add_option("--kube-api-content-type", f->kube_api_content_type,
                 "DEPRECATED: content type of requests to the API server. Ignored with --config.")
      ->group(kDeprecated);
  app.add_flag("--profiling", f->profiling, "DEPRECATED: enable profiling. Ignored with --config.")
      ->group(kDeprecated);
  app.add_flag("--contention-profiling", f->contention_profiling,
               "DEPRECATED: enable contention profiling. Ignored with --config.")
      ->group(kDeprecated);
}

void RecordExplicitFlags(const CLI::App& app, RunFlags* flags) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0) continue;
    for (const std::string& name : opt->get_lnames()) flags->explicitly_set.insert(name);
  }
}

std::vector<std::string> NormalizeArgs(const std::vector<std::string>& args,
                                       const std::set<std::string>& subcommands) {
  std::vector<std::string> out;
  out.reserve(args.size());
  bool in_sub = false;
  for (const std::string& a : args) {
    if (!in_sub && subcommands.count(a) > 0) in_sub = true;
    if (!in_sub && a.rfind("-v=", 0) == 0) {
      out.push_back("--v=" + a.substr(3));
    } else {
      out.push_back(a);
    }
  }
  return out;
}

absl::Status CheckRemovedFlags(const std::vector<std::string>& args, const std::set<std::string>& subcommands) {
  for (const std::string& a : args) {
    if (subcommands.count(a) > 0) break;
    std::string name = LongName(a);
    if (name.empty()) continue;
    for (const RemovedFlag& r : kRemoved) {
      std::string_view rn = r.name;
      bool match = rn.back() == '*' ? name.rfind(rn.substr(0, rn.size() - 1), 0) == 0 : name == rn;
      if (match) {
        return absl::InvalidArgumentError(
            StrCat("flag --", name, " was removed from kube-scheduler and is not supported: ", r.why));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, bool>> ParseFeatureGates(std::string_view spec) {
  std::map<std::string, bool> gates;
  spec = Trim(spec);
  if (spec.empty()) return gates;
  const std::vector<std::string_view>& known = KnownFeatureGates();
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string_view item = Trim(spec.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                                    : comma - start));
    start = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat("--feature-gates: missing bool value for ", item));
    }
    std::string_view name = Trim(item.substr(0, eq));
    std::string_view value = Trim(item.substr(eq + 1));
    if (!std::binary_search(known.begin(), known.end(), name)) {
      return absl::InvalidArgumentError(StrCat("--feature-gates: unrecognized feature gate: ", name));
    }
    bool b = false;
    if (!ParseGoBool(value, &b)) {
      return absl::InvalidArgumentError(
          StrCat("--feature-gates: invalid value of ", name, "=", value, ", err: expected true or false"));
    }
    gates[std::string(name)] = b;
  }
  return gates;
}

absl::Status ApplyFlags(const RunFlags& f, bool from_file, config::Configuration* cfg,
                        std::vector<std::string>* warnings) {
  // Leader election: explicit flags always win (also over --config).
  config::LeaderElection& le = cfg->leader_election;
  auto duration = [&](std::string_view flag, const std::string& text, absl::Duration* out) -> absl::Status {
    if (!f.IsSet(flag)) return absl::OkStatus();
    absl::StatusOr<absl::Duration> d = config::ParseGoDuration(text);
    if (!d.ok()) return absl::InvalidArgumentError(StrCat("--", flag, ": ", d.status().message()));
    if (*d <= absl::ZeroDuration()) return absl::InvalidArgumentError(StrCat("--", flag, ": must be greater than zero"));
    *out = *d;
    return absl::OkStatus();
  };
  if (f.IsSet("leader-elect")) le.leader_elect = f.leader_elect;
  if (absl::Status st = duration("leader-elect-lease-duration", f.leader_elect_lease_duration, &le.lease_duration);
      !st.ok())
    return st;
  if (absl::Status st = duration("leader-elect-renew-deadline", f.leader_elect_renew_deadline, &le.renew_deadline);
      !st.ok())
    return st;
  if (absl::Status st = duration("leader-elect-retry-period", f.leader_elect_retry_period, &le.retry_period);
      !st.ok())
    return st;
  if (f.IsSet("leader-elect-resource-lock")) le.resource_lock = f.leader_elect_resource_lock;
  if (f.IsSet("leader-elect-resource-name")) le.resource_name = f.leader_elect_resource_name;
  if (f.IsSet("leader-elect-resource-namespace")) le.resource_namespace = f.leader_elect_resource_namespace;
  if (le.leader_elect) {
    if (le.renew_deadline > le.lease_duration) {
      return absl::InvalidArgumentError(StrCat("leader election: renewDeadline (", config::FormatGoDuration(le.renew_deadline),
                                               ") must be <= leaseDuration (", config::FormatGoDuration(le.lease_duration), ")"));
    }
    if (le.resource_lock != "leases") {
      return absl::InvalidArgumentError(StrCat("leader election: resource lock \"", le.resource_lock,
                                               "\" is not supported (only \"leases\")"));
    }
    if (le.resource_name.empty() || le.resource_namespace.empty()) {
      return absl::InvalidArgumentError("leader election: resource name and namespace must not be empty");
    }
    if (le.resource_name == "kube-scheduler" && le.resource_namespace == "kube-system") {
      warnings->push_back(
          "leader election uses the Lease kube-system/kube-scheduler, the default scheduler's lock: Gantry and "
          "kube-scheduler will take turns instead of running side by side (use --leader-elect-resource-name "
          "gantry-scheduler unless Gantry replaces kube-scheduler)");
    }
  }

  // Deprecated flags: ignored with --config, applied without it.
  static constexpr std::string_view kDeprecated[] = {"kubeconfig", "kube-api-qps", "kube-api-burst",
                                                     "kube-api-content-type", "profiling",
                                                     "contention-profiling"};
  for (std::string_view name : kDeprecated) {
    if (!f.IsSet(name)) continue;
    if (from_file) {
      warnings->push_back(StrCat("--", name, " is deprecated and ignored because --config is set; use ",
                                 name == "kubeconfig" ? "clientConnection.kubeconfig"
                                 : name == "profiling" || name == "contention-profiling"
                                     ? "enableProfiling / enableContentionProfiling"
                                     : "clientConnection",
                                 " in the configuration file"));
    } else {
      warnings->push_back(StrCat("--", name, " is deprecated; set it in a configuration file given with --config"));
    }
  }
  if (!from_file) {
    if (f.IsSet("kubeconfig")) cfg->client_connection.kubeconfig = f.kubeconfig;
    if (f.IsSet("kube-api-qps")) cfg->client_connection.qps = f.kube_api_qps;
    if (f.IsSet("kube-api-burst")) cfg->client_connection.burst = f.kube_api_burst;
    if (f.IsSet("kube-api-content-type")) cfg->client_connection.content_type = f.kube_api_content_type;
    if (f.IsSet("profiling")) cfg->enable_profiling = f.profiling;
    if (f.IsSet("contention-profiling")) cfg->enable_contention_profiling = f.contention_profiling;
  }
  if (cfg->client_connection.qps < 0) return absl::InvalidArgumentError("--kube-api-qps must be >= 0");
  if (cfg->client_connection.burst < 0) return absl::InvalidArgumentError("--kube-api-burst must be >= 0");
  return absl::OkStatus();
}

}  // namespace gantry::cmd
