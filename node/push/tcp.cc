#include "node/push/tcp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/pkt_sched.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <span>

#include "proto/endpoint.h"
#include "proto/subnet.h"

namespace swarmcast::push {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Fills a sockaddr from a numeric address; false if it is not one.
bool MakeAddress(const std::string& host, std::uint16_t port, sockaddr_storage* out,
                 socklen_t* len) {
  std::memset(out, 0, sizeof *out);
  auto* v4 = reinterpret_cast<sockaddr_in*>(out);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    *len = sizeof *v4;
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
  if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    *len = sizeof *v6;
    return true;
  }
  return false;
}

}  // namespace

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<TcpListener, std::string> ListenTcp(const std::string& address, std::uint16_t port) {
  sockaddr_storage addr;
  socklen_t len;
  if (!MakeAddress(address, port, &addr, &len)) {
    return Unexpected("push: not a numeric IP address: '" + address + "'");
  }
  UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return Unexpected(Errno("push: socket"));
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return Unexpected(Errno("push: bind " + address + ":" + std::to_string(port)));
  }
  if (::listen(fd.get(), 128) != 0) return Unexpected(Errno("push: listen"));
  sockaddr_storage actual;
  socklen_t actual_len = sizeof actual;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&actual), &actual_len);
  TcpListener out;
  out.port =
      ntohs(actual.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&actual)->sin_port
                                        : reinterpret_cast<sockaddr_in6*>(&actual)->sin6_port);
  out.fd = std::move(fd);
  return out;
}

Result<UniqueFd, std::string> ConnectTcp(const std::string& endpoint, int timeout_ms,
                                         const std::string& source_address) {
  sockaddr_storage addr;
  socklen_t len;
  auto parsed = proto::ParseEndpoint(endpoint);
  if (!parsed || !MakeAddress(parsed->host, parsed->port, &addr, &len)) {
    return Unexpected("push: not an IP:PORT endpoint: '" + endpoint + "'");
  }
  UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return Unexpected(Errno("push: socket"));
  if (!source_address.empty()) {
    sockaddr_storage source;
    socklen_t source_len;
    if (!MakeAddress(source_address, 0, &source, &source_len) ||
        source.ss_family != addr.ss_family) {
      return Unexpected("push: cannot connect to " + endpoint + " from '" + source_address +
                        "' (not a numeric address of the same family)");
    }
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&source), source_len) != 0) {
      return Unexpected(Errno("push: bind " + source_address));
    }
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    if (errno != EINPROGRESS) return Unexpected(Errno("push: connect " + endpoint));
    pollfd p{fd.get(), POLLOUT, 0};
    if (::poll(&p, 1, timeout_ms) != 1) {
      return Unexpected("push: connect " + endpoint + ": timed out");
    }
    int err = 0;
    socklen_t err_len = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &err_len);
    if (err != 0) {
      errno = err;
      return Unexpected(Errno("push: connect " + endpoint));
    }
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

std::vector<std::uint8_t> NumericAddressBytes(const std::string& text) {
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    const auto* b = reinterpret_cast<const std::uint8_t*>(&v4);
    return {b, b + 4};
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) != 1) return {};
  const auto* b = reinterpret_cast<const std::uint8_t*>(&v6);
  if (IN6_IS_ADDR_V4MAPPED(&v6)) return {b + 12, b + 16};
  return {b, b + 16};
}

std::string AddressText(std::span<const std::uint8_t> bytes) {
  char text[INET6_ADDRSTRLEN] = {};
  const int family = bytes.size() == 4 ? AF_INET : bytes.size() == 16 ? AF_INET6 : 0;
  if (family == 0 || !::inet_ntop(family, bytes.data(), text, sizeof text)) return {};
  return text;
}

std::size_t UnackedBytes(int fd) {
  int bytes = 0;
  if (::ioctl(fd, SIOCOUTQ, &bytes) != 0 || bytes < 0) return 0;
  return static_cast<std::size_t>(bytes);
}

bool LimitUnsentBytes(int fd, int bytes) {
  return ::setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, sizeof bytes) == 0;
}

bool SetCongestionControl(int fd, const std::string& name) {
  return ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(),
                      static_cast<socklen_t>(name.size())) == 0;
}

bool SetBulkPriority(int fd) {
  const int priority = TC_PRIO_BULK;
  return ::setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &priority, sizeof priority) == 0;
}

std::string NumericAddress(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw = nullptr;
  if (address.ss_family == AF_INET) {
    raw = &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr;
  } else if (address.ss_family == AF_INET6) {
    raw = &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr;
  }
  if (!raw || !::inet_ntop(address.ss_family, raw, text, sizeof text)) return {};
  return text;
}

Result<std::string, std::string> LocalAddressFacing(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), "9", &hints, &found); rc != 0) {
    return Unexpected("cannot resolve '" + host + "': " + ::gai_strerror(rc));
  }
  std::string error = "no address for '" + host + "'";
  for (addrinfo* ai = found; ai; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd || ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      error = Errno("cannot route to '" + host + "'");
      continue;
    }
    sockaddr_storage local;
    socklen_t len = sizeof local;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0) continue;
    if (std::string text = NumericAddress(local); !text.empty()) {
      ::freeaddrinfo(found);
      return text;
    }
  }
  ::freeaddrinfo(found);
  return Unexpected(error);
}

bool SameSubnet(const std::string& a, const std::string& b) {
  std::array<std::uint8_t, 16> a_bytes, b_bytes;
  for (int family : {AF_INET, AF_INET6}) {
    if (::inet_pton(family, a.c_str(), a_bytes.data()) == 1 &&
        ::inet_pton(family, b.c_str(), b_bytes.data()) == 1) {
      const std::size_t length = family == AF_INET ? 4 : 16;
      return proto::SameSubnet(std::span(a_bytes).first(length), std::span(b_bytes).first(length));
    }
  }
  return false;
}

}  // namespace swarmcast::push
