#include "tests/tracker/https_client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>

namespace swarmcast::tracker::testing {
namespace {

std::string OpenSslError(SSL* ssl) {
  char reason[256] = "";
  ERR_error_string_n(ERR_get_error(), reason, sizeof reason);
  std::string out = reason;
  const long verify = ssl != nullptr ? SSL_get_verify_result(ssl) : X509_V_OK;
  if (verify != X509_V_OK) out += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
  return out;
}

bool IsIpLiteral(const std::string& host) {
  ASN1_OCTET_STRING* ip = a2i_IPADDRESS(host.c_str());
  ASN1_OCTET_STRING_free(ip);
  return ip != nullptr;
}

}  // namespace

HttpsResult HttpsRaw(const std::string& host, std::uint16_t port, const std::string& raw,
                     const TlsClientOptions& tls, std::chrono::milliseconds timeout) {
  HttpsResult r;
  const int fd = Connect(host, port, SOCK_STREAM);
  if (fd < 0) {
    r.error = "connect failed";
    return r;
  }
  // OpenSSL writes with write(2): a server that closed at once (over a
  // connection cap) must end the handshake with EPIPE, not the test.
  signal(SIGPIPE, SIG_IGN);
  // Blocking I/O, each call bounded: simpler than a state machine, and a
  // hung server shows as a timeout, not a hung test.
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  if (tls.max_version != 0) {
    // An old protocol needs the lowest security level to be offered at all.
    SSL_CTX_set_security_level(ctx.get(), 0);
    SSL_CTX_set_min_proto_version(ctx.get(), TLS1_VERSION);
    SSL_CTX_set_max_proto_version(ctx.get(), tls.max_version);
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (!tls.ca_file.empty() &&
      SSL_CTX_load_verify_locations(ctx.get(), tls.ca_file.c_str(), nullptr) != 1) {
    r.error = "cannot load " + tls.ca_file + ": " + OpenSslError(nullptr);
    close(fd);
    return r;
  }
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  const std::string expect = tls.verify_host.empty() ? host : tls.verify_host;
  if (IsIpLiteral(expect)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), expect.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl.get(), expect.c_str());
    SSL_set1_host(ssl.get(), expect.c_str());
  }
  if (SSL_connect(ssl.get()) != 1) {
    r.error = OpenSslError(ssl.get());
    close(fd);
    return r;
  }
  r.handshake = true;
  std::string in;
  if (SSL_write(ssl.get(), raw.data(), static_cast<int>(raw.size())) > 0) {
    char buf[16384];
    while (in.size() < ResponseSize(in)) {
      const int n = SSL_read(ssl.get(), buf, sizeof buf);
      if (n <= 0) break;
      in.append(buf, static_cast<std::size_t>(n));
    }
  }
  SSL_shutdown(ssl.get());
  close(fd);
  r.http = ParseHttpResponse(in);
  return r;
}

HttpsResult HttpsGet(const std::string& host, std::uint16_t port, const std::string& target,
                     const TlsClientOptions& tls) {
  return HttpsRaw(host, port, "GET " + target + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                  tls);
}

}  // namespace swarmcast::tracker::testing
