#include "tracker/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace swarmcast::tracker {
namespace {

void Family(std::string& out, const char* name, const char* type, const char* help, double v) {
  char buf[512];
  const int n = std::snprintf(buf, sizeof buf, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help,
                              name, type, name, v);
  if (n > 0) out.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

// /proc/self/stat's fields after the command (which may hold spaces and
// parentheses: it ends at the last ')'), numbered from 3 as in proc(5).
std::optional<std::vector<std::string>> StatFields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> f(3);  // f[3] is field 3 (state)
  for (std::string x; rest >> x;) f.push_back(x);
  if (f.size() < 25) return std::nullopt;
  return f;
}

std::optional<double> BootTime() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t;
      if (in >> t) return t;
      return std::nullopt;
    }
    in.ignore(1 << 20, '\n');
  }
  return std::nullopt;
}

}  // namespace

void RenderProcessMetrics(std::string& out) {
  out +=
      "# HELP swarmcast_build_info The running swarmcast-tracker's version (value always 1).\n"
      "# TYPE swarmcast_build_info gauge\n"
      "swarmcast_build_info{version=\"" SWARMCAST_VERSION "\"} 1\n";

  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  if (auto f = StatFields(); f && ticks > 0) {
    try {
      const double utime = std::stod((*f)[14]), stime = std::stod((*f)[15]);
      Family(out, "process_cpu_seconds_total", "counter", "User and system CPU time spent.",
             (utime + stime) / static_cast<double>(ticks));
      Family(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size.",
             std::stod((*f)[23]));
      if (page > 0) {
        Family(out, "process_resident_memory_bytes", "gauge", "Resident memory size.",
               std::stod((*f)[24]) * static_cast<double>(page));
      }
      if (auto boot = BootTime()) {
        Family(out, "process_start_time_seconds", "gauge",
               "Start time of the process since the Unix epoch.",
               *boot + std::stod((*f)[22]) / static_cast<double>(ticks));
      }
    } catch (const std::exception&) {
      // A field that is not a number: leave the rest out.
    }
  }
  std::error_code ec;
  std::size_t fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++fds;
  }
  // The iterator's own descriptor was open while counting.
  if (!ec && fds > 0) {
    Family(out, "process_open_fds", "gauge", "Open file descriptors.",
           static_cast<double>(fds - 1));
  }
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    Family(out, "process_max_fds", "gauge", "Limit on open file descriptors.",
           static_cast<double>(lim.rlim_cur));
  }
}

}  // namespace swarmcast::tracker
