// The subcommands. Each takes argv starting at the subcommand's name and
// returns a process exit code (see common.h).
#pragma once

#include <string_view>

namespace swarmcast::node::cli {

int RunCreate(int argc, char** argv);
int RunSeed(int argc, char** argv);
int RunGet(int argc, char** argv);
int RunStatus(int argc, char** argv);
int RunLs(int argc, char** argv);
int RunUnpublish(int argc, char** argv);
int RunAgent(int argc, char** argv);
int RunDeploy(int argc, char** argv);

struct Command {
  std::string_view name;
  int (*run)(int argc, char** argv);
};
// Every subcommand: main dispatches on these names, and they are the
// sections a config file may hold (node_config.h).
inline constexpr Command kCommands[] = {
    {"create", RunCreate}, {"seed", RunSeed},           {"get", RunGet},     {"status", RunStatus},
    {"ls", RunLs},         {"unpublish", RunUnpublish}, {"agent", RunAgent}, {"deploy", RunDeploy}};

}  // namespace swarmcast::node::cli
