#include "src/server/health_server.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <arpa/inet.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gantry/util/strings.h"
#include "httplib.h"

namespace gantry::server {
namespace {

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return buf;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

BioPtr MemBio(std::string_view data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

std::string BioString(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

absl::StatusOr<std::string> ReadFile(const std::string& path, std::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(StrCat(flag, ": cannot read \"", path, "\""));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Parses the leaf certificate, the chain after it, and the key, and checks
// that they match. `chain` may be null.
absl::Status ParseTls(const TlsMaterial& tls, X509Ptr* leaf, std::vector<X509Ptr>* chain, PkeyPtr* key) {
  BioPtr cb = MemBio(tls.cert_pem);
  X509Ptr cert(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
  if (!cert) return absl::InvalidArgumentError(StrCat("TLS certificate: not a PEM certificate: ", OpenSslError()));
  if (chain != nullptr) {
    while (X509* extra = PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr)) chain->emplace_back(extra);
    ERR_clear_error();  // the end-of-data "no start line"
  }
  BioPtr kb = MemBio(tls.key_pem);
  PkeyPtr pkey(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  if (!pkey) return absl::InvalidArgumentError(StrCat("TLS private key: not a PEM private key: ", OpenSslError()));
  if (X509_check_private_key(cert.get(), pkey.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError("TLS certificate and private key do not match");
  }
  if (leaf != nullptr) *leaf = std::move(cert);
  if (key != nullptr) *key = std::move(pkey);
  return absl::OkStatus();
}

bool AddExt(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

bool IsIp(std::string_view host) {
  std::string h(host);
  unsigned char buf[16];
  return inet_pton(AF_INET, h.c_str(), buf) == 1 || inet_pton(AF_INET6, h.c_str(), buf) == 1;
}

void WriteBody(httplib::Response& res, int status, std::string body, const char* type) {
  res.status = status;
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-cache, private");
  res.set_content(std::move(body), type);
}

}  // namespace

// ---- HealthChecks ---------------------------------------------------------

HealthChecks::HealthChecks() {
  AddLivenessCheck("ping", [] { return std::nullopt; });
  AddReadinessCheck("sched-handler-sync", [this]() -> std::optional<std::string> {
    if (synced_.load()) return std::nullopt;
    return std::string("waiting for handlers to sync");
  });
  AddReadinessCheck("shutdown", [this]() -> std::optional<std::string> {
    if (!shutting_down_.load()) return std::nullopt;
    return std::string("process is shutting down");
  });
}

void HealthChecks::AddLivenessCheck(std::string name, Check check) {
  std::lock_guard lock(mu_);
  liveness_.emplace_back(std::move(name), std::move(check));
}

void HealthChecks::AddReadinessCheck(std::string name, Check check) {
  std::lock_guard lock(mu_);
  readiness_.emplace_back(std::move(name), std::move(check));
}

void HealthChecks::SetSynced(bool synced) { synced_.store(synced); }
void HealthChecks::SetShuttingDown() { shutting_down_.store(true); }

HealthChecks::Result HealthChecks::RunLiveness(bool verbose) const { return Run(false, verbose, "healthz"); }
HealthChecks::Result HealthChecks::RunReadiness(bool verbose) const { return Run(true, verbose, "readyz"); }

HealthChecks::Result HealthChecks::Run(bool readiness, bool verbose, std::string_view what) const {
  std::vector<std::pair<std::string, Check>> checks;
  {
    std::lock_guard lock(mu_);
    checks = liveness_;
    if (readiness) checks.insert(checks.end(), readiness_.begin(), readiness_.end());
  }
  Result r;
  std::string report;
  for (const auto& [name, check] : checks) {
    std::optional<std::string> failure = check();
    if (failure) {
      r.ok = false;
      StrAppend(&report, "[-]", name, " failed: ", *failure, "\n");
    } else {
      StrAppend(&report, "[+]", name, " ok\n");
    }
  }
  if (r.ok) {
    r.body = verbose ? StrCat(report, what, " check passed\n") : std::string("ok");
  } else {
    // Reasons are shown without ?verbose too: they are operational, not secret.
    r.body = StrCat(report, what, " check failed\n");
  }
  return r;
}

// ---- TLS ----------------------------------------------------------------

absl::StatusOr<TlsMaterial> GenerateSelfSigned(std::string_view host) {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return absl::InternalError(StrCat("generating a key: ", OpenSslError()));
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  std::string cn = StrCat("localhost@", static_cast<int64_t>(std::time(nullptr)));
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert.get(), name);
  std::string san = "DNS:localhost,IP:127.0.0.1,IP:::1";
  if (!host.empty() && host != "0.0.0.0" && host != "::" && host != "localhost" && host != "127.0.0.1") {
    StrAppend(&san, IsIp(host) ? ",IP:" : ",DNS:", host);
  }
  if (!AddExt(cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExt(cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
      !AddExt(cert.get(), NID_ext_key_usage, "serverAuth") || !AddExt(cert.get(), NID_subject_alt_name, san)) {
    return absl::InternalError(StrCat("certificate extensions: ", OpenSslError()));
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return absl::InternalError(StrCat("signing the certificate: ", OpenSslError()));
  }
  BioPtr cb(BIO_new(BIO_s_mem()));
  BioPtr kb(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(cb.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(kb.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return absl::InternalError(StrCat("encoding the certificate: ", OpenSslError()));
  }
  return TlsMaterial{BioString(cb.get()), BioString(kb.get())};
}

absl::StatusOr<TlsMaterial> LoadOrCreateTls(const ServingOptions& o) {
  if (!o.tls_cert_file.empty() || !o.tls_private_key_file.empty()) {
    if (o.tls_cert_file.empty() || o.tls_private_key_file.empty()) {
      return absl::InvalidArgumentError("--tls-cert-file and --tls-private-key-file must be given together");
    }
    TlsMaterial m;
    absl::StatusOr<std::string> cert = ReadFile(o.tls_cert_file, "--tls-cert-file");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile(o.tls_private_key_file, "--tls-private-key-file");
    if (!key.ok()) return key.status();
    m.cert_pem = *std::move(cert);
    m.key_pem = *std::move(key);
    return m;
  }
  if (!o.cert_dir.empty()) {
    const std::string cert_path = o.cert_dir + "/gantry.crt";
    const std::string key_path = o.cert_dir + "/gantry.key";
    std::error_code ec;
    if (std::filesystem::exists(cert_path, ec) && std::filesystem::exists(key_path, ec)) {
      TlsMaterial m;
      absl::StatusOr<std::string> cert = ReadFile(cert_path, "--cert-dir");
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadFile(key_path, "--cert-dir");
      if (!key.ok()) return key.status();
      m.cert_pem = *std::move(cert);
      m.key_pem = *std::move(key);
      return m;
    }
    absl::StatusOr<TlsMaterial> m = GenerateSelfSigned(o.bind_address);
    if (!m.ok()) return m.status();
    std::filesystem::create_directories(o.cert_dir, ec);
    if (ec) return absl::InvalidArgumentError(StrCat("--cert-dir: cannot create \"", o.cert_dir, "\": ", ec.message()));
    {
      std::ofstream c(cert_path, std::ios::binary | std::ios::trunc);
      c << m->cert_pem;
      if (!c) return absl::InvalidArgumentError(StrCat("--cert-dir: cannot write \"", cert_path, "\""));
    }
    {
      std::ofstream k(key_path, std::ios::binary | std::ios::trunc);
      k << m->key_pem;
      if (!k) return absl::InvalidArgumentError(StrCat("--cert-dir: cannot write \"", key_path, "\""));
    }
    chmod(key_path.c_str(), 0600);
    return m;
  }
  return GenerateSelfSigned(o.bind_address);
}

// ---- HealthServer --------------------------------------------------------

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(const ServingOptions& options,
                                                                  const metrics::Registry* metrics,
                                                                  const HealthChecks* checks) {
  if (options.secure_port < 0 || options.secure_port > 65535) {
    return absl::InvalidArgumentError(
        StrCat("--secure-port: ", options.secure_port, " is not a valid port (0-65535)"));
  }
  absl::StatusOr<TlsMaterial> tls = LoadOrCreateTls(options);
  if (!tls.ok()) return tls.status();
  auto leaf = std::make_shared<X509Ptr>();
  auto chain = std::make_shared<std::vector<X509Ptr>>();
  auto key = std::make_shared<PkeyPtr>();
  if (absl::Status st = ParseTls(*tls, leaf.get(), chain.get(), key.get()); !st.ok()) return st;

  auto server = std::make_unique<httplib::SSLServer>([leaf, chain, key](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
    if (SSL_CTX_use_certificate(&ctx, leaf->get()) != 1) return false;
    for (const X509Ptr& c : *chain) {
      X509_up_ref(c.get());
      if (SSL_CTX_add_extra_chain_cert(&ctx, c.get()) != 1) {
        X509_free(c.get());
        return false;
      }
    }
    if (SSL_CTX_use_PrivateKey(&ctx, key->get()) != 1) return false;
    return SSL_CTX_check_private_key(&ctx) == 1;
  });
  if (!server->is_valid()) return absl::InternalError(StrCat("TLS setup failed: ", OpenSslError()));
  server->new_task_queue = [] { return new httplib::ThreadPool(4); };
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let a
  // second process bind the same port (upstream: --permit-port-sharing=false).
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server->set_read_timeout(10, 0);
  server->set_write_timeout(10, 0);

  auto health = [checks](const httplib::Request& req, httplib::Response& res) {
    HealthChecks::Result r = checks->RunLiveness(req.has_param("verbose"));
    WriteBody(res, r.ok ? 200 : 500, std::move(r.body), "text/plain; charset=utf-8");
  };
  server->Get("/healthz", health);
  server->Get("/livez", health);
  server->Get("/readyz", [checks](const httplib::Request& req, httplib::Response& res) {
    HealthChecks::Result r = checks->RunReadiness(req.has_param("verbose"));
    WriteBody(res, r.ok ? 200 : 503, std::move(r.body), "text/plain; charset=utf-8");
  });
  server->Get("/metrics", [metrics](const httplib::Request&, httplib::Response& res) {
    WriteBody(res, 200, metrics->Render(), std::string(metrics::kPrometheusContentType).c_str());
  });

  std::unique_ptr<HealthServer> hs(new HealthServer());
  if (options.secure_port == 0) {
    hs->port_ = server->bind_to_any_port(options.bind_address);
    if (hs->port_ < 0) {
      return absl::UnavailableError(StrCat("cannot listen on ", options.bind_address, ": no free port"));
    }
  } else {
    if (!server->bind_to_port(options.bind_address, options.secure_port)) {
      return absl::UnavailableError(StrCat("cannot listen on ", options.bind_address, ":", options.secure_port,
                                           " (address in use, or --bind-address is not a local address)"));
    }
    hs->port_ = options.secure_port;
  }
  httplib::Server* raw = server.get();
  hs->server_ = std::move(server);
  hs->thread_ = std::thread([raw] { raw->listen_after_bind(); });
  // stop() is a no-op until the accept loop runs: wait for it.
  for (int i = 0; i < 2000 && !raw->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return hs;
}

HealthServer::~HealthServer() { Stop(); }

void HealthServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace gantry::server
