// Push-channel decoder fuzzer. Input: byte 0 picks the configuration (frame
// limit, geometry, largest chunk), byte 1 seeds the chunk sizes, the rest is
// the stream. For both a configured geometry and none, it checks that
//  - feeding the stream in chunks (Feed or PrepareWrite/Commit) gives the
//    same messages, error and stream offset as feeding it whole;
//  - every decoded message re-encodes to exactly the bytes it came from
//    (the format has one byte form per message), and those bytes decode
//    back to the same messages.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <list>
#include <optional>
#include <span>
#include <vector>

#include "proto/push_frame.h"

using namespace swarmcast::proto;

namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr Geometry kGeometries[] = {
    {10, 16384, 150000},      // short last piece
    {1, 16384, 1},            // one piece of one byte
    {3, 1u << 20, 2621440},   // 1 MiB pieces
    {16, 16384, 16 * 16384},  // full last piece, two whole bitfield bytes
};
constexpr std::uint32_t kLimits[] = {kDefaultMaxFrameLength, 1u << 16, 64, 10};
constexpr std::size_t kMaxChunks[] = {1, 7, 64, 4096};

void Check(bool ok) {
  if (!ok) std::abort();
}

// Decoder output with PIECE payloads copied out of the decoder's buffer.
struct Outcome {
  std::vector<Message> messages;
  std::list<Bytes> payloads;
  std::error_code error;
  std::uint64_t offset = 0;
};

void Drain(PushFrameDecoder& d, Outcome& o) {
  for (;;) {
    DecodeResult r = d.Next();
    if (std::holds_alternative<NeedMore>(r)) {
      Check(d.bytes_needed() > 0);
      return;
    }
    if (auto* ec = std::get_if<std::error_code>(&r)) {
      Check(*ec && d.failed() && d.error() == *ec);
      Check(ec->category() == push_frame_category());
      (void)ec->message();
      o.error = *ec;
      // Sticky.
      Check(std::get<std::error_code>(d.Next()) == *ec);
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

Outcome DecodeWhole(std::span<const std::uint8_t> stream, FrameLimits limits,
                    std::optional<Geometry> g) {
  PushFrameDecoder d(limits, g);
  Outcome o;
  d.Feed(stream);
  Drain(d, o);
  o.offset = d.stream_offset();
  Check(o.offset <= stream.size());
  return o;
}

Outcome DecodeChunked(std::span<const std::uint8_t> stream, FrameLimits limits,
                      std::optional<Geometry> g, std::uint32_t seed, std::size_t max_chunk) {
  PushFrameDecoder d(limits, g);
  Outcome o;
  std::uint32_t x = seed;
  for (std::size_t at = 0; at < stream.size();) {
    x = x * 1103515245u + 12345u;
    const std::size_t n = std::min<std::size_t>(1 + (x >> 8) % max_chunk, stream.size() - at);
    if (x & 0x80000000u) {
      std::span<std::uint8_t> room = d.PrepareWrite(n);
      Check(room.size() >= n);
      std::memcpy(room.data(), stream.data() + at, n);
      d.Commit(n);
    } else {
      d.Feed(stream.subspan(at, n));
    }
    at += n;
    Check(d.buffered() <= d.buffer_capacity());
    Drain(d, o);
    if (o.error) break;
  }
  o.offset = d.stream_offset();
  return o;
}

bool SameMessages(const Outcome& a, const Outcome& b) {
  if (a.messages.size() != b.messages.size()) return false;
  for (std::size_t i = 0; i < a.messages.size(); ++i) {
    if (!(a.messages[i] == b.messages[i])) return false;
  }
  return true;
}

void RunOne(std::span<const std::uint8_t> stream, FrameLimits limits, std::optional<Geometry> g,
            std::uint32_t seed, std::size_t max_chunk) {
  const Outcome whole = DecodeWhole(stream, limits, g);
  const Outcome chunked = DecodeChunked(stream, limits, g, seed, max_chunk);
  Check(SameMessages(whole, chunked));
  Check(whole.error == chunked.error);
  Check(whole.offset == chunked.offset);

  // The geometry HAVE and PIECE were checked against: the configured one or
  // the HELLO's, which comes first.
  std::optional<Geometry> used = g;
  Bytes again;
  for (const Message& m : whole.messages) {
    if (const auto* h = std::get_if<Hello>(&m); h && !used) used = h->geometry;
    Bytes frame(EncodedSize(m));
    EncodeResult r = EncodeMessage(m, frame, used ? &*used : nullptr);
    Check(r.ok() && *r == frame.size());
    again.insert(again.end(), frame.begin(), frame.end());
  }
  Check(again.size() == whole.offset);
  Check(again.empty() || std::memcmp(again.data(), stream.data(), again.size()) == 0);
  const Outcome redecoded = DecodeWhole(again, limits, g);
  Check(!redecoded.error && SameMessages(whole, redecoded));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t config = data[0];
  const std::uint32_t seed = data[1] * 0x9E3779B9u;
  const std::span<const std::uint8_t> stream(data + 2, size - 2);
  const FrameLimits limits{kLimits[config & 3]};
  const Geometry& geometry = kGeometries[(config >> 2) & 3];
  const std::size_t max_chunk = kMaxChunks[(config >> 4) & 3];
  RunOne(stream, limits, geometry, seed, max_chunk);
  RunOne(stream, limits, std::nullopt, seed, max_chunk);
  return 0;
}
