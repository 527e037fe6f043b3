// Certificates made at test time with OpenSSL: a CA and leaf certificates
// it signs (server: SAN 127.0.0.1 and localhost; client: clientAuth), as
// PEM files in a temporary directory, for mutual TLS tests.
#ifndef GANTRY_TEST_UNIT_ADMIN_TEST_CERTS_H_
#define GANTRY_TEST_UNIT_ADMIN_TEST_CERTS_H_

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace gantry::testing {

struct PemPair {
  std::string cert;
  std::string key;
};

class TestCa {
 public:
  // A self-signed CA named `cn`.
  explicit TestCa(const std::string& cn) : key_(EVP_EC_gen("P-256"), EVP_PKEY_free) {
    cert_.reset(NewCert(cn, key_.get()));
    X509_set_issuer_name(cert_.get(), X509_get_subject_name(cert_.get()));
    AddExt(cert_.get(), cert_.get(), NID_basic_constraints, "critical,CA:TRUE");
    AddExt(cert_.get(), cert_.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
    X509_sign(cert_.get(), key_.get(), EVP_sha256());
  }

  std::string CertPem() const { return ToPem(cert_.get(), nullptr); }

  // A leaf certificate signed by this CA: server (SAN 127.0.0.1, localhost)
  // or client.
  PemPair Issue(const std::string& cn, bool server) const {
    std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
    std::unique_ptr<X509, void (*)(X509*)> cert(NewCert(cn, key.get()), X509_free);
    X509_set_issuer_name(cert.get(), X509_get_subject_name(cert_.get()));
    AddExt(cert.get(), cert_.get(), NID_basic_constraints, "critical,CA:FALSE");
    AddExt(cert.get(), cert_.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment");
    AddExt(cert.get(), cert_.get(), NID_ext_key_usage, server ? "serverAuth" : "clientAuth");
    if (server) AddExt(cert.get(), cert_.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
    X509_sign(cert.get(), key_.get(), EVP_sha256());
    return {ToPem(cert.get(), nullptr), ToPem(nullptr, key.get())};
  }

 private:
  static X509* NewCert(const std::string& cn, EVP_PKEY* key) {
    X509* cert = X509_new();
    X509_set_version(cert, 2);
    unsigned char serial[16];
    RAND_bytes(serial, sizeof(serial));
    serial[0] &= 0x7f;
    BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
    X509_set_pubkey(cert, key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    return cert;
  }
  static void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (ext == nullptr) return;
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  static std::string ToPem(X509* cert, EVP_PKEY* key) {
    std::unique_ptr<BIO, void (*)(BIO*)> bio(BIO_new(BIO_s_mem()), BIO_free_all);
    if (cert != nullptr) PEM_write_bio_X509(bio.get(), cert);
    if (key != nullptr)
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(n));
  }

  std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> key_;
  std::unique_ptr<X509, void (*)(X509*)> cert_{nullptr, X509_free};
};

// Writes `text` to `dir`/`name` and returns the path.
inline std::string WriteTestFile(const std::filesystem::path& dir, const std::string& name,
                                 const std::string& text) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

}  // namespace gantry::testing

#endif  // GANTRY_TEST_UNIT_ADMIN_TEST_CERTS_H_
