// Hex spellings of byte strings (info-hashes, peer ids). Pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace swarmcast::proto {

// Lower-case hex, two digits a byte.
std::string ToHex(std::span<const std::uint8_t> bytes);
inline std::string ToHex(std::string_view bytes) {
  return ToHex({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
}

// Parses exactly 2 * out.size() hex digits (either case) into `out`; false
// (and `out` unspecified) otherwise.
bool FromHex(std::string_view hex, std::span<std::uint8_t> out);
template <std::size_t N>
bool FromHex(std::string_view hex, std::array<std::uint8_t, N>& out) {
  return FromHex(hex, std::span<std::uint8_t>(out));
}

// The value of one hex digit (either case), -1 for any other character.
int HexDigitValue(char c);

// Whether `text` is all hex digits (either case); true for "".
bool IsHexDigits(std::string_view text);

}  // namespace swarmcast::proto
