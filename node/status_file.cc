#include "node/status_file.h"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include "node/file_io.h"

namespace swarmcast::node {

namespace fs = std::filesystem;

StatusFile::StatusFile(const fs::path& dir, const nlohmann::json& initial) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!ec) path_ = dir / (std::to_string(::getpid()) + ".json");
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
