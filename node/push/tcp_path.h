// What the kernel knows about a TCP connection's path (TCP_INFO), and a
// ceiling on how fast it sends (SO_MAX_PACING_RATE). Linux only; a failure
// reads as nothing known, or an unchanged socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace swarmcast::push {

struct TcpPathSample {
  std::uint64_t bytes_acked = 0;         // over the connection's life
  std::uint64_t in_flight = 0;           // sent, not yet acknowledged (whole segments)
  std::chrono::microseconds min_rtt{0};  // the least round trip seen lately
};

std::optional<TcpPathSample> ReadTcpPath(int fd);

// The socket sends at most `bytes_per_second` (TCP paces its packets
// itself under any qdisc); 0 lifts the ceiling. False if the kernel
// refused.
bool SetMaxPacingRate(int fd, std::uint64_t bytes_per_second);

}  // namespace swarmcast::push
