// Who may read and write the swarm registry (tracker/README.md, "Access").
//
// Writes (PUT, DELETE) come from a publisher. A publisher is one admin
// token: each configured token is its own publisher, named by a one-way
// digest of it ("token:" + 32 hex digits), so the database never holds a
// token. With --open-registry a write without a token is also accepted;
// its publisher is the client's address ("addr:" + IP), the only identity
// an open registry has. A name belongs to the publisher that created it.
//
// Reads: open, unless the tracker runs in private mode (--announce-token);
// then every read that reveals a swarm needs an announce or admin token as
// `Authorization: Bearer`. Never a `?token=` parameter: URLs end up in
// proxy logs, shell history and `ps`; announces carry theirs in the URL
// only because BitTorrent clients can send nothing else.
//
// Agents (`swarmcast agent`: PUT /v1/agents/{id}) need an agent token
// (--agent-token), an announce token or an admin token, so a fleet can be
// given a credential that lets its nodes register and report but not
// publish or deploy; with --open-registry a sync without a token is
// accepted too. In private mode an agent token also reads and announces
// (an agent must fetch what it is assigned).
//
// Immutable after construction; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "proto/result.h"
#include "tracker/token_check.h"

namespace swarmcast::tracker {

struct AccessOptions {
  std::vector<std::string> admin_tokens;     // one per publisher
  std::vector<std::string> announce_tokens;  // non-empty: private mode
  bool open_registry = false;                // writes without a token allowed
  std::vector<std::string> agent_tokens;     // may sync as an agent
};

class RegistryAccess {
 public:
  RegistryAccess() = default;  // open registry, open reads (unit tests)
  explicit RegistryAccess(const AccessOptions& options);

  // The publisher a write with this Authorization header value comes from,
  // or the reason for a 401: no token where one is needed, or a token that
  // is not an admin token (a wrong token is refused even in open mode: the
  // client meant to be someone).
  Result<std::string, std::string> Writer(std::string_view authorization,
                                          std::string_view client_ip) const;
  // Whether a read with this Authorization header value may see swarms.
  bool MayRead(std::string_view authorization) const;
  // Whether an agent sync with this Authorization header value is allowed;
  // otherwise the reason for a 401.
  Result<bool, std::string> MayAgent(std::string_view authorization) const;

  bool private_reads() const { return private_reads_; }
  bool open_registry() const { return open_; }

 private:
  TokenSet admins_;
  std::vector<std::string> publisher_ids_;  // parallel to admins_
  TokenSet readers_;                        // announce, agent and admin tokens
  TokenSet agents_;                         // the same set: who may sync as an agent
  bool private_reads_ = false;
  bool open_ = true;
};

// The token in "Bearer TOKEN", or empty when the value is not of that form.
std::string_view BearerToken(std::string_view authorization);

}  // namespace swarmcast::tracker
