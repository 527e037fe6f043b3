#include "src/server/admin_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "gantry/util/strings.h"
#include "grpcpp/grpcpp.h"
#include "simdjson.h"
#include "spdlog/spdlog.h"
#include "src/sim/loader.h"
#include "src/sim/snapshot_file.h"

namespace gantry::server {
namespace {

namespace v1 = gantry::admin::v1;

grpc::Status ToGrpc(const absl::Status& st) {
  if (st.ok()) return grpc::Status::OK;
  // absl and gRPC share the canonical code numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(st.code()), std::string(st.message()));
}

absl::StatusOr<std::string> ReadPem(std::string_view flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(gantry::StrCat(flag, ": cannot read ", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (ss.str().empty())
    return absl::InvalidArgumentError(gantry::StrCat(flag, ": ", path, " is empty"));
  return ss.str();
}

}  // namespace

AdminMetrics RegisterAdminMetrics(metrics::Registry& registry) {
  AdminMetrics m;
  m.requests = &registry.AddCounter(
      "gantry_admin_requests_total",
      "Admin API (gRPC) calls by method and status code (OK or the error).", {"method", "code"});
  m.rejected_busy = &registry.AddCounter(
      "gantry_admin_calls_rejected_busy_total",
      "Admin API calls answered RESOURCE_EXHAUSTED because the most concurrent calls were "
      "already being served.",
      {"method"});
  return m;
}

api::ObjectSet DecodeRecording(const admin::Recording& rec, int64_t* skipped) {
  api::ObjectSet out;
  sim::LoadStats stats;
  for (const sim::RawObject& o : rec.objects) {
    api::ObjectSet one;
    absl::Status st = sim::LoadClusterText(
        gantry::StrCat(o.kind, " ", o.namespace_.empty() ? "" : o.namespace_ + "/", o.name), o.json,
        /*is_json=*/true, &one, &stats);
    if (!st.ok()) {
      if (skipped != nullptr) ++*skipped;
      spdlog::warn("admin: skipping an object that does not decode: {}", std::string(st.message()));
      continue;
    }
    auto move_all = [](auto& to, auto& from) {
      for (auto& x : from) to.push_back(std::move(x));
    };
    move_all(out.pods, one.pods);
    move_all(out.nodes, one.nodes);
    move_all(out.namespaces, one.namespaces);
    move_all(out.priority_classes, one.priority_classes);
    move_all(out.pdbs, one.pdbs);
    move_all(out.device_classes, one.device_classes);
    move_all(out.resource_slices, one.resource_slices);
    move_all(out.resource_claims, one.resource_claims);
    move_all(out.resource_claim_templates, one.resource_claim_templates);
    move_all(out.device_taint_rules, one.device_taint_rules);
    move_all(out.workloads, one.workloads);
    move_all(out.pod_groups, one.pod_groups);
    move_all(out.composite_pod_groups, one.composite_pod_groups);
    move_all(out.coscheduling_pod_groups, one.coscheduling_pod_groups);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<AdminService::Slot>> AdminService::Admit(std::string_view method) {
  const int before = in_flight_.fetch_add(1);
  if (before < max_concurrent_calls_) return std::make_unique<Slot>(&in_flight_);
  in_flight_.fetch_sub(1);
  if (metrics_.rejected_busy != nullptr) metrics_.rejected_busy->With({method}).Inc();
  return absl::ResourceExhaustedError(gantry::StrCat(
      method, ": the admin service is busy: ", max_concurrent_calls_,
      " call(s) already in progress, the most it serves at once (--admin-max-concurrent-calls); "
      "retry shortly"));
}

absl::Status AdminService::Check(std::string_view method, size_t request_bytes) {
  if (static_cast<int64_t>(request_bytes) > max_request_bytes_) {
    return absl::ResourceExhaustedError(gantry::StrCat(method, ": request of ", request_bytes,
                                                       " bytes is over the limit of ",
                                                       max_request_bytes_, " bytes"));
  }
  return backend_.CheckReady(method);
}

grpc::Status AdminService::Finish(std::string_view method, const absl::Status& st) {
  if (metrics_.requests != nullptr)
    metrics_.requests->With({method, absl::StatusCodeToString(st.code())}).Inc();
  if (!st.ok()) spdlog::info("admin {}: {}", method, st.ToString());
  return ToGrpc(st);
}

grpc::Status AdminService::Explain(grpc::ServerContext*, const v1::ExplainRequest* req,
                                   v1::ExplainResponse* resp) {
  absl::StatusOr<std::unique_ptr<Slot>> slot = Admit("Explain");
  if (!slot.ok()) return Finish("Explain", slot.status());
  if (absl::Status st = Check("Explain", req->ByteSizeLong()); !st.ok())
    return Finish("Explain", st);
  absl::StatusOr<api::ObjectSet> objects = backend_.CachedObjects();
  if (!objects.ok()) return Finish("Explain", objects.status());
  api::ObjectSet& cluster = *objects;
  absl::StatusOr<v1::ExplainResponse> r =
      admin::Explain(*req, cluster, backend_.engine(), backend_.store());
  if (r.ok()) *resp = std::move(*r);
  return Finish("Explain", r.status());
}

grpc::Status AdminService::WhatIf(grpc::ServerContext*, const v1::WhatIfRequest* req,
                                  v1::WhatIfResponse* resp) {
  absl::StatusOr<std::unique_ptr<Slot>> slot = Admit("WhatIf");
  if (!slot.ok()) return Finish("WhatIf", slot.status());
  if (absl::Status st = Check("WhatIf", req->ByteSizeLong()); !st.ok()) return Finish("WhatIf", st);
  absl::StatusOr<api::ObjectSet> objects = backend_.CachedObjects();
  if (!objects.ok()) return Finish("WhatIf", objects.status());
  api::ObjectSet& cluster = *objects;
  absl::StatusOr<v1::WhatIfResponse> r = admin::WhatIf(*req, cluster, backend_.engine());
  if (r.ok()) *resp = std::move(*r);
  return Finish("WhatIf", r.status());
}

grpc::Status AdminService::GetSnapshot(grpc::ServerContext* ctx, const v1::GetSnapshotRequest* req,
                                       grpc::ServerWriter<gantry::snapshot::v1::Chunk>* writer) {
  absl::StatusOr<std::unique_ptr<Slot>> slot = Admit("GetSnapshot");
  if (!slot.ok()) return Finish("GetSnapshot", slot.status());
  if (absl::Status st = Check("GetSnapshot", req->ByteSizeLong()); !st.ok())
    return Finish("GetSnapshot", st);
  absl::StatusOr<admin::Recording> rec = backend_.Record(nullptr);
  if (!rec.ok()) return Finish("GetSnapshot", rec.status());
  // One chunk at a time (header first, then sim::kObjectsPerChunk objects
  // each), so the stream never holds a second copy of the cluster.
  gantry::snapshot::v1::Chunk chunk;
  *chunk.mutable_header() = admin::RecordingHeader(*rec, "gantry admin GetSnapshot");
  size_t next = 0;
  do {
    for (; next < rec->objects.size() && chunk.objects_size() < sim::kObjectsPerChunk; ++next) {
      const sim::RawObject& raw = rec->objects[next];
      gantry::snapshot::v1::Object* o = chunk.add_objects();
      o->set_api_version(raw.api_version);
      o->set_kind(raw.kind);
      o->set_namespace_(raw.namespace_);
      o->set_name(raw.name);
      o->set_json(raw.json);
    }
    if (ctx->IsCancelled())
      return Finish("GetSnapshot", absl::CancelledError("GetSnapshot: the client cancelled"));
    if (!writer->Write(chunk))
      return Finish("GetSnapshot", absl::UnavailableError("GetSnapshot: the stream broke"));
    chunk.Clear();
  } while (next < rec->objects.size());
  return Finish("GetSnapshot", absl::OkStatus());
}

bool IsLoopbackAddress(std::string_view address) {
  std::string_view host = address;
  if (host.starts_with("ipv4:") || host.starts_with("ipv6:")) host.remove_prefix(5);
  if (host.starts_with("[")) {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    host = host.substr(1, close - 1);
  } else if (size_t colon = host.rfind(':');
             colon != std::string_view::npos && host.find(':') == colon) {
    host = host.substr(0, colon);
  }
  if (host == "localhost") return true;
  // Only literal addresses: a DNS name such as "127.0.0.1.example.com" may
  // resolve anywhere.
  const std::string h(host);
  in_addr v4;
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

absl::Status ValidateAdminServerOptions(const AdminServerOptions& o) {
  if (o.address.empty())
    return absl::InvalidArgumentError("--admin-address: empty (the admin service is disabled)");
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty()) {
    return absl::InvalidArgumentError(
        "--admin-tls-cert-file and --admin-tls-private-key-file go together");
  }
  if (!o.tls_client_ca_file.empty() && o.tls_cert_file.empty()) {
    return absl::InvalidArgumentError(
        "--admin-tls-client-ca-file needs --admin-tls-cert-file and --admin-tls-private-key-file");
  }
  if (!IsLoopbackAddress(o.address) && (o.tls_cert_file.empty() || o.tls_client_ca_file.empty())) {
    return absl::InvalidArgumentError(gantry::StrCat(
        "--admin-address ", o.address,
        " is not a loopback address: serving the admin API there needs mutual TLS: set "
        "--admin-tls-client-ca-file (the CA that signs the clients' certificates)",
        o.tls_cert_file.empty() ? ", --admin-tls-cert-file and --admin-tls-private-key-file" : "",
        ", or listen on a loopback address"));
  }
  if (o.max_request_bytes <= 0)
    return absl::InvalidArgumentError("admin max request size must be positive");
  if (o.max_concurrent_calls < 1 || o.max_concurrent_calls > kMaxAdminConcurrentCalls) {
    return absl::InvalidArgumentError(
        gantry::StrCat("--admin-max-concurrent-calls: Invalid value: ", o.max_concurrent_calls,
                       ": must be in [1, ", kMaxAdminConcurrentCalls, "]"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<AdminServer>> AdminServer::Start(const AdminServerOptions& options,
                                                                AdminBackend& backend,
                                                                AdminMetrics metrics) {
  if (absl::Status st = ValidateAdminServerOptions(options); !st.ok()) return st;
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!options.tls_cert_file.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    absl::StatusOr<std::string> cert = ReadPem("--admin-tls-cert-file", options.tls_cert_file);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key =
        ReadPem("--admin-tls-private-key-file", options.tls_private_key_file);
    if (!key.ok()) return key.status();
    ssl.pem_key_cert_pairs.push_back({*key, *cert});
    if (!options.tls_client_ca_file.empty()) {
      absl::StatusOr<std::string> ca =
          ReadPem("--admin-tls-client-ca-file", options.tls_client_ca_file);
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *ca;
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    creds = grpc::SslServerCredentials(ssl);
  }
  std::unique_ptr<AdminServer> s(new AdminServer());
  s->service_ = std::make_unique<AdminService>(backend, metrics, options.max_request_bytes,
                                               options.max_concurrent_calls);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.address, creds, &s->port_);
  // gRPC rejects messages past twice the limit itself; up to that, the
  // service answers RESOURCE_EXHAUSTED with the sizes (and counts it).
  const int64_t transport_limit =
      std::min<int64_t>(options.max_request_bytes * 2, int64_t{1} << 30);
  builder.SetMaxReceiveMessageSize(static_cast<int>(transport_limit));
  builder.RegisterService(s->service_.get());
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        gantry::StrCat("admin service: cannot listen on ", options.address));
  }
  return s;
}

AdminServer::~AdminServer() { Stop(); }

void AdminServer::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
  server_.reset();
}

}  // namespace gantry::server
