// Small blocking-I/O helpers shared by the benchmark's own tools
// (sendfile_bench.cc, relay_bench.cc): a numeric "IPv4:PORT" and whole
// writes and reads that retry on EINTR and short counts.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace swarmcast::bench {

inline std::optional<sockaddr_in> ParseAddr(const std::string& s) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (inet_pton(AF_INET, s.substr(0, colon).c_str(), &a.sin_addr) != 1) return std::nullopt;
  char* end = nullptr;
  const long port = std::strtol(s.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 1 || port > 65535) return std::nullopt;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  return a;
}

// All of `len` bytes to a socket or a file (a socket's SIGPIPE is the
// caller's to ignore).
inline bool WriteAll(int fd, const void* data, std::size_t len) {
  const auto* p = static_cast<const char*>(data);
  while (len > 0) {
    const ssize_t n = ::write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

// Exactly `len` bytes; false on an error or an early end.
inline bool ReadExact(int fd, void* data, std::size_t len) {
  auto* p = static_cast<char*>(data);
  while (len > 0) {
    const ssize_t n = ::read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace swarmcast::bench
