// `swarmcast agent`: the long-running node service. It syncs with the
// tracker's fleet API every poll interval (with jitter; a failing tracker
// is retried with registry_retry's capped, jittered backoff), fetches each
// assignment by running this binary's own `swarmcast get` (push,
// verification, resume: the same code as by hand), keeps what it fetched
// seeded with `swarmcast seed --no-publish`, within a disk quota (content
// no longer assigned is evicted least recently used first), and reports
// each assignment's state back with its next sync.
//
// Why child processes rather than transfers in this process: each get and
// seed keeps exactly the behaviour, limits and exit codes documented for
// it (one libtorrent session per transfer, its own resume data and status
// file), a crash or a stuck transfer takes down one child rather than the
// agent, and the agent itself links no libtorrent code. The cost is one
// process per kept item.
//
// Layout of DATA_DIR: agent-id, agent-state.json (node/agent/agent_ledger.h),
// agent.lock (one agent per directory), content/<hash>/<name> and
// content/<hash>.torrent, state/ (the children's status files), cache/
// (their hash cache), logs/<hash>.{get,seed}.{out,err}.
//
// Threads: one, the caller's; SIGINT and SIGTERM are blocked and read from
// a signalfd, so a signal ends the loop between steps: children are
// stopped with SIGTERM (a get saves its resume data) and the ledger saved.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "node/agent/agent_ledger.h"
#include "node/agent/agent_metrics.h"
#include "node/agent/child_process.h"
#include "node/fleet_api.h"
#include "node/registry_client.h"
#include "proto/fleet_names.h"
#include "proto/log.h"

namespace swarmcast::node {

struct AgentOptions {
  std::filesystem::path data_dir;  // absolute
  std::string id;                  // from LoadOrCreateAgentId
  proto::Labels labels;
  std::int64_t quota = 0;  // bytes of content kept; 0: no quota
  std::chrono::milliseconds poll{5000};
  // Arguments every child gets (--tracker, --timeout, --listen, rates...)
  // and environment set for it (the token, no config file).
  std::vector<std::string> child_args;
  std::vector<std::string> child_env;
  proto::Logger log;
};

class AgentService {
 public:
  AgentService(AgentOptions options, RegistryClient client);
  ~AgentService();

  // Prepares DATA_DIR (lock, ledger); nullopt, or why the agent cannot
  // start there.
  std::optional<std::string> Open();
  // Runs until SIGINT or SIGTERM; returns the exit code.
  int Run();
  // What the agent holds, for --json.
  nlohmann::json Summary() const;
  // Where Run() publishes its metrics after every step (null: nowhere).
  // Set before Run(); it must outlive the service.
  void SetMetrics(AgentMetrics* metrics) { metrics_ = metrics; }

 private:
  std::filesystem::path ContentDir(const std::string& hash) const;
  std::filesystem::path TorrentFile(const std::string& hash) const;
  std::filesystem::path LogFile(const std::string& hash, const std::string& what) const;
  bool Sync();
  void ApplyAssignments(const std::vector<AgentAssignment>& assignments);
  void Step();
  void FinishFetch(int code);
  void StartFetch();
  void KeepSeeded();
  void Evict(const std::string& hash, const std::string& why);
  void Save();

  AgentOptions o_;
  RegistryClient client_;
  int lock_fd_ = -1;
  Ledger ledger_;
  std::string fetching_;  // the hash being fetched, if any
  std::unique_ptr<ChildProcess> fetch_;
  std::map<std::string, std::unique_ptr<ChildProcess>> seeds_;
  // When a failed fetch or an exited seed may start again.
  std::map<std::string, std::chrono::steady_clock::time_point> retry_at_;
  AgentCounters counters_;
  AgentMetrics* metrics_ = nullptr;
};

}  // namespace swarmcast::node
