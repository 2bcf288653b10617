// ChainShare: whether a chain seed's one flow gets the seed's uplink.
//
// A chain's seed sends one TCP flow, to the head, and every link runs at
// that flow's rate. Where other traffic shares the seed's uplink, TCP
// gives that one flow about 1/(k+1) of it against k bulk flows, while the
// BitTorrent wire, one flow for each get, would take most of it: with 8
// bulk streams on the seed's 10 Mbit/s uplink, 32 gets of 8 MiB took
// 165 s as a chain and 58 s by fan-out (tests/netns/fleet-get-test,
// session 18). So the seed compares what it pushed with what left its
// interface (less its own wire uploads) window by window, and ends the
// chain, sending the links to the wire, once the chain's share has stayed
// under `min_share` for `windows` windows in a row.
//
// A healthy chain has about 0.95 (the rest is TCP/IP headers and control
// traffic). A window in which the seed sent under `min_window_bytes` is
// not judged and ends a streak, and so is one in which it pushed nothing
// because the chain wanted nothing (the head has all, or there is none).
// One in which it pushed nothing while its head lacked pieces, from the
// window's start to its end, and other traffic left the interface, has a
// share of 0: a qdisc with strict bands (pfifo_fast, where the push
// sockets are in the bulk band) gives the chain nothing at all while the
// host's other traffic fills the uplink (session 22: 32 gets waited 8 s
// for a chain that was never judged).
//
// Pure: the caller reads the counters (node/push/uplink_meter.h) and the
// clock; the simulator or a test can drive it alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace swarmcast::push {

struct ChainShareOptions {
  std::chrono::milliseconds window{2000};
  int windows = 2;
  double min_share = 0.5;
  std::uint64_t min_window_bytes = 128 << 10;
};

// Cumulative byte counters at one moment.
struct UplinkSample {
  std::uint64_t chain_bytes = 0;  // pushed to the chain's head (payload)
  std::uint64_t sent_bytes = 0;   // left the seed's interface (all traffic)
  std::uint64_t wire_bytes = 0;   // the seed's own BitTorrent uploads (payload)
  bool head_lacks = false;        // the chain's head lacks pieces (not a counter)
};

class ChainShare {
 public:
  using Clock = std::chrono::steady_clock;
  ChainShare() = default;
  explicit ChainShare(ChainShareOptions options) : options_(options) {}

  // The chain's mean share over the streak, once it has stayed under
  // min_share for `windows` windows; nullopt until then.
  std::optional<double> Observe(Clock::time_point now, const UplinkSample& sample);
  // Whether Observe would judge a window now: the caller reads the
  // counters only then.
  bool Due(Clock::time_point now) const;

 private:
  ChainShareOptions options_;
  std::optional<Clock::time_point> window_start_;
  UplinkSample base_;
  int streak_ = 0;
  double streak_share_sum_ = 0;
  void EndStreak();
};

}  // namespace swarmcast::push
