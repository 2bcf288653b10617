// The push channel end to end over loopback: a real PushSender and real
// PushReceivers (and raw sockets playing a misbehaving side).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "node/push/push_receiver.h"
#include "node/push/push_sender.h"
#include "node/push/tcp.h"
#include "tests/common/wait_until.h"
#include "tests/push/push_channel_fixture.h"

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;
using swarmcast::testing::DrainUntilClosed;
using swarmcast::testing::WaitReadable;
using swarmcast::testing::WaitUntil;

class PushChannelBackendTest : public PushChannelTest,
                               public ::testing::WithParamInterface<FanoutKind> {};

TEST_P(PushChannelBackendTest, FourReceiversGetEveryPieceOnceAndIntact) {
  auto sender = StartSender(GetParam());
  ASSERT_TRUE(sender);
  EXPECT_EQ(sender->backend_name(), FanoutKindName(GetParam()));
  Sink sinks[4];
  std::vector<std::unique_ptr<PushReceiver>> receivers;
  for (auto& sink : sinks) receivers.push_back(Receive(sender->port(), sink));
  for (auto& sink : sinks) {
    ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= 41; }, 20s))
        << "got " << sink.pieces.size() << " pieces; ended: " << sink.end_reason;
  }
  for (auto& sink : sinks) {
    std::lock_guard lock(sink.mu);
    EXPECT_FALSE(sink.corrupt);
    EXPECT_EQ(sink.pieces.size(), 41u) << "a piece arrived twice";
    EXPECT_EQ(std::set<std::uint32_t>(sink.pieces.begin(), sink.pieces.end()).size(), 41u);
  }
  // The first copy of each piece (the cover pass's) came as PIECE, to be
  // forwarded; the last (a batch that left no one lacking the piece) as
  // DIRECT, to be kept.
  std::multiset<std::uint32_t> to_forward;
  for (auto& sink : sinks) {
    std::lock_guard lock(sink.mu);
    to_forward.insert(sink.to_forward.begin(), sink.to_forward.end());
  }
  for (std::uint32_t p = 0; p < 41; ++p) {
    EXPECT_GE(to_forward.count(p), 1u) << "piece " << p;
    EXPECT_LE(to_forward.count(p), 3u) << "piece " << p;
  }
  // A receiver can hold a piece a moment before the sender has counted it.
  WaitUntil(20s, [&] { return sender->stats().pieces_sent >= 4u * 41; });
  const auto st = sender->stats();
  EXPECT_EQ(st.pieces_sent, 4u * 41);
  EXPECT_EQ(st.payload_bytes, 4 * kFileSize);
  // Whether calls served several sockets at once depends on when the
  // receivers connected (the first may have everything before the last
  // joins); the batching itself is pinned down in push_scheduler_test.
  EXPECT_GE(st.fanout_targets, st.fanout_calls);
}

INSTANTIATE_TEST_SUITE_P(Backends, PushChannelBackendTest,
                         ::testing::Values(FanoutKind::kCopy, FanoutKind::kSendfile,
                                           FanoutKind::kSplice),
                         [](const auto& info) { return std::string(FanoutKindName(info.param)); });

TEST_F(PushChannelTest, PiecesTheReceiverHasAreNotPushed) {
  auto sender = StartSender(FanoutKind::kSplice);
  ASSERT_TRUE(sender);
  std::vector<bool> have(41, false);
  for (std::uint32_t p = 0; p < 41; p += 2) have[p] = true;
  Sink sink;
  auto r = Receive(sender->port(), sink, have);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= 20; }, 20s));
  // The negative check is tied to the sender's scan, not to a pause: a
  // second receiver that has nothing makes the scan pass every piece again,
  // each a chance to send the first receiver one it has. When the second
  // has all 41, the first must still have exactly its 20.
  Sink late;
  auto r2 = Receive(sender->port(), late);
  ASSERT_TRUE(late.WaitFor([&] { return late.pieces.size() >= 41; }, 20s))
      << "the late receiver got " << late.pieces.size() << " pieces";
  std::lock_guard lock(sink.mu);
  EXPECT_EQ(sink.pieces.size(), 20u);
  for (auto p : sink.pieces) EXPECT_EQ(p % 2, 1u);
  EXPECT_FALSE(sink.corrupt);
  // (A receiver can hold a piece a moment before the sender counted it.)
  WaitUntil(20s, [&] { return sender->stats().pieces_sent >= 20u + 41u; });
  EXPECT_EQ(sender->stats().pieces_sent, 20u + 41u);
}

// A subscriber that says it fetches a piece over the BitTorrent wire
// (FETCHING) is not pushed that piece: libtorrent would not cancel its
// request, and both copies would use its downlink.
TEST_F(PushChannelTest, PiecesTheSubscriberFetchesAreNotPushedToIt) {
  auto sender = StartSender(FanoutKind::kSplice);
  ASSERT_TRUE(sender);
  const std::uint32_t pieces = geometry().piece_count;  // 41
  // One subscriber holds everything, so every piece has a copy and the
  // seed's scan fans out rather than covering.
  Sink full;
  auto holder = Receive(sender->port(), full, std::vector<bool>(pieces, true));
  ASSERT_TRUE(WaitUntil(10s, [&] { return sender->stats().subscribers == 1u; }));
  // A raw subscriber with nothing: HELLO and FETCHING for every odd piece
  // in one write, so the seed has read both before it schedules.
  auto fd = ConnectTcp("127.0.0.1:" + std::to_string(sender->port()), 2000);
  ASSERT_TRUE(fd.ok());
  timeval limit{20, 0};
  ::setsockopt(fd->get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  proto::Hello hello;
  hello.info_hash = source_.info_hash;
  hello.geometry = geometry();
  hello.bitfield.assign(proto::BitfieldSize(pieces), 0);
  std::string out = Encode(hello);
  for (std::uint32_t p = 1; p < pieces; p += 2) out += Encode(proto::Fetching{p});
  ASSERT_EQ(::send(fd->get(), out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  // The scan goes in disk order over one stream, so once the last even
  // piece (40) is in, any odd piece pushed to it would already be here.
  proto::PushFrameDecoder decoder({}, geometry());
  std::set<std::uint32_t> got;
  bool last_even = false;
  while (!last_even) {
    auto room = decoder.PrepareWrite(64 << 10);
    const ssize_t n = ::recv(fd->get(), room.data(), room.size(), 0);
    ASSERT_GT(n, 0) << "the seed stopped sending after pieces " << ::testing::PrintToString(got);
    decoder.Commit(static_cast<std::size_t>(n));
    for (auto next = decoder.Next(); std::holds_alternative<proto::Message>(next);
         next = decoder.Next()) {
      const auto* chunk = std::get_if<proto::Piece>(&std::get<proto::Message>(next));
      if (!chunk) continue;  // the seed's HELLO
      got.insert(chunk->piece);
      const std::uint32_t end = chunk->offset + static_cast<std::uint32_t>(chunk->payload.size());
      if (chunk->piece == pieces - 1 && end == proto::PieceSize(geometry(), chunk->piece)) {
        last_even = true;
      }
    }
    ASSERT_FALSE(std::holds_alternative<std::error_code>(decoder.Next()));
  }
  std::set<std::uint32_t> even;
  for (std::uint32_t p = 0; p < pieces; p += 2) even.insert(p);
  EXPECT_EQ(got, even);
}

TEST_F(PushChannelTest, WrongInfoHashEndsTheChannel) {
  auto sender = StartSender(FanoutKind::kCopy);
  ASSERT_TRUE(sender);
  PushIdentity other = Identity();
  other.info_hash.assign(20, 0x01);
  Sink sink;
  auto r = Receive(sender->port(), sink, {}, other);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.ended; }, 5s));
  EXPECT_NE(sink.end_reason.find("BYE (2)"), std::string::npos) << sink.end_reason;
  EXPECT_TRUE(sink.pieces.empty());
}

// A fake seed: accepts one connection and writes `bytes` after reading the
// HELLO.
class FakeSeed {
 public:
  explicit FakeSeed(std::string bytes) {
    auto l = ListenTcp("127.0.0.1", 0);
    port_ = l->port;
    listener_ = std::move(l->fd);
    thread_ = std::thread([this, bytes = std::move(bytes)] {
      if (!WaitReadable(listener_.get(), 30s)) return;
      const int c = ::accept(listener_.get(), nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      ::recv(c, buf, sizeof buf, 0);
      ::send(c, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      DrainUntilClosed(c, 30s);
      ::close(c);
    });
  }
  ~FakeSeed() { thread_.join(); }
  std::uint16_t port() const { return port_; }

 private:
  std::uint16_t port_ = 0;
  UniqueFd listener_;
  std::thread thread_;
};

TEST_F(PushChannelTest, ReceiverDropsChannelOnBadFrames) {
  proto::Hello hello;
  hello.info_hash = source_.info_hash;
  hello.geometry = geometry();
  hello.bitfield.assign(proto::BitfieldSize(41), 0xff);
  hello.bitfield.back() = 0x80;
  const std::string good_hello = Encode(hello);
  proto::Hello wrong = hello;
  wrong.info_hash.assign(20, 0x77);

  // A PIECE header with index 41 (out of range) and one whose length runs
  // past the piece: written by hand, since the encoder refuses both.
  auto piece_header = [](std::uint32_t index, std::uint32_t offset, std::uint32_t length) {
    std::string h(18, '\0');
    auto put = [&h](std::size_t at, std::uint32_t v) {
      h[at] = static_cast<char>(v >> 24);
      h[at + 1] = static_cast<char>(v >> 16);
      h[at + 2] = static_cast<char>(v >> 8);
      h[at + 3] = static_cast<char>(v);
    };
    put(0, 14 + length);
    h[4] = proto::kPushProtocolVersion;
    h[5] = 3;
    put(6, index);
    put(10, offset);
    put(14, length);
    return h + std::string(length, 'x');
  };
  const struct {
    std::string bytes;
    std::string expect;
  } cases[] = {
      {Encode(wrong), "another info-hash"},
      {good_hello + piece_header(41, 0, 16), "bad frame"},
      {good_hello + piece_header(0, kPieceLength - 8, 16), "bad frame"},
      {good_hello + std::string("\xff\xff\xff\xff", 4), "bad frame"},
      {good_hello + std::string("\0\0\0\x02\x09\x01", 6), "bad frame"},
      {good_hello + Encode(proto::Fetching{3}), "FETCHING"},
  };
  for (const auto& c : cases) {
    FakeSeed seed(c.bytes);
    Sink sink;
    auto r = Receive(seed.port(), sink);
    ASSERT_TRUE(sink.WaitFor([&] { return sink.ended; }, 5s));
    EXPECT_NE(sink.end_reason.find(c.expect), std::string::npos) << sink.end_reason;
    EXPECT_TRUE(sink.pieces.empty());
    r.reset();
  }
}

// A subscriber that says HELLO (holding no piece) and then never reads,
// with a receive buffer far smaller than a piece: what the seed writes to
// it stays unacknowledged.
UniqueFd StuckSubscriber(std::uint16_t port, const PushSource& source, proto::Geometry geometry) {
  auto fd = ConnectTcp("127.0.0.1:" + std::to_string(port), 2000);
  EXPECT_TRUE(fd.ok());
  if (!fd.ok()) return UniqueFd();
  int small = 4096;
  ::setsockopt(fd->get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  proto::Hello hello;
  hello.info_hash = source.info_hash;
  hello.geometry = geometry;
  hello.bitfield.assign(proto::BitfieldSize(geometry.piece_count), 0);
  const std::string h = Encode(hello);
  EXPECT_EQ(::send(fd->get(), h.data(), h.size(), 0), static_cast<ssize_t>(h.size()));
  return std::move(*fd);
}

TEST_F(PushChannelTest, StalledSubscriberIsDroppedAndOthersFinish) {
  // Larger than loopback's socket buffers (4 MiB at most), so the stalled
  // subscriber cannot swallow it all into kernel buffers.
  MakeFile(160 * kPieceLength);
  const std::uint32_t pieces = geometry().piece_count;
  auto sender = StartSender(FanoutKind::kSplice, 500ms);
  ASSERT_TRUE(sender);
  UniqueFd stuck = StuckSubscriber(sender->port(), source_, geometry());
  ASSERT_TRUE(stuck);
  Sink sink;
  auto r = Receive(sender->port(), sink);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= pieces; }, 20s))
      << sink.pieces.size() << " pieces";
  EXPECT_TRUE(WaitUntil(20s, [&] { return sender->stats().dropped > 0; }));
  EXPECT_EQ(sender->stats().dropped, 1u);
  std::lock_guard lock(sink.mu);
  EXPECT_FALSE(sink.corrupt);
}

// The seed's wire gate learns who is subscribed from these addresses: a
// subscriber's address is there while it is subscribed (the receiver
// connects from the address it chose), and gone once it leaves.
TEST_F(PushChannelTest, SubscriberAddressIsHeldWhileSubscribed) {
  PushSenderOptions o;
  o.addresses = std::make_shared<SubscriberAddresses>();
  auto sender = StartSender(FanoutKind::kSplice, 10s, o);
  ASSERT_TRUE(sender);
  EXPECT_FALSE(o.addresses->Contains("127.0.0.5"));
  Sink sink;
  auto r = Receive(sender->port(), sink, {}, {}, "127.0.0.5");
  ASSERT_TRUE(r);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= 41; }, 20s));
  EXPECT_TRUE(o.addresses->Contains("127.0.0.5"));
  EXPECT_TRUE(o.addresses->Contains("::ffff:127.0.0.5"));
  EXPECT_FALSE(o.addresses->Contains("127.0.0.1"));
  r.reset();  // says BYE
  EXPECT_TRUE(WaitUntil(20s, [&] { return !o.addresses->Contains("127.0.0.5"); }));
}

TEST(SubscriberAddressesTest, CountsSubscribersPerAddress) {
  SubscriberAddresses a;
  a.Add("10.0.0.2");
  a.Add("::ffff:10.0.0.2");  // the same host through a dual-stack socket
  a.Remove("10.0.0.2");
  EXPECT_TRUE(a.Contains("10.0.0.2"));
  a.Remove("10.0.0.2");
  EXPECT_FALSE(a.Contains("10.0.0.2"));
  a.Remove("10.0.0.9");  // never added: no effect
  EXPECT_EQ(SubscriberAddresses::Normalize("::ffff:1.2.3.4"), "1.2.3.4");
  EXPECT_EQ(SubscriberAddresses::Normalize("fe80::1"), "fe80::1");
}

TEST_F(PushChannelTest, ConnectingFromAnAddressThatIsNotLocalFails) {
  PushReceiverOptions o;
  o.endpoint = "127.0.0.1:9";
  o.source_address = "192.0.2.1";  // TEST-NET-1: never configured here
  Sink sink;
  auto r = PushReceiver::Start(
      o, Identity(), std::vector<bool>(41, false), [](std::uint32_t, std::vector<char>, bool) {},
      [](const std::string&) {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("bind 192.0.2.1"), std::string::npos) << r.error();
}

// --max-upload-rate on a seed also paces the push channel: 2 receivers x
// 41 pieces (about 5.2 MiB) at 4 MiB/s take at least a second (less only
// by the 100 ms burst), where loopback alone takes a few milliseconds.
TEST_F(PushChannelTest, MaxRatePacesThePushChannel) {
  PushSenderOptions o;
  o.max_rate = 4 << 20;
  auto sender = StartSender(FanoutKind::kSplice, 10s, o);
  ASSERT_TRUE(sender);
  const auto start = std::chrono::steady_clock::now();
  Sink sinks[2];
  std::vector<std::unique_ptr<PushReceiver>> receivers;
  for (auto& sink : sinks) receivers.push_back(Receive(sender->port(), sink));
  for (auto& sink : sinks) {
    ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= 41; }, 20s));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double bytes = 2.0 * static_cast<double>(kFileSize);
  EXPECT_GE(seconds, (bytes - 0.1 * o.max_rate - kPieceLength) / o.max_rate) << seconds << " s";
  EXPECT_LT(seconds, 10.0);
  for (auto& sink : sinks) {
    std::lock_guard lock(sink.mu);
    EXPECT_FALSE(sink.corrupt);
  }
}

// Bytes waiting to be read on a socket.
int Readable(int fd) {
  int n = 0;
  ::ioctl(fd, FIONREAD, &n);
  return n;
}

// With more subscribers than max_in_flight, the seed starts a piece only
// for max_in_flight of them at a time whose bytes are unacknowledged: of
// four that never read, two get piece bytes and two only the seed's HELLO;
// without the limit all four get pieces. A subscriber that acknowledges
// nothing for the stall timeout is dropped, so it cannot hold its slot for
// ever: real receivers beside one get every piece.
TEST_F(PushChannelTest, APacedSeedKeepsAtMostMaxInFlightSubscribersInFlight) {
  // Pieces far larger than what a stuck subscriber's socket takes in (its
  // buffer shrank only after the handshake advertised a window).
  MakeFile(12 << 20, 1 << 20);
  constexpr int kHelloAtMost = 1024;  // the seed's HELLO; piece frames fill the 4 KiB buffer
  auto fed_of_four_stuck = [&](std::size_t max_in_flight) {
    PushSenderOptions o;
    o.max_in_flight = max_in_flight;
    auto sender = StartSender(FanoutKind::kSplice, 60s, o);
    if (!sender) return -1;
    std::vector<UniqueFd> stuck;
    for (int i = 0; i < 4; ++i)
      stuck.push_back(StuckSubscriber(sender->port(), source_, geometry()));
    auto fed = [&] {
      int n = 0;
      for (auto& fd : stuck) n += Readable(fd.get()) > kHelloAtMost;
      return n;
    };
    EXPECT_TRUE(WaitUntil(20s, [&] {
      return sender->stats().subscribers == 4 && fed() >= std::min<int>(4, max_in_flight ?: 4);
    }));
    // Given time to feed more, it does not (it polls every 5 ms).
    WaitUntil(1s, [&] { return fed() > static_cast<int>(max_in_flight ?: 4); });
    return fed();
  };
  EXPECT_EQ(fed_of_four_stuck(2), 2);
  EXPECT_EQ(fed_of_four_stuck(0), 4) << "without the limit, every subscriber gets pieces";

  PushSenderOptions o;
  o.max_in_flight = 1;
  auto sender = StartSender(FanoutKind::kSplice, 500ms, o);
  ASSERT_TRUE(sender);
  UniqueFd stuck = StuckSubscriber(sender->port(), source_, geometry());
  ASSERT_TRUE(WaitUntil(20s, [&] { return sender->stats().fanout_targets >= 1; }));
  Sink sinks[2];
  std::vector<std::unique_ptr<PushReceiver>> receivers;
  for (auto& sink : sinks) receivers.push_back(Receive(sender->port(), sink));
  for (auto& sink : sinks) {
    ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.size() >= geometry().piece_count; }, 20s))
        << sink.pieces.size() << " pieces";
    std::lock_guard lock(sink.mu);
    EXPECT_FALSE(sink.corrupt);
  }
  EXPECT_EQ(sender->stats().dropped, 1u);
}

}  // namespace
}  // namespace swarmcast::push
