#include "tracker/tracker_app.h"

#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "proto/endpoint.h"
#include "tracker/announce_handler.h"
#include "tracker/clock.h"
#include "tracker/fleet.h"
#include "tracker/fleet_handler.h"
#include "tracker/fleet_store.h"
#include "tracker/http_server.h"
#include "tracker/json.h"
#include "tracker/metrics.h"
#include "tracker/process_metrics.h"
#include "tracker/registry_access.h"
#include "tracker/registry_handler.h"
#include "tracker/router.h"
#include "tracker/sqlite_store.h"
#include "tracker/swarm_state.h"
#include "tracker/tls_context.h"
#include "tracker/token_file.h"
#include "tracker/udp_server.h"

namespace swarmcast::tracker {
namespace net = boost::asio;

namespace {

struct ListenAddress {
  net::ip::address ip;
  std::uint16_t port;
};

Result<ListenAddress, std::string> ParseListen(const std::string& s) {
  auto e = proto::ParseEndpoint(s, {.allow_port_zero = true});
  if (!e) return Unexpected("bad --listen " + s + ": " + e.error());
  boost::system::error_code ec;
  auto ip = net::ip::make_address(e->host, ec);
  if (ec) return Unexpected("bad address in --listen " + s);
  return ListenAddress{ip, e->port};
}

std::string Endpoint(const net::ip::address& ip, std::uint16_t port) {
  return proto::FormatEndpoint(ip.to_string(), port);
}

void Fail(const TrackerConfig& c, const proto::Logger& log, const std::string& msg) {
  if (c.json) {
    Json j;
    j["event"] = "error";
    j["error"] = msg;
    std::cout << JsonText(j) << std::endl;
  }
  log.Error(msg);
}

// --max-connections above the descriptor limit only turns into failing
// accept()s: lower it to the limit minus what the process needs besides
// connections (stdio, the database and its WAL files, epoll, listeners,
// one descriptor for refusing a connection over the cap).
HttpLimits ClampConnections(HttpLimits http, std::size_t listeners, const proto::Logger& log) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return http;
  const std::size_t reserve = 32 + 2 * listeners;
  const auto limit = static_cast<std::size_t>(rl.rlim_cur);
  const std::size_t most = limit > reserve + 1 ? limit - reserve : 1;
  if (http.max_connections > most) {
    log.Warning("--max-connections " + std::to_string(http.max_connections) + " lowered to " +
                std::to_string(most) + ": the descriptor limit (ulimit -n) is " +
                std::to_string(limit) + " and " + std::to_string(reserve) +
                " are kept for the rest; raise the limit to allow more");
    http.max_connections = most;
  }
  return http;
}

// The admin tokens registry writes need: those configured, or else (and
// unless the registry is explicitly open) the one this tracker keeps in its
// generated token file. Logs where the credential is; nullopt after
// logging why the tracker cannot start.
std::optional<std::vector<std::string>> AdminTokens(const TrackerConfig& c,
                                                    const proto::Logger& log) {
  if (c.open_registry) {
    log.Warning(
        "registry is open (--open-registry): anyone who reaches this tracker may "
        "publish new names" +
        std::string(c.admin_tokens.empty() ? "; a name belongs to the address that published it"
                                           : " without a token (owned by their address)") +
        ". For a lab only.");
    return c.admin_tokens;
  }
  if (!c.admin_tokens.empty()) {
    log.Info("registry writes need one of the " + std::to_string(c.admin_tokens.size()) +
             " configured admin tokens");
    return c.admin_tokens;
  }
  auto generated = LoadOrCreateAdminToken(c.generated_token_file);
  if (!generated) {
    Fail(c, log, "admin token: " + generated.error());
    return std::nullopt;
  }
  log.Info(std::string("registry writes need the admin token ") +
           (generated->created ? "made now in " : "kept in ") + c.generated_token_file +
           " (mode 0600; a seed on this host reads it with --token-file " + c.generated_token_file +
           ")");
  return std::vector<std::string>{generated->token};
}

}  // namespace

int RunTracker(const TrackerConfig& config, const proto::Logger& log) {
  // Before the database: a bad certificate or key creates nothing.
  std::shared_ptr<net::ssl::context> tls;
  if (!config.tls_cert.empty()) {
    auto loaded_tls = LoadServerTls(config.tls_cert, config.tls_key);
    if (!loaded_tls) {
      Fail(config, log, loaded_tls.error());
      return 2;
    }
    for (const std::string& w : loaded_tls->warnings) log.Warning(w);
    tls = std::move(loaded_tls->context);
  }
  SystemClock clock;
  Metrics metrics;
  auto admin_tokens = AdminTokens(config, log);
  if (!admin_tokens) return 1;
  auto store = SqliteStore::Open(config.db, metrics, log);
  if (!store) {
    Fail(config, log, store.error());
    return 1;
  }
  SwarmTable table(config.state, store->get(), RandomSipKey()[0]);
  auto loaded = (*store)->Load(table, clock.Now());
  if (!loaded) {
    Fail(config, log, loaded.error());
    return 1;
  }

  // The fleet's tables on a connection of their own (its writes are
  // synchronous; tracker/fleet_store.h).
  auto fleet_store = SqliteFleetStore::Open(config.db, log);
  if (!fleet_store) {
    Fail(config, log, fleet_store.error());
    return 1;
  }
  Fleet fleet(fleet_store->get(), FleetLimits{});
  auto fleet_loaded = (*fleet_store)->Load(fleet);
  if (!fleet_loaded) {
    Fail(config, log, fleet_loaded.error());
    return 1;
  }

  AnnounceConfig ac;
  ac.limits = config.query;
  ac.trust_ip_param = config.trust_ip_param;
  // A publisher may take part in the swarms it publishes: in private mode
  // its admin token is an announce token too.
  if (!config.announce_tokens.empty()) {
    std::vector<std::string> announcers = config.announce_tokens;
    announcers.insert(announcers.end(), admin_tokens->begin(), admin_tokens->end());
    announcers.insert(announcers.end(), config.agent_tokens.begin(), config.agent_tokens.end());
    ac.tokens = TokenSet(announcers);
  }
  ac.min_interval = config.min_interval;
  ac.log = log;
  AnnounceHandler announce(table, metrics, clock, ac);
  RegistryConfig rc;
  rc.limits = config.metainfo;
  rc.access = RegistryAccess(AccessOptions{*admin_tokens, config.announce_tokens,
                                           config.open_registry, config.agent_tokens});
  rc.log = log;
  rc.peer_token_key = RandomSipKey();
  RegistryHandler registry(table, store->get(), clock, rc);
  SqliteStore* db = store->get();
  FleetHandler fleet_handler(fleet, table, registry.access(), clock, log);
  Router router(announce, registry, &fleet_handler, metrics, [&] {
    SwarmTable::Totals t = table.GetTotals();
    GaugeValues g{t.swarms,
                  t.registered,
                  t.peers,
                  t.seeders,
                  t.leechers,
                  db->pending(),
                  metrics.connections().load()};
    std::string out = metrics.Render(g);
    RenderProcessMetrics(out);
    return out;
  });
  UdpConfig uc;
  uc.private_mode = !config.announce_tokens.empty();
  uc.trust_ip_param = config.trust_ip_param;
  UdpProtocol udp_protocol(table, metrics, clock, uc, RandomSipKey());

  const HttpLimits http_limits = ClampConnections(config.http, config.listen.size(), log);
  net::io_context io(config.threads);
  std::vector<std::unique_ptr<HttpServer>> http;
  std::vector<std::unique_ptr<UdpServer>> udp;
  std::vector<std::string> bound;
  for (const std::string& l : config.listen) {
    auto at = ParseListen(l);
    if (!at) {
      Fail(config, log, at.error());
      return 2;
    }
    // TCP and UDP share the port number; with port 0 the kernel picks the
    // TCP port, and UDP may find it taken, so try a few times.
    boost::system::error_code ec;
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto h = std::make_unique<HttpServer>(io, http_limits, router, metrics, log, tls);
      ec = h->Listen({at->ip, at->port});
      if (ec) break;
      std::uint16_t port = h->local_endpoint().port();
      std::unique_ptr<UdpServer> u;
      if (config.udp) {
        u = std::make_unique<UdpServer>(io, udp_protocol);
        ec = u->Listen({at->ip, port});
        if (ec && at->port == 0) continue;
        if (ec) break;
      }
      bound.push_back(Endpoint(at->ip, port));
      http.push_back(std::move(h));
      if (u) udp.push_back(std::move(u));
      break;
    }
    if (ec) {
      Fail(config, log, "cannot listen on " + l + ": " + ec.message());
      return 1;
    }
  }
  (*store)->Start(config.batch_interval);
  for (auto& h : http) h->Start();
  for (auto& u : udp) u->Start();

  // Expiry sweep: often enough that a peer outlives its expiry by at most
  // a tenth of it.
  net::steady_timer expiry(io);
  const auto sweep =
      std::chrono::seconds(std::clamp<std::int64_t>(config.state.expire_after / 10, 1, 30));
  std::function<void()> arm = [&] {
    expiry.expires_after(sweep);
    expiry.async_wait([&](boost::system::error_code ec) {
      if (ec) return;
      table.Expire(clock.Now());
      arm();
    });
  };
  arm();

  net::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code, int) {
    for (auto& h : http) h->Stop();
    for (auto& u : udp) u->Stop();
    expiry.cancel();
    io.stop();
  });

  if (config.json) {
    Json j;
    j["event"] = "listening";
    j["addresses"] = bound;
    j["udp"] = config.udp;
    j["tls"] = tls != nullptr;
    j["db"] = config.db;
    j["registry"] = config.open_registry ? "open" : "token";
    j["token_file"] = config.open_registry || !config.admin_tokens.empty()
                          ? Json()
                          : Json(config.generated_token_file);
    j["private"] = !config.announce_tokens.empty();
    j["swarms"] = loaded->swarms;
    j["peers"] = loaded->peers;
    j["deployments"] = fleet_loaded->deployments;
    j["agents"] = fleet_loaded->agents;
    std::cout << JsonText(j) << std::endl;
  }
  {
    std::string line = "listening on";
    for (const auto& b : bound) line += " " + b;
    line += std::string(" (") + (tls ? "HTTPS" : "HTTP") + (config.udp ? "+UDP)" : ")");
    line += ", db " + config.db + " (" + std::to_string(loaded->swarms) + " swarms, " +
            std::to_string(loaded->peers) + " peers, " + std::to_string(fleet_loaded->deployments) +
            " deployments, " + std::to_string(fleet_loaded->agents) + " agents restored)";
    log.Info(line);
  }

  std::vector<std::thread> threads;
  for (int i = 1; i < config.threads; ++i) threads.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : threads) t.join();
  (*store)->Stop();  // final batch: a clean stop loses nothing
  if (config.json) std::cout << JsonText(Json{{"event", "stopped"}}) << std::endl;
  log.Info("stopped");
  return 0;
}

}  // namespace swarmcast::tracker
