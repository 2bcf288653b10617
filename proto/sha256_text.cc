#include "proto/sha256_text.h"

#include "proto/hex.h"

namespace swarmcast::proto {

std::optional<std::string> NormaliseSha256Hex(std::string_view text) {
  if (text.size() != 64 || !IsHexDigits(text)) return std::nullopt;
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace swarmcast::proto
