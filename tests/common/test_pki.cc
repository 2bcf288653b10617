#include "tests/common/test_pki.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <stdexcept>

namespace swarmcast::testing {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  char reason[256] = "";
  ERR_error_string_n(ERR_get_error(), reason, sizeof reason);
  throw std::runtime_error("test PKI: " + what + ": " + reason);
}

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

Key NewKey() {
  Key k(EVP_EC_gen("P-256"));
  if (!k) Fail("EC key generation");
  return k;
}

void AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, ctx, nid, value.c_str());
  if (ext == nullptr) Fail("extension " + value);
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (ok != 1) Fail("adding extension " + value);
}

// A certificate for `key` named `cn`, signed by `issuer_key` (issuer
// `issuer`, or itself when null), with the given validity and extensions.
Cert MakeCert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key,
              std::chrono::seconds not_before, std::chrono::seconds not_after,
              const std::vector<std::pair<int, std::string>>& extensions) {
  Cert cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) Fail("X509_new");
  // A random 63-bit serial: two certificates of one CA never share one.
  unsigned char serial[8];
  if (RAND_bytes(serial, sizeof serial) != 1) Fail("RAND_bytes");
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  if (bn == nullptr || BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get())) == nullptr) {
    Fail("serial");
  }
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), static_cast<long>(not_before.count()));
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(not_after.count()));
  if (X509_set_pubkey(cert.get(), key) != 1) Fail("set_pubkey");
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) != 1) Fail("issuer");
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, signer, cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : extensions) AddExtension(cert.get(), &ctx, nid, value);
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) Fail("X509_sign");
  return cert;
}

void WritePem(const std::filesystem::path& path, X509* cert) {
  BIO* bio = BIO_new_file(path.c_str(), "w");
  if (bio == nullptr) Fail("open " + path.string());
  const int ok = PEM_write_bio_X509(bio, cert);
  BIO_free(bio);
  if (ok != 1) Fail("write " + path.string());
}

void WritePem(const std::filesystem::path& path, EVP_PKEY* key) {
  BIO* bio = BIO_new_file(path.c_str(), "w");
  if (bio == nullptr) Fail("open " + path.string());
  const int ok = PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  BIO_free(bio);
  if (ok != 1) Fail("write " + path.string());
  ::chmod(path.c_str(), 0600);
}

}  // namespace

struct TestCa::Impl {
  Key key;
  Cert cert;
};

TestCa::TestCa(const std::string& name) : impl_(std::make_unique<Impl>()) {
  impl_->key = NewKey();
  impl_->cert = MakeCert(impl_->key.get(), name, nullptr, impl_->key.get(), -std::chrono::hours(1),
                         std::chrono::hours(48),
                         {{NID_basic_constraints, "critical,CA:TRUE"},
                          {NID_key_usage, "critical,keyCertSign,cRLSign"},
                          {NID_subject_key_identifier, "hash"}});
}

TestCa::~TestCa() = default;

void TestCa::WriteCert(const std::filesystem::path& path) const {
  WritePem(path, impl_->cert.get());
}

void TestCa::Issue(const CertSpec& spec, const std::filesystem::path& cert_path,
                   const std::filesystem::path& key_path) const {
  Key key = NewKey();
  std::vector<std::pair<int, std::string>> ext = {{NID_basic_constraints, "critical,CA:FALSE"},
                                                  {NID_key_usage, "critical,digitalSignature"},
                                                  {NID_ext_key_usage, "serverAuth"},
                                                  {NID_subject_key_identifier, "hash"},
                                                  {NID_authority_key_identifier, "keyid:always"}};
  std::string san;
  for (const auto& ip : spec.ip_sans) san += (san.empty() ? "IP:" : ",IP:") + ip;
  for (const auto& dns : spec.dns_sans) san += (san.empty() ? "DNS:" : ",DNS:") + dns;
  if (!san.empty()) ext.emplace_back(NID_subject_alt_name, san);
  Cert cert = MakeCert(key.get(), spec.common_name, impl_->cert.get(), impl_->key.get(),
                       spec.not_before, spec.not_after, ext);
  WritePem(cert_path, cert.get());
  WritePem(key_path, key.get());
}

}  // namespace swarmcast::testing
