// Chunk assembly fuzzer: what a push receiver does with chunks from the
// network. Input: byte 0 picks the piece length (16 or 32 KiB), byte 1
// the file count (1..8), then per file 3 bytes: its size (17 bits) and,
// in the high bit, whether it is a pad file; the rest is chunks of 7 bytes each (piece, offset:u24,
// length:u16 + 1, byte 6 unused but for variety of the payload). It checks
// that
//  - the layout's own chunks of every piece pass its checks, cover exactly
//    the piece's data bytes, and assemble the piece, pad bytes zero;
//  - a chunk is refused exactly when it breaks the layout's rules or
//    overlaps what its piece already has, and nothing refused is kept;
//  - every piece assembled holds exactly the content's bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "node/push/piece_assembler.h"

using namespace swarmcast;

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

// The content as the torrent's byte stream: zero in pad files.
std::vector<std::uint8_t> ContentOf(const proto::ContentLayout& l) {
  std::vector<std::uint8_t> out(l.geometry().total_size, 0);
  for (std::uint32_t f = 0; f < l.files().size(); ++f) {
    if (l.files()[f].pad) continue;
    for (std::uint64_t i = 0; i < l.files()[f].size; ++i) {
      const std::uint64_t at = l.file_start(f) + i;
      out[at] = static_cast<std::uint8_t>((at * 2654435761u) >> 13);
    }
  }
  return out;
}

std::span<const std::uint8_t> Slice(const std::vector<std::uint8_t>& content,
                                    const proto::Geometry& g, std::uint32_t piece,
                                    std::uint32_t offset, std::uint32_t length) {
  return std::span(content).subspan(std::uint64_t{piece} * g.piece_length + offset, length);
}

void CheckWhole(const std::vector<std::uint8_t>& content, const proto::Geometry& g,
                const push::PieceAssembler::WholePiece& w) {
  const std::uint32_t n = proto::PieceSize(g, w.piece);
  Check(w.data.size() == n);
  Check(std::memcmp(w.data.data(), Slice(content, g, w.piece, 0, n).data(), n) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint32_t piece_length = 16384u << (data[0] & 1);
  const std::size_t files = 1 + data[1] % 8;
  if (size < 2 + 3 * files) return 0;
  std::vector<proto::LayoutFile> list;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < files; ++i) {
    const std::uint8_t* f = data + 2 + 3 * i;
    // At most 128 KiB a file, so that one run stays fast.
    const std::uint64_t bytes =
        (std::uint64_t{f[0]} & 0x01) << 16 | std::uint64_t{f[1]} << 8 | f[2];
    list.push_back({"f" + std::to_string(i), bytes, (f[0] & 0x80) != 0});
    total += bytes;
  }
  if (total == 0) return 0;
  const proto::Geometry g{static_cast<std::uint32_t>((total + piece_length - 1) / piece_length),
                          piece_length, total};
  auto made = proto::ContentLayout::Make(g, list);
  Check(made.ok());
  auto layout = std::make_shared<const proto::ContentLayout>(std::move(*made));
  const std::vector<std::uint8_t> content = ContentOf(*layout);
  const auto now = push::PieceAssembler::Clock::now();

  // The layout's own chunks, at a small chunk size so that pieces have
  // several.
  push::PieceAssembler own(layout);
  for (std::uint32_t p = 0; p < g.piece_count; ++p) {
    std::uint64_t covered = 0;
    const auto chunks = layout->ChunksOf(p, 4096);
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const proto::Chunk& c = chunks[i];
      Check(c.length > 0 && c.length <= 4096);
      Check(!layout->CheckChunk(p, c.piece_offset, c.length));
      Check(std::uint64_t{p} * piece_length + c.piece_offset ==
            layout->file_start(c.file) + c.file_offset);
      covered += c.length;
      auto r = own.Add({p, c.piece_offset, Slice(content, g, p, c.piece_offset, c.length)}, now);
      Check(r.ok());
      Check(r->has_value() == (i + 1 == chunks.size()));
      if (*r) CheckWhole(content, g, **r);
    }
    Check(covered == layout->DataBytes(p));
  }
  Check(own.partial_pieces() == 0);

  // Chunks as a hostile or confused sender might send them.
  push::PieceAssembler a(layout);
  std::vector<std::vector<bool>> got(g.piece_count);
  for (std::size_t at = 2 + 3 * files; at + 7 <= size; at += 7) {
    const std::uint8_t* c = data + at;
    const std::uint32_t piece = c[0] % (g.piece_count + 1);  // one past the end too
    const std::uint32_t offset = (std::uint32_t{c[1]} << 16) | (c[2] << 8) | c[3];
    const std::uint32_t length = ((std::uint32_t{c[4]} << 8) | c[5]) + 1;
    const bool fits = !layout->CheckChunk(piece, offset, length);
    bool overlaps = false;
    if (fits) {
      if (got[piece].empty()) got[piece].assign(proto::PieceSize(g, piece), false);
      for (std::uint32_t i = 0; i < length; ++i) overlaps = overlaps || got[piece][offset + i];
    }
    const std::vector<std::uint8_t> junk(fits ? 0 : length, c[6]);
    auto r = a.Add({piece, offset, fits ? Slice(content, g, piece, offset, length) : junk}, now);
    Check(r.ok() == (fits && !overlaps));
    if (!r.ok()) continue;
    for (std::uint32_t i = 0; i < length; ++i) got[piece][offset + i] = true;
    if (*r) {
      CheckWhole(content, g, **r);
      got[piece].clear();  // a new copy of the piece may start
    }
  }
  return 0;
}
