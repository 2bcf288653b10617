// The status file of one swarmcast process, which `swarmcast status` lists:
// <state dir>/<pid>.json, one JSON object.
//
// A command creates its StatusFile as it starts and keeps it until it
// exits, so a transfer is listed for its whole life, hashing and tracker
// round trips included. Each Update rewrites the file atomically; the
// destructor removes it. A process killed with SIGKILL leaves its file
// behind: the file names the process by pid and start time
// (/proc/PID/stat), so a reader tells a live writer from a dead one, even
// once the pid is reused, without depending on how often files are
// rewritten.
//
// One owner thread (the command's main thread, which RunTransfer makes the
// control thread).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace swarmcast::node {

class StatusFile {
 public:
  // Writes `initial` to `dir`/<pid>.json at once (creating `dir`, 0700).
  // An unsafe `dir` (UnsafeStateDir) or a file that cannot be written makes
  // Update a no-op: status is a view, and a transfer does not fail for it.
  StatusFile(const std::filesystem::path& dir, const nlohmann::json& initial);
  ~StatusFile();
  StatusFile(const StatusFile&) = delete;
  StatusFile& operator=(const StatusFile&) = delete;

  // Replaces the file's content with `j` (an object) plus "pid",
  // "pid_start" and "updated_unix".
  void Update(nlohmann::json j);
  // The last object written, without the identity members.
  const nlohmann::json& last() const { return last_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  nlohmann::json last_;
};

// The start time of process `pid` in clock ticks since boot (field 22 of
// /proc/PID/stat), nullopt when there is no such process.
std::optional<std::uint64_t> ProcessStartTicks(long pid);

// Why `dir` must not hold status files: not a real directory (a link is
// never followed), another user's, or writable by group or others (anyone
// could plant or swap files in it). Created 0700 if missing.
std::optional<std::string> UnsafeStateDir(const std::filesystem::path& dir);

// Whether a status file's content was written by a process that is still
// running (its pid and pid_start match a live process).
bool WriterAlive(const nlohmann::json& status);

}  // namespace swarmcast::node
