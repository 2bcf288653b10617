// swarmcast: distribute one large file to many machines over BitTorrent,
// through swarmcast-tracker. The process edge: exceptions stop here.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/json_output.h"
#include "node/cli/node_config.h"

namespace {

constexpr char kHelp[] =
    "Usage: swarmcast COMMAND [OPTIONS]\n"
    "\n"
    "Gets one large file (or directory) from a seed onto many machines: every\n"
    "node downloads with BitTorrent and serves what it has to the others, so\n"
    "the seed's uplink carries each piece about once.\n"
    "\n"
    // One command per line and its summary on the next: the man pages
    // (packaging/make-man-pages) and the bash completion read this list.
    "Commands:\n"
    "  create PATH -o FILE.torrent\n"
    "      hash PATH into a metainfo file\n"
    "  seed PATH --tracker URL [--name NAME]\n"
    "      hash, publish to the tracker, seed\n"
    "  get NAME|INFOHASH --tracker URL -o DIR\n"
    "      download, verify, then serve others\n"
    "  status [--tracker URL NAME] [--watch]\n"
    "      this machine's transfers, or a swarm's completion at the tracker\n"
    "  ls --tracker URL\n"
    "      the swarms the tracker publishes\n"
    "  unpublish NAME --tracker URL\n"
    "      remove a name you published\n"
    "  agent --tracker URL --data-dir DIR [--labels K=V,...]\n"
    "      run as a node agent: fetch and seed what is deployed to it\n"
    "  deploy NAME --to all|label=K=V|N [--wait [DURATION]]\n"
    "      put a published name on the fleet's agents (--remove: take it off)\n"
    "\n"
    "`swarmcast COMMAND --help` explains each command's options. Every command\n"
    "takes --json (one JSON object on stdout) and shows progress on stderr: a\n"
    "bar on a terminal, one line every few seconds otherwise.\n"
    "\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace swarmcast::node::cli;
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(kHelp, argc < 2 ? stderr : stdout);
    std::fputs(kConfigHelp, argc < 2 ? stderr : stdout);
    std::fputs("\n", argc < 2 ? stderr : stdout);
    std::fputs(kExitCodesHelp, argc < 2 ? stderr : stdout);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::puts("swarmcast " SWARMCAST_VERSION);
    return kExitOk;
  }
  const std::string cmd = argv[1];
  // Seen before the command parses its options, so that a usage error is
  // reported in JSON too.
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json")) Output().Enable();
  }
  const swarmcast::proto::Logger log = MakeLogger(CommonFlags{});
  try {
    for (const Command& c : kCommands) {
      if (cmd == c.name) return Output().Finish(c.run(argc - 1, argv + 1));
    }
  } catch (const std::exception& e) {
    log.Error(std::string("internal error: ") + e.what());
    return Output().Finish(kExitFailure);
  }
  log.Error("unknown command '" + cmd + "' (try swarmcast --help)");
  return Output().Finish(kExitUsage);
}
