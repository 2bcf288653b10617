#include "node/push/head_pacer.h"

#include <algorithm>

namespace swarmcast::push {

namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

std::optional<HeadPacer::Ceiling> HeadPacer::Observe(Clock::time_point now, SubscriberId head,
                                                     const TcpPathSample& path) {
  if (head != head_) {
    head_ = head;
    tenure_.clear();
    step_start_ = now;
    step_acked_ = path.bytes_acked;
    if (head == 0) return std::nullopt;
    tenure_.push_back({now, path.bytes_acked});
    starting_ = best_rate_ <= 0;
    bound_steps_ = 0;
    // Never under initial_rate: a 5 ms step at a slow first head's rate
    // (1.6 MB/s) is a few segments, too few to tell whether the ceiling
    // holds the socket back, and the next head then stayed there.
    ceiling_ = std::max(options_.initial_rate, starting_ ? 0 : best_rate_ * options_.gain);
    return Ceiling{head, static_cast<std::uint64_t>(ceiling_)};
  }
  if (head == 0) return std::nullopt;
  MeasureRate(now, path.bytes_acked);
  if (now < next_step()) return std::nullopt;
  return Step(now, path);
}

std::optional<HeadPacer::Ceiling> HeadPacer::Step(Clock::time_point now,
                                                  const TcpPathSample& path) {
  const double delivered =
      static_cast<double>(path.bytes_acked - step_acked_) / Seconds(now - step_start_);
  step_start_ = now;
  step_acked_ = path.bytes_acked;
  if (ceiling_ <= 0) return std::nullopt;
  const double unqueued = delivered * Seconds(path.min_rtt + options_.queue_delay) +
                          static_cast<double>(options_.slack);
  const bool queue_past_seed = static_cast<double>(path.in_flight) > unqueued;
  const bool bound = !queue_past_seed && delivered >= options_.bound_share * ceiling_;
  bound_steps_ = bound ? bound_steps_ + 1 : 0;
  double next = ceiling_;
  if (starting_ && queue_past_seed) {
    // The link holds the socket now, and held it to at least
    // bound_share of the ceiling before the last raise.
    starting_ = false;
    next =
        options_.gain * std::max(RecentRate(now), options_.bound_share * ceiling_ / options_.raise);
  } else if (bound_steps_ >= (starting_ ? 1 : 2)) {
    bound_steps_ = 0;
    next = ceiling_ * options_.raise;
  }
  if (next == ceiling_) return std::nullopt;
  ceiling_ = next;
  return Ceiling{head_, static_cast<std::uint64_t>(ceiling_)};
}

void HeadPacer::MeasureRate(Clock::time_point now, std::uint64_t bytes_acked) {
  tenure_.push_back({now, bytes_acked});
  // Keep one sample at or before the span's start, none older.
  while (tenure_.size() > 2 && tenure_[1].at <= now - options_.rate_span) tenure_.pop_front();
  const Acked& first = tenure_.front();
  if (now - first.at < options_.rate_span) return;
  const double rate = static_cast<double>(bytes_acked - first.bytes) / Seconds(now - first.at);
  best_rate_ = std::max(best_rate_, rate);
}

double HeadPacer::RecentRate(Clock::time_point now) const {
  // The samples since a few steps ago (tenure_ holds one per step).
  const auto since = now - 3 * options_.step;
  auto it = std::find_if(tenure_.begin(), tenure_.end(),
                         [since](const Acked& a) { return a.at >= since; });
  if (it == tenure_.end() || it->at >= now) return 0;
  return static_cast<double>(tenure_.back().bytes - it->bytes) / Seconds(now - it->at);
}

}  // namespace swarmcast::push
