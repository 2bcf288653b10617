#include "node/naming.h"

#include <cctype>

namespace swarmcast::node {
namespace {

bool AllHex(std::string_view s) {
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

bool IsValidSwarmName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  if (!std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '.' || c == '_' || c == '-')) return false;
  }
  if ((name.size() == 40 || name.size() == 64) && AllHex(name)) return false;
  return true;
}

bool IsInfoHashHex(std::string_view text) { return text.size() == 40 && AllHex(text); }

std::int64_t ChoosePieceSize(std::int64_t total_size) {
  constexpr std::int64_t kMin = 64 << 10;
  constexpr std::int64_t kMax = 16 << 20;
  std::int64_t piece = kMin;
  while (piece < kMax && total_size / piece > 1024) piece *= 2;
  return piece;
}

}  // namespace swarmcast::node
