// A blocking HTTP/1.1 GET over a plain socket, bounded in time and size,
// for the node's integration tests (scrapes of --metrics-listen, raw
// announces to the tracker). Header-only; returns status 0 on any failure.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace swarmcast::node::testing {

struct PlainHttpReply {
  int status = 0;
  std::string body;
};

// Connects to `ip`:`port`, sends `raw` as is, reads until the peer closes
// (or `timeout`, or 4 MiB). The reply's raw bytes.
inline std::string PlainHttpExchange(const std::string& ip, int port, const std::string& raw,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  std::string in;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(raw.size())) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[16384];
    while (in.size() < (4u << 20)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return in;
}

inline PlainHttpReply PlainHttpGet(const std::string& ip, int port, const std::string& target) {
  const std::string in = PlainHttpExchange(
      ip, port, "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  PlainHttpReply r;
  if (in.rfind("HTTP/1.1 ", 0) != 0) return r;
  r.status = std::atoi(in.c_str() + 9);
  const auto body = in.find("\r\n\r\n");
  if (body != std::string::npos) r.body = in.substr(body + 4);
  return r;
}

// The value of the sample `series` (name with its labels, as printed) in
// Prometheus text; -1 when absent.
inline double MetricSample(const std::string& text, const std::string& series) {
  const std::string at = "\n" + series + " ";
  const auto pos = ("\n" + text).find(at);
  if (pos == std::string::npos) return -1;
  return std::atof(text.c_str() + pos + at.size() - 1);
}

}  // namespace swarmcast::node::testing
