#include "proto/content_layout.h"

#include <algorithm>

namespace swarmcast::proto {
namespace {

class ChunkCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "chunk"; }
  std::string message(int ev) const override {
    switch (static_cast<ChunkErrc>(ev)) {
      case ChunkErrc::kOutsidePiece:
        return "chunk outside its piece";
      case ChunkErrc::kCrossesFileBoundary:
        return "chunk crosses a file boundary";
      case ChunkErrc::kInPadFile:
        return "chunk inside a pad file";
      case ChunkErrc::kOverlapsReceived:
        return "chunk overlaps bytes of its piece already received";
    }
    return "unknown chunk error";
  }
};

}  // namespace

const std::error_category& chunk_category() noexcept {
  static const ChunkCategory category;
  return category;
}

std::error_code make_error_code(ChunkErrc e) noexcept {
  return {static_cast<int>(e), chunk_category()};
}

Result<ContentLayout, std::string> ContentLayout::Make(const Geometry& geometry,
                                                       std::vector<LayoutFile> files) {
  if (std::error_code ec = ValidateGeometry(geometry)) {
    return Unexpected("bad geometry: " + ec.message());
  }
  if (files.empty()) return Unexpected(std::string("no files"));
  if (files.size() > std::uint64_t{UINT32_MAX}) return Unexpected(std::string("too many files"));
  ContentLayout l;
  l.geometry_ = geometry;
  l.starts_.reserve(files.size());
  std::uint64_t at = 0;
  for (const LayoutFile& f : files) {
    if (f.size > geometry.total_size - at) {
      return Unexpected(std::string("the files hold more bytes than the torrent"));
    }
    l.starts_.push_back(at);
    at += f.size;
  }
  if (at != geometry.total_size) {
    return Unexpected("the files hold " + std::to_string(at) + " bytes, the torrent " +
                      std::to_string(geometry.total_size));
  }
  l.files_ = std::move(files);
  return l;
}

Result<ContentLayout, std::string> ContentLayout::SingleFile(const Geometry& geometry,
                                                             std::string path) {
  return Make(geometry, {LayoutFile{std::move(path), geometry.total_size, false}});
}

std::uint32_t ContentLayout::FileAt(std::uint64_t offset) const {
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  return static_cast<std::uint32_t>(it - starts_.begin() - 1);
}

std::vector<Chunk> ContentLayout::FileRanges(std::uint64_t offset, std::uint64_t length) const {
  std::vector<Chunk> out;
  const std::uint64_t end = std::min(geometry_.total_size, offset + length);
  if (offset >= end) return out;
  for (std::uint32_t f = FileAt(offset); f < files_.size() && starts_[f] < end; ++f) {
    const std::uint64_t from = std::max(offset, starts_[f]);
    const std::uint64_t to = std::min(end, starts_[f] + files_[f].size);
    if (files_[f].pad || from >= to) continue;
    // A piece is at most 2^31 bytes, so a range of one fits 32 bits; read
    // ahead asks for a few pieces and cuts at file boundaries anyway.
    for (std::uint64_t at = from; at < to;) {
      const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(to - at, 1u << 31));
      out.push_back({f, at - starts_[f], 0, n});
      at += n;
    }
  }
  return out;
}

std::vector<Chunk> ContentLayout::ChunksOf(std::uint32_t piece, std::uint32_t max_chunk) const {
  const std::uint64_t begin = std::uint64_t{piece} * geometry_.piece_length;
  std::vector<Chunk> out;
  for (const Chunk& range : FileRanges(begin, PieceSize(geometry_, piece))) {
    const std::uint64_t range_start = starts_[range.file] + range.file_offset;
    for (std::uint32_t done = 0; done < range.length;) {
      const std::uint32_t n = std::min(max_chunk, range.length - done);
      out.push_back({range.file, range.file_offset + done,
                     static_cast<std::uint32_t>(range_start + done - begin), n});
      done += n;
    }
  }
  return out;
}

std::uint32_t ContentLayout::DataBytes(std::uint32_t piece) const {
  std::uint32_t n = 0;
  const std::uint64_t begin = std::uint64_t{piece} * geometry_.piece_length;
  for (const Chunk& range : FileRanges(begin, PieceSize(geometry_, piece))) n += range.length;
  return n;
}

std::error_code ContentLayout::CheckChunk(std::uint32_t piece, std::uint32_t offset,
                                          std::uint32_t length) const {
  if (piece >= geometry_.piece_count || length == 0 ||
      std::uint64_t{offset} + length > PieceSize(geometry_, piece)) {
    return ChunkErrc::kOutsidePiece;
  }
  const std::uint64_t at = std::uint64_t{piece} * geometry_.piece_length + offset;
  const std::uint32_t f = FileAt(at);
  if (files_[f].pad) return ChunkErrc::kInPadFile;
  if (at + length > starts_[f] + files_[f].size) return ChunkErrc::kCrossesFileBoundary;
  return {};
}

}  // namespace swarmcast::proto
