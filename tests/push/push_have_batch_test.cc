// A receiver with PushReceiverOptions::have_batch sends its first HAVE at
// once, then holds its HAVEs until that many wait or the first has waited
// have_batch_delay, and sends them at once with any other frame. Checked from the seed's side of a
// real loopback connection: what arrives, and when.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "node/push/push_receiver.h"
#include "node/push/tcp.h"
#include "tests/push/push_channel_fixture.h"

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The seed's end: accepts the receiver, answers its HELLO, and decodes
// what the receiver sends after it.
class SeedEnd {
 public:
  SeedEnd(const PushSource& source, const proto::Geometry& g) : decoder_({}, g) {
    auto l = ListenTcp("127.0.0.1", 0);
    EXPECT_TRUE(l) << (l ? "" : l.error());
    if (!l) return;
    port_ = l->port;
    listener_ = std::move(l->fd);
    hello_.info_hash = source.info_hash;
    hello_.geometry = g;
    hello_.bitfield.assign(proto::BitfieldSize(g.piece_count), 0);
  }
  std::uint16_t port() const { return port_; }

  // Accepts the receiver's connection, reads its HELLO, says HELLO back.
  bool Accept() {
    if (!WaitReadable(listener_.get(), 5s)) return false;
    fd_ = UniqueFd(::accept(listener_.get(), nullptr, nullptr));
    if (!fd_) return false;
    const std::string h = Encode(hello_);
    if (::send(fd_.get(), h.data(), h.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(h.size())) {
      return false;
    }
    for (auto deadline = Clock::now() + 5s; !hello_seen_ && Clock::now() < deadline;) Read(100ms);
    return hello_seen_;
  }

  // The HAVE and FETCHING pieces (FETCHING as piece + 1000) that arrive:
  // waits for the first at most `wait`, then 50 ms for the rest.
  std::vector<std::uint32_t> Read(std::chrono::milliseconds wait) {
    std::vector<std::uint32_t> got;
    for (auto deadline = Clock::now() + wait; Clock::now() < deadline;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (!WaitReadable(fd_.get(), left)) break;
      auto room = decoder_.PrepareWrite(64 << 10);
      const ssize_t n = ::recv(fd_.get(), room.data(), room.size(), MSG_DONTWAIT);
      if (n <= 0) break;
      decoder_.Commit(static_cast<std::size_t>(n));
      for (auto next = decoder_.Next(); std::holds_alternative<proto::Message>(next);
           next = decoder_.Next()) {
        const auto& m = std::get<proto::Message>(next);
        if (std::holds_alternative<proto::Hello>(m)) hello_seen_ = true;
        if (const auto* have = std::get_if<proto::Have>(&m)) got.push_back(have->piece);
        if (const auto* f = std::get_if<proto::Fetching>(&m)) got.push_back(f->piece + 1000);
      }
      if (!got.empty()) deadline = std::min(deadline, Clock::now() + 50ms);
    }
    return got;
  }

 private:
  proto::PushFrameDecoder decoder_;
  proto::Hello hello_;
  std::uint16_t port_ = 0;
  UniqueFd listener_;
  UniqueFd fd_;
  bool hello_seen_ = false;
};

class PushHaveBatchTest : public PushChannelTest {
 protected:
  // Subscribed, and the first HAVE (piece 40, the last) seen: it goes at once.
  std::unique_ptr<PushReceiver> Subscribe(SeedEnd& seed, std::uint32_t batch,
                                          std::chrono::milliseconds delay) {
    PushReceiverOptions o;
    o.have_batch = batch;
    o.have_batch_delay = delay;
    auto r = Receive(seed.port(), sink_, {}, {}, {}, o);
    EXPECT_TRUE(seed.Accept());
    if (r) {
      r->NotifyHave(40);
      EXPECT_EQ(seed.Read(5s), std::vector<std::uint32_t>{40});
    }
    return r;
  }
  Sink sink_;
};

TEST_F(PushHaveBatchTest, TheFirstHaveGoesAtOnce) {
  SeedEnd seed(source_, geometry());
  PushReceiverOptions o;
  o.have_batch = 4;
  o.have_batch_delay = 60s;
  auto r = Receive(seed.port(), sink_, {}, {}, {}, o);
  ASSERT_TRUE(r);
  ASSERT_TRUE(seed.Accept());
  r->NotifyHave(3);
  EXPECT_EQ(seed.Read(5s), std::vector<std::uint32_t>{3});
  r->NotifyHave(4);
  EXPECT_TRUE(seed.Read(300ms).empty()) << "the second waits for a batch";
}

TEST_F(PushHaveBatchTest, HavesWaitForABatch) {
  SeedEnd seed(source_, geometry());
  auto r = Subscribe(seed, 4, 60s);
  ASSERT_TRUE(r);
  for (std::uint32_t p : {0u, 1u, 2u}) r->NotifyHave(p);
  EXPECT_TRUE(seed.Read(300ms).empty()) << "three of a batch of four";
  r->NotifyHave(3);
  EXPECT_EQ(seed.Read(5s), (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

TEST_F(PushHaveBatchTest, AnotherFrameTakesTheWaitingHavesAlong) {
  SeedEnd seed(source_, geometry());
  auto r = Subscribe(seed, 4, 60s);
  ASSERT_TRUE(r);
  r->NotifyHave(5);
  r->NotifyFetching(9);
  EXPECT_EQ(seed.Read(5s), (std::vector<std::uint32_t>{5, 1009}));
}

TEST_F(PushHaveBatchTest, AHaveWaitsNoLongerThanTheDelay) {
  SeedEnd seed(source_, geometry());
  auto r = Subscribe(seed, 4, 200ms);
  ASSERT_TRUE(r);
  const auto start = Clock::now();
  r->NotifyHave(7);
  EXPECT_EQ(seed.Read(5s), std::vector<std::uint32_t>{7});
  EXPECT_GE(Clock::now() - start, 200ms);
}

TEST_F(PushHaveBatchTest, WithoutABatchEachHaveGoesAtOnce) {
  SeedEnd seed(source_, geometry());
  auto r = Subscribe(seed, 1, 60s);
  ASSERT_TRUE(r);
  r->NotifyHave(2);
  EXPECT_EQ(seed.Read(5s), std::vector<std::uint32_t>{2});
}

}  // namespace
}  // namespace swarmcast::push
