// The subcommands. Each takes argv starting at the subcommand's name and
// returns a process exit code (see common.h).
#pragma once

namespace swarmcast::node::cli {

int RunCreate(int argc, char** argv);
int RunSeed(int argc, char** argv);
int RunGet(int argc, char** argv);
int RunStatus(int argc, char** argv);
int RunLs(int argc, char** argv);

}  // namespace swarmcast::node::cli
