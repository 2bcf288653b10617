// A chain seed (PushSenderOptions::chain) over loopback, with raw sockets
// as subscribers: it pushes to the first subscriber alone, links each
// later one to the one before it with PEERS once that one forwards, and
// relinks the chain when a link leaves or falls behind.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "node/push/forward_group.h"
#include "node/push/push_sender.h"
#include "node/push/tcp.h"
#include "tests/common/wait_until.h"
#include "tests/push/push_channel_fixture.h"

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;
using swarmcast::testing::WaitUntil;

// One raw subscriber: what it was pushed, and the PEERS it was sent.
class RawSubscriber {
 public:
  RawSubscriber(std::uint16_t seed_port, const proto::Geometry& g,
                const std::vector<std::uint8_t>& info_hash, std::uint16_t listen_port)
      : geometry_(g), decoder_({}, g) {
    auto fd = ConnectTcp("127.0.0.1:" + std::to_string(seed_port), 2000);
    EXPECT_TRUE(fd.ok());
    if (!fd.ok()) return;
    fd_ = std::move(*fd);
    proto::Hello hello;
    hello.info_hash = info_hash;
    hello.geometry = g;
    hello.bitfield.assign(proto::BitfieldSize(g.piece_count), 0);
    std::string out = Encode(hello);
    if (listen_port != 0) out += Encode(proto::Listen{listen_port});
    EXPECT_EQ(::send(fd_.get(), out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  }

  // Reads all that has arrived, without waiting. False once the seed
  // closed the connection or sent a bad frame.
  bool Poll() {
    for (;;) {
      auto room = decoder_.PrepareWrite(64 << 10);
      const ssize_t n = ::recv(fd_.get(), room.data(), room.size(), MSG_DONTWAIT);
      if (n == 0) return false;
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
      decoder_.Commit(static_cast<std::size_t>(n));
      if (!Decode()) return false;
    }
  }
  void Close() { fd_.reset(); }
  // Tells the seed it verified `piece`.
  void SendHave(std::uint32_t piece) {
    const std::string out = Encode(proto::Have{piece});
    EXPECT_EQ(::send(fd_.get(), out.data(), out.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(out.size()));
  }

  const std::set<std::uint32_t>& pieces() const { return pieces_; }
  // The port lists of every PEERS frame, in order.
  const std::vector<std::vector<std::uint16_t>>& peers() const { return peers_; }
  // The text of every BYE the seed sent.
  const std::vector<std::string>& byes() const { return byes_; }

 private:
  bool Decode() {
    for (auto next = decoder_.Next(); std::holds_alternative<proto::Message>(next);
         next = decoder_.Next()) {
      auto& m = std::get<proto::Message>(next);
      if (const auto* chunk = std::get_if<proto::Piece>(&m)) {
        const auto end = chunk->offset + static_cast<std::uint32_t>(chunk->payload.size());
        if (end == proto::PieceSize(geometry_, chunk->piece)) pieces_.insert(chunk->piece);
      } else if (const auto* peers = std::get_if<proto::Peers>(&m)) {
        std::vector<std::uint16_t> ports;
        for (const auto& e : peers->peers) ports.push_back(e.port);
        peers_.push_back(ports);
      } else if (const auto* bye = std::get_if<proto::Bye>(&m)) {
        byes_.push_back(bye->text);
      }
    }
    return !std::holds_alternative<std::error_code>(decoder_.Next());
  }

  proto::Geometry geometry_;
  proto::PushFrameDecoder decoder_;
  UniqueFd fd_;
  std::set<std::uint32_t> pieces_;
  std::vector<std::vector<std::uint16_t>> peers_;
  std::vector<std::string> byes_;
};

// Subscribes one raw subscriber after another (a chain's order is theirs:
// each waits until the seed counts the one before), listening on
// ports[i] (0: does not forward).
std::vector<std::unique_ptr<RawSubscriber>> SubscribeInOrder(
    PushSender& sender, const proto::Geometry& g, const std::vector<std::uint8_t>& info_hash,
    const std::vector<std::uint16_t>& ports) {
  std::vector<std::unique_ptr<RawSubscriber>> subs;
  for (std::uint16_t port : ports) {
    subs.push_back(std::make_unique<RawSubscriber>(sender.port(), g, info_hash, port));
    const std::size_t n = subs.size();
    EXPECT_TRUE(WaitUntil(10s, [&] { return sender.stats().subscribers == n; }));
  }
  return subs;
}

TEST_F(PushChannelTest, AChainSeedPushesToTheFirstAndLinksEachToTheOneBefore) {
  PushSenderOptions o;
  o.chain = true;
  auto sender = StartSender(FanoutKind::kSplice, 10s, o);
  ASSERT_TRUE(sender);
  const std::uint32_t pieces = geometry().piece_count;  // 41
  const auto& hash = source_.info_hash;
  // C does not forward.
  auto subs = SubscribeInOrder(*sender, geometry(), hash, {7001, 7002, 0});
  ASSERT_EQ(sender->stats().subscribers, 3u);
  RawSubscriber &a = *subs[0], &b = *subs[1], &c = *subs[2];
  auto poll_all = [&] { return a.Poll() && b.Poll() && c.Poll(); };

  // The head gets every piece; B is told A, C is told B.
  ASSERT_TRUE(WaitUntil(20s,
                        [&] {
                          return poll_all() && a.pieces().size() == pieces && !b.peers().empty() &&
                                 !c.peers().empty();
                        }))
      << "head " << a.pieces().size() << " pieces, B " << b.peers().size() << " PEERS, C "
      << c.peers().size();
  EXPECT_EQ(b.peers().back(), std::vector<std::uint16_t>{7001});
  EXPECT_EQ(c.peers().back(), std::vector<std::uint16_t>{7002});
  EXPECT_TRUE(a.peers().empty() || a.peers().back().empty())
      << "the head takes from the seed alone: the second holds nothing it lacks";
  EXPECT_TRUE(b.pieces().empty()) << "the seed pushed past the head";
  EXPECT_TRUE(c.pieces().empty()) << "the seed pushed past the head";
  EXPECT_EQ(sender->stats().forwarders, 2u) << "links with a source: B and C";

  // The head leaves: B becomes it (told no one: C does not forward; pushed
  // everything), and C keeps B, so it hears nothing new.
  const std::size_t c_peers = c.peers().size();
  a.Close();
  ASSERT_TRUE(WaitUntil(
      20s,
      [&] { return b.Poll() && c.Poll() && b.pieces().size() == pieces && b.peers().size() >= 2; }))
      << "B has " << b.pieces().size() << " pieces";
  EXPECT_TRUE(b.peers().back().empty());
  EXPECT_TRUE(c.pieces().empty());
  EXPECT_EQ(c.peers().size(), c_peers);
}

// What a seed does when other traffic took its uplink from the chain
// (node/push/chain_share.h): every link, and every later subscriber, is
// told why and let go, so that it fetches over the wire.
TEST_F(PushChannelTest, AnEndedChainSaysWhyToEveryLinkAndToLaterSubscribers) {
  PushSenderOptions o;
  o.chain = true;
  auto sender = StartSender(FanoutKind::kSplice, 10s, o);
  ASSERT_TRUE(sender);
  const auto& hash = source_.info_hash;
  auto subs = SubscribeInOrder(*sender, geometry(), hash, {7001, 7002});
  RawSubscriber &a = *subs[0], &b = *subs[1];
  ASSERT_TRUE(WaitUntil(10s, [&] { return a.Poll() && b.Poll() && !b.peers().empty(); }));

  const std::string why = "the chain had 5% of the uplink of eth0";
  sender->EndChain(why);
  // Each connection ends; the head's may end mid-piece, without a BYE.
  bool a_open = true, b_open = true;
  ASSERT_TRUE(WaitUntil(10s, [&] {
    a_open = a_open && a.Poll();
    b_open = b_open && b.Poll();
    return !a_open && !b_open;
  }));
  EXPECT_EQ(b.byes(), std::vector<std::string>{why});
  EXPECT_LE(a.byes().size(), 1u);
  EXPECT_TRUE(WaitUntil(10s, [&] { return sender->stats().subscribers == 0; }));

  RawSubscriber late(sender->port(), geometry(), hash, 7003);
  bool late_open = true;
  ASSERT_TRUE(WaitUntil(10s, [&] { return !(late_open = late_open && late.Poll()); }));
  EXPECT_EQ(late.byes(), std::vector<std::string>{why});
  EXPECT_TRUE(late.pieces().empty());
  EXPECT_EQ(sender->stats().subscribers, 0u);
}

// ChainShare judges a window the chain got nothing in only while the
// chain wanted the uplink: while the seed's head lacked pieces.
TEST_F(PushChannelTest, AChainSeedSaysWhetherItsHeadLacksPieces) {
  PushSenderOptions o;
  o.chain = true;
  auto sender = StartSender(FanoutKind::kSplice, 10s, o);
  ASSERT_TRUE(sender);
  EXPECT_FALSE(sender->stats().chain_head_lacks) << "no head yet";
  auto subs = SubscribeInOrder(*sender, geometry(), source_.info_hash, {7001});
  RawSubscriber& a = *subs[0];
  // Not read yet: the 2.6 MB do not fit in loopback's first buffers.
  EXPECT_TRUE(WaitUntil(10s, [&] { return sender->stats().chain_head_lacks; }));
  ASSERT_TRUE(
      WaitUntil(10s, [&] { return a.Poll() && a.pieces().size() == geometry().piece_count; }));
  EXPECT_TRUE(WaitUntil(10s, [&] { return !sender->stats().chain_head_lacks; }));
}

TEST_F(PushChannelTest, AChainSeedMakesALinkThatFallsBehindALeaf) {
  PushSenderOptions o;
  o.chain = true;
  // Short windows, and any gain of the one before against none: the
  // fixture's file has only 41 pieces.
  o.chain_review = {
      .window = 100ms, .windows_to_move = 2, .min_sample = 2, .min_lag = 4, .probe_head = false};
  auto sender = StartSender(FanoutKind::kSplice, 10s, o);
  ASSERT_TRUE(sender);
  const std::uint32_t pieces = geometry().piece_count;
  const auto& hash = source_.info_hash;
  auto subs = SubscribeInOrder(*sender, geometry(), hash, {7001, 7002, 7003});
  ASSERT_EQ(sender->stats().subscribers, 3u);
  RawSubscriber &a = *subs[0], &b = *subs[1], &c = *subs[2];
  auto poll_all = [&] { return a.Poll() && b.Poll() && c.Poll(); };
  ASSERT_TRUE(
      WaitUntil(10s, [&] { return poll_all() && !b.peers().empty() && !c.peers().empty(); }));
  ASSERT_EQ(b.peers().back(), std::vector<std::uint16_t>{7001});
  ASSERT_EQ(c.peers().back(), std::vector<std::uint16_t>{7002});

  // The head verifies a piece every 20 ms; B, linked to it, none.
  std::uint32_t next = 0;
  const bool relinked = WaitUntil(10s, [&] {
    if (next < pieces) a.SendHave(next++);
    return poll_all() && c.peers().back() == std::vector<std::uint16_t>{7001};
  });
  ASSERT_TRUE(relinked) << "the head reported " << next << " pieces; C was told "
                        << c.peers().size() << " PEERS";
  // B is a leaf of the line's last link, C; C takes from the head. The
  // head's PEERS may come later than B's: it waits behind the piece the
  // seed is pushing to the head.
  ASSERT_TRUE(WaitUntil(
      10s, [&] { return poll_all() && b.peers().back() == std::vector<std::uint16_t>{7003}; }));
  EXPECT_TRUE(a.peers().empty()) << "the head takes from the seed alone";
  EXPECT_EQ(sender->stats().subscribers, 3u) << "a slow link is moved, not dropped";
}

// The probe moves the first head to the end of the line. The second
// already takes from it, and as the new head goes on taking from it what
// it lacks, so only the old head is told anything new: the seed now
// pushes to the new head, the third still takes from it, and the old
// head, which took from no one as head, takes from the third, the line's
// last link.
TEST_F(PushChannelTest, AChainSeedProbesItsFirstHeadByMovingItToTheEndOfTheLine) {
  PushSenderOptions o;
  o.chain = true;
  o.chain_review = {.window = 100ms,
                    .windows_to_move = 2,
                    .min_sample = 2,
                    .min_lag = 4,
                    .probe_windows = 3,
                    .max_leaves = 0,  // it lags the line's last link: not slow
                    .probe_head = true};
  auto sender = StartSender(FanoutKind::kSplice, 10s, o);
  ASSERT_TRUE(sender);
  const std::uint32_t pieces = geometry().piece_count;
  const auto& hash = source_.info_hash;
  auto subs = SubscribeInOrder(*sender, geometry(), hash, {7001, 7002, 7003});
  ASSERT_EQ(sender->stats().subscribers, 3u);
  RawSubscriber &a = *subs[0], &b = *subs[1], &c = *subs[2];
  auto poll_all = [&] { return a.Poll() && b.Poll() && c.Poll(); };
  ASSERT_TRUE(
      WaitUntil(10s, [&] { return poll_all() && !b.peers().empty() && !c.peers().empty(); }));
  ASSERT_TRUE(a.peers().empty()) << "the head takes from the seed alone";
  ASSERT_EQ(b.peers().back(), std::vector<std::uint16_t>{7001});
  ASSERT_EQ(c.peers().back(), std::vector<std::uint16_t>{7002});
  ASSERT_TRUE(b.pieces().empty());

  // The head verifies a piece every 20 ms, B and C keep up (one behind),
  // so only the probe moves anyone.
  std::uint32_t next = 0;
  const bool moved = WaitUntil(10s, [&] {
    if (next < pieces) {
      a.SendHave(next);
      if (next > 0) b.SendHave(next - 1);
      if (next > 1) c.SendHave(next - 2);
      ++next;
    }
    return poll_all() && !a.peers().empty() && a.peers().back() == std::vector<std::uint16_t>{7003};
  });
  ASSERT_TRUE(moved) << "the head reported " << next << " pieces; A was told " << a.peers().size()
                     << " PEERS";
  // The seed pushes to B now: every piece it did not report (B reported
  // pieces 0 to next - 2; a few of those may have been pushed before the
  // seed read the HAVE).
  auto b_holds_all = [&] {
    for (std::uint32_t p = next - 1; p < pieces; ++p) {
      if (!b.pieces().contains(p)) return false;
    }
    return true;
  };
  EXPECT_TRUE(WaitUntil(10s, [&] { return poll_all() && b_holds_all(); }))
      << "B was pushed " << b.pieces().size() << " pieces and reported " << next - 1;
  EXPECT_EQ(a.peers().size(), 1u) << "A takes from C, and took from no one before";
  EXPECT_EQ(b.peers().size(), 1u) << "B already took from A";
  EXPECT_EQ(c.peers().size(), 1u) << "C already took from B";
  EXPECT_TRUE(c.pieces().empty());
}

// A chain link the seed relinks to a forwarder it took from before (the
// one between them became a leaf) subscribes to it again: a channel that
// stopped is no reason to stay away in a chain.
TEST_F(PushChannelTest, AChainLinkRelinkedToAnEarlierForwarderSubscribesAgain) {
  // Two fake forwarders that only count the connections they accept.
  auto a = ListenTcp("127.0.0.1", 0);
  auto b = ListenTcp("127.0.0.1", 0);
  ASSERT_TRUE(a.ok() && b.ok());
  auto accepted = [](const TcpListener& l, std::vector<UniqueFd>& held) {
    for (int fd; (fd = ::accept4(l.fd.get(), nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
      held.emplace_back(fd);
    }
    return held.size();
  };
  std::vector<UniqueFd> at_a, at_b;
  const std::string ea = "127.0.0.1:" + std::to_string(a->port);
  const std::string eb = "127.0.0.1:" + std::to_string(b->port);

  ForwardGroupOptions o;
  o.content_root = scratch_ / "link";
  o.chain = true;
  ForwardGroup::Hooks h;
  h.post = [](std::function<void()> f) { f(); };
  h.add_piece = [](std::uint32_t, std::vector<char>) {};
  ForwardGroup group(o, Identity(), std::vector<bool>(geometry().piece_count), h);
  group.OnPeers({ea});
  ASSERT_TRUE(WaitUntil(10s, [&] { return accepted(*a, at_a) == 1; }));
  group.OnPeers({eb});  // relinked: the channel to A stops
  ASSERT_TRUE(WaitUntil(10s, [&] { return accepted(*b, at_b) == 1; }));
  group.OnPeers({ea});  // and back
  EXPECT_TRUE(WaitUntil(10s, [&] { return accepted(*a, at_a) == 2; }))
      << "connections to A: " << at_a.size();
  EXPECT_EQ(group.stats().peer_channels, 3u);
  group.Stop();
}

}  // namespace
}  // namespace swarmcast::push
