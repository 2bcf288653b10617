// `swarmcast agent --metrics-listen`: what the agent holds and does, as
// Prometheus text. The agent loop (its only thread) renders the text after
// every step and publishes it here; the metrics server's thread serves the
// last published text. Each get and seed child the agent runs is a
// transfer of its own; this is the agent's view of them (states, bytes,
// children), not their wire and push counters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "node/agent/agent_ledger.h"
#include "proto/mutex.h"

namespace swarmcast::node {

// Counters the agent loop keeps from its start.
struct AgentCounters {
  std::int64_t syncs = 0;          // tracker syncs that succeeded
  std::int64_t sync_failures = 0;  // that failed (retried with backoff)
  std::int64_t fetches_started = 0;
  std::int64_t fetches_done = 0;
  std::int64_t fetches_failed = 0;
  std::int64_t evictions = 0;
};

struct AgentSample {
  std::string id;
  std::int64_t quota = 0;  // 0: none
  bool fetching = false;
  std::size_t seeds_running = 0;
  AgentCounters counters;
};

// The Prometheus text for one agent and its ledger.
std::string RenderAgentMetrics(const AgentSample& sample, const Ledger& ledger);

class AgentMetrics {
 public:
  void Publish(std::string text) EXCLUDES(mu_);
  std::string Text() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::string text_ GUARDED_BY(mu_);
};

}  // namespace swarmcast::node
