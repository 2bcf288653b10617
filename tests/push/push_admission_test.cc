// Who gets onto a real PushSender (issue 14): connections that never say
// HELLO are closed at the deadline, one address holds at most a few
// connections, and a private seed pushes only to subscribers that present
// its token. Each refusal is a BYE that says why; a real receiver still
// gets in.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <optional>

#include "node/push/tcp.h"
#include "tests/common/push_bye.h"
#include "tests/push/push_channel_fixture.h"

namespace swarmcast::push {
namespace {

using swarmcast::testing::ByeFrom;
using swarmcast::testing::WaitReadable;

UniqueFd Connect(std::uint16_t port, const std::string& from) {
  auto fd = ConnectTcp("127.0.0.1:" + std::to_string(port), 2000, from);
  EXPECT_TRUE(fd.ok()) << (fd.ok() ? "" : fd.error());
  return fd.ok() ? std::move(*fd) : UniqueFd();
}

TEST_F(PushChannelTest, SilentConnectionIsClosedAtTheHelloDeadline) {
  PushSenderOptions o;
  o.hello_timeout = 300ms;
  auto sender = StartSender(FanoutKind::kCopy, 10s, o);
  ASSERT_TRUE(sender);
  UniqueFd silent = Connect(sender->port(), "127.0.0.7");
  const auto start = std::chrono::steady_clock::now();
  auto bye = ByeFrom(silent.get(), 20s);
  ASSERT_TRUE(bye) << "closed without a BYE, or never";
  EXPECT_EQ(bye->reason, static_cast<std::uint16_t>(proto::ByeReason::kHelloTimeout));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
  EXPECT_TRUE(WaitUntil(20s, [&] { return sender->stats().refused == 1; }));
}

TEST_F(PushChannelTest, OneAddressHoldsAtMostFourConnections) {
  auto sender = StartSender(FanoutKind::kCopy);
  ASSERT_TRUE(sender);
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(Connect(sender->port(), "127.0.0.7"));
  UniqueFd fifth = Connect(sender->port(), "127.0.0.7");
  auto bye = ByeFrom(fifth.get(), 20s);
  ASSERT_TRUE(bye);
  EXPECT_EQ(bye->reason, static_cast<std::uint16_t>(proto::ByeReason::kTooManyConnections));
  EXPECT_NE(bye->text.find("127.0.0.7"), std::string::npos) << bye->text;
  // Another host subscribes and gets everything meanwhile.
  Sink sink;
  auto r = Receive(sender->port(), sink, {}, {}, "127.0.0.8");
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= 41; }, 20s)) << sink.end_reason;
  // Once one of the four goes, the address may connect again.
  idle.pop_back();
  EXPECT_TRUE(WaitUntil(20s, [&] {
    UniqueFd again = Connect(sender->port(), "127.0.0.7");
    return !WaitReadable(again.get(), 200ms);  // no BYE: it was let in
  }));
}

TEST_F(PushChannelTest, PrivateSenderPushesOnlyWithTheToken) {
  PushSenderOptions o;
  o.tokens = {"lab-secret"};
  auto sender = StartSender(FanoutKind::kCopy, 10s, o);
  ASSERT_TRUE(sender);
  for (const std::string token : {"", "lab-secre", "wrong"}) {
    SCOPED_TRACE("token '" + token + "'");
    Sink sink;
    PushReceiverOptions ro;
    ro.token = token;
    auto r = Receive(sender->port(), sink, {}, {}, "127.0.0.7", ro);
    ASSERT_TRUE(sink.WaitFor([&] { return sink.ended; }, 20s));
    EXPECT_NE(sink.end_reason.find("BYE (5)"), std::string::npos) << sink.end_reason;
    EXPECT_TRUE(sink.pieces.empty());
  }
  Sink sink;
  PushReceiverOptions ro;
  ro.token = "lab-secret";
  auto r = Receive(sender->port(), sink, {}, {}, "127.0.0.8", ro);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= 41; }, 20s)) << sink.end_reason;
  std::lock_guard lock(sink.mu);
  EXPECT_FALSE(sink.corrupt);
  EXPECT_EQ(sender->stats().refused, 3u);
}

}  // namespace
}  // namespace swarmcast::push
