#include "node/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace swarmcast::node {
namespace {

// Parses a run of decimal digits at the front of `text`; false on overflow.
bool TakeNumber(std::string_view& text, std::int64_t& out) {
  std::size_t i = 0;
  std::int64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const int d = text[i] - '0';
    if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
    ++i;
  }
  if (i == 0) return false;
  out = v;
  text.remove_prefix(i);
  return true;
}

}  // namespace

Result<std::int64_t, std::string> ParseByteSize(std::string_view text) {
  const std::string original(text);
  std::int64_t n = 0;
  if (!TakeNumber(text, n)) return Unexpected("not a size: '" + original + "'");
  int shift = 0;
  if (text == "" || text == "B") {
    shift = 0;
  } else if (text == "K" || text == "KiB" || text == "k") {
    shift = 10;
  } else if (text == "M" || text == "MiB") {
    shift = 20;
  } else if (text == "G" || text == "GiB") {
    shift = 30;
  } else if (text == "T" || text == "TiB") {
    shift = 40;
  } else {
    return Unexpected("unknown size unit in '" + original + "' (use B, KiB, MiB, GiB, TiB)");
  }
  if (n > (std::numeric_limits<std::int64_t>::max() >> shift)) {
    return Unexpected("size too large: '" + original + "'");
  }
  return n << shift;
}

Result<std::chrono::milliseconds, std::string> ParseDuration(std::string_view text) {
  const std::string original(text);
  constexpr std::int64_t kMaxMs = 30LL * 24 * 3600 * 1000;
  if (text.empty()) return Unexpected(std::string("empty duration"));
  std::int64_t total_ms = 0;
  bool bare = true;
  while (!text.empty()) {
    std::int64_t n = 0;
    if (!TakeNumber(text, n) || n > kMaxMs) {
      return Unexpected("not a duration: '" + original + "' (e.g. 90s, 5m, 1h30m)");
    }
    std::int64_t unit_ms = 1000;
    if (text.starts_with("ms")) {
      unit_ms = 1;
      text.remove_prefix(2);
    } else if (text.starts_with("s")) {
      text.remove_prefix(1);
    } else if (text.starts_with("m")) {
      unit_ms = 60'000;
      text.remove_prefix(1);
    } else if (text.starts_with("h")) {
      unit_ms = 3'600'000;
      text.remove_prefix(1);
    } else if (text.starts_with("d")) {
      unit_ms = 86'400'000;
      text.remove_prefix(1);
    } else if (!text.empty() || !bare) {
      return Unexpected("not a duration: '" + original + "' (e.g. 90s, 5m, 1h30m)");
    }
    bare = false;
    if (n > kMaxMs / unit_ms) return Unexpected("duration too long: '" + original + "'");
    total_ms += n * unit_ms;
    if (total_ms > kMaxMs) return Unexpected("duration too long (max 30d): '" + original + "'");
  }
  return std::chrono::milliseconds(total_ms);
}

std::string FormatBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, kUnits[u]);
  }
  return buf;
}

std::string FormatSeconds(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return "--";
  const auto s = static_cast<std::int64_t>(std::llround(seconds));
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>((s / 60) % 60));
  }
  return buf;
}

}  // namespace swarmcast::node
