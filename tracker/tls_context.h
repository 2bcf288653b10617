// The tracker's HTTPS server context (--tls-cert, --tls-key): what makes
// its HTTP listeners speak TLS only (http_server.h).
//
// - TLS 1.2 and later; no renegotiation (a client could make the server
//   redo the expensive half of a handshake at will).
// - The certificate file is a PEM chain, the server's certificate first;
//   the key file a PEM private key that must match it. Each is read once,
//   at most 1 MiB, at start-up (no reload: restart to rotate).
// - The key is refused when other users may read it: o+rwx set, or g+rwx
//   unless root owns the file (0640 root:GROUP is how a service group is
//   usually given a key). A readable key lets anyone on the host pose as
//   the tracker and read every token sent to it; a refusal at start-up is
//   seen at once, a warning in a log rarely is.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "proto/result.h"

namespace boost::asio::ssl {
class context;
}

namespace swarmcast::tracker {

struct ServerTls {
  std::shared_ptr<boost::asio::ssl::context> context;  // immutable once made: any thread
  // What an operator should know but that does not stop the tracker (a
  // certificate outside its validity period: clients will refuse it).
  std::vector<std::string> warnings;
};

// Every failure names the file and why (missing, not PEM, key mismatch,
// key readable by others).
Result<ServerTls, std::string> LoadServerTls(const std::string& cert_file,
                                             const std::string& key_file);

}  // namespace swarmcast::tracker
