// The fleet's JSON API (tracker/README.md, "Fleet API"):
//
//   GET    /v1/agents               every registered agent
//   PUT    /v1/agents/{id}          an agent's sync (agent token)
//   GET    /v1/deployments          every deployment with its counts
//   GET    /v1/deployments/{name}   one deployment, each agent's state
//   PUT    /v1/deployments/{name}   deploy a published name (admin token)
//   DELETE /v1/deployments/{name}   remove it (its owner)
//
// Every body is at most kMaxBody bytes of JSON and every field in it is
// bounded and checked before use; a refusal is a JSON error with the
// reason. Threads: any (Fleet has its own mutex); `respond` is called
// before Handle returns.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "proto/log.h"
#include "tracker/clock.h"
#include "tracker/fleet.h"
#include "tracker/http_reply.h"
#include "tracker/registry_access.h"
#include "tracker/swarm_state.h"

namespace swarmcast::tracker {

class FleetHandler {
 public:
  // Room for kMaxReports reports with full reasons.
  static constexpr std::size_t kMaxBody = 1024 * 1024;
  static constexpr std::size_t kMaxReports = 1024;
  static constexpr std::size_t kMaxReason = 512;
  static constexpr std::size_t kMaxDataDir = 1024;

  FleetHandler(Fleet& fleet, const SwarmTable& table, const RegistryAccess& access,
               const Clock& clock, proto::Logger log)
      : fleet_(fleet), table_(table), access_(access), clock_(clock), log_(std::move(log)) {}

  // /v1/agents and /v1/deployments, and below.
  static bool IsFleetPath(std::string_view path);

  // For a PUT or DELETE once its header is read, before its body: the 401
  // for a missing or wrong credential; nullopt to go on.
  std::optional<HttpReply> CheckBeforeBody(std::string_view method, std::string_view path,
                                           std::string_view authorization,
                                           std::string_view client) const;

  HttpReply Handle(std::string_view method, std::string_view path, std::string_view body,
                   std::string_view authorization, std::string_view client);

 private:
  HttpReply Sync(std::string_view id, std::string_view body, std::string_view client);
  HttpReply Deploy(std::string_view name, std::string_view body, const std::string& owner,
                   std::string_view client);
  HttpReply Remove(std::string_view name, const std::string& owner, std::string_view client);
  HttpReply Get(std::string_view name) const;
  HttpReply ListAgents() const;

  Fleet& fleet_;
  const SwarmTable& table_;
  const RegistryAccess& access_;
  const Clock& clock_;
  const proto::Logger log_;
};

}  // namespace swarmcast::tracker
