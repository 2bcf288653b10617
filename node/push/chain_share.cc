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
    streak_ = 0;
    streak_share_sum_ = 0;
    return std::nullopt;
  }
  if (now - *window_start_ < options_.window) return std::nullopt;
  const std::uint64_t chain = sample.chain_bytes - base_.chain_bytes;
  const std::uint64_t sent = sample.sent_bytes - base_.sent_bytes;
  const std::uint64_t wire = sample.wire_bytes - base_.wire_bytes;
  window_start_ = now;
  base_ = sample;
  if (chain == 0 || sent < options_.min_window_bytes) {
    streak_ = 0;
    streak_share_sum_ = 0;
    return std::nullopt;
  }
  // What the chain competed with: all that left, less the seed's own wire.
  const std::uint64_t others_and_chain = std::max(sent - std::min(sent, wire), chain);
  const double share = static_cast<double>(chain) / static_cast<double>(others_and_chain);
  if (share >= options_.min_share) {
    streak_ = 0;
    streak_share_sum_ = 0;
    return std::nullopt;
  }
  ++streak_;
  streak_share_sum_ += share;
  if (streak_ < options_.windows) return std::nullopt;
  return streak_share_sum_ / streak_;
}

}  // namespace swarmcast::push
