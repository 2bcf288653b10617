// The push channel: length-prefixed, versioned frames between a seed's push
// sender and a LAN peer's receiver (docs/protocol.md has the byte layout).
// Eight messages: HELLO (subscribe, with the sender's bitfield and, in a
// private swarm, its token), HAVE (one more piece), PIECE (one chunk: a
// byte range of one piece, payload after an 18-byte header), DIRECT (a
// PIECE the subscriber keeps and does not forward), BYE (reason code and
// text), LISTEN (a subscriber forwards pushes on this port), PEERS (the
// seed's list of the group's forwarders) and FETCHING (a subscriber gets
// this piece over the BitTorrent wire: do not push it).
//
// Encoders write into a caller's buffer and check their own inputs. The
// decoder is incremental: Feed() bytes split anywhere, Next() returns
// NeedMore, a message or an error, and checks every field before the
// message reaches the caller.
//
// Pure: no I/O, no logging, no global state. Thread-compatible: one
// PushFrameDecoder belongs to one thread at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include "proto/result.h"

namespace swarmcast::proto {

// 2: HELLO carries a token; pieces travel in chunks of at most
// kMaxChunkLength. 3: LISTEN and PEERS, for forwarding between
// subscribers. 4: DIRECT. 5: FETCHING (docs/protocol.md, "Versions").
inline constexpr std::uint8_t kPushProtocolVersion = 5;
// length:u32, version:u8, type:u8. The length counts the bytes after itself.
inline constexpr std::size_t kFramePrefixSize = 6;
inline constexpr std::size_t kHaveFrameSize = kFramePrefixSize + 4;
// Prefix plus piece:u32 offset:u32 length:u32; the payload follows.
inline constexpr std::size_t kPieceHeaderSize = kFramePrefixSize + 12;
inline constexpr std::size_t kPeerIdSize = 20;
inline constexpr std::size_t kMaxByeTextLength = 256;
// A HELLO token's length travels in one byte.
inline constexpr std::size_t kMaxHelloTokenLength = 255;
// LISTEN: prefix plus port:u16.
inline constexpr std::size_t kListenFrameSize = kFramePrefixSize + 2;
// The most forwarders one PEERS frame lists; a PEERS frame of IPv6
// entries then stays below 20 KiB.
inline constexpr std::size_t kMaxPushPeers = 1024;
// BitTorrent's piece lengths: a power of two, at least one 16 KiB block.
inline constexpr std::uint32_t kMinPieceLength = 16u * 1024;
inline constexpr std::uint32_t kMaxPieceLength = 1u << 31;
// The most payload one PIECE frame carries: a sender cuts larger pieces
// into chunks (proto/content_layout.h), so a frame never needs more room
// than this however large the piece.
inline constexpr std::uint32_t kMaxChunkLength = 1u << 20;
// Enough for a PIECE frame that carries one whole chunk.
inline constexpr std::uint32_t kDefaultMaxFrameLength = kMaxChunkLength + (kPieceHeaderSize - 4);

enum class FrameType : std::uint8_t {
  kHello = 1,
  kHave = 2,
  kPiece = 3,
  kBye = 4,
  kListen = 5,
  kPeers = 6,
  // A PIECE frame, byte for byte, that a forwarding subscriber keeps: the
  // seed sent the piece to every subscriber lacking it (a fan-out batch),
  // so forwarding it too would only send duplicates.
  kDirect = 7,
  kFetching = 8,
};

enum class HashKind : std::uint8_t {
  kSha1 = 1,    // BitTorrent v1 info-hash, 20 bytes
  kSha256 = 2,  // BitTorrent v2 info-hash, 32 bytes
};
// 20 or 32; 0 for a value that is not a HashKind.
std::size_t InfoHashSize(HashKind kind) noexcept;

// Why a side closes. Advisory: the decoder accepts any value, so codes can
// be added without a version bump; an unknown code reads as kNormal.
enum class ByeReason : std::uint16_t {
  kNormal = 0,              // done, or no longer interested
  kProtocolError = 1,       // the other side sent a frame that failed to decode
  kInfoHashMismatch = 2,    // HELLO named a torrent this side does not serve
  kTooSlow = 3,             // the receiver kept the sender waiting too long
  kShuttingDown = 4,        // the process is stopping
  kNotAuthorized = 5,       // HELLO carried no token, or not one this side accepts
  kTooManyConnections = 6,  // a subscriber or per-address connection limit is reached
  kHelloTimeout = 7,        // no HELLO arrived in time after connecting
};

enum class PushFrameErrc {
  kFrameTooLong = 1,   // length field above FrameLimits::max_frame_length
  kFrameTooShort,      // length field below 2 (no version and type)
  kBadVersion,         // version byte is not kPushProtocolVersion
  kUnknownType,        // type byte is not a FrameType
  kLengthMismatch,     // length field disagrees with the message's fields
  kBadHashKind,        // HELLO hash_kind is not a HashKind
  kBadInfoHashLength,  // encoder: info_hash size does not match hash_kind
  kBadPieceCount,      // piece_count is 0
  kBadPieceLength,     // piece_length not a power of two >= 16 KiB
  kBadTotalSize,       // total_size not within the last piece
  kBadBitfieldLength,  // bitfield is not ceil(piece_count / 8) bytes
  kSpareBitsSet,       // bits past piece_count in the last bitfield byte
  kGeometryMismatch,   // HELLO geometry differs from the configured one
  kDuplicateHello,     // a second HELLO on one stream
  kNoGeometry,         // HAVE/FETCHING/PIECE before any geometry is known
  kIndexOutOfRange,    // piece index >= piece_count
  kEmptyPiece,         // PIECE with length 0
  kRangeOutsidePiece,  // offset + length beyond the piece's real size
  kByeTextTooLong,     // BYE text above kMaxByeTextLength bytes
  kByeTextNotUtf8,     // BYE text is not well-formed UTF-8
  kFrameAfterBye,      // bytes after a BYE frame
  kBufferTooSmall,     // encoder: output buffer shorter than the frame
  kTokenTooLong,       // encoder: HELLO token above kMaxHelloTokenLength bytes
  kBadPort,            // LISTEN or PEERS port 0
  kTooManyPeers,       // PEERS count above kMaxPushPeers
  kBadAddressFamily,   // PEERS entry family not 4 or 6
};

const std::error_category& push_frame_category() noexcept;
std::error_code make_error_code(PushFrameErrc e) noexcept;

// The shape of the shared file. Valid when piece_count >= 1, piece_length
// is a power of two >= kMinPieceLength, and the last piece holds at least
// one byte: (piece_count - 1) * piece_length < total_size <=
// piece_count * piece_length.
struct Geometry {
  std::uint32_t piece_count = 0;
  std::uint32_t piece_length = 0;
  std::uint64_t total_size = 0;

  friend bool operator==(const Geometry&, const Geometry&) = default;
};

// {} when valid, else kBadPieceCount, kBadPieceLength or kBadTotalSize.
std::error_code ValidateGeometry(const Geometry& g) noexcept;
// The real size of piece `index` of a valid geometry: piece_length, or
// what is left of total_size for the last piece. Requires index < count.
std::uint32_t PieceSize(const Geometry& g, std::uint32_t index) noexcept;
// ceil(piece_count / 8): bitfield bytes in a HELLO.
std::size_t BitfieldSize(std::uint32_t piece_count) noexcept;
// The length field of the longest HELLO for a valid geometry (SHA-256
// info-hash, longest token): the frame limit for a side that expects only
// HELLO, HAVE and BYE.
std::uint32_t MaxHelloLength(const Geometry& g) noexcept;
// The decoder's checks, for senders that want them before encoding: a
// geometry error, kIndexOutOfRange, then (range) kEmptyPiece and
// kRangeOutsidePiece.
std::error_code CheckPieceIndex(const Geometry& g, std::uint32_t piece) noexcept;
std::error_code CheckPieceRange(const Geometry& g, std::uint32_t piece, std::uint32_t offset,
                                std::uint32_t length) noexcept;

struct Hello {
  HashKind hash_kind = HashKind::kSha1;
  std::vector<std::uint8_t> info_hash;  // InfoHashSize(hash_kind) bytes
  std::array<std::uint8_t, kPeerIdSize> peer_id{};
  Geometry geometry;
  // The swarm's token (private mode), empty otherwise; at most
  // kMaxHelloTokenLength bytes of any value. A seed answers with none.
  std::string token;
  // Pieces the sender has, BitTorrent order: piece 0 is the most
  // significant bit of byte 0. Spare bits in the last byte are zero.
  std::vector<std::uint8_t> bitfield;

  friend bool operator==(const Hello&, const Hello&) = default;
};

struct Have {
  std::uint32_t piece = 0;

  friend bool operator==(const Have&, const Have&) = default;
};

// The fixed part of a PIECE frame; `length` payload bytes follow it.
struct PieceHeader {
  std::uint32_t piece = 0;
  std::uint32_t offset = 0;  // within the piece
  std::uint32_t length = 0;
  bool forward = true;  // false: a DIRECT frame

  friend bool operator==(const PieceHeader&, const PieceHeader&) = default;
};

struct Piece {
  std::uint32_t piece = 0;
  std::uint32_t offset = 0;
  // Decoded: points into the decoder's buffer, valid until the decoder's
  // next non-const call. Encoding: the bytes to send.
  std::span<const std::uint8_t> payload;
  // PIECE: a forwarding subscriber forwards it; DIRECT: it keeps it.
  bool forward = true;

  PieceHeader header() const {
    return {piece, offset, static_cast<std::uint32_t>(payload.size()), forward};
  }
  // Compares payload contents, not addresses.
  friend bool operator==(const Piece& a, const Piece& b);
};

struct Bye {
  std::uint16_t reason = static_cast<std::uint16_t>(ByeReason::kNormal);  // a ByeReason
  std::string text;  // UTF-8, at most kMaxByeTextLength bytes

  friend bool operator==(const Bye&, const Bye&) = default;
};

// Subscriber -> seed: this node forwards pushed pieces on `port`, at the
// address the seed sees on this connection.
struct Listen {
  std::uint16_t port = 0;  // not 0

  friend bool operator==(const Listen&, const Listen&) = default;
};

// One forwarder's push endpoint: an IPv4 (4 bytes) or IPv6 (16 bytes)
// address in network order, and a port.
struct PeerEndpoint {
  std::vector<std::uint8_t> address;  // 4 or 16 bytes
  std::uint16_t port = 0;             // not 0

  friend bool operator==(const PeerEndpoint&, const PeerEndpoint&) = default;
};

// Seed -> subscriber: the whole current list of the group's forwarders
// (the receiver itself left out); it replaces any earlier list.
struct Peers {
  std::vector<PeerEndpoint> peers;  // at most kMaxPushPeers

  friend bool operator==(const Peers&, const Peers&) = default;
};

// Subscriber -> sender: this node has asked BitTorrent peers for `piece`,
// so a push of it would arrive twice (libtorrent does not cancel a
// request when another path brings the block). Not a copy: the piece may
// still be lacking, and HAVE follows once it is verified.
struct Fetching {
  std::uint32_t piece = 0;

  friend bool operator==(const Fetching&, const Fetching&) = default;
};

using Message = std::variant<Hello, Have, Piece, Bye, Listen, Peers, Fetching>;

FrameType TypeOf(const Message& m) noexcept;

// ---- Encoding ------------------------------------------------------------
//
// Each encoder writes one whole frame at the start of `out` and returns the
// number of bytes written, or an error with nothing promised about `out`:
// kBufferTooSmall, or the error the decoder would report for the same
// fields. With a `geometry`, HAVE, FETCHING and PIECE indices and ranges are checked
// against it; without one only what holds for every geometry is checked
// (length > 0, offset + length <= kMaxPieceLength).
using EncodeResult = Result<std::size_t, std::error_code>;

// Bytes the frame for `m` takes (for a PIECE, header plus payload).
std::size_t EncodedSize(const Message& m) noexcept;

EncodeResult EncodeHello(const Hello& m, std::span<std::uint8_t> out);
EncodeResult EncodeHave(const Have& m, std::span<std::uint8_t> out,
                        const Geometry* geometry = nullptr);
// Only the kPieceHeaderSize header bytes, so that the payload can go out
// straight from the file (sendfile, splice, the fan-out module); a
// FanoutJob takes them as std::as_bytes(std::span(header)).
EncodeResult EncodePieceHeader(const PieceHeader& h, std::span<std::uint8_t> out,
                               const Geometry* geometry = nullptr);
EncodeResult EncodePiece(const Piece& m, std::span<std::uint8_t> out,
                         const Geometry* geometry = nullptr);
EncodeResult EncodeBye(const Bye& m, std::span<std::uint8_t> out);
EncodeResult EncodeListen(const Listen& m, std::span<std::uint8_t> out);
EncodeResult EncodePeers(const Peers& m, std::span<std::uint8_t> out);
EncodeResult EncodeFetching(const Fetching& m, std::span<std::uint8_t> out,
                            const Geometry* geometry = nullptr);
EncodeResult EncodeMessage(const Message& m, std::span<std::uint8_t> out,
                           const Geometry* geometry = nullptr);

// ---- Decoding ------------------------------------------------------------

struct FrameLimits {
  // Largest accepted value of the length field. A frame above it is
  // rejected as soon as its 4 length bytes arrive, before any body is kept.
  std::uint32_t max_frame_length = kDefaultMaxFrameLength;
};

struct NeedMore {
  friend bool operator==(NeedMore, NeedMore) = default;
};
using DecodeResult = std::variant<NeedMore, Message, std::error_code>;

// Incremental decoder for one direction of one push-channel connection.
//
// Geometry: with a configured geometry, HAVE, FETCHING and PIECE are checked against
// it and a HELLO must carry exactly it. Without one, HAVE, FETCHING and PIECE are
// rejected (kNoGeometry) until a HELLO has been decoded; that HELLO's
// geometry then applies. A second HELLO is an error either way, as is any
// byte after a BYE.
//
// Errors are sticky: once Next() has returned an error it returns the same
// error forever and input is dropped. Header fields are checked as soon as
// their bytes are in (length at 4 bytes, version and type at 6, a HELLO's
// geometry once its fixed fields are in, a PIECE's index and range at 18),
// so a bad frame never makes the decoder wait for its body.
//
// Memory: the buffer holds the unconsumed input, grown geometrically and
// compacted lazily (only when the consumed prefix is at least as long as
// what must move), so feeding a large frame in small chunks costs amortised
// O(1) per byte. It is never shrunk. Its size stays below four times the
// most bytes held at once (buffered plus one Feed/PrepareWrite request); a
// reader that drains Next() after each read keeps it within about twice
// its largest frame.
class PushFrameDecoder {
 public:
  explicit PushFrameDecoder(FrameLimits limits = {},
                            std::optional<Geometry> geometry = std::nullopt);

  // Appends bytes to the stream; they may split frames anywhere.
  void Feed(std::span<const std::uint8_t> bytes);

  // Zero-copy input: a writable region of at least `n` bytes at the end of
  // the buffered stream (a socket read goes straight into it), then
  // Commit(k) with the k <= region size bytes actually written. Any other
  // non-const call in between invalidates the region.
  std::span<std::uint8_t> PrepareWrite(std::size_t n);
  void Commit(std::size_t n);

  // The next message, NeedMore when the buffered bytes hold no whole frame
  // yet, or the error that stopped the stream. Call it until NeedMore after
  // each Feed/Commit.
  DecodeResult Next();

  // Bytes still missing before the frame in progress is complete (4 when
  // nothing is buffered); 0 when a whole frame is buffered or the stream
  // has failed. A reader can ask the socket for at least this much.
  std::size_t bytes_needed() const noexcept;

  // The geometry checks run against: the configured one, else the first
  // HELLO's, else null.
  const Geometry* geometry() const noexcept { return geometry_ ? &*geometry_ : nullptr; }
  bool hello_seen() const noexcept { return hello_seen_; }
  bool bye_seen() const noexcept { return bye_seen_; }
  bool failed() const noexcept { return static_cast<bool>(error_); }
  std::error_code error() const noexcept { return error_; }
  // Bytes of whole frames returned so far: the stream offset at which the
  // frame in progress (or the one that failed) starts.
  std::uint64_t stream_offset() const noexcept { return consumed_; }
  std::size_t buffered() const noexcept { return end_ - begin_; }
  std::size_t buffer_capacity() const noexcept { return capacity_; }

 private:
  std::error_code Fail(std::error_code ec);
  // Validates the fields of the frame at `p` that lie in its first `have`
  // bytes; `len` is its length field, already within limits.
  std::error_code CheckFrame(const std::uint8_t* p, std::size_t have, std::uint32_t len) const;
  std::error_code CheckHello(const std::uint8_t* p, std::size_t have, std::uint32_t len) const;
  std::error_code CheckPiece(const std::uint8_t* p, std::size_t have, std::uint32_t len) const;
  std::error_code CheckBye(const std::uint8_t* p, std::size_t have, std::uint32_t len) const;
  std::error_code CheckPeers(const std::uint8_t* p, std::size_t have, std::uint32_t len) const;
  Message Build(const std::uint8_t* p, std::uint32_t len);
  void MakeRoom(std::size_t n);

  FrameLimits limits_;
  std::optional<Geometry> geometry_;
  bool hello_seen_ = false;
  bool bye_seen_ = false;
  std::error_code error_;
  std::uint64_t consumed_ = 0;

  std::unique_ptr<std::uint8_t[]> buf_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;  // first unconsumed byte
  std::size_t end_ = 0;    // one past the last buffered byte
};

}  // namespace swarmcast::proto

template <>
struct std::is_error_code_enum<swarmcast::proto::PushFrameErrc> : std::true_type {};
