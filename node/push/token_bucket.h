// A byte rate limit: credit refills at `rate` bytes per second up to
// `burst` seconds' worth, and a sender may overdraw it (a whole batch is
// charged when it starts, bytes already read are charged after the fact);
// it then waits until the debt is paid. The push sender paces
// --max-upload-rate with one, the receiver --max-download-rate.
//
// Pure (the caller passes the time); not thread-safe: its owner's thread or
// mutex guards it.
#pragma once

#include <chrono>
#include <cstdint>

namespace swarmcast::push {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  // rate <= 0: unlimited (every call allows everything).
  explicit TokenBucket(std::int64_t rate,
                       std::chrono::milliseconds burst = std::chrono::milliseconds(100),
                       Clock::time_point now = Clock::now());

  bool unlimited() const { return rate_ <= 0; }
  // Bytes that may go now (refilled up to `now`): 0 while in debt; a large
  // number when unlimited.
  std::int64_t Available(Clock::time_point now);
  // Charges `bytes`, which may overdraw the credit.
  void Take(std::int64_t bytes);
  // How long from the last Available() until some credit is back (0 when
  // there is credit), at least 1 ms when in debt.
  std::chrono::milliseconds Wait() const;

 private:
  void Refill(Clock::time_point now);

  std::int64_t rate_;
  double burst_bytes_;
  double credit_ = 0;
  Clock::time_point at_;
};

}  // namespace swarmcast::push
