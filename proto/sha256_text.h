// A SHA-256 digest as text, the way the registry keeps a publisher's
// whole-file pin and a get reports it. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace swarmcast::proto {

// Exactly 64 hex digits (either case) in, lower case out; nullopt for
// anything else (any other length, any other character).
std::optional<std::string> NormaliseSha256Hex(std::string_view text);

}  // namespace swarmcast::proto
