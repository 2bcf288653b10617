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

namespace {

constexpr char kHelp[] =
    "Usage: swarmcast COMMAND [OPTIONS]\n"
    "\n"
    "Gets one large file (or directory) from a seed onto many machines: every\n"
    "node downloads with BitTorrent and serves what it has to the others, so\n"
    "the seed's uplink carries each piece about once.\n"
    "\n"
    "Commands:\n"
    "  create PATH -o FILE.torrent            hash PATH into a metainfo file\n"
    "  seed PATH --tracker URL [--name NAME]  hash, publish to the tracker, seed\n"
    "  get NAME|INFOHASH --tracker URL -o DIR download, verify, then serve others\n"
    "  status [--tracker URL NAME] [--watch]  this machine's transfers, or a\n"
    "                                         swarm's completion at the tracker\n"
    "  ls --tracker URL                       the swarms the tracker publishes\n"
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
    std::fputs(kExitCodesHelp, argc < 2 ? stderr : stdout);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::puts("swarmcast 0.1.0");
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
    if (cmd == "create") return Output().Finish(RunCreate(argc - 1, argv + 1));
    if (cmd == "seed") return Output().Finish(RunSeed(argc - 1, argv + 1));
    if (cmd == "get") return Output().Finish(RunGet(argc - 1, argv + 1));
    if (cmd == "status") return Output().Finish(RunStatus(argc - 1, argv + 1));
    if (cmd == "ls") return Output().Finish(RunLs(argc - 1, argv + 1));
  } catch (const std::exception& e) {
    log.Error(std::string("internal error: ") + e.what());
    return Output().Finish(kExitFailure);
  }
  log.Error("unknown command '" + cmd + "' (try swarmcast --help)");
  return Output().Finish(kExitUsage);
}
