// TLS for the node's connections to an https:// tracker (issue 14, item
// 5): the registry client's context and per-connection checks, and the
// one way to give libtorrent's HTTPS announces the same trust.
//
// Trust is the system's CAs (OpenSSL's default paths, which honour
// SSL_CERT_FILE and SSL_CERT_DIR) or, with --ca-file, the CAs in that
// file alone. Either way the server must present a certificate that
// chains to a trusted CA, is valid now, and names the host of the tracker
// URL (a DNS name, or an IP literal matched against IP SANs); TLS 1.2 or
// later.
#pragma once

#include <memory>
#include <string>

#include "proto/result.h"

namespace boost::asio::ssl {
class context;
}
namespace boost::system {
class error_code;
}
struct ssl_st;

namespace swarmcast::node {

// An immutable client context: share it, use it from any thread.
using ClientTlsContext = std::shared_ptr<boost::asio::ssl::context>;

// `ca_file` empty: the system's CAs. A CA file that cannot be read or
// holds no certificate is an error naming it.
Result<ClientTlsContext, std::string> MakeClientTlsContext(const std::string& ca_file);

// Before the handshake on `ssl` with `host` (a name or an IP literal, no
// brackets): SNI for a name (RFC 6066 allows no IP literals there), and
// the check that the certificate names `host`.
void ExpectServerName(ssl_st* ssl, const std::string& host);

// Why a handshake failed, in words an operator can act on: OpenSSL's
// certificate verdict when that was the cause ("certificate has expired",
// "IP address mismatch"), its reason otherwise.
std::string HandshakeFailureText(ssl_st* ssl, const boost::system::error_code& ec);

// libtorrent 2.0 makes the context of its HTTPS tracker connections
// itself, from OpenSSL's default verify paths, when the session starts,
// and has no setting for a CA file. So with --ca-file the process's
// default paths are pointed at it: SSL_CERT_FILE=ca_file, and SSL_CERT_DIR
// at a path that is not a directory, so the system's hashed CA directory
// adds nothing. Call before the first libtorrent session and before any
// other thread starts (setenv is not thread-safe). No-op when empty.
void UseCaFileForDefaultVerifyPaths(const std::string& ca_file);

// For a process that makes no TLS connection (a plain http:// tracker, and
// no tracker or web seed taken from a metainfo): points the default verify
// paths at /dev/null, so the libtorrent session loads no CA when it
// starts. It loads the system's bundle there whether or not it will use it,
// about 60 ms of CPU, three quarters of what a small get costs in all
// (docs/benchmarks.md), paid by every node before it joins the swarm, and
// all at once by gets started together on one machine. Were a TLS
// connection made after all, it would trust no certificate: it fails
// closed. Same constraints as above: before the first session and before
// any other thread starts.
void TrustNoCaForDefaultVerifyPaths();

}  // namespace swarmcast::node
