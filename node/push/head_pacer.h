// HeadPacer: a ceiling on how fast a chain seed pushes to its head.
//
// A chain's seed pushes to its head alone (docs/architecture.md "Chain"),
// over a connection that sat idle until that link became head: the probe
// (node/push/chain_order.h) makes the second link head about 0.35 s in.
// A cold connection starts in slow start, doubling its window every round
// trip until some queue overflows. Where the seed's uplink is faster than
// the head's download (an image server on a faster NIC), that queue is
// the switch port in front of the head, and slow start's last round sends
// at the seed's line rate into it: 260-290 segments lost at once, the
// window down to 38-53 segments for 0.5 s, and the whole chain at 2-5 of
// its 12 MB/s meanwhile (seed on 400 Mbit/s, eight receivers on
// 100 Mbit/s, `ss -tin` sampled; docs/benchmarks.md, session 27).
//
// So the head's socket gets a pacing ceiling (SO_MAX_PACING_RATE), looked
// at every `step`:
// - A new head starts at `gain` times the best rate a head's socket
//   delivered so far (over `rate_span`), or `initial_rate` if higher.
//   Slow start then fills the port's queue at a quarter of the link's
//   rate, not three times it, and TCP backs off on a few losses with the
//   link still full.
// - The first head, with no rate known, starts at `initial_rate`, and
//   the ceiling rises by `raise` after every step in which it held the
//   socket back: no queue past the seed (no more in flight than the rate
//   it delivered fills in its least round trip plus `queue_delay`, plus
//   `slack`) while it delivered `bound_share` of the ceiling. Once a queue
//   shows, the link holds the socket: the ceiling becomes `gain` times
//   the rate of the last few steps, and from then on it only rises.
// - A ceiling that held the socket back for two steps in a row rises by
//   `raise`: a head faster than every one before it (the first head was
//   a slow receiver: the probe's case) gets its rate in a few steps.
// Nothing lowers a ceiling but the first queue: a step's rate is noisy (a
// switch's burst, ACKs bunched), and a ceiling under the link's rate
// costs the whole chain. Cubic's window does the rest.
//
// Pure: the caller reads the head's socket (node/push/tcp_path.h) and the
// clock, and sets what Observe returns. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include "node/push/push_scheduler.h"
#include "node/push/tcp_path.h"

namespace swarmcast::push {

struct HeadPacerOptions {
  // The first head's ceiling, in bytes/s (64 Mbit/s), doubled each step
  // (`raise`) while it holds the socket back: 20 ms of steps to a
  // CPU-bound unshaped LAN's rate, 35 ms to 10 Gbit/s. Starting at
  // 2 MB/s and 1.5x a step (about 130 ms to the unshaped rate) cost 7% of
  // the unshaped N = 8 cell (session 27). A ceiling at most twice the
  // link's rate for one step queues one step of its traffic.
  double initial_rate = 8e6;
  // A ceiling this far over the rate a head takes: a wrong guess costs
  // nothing while the link holds the socket, and the queue past the seed
  // grows at a quarter of the rate at most. A fixed 1.6x of the link took
  // 1.07-1.12x of size / link rate in the 400 Mbit/s cell, 1.25x
  // 1.06-1.07x (session 27).
  double gain = 1.25;
  std::chrono::milliseconds step{5};
  double raise = 2;
  double bound_share = 0.9;
  // A queue: in flight beyond rate x (least rtt + queue_delay) + slack.
  // The slack covers what is in flight with no queue: a GSO packet or
  // two in the seed's own qdisc, segments whose ACKs the receiver delays.
  std::chrono::microseconds queue_delay{2000};
  std::uint64_t slack = 64 << 10;
  // A head's rate is bytes acknowledged over at least this span: short
  // spans read a switch's burst or one late ACK as the rate. The probe
  // comes about 0.3 s after the first head's first byte.
  std::chrono::milliseconds rate_span{200};
};

class HeadPacer {
 public:
  using Clock = std::chrono::steady_clock;
  using Options = HeadPacerOptions;

  explicit HeadPacer(Options options = {}) : options_(options) {}

  // A ceiling to set on `head`'s socket, in bytes/s (0: none).
  struct Ceiling {
    SubscriberId head;
    std::uint64_t bytes_per_second;
    bool operator==(const Ceiling&) const = default;
  };
  // The chain's head now (0: none) and its socket's path. Returns the
  // ceiling to set when a head starts or its ceiling changes. Call at
  // once when the head changes (before the seed pushes to a new one), and
  // else by next_step().
  std::optional<Ceiling> Observe(Clock::time_point now, SubscriberId head,
                                 const TcpPathSample& path);
  // The head the pacer last saw (0: none).
  SubscriberId head() const { return head_; }
  Clock::time_point next_step() const { return step_start_ + options_.step; }
  // The best rate a head's socket delivered over rate_span, in bytes/s
  // (0: none measured yet).
  double best_rate() const { return best_rate_; }

 private:
  struct Acked {
    Clock::time_point at;
    std::uint64_t bytes;
  };
  void MeasureRate(Clock::time_point now, std::uint64_t bytes_acked);
  std::optional<Ceiling> Step(Clock::time_point now, const TcpPathSample& path);
  // Bytes/s acknowledged over the last three steps (0: too few samples).
  double RecentRate(Clock::time_point now) const;

  Options options_;
  SubscriberId head_ = 0;
  double ceiling_ = 0;
  bool starting_ = false;  // the first head, until a queue shows
  int bound_steps_ = 0;    // steps in a row in which the ceiling held the socket back
  double best_rate_ = 0;
  std::deque<Acked> tenure_;  // the head's samples; the oldest at most one beyond rate_span
  Clock::time_point step_start_{};
  std::uint64_t step_acked_ = 0;
};

}  // namespace swarmcast::push
