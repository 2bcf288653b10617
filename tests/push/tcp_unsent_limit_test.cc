// LimitUnsentBytes on real loopback sockets: the kernel then refuses a
// write once the bytes not yet sent reach the cap, so a socket whose peer
// does not read takes in about what is in flight plus the cap, instead of
// its whole send buffer. This is what keeps a seed's pushed pieces from
// waiting seconds in its buffers (PushSenderOptions::max_unsent_bytes).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <vector>

#include "node/push/tcp.h"
#include "tests/push/loopback_pair.h"

namespace swarmcast::push {
namespace {

using Pair = testing::LoopbackPair;
constexpr auto Connect = testing::ConnectLoopback;

// Bytes a non-blocking socket accepts before EAGAIN, its peer not reading.
std::size_t BytesTakenBeforeEagain(int fd) {
  std::vector<char> chunk(16 << 10, 'x');
  std::size_t taken = 0;
  while (taken < (64u << 20)) {
    const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      EXPECT_EQ(errno, EAGAIN);
      break;
    }
    taken += static_cast<std::size_t>(n);
  }
  return taken;
}

TEST(TcpUnsentLimitTest, TheCapIsSetOnTheSocket) {
  Pair p = Connect();
  ASSERT_TRUE(LimitUnsentBytes(p.server.get(), 128 << 10));
  int value = 0;
  socklen_t len = sizeof value;
  ASSERT_EQ(::getsockopt(p.server.get(), IPPROTO_TCP, TCP_NOTSENT_LOWAT, &value, &len), 0);
  EXPECT_EQ(value, 128 << 10);
}

TEST(TcpUnsentLimitTest, ACappedSocketTakesFarLessThanItsBufferWhenThePeerDoesNotRead) {
  constexpr int kSendBuffer = 4 << 20, kCap = 64 << 10;
  Pair capped = Connect(), uncapped = Connect();
  for (Pair* p : {&capped, &uncapped}) {
    ASSERT_EQ(
        ::setsockopt(p->server.get(), SOL_SOCKET, SO_SNDBUF, &kSendBuffer, sizeof kSendBuffer), 0);
  }
  ASSERT_TRUE(LimitUnsentBytes(capped.server.get(), kCap));
  const std::size_t with_cap = BytesTakenBeforeEagain(capped.server.get());
  const std::size_t without = BytesTakenBeforeEagain(uncapped.server.get());
  // The peer's receive window (its initial buffer, as it reads nothing)
  // plus the cap, against that window plus a send buffer of 4 MiB.
  EXPECT_GT(with_cap, 0u);
  EXPECT_LT(with_cap, std::size_t{1} << 20) << "without the cap: " << without;
  EXPECT_GT(without, with_cap + (std::size_t{2} << 20));
}

}  // namespace
}  // namespace swarmcast::push
