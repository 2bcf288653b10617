#include "proto/token_text.h"

namespace swarmcast::proto {

Result<std::vector<std::string>, std::string> ParseTokenText(std::string_view text) {
  if (text.size() > kMaxTokenFileBytes) return Unexpected(std::string("over 64 KiB"));
  std::vector<std::string> tokens;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    tokens.emplace_back(line);
  }
  if (tokens.empty()) return Unexpected(std::string("holds no token"));
  return tokens;
}

}  // namespace swarmcast::proto
