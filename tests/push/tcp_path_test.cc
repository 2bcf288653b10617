// ReadTcpPath and SetMaxPacingRate on real loopback sockets: the ceiling
// HeadPacer sets (node/push/head_pacer.h) holds a socket to its rate
// under any qdisc, and TCP_INFO counts what the peer acknowledged.
#include "node/push/tcp_path.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/push/loopback_pair.h"

namespace swarmcast::push {
namespace {

using Clock = std::chrono::steady_clock;

// Sends `bytes` on the non-blocking `fd` while a thread reads them from
// `peer`; returns how long until the peer had them all.
Clock::duration SendAll(int fd, int peer, std::size_t bytes) {
  std::atomic<std::size_t> received{0};
  std::thread reader([&] {
    std::vector<char> buffer(64 << 10);
    while (received < bytes) {
      const ssize_t n = ::read(peer, buffer.data(), buffer.size());
      if (n <= 0) return;
      received += static_cast<std::size_t>(n);
    }
  });
  const auto start = Clock::now();
  std::vector<char> chunk(16 << 10, 'x');
  std::size_t sent = 0;
  while (sent < bytes) {
    const ssize_t n = ::send(fd, chunk.data(), std::min(chunk.size(), bytes - sent), MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      pollfd pfd{fd, POLLOUT, 0};
      ::poll(&pfd, 1, 1000);
    } else if (n < 0 && errno != EINTR) {
      ADD_FAILURE() << "send: " << errno;
      break;
    }
  }
  reader.join();
  EXPECT_EQ(received.load(), bytes);
  return Clock::now() - start;
}

TEST(TcpPathTest, AcknowledgedBytesCountWhatThePeerTook) {
  auto p = testing::ConnectLoopback();
  const auto before = ReadTcpPath(p.server.get());
  ASSERT_TRUE(before);
  EXPECT_LE(before->bytes_acked, 1u);  // the SYN's byte, at most
  SendAll(p.server.get(), p.client.get(), 1 << 20);
  // The peer answers once it read everything: the answer's segment
  // acknowledges all of it, and the stack takes that ACK in before the
  // byte is readable.
  ASSERT_EQ(::write(p.client.get(), "k", 1), 1);
  pollfd pfd{p.server.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);
  char answer = 0;
  ASSERT_EQ(::read(p.server.get(), &answer, 1), 1);
  const auto after = ReadTcpPath(p.server.get());
  ASSERT_TRUE(after);
  EXPECT_GE(after->bytes_acked, 1u << 20);
  EXPECT_LE(after->bytes_acked, (1u << 20) + 1);
  EXPECT_GT(after->min_rtt.count(), 0);
}

TEST(TcpPathTest, ACeilingHoldsTheSocketToItsRate) {
  // 4 MiB at 8 MB/s: about 0.5 s, where loopback takes milliseconds. The
  // first window (ten 64 KiB loopback segments) leaves unpaced.
  constexpr std::size_t kBytes = 4 << 20;
  auto paced = testing::ConnectLoopback();
  ASSERT_TRUE(SetMaxPacingRate(paced.server.get(), 8'000'000));
  const auto took = SendAll(paced.server.get(), paced.client.get(), kBytes);
  EXPECT_GE(took, std::chrono::milliseconds(350));
  // Lifted: the same bytes go at loopback's speed again.
  auto lifted = testing::ConnectLoopback();
  ASSERT_TRUE(SetMaxPacingRate(lifted.server.get(), 8'000'000));
  ASSERT_TRUE(SetMaxPacingRate(lifted.server.get(), 0));
  EXPECT_LT(SendAll(lifted.server.get(), lifted.client.get(), kBytes), took / 2);
}

}  // namespace
}  // namespace swarmcast::push
