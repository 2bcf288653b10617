#include "node/agent/agent_metrics.h"

#include <array>
#include <string_view>

#include "node/metrics_text.h"

namespace swarmcast::node {

std::string RenderAgentMetrics(const AgentSample& s, const Ledger& ledger) {
  using Type = MetricsText::Type;
  MetricsText m;
  m.Family("swarmcast_agent_info", Type::kGauge, "The agent's id (always 1).");
  m.Sample({{"agent", s.id}}, 1);

  constexpr std::array<std::string_view, 4> kStates = {"pending", "fetching", "done", "failed"};
  std::array<double, kStates.size()> items{};
  double assigned = 0;
  for (const auto& [hash, e] : ledger) {
    for (std::size_t i = 0; i < kStates.size(); ++i) {
      if (e.state == kStates[i]) items[i] += 1;
    }
    if (e.assigned) assigned += 1;
  }
  m.Family("swarmcast_agent_items", Type::kGauge, "Content items in the agent's ledger, by state.");
  for (std::size_t i = 0; i < kStates.size(); ++i) m.Sample({{"state", kStates[i]}}, items[i]);
  m.Family("swarmcast_agent_assigned_items", Type::kGauge,
           "Items the tracker assigns to this agent now (the rest are kept until room is needed).");
  m.Sample(assigned);
  m.Family("swarmcast_agent_held_bytes", Type::kGauge,
           "Bytes of content the ledger holds (what the quota counts).");
  m.Sample(static_cast<double>(LedgerBytes(ledger)));
  m.Family("swarmcast_agent_quota_bytes", Type::kGauge, "The --quota (0: none).");
  m.Sample(static_cast<double>(s.quota));
  m.Family("swarmcast_agent_fetch_running", Type::kGauge, "1 while a get child runs.");
  m.Sample(s.fetching ? 1 : 0);
  m.Family("swarmcast_agent_seeds_running", Type::kGauge, "Seed children running.");
  m.Sample(static_cast<double>(s.seeds_running));

  const AgentCounters& c = s.counters;
  m.Family("swarmcast_agent_syncs_total", Type::kCounter, "Tracker syncs, by result.");
  m.Sample({{"result", "ok"}}, static_cast<double>(c.syncs));
  m.Sample({{"result", "failed"}}, static_cast<double>(c.sync_failures));
  m.Family("swarmcast_agent_fetches_total", Type::kCounter,
           "Get children started, and how the finished ones ended.");
  m.Sample({{"result", "started"}}, static_cast<double>(c.fetches_started));
  m.Sample({{"result", "done"}}, static_cast<double>(c.fetches_done));
  m.Sample({{"result", "failed"}}, static_cast<double>(c.fetches_failed));
  m.Family("swarmcast_agent_evictions_total", Type::kCounter,
           "Items removed from disk (unassigned and room needed, damaged, or unassigned early).");
  m.Sample(static_cast<double>(c.evictions));
  return m.Take();
}

void AgentMetrics::Publish(std::string text) {
  MutexLock lock(mu_);
  text_ = std::move(text);
}

std::string AgentMetrics::Text() const {
  MutexLock lock(mu_);
  return text_;
}

}  // namespace swarmcast::node
