// Small TCP helpers for the push channel: an owning fd and numeric-address
// listen/connect. Errors are strings that say what failed and why.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "proto/result.h"

namespace swarmcast::push {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset();

 private:
  int fd_ = -1;
};

// A non-blocking listening socket on a numeric IPv4/IPv6 address; port 0
// picks a free port, and `port` says which.
struct TcpListener {
  UniqueFd fd;
  std::uint16_t port = 0;
};
Result<TcpListener, std::string> ListenTcp(const std::string& address, std::uint16_t port);

// A blocking connect to "ADDR:PORT" or "[ADDR6]:PORT", bounded by
// timeout_ms, from `source_address` if not empty; the returned socket is
// blocking.
Result<UniqueFd, std::string> ConnectTcp(const std::string& endpoint, int timeout_ms,
                                         const std::string& source_address = {});

// The local IP address this host would use to reach `host` (a name or a
// numeric address): a UDP socket is connected to it and asked its own
// address, which sends no packet.
Result<std::string, std::string> LocalAddressFacing(const std::string& host);

// Bytes written to a connected TCP socket that its peer has not yet
// acknowledged (SIOCOUTQ); 0 when it cannot be asked.
std::size_t UnackedBytes(int fd);

// Caps the bytes a TCP socket holds that it has not sent yet
// (TCP_NOTSENT_LOWAT): a write beyond it fails with EAGAIN, and EPOLLOUT
// waits until the unsent bytes are below it again. What is in flight is
// still the congestion window's. False if the kernel refused.
bool LimitUnsentBytes(int fd, int bytes);

// Sets a TCP socket's congestion control (TCP_CONGESTION), e.g. "cubic".
// False if the kernel refused: the algorithm is not built, or this process
// may not pick it (net.ipv4.tcp_allowed_congestion_control, unless it has
// CAP_NET_ADMIN); errno says which.
bool SetCongestionControl(int fd, const std::string& name);

// Queues a socket's packets behind this host's other traffic in its own
// qdisc (SO_PRIORITY TC_PRIO_BULK: pfifo_fast's and prio's last band);
// nothing changes on the wire, and fair-queueing qdiscs ignore it. False
// if the kernel refused.
bool SetBulkPriority(int fd);

// The numeric IP of a socket address ("10.0.0.2", "fe80::1"); empty for
// other families.
std::string NumericAddress(const sockaddr_storage& address);

// A numeric IP as bytes in network order: 4 for IPv4 (an IPv4-mapped
// IPv6 address too), 16 for IPv6; empty when `text` is not numeric.
std::vector<std::uint8_t> NumericAddressBytes(const std::string& text);
// The text form of 4 or 16 address bytes; empty for other sizes.
std::string AddressText(std::span<const std::uint8_t> bytes);

// Whether two numeric addresses share a LAN: the same /24 for IPv4, the
// same /64 for IPv6 (proto::SameSubnet). False for unparsable input or
// mixed families.
bool SameSubnet(const std::string& a, const std::string& b);

}  // namespace swarmcast::push
