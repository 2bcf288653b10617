// A connected pair of loopback TCP sockets, for tests of the push
// channel's socket helpers.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <string>
#include <utility>

#include "node/push/tcp.h"

namespace swarmcast::push::testing {

struct LoopbackPair {
  TcpListener listener;
  UniqueFd client, server;
};

// The client side is blocking, the server side (the sender in these
// tests) non-blocking.
inline LoopbackPair ConnectLoopback() {
  LoopbackPair p;
  auto listener = ListenTcp("127.0.0.1", 0);
  EXPECT_TRUE(listener) << listener.error();
  p.listener = std::move(*listener);
  auto client = ConnectTcp("127.0.0.1:" + std::to_string(p.listener.port), 5000);
  EXPECT_TRUE(client) << client.error();
  p.client = std::move(*client);
  pollfd pfd{p.listener.fd.get(), POLLIN, 0};
  EXPECT_EQ(::poll(&pfd, 1, 5000), 1);
  p.server = UniqueFd(::accept4(p.listener.fd.get(), nullptr, nullptr, SOCK_NONBLOCK));
  EXPECT_TRUE(p.server);
  return p;
}

}  // namespace swarmcast::push::testing
