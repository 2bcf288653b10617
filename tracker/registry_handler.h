// The swarm registry's JSON API under /v1/swarms (see tracker/README.md for
// the contract the node relies on). Reads are answered from SwarmTable;
// a publish is answered once the database has committed it.
//
// Threads: Handle may run on any thread. `respond` is called exactly once,
// either before Handle returns or later from the database writer thread;
// the caller moves it onto its own executor.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "proto/log.h"
#include "proto/metainfo.h"
#include "tracker/clock.h"
#include "tracker/http_reply.h"
#include "tracker/siphash.h"
#include "tracker/swarm_state.h"
#include "tracker/token_check.h"

namespace swarmcast::tracker {

// Durable storage of a publish; `done(ok)` runs after the commit.
class RegistryStore {
 public:
  virtual ~RegistryStore() = default;
  virtual void PersistPublish(const InfoHash& ih, const RegistryEntry& entry,
                              std::function<void(bool ok)> done) = 0;
};

struct RegistryConfig {
  proto::MetainfoLimits limits;
  TokenSet admin;     // non-empty: PUT needs "Authorization: Bearer <token>"
  proto::Logger log;  // publishes and refused writes (info), failed commits (error)
  // Key of the opaque `peer` token the peer views show instead of the peer
  // id (drawn at start-up: stable for a peer within one tracker run).
  SipKey peer_token_key{};
};

class RegistryHandler {
 public:
  RegistryHandler(SwarmTable& table, RegistryStore* store, const Clock& clock,
                  RegistryConfig config);

  // `path` starts with /v1/swarms; `method` is the HTTP method name;
  // `client` is the client's address, for the log.
  void Handle(std::string_view method, std::string_view path, std::string_view query,
              std::string body, std::string_view authorization, std::string_view client,
              std::function<void(HttpReply)> respond);

  std::size_t max_body() const { return config_.limits.max_bytes; }
  // Whether `authorization` (the header's value) allows registry writes.
  bool Authorized(std::string_view authorization) const;
  // The 401 reply (logged) when it does not; called before the body is read.
  std::optional<HttpReply> CheckWriteAuthorized(std::string_view authorization,
                                                std::string_view path,
                                                std::string_view client) const;

 private:
  void Publish(std::string_view name, std::string_view query, std::string body,
               std::string_view authorization, std::string_view client,
               std::function<void(HttpReply)> respond);
  HttpReply Get(std::string_view key, std::string_view sub);

  SwarmTable& table_;
  RegistryStore* const store_;
  const Clock& clock_;
  const RegistryConfig config_;
};

}  // namespace swarmcast::tracker
