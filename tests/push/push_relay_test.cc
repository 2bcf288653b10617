// PushSender::Relay: a chain link passes each chunk on as it lands, before
// it holds the piece, and the piece is not sent twice once it does.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <vector>

#include "node/push/chain_chunk.h"
#include "tests/push/push_channel_fixture.h"

namespace swarmcast::push {
namespace {

class PushRelayTest : public PushChannelTest {
 protected:
  // A forwarder holding no piece yet, cutting pieces into relay chunks.
  std::unique_ptr<PushSender> StartForwarder() {
    PushSenderOptions o;
    o.forwarder = true;
    o.anchor_file = 0;
    o.max_chunk = kMinChainChunk;
    return StartSender(FanoutKind::kSplice, 10s, o);
  }

  // Chunk `k` (of kMinChainChunk) of `piece`, as a receiver decoded it.
  proto::Piece Chunk(std::uint32_t piece, std::uint32_t k) const {
    const std::size_t at = std::size_t{piece} * kPieceLength + std::size_t{k} * kMinChainChunk;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(content_.data()) + at;
    return proto::Piece{piece, k * kMinChainChunk,
                        std::span<const std::uint8_t>(bytes, kMinChainChunk), true};
  }

  // A receiver subscribed to `sender`, holding `have` (no piece if empty).
  std::unique_ptr<PushReceiver> Subscribe(PushSender& sender, Sink& sink,
                                          std::vector<bool> have = {}) {
    auto r = Receive(sender.port(), sink, std::move(have));
    EXPECT_TRUE(WaitUntil(10s, [&] { return sender.stats().subscribers == 1; }));
    return r;
  }

  // Relays every chunk of `piece`, then holds `next` (which goes out by
  // the file) and waits for it: whatever was to come of `piece` came
  // before, on the same socket.
  void RelayThenHold(PushSender& sender, Sink& sink, std::uint32_t piece, std::uint32_t next,
                     std::string from = {}) {
    for (std::uint32_t k = 0; k < kChunksAPiece; ++k) sender.Relay(Chunk(piece, k), from);
    sender.SourceHas(next);
    ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.contains(next); }, 10s)) << sink.end_reason;
  }

  // All of `piece` in one chunk, as a receiver decoded it.
  proto::Piece WholePiece(std::uint32_t piece) const {
    const auto* bytes =
        reinterpret_cast<const std::uint8_t*>(content_.data()) + std::size_t{piece} * kPieceLength;
    return proto::Piece{piece, 0, std::span<const std::uint8_t>(bytes, kPieceLength), true};
  }

  // Nothing of `piece` was relayed; once held, it goes by the file, as
  // without Relay().
  void ExpectByTheFileOnceHeld(PushSender& sender, Sink& sink, std::uint32_t piece) {
    EXPECT_EQ(sender.stats().relayed_bytes, 0u);
    {
      std::lock_guard lock(sink.mu);
      EXPECT_FALSE(sink.pieces.contains(piece));
    }
    sender.SourceHas(piece);
    ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.contains(piece); }, 10s)) << sink.end_reason;
  }

  static constexpr std::uint32_t kChunksAPiece = kPieceLength / kMinChainChunk;
};

TEST_F(PushRelayTest, AChunkGoesOnBeforeTheForwarderHoldsItsPiece) {
  auto sender = StartForwarder();
  ASSERT_TRUE(sender);
  Sink sink;
  auto r = Subscribe(*sender, sink);
  ASSERT_TRUE(r);
  for (std::uint32_t k = 0; k < kChunksAPiece; ++k) sender->Relay(Chunk(3, k));
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.contains(3); }, 10s)) << sink.end_reason;
  EXPECT_EQ(sender->stats().relayed_bytes, kPieceLength);
  // Held now: not sent again. Piece 4 goes out by the scan, which would
  // have reached 3 first.
  sender->SourceHas(3);
  sender->SourceHas(4);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.contains(4); }, 10s)) << sink.end_reason;
  std::lock_guard lock(sink.mu);
  EXPECT_EQ(sink.pieces.count(3), 1u);
  EXPECT_FALSE(sink.corrupt);
  EXPECT_FALSE(sink.ended) << sink.end_reason;
}

TEST_F(PushRelayTest, WhatCameInPartGetsTheRestFromTheFileNoByteTwice) {
  auto sender = StartForwarder();
  ASSERT_TRUE(sender);
  Sink sink;
  auto r = Subscribe(*sender, sink);
  ASSERT_TRUE(r);
  // The upstream's channel broke after two chunks; a second channel's
  // copy repeats one of them.
  sender->Relay(Chunk(5, 0));
  sender->Relay(Chunk(5, 2));
  sender->Relay(Chunk(5, 2));
  ASSERT_TRUE(WaitUntil(10s, [&] { return sender->stats().relayed_bytes == 2 * kMinChainChunk; }));
  sender->SourceHas(5);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.contains(5); }, 10s)) << sink.end_reason;
  sender->SourceHas(6);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.contains(6); }, 10s)) << sink.end_reason;
  std::lock_guard lock(sink.mu);
  EXPECT_EQ(sink.pieces.count(5), 1u);
  EXPECT_FALSE(sink.corrupt);
  EXPECT_FALSE(sink.ended) << "a byte twice ends the channel: " << sink.end_reason;
}

TEST_F(PushRelayTest, NothingGoesBackToTheNodeItCameFrom) {
  auto sender = StartForwarder();
  ASSERT_TRUE(sender);
  Sink sink;
  auto r = Subscribe(*sender, sink);
  ASSERT_TRUE(r);
  // The subscriber is on 127.0.0.1, where the chunks came from.
  RelayThenHold(*sender, sink, 9, 10, "127.0.0.1");
  ExpectByTheFileOnceHeld(*sender, sink, 9);
}

TEST_F(PushRelayTest, ASubscriberAheadOfTheForwarderGetsNothingRelayed) {
  // A chain's head takes from the old head as a second source: it has
  // pieces the old head lacks, and gets from it only what it lacks once
  // the old head holds it.
  auto sender = StartForwarder();
  ASSERT_TRUE(sender);
  Sink sink;
  std::vector<bool> have(geometry().piece_count, false);
  have[20] = true;
  auto r = Subscribe(*sender, sink, have);
  ASSERT_TRUE(r);
  RelayThenHold(*sender, sink, 11, 12);
  ExpectByTheFileOnceHeld(*sender, sink, 11);
}

TEST_F(PushRelayTest, ASubscriberHoldingThePieceGetsNothingRelayed) {
  auto sender = StartForwarder();
  ASSERT_TRUE(sender);
  Sink sink;
  std::vector<bool> have(geometry().piece_count, false);
  have[7] = true;
  auto r = Subscribe(*sender, sink, have);
  ASSERT_TRUE(r);
  RelayThenHold(*sender, sink, 7, 8);
  EXPECT_EQ(sender->stats().relayed_bytes, 0u);
  std::lock_guard lock(sink.mu);
  EXPECT_FALSE(sink.pieces.contains(7));
}

TEST_F(PushRelayTest, AWholePieceInOneChunkGoesByTheFileOnceHeld) {
  auto sender = StartForwarder();
  ASSERT_TRUE(sender);
  Sink sink;
  auto r = Subscribe(*sender, sink);
  ASSERT_TRUE(r);
  sender->Relay(WholePiece(13));
  sender->SourceHas(14);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.contains(14); }, 10s)) << sink.end_reason;
  ExpectByTheFileOnceHeld(*sender, sink, 13);
}

TEST_F(PushRelayTest, TheForwarderCutsItsFileAsItsSeedCut) {
  // As a link: no cut of its own; it learns the seed's from a relayed
  // chunk that starts a piece.
  PushSenderOptions o;
  o.forwarder = true;
  o.anchor_file = 0;
  auto sender = StartSender(FanoutKind::kSplice, 10s, o);
  ASSERT_TRUE(sender);
  Sink sink;
  std::mutex lengths_mu;
  std::map<std::uint32_t, std::vector<std::size_t>> lengths;  // chunk lengths by piece
  PushReceiverOptions ro;
  ro.on_chunk = [&](const proto::Piece& c) {
    std::lock_guard lock(lengths_mu);
    lengths[c.piece].push_back(c.payload.size());
  };
  auto r = Receive(sender->port(), sink, {}, {}, {}, ro);
  ASSERT_TRUE(r);
  ASSERT_TRUE(WaitUntil(10s, [&] { return sender->stats().subscribers == 1; }));
  sender->SourceHas(1);  // before: as max_chunk allows
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.contains(1); }, 10s)) << sink.end_reason;
  RelayThenHold(*sender, sink, 2, 3);  // after: as the relayed chunks
  // A whole piece: whole again.
  sender->Relay(WholePiece(4));
  sender->SourceHas(5);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.pieces.contains(5); }, 10s)) << sink.end_reason;
  std::lock_guard lock(lengths_mu);
  EXPECT_EQ(lengths[1], std::vector<std::size_t>{kPieceLength});
  EXPECT_EQ(lengths[3], std::vector<std::size_t>(kChunksAPiece, kMinChainChunk));
  EXPECT_EQ(lengths[5], std::vector<std::size_t>{kPieceLength});
}

}  // namespace
}  // namespace swarmcast::push
