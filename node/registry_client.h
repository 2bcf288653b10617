// Client for swarmcast-tracker's swarm registry (HTTP/1.1 over TCP, or
// over TLS for an https:// tracker URL, verified as node/tls_client.h
// says): publish a metainfo under a name, fetch it back by name or
// info-hash, read a swarm's completion view, and unpublish a name. The
// token, when given, goes with every request as `Authorization: Bearer`:
// an admin token for writes, an announce or admin token for a private
// tracker's reads. Synchronous: every call finishes or fails within the
// timeout given at construction (TLS handshake included), and every
// response is bounded (headers 16 KiB, body 16 MiB for a metainfo, 4 MiB
// for JSON).
//
// Not thread-safe; each call opens its own connection, so one client may be
// used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "node/tls_client.h"
#include "proto/result.h"

namespace swarmcast::node {

// "http[s]://host[:port][/base]" split into its parts (an IPv6 host in
// brackets: "http://[::1]:6969"). The port defaults to 80 for http and
// 443 for https.
struct TrackerUrl {
  bool https = false;
  std::string host;  // a name or an IP literal, without brackets
  std::string port = "80";
  std::string base_path;  // without a trailing '/', may be empty

  // With its scheme: every URL made from it (announces) keeps https.
  std::string ToString() const;
  // The BitTorrent announce URL: base + "/announce".
  std::string AnnounceUrl() const;
};

Result<TrackerUrl, std::string> ParseTrackerUrl(std::string_view url);

struct RegistryError {
  enum class Kind {
    kUnreachable,  // connect/read failed or timed out
    // The TLS handshake failed on TLS itself: the certificate was refused
    // (message says why) or the other side does not speak TLS. Final: no
    // retry makes an untrusted tracker trusted.
    kTlsRefused,
    kNotFound,     // 404
    kConflict,     // 409: the info-hash is published under another name
    kDenied,       // 401 (no or wrong token) or 403 (the name is another publisher's)
    kRejected,     // any other non-2xx status
    kBadResponse,  // a 2xx whose body we could not use
  };
  Kind kind = Kind::kUnreachable;
  int http_status = 0;
  std::string message;  // includes the tracker's {"error": ...} when given
};

struct PublishResult {
  bool created = false;  // 201 (false: 200, same info-hash again, or moved)
  std::string name;
  std::string info_hash;  // 40 hex
  // The info-hash the name pointed at before, when this publish moved it
  // (a rebuilt image); empty otherwise.
  std::string previous;
};

struct UnpublishResult {
  std::string name;
  std::string info_hash;  // the swarm the name pointed at
};

// What a publish records beside the metainfo (tracker/README.md).
struct PublishFields {
  std::string push;         // the seed's push endpoint, IP:PORT; empty: none
  bool push_chain = false;  // the seed links its subscribers into a chain
  std::string sha256;       // the whole file's SHA-256 pin; empty: none
};

struct SwarmInfo {
  std::string name;
  std::string info_hash;
  std::int64_t size = 0;
  std::int64_t seeders = 0;
  std::int64_t leechers = 0;
  std::int64_t completed = 0;
  std::string push;
  // The seed links its push subscribers into a chain: a get subscribing to
  // `push` takes a link's role (node/push_wiring.h).
  bool push_chain = false;
  // The publisher's whole-file SHA-256 pin (64 lowercase hex), empty when
  // none; a value that is not 64 hex digits is read as none.
  std::string sha256;
  std::int64_t created = 0;  // unix seconds of the first publish (list only)
};

struct Straggler {
  // The tracker's opaque token for the peer (its `peer` field; trackers
  // before it stopped publishing peer ids sent `peer_id`).
  std::string peer;
  std::string ip;
  std::int64_t port = 0;
  std::int64_t left = 0;
  std::int64_t since = 0;
  std::int64_t last_announce = 0;
  // Why it is not done (tracker/straggler.h): a code (stale, no-seed,
  // no-data, slow, downloading) and a line for a person; empty from a
  // tracker that does not say. Seconds since its `left` went down, and its
  // rate (bytes/s, -1 unknown).
  std::string why;
  std::string reason;
  std::int64_t idle_seconds = 0;
  std::int64_t rate = -1;
};

struct CompletionView {
  std::int64_t total = 0;
  std::int64_t done = 0;
  std::int64_t running = 0;
  std::int64_t stale = 0;
  std::vector<Straggler> stragglers;

  // No peer the tracker knows of is still downloading, and at least one
  // has finished. A stale peer (silent past the tracker's limit) may still
  // be downloading, so it counts as not done until the tracker expires it;
  // lingering is bounded by its own deadline anyway.
  bool AllDone() const { return done > 0 && running == 0 && stale == 0; }
};

class RegistryClient {
 public:
  // `tls` is required for an https URL (a refused handshake is then
  // kTlsRefused, its message saying why) and unused for http.
  RegistryClient(TrackerUrl url, std::chrono::milliseconds timeout, std::string token = {},
                 ClientTlsContext tls = nullptr);

  const TrackerUrl& url() const { return url_; }
  const std::string& token() const { return token_; }
  const ClientTlsContext& tls() const { return tls_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // The same tracker, token and TLS context with another timeout (the
  // control thread's polls keep theirs short).
  RegistryClient WithTimeout(std::chrono::milliseconds timeout) const {
    return RegistryClient(url_, timeout, token_, tls_);
  }

  // PUT /v1/swarms/{name}[?push=...][&push_chain=1][&sha256=...] with the
  // .torrent bytes.
  Result<PublishResult, RegistryError> Publish(const std::string& name,
                                               const std::string& torrent_bytes,
                                               const PublishFields& fields = {});
  // GET /v1/swarms/{key}; key is a name or a 40-hex info-hash.
  Result<SwarmInfo, RegistryError> GetSwarm(const std::string& key);
  // GET /v1/swarms: every published swarm (at most 100,000 are read).
  Result<std::vector<SwarmInfo>, RegistryError> ListSwarms();
  // GET /v1/swarms/{key}/torrent: the raw metainfo bytes (unchecked).
  Result<std::string, RegistryError> GetTorrent(const std::string& key);
  // GET /v1/swarms/{key}/completion.
  Result<CompletionView, RegistryError> GetCompletion(const std::string& key);
  // GET /healthz: whether the tracker is private (announces need a token).
  // A tracker without /healthz (older) is taken as not private.
  Result<bool, RegistryError> IsPrivate();
  // DELETE /v1/swarms/{name}: only the name's owner may.
  Result<UnpublishResult, RegistryError> Unpublish(const std::string& name);

  // A call of the fleet API (/v1/agents, /v1/deployments: node/fleet_api.h
  // builds and reads them): `method` GET, PUT or DELETE, `target` already
  // escaped, `json_body` sent as is. A 2xx reply's status and body (at most
  // 4 MiB); any other status becomes its error, as for the calls above.
  struct JsonAnswer {
    int status = 0;
    std::string body;
  };
  Result<JsonAnswer, RegistryError> CallJson(const std::string& method, const std::string& target,
                                             const std::string& json_body = {});

 private:
  struct Response {
    int status = 0;
    std::string body;
  };
  Result<Response, RegistryError> Request(const std::string& method, const std::string& target,
                                          const std::string& body, std::size_t body_limit);
  // A GET whose reply must be 200; any other status becomes its error.
  Result<Response, RegistryError> Get(const std::string& target, std::size_t body_limit);

  TrackerUrl url_;
  std::chrono::milliseconds timeout_;
  std::string token_;
  ClientTlsContext tls_;
};

std::string ToString(const RegistryError& e);

}  // namespace swarmcast::node
