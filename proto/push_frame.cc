#include "proto/push_frame.h"

#include <algorithm>
#include <bit>
#include <boost/endian/conversion.hpp>
#include <cstring>
#include <limits>

namespace swarmcast::proto {
namespace {

// Byte offsets inside a frame, counted from the first length byte.
constexpr std::size_t kVersionAt = 4;
constexpr std::size_t kTypeAt = 5;
constexpr std::size_t kBodyAt = kFramePrefixSize;
// The length field counts version and type too.
constexpr std::uint32_t kPrefixInLength = 2;
// HELLO: hash_kind, info_hash, peer_id, three integers (u32 u32 u64) and
// the token's length byte; the token and the bitfield follow.
constexpr std::uint32_t HelloFixedLength(std::size_t hash_size) {
  return kPrefixInLength + 1 + static_cast<std::uint32_t>(hash_size) + kPeerIdSize + 16 + 1;
}
constexpr std::uint32_t kHaveLength = kHaveFrameSize - 4;
constexpr std::uint32_t kPieceHeaderLength = kPieceHeaderSize - 4;
constexpr std::uint32_t kByeFixedLength = kPrefixInLength + 2;
constexpr std::uint32_t kListenLength = kListenFrameSize - 4;
// PEERS: count:u16, then per entry family:u8, address (4 or 16), port:u16.
constexpr std::uint32_t kPeersFixedLength = kPrefixInLength + 2;
constexpr std::size_t PeerEntrySize(std::size_t address_size) { return 1 + address_size + 2; }
// The buffer's first allocation, small so that a stream of small frames
// stays small; later allocations at least double.
constexpr std::size_t kMinBufferCapacity = 64;

class PushFrameCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "push_frame"; }
  std::string message(int ev) const override {
    switch (static_cast<PushFrameErrc>(ev)) {
      case PushFrameErrc::kFrameTooLong:
        return "frame length above the configured maximum";
      case PushFrameErrc::kFrameTooShort:
        return "frame length below 2 (no version and type)";
      case PushFrameErrc::kBadVersion:
        return "unsupported protocol version";
      case PushFrameErrc::kUnknownType:
        return "unknown message type";
      case PushFrameErrc::kLengthMismatch:
        return "frame length does not match the message";
      case PushFrameErrc::kBadHashKind:
        return "unknown info-hash kind";
      case PushFrameErrc::kBadInfoHashLength:
        return "info-hash size does not match its kind";
      case PushFrameErrc::kBadPieceCount:
        return "piece count is zero";
      case PushFrameErrc::kBadPieceLength:
        return "piece length is not a power of two of at least 16 KiB";
      case PushFrameErrc::kBadTotalSize:
        return "total size does not fit the piece count and piece length";
      case PushFrameErrc::kBadBitfieldLength:
        return "bitfield length does not match piece count";
      case PushFrameErrc::kSpareBitsSet:
        return "spare bits set at the end of the bitfield";
      case PushFrameErrc::kGeometryMismatch:
        return "HELLO geometry differs from the torrent's";
      case PushFrameErrc::kDuplicateHello:
        return "second HELLO on one stream";
      case PushFrameErrc::kNoGeometry:
        return "HAVE or PIECE before HELLO gave the geometry";
      case PushFrameErrc::kIndexOutOfRange:
        return "piece index out of range";
      case PushFrameErrc::kEmptyPiece:
        return "PIECE with zero length";
      case PushFrameErrc::kRangeOutsidePiece:
        return "PIECE range outside the piece";
      case PushFrameErrc::kByeTextTooLong:
        return "BYE text longer than 256 bytes";
      case PushFrameErrc::kByeTextNotUtf8:
        return "BYE text is not valid UTF-8";
      case PushFrameErrc::kFrameAfterBye:
        return "data after BYE";
      case PushFrameErrc::kBufferTooSmall:
        return "output buffer too small for the frame";
      case PushFrameErrc::kTokenTooLong:
        return "HELLO token longer than 255 bytes";
      case PushFrameErrc::kBadPort:
        return "LISTEN or PEERS port 0";
      case PushFrameErrc::kTooManyPeers:
        return "PEERS lists more than 1024 forwarders";
      case PushFrameErrc::kBadAddressFamily:
        return "PEERS address family not 4 or 6";
    }
    return "unknown push_frame error";
  }
};

std::uint16_t Load16(const std::uint8_t* p) { return boost::endian::load_big_u16(p); }
std::uint32_t Load32(const std::uint8_t* p) { return boost::endian::load_big_u32(p); }
std::uint64_t Load64(const std::uint8_t* p) { return boost::endian::load_big_u64(p); }

// Appends big-endian fields; the caller has checked the room.
class FrameWriter {
 public:
  explicit FrameWriter(std::uint8_t* p) : p_(p) {}
  void U8(std::uint8_t v) { *p_++ = v; }
  void U16(std::uint16_t v) {
    boost::endian::store_big_u16(p_, v);
    p_ += 2;
  }
  void U32(std::uint32_t v) {
    boost::endian::store_big_u32(p_, v);
    p_ += 4;
  }
  void U64(std::uint64_t v) {
    boost::endian::store_big_u64(p_, v);
    p_ += 8;
  }
  void Bytes(std::span<const std::uint8_t> b) {
    if (!b.empty()) std::memcpy(p_, b.data(), b.size());
    p_ += b.size();
  }
  void Prefix(std::uint32_t length, FrameType type) {
    U32(length);
    U8(kPushProtocolVersion);
    U8(static_cast<std::uint8_t>(type));
  }

 private:
  std::uint8_t* p_;
};

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing
// above U+10FFFF, no truncated sequence.
bool IsUtf8(std::span<const std::uint8_t> s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const std::uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t extra;
    std::uint32_t cp;
    std::uint32_t min;
    if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07u, min = 0x10000;
    } else {
      return false;
    }
    if (s.size() - i - 1 < extra) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const std::uint8_t b = s[i + k];
      if ((b & 0xC0) != 0x80) return false;
      cp = cp << 6 | (b & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

bool SpareBitsSet(std::uint32_t piece_count, std::uint8_t last_byte) {
  const unsigned used = piece_count % 8;
  return used != 0 && (last_byte & (0xFFu >> used)) != 0;
}

std::span<const std::uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Checks what holds for a PIECE range in every geometry.
std::error_code CheckRangeIntrinsic(std::uint32_t offset, std::uint32_t length) {
  if (length == 0) return PushFrameErrc::kEmptyPiece;
  if (std::uint64_t{offset} + length > kMaxPieceLength) return PushFrameErrc::kRangeOutsidePiece;
  return {};
}

}  // namespace

const std::error_category& push_frame_category() noexcept {
  static const PushFrameCategory category;
  return category;
}

std::error_code make_error_code(PushFrameErrc e) noexcept {
  return {static_cast<int>(e), push_frame_category()};
}

std::size_t InfoHashSize(HashKind kind) noexcept {
  switch (kind) {
    case HashKind::kSha1:
      return 20;
    case HashKind::kSha256:
      return 32;
  }
  return 0;
}

std::error_code ValidateGeometry(const Geometry& g) noexcept {
  if (g.piece_count == 0) return PushFrameErrc::kBadPieceCount;
  if (g.piece_length < kMinPieceLength || !std::has_single_bit(g.piece_length)) {
    return PushFrameErrc::kBadPieceLength;
  }
  // At most (2^32 - 1) * 2^31 < 2^63: no overflow.
  const std::uint64_t all_full = std::uint64_t{g.piece_count} * g.piece_length;
  if (g.total_size <= all_full - g.piece_length || g.total_size > all_full) {
    return PushFrameErrc::kBadTotalSize;
  }
  return {};
}

std::uint32_t PieceSize(const Geometry& g, std::uint32_t index) noexcept {
  if (index < g.piece_count - 1) return g.piece_length;
  return static_cast<std::uint32_t>(g.total_size -
                                    std::uint64_t{g.piece_count - 1} * g.piece_length);
}

std::size_t BitfieldSize(std::uint32_t piece_count) noexcept {
  return static_cast<std::size_t>((std::uint64_t{piece_count} + 7) / 8);
}

std::uint32_t MaxHelloLength(const Geometry& g) noexcept {
  // At most 2^29 bitfield bytes, so this fits 32 bits.
  return static_cast<std::uint32_t>(HelloFixedLength(32) + kMaxHelloTokenLength +
                                    BitfieldSize(g.piece_count));
}

std::error_code CheckPieceIndex(const Geometry& g, std::uint32_t piece) noexcept {
  if (std::error_code ec = ValidateGeometry(g)) return ec;
  if (piece >= g.piece_count) return PushFrameErrc::kIndexOutOfRange;
  return {};
}

std::error_code CheckPieceRange(const Geometry& g, std::uint32_t piece, std::uint32_t offset,
                                std::uint32_t length) noexcept {
  if (std::error_code ec = CheckPieceIndex(g, piece)) return ec;
  if (length == 0) return PushFrameErrc::kEmptyPiece;
  if (std::uint64_t{offset} + length > PieceSize(g, piece)) {
    return PushFrameErrc::kRangeOutsidePiece;
  }
  return {};
}

bool operator==(const Piece& a, const Piece& b) {
  return a.piece == b.piece && a.offset == b.offset && a.forward == b.forward &&
         std::equal(a.payload.begin(), a.payload.end(), b.payload.begin(), b.payload.end());
}

FrameType TypeOf(const Message& m) noexcept {
  // The variant follows the frame types up to PEERS; DIRECT is a Piece.
  if (std::holds_alternative<Fetching>(m)) return FrameType::kFetching;
  return static_cast<FrameType>(m.index() + 1);
}

std::size_t EncodedSize(const Message& m) noexcept {
  struct {
    std::size_t operator()(const Hello& h) const {
      return 4 + HelloFixedLength(h.info_hash.size()) + h.token.size() + h.bitfield.size();
    }
    std::size_t operator()(const Have&) const { return kHaveFrameSize; }
    std::size_t operator()(const Piece& p) const { return kPieceHeaderSize + p.payload.size(); }
    std::size_t operator()(const Bye& b) const { return 4 + kByeFixedLength + b.text.size(); }
    std::size_t operator()(const Listen&) const { return kListenFrameSize; }
    std::size_t operator()(const Fetching&) const { return kHaveFrameSize; }
    std::size_t operator()(const Peers& m) const {
      std::size_t n = 4 + kPeersFixedLength;
      for (const PeerEndpoint& e : m.peers) n += PeerEntrySize(e.address.size());
      return n;
    }
  } size;
  return std::visit(size, m);
}

EncodeResult EncodeHello(const Hello& m, std::span<std::uint8_t> out) {
  const std::size_t hash_size = InfoHashSize(m.hash_kind);
  if (hash_size == 0) return Unexpected{make_error_code(PushFrameErrc::kBadHashKind)};
  if (m.info_hash.size() != hash_size) {
    return Unexpected{make_error_code(PushFrameErrc::kBadInfoHashLength)};
  }
  if (std::error_code ec = ValidateGeometry(m.geometry)) return Unexpected{ec};
  if (m.bitfield.size() != BitfieldSize(m.geometry.piece_count)) {
    return Unexpected{make_error_code(PushFrameErrc::kBadBitfieldLength)};
  }
  if (SpareBitsSet(m.geometry.piece_count, m.bitfield.back())) {
    return Unexpected{make_error_code(PushFrameErrc::kSpareBitsSet)};
  }
  if (m.token.size() > kMaxHelloTokenLength) {
    return Unexpected{make_error_code(PushFrameErrc::kTokenTooLong)};
  }
  // The bitfield is at most 2^29 bytes, so the length always fits 32 bits.
  const auto length =
      static_cast<std::uint32_t>(HelloFixedLength(hash_size) + m.token.size() + m.bitfield.size());
  const std::size_t size = 4 + std::size_t{length};
  if (out.size() < size) return Unexpected{make_error_code(PushFrameErrc::kBufferTooSmall)};
  FrameWriter w(out.data());
  w.Prefix(length, FrameType::kHello);
  w.U8(static_cast<std::uint8_t>(m.hash_kind));
  w.Bytes(m.info_hash);
  w.Bytes(m.peer_id);
  w.U32(m.geometry.piece_count);
  w.U32(m.geometry.piece_length);
  w.U64(m.geometry.total_size);
  w.U8(static_cast<std::uint8_t>(m.token.size()));
  w.Bytes(AsBytes(m.token));
  w.Bytes(m.bitfield);
  return size;
}

namespace {
// HAVE and FETCHING: the prefix and one piece index.
EncodeResult EncodePieceIndexFrame(FrameType type, std::uint32_t piece, std::span<std::uint8_t> out,
                                   const Geometry* geometry) {
  if (geometry) {
    if (std::error_code ec = CheckPieceIndex(*geometry, piece)) return Unexpected{ec};
  }
  if (out.size() < kHaveFrameSize) {
    return Unexpected{make_error_code(PushFrameErrc::kBufferTooSmall)};
  }
  FrameWriter w(out.data());
  w.Prefix(kHaveLength, type);
  w.U32(piece);
  return kHaveFrameSize;
}
}  // namespace

EncodeResult EncodeHave(const Have& m, std::span<std::uint8_t> out, const Geometry* geometry) {
  return EncodePieceIndexFrame(FrameType::kHave, m.piece, out, geometry);
}

EncodeResult EncodeFetching(const Fetching& m, std::span<std::uint8_t> out,
                            const Geometry* geometry) {
  return EncodePieceIndexFrame(FrameType::kFetching, m.piece, out, geometry);
}

EncodeResult EncodePieceHeader(const PieceHeader& h, std::span<std::uint8_t> out,
                               const Geometry* geometry) {
  std::error_code ec = geometry ? CheckPieceRange(*geometry, h.piece, h.offset, h.length)
                                : CheckRangeIntrinsic(h.offset, h.length);
  if (ec) return Unexpected{ec};
  if (out.size() < kPieceHeaderSize) {
    return Unexpected{make_error_code(PushFrameErrc::kBufferTooSmall)};
  }
  FrameWriter w(out.data());
  // length <= 2^31, so the frame length fits in 32 bits.
  w.Prefix(kPieceHeaderLength + h.length, h.forward ? FrameType::kPiece : FrameType::kDirect);
  w.U32(h.piece);
  w.U32(h.offset);
  w.U32(h.length);
  return kPieceHeaderSize;
}

EncodeResult EncodePiece(const Piece& m, std::span<std::uint8_t> out, const Geometry* geometry) {
  if (m.payload.size() > kMaxPieceLength) {
    return Unexpected{make_error_code(PushFrameErrc::kRangeOutsidePiece)};
  }
  const PieceHeader h = m.header();
  const std::size_t size = kPieceHeaderSize + m.payload.size();
  // Input errors win over kBufferTooSmall, as for the other messages.
  EncodeResult header =
      EncodePieceHeader(h, out.first(std::min(out.size(), kPieceHeaderSize)), geometry);
  if (!header.ok()) return header;
  if (out.size() < size) return Unexpected{make_error_code(PushFrameErrc::kBufferTooSmall)};
  std::memcpy(out.data() + kPieceHeaderSize, m.payload.data(), m.payload.size());
  return size;
}

EncodeResult EncodeBye(const Bye& m, std::span<std::uint8_t> out) {
  if (m.text.size() > kMaxByeTextLength) {
    return Unexpected{make_error_code(PushFrameErrc::kByeTextTooLong)};
  }
  if (!IsUtf8(AsBytes(m.text))) return Unexpected{make_error_code(PushFrameErrc::kByeTextNotUtf8)};
  const std::size_t size = 4 + kByeFixedLength + m.text.size();
  if (out.size() < size) return Unexpected{make_error_code(PushFrameErrc::kBufferTooSmall)};
  FrameWriter w(out.data());
  w.Prefix(static_cast<std::uint32_t>(size - 4), FrameType::kBye);
  w.U16(m.reason);
  w.Bytes(AsBytes(m.text));
  return size;
}

EncodeResult EncodeListen(const Listen& m, std::span<std::uint8_t> out) {
  if (m.port == 0) return Unexpected{make_error_code(PushFrameErrc::kBadPort)};
  if (out.size() < kListenFrameSize) {
    return Unexpected{make_error_code(PushFrameErrc::kBufferTooSmall)};
  }
  FrameWriter w(out.data());
  w.Prefix(kListenLength, FrameType::kListen);
  w.U16(m.port);
  return kListenFrameSize;
}

EncodeResult EncodePeers(const Peers& m, std::span<std::uint8_t> out) {
  if (m.peers.size() > kMaxPushPeers) {
    return Unexpected{make_error_code(PushFrameErrc::kTooManyPeers)};
  }
  for (const PeerEndpoint& e : m.peers) {
    if (e.address.size() != 4 && e.address.size() != 16) {
      return Unexpected{make_error_code(PushFrameErrc::kBadAddressFamily)};
    }
    if (e.port == 0) return Unexpected{make_error_code(PushFrameErrc::kBadPort)};
  }
  const std::size_t size = EncodedSize(m);
  if (out.size() < size) return Unexpected{make_error_code(PushFrameErrc::kBufferTooSmall)};
  FrameWriter w(out.data());
  w.Prefix(static_cast<std::uint32_t>(size - 4), FrameType::kPeers);
  w.U16(static_cast<std::uint16_t>(m.peers.size()));
  for (const PeerEndpoint& e : m.peers) {
    w.U8(e.address.size() == 4 ? 4 : 6);
    w.Bytes(e.address);
    w.U16(e.port);
  }
  return size;
}

EncodeResult EncodeMessage(const Message& m, std::span<std::uint8_t> out,
                           const Geometry* geometry) {
  struct {
    std::span<std::uint8_t> out;
    const Geometry* geometry;
    EncodeResult operator()(const Hello& h) const { return EncodeHello(h, out); }
    EncodeResult operator()(const Have& h) const { return EncodeHave(h, out, geometry); }
    EncodeResult operator()(const Piece& p) const { return EncodePiece(p, out, geometry); }
    EncodeResult operator()(const Bye& b) const { return EncodeBye(b, out); }
    EncodeResult operator()(const Listen& l) const { return EncodeListen(l, out); }
    EncodeResult operator()(const Peers& p) const { return EncodePeers(p, out); }
    EncodeResult operator()(const Fetching& f) const { return EncodeFetching(f, out, geometry); }
  } encode{out, geometry};
  return std::visit(encode, m);
}

// ---- PushFrameDecoder ------------------------------------------------------

PushFrameDecoder::PushFrameDecoder(FrameLimits limits, std::optional<Geometry> geometry)
    : limits_(limits), geometry_(geometry) {
  // A bad configuration is reported the way bad input is: as the stream's
  // error, so the caller has a single place to look.
  if (geometry_) {
    if (std::error_code ec = ValidateGeometry(*geometry_)) error_ = ec;
  }
}

std::error_code PushFrameDecoder::Fail(std::error_code ec) {
  error_ = ec;
  begin_ = end_ = 0;
  return ec;
}

void PushFrameDecoder::MakeRoom(std::size_t n) {
  if (capacity_ - end_ >= n) return;
  const std::size_t live = end_ - begin_;
  // Compacting moves `live` bytes; doing it only when that frees at least
  // as many keeps the total moved below the total fed.
  if (begin_ >= live && capacity_ - live >= n) {
    if (live != 0) std::memmove(buf_.get(), buf_.get() + begin_, live);
    begin_ = 0;
    end_ = live;
    return;
  }
  // A request so large that live + n overflows fails in the allocation.
  const std::size_t want = n > std::numeric_limits<std::size_t>::max() - live
                               ? std::numeric_limits<std::size_t>::max()
                               : live + n;
  const std::size_t capacity = std::max({want, capacity_ * 2, kMinBufferCapacity});
  auto bigger = std::make_unique_for_overwrite<std::uint8_t[]>(capacity);
  if (live != 0) std::memcpy(bigger.get(), buf_.get() + begin_, live);
  buf_ = std::move(bigger);
  capacity_ = capacity;
  begin_ = 0;
  end_ = live;
}

void PushFrameDecoder::Feed(std::span<const std::uint8_t> bytes) {
  if (error_ || bytes.empty()) return;
  MakeRoom(bytes.size());
  std::memcpy(buf_.get() + end_, bytes.data(), bytes.size());
  end_ += bytes.size();
}

std::span<std::uint8_t> PushFrameDecoder::PrepareWrite(std::size_t n) {
  MakeRoom(std::max<std::size_t>(n, 1));
  return {buf_.get() + end_, capacity_ - end_};
}

void PushFrameDecoder::Commit(std::size_t n) {
  if (error_) return;  // the stream is dead; what was read is dropped
  end_ += std::min(n, capacity_ - end_);
}

std::size_t PushFrameDecoder::bytes_needed() const noexcept {
  if (error_) return 0;
  const std::size_t avail = end_ - begin_;
  if (avail < 4) return 4 - avail;
  const std::uint32_t len = Load32(buf_.get() + begin_);
  if (len > limits_.max_frame_length || len < kPrefixInLength) return 0;
  const std::size_t frame = 4 + std::size_t{len};
  return frame > avail ? frame - avail : 0;
}

DecodeResult PushFrameDecoder::Next() {
  if (error_) return error_;
  const std::size_t avail = end_ - begin_;
  if (avail == 0) return NeedMore{};
  if (bye_seen_) return Fail(PushFrameErrc::kFrameAfterBye);
  if (avail < 4) return NeedMore{};
  const std::uint8_t* p = buf_.get() + begin_;
  const std::uint32_t len = Load32(p);
  if (len > limits_.max_frame_length) return Fail(PushFrameErrc::kFrameTooLong);
  if (len < kPrefixInLength) return Fail(PushFrameErrc::kFrameTooShort);
  if (avail < kFramePrefixSize) return NeedMore{};
  const std::size_t frame = 4 + std::size_t{len};
  // Checks run on every call until the frame is whole; each costs O(1)
  // except the BYE text check, which runs once on at most 256 bytes.
  if (std::error_code ec = CheckFrame(p, std::min(avail, frame), len)) return Fail(ec);
  if (avail < frame) return NeedMore{};
  Message m = Build(p, len);
  begin_ += frame;
  consumed_ += frame;
  // Resetting moves no bytes, so a PIECE payload stays where it is until
  // the caller's next Feed or PrepareWrite.
  if (begin_ == end_) begin_ = end_ = 0;
  return m;
}

std::error_code PushFrameDecoder::CheckFrame(const std::uint8_t* p, std::size_t have,
                                             std::uint32_t len) const {
  if (p[kVersionAt] != kPushProtocolVersion) return PushFrameErrc::kBadVersion;
  switch (static_cast<FrameType>(p[kTypeAt])) {
    case FrameType::kHello:
      return CheckHello(p, have, len);
    case FrameType::kHave:
    case FrameType::kFetching:
      if (len != kHaveLength) return PushFrameErrc::kLengthMismatch;
      if (!geometry_) return PushFrameErrc::kNoGeometry;
      if (have < kHaveFrameSize) return {};
      return CheckPieceIndex(*geometry_, Load32(p + kBodyAt));
    case FrameType::kPiece:
    case FrameType::kDirect:
      return CheckPiece(p, have, len);
    case FrameType::kBye:
      return CheckBye(p, have, len);
    case FrameType::kListen:
      if (len != kListenLength) return PushFrameErrc::kLengthMismatch;
      if (have < kListenFrameSize) return {};
      return Load16(p + kBodyAt) == 0 ? PushFrameErrc::kBadPort : std::error_code{};
    case FrameType::kPeers:
      return CheckPeers(p, have, len);
  }
  return PushFrameErrc::kUnknownType;
}

std::error_code PushFrameDecoder::CheckHello(const std::uint8_t* p, std::size_t have,
                                             std::uint32_t len) const {
  if (hello_seen_) return PushFrameErrc::kDuplicateHello;
  if (len < kPrefixInLength + 1) return PushFrameErrc::kLengthMismatch;
  if (have < kBodyAt + 1) return {};
  const std::size_t hash_size = InfoHashSize(static_cast<HashKind>(p[kBodyAt]));
  if (hash_size == 0) return PushFrameErrc::kBadHashKind;
  const std::uint32_t fixed = HelloFixedLength(hash_size);
  if (len < fixed) return PushFrameErrc::kLengthMismatch;
  if (have < 4 + std::size_t{fixed}) return {};
  const std::uint8_t* ints = p + kBodyAt + 1 + hash_size + kPeerIdSize;
  const Geometry g{Load32(ints), Load32(ints + 4), Load64(ints + 8)};
  if (std::error_code ec = ValidateGeometry(g)) return ec;
  if (geometry_ && g != *geometry_) return PushFrameErrc::kGeometryMismatch;
  const std::uint8_t token_length = ints[16];
  if (len - fixed != token_length + BitfieldSize(g.piece_count)) {
    return PushFrameErrc::kBadBitfieldLength;
  }
  if (have < 4 + std::size_t{len}) return {};
  if (SpareBitsSet(g.piece_count, p[4 + std::size_t{len} - 1])) {
    return PushFrameErrc::kSpareBitsSet;
  }
  return {};
}

std::error_code PushFrameDecoder::CheckPiece(const std::uint8_t* p, std::size_t have,
                                             std::uint32_t len) const {
  if (len < kPieceHeaderLength) return PushFrameErrc::kLengthMismatch;
  if (!geometry_) return PushFrameErrc::kNoGeometry;
  if (have < kPieceHeaderSize) return {};
  const std::uint32_t length = Load32(p + kBodyAt + 8);
  if (len - kPieceHeaderLength != length) return PushFrameErrc::kLengthMismatch;
  return CheckPieceRange(*geometry_, Load32(p + kBodyAt), Load32(p + kBodyAt + 4), length);
}

std::error_code PushFrameDecoder::CheckBye(const std::uint8_t* p, std::size_t have,
                                           std::uint32_t len) const {
  if (len < kByeFixedLength) return PushFrameErrc::kLengthMismatch;
  if (len - kByeFixedLength > kMaxByeTextLength) return PushFrameErrc::kByeTextTooLong;
  if (have < 4 + std::size_t{len}) return {};
  if (!IsUtf8({p + kBodyAt + 2, len - kByeFixedLength})) return PushFrameErrc::kByeTextNotUtf8;
  return {};
}

// The count is checked as soon as it is in, so a frame that announces too
// many entries is refused before its body; the entries once all are in.
std::error_code PushFrameDecoder::CheckPeers(const std::uint8_t* p, std::size_t have,
                                             std::uint32_t len) const {
  if (len < kPeersFixedLength) return PushFrameErrc::kLengthMismatch;
  if (len > kPeersFixedLength + kMaxPushPeers * PeerEntrySize(16)) {
    return PushFrameErrc::kTooManyPeers;
  }
  if (have < 4 + std::size_t{kPeersFixedLength}) return {};
  const std::size_t count = Load16(p + kBodyAt);
  if (count > kMaxPushPeers) return PushFrameErrc::kTooManyPeers;
  if (len < kPeersFixedLength + count * PeerEntrySize(4) ||
      len > kPeersFixedLength + count * PeerEntrySize(16)) {
    return PushFrameErrc::kLengthMismatch;
  }
  if (have < 4 + std::size_t{len}) return {};
  const std::uint8_t* e = p + kBodyAt + 2;
  const std::uint8_t* end = p + 4 + std::size_t{len};
  for (std::size_t i = 0; i < count; ++i) {
    if (e >= end) return PushFrameErrc::kLengthMismatch;
    const std::size_t address = *e == 4 ? 4 : *e == 6 ? 16 : 0;
    if (address == 0) return PushFrameErrc::kBadAddressFamily;
    if (static_cast<std::size_t>(end - e) < PeerEntrySize(address)) {
      return PushFrameErrc::kLengthMismatch;
    }
    if (Load16(e + 1 + address) == 0) return PushFrameErrc::kBadPort;
    e += PeerEntrySize(address);
  }
  return e == end ? std::error_code{} : PushFrameErrc::kLengthMismatch;
}

// Every field has passed CheckFrame on the whole frame.
Message PushFrameDecoder::Build(const std::uint8_t* p, std::uint32_t len) {
  const std::uint8_t* body = p + kBodyAt;
  switch (static_cast<FrameType>(p[kTypeAt])) {
    case FrameType::kHello: {
      Hello h;
      h.hash_kind = static_cast<HashKind>(body[0]);
      const std::size_t hash_size = InfoHashSize(h.hash_kind);
      h.info_hash.assign(body + 1, body + 1 + hash_size);
      std::memcpy(h.peer_id.data(), body + 1 + hash_size, kPeerIdSize);
      const std::uint8_t* ints = body + 1 + hash_size + kPeerIdSize;
      h.geometry = {Load32(ints), Load32(ints + 4), Load64(ints + 8)};
      const std::uint8_t* token = ints + 17;
      h.token.assign(reinterpret_cast<const char*>(token), ints[16]);
      h.bitfield.assign(token + ints[16], p + 4 + std::size_t{len});
      hello_seen_ = true;
      if (!geometry_) geometry_ = h.geometry;
      return h;
    }
    case FrameType::kHave:
      return Have{Load32(body)};
    case FrameType::kFetching:
      return Fetching{Load32(body)};
    case FrameType::kPiece:
    case FrameType::kDirect:
      return Piece{Load32(body), Load32(body + 4),
                   std::span<const std::uint8_t>(body + 12, len - kPieceHeaderLength),
                   static_cast<FrameType>(p[kTypeAt]) == FrameType::kPiece};
    case FrameType::kBye:
      bye_seen_ = true;
      return Bye{Load16(body),
                 std::string(reinterpret_cast<const char*>(body + 2), len - kByeFixedLength)};
    case FrameType::kListen:
      return Listen{Load16(body)};
    case FrameType::kPeers: {
      Peers m;
      const std::size_t count = Load16(body);
      const std::uint8_t* e = body + 2;
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t address = *e == 4 ? 4 : 16;
        m.peers.push_back(
            {std::vector<std::uint8_t>(e + 1, e + 1 + address), Load16(e + 1 + address)});
        e += PeerEntrySize(address);
      }
      return m;
    }
  }
  return Bye{};  // unreachable: CheckFrame rejected other types
}

}  // namespace swarmcast::proto
