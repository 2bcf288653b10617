// The push sender picks the congestion control of the sockets it pushes
// pieces on (PushSenderOptions::congestion_control, cubic by default),
// pushes on with the host's default when the kernel refuses the one asked
// for, and, as a chain seed, puts those sockets in the bulk band of the
// host's own queue.
// Checked on the real sockets of a real PushSender and PushReceiver over
// loopback, found through this process's descriptors.
#include <gtest/gtest.h>
#include <linux/pkt_sched.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "node/push/push_receiver.h"
#include "node/push/push_sender.h"
#include "node/push/tcp.h"
#include "tests/push/push_channel_fixture.h"

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;

std::optional<std::uint16_t> Port(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&a)->sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&a)->sin6_port);
  return std::nullopt;
}

// Every connected TCP socket of this process whose local port is `port`:
// the sockets a sender accepted there (its listener has no peer).
std::vector<int> SocketsOn(std::uint16_t port) {
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_storage local{}, remote{};
    socklen_t local_len = sizeof local, remote_len = sizeof remote;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        ::getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &remote_len) != 0 ||
        Port(local) != port) {
      continue;  // not a socket, a listener, or another port
    }
    out.push_back(fd);
  }
  return out;
}

std::vector<std::string> CongestionControlOfSocketsOn(std::uint16_t port) {
  std::vector<std::string> out;
  for (int fd : SocketsOn(port)) {
    char name[32] = {};
    socklen_t len = sizeof name;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) continue;
    out.emplace_back(name);
  }
  return out;
}

std::vector<int> PriorityOfSocketsOn(std::uint16_t port) {
  std::vector<int> out;
  for (int fd : SocketsOn(port)) {
    int priority = -1;
    socklen_t len = sizeof priority;
    if (::getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &priority, &len) != 0) continue;
    out.push_back(priority);
  }
  return out;
}

std::string HostDefault() {
  std::string name;
  FILE* f = std::fopen("/proc/sys/net/ipv4/tcp_congestion_control", "r");
  if (!f) return name;
  char line[64] = {};
  if (std::fgets(line, sizeof line, f)) name = line;
  std::fclose(f);
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  return name;
}

class PushCongestionControlTest : public PushChannelTest {
 protected:
  // Pushes the whole file to one receiver, from a sender with `name` as
  // its congestion control (none: the default option), checks the copy,
  // and says what the sender's socket used while it was still open.
  std::vector<std::string> CongestionControlWhilePushing(std::optional<std::string> name) {
    PushSenderOptions o;
    if (name) o.congestion_control = *name;
    return WhilePushing(o, [](std::uint16_t port) { return CongestionControlOfSocketsOn(port); });
  }

  // Pushes the whole file to one receiver from a sender with options `o`,
  // checks the copy, and returns what `look` found on the sender's port
  // while the connection was still open.
  template <typename Look>
  auto WhilePushing(const PushSenderOptions& o, Look look) -> decltype(look(0)) {
    auto sender = StartSender(FanoutKind::kSplice, 10s, o);
    if (!sender) return {};
    Sink sink;
    auto receiver = Receive(sender->port(), sink);
    if (!receiver) return {};
    EXPECT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= geometry().piece_count; }, 20s))
        << sink.pieces.size() << " pieces";
    {
      std::lock_guard lock(sink.mu);
      EXPECT_FALSE(sink.corrupt);
    }
    return look(sender->port());
  }
};

TEST_F(PushCongestionControlTest, ThePushSocketsUseCubic) {
  EXPECT_EQ(CongestionControlWhilePushing(std::nullopt), std::vector<std::string>{"cubic"})
      << "the host's default is " << HostDefault();
}

// Reno is always built and always allowed: this holds whatever the host's
// default is (on a host whose default is cubic the test above cannot tell).
TEST_F(PushCongestionControlTest, ThePushSocketsUseTheCongestionControlTheSenderIsGiven) {
  EXPECT_EQ(CongestionControlWhilePushing("reno"), std::vector<std::string>{"reno"});
}

TEST_F(PushCongestionControlTest, ACongestionControlTheKernelRefusesLeavesTheHostsDefault) {
  EXPECT_EQ(CongestionControlWhilePushing("no-such-algorithm"),
            std::vector<std::string>{HostDefault()});
}

// A chain seed's host sends its other traffic (its tracker's answers, new
// subscribers' SYN-ACKs, which the listener sends) ahead of the push in
// its own queue: the accepted sockets are in the bulk band, the listener
// is not. A fan-out seed, which does not watch its share of the uplink,
// leaves them in the default band.
TEST_F(PushCongestionControlTest, AChainSeedsPushSocketsQueueBehindTheHostsOtherTraffic) {
  const auto priority = [](std::uint16_t port) { return PriorityOfSocketsOn(port); };
  PushSenderOptions chain;
  chain.chain = true;
  EXPECT_EQ(WhilePushing(chain, priority), std::vector<int>{TC_PRIO_BULK});
  EXPECT_EQ(WhilePushing({}, priority), std::vector<int>{0});
}

TEST(SetBulkPriorityTest, OnlyTheSocketItIsGivenChanges) {
  auto listener = ListenTcp("127.0.0.1", 0);
  ASSERT_TRUE(listener) << listener.error();
  UniqueFd other(::socket(AF_INET, SOCK_STREAM, 0));
  ASSERT_TRUE(SetBulkPriority(listener->fd.get()));
  int priority = -1;
  socklen_t len = sizeof priority;
  ASSERT_EQ(::getsockopt(listener->fd.get(), SOL_SOCKET, SO_PRIORITY, &priority, &len), 0);
  EXPECT_EQ(priority, TC_PRIO_BULK);
  ASSERT_EQ(::getsockopt(other.get(), SOL_SOCKET, SO_PRIORITY, &priority, &len), 0);
  EXPECT_EQ(priority, 0);
}

}  // namespace
}  // namespace swarmcast::push
