// Wires the tracker together for one process run: database, state,
// handlers, HTTP and UDP listeners, the expiry timer and signal handling.
//
// Thread map: `config.threads` threads run one io_context (HTTP sessions on
// per-connection strands, UDP receive loops, the expiry timer); the
// SqliteStore runs its own writer thread. SwarmTable's mutex guards the
// swarm state shared by all of them.
#pragma once

#include "tracker/config.h"

namespace swarmcast::tracker {

// Runs until SIGINT/SIGTERM; returns the process exit code. Start-up
// failures are reported on stderr (and as JSON with --json).
int RunTracker(const TrackerConfig& config);

}  // namespace swarmcast::tracker
