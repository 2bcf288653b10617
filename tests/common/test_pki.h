// Real certificates made inside a test, with OpenSSL's C API: a CA of the
// test's own and the server certificates it issues (P-256 keys, SHA-256
// signatures, the extensions a browser-grade verifier expects). Nothing
// is faked: the tracker and the node verify these exactly as they would a
// production chain. Failures throw std::runtime_error (the test fails with
// OpenSSL's reason).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace swarmcast::testing {

struct CertSpec {
  std::string common_name = "swarmcast test server";
  std::vector<std::string> ip_sans;   // subjectAltName IP entries, e.g. "127.0.0.1"
  std::vector<std::string> dns_sans;  // subjectAltName DNS entries, e.g. "localhost"
  // Validity, relative to now: the default is valid from an hour ago for a
  // day. Both in the past makes an expired certificate.
  std::chrono::seconds not_before = -std::chrono::hours(1);
  std::chrono::seconds not_after = std::chrono::hours(24);
};

class TestCa {
 public:
  explicit TestCa(const std::string& name = "swarmcast test CA");
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  // The CA's own (self-signed) certificate as PEM, what a client trusts.
  void WriteCert(const std::filesystem::path& path) const;
  // A server certificate signed by this CA, and its key (mode 0600).
  void Issue(const CertSpec& spec, const std::filesystem::path& cert_path,
             const std::filesystem::path& key_path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swarmcast::testing
