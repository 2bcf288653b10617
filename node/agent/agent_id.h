// The agent's identity: an id kept in DATA_DIR/agent-id, made at first
// start (the host name, cut to what an id allows, and 8 random hex digits)
// and read back on every later start, so a restarted agent is the same
// agent to the tracker. `--id` on the command line overrides it (and is
// then written there).
#pragma once

#include <filesystem>
#include <string>

#include "proto/result.h"

namespace swarmcast::node {

// Reads DATA_DIR/agent-id, or writes `wanted` (or a new id when empty)
// there. A file that holds no valid id, or an id that differs from
// `wanted`, is an error saying so (an agent never changes identity
// silently).
Result<std::string, std::string> LoadOrCreateAgentId(const std::filesystem::path& data_dir,
                                                     const std::string& wanted);

}  // namespace swarmcast::node
