// A child process of the agent: this same binary run as `swarmcast get` or
// `swarmcast seed`, its stdout and stderr appended to files. The child is
// killed (SIGKILL, PR_SET_PDEATHSIG) if the agent dies, so `kill -9` of the
// agent leaves no transfer running behind it and a restarted agent starts
// from its ledger and the transfers' resume data.
//
// One owner thread (the agent's loop). The destructor stops a child still
// running (SIGTERM, then SIGKILL after the grace period) and reaps it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "proto/result.h"

namespace swarmcast::node {

class ChildProcess {
 public:
  // Starts /proc/self/exe with `args` (args[0] is the subcommand), the
  // agent's environment with `env` ("K=V") set over it, stdout to
  // `out_file` (truncated) and stderr appended to `err_file`.
  static Result<std::unique_ptr<ChildProcess>, std::string> Start(
      const std::vector<std::string>& args, const std::vector<std::string>& env,
      const std::filesystem::path& out_file, const std::filesystem::path& err_file);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Without blocking: the exit code once it exited (-signal when a signal
  // ended it), nullopt while it runs.
  std::optional<int> Poll();
  // SIGTERM, then SIGKILL once `grace` has passed; returns the exit code.
  int Stop(std::chrono::milliseconds grace);
  const std::filesystem::path& out_file() const { return out_; }

 private:
  ChildProcess(pid_t pid, std::filesystem::path out) : pid_(pid), out_(std::move(out)) {}
  pid_t pid_;
  std::optional<int> status_;
  std::filesystem::path out_;
};

}  // namespace swarmcast::node
