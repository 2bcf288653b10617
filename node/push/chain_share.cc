#include "node/push/chain_share.h"

#include <algorithm>

namespace swarmcast::push {

std::optional<double> ChainShare::Observe(Clock::time_point now, const UplinkSample& sample) {
  // A counter that went back (an interface made again) starts afresh.
  const bool went_back = sample.chain_bytes < base_.chain_bytes ||
                         sample.sent_bytes < base_.sent_bytes ||
                         sample.wire_bytes < base_.wire_bytes;
  if (!window_start_ || went_back) {
    window_start_ = now;
    base_ = sample;
    EndStreak();
    return std::nullopt;
  }
  if (!Due(now)) return std::nullopt;
  const std::uint64_t chain = sample.chain_bytes - base_.chain_bytes;
  const std::uint64_t sent = sample.sent_bytes - base_.sent_bytes;
  const std::uint64_t wire = sample.wire_bytes - base_.wire_bytes;
  const bool wanted_throughout = base_.head_lacks && sample.head_lacks;
  window_start_ = now;
  base_ = sample;
  // What the chain competed with: all that left, less the seed's own wire.
  const std::uint64_t others_and_chain = std::max(sent - std::min(sent, wire), chain);
  const bool starved =
      chain == 0 && wanted_throughout && others_and_chain >= options_.min_window_bytes;
  if ((chain == 0 && !starved) || sent < options_.min_window_bytes) {
    EndStreak();
    return std::nullopt;
  }
  const double share = static_cast<double>(chain) / static_cast<double>(others_and_chain);
  if (share >= options_.min_share) {
    EndStreak();
    return std::nullopt;
  }
  ++streak_;
  streak_share_sum_ += share;
  if (streak_ < options_.windows) return std::nullopt;
  return streak_share_sum_ / streak_;
}

bool ChainShare::Due(Clock::time_point now) const {
  return !window_start_ || now - *window_start_ >= options_.window;
}

void ChainShare::EndStreak() {
  streak_ = 0;
  streak_share_sum_ = 0;
}

}  // namespace swarmcast::push
