#include "tracker/config.h"

#include <boost/program_options.hpp>
#include <sstream>

#include "config/config_file.h"
#include "tracker/token_file.h"

namespace swarmcast::tracker {
namespace po = boost::program_options;

Result<CommandLine, std::string> ParseCommandLine(int argc, const char* const* argv) {
  CommandLine cl;
  TrackerConfig& c = cl.config;
  double expire_factor = 3.0;
  std::int64_t max_torrent = static_cast<std::int64_t>(c.metainfo.max_bytes);
  std::int64_t max_inflight = static_cast<std::int64_t>(c.http.max_body_bytes_in_flight);
  int request_timeout_ms = 10000, idle_timeout_ms = 30000, batch_ms = 1000;
  std::vector<std::string> admin_token_files;
  std::string announce_token_file, agent_token_file;
  int tls_handshake_timeout_ms = 5000;
  std::int64_t db_refresh = -1;
  std::string log_level = "info";
  bool no_udp = false, no_replace = false;
  po::options_description desc(
      "swarmcast-tracker: BitTorrent tracker (HTTP and UDP announce/scrape) and swarm\n"
      "registry with its state in SQLite.\n\n"
      "Usage: swarmcast-tracker [--listen ADDR:PORT]... [--db PATH] [options]\n\nOptions");
  // clang-format off
  desc.add_options()
    ("help,h", "print this help and exit")
    ("version", "print the version and exit")
    ("config", po::value<std::string>(),
     "read options from FILE: KEY = VALUE lines, a key being a long option without its "
     "dashes (listen = 0.0.0.0:6969); the command line wins over the file. FILE must be "
     "owned by this user or root and writable by nobody else; an unknown key is an error")
    ("listen", po::value(&c.listen)->composing(),
     "address to serve on, IPv4 `1.2.3.4:6969` or IPv6 `[::1]:6969`; HTTP (TCP) and UDP "
     "share the port number; port 0 picks a free one. Repeat for several. "
     "Default 0.0.0.0:6969")
    ("db", po::value(&c.db)->default_value(c.db), "SQLite database file (created if missing)")
    ("threads", po::value(&c.threads)->default_value(c.threads), "network threads")
    ("no-udp", po::bool_switch(&no_udp), "serve HTTP only")
    ("interval", po::value(&c.state.interval)->default_value(c.state.interval),
     "seconds between announces, as told to clients")
    ("progress-interval",
     po::value(&c.state.progress_interval)->default_value(c.state.progress_interval),
     "seconds between announces told to peers still downloading, so the completion view "
     "(swarmcast status) is right to within seconds; 0: they get --interval too")
    ("no-replace-same-address", po::bool_switch(&no_replace),
     "keep the old entry when a new peer id announces from a known peer's IP and port "
     "(default: the new one replaces it, as a restarted node); for NATs that share an "
     "address and port range among hosts")
    ("min-interval", po::value(&c.min_interval)->default_value(c.min_interval),
     "`min interval` told to clients, seconds")
    ("expire-factor", po::value(&expire_factor)->default_value(expire_factor),
     "a peer silent for this many intervals is dropped")
    ("numwant", po::value(&c.state.numwant_default)->default_value(c.state.numwant_default),
     "peers returned when the client does not say")
    ("max-numwant", po::value(&c.state.numwant_max)->default_value(c.state.numwant_max),
     "most peers returned per announce")
    ("subnet-v4", po::value(&c.state.subnet.v4)->default_value(c.state.subnet.v4),
     "prefix length (bits) of the IPv4 subnet whose peers are preferred")
    ("subnet-v6", po::value(&c.state.subnet.v6)->default_value(c.state.subnet.v6),
     "prefix length (bits) of the IPv6 subnet whose peers are preferred")
    ("max-swarms", po::value(&c.state.max_swarms)->default_value(c.state.max_swarms),
     "cap on swarms in memory")
    ("max-peers-per-swarm",
     po::value(&c.state.max_peers_per_swarm)->default_value(c.state.max_peers_per_swarm),
     "cap on peers in one swarm")
    ("max-peers", po::value(&c.state.max_peers)->default_value(c.state.max_peers),
     "cap on peers in all swarms together")
    ("require-registered", po::bool_switch(&c.state.require_registered),
     "refuse announces for info-hashes not published in the registry")
    ("trust-ip-param", po::bool_switch(&c.trust_ip_param),
     "use the client's `ip` parameter as its address (only behind a "
     "trusted proxy or on a closed network)")
    ("announce-token", po::value(&c.announce_tokens)->composing(),
     "private mode: announces and scrapes must carry this token, as /announce/TOKEN or "
     "token=TOKEN; repeat for several. UDP is then refused (BEP 15 has no token)")
    ("announce-token-file", po::value(&announce_token_file),
     "like --announce-token, one token per line (blank lines and # comments skipped); "
     "keeps them out of `ps`")
    ("agent-token", po::value(&c.agent_tokens)->composing(),
     "node agents (swarmcast agent) sync with `Authorization: Bearer TOKEN`: this token, an "
     "announce token or an admin token; it cannot publish or deploy. In private mode it also "
     "reads and announces. Repeat for several")
    ("agent-token-file", po::value(&agent_token_file),
     "like --agent-token, one token per line (blank lines and # comments skipped)")
    ("admin-token", po::value(&c.admin_tokens)->composing(),
     "registry writes (PUT, DELETE) need `Authorization: Bearer TOKEN`; repeat for several "
     "publishers, each owning the names it publishes. Without any (and without "
     "--open-registry) the tracker makes one at first start, in --generated-token-file")
    ("admin-token-file", po::value(&admin_token_files)->composing(),
     "like --admin-token, read from this file (exactly one token); repeatable")
    ("generated-token-file", po::value(&c.generated_token_file),
     "where the tracker keeps the admin token it makes when none is given: created 0600 at "
     "first start, read back later (refused if a symlink, another user's, or readable by "
     "others). Default: the --db path + .token")
    ("open-registry", po::bool_switch(&c.open_registry), "lab use: accept registry writes without a token (a name then belongs "
     "to the address that published it); logged as a warning at start")
    ("tls-cert", po::value(&c.tls_cert),
     "PEM certificate chain (server certificate first): the HTTP listeners speak HTTPS "
     "only, TLS 1.2 or later. Needs --tls-key. UDP is not affected")
    ("tls-key", po::value(&c.tls_key),
     "PEM private key of --tls-cert; refused when other users can read it (chmod 0600, or "
     "0640 owned by root)")
    ("tls-handshake-timeout-ms",
     po::value(&tls_handshake_timeout_ms)->default_value(tls_handshake_timeout_ms),
     "HTTPS: a client must complete its TLS handshake this soon after connecting")
    ("max-torrent-bytes", po::value(&max_torrent)->default_value(max_torrent),
     "largest .torrent accepted by the registry")
    ("max-body-bytes-in-flight", po::value(&max_inflight)->default_value(max_inflight),
     "request body bytes received or handled at once over all connections (at least "
     "--max-torrent-bytes); a request over it gets 503")
    ("max-header-bytes", po::value(&c.http.max_header_bytes)->default_value(c.http.max_header_bytes),
     "largest HTTP request line plus headers")
    ("max-target-bytes", po::value(&c.http.max_target_bytes)->default_value(c.http.max_target_bytes),
     "longest HTTP request target (URL)")
    ("max-query-params", po::value(&c.query.max_params)->default_value(c.query.max_params),
     "most query parameters in an announce")
    ("max-scrape-hashes",
     po::value(&c.query.max_scrape_hashes)->default_value(c.query.max_scrape_hashes),
     "most info-hashes in one HTTP scrape")
    ("max-connections", po::value(&c.http.max_connections)->default_value(c.http.max_connections),
     "open HTTP connections; more are closed at once. Lowered (with a warning) to the "
     "descriptor limit (ulimit -n) minus a reserve")
    ("request-timeout-ms", po::value(&request_timeout_ms)->default_value(request_timeout_ms),
     "time allowed to send one request (slow clients are cut off)")
    ("idle-timeout-ms", po::value(&idle_timeout_ms)->default_value(idle_timeout_ms),
     "keep-alive connections idle this long are closed")
    ("batch-ms", po::value(&batch_ms)->default_value(batch_ms),
     "database batch interval: a crash loses at most this much of announce state")
    ("db-refresh", po::value(&db_refresh)->default_value(-1),
     "seconds: a re-announce that changes only the time and byte counters is written to "
     "the database at most this often per peer (joins, leaves, events and progress always "
     "are); 0 writes every announce; default half the interval")
    ("json", po::bool_switch(&c.json), "print start-up and shutdown events as JSON lines")
    ("log-level", po::value(&log_level)->default_value(log_level),
     "stderr log: error, warning (what an operator must act on), info (start-up, "
     "publishes, refused writes, database failures) or debug (also refused HTTP announces)");
  // clang-format on
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    if (vm.count("help") || vm.count("version")) {
      std::ostringstream s;
      if (vm.count("help")) {
        s << desc << "\nRegistry API and protocol details: tracker/README.md\n";
      } else {
        s << "swarmcast-tracker " SWARMCAST_VERSION "\n";
      }
      cl.exit_now = true;
      cl.text = s.str();
      return cl;
    }
    if (vm.count("config")) {
      const std::string path = vm["config"].as<std::string>();
      auto resolve = [&](const std::string& key) -> Result<std::string, std::string> {
        if (key != "help" && key != "version" && key != "config" &&
            desc.find_nothrow(key, false) != nullptr) {
          return key;
        }
        return Unexpected("unknown option '" + key + "' (see swarmcast-tracker --help)");
      };
      if (auto why = config::StoreConfigFile(path, desc, resolve, vm)) return Unexpected(*why);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return Unexpected(std::string(e.what()) + " (see --help)");
  }
  if (c.listen.empty()) c.listen.push_back("0.0.0.0:6969");
  c.udp = !no_udp;
  auto level = proto::ParseLogLevel(log_level);
  if (!level) return Unexpected("--log-level: " + level.error());
  c.log_level = *level;
  if (c.threads < 1 || c.threads > 64) return Unexpected(std::string("--threads must be 1..64"));
  if (c.state.interval < 1 || c.state.interval > 86400) {
    return Unexpected(std::string("--interval must be 1..86400"));
  }
  if (c.state.progress_interval < 0 || c.state.progress_interval > 86400) {
    return Unexpected(std::string("--progress-interval must be 0..86400"));
  }
  c.state.replace_same_address = !no_replace;
  if (expire_factor < 1.0 || expire_factor > 100.0) {
    return Unexpected(std::string("--expire-factor must be 1..100"));
  }
  if (c.state.numwant_default < 0 || c.state.numwant_max < 0 || c.state.numwant_max > 5000) {
    return Unexpected(std::string("--numwant/--max-numwant must be 0..5000"));
  }
  if (max_torrent < 1024 || max_torrent > (std::int64_t{1} << 30)) {
    return Unexpected(std::string("--max-torrent-bytes must be 1 KiB..1 GiB"));
  }
  if (max_inflight < max_torrent || max_inflight > (std::int64_t{1} << 40)) {
    return Unexpected(std::string("--max-body-bytes-in-flight must be --max-torrent-bytes..1 TiB"));
  }
  c.http.max_body_bytes_in_flight = static_cast<std::size_t>(max_inflight);
  if (request_timeout_ms < 10 || idle_timeout_ms < 10 || tls_handshake_timeout_ms < 10 ||
      batch_ms < 1 || batch_ms > 60000) {
    return Unexpected(std::string("timeouts must be >= 10 ms and --batch-ms 1..60000"));
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return Unexpected(std::string("--tls-cert and --tls-key go together"));
  }
  if (!announce_token_file.empty()) {
    auto tokens = ReadTokenFile(announce_token_file);
    if (!tokens) return Unexpected("--announce-token-file: " + tokens.error());
    c.announce_tokens.insert(c.announce_tokens.end(), tokens->begin(), tokens->end());
  }
  if (!agent_token_file.empty()) {
    auto tokens = ReadTokenFile(agent_token_file);
    if (!tokens) return Unexpected("--agent-token-file: " + tokens.error());
    c.agent_tokens.insert(c.agent_tokens.end(), tokens->begin(), tokens->end());
  }
  for (const std::string& t : c.agent_tokens) {
    if (t.empty() || t.find_first_of("/?&%# \t\r\n") != std::string::npos) {
      return Unexpected(std::string("--agent-token must be non-empty without / ? & % # blanks"));
    }
  }
  if (!admin_token_files.empty() && !c.admin_tokens.empty()) {
    return Unexpected(std::string("give --admin-token or --admin-token-file, not both"));
  }
  for (const std::string& file : admin_token_files) {
    auto tokens = ReadTokenFile(file);
    if (!tokens) return Unexpected("--admin-token-file: " + tokens.error());
    if (tokens->size() != 1) {
      return Unexpected("--admin-token-file: " + file + " holds " + std::to_string(tokens->size()) +
                        " tokens; want one");
    }
    c.admin_tokens.push_back(tokens->front());
  }
  for (const std::string& t : c.admin_tokens) {
    if (t.empty() || t.find_first_of(" \t\r\n") != std::string::npos) {
      return Unexpected(std::string("--admin-token must be non-empty without blanks"));
    }
  }
  if (c.generated_token_file.empty()) c.generated_token_file = c.db + ".token";
  for (const std::string& t : c.announce_tokens) {
    if (t.empty() || t.find_first_of("/?&%# ") != std::string::npos) {
      return Unexpected(std::string("--announce-token must be non-empty without / ? & % # space"));
    }
  }
  c.state.expire_after =
      static_cast<std::int64_t>(static_cast<double>(c.state.interval) * expire_factor + 0.5);
  c.state.stale_after = c.state.interval + c.state.interval / 2;
  c.state.db_refresh = db_refresh < 0 ? c.state.interval / 2 : db_refresh;
  if (c.state.db_refresh >= c.state.expire_after) {
    return Unexpected(
        std::string("--db-refresh must be below the expiry time (interval x factor)"));
  }
  c.min_interval = std::min(c.min_interval, c.state.interval);
  c.metainfo.max_bytes = static_cast<std::size_t>(max_torrent);
  c.http.request_timeout = std::chrono::milliseconds(request_timeout_ms);
  c.http.idle_timeout = std::chrono::milliseconds(idle_timeout_ms);
  c.http.tls_handshake_timeout = std::chrono::milliseconds(tls_handshake_timeout_ms);
  c.batch_interval = std::chrono::milliseconds(batch_ms);
  c.http.threads = c.threads;
  return cl;
}

}  // namespace swarmcast::tracker
