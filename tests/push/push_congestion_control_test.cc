// The push sender picks the congestion control of the sockets it pushes
// pieces on (PushSenderOptions::congestion_control, cubic by default), and
// pushes on with the host's default when the kernel refuses the one asked
// for. Checked on the real sockets of a real PushSender and PushReceiver
// over loopback, found through this process's descriptors.
#include <gtest/gtest.h>
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
#include "tests/push/push_channel_fixture.h"

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;

std::optional<std::uint16_t> Port(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&a)->sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&a)->sin6_port);
  return std::nullopt;
}

// The congestion control of every connected TCP socket of this process
// whose local port is `port`: the sockets a sender accepted there.
std::vector<std::string> CongestionControlOfSocketsOn(std::uint16_t port) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_storage local{}, remote{};
    socklen_t local_len = sizeof local, remote_len = sizeof remote;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        ::getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &remote_len) != 0 ||
        Port(local) != port) {
      continue;  // not a socket, a listener, or another port
    }
    char name[32] = {};
    socklen_t len = sizeof name;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) continue;
    out.emplace_back(name);
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
    return CongestionControlOfSocketsOn(sender->port());
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

}  // namespace
}  // namespace swarmcast::push
