#include "tracker/router.h"

#include <nlohmann/json.hpp>

namespace swarmcast::tracker {
namespace {

constexpr std::string_view kRegistryPrefix = "/v1/swarms";

// "/announce" -> true with empty token; "/announce/abc" -> token "abc".
bool MatchWithToken(std::string_view path, std::string_view base, std::string_view& token) {
  if (path.substr(0, base.size()) != base) return false;
  std::string_view rest = path.substr(base.size());
  if (rest.empty()) {
    token = {};
    return true;
  }
  if (rest[0] != '/' || rest.size() < 2 || rest.find('/', 1) != std::string_view::npos) {
    return false;
  }
  token = rest.substr(1);
  return true;
}

bool IsRegistryPath(std::string_view path) {
  return path.substr(0, kRegistryPrefix.size()) == kRegistryPrefix &&
         (path.size() == kRegistryPrefix.size() || path[kRegistryPrefix.size()] == '/');
}

}  // namespace

Router::Router(AnnounceHandler& announce, RegistryHandler& registry, FleetHandler* fleet,
               Metrics& metrics, std::function<std::string()> render_metrics)
    : announce_(announce),
      registry_(registry),
      fleet_(fleet),
      metrics_(metrics),
      render_metrics_(std::move(render_metrics)) {}

std::size_t Router::BodyLimit(std::string_view method, std::string_view target) const {
  if (method != "PUT") return 0;
  const std::string_view path = SplitTarget(target).path;
  if (IsRegistryPath(path)) return registry_.max_body();
  if (fleet_ && FleetHandler::IsFleetPath(path)) return FleetHandler::kMaxBody;
  return 0;
}

std::optional<HttpReply> Router::RefuseBeforeBody(std::string_view method, std::string_view target,
                                                  std::string_view authorization,
                                                  const boost::asio::ip::address& remote) {
  const std::string_view path = SplitTarget(target).path;
  if (fleet_ && FleetHandler::IsFleetPath(path)) {
    auto refused = fleet_->CheckBeforeBody(method, path, authorization, remote.to_string());
    if (refused) metrics_.Count(RequestKind::kRegistry, false);
    return refused;
  }
  if ((method != "PUT" && method != "DELETE") || !IsRegistryPath(path)) return std::nullopt;
  auto refused = registry_.CheckWriteBeforeBody(method, path, authorization, remote.to_string());
  if (refused) metrics_.Count(RequestKind::kRegistry, false);
  return refused;
}

void Router::Dispatch(HttpRequest request, std::function<void(HttpReply)> respond) {
  auto [path, query] = SplitTarget(request.target);
  std::string_view token;
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (MatchWithToken(path, "/announce", token)) {
    if (!get) return respond(JsonError(405, "method not allowed"));
    return respond({200, "text/plain", announce_.Announce(query, token, request.remote)});
  }
  if (MatchWithToken(path, "/scrape", token)) {
    if (!get) return respond(JsonError(405, "method not allowed"));
    return respond({200, "text/plain", announce_.Scrape(query, token)});
  }
  if (IsRegistryPath(path)) {
    auto counted = [this, respond = std::move(respond)](HttpReply r) {
      metrics_.Count(RequestKind::kRegistry, r.status < 400);
      respond(std::move(r));
    };
    return registry_.Handle(request.method, path, query, std::move(request.body),
                            request.authorization, request.remote.to_string(), std::move(counted));
  }
  if (fleet_ && FleetHandler::IsFleetPath(path)) {
    HttpReply r = fleet_->Handle(request.method, path, request.body, request.authorization,
                                 request.remote.to_string());
    metrics_.Count(RequestKind::kRegistry, r.status < 400);
    return respond(std::move(r));
  }
  if (path == "/healthz") {
    // Liveness: open in every mode, and it tells nothing about swarms;
    // `private` tells a node whether its announces must carry its token.
    if (!get) return respond(JsonError(405, "method not allowed"));
    return respond(
        JsonReply(200, Json{{"status", "ok"}, {"private", registry_.access().private_reads()}}));
  }
  if (path == "/metrics") {
    if (!get) return respond(JsonError(405, "method not allowed"));
    // Swarm and peer counts: in private mode only for token holders
    // (Prometheus sends one with `authorization: credentials_file`).
    if (!registry_.access().MayRead(request.authorization)) {
      metrics_.Count(RequestKind::kMetrics, false);
      return respond(JsonError(401, "token missing or wrong: this tracker is private"));
    }
    metrics_.Count(RequestKind::kMetrics, true);
    return respond({200, "text/plain; version=0.0.4", render_metrics_()});
  }
  metrics_.Count(RequestKind::kOther, false);
  respond(JsonError(404, "not found"));
}

}  // namespace swarmcast::tracker
