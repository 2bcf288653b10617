#include "node/progress.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "node/units.h"

namespace swarmcast::node {
namespace {

double Percent(const ProgressSnapshot& s) {
  if (s.total_bytes <= 0) return 100.0;
  return 100.0 * static_cast<double>(s.done_bytes) / static_cast<double>(s.total_bytes);
}

std::string Counters(const ProgressSnapshot& s) {
  char pct[16];
  std::snprintf(pct, sizeof pct, "%5.1f%%", Percent(s));
  std::string out = pct;
  out += "  " + FormatBytes(static_cast<double>(s.done_bytes)) + "/" +
         FormatBytes(static_cast<double>(s.total_bytes));
  out += "  down " + FormatBytes(s.down_rate) + "/s";
  out += "  up " + FormatBytes(s.up_rate) + "/s";
  out += "  peers " + std::to_string(s.peers);
  if (s.done_bytes < s.total_bytes) out += "  ETA " + FormatSeconds(EtaSeconds(s));
  return out;
}

}  // namespace

double EtaSeconds(const ProgressSnapshot& s) {
  const std::int64_t left = s.total_bytes - s.done_bytes;
  if (left <= 0) return 0;
  if (s.down_rate < 1.0) return -1;
  return static_cast<double>(left) / s.down_rate;
}

std::string RenderBar(const ProgressSnapshot& s, int width) {
  constexpr int kBar = 24;
  const int filled = std::clamp(static_cast<int>(Percent(s) / 100.0 * kBar + 0.5), 0, kBar);
  std::string out = "[" + std::string(filled, '#') + std::string(kBar - filled, '.') + "] ";
  out += Counters(s) + "  " + s.state;
  if (width > 0 && static_cast<int>(out.size()) > width) out.resize(width);
  return out;
}

std::string RenderLine(const ProgressSnapshot& s) {
  return s.role + " " + s.name + ": " + s.state + " " + Counters(s) +
         " (t=" + FormatSeconds(s.elapsed_seconds) + ")";
}

nlohmann::json SnapshotJson(const ProgressSnapshot& s, const std::string& path,
                            const nlohmann::json& extra) {
  nlohmann::json j = {
      {"role", s.role},
      {"name", s.name},
      {"info_hash", s.info_hash},
      {"state", s.state},
      {"path", path},
      {"total_bytes", s.total_bytes},
      {"done_bytes", s.done_bytes},
      {"pieces_total", s.pieces_total},
      {"pieces_done", s.pieces_done},
      {"downloaded_bytes", s.downloaded_bytes},
      {"uploaded_bytes", s.uploaded_bytes},
      {"down_rate", s.down_rate},
      {"up_rate", s.up_rate},
      {"peers", s.peers},
      {"seeds", s.seeds},
      {"elapsed_seconds", s.elapsed_seconds},
  };
  if (extra.is_object()) j.update(extra);
  return j;
}

}  // namespace swarmcast::node
