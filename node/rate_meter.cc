#include "node/rate_meter.h"

#include <algorithm>

namespace swarmcast::node {

std::optional<double> RateMeter::Add(Clock::time_point now, std::int64_t total) {
  samples_.emplace_back(now, total);
  while (samples_.size() > 2 && now - samples_.front().first > window_) samples_.pop_front();
  const double dt = std::chrono::duration<double>(now - samples_.front().first).count();
  if (dt < 0.9) return std::nullopt;
  return std::max(0.0, static_cast<double>(total - samples_.front().second) / dt);
}

}  // namespace swarmcast::node
