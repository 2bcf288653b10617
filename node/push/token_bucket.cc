#include "node/push/token_bucket.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace swarmcast::push {

TokenBucket::TokenBucket(std::int64_t rate, std::chrono::milliseconds burst, Clock::time_point now)
    : rate_(rate),
      burst_bytes_(static_cast<double>(rate) * std::chrono::duration<double>(burst).count()),
      at_(now) {}

void TokenBucket::Refill(Clock::time_point now) {
  if (now <= at_) return;
  const double gained =
      static_cast<double>(rate_) * std::chrono::duration<double>(now - at_).count();
  credit_ = std::min(credit_ + gained, burst_bytes_);
  at_ = now;
}

std::int64_t TokenBucket::Available(Clock::time_point now) {
  if (unlimited()) return std::numeric_limits<std::int64_t>::max();
  Refill(now);
  return credit_ > 0 ? static_cast<std::int64_t>(std::ceil(credit_)) : 0;
}

void TokenBucket::Take(std::int64_t bytes) {
  if (!unlimited()) credit_ -= static_cast<double>(bytes);
}

std::chrono::milliseconds TokenBucket::Wait() const {
  if (unlimited() || credit_ > 0) return std::chrono::milliseconds(0);
  const double ms = -credit_ * 1000.0 / static_cast<double>(rate_);
  return std::chrono::milliseconds(std::max<std::int64_t>(1, static_cast<std::int64_t>(ms) + 1));
}

}  // namespace swarmcast::push
