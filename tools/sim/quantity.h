// The quantities the simulator's command line takes: link rates ("100Mbit",
// "10Gbit", "2.5gbit/s") and sizes ("64MiB", "10GB", "256KiB", "1048576").
// Rates are decimal (1 Mbit = 10^6 bits), as link rates are sold; sizes
// with "i" are binary, without decimal, as file sizes are quoted both ways.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/result.h"

namespace swarmcast::sim {

// Bits per second.
Result<double, std::string> ParseRate(std::string_view text);
// Bytes; bounded to 1 PiB.
Result<std::int64_t, std::string> ParseSize(std::string_view text);

}  // namespace swarmcast::sim
