// Maps request paths to handlers: /announce[/<token>], /scrape[/<token>],
// /v1/swarms..., /v1/agents/..., /v1/deployments..., /metrics, /healthz. Everything else is a 404
// JSON error.
#pragma once

#include <functional>

#include "tracker/announce_handler.h"
#include "tracker/fleet_handler.h"
#include "tracker/http_server.h"
#include "tracker/registry_handler.h"

namespace swarmcast::tracker {

class Router final : public HttpDispatcher {
 public:
  // `render_metrics` produces the /metrics body.
  // `fleet` may be null: no /v1/agents, /v1/deployments (404).
  Router(AnnounceHandler& announce, RegistryHandler& registry, FleetHandler* fleet,
         Metrics& metrics, std::function<std::string()> render_metrics);

  std::size_t BodyLimit(std::string_view method, std::string_view target) const override;
  std::size_t MaxBodyLimit() const override { return registry_.max_body(); }
  std::optional<HttpReply> RefuseBeforeBody(std::string_view method, std::string_view target,
                                            std::string_view authorization,
                                            const boost::asio::ip::address& remote) override;
  void Dispatch(HttpRequest request, std::function<void(HttpReply)> respond) override;

 private:
  AnnounceHandler& announce_;
  RegistryHandler& registry_;
  FleetHandler* const fleet_;
  Metrics& metrics_;
  std::function<std::string()> render_metrics_;
};

}  // namespace swarmcast::tracker
