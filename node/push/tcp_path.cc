#include "node/push/tcp_path.h"

// <linux/tcp.h>, not <netinet/tcp.h>: glibc's tcp_info stops before
// tcpi_bytes_acked and tcpi_min_rtt.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <limits>

namespace swarmcast::push {

std::optional<TcpPathSample> ReadTcpPath(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return std::nullopt;
  // An older kernel fills a shorter struct (tcpi_min_rtt: 4.10+).
  if (len < offsetof(tcp_info, tcpi_min_rtt) + sizeof info.tcpi_min_rtt) return std::nullopt;
  return TcpPathSample{
      .bytes_acked = info.tcpi_bytes_acked,
      .in_flight = static_cast<std::uint64_t>(info.tcpi_unacked) * info.tcpi_snd_mss,
      .min_rtt = std::chrono::microseconds(info.tcpi_min_rtt)};
}

bool SetMaxPacingRate(int fd, std::uint64_t bytes_per_second) {
  // The kernel reads an unsigned long (a u32 from older callers); ~0 is
  // no ceiling.
  unsigned long rate = bytes_per_second == 0 ? std::numeric_limits<unsigned long>::max()
                                             : static_cast<unsigned long>(bytes_per_second);
  return ::setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate) == 0;
}

}  // namespace swarmcast::push
