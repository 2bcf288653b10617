#include "node/progress.h"

#include <sys/ioctl.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <vector>

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
  // What the bar shows, most important first; what does not fit the
  // terminal is dropped from the end, then the bar itself narrows, so the
  // line never wraps (a wrapped bar prints a new line at every redraw).
  char pct[16];
  std::snprintf(pct, sizeof pct, "%5.1f%%", Percent(s));
  std::vector<std::string> items = {pct, FormatBytes(static_cast<double>(s.done_bytes)) + "/" +
                                             FormatBytes(static_cast<double>(s.total_bytes))};
  items.push_back("down " + FormatBytes(s.down_rate) + "/s");
  if (s.done_bytes < s.total_bytes) items.push_back("ETA " + FormatSeconds(EtaSeconds(s)));
  items.push_back("up " + FormatBytes(s.up_rate) + "/s");
  items.push_back("peers " + std::to_string(s.peers));
  items.push_back(s.state);
  constexpr int kMaxBar = 24, kMinBar = 8;
  auto text_width = [&] {
    int w = 0;
    for (const auto& i : items) w += static_cast<int>(i.size()) + 2;
    return w;
  };
  if (width <= 0) width = 80;
  while (items.size() > 1 && text_width() + kMinBar + 2 > width) items.pop_back();
  const int bar = std::clamp(width - text_width() - 2, 0, kMaxBar);
  const int filled = std::clamp(static_cast<int>(Percent(s) / 100.0 * bar + 0.5), 0, bar);
  std::string out;
  if (bar >= kMinBar) out = "[" + std::string(filled, '#') + std::string(bar - filled, '.') + "] ";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : "  ") + items[i];
  if (static_cast<int>(out.size()) > width) out.resize(static_cast<std::size_t>(width));
  return out;
}

int TerminalColumns(int fd) {
  struct winsize ws {};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
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
