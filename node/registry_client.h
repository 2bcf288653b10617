// Client for swarmcast-tracker's swarm registry (HTTP/1.1, plain TCP):
// publish a metainfo under a name, fetch it back by name or info-hash, and
// read a swarm's completion view. Synchronous: every call finishes or fails
// within the timeout given at construction, and every response is bounded
// (headers 16 KiB, body 16 MiB for a metainfo, 4 MiB for JSON).
//
// Not thread-safe; each call opens its own connection, so one client may be
// used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/result.h"

namespace swarmcast::node {

// "http://host[:port][/base]" split into its parts (an IPv6 host in
// brackets: "http://[::1]:6969"). Only http is supported.
struct TrackerUrl {
  std::string host;  // a name or an IP literal, without brackets
  std::string port = "80";
  std::string base_path;  // without a trailing '/', may be empty

  std::string ToString() const;
  // The BitTorrent announce URL: base + "/announce".
  std::string AnnounceUrl() const;
};

Result<TrackerUrl, std::string> ParseTrackerUrl(std::string_view url);

struct RegistryError {
  enum class Kind {
    kUnreachable,  // connect/read failed or timed out
    kNotFound,     // 404
    kConflict,     // 409: the name belongs to another info-hash
    kRejected,     // any other non-2xx status
    kBadResponse,  // a 2xx whose body we could not use
  };
  Kind kind = Kind::kUnreachable;
  int http_status = 0;
  std::string message;  // includes the tracker's {"error": ...} when given
};

struct PublishResult {
  bool created = false;  // 201 (false: 200, same info-hash published again)
  std::string name;
  std::string info_hash;  // 40 hex
};

struct SwarmInfo {
  std::string name;
  std::string info_hash;
  std::int64_t size = 0;
  std::int64_t seeders = 0;
  std::int64_t leechers = 0;
  std::int64_t completed = 0;
  std::string push;
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
  RegistryClient(TrackerUrl url, std::chrono::milliseconds timeout, std::string admin_token = {});

  const TrackerUrl& url() const { return url_; }

  // PUT /v1/swarms/{name}[?push=...] with the .torrent bytes.
  Result<PublishResult, RegistryError> Publish(const std::string& name,
                                               const std::string& torrent_bytes,
                                               const std::string& push = {});
  // GET /v1/swarms/{key}; key is a name or a 40-hex info-hash.
  Result<SwarmInfo, RegistryError> GetSwarm(const std::string& key);
  // GET /v1/swarms: every published swarm (at most 100,000 are read).
  Result<std::vector<SwarmInfo>, RegistryError> ListSwarms();
  // GET /v1/swarms/{key}/torrent: the raw metainfo bytes (unchecked).
  Result<std::string, RegistryError> GetTorrent(const std::string& key);
  // GET /v1/swarms/{key}/completion.
  Result<CompletionView, RegistryError> GetCompletion(const std::string& key);

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
  std::string admin_token_;
};

std::string ToString(const RegistryError& e);

}  // namespace swarmcast::node
