#include "node/tls_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <filesystem>

namespace swarmcast::node {
namespace {

namespace ssl = boost::asio::ssl;

bool IsIpLiteral(const std::string& host) {
  ASN1_OCTET_STRING* ip = a2i_IPADDRESS(host.c_str());
  ASN1_OCTET_STRING_free(ip);
  return ip != nullptr;
}

}  // namespace

Result<ClientTlsContext, std::string> MakeClientTlsContext(const std::string& ca_file) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  if (SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1) {
    return Unexpected(std::string("TLS: cannot require TLS 1.2 or later"));
  }
  boost::system::error_code ec;
  ctx->set_verify_mode(ssl::verify_peer, ec);
  if (ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec) return Unexpected("TLS: cannot load the system's CAs: " + ec.message());
    return ctx;
  }
  std::error_code fs_ec;
  if (!std::filesystem::is_regular_file(ca_file, fs_ec)) {
    return Unexpected("--ca-file " + ca_file + ": no such file");
  }
  ctx->load_verify_file(ca_file, ec);
  if (ec) {
    return Unexpected("--ca-file " + ca_file + ": no CA certificate in it (" + ec.message() + ")");
  }
  return ctx;
}

void ExpectServerName(ssl_st* ssl, const std::string& host) {
  // OpenSSL's own name and IP checks run inside the chain verification,
  // so a mismatch is reported as its verify result (HandshakeFailureText).
  if (IsIpLiteral(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
    return;
  }
  SSL_set_tlsext_host_name(ssl, host.c_str());
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  SSL_set1_host(ssl, host.c_str());
}

std::string HandshakeFailureText(ssl_st* ssl, const boost::system::error_code& ec) {
  const long verify = ssl != nullptr ? SSL_get_verify_result(ssl) : X509_V_OK;
  if (verify == X509_V_OK) return ec.message();
  std::string text = std::string("certificate refused: ") + X509_verify_cert_error_string(verify);
  switch (verify) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      text +=
          " (not signed by a CA this node trusts: the system's, or the one given with --ca-file)";
      break;
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      text += " (the certificate does not name the host of the tracker URL)";
      break;
    default:
      break;
  }
  return text;
}

void UseCaFileForDefaultVerifyPaths(const std::string& ca_file) {
  if (ca_file.empty()) return;
  const std::string absolute = std::filesystem::absolute(ca_file).string();
  ::setenv("SSL_CERT_FILE", absolute.c_str(), 1);
  // OpenSSL looks certificates up in SSL_CERT_DIR as DIR/<hash>.0; under a
  // regular file every such lookup fails, so the file above is the only
  // trust anchor, as it is for the registry client.
  ::setenv("SSL_CERT_DIR", absolute.c_str(), 1);
}

void TrustNoCaForDefaultVerifyPaths() {
  // An empty file holds no certificate, and lookups under a path that is
  // not a directory find none; OpenSSL takes both without an error.
  ::setenv("SSL_CERT_FILE", "/dev/null", 1);
  ::setenv("SSL_CERT_DIR", "/dev/null", 1);
}

}  // namespace swarmcast::node
