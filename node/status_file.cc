#include "node/status_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "node/file_io.h"

namespace swarmcast::node {

namespace fs = std::filesystem;

std::optional<std::string> UnsafeStateDir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) {
    fs::create_directories(dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return "cannot create " + dir.string() + ": " + std::generic_category().message(errno);
    }
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    return dir.string() + ": " + std::generic_category().message(errno);
  if (!S_ISDIR(st.st_mode)) return dir.string() + " is not a directory (links are not followed)";
  if (st.st_uid != ::geteuid()) return dir.string() + " belongs to another user";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return dir.string() + " is writable by others";
  return std::nullopt;
}

StatusFile::StatusFile(const fs::path& dir, const nlohmann::json& initial) {
  if (!UnsafeStateDir(dir)) path_ = dir / (std::to_string(::getpid()) + ".json");
  Update(initial);
}

StatusFile::~StatusFile() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove(path_, ec);
}

void StatusFile::Update(nlohmann::json j) {
  if (!j.is_object()) return;
  last_ = j;
  if (path_.empty()) return;
  const long pid = static_cast<long>(::getpid());
  j["pid"] = pid;
  j["pid_start"] = ProcessStartTicks(pid).value_or(0);
  j["updated_unix"] = static_cast<std::int64_t>(std::time(nullptr));
  (void)WriteFileAtomically(path_, j.dump() + "\n");
}

std::optional<std::uint64_t> ProcessStartTicks(long pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // The command name (field 2) is in parentheses and may hold spaces and
  // ')': the fields after it start after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  // Fields 3..21, then starttime (22).
  for (int i = 3; i <= 21; ++i) {
    if (!(rest >> field)) return std::nullopt;
  }
  std::uint64_t start = 0;
  if (!(rest >> start)) return std::nullopt;
  return start;
}

bool WriterAlive(const nlohmann::json& status) {
  if (!status.is_object()) return false;
  const auto pid = status.find("pid");
  const auto start = status.find("pid_start");
  if (pid == status.end() || !pid->is_number_integer() || start == status.end() ||
      !start->is_number_unsigned()) {
    return false;
  }
  const auto now = ProcessStartTicks(pid->get<long>());
  return now && *now == start->get<std::uint64_t>();
}

}  // namespace swarmcast::node
