// A minimal blocking HTTPS client (OpenSSL) for the tracker's TLS tests:
// one connection, one request, one response, every step bounded by the
// timeout. It verifies the server as a real client does (chain to
// `ca_file`, name or IP check); options make it play the clients the
// tracker must refuse.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "tests/tracker/tracker_process.h"

namespace swarmcast::tracker::testing {

struct TlsClientOptions {
  std::string ca_file;      // trust anchors (PEM); empty: trust none, so verification fails
  std::string verify_host;  // the name or IP the certificate must carry; empty: `host`
  int max_version = 0;      // e.g. TLS1_1_VERSION for an outdated client; 0: no cap
};

struct HttpsResult {
  bool handshake = false;  // the TLS handshake completed and the server was verified
  std::string error;       // why not: OpenSSL's reason and its verify result
  HttpResult http;
};

HttpsResult HttpsRaw(const std::string& host, std::uint16_t port, const std::string& raw,
                     const TlsClientOptions& tls,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
HttpsResult HttpsGet(const std::string& host, std::uint16_t port, const std::string& target,
                     const TlsClientOptions& tls);

}  // namespace swarmcast::tracker::testing
