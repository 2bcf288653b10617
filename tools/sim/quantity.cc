#include "tools/sim/quantity.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace swarmcast::sim {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "12.5Gbit" into 12.5 and "gbit"; false if no number leads.
bool SplitNumber(std::string_view text, double* value, std::string* unit) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  if (ec != std::errc() || !std::isfinite(*value) || *value < 0) return false;
  *unit = Lower(std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
  return true;
}

}  // namespace

Result<double, std::string> ParseRate(std::string_view text) {
  double v = 0;
  std::string unit;
  if (!SplitNumber(text, &v, &unit)) return Unexpected("not a rate: '" + std::string(text) + "'");
  if (unit.ends_with("/s")) unit.resize(unit.size() - 2);
  if (unit.ends_with("bps")) unit = unit.substr(0, unit.size() - 3) + "bit";
  double scale = 0;
  if (unit == "bit" || unit.empty()) scale = 1;
  if (unit == "kbit") scale = 1e3;
  if (unit == "mbit") scale = 1e6;
  if (unit == "gbit") scale = 1e9;
  if (unit == "tbit") scale = 1e12;
  if (scale == 0 || v == 0) {
    return Unexpected("not a rate: '" + std::string(text) + "' (say 100Mbit, 10Gbit)");
  }
  return v * scale;
}

Result<std::int64_t, std::string> ParseSize(std::string_view text) {
  double v = 0;
  std::string unit;
  if (!SplitNumber(text, &v, &unit)) return Unexpected("not a size: '" + std::string(text) + "'");
  if (unit.ends_with("b") && unit != "b") unit.pop_back();  // "MiB" -> "mi", "GB" -> "g"
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  if (unit == "k") scale = 1e3;
  if (unit == "m") scale = 1e6;
  if (unit == "g") scale = 1e9;
  if (unit == "t") scale = 1e12;
  if (unit == "ki") scale = 0x1p10;
  if (unit == "mi") scale = 0x1p20;
  if (unit == "gi") scale = 0x1p30;
  if (unit == "ti") scale = 0x1p40;
  const double bytes = v * scale;
  if (scale == 0 || bytes < 1 || bytes > 0x1p50) {
    return Unexpected("not a size: '" + std::string(text) + "' (say 64MiB, 10GB)");
  }
  return static_cast<std::int64_t>(std::llround(bytes));
}

}  // namespace swarmcast::sim
