// Simulated time is a double of seconds since the receivers were launched.
#pragma once

#include <limits>

namespace swarmcast::sim {

// "Not before the end of time": no such event, no completion at rate 0.
inline constexpr double kNever = std::numeric_limits<double>::infinity();

}  // namespace swarmcast::sim
