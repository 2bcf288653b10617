// swarmcast-tracker's command line (Boost.Program_options). Every option
// has a working default; `--help` explains each.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "proto/log.h"
#include "proto/metainfo.h"
#include "proto/result.h"
#include "tracker/http_server.h"
#include "tracker/query_parse.h"
#include "tracker/swarm_state.h"

namespace swarmcast::tracker {

struct TrackerConfig {
  std::vector<std::string> listen;  // ADDR:PORT or [V6]:PORT, TCP and UDP each
  std::string db = "swarmcast-tracker.db";
  int threads = 1;
  bool udp = true;
  // The binary announces a short interval to downloading peers (the fleet
  // view); the library default leaves it off.
  StateOptions state{.progress_interval = 10};
  std::int64_t min_interval = 30;
  HttpLimits http;
  QueryLimits query;
  proto::MetainfoLimits metainfo;
  bool trust_ip_param = false;
  std::vector<std::string> announce_tokens;
  // Node agents' credentials (PUT /v1/agents/ID); announce and admin
  // tokens are accepted too. In private mode they also read and announce.
  std::vector<std::string> agent_tokens;
  // Registry publishers, one token each. Empty and not open_registry: the
  // tracker uses the token it keeps in generated_token_file (made at first
  // start).
  std::vector<std::string> admin_tokens;
  std::string generated_token_file;  // default: db + ".token"
  bool open_registry = false;        // writes without a token (a lab); logged
  // HTTPS (tracker/tls_context.h): both or neither; the files are read by
  // RunTracker at start-up.
  std::string tls_cert, tls_key;
  std::chrono::milliseconds batch_interval{1000};
  bool json = false;
  proto::LogLevel log_level = proto::LogLevel::kInfo;
};

struct CommandLine {
  TrackerConfig config;
  bool exit_now = false;  // --help or --version was printed
  std::string text;       // what to print for --help / --version
};

Result<CommandLine, std::string> ParseCommandLine(int argc, const char* const* argv);

}  // namespace swarmcast::tracker
