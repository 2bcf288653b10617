// Wires the tracker together for one process run: database, state,
// handlers, HTTP and UDP listeners, the expiry timer and signal handling.
//
// Thread map: `config.threads` threads run one io_context (HTTP sessions on
// per-connection strands, UDP receive loops, the expiry timer); the
// SqliteStore runs its own writer thread. SwarmTable's mutex guards the
// swarm state shared by all of them.
#pragma once

#include "proto/log.h"
#include "tracker/config.h"

namespace swarmcast::tracker {

// Runs until SIGINT/SIGTERM; returns the process exit code. Start-up
// failures are logged (and printed as JSON on stdout with --json); `log`
// also gets the start-up line, publishes, refused registry writes,
// database failures and operator warnings. `log` must outlive the call.
int RunTracker(const TrackerConfig& config, const proto::Logger& log);

}  // namespace swarmcast::tracker
