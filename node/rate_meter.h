// A payload rate over the last few seconds, from samples of a byte
// counter. libtorrent's own rate lags by seconds at the start (the first
// ETAs were absurd) and knows nothing of the push channel.
// One owner thread; pure (the caller passes the time).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

namespace swarmcast::node {

class RateMeter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateMeter(std::chrono::milliseconds window = std::chrono::seconds(3))
      : window_(window) {}

  // Records `total` bytes at `now`; the rate over the window, or nullopt
  // while the samples span less than about a second.
  std::optional<double> Add(Clock::time_point now, std::int64_t total);

 private:
  std::chrono::milliseconds window_;
  std::deque<std::pair<Clock::time_point, std::int64_t>> samples_;
};

}  // namespace swarmcast::node
