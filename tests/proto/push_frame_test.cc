#include "proto/push_frame.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <list>
#include <map>
#include <sstream>
#include <string>

namespace swarmcast::proto {
namespace {

using Bytes = std::vector<std::uint8_t>;

// 10 pieces of 16 KiB; the last one holds 150000 - 9 * 16384 = 2544 bytes.
constexpr Geometry kGeo{10, 16384, 150000};
constexpr std::uint32_t kLastPieceSize = 2544;

Bytes FromString(std::string_view s) { return Bytes(s.begin(), s.end()); }

// Big-endian builder for hand-made (often invalid) frames.
struct Raw {
  Bytes b;
  Raw& U8(std::uint8_t v) {
    b.push_back(v);
    return *this;
  }
  Raw& U16(std::uint16_t v) { return U8(v >> 8).U8(v & 0xFF); }
  Raw& U32(std::uint32_t v) { return U16(v >> 16).U16(v & 0xFFFF); }
  Raw& U64(std::uint64_t v) { return U32(v >> 32).U32(v & 0xFFFFFFFF); }
  Raw& Append(const Bytes& more) {
    b.insert(b.end(), more.begin(), more.end());
    return *this;
  }
  Raw& Fill(std::size_t n, std::uint8_t v) {
    b.insert(b.end(), n, v);
    return *this;
  }
};

// A frame with a correct length field around `body`.
Bytes Frame(std::uint8_t type, const Bytes& body, std::uint8_t version = kPushProtocolVersion) {
  return Raw{}.U32(static_cast<std::uint32_t>(body.size() + 2)).U8(version).U8(type).Append(body).b;
}

Bytes PieceFrame(std::uint32_t piece, std::uint32_t offset, std::uint32_t length,
                 std::size_t payload_size) {
  return Frame(3, Raw{}.U32(piece).U32(offset).U32(length).Fill(payload_size, 0xAB).b);
}

Hello MakeHello(HashKind kind = HashKind::kSha1, Geometry g = kGeo) {
  Hello h;
  h.hash_kind = kind;
  h.info_hash.resize(InfoHashSize(kind));
  for (std::size_t i = 0; i < h.info_hash.size(); ++i) h.info_hash[i] = 0xA0 + i;
  std::memcpy(h.peer_id.data(), "-SC0001-abcdefghijkl", kPeerIdSize);
  h.geometry = g;
  h.bitfield.assign(BitfieldSize(g.piece_count), 0);
  h.bitfield[0] |= 0x80;  // piece 0
  const std::uint32_t last = g.piece_count - 1;
  h.bitfield[last / 8] |= 0x80 >> (last % 8);
  return h;
}

Bytes Encode(const Message& m, const Geometry* g = nullptr) {
  Bytes out(EncodedSize(m));
  EncodeResult r = EncodeMessage(m, out, g);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  if (r.ok()) EXPECT_EQ(*r, out.size());
  return out;
}

// The encoder's error for `m` with a buffer of `room` bytes (default: the
// exact frame size).
std::error_code EncodeError(const Message& m, const Geometry* g = nullptr,
                            std::size_t room = std::numeric_limits<std::size_t>::max()) {
  Bytes out(std::min(room, EncodedSize(m)));
  EncodeResult r = EncodeMessage(m, out, g);
  return r.ok() ? std::error_code{} : r.error();
}

// Decoder output with PIECE payloads copied out, since a payload span only
// lives until the decoder's next call. Move it, never copy it.
struct Outcome {
  std::vector<Message> messages;
  std::list<Bytes> payloads;
  std::error_code error;
};

void Drain(PushFrameDecoder& d, Outcome& o) {
  for (;;) {
    DecodeResult r = d.Next();
    if (std::holds_alternative<NeedMore>(r)) return;
    if (auto* ec = std::get_if<std::error_code>(&r)) {
      o.error = *ec;
      return;
    }
    Message m = std::get<Message>(std::move(r));
    if (auto* p = std::get_if<Piece>(&m)) {
      o.payloads.emplace_back(p->payload.begin(), p->payload.end());
      p->payload = o.payloads.back();
    }
    o.messages.push_back(std::move(m));
  }
}

// Feeds `in` in chunks of `chunk` bytes, through Feed or PrepareWrite.
Outcome Decode(const Bytes& in, std::optional<Geometry> g = kGeo, std::size_t chunk = 0,
               FrameLimits limits = {}, bool prepare = false) {
  PushFrameDecoder d(limits, g);
  Outcome o;
  if (chunk == 0) chunk = std::max<std::size_t>(in.size(), 1);
  for (std::size_t at = 0; at < in.size(); at += chunk) {
    const std::size_t n = std::min(chunk, in.size() - at);
    if (prepare) {
      std::span<std::uint8_t> room = d.PrepareWrite(n);
      EXPECT_GE(room.size(), n);
      std::memcpy(room.data(), in.data() + at, n);
      d.Commit(n);
    } else {
      d.Feed(std::span(in).subspan(at, n));
    }
    Drain(d, o);
  }
  return o;
}

std::error_code DecodeError(const Bytes& in, std::optional<Geometry> g = kGeo,
                            FrameLimits limits = {}) {
  Outcome o = Decode(in, g, 0, limits);
  EXPECT_TRUE(o.error) << "no error; decoded " << o.messages.size() << " messages";
  return o.error;
}

// Feeds exactly `in` (a frame's first bytes) and returns what Next says.
DecodeResult FeedPrefix(const Bytes& in, std::optional<Geometry> g = kGeo,
                        FrameLimits limits = {}) {
  PushFrameDecoder d(limits, g);
  d.Feed(in);
  return d.Next();
}

std::error_code ErrorOf(const DecodeResult& r) {
  auto* ec = std::get_if<std::error_code>(&r);
  return ec ? *ec : std::error_code{};
}

Bytes Prefix(const Bytes& b, std::size_t n) { return Bytes(b.begin(), b.begin() + n); }

// ---------------------------------------------------------------------------

TEST(PushFrameErrors, EveryCodeHasItsOwnMessage) {
  EXPECT_STREQ(push_frame_category().name(), "push_frame");
  std::map<std::string, int> seen;
  for (int e = 1; e <= static_cast<int>(PushFrameErrc::kBufferTooSmall); ++e) {
    std::error_code ec = static_cast<PushFrameErrc>(e);
    EXPECT_EQ(&ec.category(), &push_frame_category());
    EXPECT_EQ(ec.value(), e);
    EXPECT_NE(ec.message(), "unknown push_frame error") << e;
    EXPECT_TRUE(seen.emplace(ec.message(), e).second) << "same message: " << ec.message();
  }
  EXPECT_EQ(std::error_code(static_cast<PushFrameErrc>(999)).message(), "unknown push_frame error");
}

TEST(PushFrameGeometry, Validate) {
  EXPECT_FALSE(ValidateGeometry(kGeo));
  EXPECT_EQ(ValidateGeometry({0, 16384, 1}), PushFrameErrc::kBadPieceCount);
  EXPECT_FALSE(ValidateGeometry({1, 16384, 1}));
  EXPECT_FALSE(ValidateGeometry({1, 16384, 16384}));
  EXPECT_EQ(ValidateGeometry({1, 16384, 16385}), PushFrameErrc::kBadTotalSize);
  EXPECT_EQ(ValidateGeometry({1, 16384, 0}), PushFrameErrc::kBadTotalSize);
  EXPECT_EQ(ValidateGeometry({1, 0, 1}), PushFrameErrc::kBadPieceLength);
  EXPECT_EQ(ValidateGeometry({1, 8192, 1}), PushFrameErrc::kBadPieceLength);
  EXPECT_EQ(ValidateGeometry({1, 16383, 1}), PushFrameErrc::kBadPieceLength);
  EXPECT_EQ(ValidateGeometry({1, 3 * 16384, 1}), PushFrameErrc::kBadPieceLength);
  EXPECT_FALSE(ValidateGeometry({1, kMaxPieceLength, 1}));
  // total_size just above (n-1) pieces and exactly n pieces are the bounds.
  EXPECT_EQ(ValidateGeometry({10, 16384, 9 * 16384}), PushFrameErrc::kBadTotalSize);
  EXPECT_FALSE(ValidateGeometry({10, 16384, 9 * 16384 + 1}));
  EXPECT_FALSE(ValidateGeometry({10, 16384, 10 * 16384}));
  EXPECT_EQ(ValidateGeometry({10, 16384, 10 * 16384 + 1}), PushFrameErrc::kBadTotalSize);
  // The largest geometry does not overflow.
  constexpr std::uint32_t kMaxCount = std::numeric_limits<std::uint32_t>::max();
  const std::uint64_t all = std::uint64_t{kMaxCount} * kMaxPieceLength;
  EXPECT_FALSE(ValidateGeometry({kMaxCount, kMaxPieceLength, all}));
  EXPECT_EQ(ValidateGeometry({kMaxCount, kMaxPieceLength, all + 1}), PushFrameErrc::kBadTotalSize);
  EXPECT_EQ(
      ValidateGeometry({kMaxCount, kMaxPieceLength, std::numeric_limits<std::uint64_t>::max()}),
      PushFrameErrc::kBadTotalSize);
}

TEST(PushFrameGeometry, PieceSizeAndBitfieldSize) {
  EXPECT_EQ(PieceSize(kGeo, 0), 16384u);
  EXPECT_EQ(PieceSize(kGeo, 8), 16384u);
  EXPECT_EQ(PieceSize(kGeo, 9), kLastPieceSize);
  EXPECT_EQ(PieceSize({1, 16384, 1}, 0), 1u);
  EXPECT_EQ(PieceSize({2, 16384, 32768}, 1), 16384u);
  EXPECT_EQ(BitfieldSize(0), 0u);
  EXPECT_EQ(BitfieldSize(1), 1u);
  EXPECT_EQ(BitfieldSize(8), 1u);
  EXPECT_EQ(BitfieldSize(9), 2u);
  EXPECT_EQ(BitfieldSize(std::numeric_limits<std::uint32_t>::max()), 536870912u);
}

TEST(PushFrameGeometry, CheckPieceRange) {
  EXPECT_FALSE(CheckPieceIndex(kGeo, 0));
  EXPECT_FALSE(CheckPieceIndex(kGeo, 9));
  EXPECT_EQ(CheckPieceIndex(kGeo, 10), PushFrameErrc::kIndexOutOfRange);
  EXPECT_EQ(CheckPieceIndex({0, 16384, 1}, 0), PushFrameErrc::kBadPieceCount);
  EXPECT_FALSE(CheckPieceRange(kGeo, 0, 0, 16384));
  EXPECT_FALSE(CheckPieceRange(kGeo, 0, 16383, 1));
  EXPECT_EQ(CheckPieceRange(kGeo, 0, 16384, 1), PushFrameErrc::kRangeOutsidePiece);
  EXPECT_EQ(CheckPieceRange(kGeo, 0, 0, 16385), PushFrameErrc::kRangeOutsidePiece);
  EXPECT_EQ(CheckPieceRange(kGeo, 0, 0, 0), PushFrameErrc::kEmptyPiece);
  EXPECT_EQ(CheckPieceRange(kGeo, 10, 0, 1), PushFrameErrc::kIndexOutOfRange);
  EXPECT_FALSE(CheckPieceRange(kGeo, 9, 0, kLastPieceSize));
  EXPECT_EQ(CheckPieceRange(kGeo, 9, 0, kLastPieceSize + 1), PushFrameErrc::kRangeOutsidePiece);
  // offset + length computed without 32-bit wrap-around.
  EXPECT_EQ(CheckPieceRange(kGeo, 0, 0xFFFFFFFF, 2), PushFrameErrc::kRangeOutsidePiece);
}

// ---- Round trips -----------------------------------------------------------

void ExpectRoundTrip(const Message& m, std::optional<Geometry> g = kGeo) {
  const Geometry* gp = g ? &*g : nullptr;
  Bytes wire = Encode(m, gp);
  ASSERT_EQ(wire.size(), EncodedSize(m));
  Outcome o = Decode(wire, g);
  ASSERT_FALSE(o.error) << o.error.message();
  ASSERT_EQ(o.messages.size(), 1u);
  EXPECT_TRUE(o.messages[0] == m);
  EXPECT_EQ(TypeOf(o.messages[0]), TypeOf(m));
  // The format has no slack: re-encoding gives the same bytes.
  EXPECT_EQ(Encode(o.messages[0], gp), wire);
}

TEST(PushFrameRoundTrip, EveryMessage) {
  ExpectRoundTrip(MakeHello(HashKind::kSha1));
  ExpectRoundTrip(MakeHello(HashKind::kSha256));
  ExpectRoundTrip(MakeHello(HashKind::kSha1), std::nullopt);
  ExpectRoundTrip(MakeHello(HashKind::kSha1, {1, 16384, 1}), std::nullopt);
  ExpectRoundTrip(MakeHello(HashKind::kSha1, {8, 16384, 8 * 16384}), std::nullopt);
  ExpectRoundTrip(MakeHello(HashKind::kSha1, {9, 1u << 20, 9u << 20}), std::nullopt);
  Hello all = MakeHello(HashKind::kSha256, {16, kMaxPieceLength, 16ull << 31});
  std::fill(all.bitfield.begin(), all.bitfield.end(), 0xFF);
  ExpectRoundTrip(all, std::nullopt);
  Hello with_token = MakeHello();
  with_token.token = "the swarm's token";
  ExpectRoundTrip(with_token);
  with_token.token = std::string(kMaxHelloTokenLength, '\xff');  // any bytes
  ExpectRoundTrip(with_token, std::nullopt);

  ExpectRoundTrip(Have{0});
  ExpectRoundTrip(Have{9});
  ExpectRoundTrip(Fetching{0});
  ExpectRoundTrip(Fetching{9});

  const Bytes payload(16384, 0x5A);
  ExpectRoundTrip(Piece{0, 0, payload});
  ExpectRoundTrip(Piece{3, 16383, std::span(payload).first(1)});
  ExpectRoundTrip(Piece{9, 0, std::span(payload).first(kLastPieceSize)});
  ExpectRoundTrip(Piece{9, kLastPieceSize - 1, std::span(payload).first(1)});
  ExpectRoundTrip(Piece{3, 16, std::span(payload).first(100), /*forward=*/false});

  ExpectRoundTrip(Bye{});
  ExpectRoundTrip(Bye{static_cast<std::uint16_t>(ByeReason::kTooSlow), "x"});
  ExpectRoundTrip(Bye{static_cast<std::uint16_t>(ByeReason::kShuttingDown),
                      std::string(kMaxByeTextLength, 'z')});
  ExpectRoundTrip(Bye{1, "protocole arrêté: \xE2\x82\xAC \xF0\x9F\x98\x80"});
  // Reason codes are advisory: an unknown one still decodes.
  ExpectRoundTrip(Bye{0xFFFF, "later version"});
}

TEST(PushFrameRoundTrip, PieceHeaderThenPayloadIsAPieceFrame) {
  const Bytes payload = FromString("pushdata");
  Bytes header(kPieceHeaderSize);
  EncodeResult r = EncodePieceHeader({9, 2536, 8}, header, &kGeo);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, kPieceHeaderSize);
  header.insert(header.end(), payload.begin(), payload.end());
  EXPECT_EQ(header, Encode(Piece{9, 2536, payload}, &kGeo));
  EXPECT_EQ((Piece{9, 2536, payload}.header()), (PieceHeader{9, 2536, 8}));
}

// DIRECT is a PIECE frame with another type byte, and decodes as a Piece
// that is not to be forwarded.
TEST(PushFrameRoundTrip, DirectDiffersFromPieceOnlyInItsTypeByte) {
  const Bytes payload = FromString("pushdata");
  Bytes piece = Encode(Piece{9, 2536, payload}, &kGeo);
  const Bytes direct = Encode(Piece{9, 2536, payload, /*forward=*/false}, &kGeo);
  ASSERT_EQ(piece.size(), direct.size());
  EXPECT_EQ(piece[5], static_cast<std::uint8_t>(FrameType::kPiece));
  EXPECT_EQ(direct[5], static_cast<std::uint8_t>(FrameType::kDirect));
  piece[5] = direct[5];
  EXPECT_EQ(piece, direct);
  PushFrameDecoder d({}, kGeo);
  d.Feed(direct);
  auto next = d.Next();
  ASSERT_TRUE(std::holds_alternative<Message>(next));
  const auto* m = std::get_if<Piece>(&std::get<Message>(next));
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->forward);
  EXPECT_EQ(m->piece, 9u);
  EXPECT_EQ(m->offset, 2536u);
}

// ---- Encoder checks --------------------------------------------------------

TEST(PushFrameEncode, BufferSizeBoundaries) {
  const Bytes payload(100, 1);
  const std::vector<Message> messages = {MakeHello(),   MakeHello(HashKind::kSha256),
                                         Have{1},       Piece{1, 0, payload},
                                         Bye{2, "bye"}, Fetching{1}};
  for (const Message& m : messages) {
    const std::size_t size = EncodedSize(m);
    EXPECT_FALSE(EncodeError(m, &kGeo, size));
    EXPECT_EQ(EncodeError(m, &kGeo, size - 1), PushFrameErrc::kBufferTooSmall);
    EXPECT_EQ(EncodeError(m, &kGeo, 0), PushFrameErrc::kBufferTooSmall);
    // A bigger buffer is fine and only the frame is written.
    Bytes big(size + 10, 0xEE);
    EncodeResult r = EncodeMessage(m, big, &kGeo);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, size);
    EXPECT_EQ(big[size], 0xEE);
  }
  Bytes small(kPieceHeaderSize - 1);
  EXPECT_EQ(EncodePieceHeader({0, 0, 1}, small).error(), PushFrameErrc::kBufferTooSmall);
  EXPECT_EQ(EncodedSize(MakeHello()), 4 + 2 + 1 + 20 + 20 + 16 + 1 + 2u);
  EXPECT_EQ(EncodedSize(MakeHello(HashKind::kSha256)), 4 + 2 + 1 + 32 + 20 + 16 + 1 + 2u);
  Hello with_token = MakeHello();
  with_token.token = "s3cret";
  EXPECT_EQ(EncodedSize(with_token), EncodedSize(MakeHello()) + 6);
  EXPECT_EQ(EncodedSize(Have{}), 10u);
  EXPECT_EQ(EncodedSize(Fetching{}), 10u);
  EXPECT_EQ(EncodedSize(Piece{1, 0, payload}), 118u);
  EXPECT_EQ(EncodedSize(Bye{2, "bye"}), 11u);
}

TEST(PushFrameEncode, ChecksHello) {
  Hello h = MakeHello();
  h.hash_kind = static_cast<HashKind>(3);
  EXPECT_EQ(EncodeError(h), PushFrameErrc::kBadHashKind);
  h = MakeHello();
  h.info_hash.resize(32);
  EXPECT_EQ(EncodeError(h), PushFrameErrc::kBadInfoHashLength);
  h = MakeHello(HashKind::kSha256);
  h.info_hash.resize(20);
  EXPECT_EQ(EncodeError(h), PushFrameErrc::kBadInfoHashLength);
  h = MakeHello();
  h.geometry.piece_count = 0;
  EXPECT_EQ(EncodeError(h), PushFrameErrc::kBadPieceCount);
  h = MakeHello();
  h.geometry.piece_length = 20000;
  EXPECT_EQ(EncodeError(h), PushFrameErrc::kBadPieceLength);
  h = MakeHello();
  h.geometry.total_size = 9 * 16384;
  EXPECT_EQ(EncodeError(h), PushFrameErrc::kBadTotalSize);
  h = MakeHello();
  h.bitfield.push_back(0);
  EXPECT_EQ(EncodeError(h), PushFrameErrc::kBadBitfieldLength);
  h.bitfield.resize(1);
  EXPECT_EQ(EncodeError(h), PushFrameErrc::kBadBitfieldLength);
  // Piece count 10: the last byte uses its two top bits only.
  for (int bit = 0; bit < 6; ++bit) {
    h = MakeHello();
    h.bitfield[1] |= 1 << bit;
    EXPECT_EQ(EncodeError(h), PushFrameErrc::kSpareBitsSet) << bit;
  }
  h = MakeHello();
  h.token = std::string(kMaxHelloTokenLength + 1, 't');
  EXPECT_EQ(EncodeError(h), PushFrameErrc::kTokenTooLong);
}

TEST(PushFrameEncode, ChecksHaveAndPiece) {
  EXPECT_FALSE(EncodeError(Have{9}, &kGeo));
  EXPECT_EQ(EncodeError(Have{10}, &kGeo), PushFrameErrc::kIndexOutOfRange);
  EXPECT_FALSE(EncodeError(Have{0xFFFFFFFF}));  // nothing to check against
  const Geometry bad{0, 16384, 1};
  EXPECT_EQ(EncodeError(Have{0}, &bad), PushFrameErrc::kBadPieceCount);
  EXPECT_FALSE(EncodeError(Fetching{9}, &kGeo));
  EXPECT_EQ(EncodeError(Fetching{10}, &kGeo), PushFrameErrc::kIndexOutOfRange);

  const Bytes payload(kLastPieceSize + 1, 7);
  const auto first = [&](std::size_t n) { return std::span(payload).first(n); };
  EXPECT_EQ(EncodeError(Piece{0, 0, {}}), PushFrameErrc::kEmptyPiece);
  EXPECT_EQ(EncodeError(Piece{0, 0, {}}, &kGeo), PushFrameErrc::kEmptyPiece);
  EXPECT_EQ(EncodeError(Piece{10, 0, first(1)}, &kGeo), PushFrameErrc::kIndexOutOfRange);
  EXPECT_FALSE(EncodeError(Piece{9, 0, first(kLastPieceSize)}, &kGeo));
  EXPECT_EQ(EncodeError(Piece{9, 0, first(kLastPieceSize + 1)}, &kGeo),
            PushFrameErrc::kRangeOutsidePiece);
  EXPECT_EQ(EncodeError(Piece{9, kLastPieceSize, first(1)}, &kGeo),
            PushFrameErrc::kRangeOutsidePiece);
  // Without a geometry, only the largest possible piece bounds the range.
  EXPECT_FALSE(EncodeError(Piece{9, kLastPieceSize, first(1)}));
  EXPECT_FALSE(EncodeError(Piece{0, kMaxPieceLength - 1, first(1)}));
  EXPECT_EQ(EncodeError(Piece{0, kMaxPieceLength, first(1)}), PushFrameErrc::kRangeOutsidePiece);
  Bytes header(kPieceHeaderSize);
  EXPECT_EQ(EncodePieceHeader({0, 0xFFFFFFFF, 2}, header).error(),
            PushFrameErrc::kRangeOutsidePiece);
  EXPECT_EQ(EncodePieceHeader({0, 0, 0}, header).error(), PushFrameErrc::kEmptyPiece);
  EXPECT_TRUE(EncodePieceHeader({0, 0, kMaxPieceLength}, header).ok());
  // Input errors are reported before a too-small buffer.
  EXPECT_EQ(EncodeError(Piece{10, 0, first(1)}, &kGeo, 3), PushFrameErrc::kIndexOutOfRange);
}

TEST(PushFrameEncode, ChecksBye) {
  EXPECT_FALSE(EncodeError(Bye{0, ""}));
  EXPECT_FALSE(EncodeError(Bye{0, "a"}));
  EXPECT_FALSE(EncodeError(Bye{0, std::string(kMaxByeTextLength, 'a')}));
  EXPECT_EQ(EncodeError(Bye{0, std::string(kMaxByeTextLength + 1, 'a')}),
            PushFrameErrc::kByeTextTooLong);
  for (std::string bad : {"\x80", "\xC0\x80", "\xC3", "\xE2\x82", "\xED\xA0\x80",
                          "\xF4\x90\x80\x80", "\xF8\x88\x80\x80\x80", "ok\xFF"}) {
    EXPECT_EQ(EncodeError(Bye{0, bad}), PushFrameErrc::kByeTextNotUtf8) << bad;
  }
  for (std::string good : {"\x7F", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xEF\xBF\xBF",
                           "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_FALSE(EncodeError(Bye{0, good})) << good;
  }
}

// ---- Decoder: header ------------------------------------------------------

TEST(PushFrameDecode, FrameLengthBoundaries) {
  // 0 and 1: no room for version and type.
  EXPECT_EQ(ErrorOf(FeedPrefix(Raw{}.U32(0).b)), PushFrameErrc::kFrameTooShort);
  EXPECT_EQ(ErrorOf(FeedPrefix(Raw{}.U32(1).U8(1).b)), PushFrameErrc::kFrameTooShort);
  // 2: a header alone; HAVE needs 4 more bytes.
  EXPECT_EQ(DecodeError(Raw{}.U32(2).U8(kPushProtocolVersion).U8(2).b),
            PushFrameErrc::kLengthMismatch);

  // max and max + 1, with the length field alone in the buffer.
  const Bytes have = Encode(Have{3});
  FrameLimits limits{static_cast<std::uint32_t>(have.size() - 4)};
  EXPECT_EQ(Decode(have, kGeo, 0, limits).messages.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<NeedMore>(FeedPrefix(Prefix(have, 4), kGeo, limits)));
  limits.max_frame_length -= 1;
  EXPECT_EQ(ErrorOf(FeedPrefix(Prefix(have, 4), kGeo, limits)), PushFrameErrc::kFrameTooLong);

  // The default limit: one whole chunk fits, one byte more does not.
  EXPECT_TRUE(std::holds_alternative<NeedMore>(FeedPrefix(Raw{}.U32(kDefaultMaxFrameLength).b)));
  EXPECT_EQ(ErrorOf(FeedPrefix(Raw{}.U32(kDefaultMaxFrameLength + 1).b)),
            PushFrameErrc::kFrameTooLong);
  EXPECT_EQ(ErrorOf(FeedPrefix(Raw{}.U32(0xFFFFFFFF).b)), PushFrameErrc::kFrameTooLong);
  EXPECT_EQ(kDefaultMaxFrameLength, (1u << 20) + 14);

  // Fewer than 4 bytes: nothing to say yet.
  EXPECT_TRUE(std::holds_alternative<NeedMore>(FeedPrefix(Raw{}.U8(0xFF).U8(0xFF).U8(0xFF).b)));
  EXPECT_TRUE(std::holds_alternative<NeedMore>(FeedPrefix({})));
}

TEST(PushFrameDecode, VersionAndTypeCheckedAtSixBytes) {
  for (std::uint8_t version : {0, 1, 2, 3, 4, 6, 255}) {
    const Bytes f = Frame(2, Raw{}.U32(1).b, version);
    EXPECT_EQ(ErrorOf(FeedPrefix(Prefix(f, 6))), PushFrameErrc::kBadVersion);
    EXPECT_EQ(ErrorOf(FeedPrefix(Prefix(f, 5))), std::error_code{});
  }
  for (std::uint8_t type : {0, 9, 255}) {
    const Bytes f = Frame(type, Raw{}.U32(1).b);
    EXPECT_EQ(ErrorOf(FeedPrefix(Prefix(f, 6))), PushFrameErrc::kUnknownType) << int{type};
    EXPECT_EQ(DecodeError(f), PushFrameErrc::kUnknownType);
  }
  // Within the limit but huge: the type is still judged before the body.
  EXPECT_EQ(ErrorOf(FeedPrefix(Raw{}.U32(1000000).U8(kPushProtocolVersion).U8(10).b)),
            PushFrameErrc::kUnknownType);
}

// ---- Decoder: HELLO --------------------------------------------------------

// A HELLO frame from raw field values, consistent or not.
Bytes HelloFrame(std::uint8_t kind, std::size_t hash_size, Geometry g, const Bytes& bitfield,
                 const Bytes& token = {}) {
  return Frame(1, Raw{}
                      .U8(kind)
                      .Fill(hash_size, 0x11)
                      .Fill(kPeerIdSize, 'p')
                      .U32(g.piece_count)
                      .U32(g.piece_length)
                      .U64(g.total_size)
                      .U8(static_cast<std::uint8_t>(token.size()))
                      .Append(token)
                      .Append(bitfield)
                      .b);
}

TEST(PushFrameDecode, HelloErrors) {
  const Bytes bits = {0x80, 0x40};
  ASSERT_EQ(Decode(HelloFrame(1, 20, kGeo, bits)).messages.size(), 1u);
  ASSERT_EQ(Decode(HelloFrame(2, 32, kGeo, bits)).messages.size(), 1u);

  EXPECT_EQ(DecodeError(HelloFrame(0, 20, kGeo, bits)), PushFrameErrc::kBadHashKind);
  EXPECT_EQ(DecodeError(HelloFrame(3, 20, kGeo, bits)), PushFrameErrc::kBadHashKind);
  // SHA-256 named but only 20 bytes of hash: the frame is too short for it.
  EXPECT_EQ(DecodeError(HelloFrame(2, 20, kGeo, bits)), PushFrameErrc::kLengthMismatch);
  // Cut inside the fixed fields.
  EXPECT_EQ(DecodeError(Frame(1, {})), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(Frame(1, {1})), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(Frame(1, Raw{}.U8(1).Fill(40, 0).U32(10).U32(16384).U32(0).b)),
            PushFrameErrc::kLengthMismatch);

  EXPECT_EQ(DecodeError(HelloFrame(1, 20, {0, 16384, 1}, {})), PushFrameErrc::kBadPieceCount);
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, {10, 16383, 150000}, bits)),
            PushFrameErrc::kBadPieceLength);
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, {10, 24576, 150000}, bits)),
            PushFrameErrc::kBadPieceLength);
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, {10, 16384, 147456}, bits)),
            PushFrameErrc::kBadTotalSize);
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, {10, 16384, 163841}, bits)),
            PushFrameErrc::kBadTotalSize);
  // Valid, but not the configured torrent.
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, {10, 16384, 147457}, bits)),
            PushFrameErrc::kGeometryMismatch);
  EXPECT_FALSE(Decode(HelloFrame(1, 20, {10, 16384, 147457}, bits), std::nullopt).error);

  // Bitfield length: ceil(piece_count / 8) exactly.
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, kGeo, {0x80})), PushFrameErrc::kBadBitfieldLength);
  // The token's length byte must account for the bytes between it and the
  // bitfield.
  const Bytes token = FromString("tok");
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, kGeo, Raw{}.Append(token).Append(bits).b)),
            PushFrameErrc::kBadBitfieldLength);
  Bytes lying = HelloFrame(1, 20, kGeo, bits, token);
  EXPECT_EQ(std::get<Hello>(Decode(lying).messages.at(0)).token, "tok");
  lying[4 + 2 + 1 + 20 + 20 + 16] = 4;  // one more than the token holds
  EXPECT_EQ(DecodeError(lying), PushFrameErrc::kBadBitfieldLength);
  lying[4 + 2 + 1 + 20 + 20 + 16] = 2;
  EXPECT_EQ(DecodeError(lying), PushFrameErrc::kBadBitfieldLength);
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, kGeo, {0x80, 0, 0})), PushFrameErrc::kBadBitfieldLength);
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, {17, 16384, 270000}, bits), std::nullopt),
            PushFrameErrc::kBadBitfieldLength);
  EXPECT_FALSE(Decode(HelloFrame(1, 20, {17, 16384, 270000}, {0, 0, 0x80}), std::nullopt).error);
  EXPECT_FALSE(Decode(HelloFrame(1, 20, {16, 16384, 250000}, {0xFF, 0xFF}), std::nullopt).error);
  EXPECT_FALSE(Decode(HelloFrame(1, 20, {1, 16384, 1}, {0x80}), std::nullopt).error);

  // Piece count 10: only the top two bits of the last byte are pieces.
  for (int bit = 0; bit < 6; ++bit) {
    const Bytes spare = {0x80, static_cast<std::uint8_t>(0xC0 | 1 << bit)};
    EXPECT_EQ(DecodeError(HelloFrame(1, 20, kGeo, spare)), PushFrameErrc::kSpareBitsSet) << bit;
  }
  EXPECT_EQ(DecodeError(HelloFrame(1, 20, {1, 16384, 1}, {0x40}), std::nullopt),
            PushFrameErrc::kSpareBitsSet);

  const Bytes good = Encode(MakeHello());
  EXPECT_EQ(DecodeError(Raw{}.Append(good).Append(good).b), PushFrameErrc::kDuplicateHello);
  EXPECT_EQ(DecodeError(Raw{}.Append(good).Append(good).b, std::nullopt),
            PushFrameErrc::kDuplicateHello);
}

TEST(PushFrameDecode, HelloCheckedBeforeItsBitfieldArrives) {
  // 8 million pieces: a 1 MB bitfield. The geometry is wrong, and that is
  // known from the first 64 bytes (up to the token's length).
  Hello big = MakeHello(HashKind::kSha1, {8000000, 16384, 8000000ull * 16384});
  const Bytes wire = Encode(big);
  EXPECT_EQ(ErrorOf(FeedPrefix(Prefix(wire, 64))), PushFrameErrc::kGeometryMismatch);
  EXPECT_TRUE(std::holds_alternative<NeedMore>(FeedPrefix(Prefix(wire, 63))));
  EXPECT_TRUE(std::holds_alternative<NeedMore>(FeedPrefix(Prefix(wire, 64), std::nullopt)));
  EXPECT_EQ(Decode(wire, std::nullopt).messages.size(), 1u);
}

// ---- Decoder: HAVE ---------------------------------------------------------

TEST(PushFrameDecode, HaveBoundaries) {
  for (std::uint32_t piece : {0u, 1u, 9u}) {
    Outcome o = Decode(Frame(2, Raw{}.U32(piece).b));
    ASSERT_FALSE(o.error) << piece;
    EXPECT_TRUE(o.messages.at(0) == Message(Have{piece}));
  }
  EXPECT_EQ(DecodeError(Frame(2, Raw{}.U32(10).b)), PushFrameErrc::kIndexOutOfRange);
  EXPECT_EQ(DecodeError(Frame(2, Raw{}.U32(0xFFFFFFFF).b)), PushFrameErrc::kIndexOutOfRange);
  EXPECT_EQ(DecodeError(Frame(2, Raw{}.U16(0).U8(1).b)), PushFrameErrc::kLengthMismatch);
  // FETCHING has HAVE's layout and checks.
  Outcome f = Decode(Frame(8, Raw{}.U32(9).b));
  ASSERT_FALSE(f.error);
  EXPECT_TRUE(f.messages.at(0) == Message(Fetching{9}));
  EXPECT_EQ(TypeOf(f.messages.at(0)), FrameType::kFetching);
  EXPECT_EQ(DecodeError(Frame(8, Raw{}.U32(10).b)), PushFrameErrc::kIndexOutOfRange);
  EXPECT_EQ(DecodeError(Frame(8, Raw{}.U32(1).U8(0).b)), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(Frame(8, Raw{}.U32(0).b), std::nullopt), PushFrameErrc::kNoGeometry);
  EXPECT_EQ(DecodeError(Frame(2, Raw{}.U32(1).U8(0).b)), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(Frame(2, {})), PushFrameErrc::kLengthMismatch);
}

// ---- Decoder: PIECE --------------------------------------------------------

TEST(PushFrameDecode, PieceBoundaries) {
  EXPECT_EQ(Decode(PieceFrame(0, 0, 1, 1)).messages.size(), 1u);
  EXPECT_EQ(Decode(PieceFrame(0, 0, 16384, 16384)).messages.size(), 1u);
  EXPECT_EQ(Decode(PieceFrame(0, 16383, 1, 1)).messages.size(), 1u);
  EXPECT_EQ(DecodeError(PieceFrame(0, 0, 16385, 16385)), PushFrameErrc::kRangeOutsidePiece);
  EXPECT_EQ(DecodeError(PieceFrame(0, 16384, 1, 1)), PushFrameErrc::kRangeOutsidePiece);
  EXPECT_EQ(DecodeError(PieceFrame(0, 0xFFFFFFFF, 2, 2)), PushFrameErrc::kRangeOutsidePiece);
  EXPECT_EQ(DecodeError(PieceFrame(0, 0, 0, 0)), PushFrameErrc::kEmptyPiece);
  EXPECT_EQ(Decode(PieceFrame(9, 0, 1, 1)).messages.size(), 1u);
  EXPECT_EQ(DecodeError(PieceFrame(10, 0, 1, 1)), PushFrameErrc::kIndexOutOfRange);
  EXPECT_EQ(DecodeError(PieceFrame(0xFFFFFFFF, 0, 1, 1)), PushFrameErrc::kIndexOutOfRange);
  // The length field and the PIECE length must agree.
  EXPECT_EQ(DecodeError(PieceFrame(0, 0, 2, 1)), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(PieceFrame(0, 0, 1, 2)), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(Frame(3, Raw{}.U32(0).U32(0).U16(0).b)), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(Frame(3, {})), PushFrameErrc::kLengthMismatch);
}

TEST(PushFrameDecode, LastPieceIsShorter) {
  EXPECT_EQ(Decode(PieceFrame(9, 0, kLastPieceSize, kLastPieceSize)).messages.size(), 1u);
  EXPECT_EQ(Decode(PieceFrame(9, kLastPieceSize - 1, 1, 1)).messages.size(), 1u);
  EXPECT_EQ(DecodeError(PieceFrame(9, 0, kLastPieceSize + 1, kLastPieceSize + 1)),
            PushFrameErrc::kRangeOutsidePiece);
  EXPECT_EQ(DecodeError(PieceFrame(9, kLastPieceSize, 1, 1)), PushFrameErrc::kRangeOutsidePiece);
  // A file of exactly n pieces has a full-size last piece.
  const Geometry exact{10, 16384, 10 * 16384};
  EXPECT_EQ(Decode(PieceFrame(9, 0, 16384, 16384), exact).messages.size(), 1u);
  EXPECT_EQ(DecodeError(PieceFrame(9, 16384, 1, 1), exact), PushFrameErrc::kRangeOutsidePiece);
  // One piece of one byte.
  const Geometry tiny{1, 16384, 1};
  EXPECT_EQ(Decode(PieceFrame(0, 0, 1, 1), tiny).messages.size(), 1u);
  EXPECT_EQ(DecodeError(PieceFrame(0, 1, 1, 1), tiny), PushFrameErrc::kRangeOutsidePiece);
}

TEST(PushFrameDecode, PieceHeaderCheckedBeforePayload) {
  // 16 MiB announced for a 16 KiB piece: refused once the 18 header bytes
  // are in, before any payload is buffered (the limit would allow it).
  const Bytes header =
      Raw{}.U32(14 + (16u << 20)).U8(kPushProtocolVersion).U8(3).U32(0).U32(0).U32(16u << 20).b;
  ASSERT_EQ(header.size(), kPieceHeaderSize);
  const FrameLimits wide{(16u << 20) + 14};
  EXPECT_EQ(ErrorOf(FeedPrefix(header, kGeo, wide)), PushFrameErrc::kRangeOutsidePiece);
  EXPECT_TRUE(std::holds_alternative<NeedMore>(FeedPrefix(Prefix(header, 17), kGeo, wide)));
  EXPECT_EQ(ErrorOf(FeedPrefix(Prefix(PieceFrame(10, 0, 5, 5), 18))),
            PushFrameErrc::kIndexOutOfRange);
  EXPECT_EQ(ErrorOf(FeedPrefix(Prefix(PieceFrame(0, 0, 6, 5), 18))),
            PushFrameErrc::kLengthMismatch);
}

// ---- Decoder: BYE ----------------------------------------------------------

TEST(PushFrameDecode, ByeBoundaries) {
  for (std::size_t n : {0u, 1u, 255u, 256u}) {
    Outcome o = Decode(Frame(4, Raw{}.U16(3).Fill(n, 'a').b));
    ASSERT_FALSE(o.error) << n;
    EXPECT_TRUE(o.messages.at(0) == Message(Bye{3, std::string(n, 'a')}));
  }
  // 257 bytes of text: refused at the 6-byte header.
  const Bytes too_long = Frame(4, Raw{}.U16(3).Fill(257, 'a').b);
  EXPECT_EQ(ErrorOf(FeedPrefix(Prefix(too_long, 6))), PushFrameErrc::kByeTextTooLong);
  EXPECT_EQ(DecodeError(Frame(4, Raw{}.U8(0).b)), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(Frame(4, {})), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(Frame(4, Raw{}.U16(0).U8(0xC3).b)), PushFrameErrc::kByeTextNotUtf8);
  EXPECT_EQ(DecodeError(Frame(4, Raw{}.U16(0).U8(0xED).U8(0xA0).U8(0x80).b)),
            PushFrameErrc::kByeTextNotUtf8);
  // BYE needs no geometry.
  EXPECT_EQ(Decode(Encode(Bye{}), std::nullopt).messages.size(), 1u);
}

TEST(PushFrameDecode, NothingAfterBye) {
  const Bytes bye = Encode(Bye{0, "done"});
  EXPECT_EQ(DecodeError(Raw{}.Append(bye).U8(0).b), PushFrameErrc::kFrameAfterBye);
  Outcome o = Decode(Raw{}.Append(bye).Append(Encode(Have{1})).b);
  EXPECT_EQ(o.messages.size(), 1u);
  EXPECT_EQ(o.error, PushFrameErrc::kFrameAfterBye);
  PushFrameDecoder d({}, kGeo);
  d.Feed(bye);
  EXPECT_TRUE(std::holds_alternative<Message>(d.Next()));
  EXPECT_TRUE(d.bye_seen());
  EXPECT_TRUE(std::holds_alternative<NeedMore>(d.Next()));
}

// ---- Decoder: geometry -----------------------------------------------------

TEST(PushFrameDecode, WithoutGeometryTheHelloSetsIt) {
  EXPECT_EQ(DecodeError(Encode(Have{0}), std::nullopt), PushFrameErrc::kNoGeometry);
  // Refused at the header, before the rest of the frame.
  EXPECT_EQ(ErrorOf(FeedPrefix(Prefix(PieceFrame(0, 0, 1, 1), 6), std::nullopt)),
            PushFrameErrc::kNoGeometry);

  PushFrameDecoder d({}, std::nullopt);
  EXPECT_EQ(d.geometry(), nullptr);
  const Geometry other{3, 1u << 20, (2u << 20) + 5};
  d.Feed(Encode(MakeHello(HashKind::kSha256, other)));
  DecodeResult r = d.Next();
  ASSERT_TRUE(std::holds_alternative<Message>(r));
  EXPECT_TRUE(d.hello_seen());
  ASSERT_NE(d.geometry(), nullptr);
  EXPECT_EQ(*d.geometry(), other);
  d.Feed(Encode(Have{2}));
  EXPECT_TRUE(std::holds_alternative<Message>(d.Next()));
  const Bytes payload(5, 1);
  // The last piece holds 5 bytes, not a whole MiB.
  d.Feed(Encode(Piece{2, (1u << 20) - 5, payload}));
  EXPECT_EQ(ErrorOf(d.Next()), PushFrameErrc::kRangeOutsidePiece);

  PushFrameDecoder e({}, std::nullopt);
  e.Feed(Encode(MakeHello(HashKind::kSha256, other)));
  (void)e.Next();
  e.Feed(Encode(Piece{2, 0, payload}));
  EXPECT_TRUE(std::holds_alternative<Message>(e.Next()));
  e.Feed(Encode(Have{3}));
  EXPECT_EQ(ErrorOf(e.Next()), PushFrameErrc::kIndexOutOfRange);
}

TEST(PushFrameDecode, ConfiguredGeometry) {
  // HAVE and PIECE need no HELLO first.
  EXPECT_EQ(Decode(Encode(Have{0})).messages.size(), 1u);
  Outcome o = Decode(Raw{}.Append(Encode(Have{0})).Append(Encode(MakeHello())).b);
  EXPECT_FALSE(o.error);
  EXPECT_EQ(o.messages.size(), 2u);
  EXPECT_EQ(DecodeError(Encode(MakeHello(HashKind::kSha1, {10, 32768, 300000}))),
            PushFrameErrc::kGeometryMismatch);
  EXPECT_EQ(DecodeError(Encode(MakeHello(HashKind::kSha1, {10, 16384, 150001}))),
            PushFrameErrc::kGeometryMismatch);
  EXPECT_EQ(DecodeError(Encode(MakeHello(HashKind::kSha1, {11, 16384, 170000}))),
            PushFrameErrc::kGeometryMismatch);
}

TEST(PushFrameDecode, InvalidConfiguredGeometryFailsTheStream) {
  PushFrameDecoder d({}, Geometry{10, 1000, 10000});
  EXPECT_TRUE(d.failed());
  d.Feed(Encode(Bye{}));
  EXPECT_EQ(ErrorOf(d.Next()), PushFrameErrc::kBadPieceLength);
}

// ---- Decoder: state and buffering -----------------------------------------

TEST(PushFrameDecode, ErrorsAreSticky) {
  PushFrameDecoder d({}, kGeo);
  d.Feed(Frame(9, {}));
  EXPECT_EQ(ErrorOf(d.Next()), PushFrameErrc::kUnknownType);
  EXPECT_TRUE(d.failed());
  EXPECT_EQ(d.error(), PushFrameErrc::kUnknownType);
  d.Feed(Encode(Have{1}));
  EXPECT_EQ(d.buffered(), 0u);
  EXPECT_EQ(ErrorOf(d.Next()), PushFrameErrc::kUnknownType);
  std::span<std::uint8_t> room = d.PrepareWrite(10);
  ASSERT_GE(room.size(), 10u);
  d.Commit(10);
  EXPECT_EQ(ErrorOf(d.Next()), PushFrameErrc::kUnknownType);
  EXPECT_EQ(d.bytes_needed(), 0u);
}

Bytes MixedStream() {
  const Bytes payload = FromString("0123456789abcdef");
  Bytes s;
  for (const Message& m : std::vector<Message>{
           MakeHello(), Have{0}, Piece{1, 100, payload}, Have{9},
           Piece{9, kLastPieceSize - 16, payload}, Piece{0, 0, std::span(payload).first(1)},
           Bye{static_cast<std::uint16_t>(ByeReason::kNormal), "done"}}) {
    Bytes f = Encode(m, &kGeo);
    s.insert(s.end(), f.begin(), f.end());
  }
  return s;
}

TEST(PushFrameDecode, AnySplitGivesTheSameMessages) {
  const Bytes stream = MixedStream();
  Outcome whole = Decode(stream);
  ASSERT_FALSE(whole.error) << whole.error.message();
  ASSERT_EQ(whole.messages.size(), 7u);
  for (std::optional<Geometry> g : {std::optional<Geometry>(kGeo), std::optional<Geometry>()}) {
    for (std::size_t chunk : {1u, 2u, 3u, 5u, 6u, 7u, 17u, 18u, 19u, 64u, 1000u}) {
      for (bool prepare : {false, true}) {
        Outcome o = Decode(stream, g, chunk, {}, prepare);
        EXPECT_FALSE(o.error) << chunk << " " << o.error.message();
        ASSERT_EQ(o.messages.size(), whole.messages.size()) << chunk;
        for (std::size_t i = 0; i < o.messages.size(); ++i) {
          EXPECT_TRUE(o.messages[i] == whole.messages[i]) << "chunk " << chunk << " msg " << i;
        }
      }
    }
  }
}

TEST(PushFrameDecode, ByteAtATimeSaysNeedMoreUntilTheLastByte) {
  const Bytes frame = Encode(Piece{4, 8, FromString("payload")}, &kGeo);
  PushFrameDecoder d({}, kGeo);
  for (std::size_t i = 0; i + 1 < frame.size(); ++i) {
    d.Feed(std::span(frame).subspan(i, 1));
    EXPECT_TRUE(std::holds_alternative<NeedMore>(d.Next())) << i;
    EXPECT_EQ(d.bytes_needed(), i < 3 ? 3 - i : frame.size() - 1 - i) << i;
  }
  d.Feed(std::span(frame).last(1));
  EXPECT_EQ(d.bytes_needed(), 0u);
  DecodeResult r = d.Next();
  ASSERT_TRUE(std::holds_alternative<Message>(r));
  EXPECT_TRUE(std::get<Message>(r) == Message(Piece{4, 8, FromString("payload")}));
  EXPECT_EQ(d.stream_offset(), frame.size());
  EXPECT_EQ(d.bytes_needed(), 4u);
}

TEST(PushFrameDecode, SeveralFramesInOneFeed) {
  const Bytes stream = MixedStream();
  PushFrameDecoder d({}, kGeo);
  d.Feed(stream);
  std::size_t n = 0;
  std::uint64_t offset = 0;
  for (DecodeResult r = d.Next(); std::holds_alternative<Message>(r); r = d.Next()) {
    EXPECT_GT(d.stream_offset(), offset);
    offset = d.stream_offset();
    ++n;
  }
  EXPECT_EQ(n, 7u);
  EXPECT_EQ(d.stream_offset(), stream.size());
  EXPECT_EQ(d.buffered(), 0u);
  EXPECT_FALSE(d.failed());
}

TEST(PushFrameDecode, ErrorOffsetNamesTheBadFrame) {
  const Bytes good = Encode(Have{1});
  PushFrameDecoder d({}, kGeo);
  d.Feed(Raw{}.Append(good).Append(good).Append(Frame(9, {})).b);
  while (std::holds_alternative<Message>(d.Next())) {
  }
  EXPECT_EQ(d.error(), PushFrameErrc::kUnknownType);
  EXPECT_EQ(d.stream_offset(), 2 * good.size());
}

TEST(PushFrameDecode, PiecePayloadPointsIntoTheBuffer) {
  const Bytes frame = Encode(Piece{0, 0, Bytes(1000, 3)}, &kGeo);
  PushFrameDecoder d({}, kGeo);
  std::span<std::uint8_t> room = d.PrepareWrite(frame.size());
  std::memcpy(room.data(), frame.data(), frame.size());
  d.Commit(frame.size());
  DecodeResult r = d.Next();
  const Piece& p = std::get<Piece>(std::get<Message>(r));
  EXPECT_EQ(p.payload.data(), room.data() + kPieceHeaderSize);
  EXPECT_EQ(p.payload.size(), 1000u);
}

TEST(PushFrameDecode, LargePieceInSmallChunks) {
  // A 16 MiB piece arriving 4 KiB at a time, the way a socket delivers it.
  // With quadratic copying this would move ~32 TB; it must finish at once.
  constexpr std::uint32_t kPiece = 16u << 20;
  const Geometry g{4, kPiece, 4ull * kPiece};
  Bytes frame(kPieceHeaderSize + kPiece);
  ASSERT_TRUE(EncodePieceHeader({2, 0, kPiece}, frame, &g).ok());
  for (std::size_t i = kPieceHeaderSize; i < frame.size(); ++i) frame[i] = i * 7 + (i >> 12);
  Bytes stream = Raw{}.Append(Encode(Have{1}, &g)).Append(frame).Append(frame).b;

  const auto start = std::chrono::steady_clock::now();
  // Senders cut pieces into 1 MiB chunks, but a decoder configured for
  // larger frames must still handle them in linear time.
  PushFrameDecoder d({kPiece + 14}, g);
  std::size_t pieces = 0;
  for (std::size_t at = 0; at < stream.size();) {
    // Fixed-size reads that straddle frames, so the buffer must compact.
    std::span<std::uint8_t> room = d.PrepareWrite(4096);
    const std::size_t k = std::min({room.size(), stream.size() - at, std::size_t{4096}});
    std::memcpy(room.data(), stream.data() + at, k);
    d.Commit(k);
    at += k;
    for (DecodeResult r = d.Next(); !std::holds_alternative<NeedMore>(r); r = d.Next()) {
      ASSERT_TRUE(std::holds_alternative<Message>(r)) << ErrorOf(r).message();
      if (auto* p = std::get_if<Piece>(&std::get<Message>(r))) {
        ++pieces;
        ASSERT_EQ(p->payload.size(), kPiece);
        EXPECT_EQ(std::memcmp(p->payload.data(), frame.data() + kPieceHeaderSize, kPiece), 0);
      }
    }
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(pieces, 2u);
  EXPECT_FALSE(d.failed());
  // The buffer stays near one frame, and never above twice that.
  EXPECT_LE(d.buffer_capacity(), 2 * frame.size());
  EXPECT_LT(elapsed, std::chrono::seconds(20));
}

TEST(PushFrameDecode, ManySmallFramesKeepTheBufferSmall) {
  const Bytes have = Encode(Have{1});
  PushFrameDecoder d({}, kGeo);
  for (int i = 0; i < 100000; ++i) {
    d.Feed(have);
    ASSERT_TRUE(std::holds_alternative<Message>(d.Next()));
    ASSERT_TRUE(std::holds_alternative<NeedMore>(d.Next()));
  }
  EXPECT_LE(d.buffer_capacity(), 4096u);
  EXPECT_EQ(d.stream_offset(), 100000u * have.size());
}

TEST(PushFrameDecode, BytesNeeded) {
  PushFrameDecoder d({}, kGeo);
  EXPECT_EQ(d.bytes_needed(), 4u);
  d.Feed(Raw{}.U32(2 + 12 + 100).b);
  EXPECT_EQ(d.bytes_needed(), 114u);
  PushFrameDecoder too_long({8}, kGeo);
  too_long.Feed(Raw{}.U32(9).b);
  EXPECT_EQ(too_long.bytes_needed(), 0u);
  EXPECT_EQ(ErrorOf(too_long.Next()), PushFrameErrc::kFrameTooLong);
}

// ---- docs/protocol.md ------------------------------------------------------

// The hex dumps in docs/protocol.md, keyed by the name in their
// "<!-- dump: NAME -->" marker. Each dump line is "hex bytes | comment".
std::map<std::string, Bytes> ReadDocumentedDumps() {
  const auto path = std::filesystem::path(SWARMCAST_SOURCE_DIR) / "docs/protocol.md";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::map<std::string, Bytes> dumps;
  std::string line;
  while (std::getline(in, line)) {
    constexpr std::string_view kMarker = "<!-- dump: ";
    if (line.rfind(kMarker, 0) != 0) continue;
    const std::string name = line.substr(kMarker.size(), line.find(" -->") - kMarker.size());
    std::getline(in, line);
    EXPECT_EQ(line.rfind("```", 0), 0u) << name << ": no code block after the marker";
    Bytes& bytes = dumps[name];
    while (std::getline(in, line) && line.rfind("```", 0) != 0) {
      std::istringstream hex(line.substr(0, line.find('|')));
      std::string token;
      while (hex >> token) {
        EXPECT_EQ(token.size(), 2u) << name << ": " << line;
        bytes.push_back(static_cast<std::uint8_t>(std::stoul(token, nullptr, 16)));
      }
    }
  }
  return dumps;
}

std::string HexDump(const Bytes& b) {
  std::string s;
  char buf[4];
  for (std::size_t i = 0; i < b.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", b[i]);
    s += buf;
    s += (i % 16 == 15) ? '\n' : ' ';
  }
  return s;
}

Bytes Hex(std::string_view hex) {
  Bytes b;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    b.push_back(static_cast<std::uint8_t>(std::stoul(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return b;
}

// ---- LISTEN and PEERS (version 3: forwarding) ----------------------------

TEST(PushFrameForwarding, ListenAndPeersRoundTrip) {
  Peers peers;
  peers.peers.push_back({{127, 0, 0, 2}, 9000});
  Bytes v6(16, 0);
  v6[15] = 1;
  peers.peers.push_back({v6, 65535});
  for (const Message& m : std::vector<Message>{Listen{1}, Listen{65535}, peers, Peers{}}) {
    const Bytes wire = Encode(m, &kGeo);
    EXPECT_EQ(wire.size(), EncodedSize(m));
    Outcome o = Decode(wire, kGeo);
    EXPECT_FALSE(o.error) << o.error.message();
    ASSERT_EQ(o.messages.size(), 1u);
    EXPECT_TRUE(o.messages[0] == m);
  }
}

TEST(PushFrameForwarding, EncodersRefuseBadFields) {
  Bytes out(64 * 1024);
  EXPECT_EQ(EncodeListen(Listen{0}, out).error(), PushFrameErrc::kBadPort);
  EXPECT_EQ(EncodePeers(Peers{{{{1, 2, 3}, 80}}}, out).error(), PushFrameErrc::kBadAddressFamily);
  EXPECT_EQ(EncodePeers(Peers{{{{1, 2, 3, 4}, 0}}}, out).error(), PushFrameErrc::kBadPort);
  Peers many;
  many.peers.assign(kMaxPushPeers + 1, PeerEndpoint{{1, 2, 3, 4}, 80});
  EXPECT_EQ(EncodePeers(many, out).error(), PushFrameErrc::kTooManyPeers);
  many.peers.pop_back();
  EXPECT_TRUE(EncodePeers(many, out).ok());
  Bytes small(5);
  EXPECT_EQ(EncodeListen(Listen{80}, small).error(), PushFrameErrc::kBufferTooSmall);
}

TEST(PushFrameForwarding, DecoderRefusesBadPeersAndListen) {
  auto v = kPushProtocolVersion;
  // LISTEN: wrong length, port 0.
  EXPECT_EQ(DecodeError(Raw{}.U32(5).U8(v).U8(5).U16(80).U8(0).b), PushFrameErrc::kLengthMismatch);
  EXPECT_EQ(DecodeError(Raw{}.U32(4).U8(v).U8(5).U16(0).b), PushFrameErrc::kBadPort);
  // PEERS: count too large, known from 8 bytes without the body.
  EXPECT_EQ(ErrorOf(FeedPrefix(Raw{}.U32(4 + 7 * 1025).U8(v).U8(6).U16(1025).b)),
            PushFrameErrc::kTooManyPeers);
  // A length beyond what 1024 IPv6 entries take, from the length alone.
  EXPECT_EQ(ErrorOf(FeedPrefix(Raw{}.U32(4 + 19 * 1024 + 1).U8(v).U8(6).b)),
            PushFrameErrc::kTooManyPeers);
  // Count and length disagree.
  EXPECT_EQ(DecodeError(Raw{}.U32(4 + 6).U8(v).U8(6).U16(1).U8(4).U8(1).U8(2).U8(3).U8(4).U8(0).b),
            PushFrameErrc::kLengthMismatch);
  // Bad family, port 0, an IPv6 entry cut short.
  EXPECT_EQ(
      DecodeError(Raw{}.U32(4 + 7).U8(v).U8(6).U16(1).U8(5).U8(1).U8(2).U8(3).U8(4).U16(80).b),
      PushFrameErrc::kBadAddressFamily);
  EXPECT_EQ(DecodeError(Raw{}.U32(4 + 7).U8(v).U8(6).U16(1).U8(4).U8(1).U8(2).U8(3).U8(4).U16(0).b),
            PushFrameErrc::kBadPort);
  EXPECT_EQ(DecodeError(Raw{}
                            .U32(4 + 7 + 7)
                            .U8(v)
                            .U8(6)
                            .U16(2)
                            .U8(4)
                            .U8(1)
                            .U8(2)
                            .U8(3)
                            .U8(4)
                            .U16(80)
                            .U8(6)
                            .U8(1)
                            .U8(2)
                            .U8(3)
                            .U8(4)
                            .U16(80)
                            .b),
            PushFrameErrc::kLengthMismatch);
}

TEST(PushFrameDocs, HexDumpsMatchTheEncoder) {
  // The examples of docs/protocol.md, built from their documented values.
  const std::array<std::uint8_t, kPeerIdSize> peer_id = [] {
    std::array<std::uint8_t, kPeerIdSize> id{};
    std::memcpy(id.data(), "-SC0001-k3v9x2m4q8w1", kPeerIdSize);
    return id;
  }();
  Hello v1;
  v1.hash_kind = HashKind::kSha1;
  v1.info_hash = Hex("85b7d848026a375dd8fdf5033b06720cbc077be1");
  v1.peer_id = peer_id;
  v1.geometry = kGeo;
  v1.token = "lab-token";
  v1.bitfield = {0xE0, 0x40};  // pieces 0, 1, 2 and 9
  Hello v2;
  v2.hash_kind = HashKind::kSha256;
  v2.info_hash = Hex("ce482000a926c10d9b72349c0db55cc17de38b791ddae2fa443b2dc105cfaaf8");
  v2.peer_id = peer_id;
  v2.geometry = {3, 1u << 20, 2621440};
  v2.bitfield = {0x40};  // piece 1
  const Bytes payload = FromString("pushdata");
  const std::map<std::string, Message> examples = {
      {"hello-sha1", v1},
      {"hello-sha256", v2},
      {"have", Have{9}},
      {"fetching", Fetching{9}},
      {"piece", Piece{9, 2536, payload}},
      {"bye", Bye{static_cast<std::uint16_t>(ByeReason::kTooSlow), "too slow: 12 KiB/s"}},
      {"listen", Listen{7001}},
      {"peers", Peers{{{{10, 77, 0, 3}, 7001}, {{10, 77, 0, 5}, 40001}}}},
  };
  const std::map<std::string, Bytes> documented = ReadDocumentedDumps();
  EXPECT_EQ(documented.size(), examples.size());
  for (const auto& [name, message] : examples) {
    const Bytes wire = Encode(message, &kGeo);
    auto it = documented.find(name);
    ASSERT_NE(it, documented.end())
        << "docs/protocol.md has no dump " << name << "; the encoder gives:\n"
        << HexDump(wire);
    EXPECT_EQ(it->second, wire) << name << ": the encoder gives:\n" << HexDump(wire);
    // And the documented bytes decode to the documented message.
    Outcome o = Decode(it->second, name == "hello-sha256" ? std::nullopt : std::optional(kGeo));
    EXPECT_FALSE(o.error) << name << ": " << o.error.message();
    ASSERT_EQ(o.messages.size(), 1u) << name;
    EXPECT_TRUE(o.messages[0] == message) << name;
  }
}

}  // namespace
}  // namespace swarmcast::proto
