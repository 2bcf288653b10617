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
#include "tracker/registry_access.h"
#include "tracker/siphash.h"
#include "tracker/swarm_state.h"

namespace swarmcast::tracker {

// A registry change SwarmTable accepted, for the database.
struct RegistryWrite {
  enum class Kind {
    kStore,   // a created or moved name: the entry with its .torrent bytes
    kUpdate,  // the same entry again: its push endpoint and owner
    kRemove,  // the name was unpublished: the entry and its bytes go
  } kind = Kind::kStore;
  InfoHash ih{};
  RegistryEntry entry;                         // kStore, kUpdate
  std::shared_ptr<const std::string> torrent;  // kStore
  // kStore of a moved name: the info-hash it moved away from, which keeps
  // its bytes but no name from now on.
  std::optional<InfoHash> retire;
  std::int64_t retired_at = 0;
};

// Durable storage of the registry, and where torrent bytes are read from.
class RegistryStore {
 public:
  virtual ~RegistryStore() = default;
  // `done(ok)` runs once, after the commit (or its failure), on the
  // store's thread.
  virtual void PersistRegistry(RegistryWrite write, std::function<void(bool ok)> done) = 0;
  // The .torrent bytes stored for `ih`: nullopt when there are none, an
  // error when the database could not be read. Any thread.
  virtual Result<std::optional<std::string>, std::string> ReadTorrent(const InfoHash& ih) = 0;
};

struct RegistryConfig {
  proto::MetainfoLimits limits;
  RegistryAccess access;  // who may read and write
  proto::Logger log;      // publishes and refused writes (info), failed commits (error)
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
  const RegistryAccess& access() const { return config_.access; }
  // For a write (PUT, DELETE), once its header is read and before any of
  // its body is: the 401 (no or wrong credential) or 403 (the name is
  // another publisher's) reply, logged; nullopt when it may go on.
  std::optional<HttpReply> CheckWriteBeforeBody(std::string_view method, std::string_view path,
                                                std::string_view authorization,
                                                std::string_view client) const;

 private:
  // The writer's publisher identity, or the refusal already sent.
  std::optional<std::string> Writer(std::string_view method, std::string_view name,
                                    std::string_view authorization, std::string_view client,
                                    const std::function<void(HttpReply)>& respond) const;
  void Publish(std::string_view name, std::string_view query, std::string body,
               const std::string& owner, std::string_view client,
               std::function<void(HttpReply)> respond);
  void Unpublish(std::string_view name, const std::string& owner, std::string_view client,
                 std::function<void(HttpReply)> respond);
  void Persist(RegistryWrite write, HttpReply reply, std::string what,
               std::function<void(HttpReply)> respond);
  HttpReply Get(std::string_view key, std::string_view sub);

  SwarmTable& table_;
  RegistryStore* const store_;
  const Clock& clock_;
  const RegistryConfig config_;
};

}  // namespace swarmcast::tracker
