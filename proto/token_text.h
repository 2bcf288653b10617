// The text of a token file, as the tracker (--admin-token-file,
// --announce-token-file, the token it generates) and the node
// (--token-file) read it. Pure: the callers read the file, with their own
// checks on who may have written it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "proto/result.h"

namespace swarmcast::proto {

// Token files larger than this are refused: no sane file holds more.
inline constexpr std::size_t kMaxTokenFileBytes = 64 << 10;

// The tokens in `text`: one per line, surrounding blanks (space, tab, CR)
// trimmed; empty lines and lines starting with '#' skipped. Fails when the
// text is over kMaxTokenFileBytes or holds no token.
Result<std::vector<std::string>, std::string> ParseTokenText(std::string_view text);

}  // namespace swarmcast::proto
