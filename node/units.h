// Parsing and printing of the quantities the CLI takes and shows: byte
// sizes ("256KiB", "4M"), durations ("90s", "5m", "1h30m") and rates.
// Pure functions; every parse bounds its result and fails with a message.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/result.h"

namespace swarmcast::node {

// "1048576", "256KiB", "256K", "4MiB", "4M", "1GiB", "1G" (binary units;
// K/M/G mean KiB/MiB/GiB). Fails on overflow, junk, or a negative value.
Result<std::int64_t, std::string> ParseByteSize(std::string_view text);

// "0", "45s", "5m", "2h", "1h30m", "1500ms", and a bare number of seconds.
// Bounded to 30 days.
Result<std::chrono::milliseconds, std::string> ParseDuration(std::string_view text);

// "12.3 MiB", "512 B": binary units with one decimal.
std::string FormatBytes(double bytes);
// "1m05s", "42s", "1h02m"; "--" for a negative value (unknown).
std::string FormatSeconds(double seconds);

}  // namespace swarmcast::node
