// How a torrent's pieces lie over its files, and how the push channel cuts
// a piece into chunks (docs/protocol.md, "Chunks"): at most kMaxChunkLength
// bytes each, never across a file boundary, never inside a pad file (BEP 47
// pad files are zeros that no side stores or sends; a receiver fills them
// in itself). The seed reads each chunk from one file at one offset, so a
// fan-out call sends it straight from that file; the receiver refuses any
// chunk that breaks these rules.
//
// The file list comes from the torrent (node/torrent_layout.h reads it with
// libtorrent's own parse, so both agree on where every byte goes). Pure: no
// I/O. Immutable after Make(); safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "proto/push_frame.h"
#include "proto/result.h"

namespace swarmcast::proto {

struct LayoutFile {
  // Relative to the directory that holds the content: "name" for a
  // single-file torrent, "name/dir/file" otherwise. Not used for pad files.
  std::string path;
  std::uint64_t size = 0;
  bool pad = false;

  friend bool operator==(const LayoutFile&, const LayoutFile&) = default;
};

// One chunk of a piece, and where its bytes are in the files.
struct Chunk {
  std::uint32_t file = 0;  // index into ContentLayout::files()
  std::uint64_t file_offset = 0;
  std::uint32_t piece_offset = 0;
  std::uint32_t length = 0;  // > 0

  friend bool operator==(const Chunk&, const Chunk&) = default;
};

enum class ChunkErrc {
  kOutsidePiece = 1,     // the range leaves the piece (or the index is out of range)
  kCrossesFileBoundary,  // the range spans two files
  kInPadFile,            // the range lies in a pad file
  kOverlapsReceived,     // receiver: bytes of the piece already received
};
const std::error_category& chunk_category() noexcept;
std::error_code make_error_code(ChunkErrc e) noexcept;

class ContentLayout {
 public:
  // `files` in torrent order (empty files and pad files included); their
  // sizes must add up to the geometry's total size. Fails with what is
  // wrong.
  static Result<ContentLayout, std::string> Make(const Geometry& geometry,
                                                 std::vector<LayoutFile> files);
  // A single file holding the whole content: `path` of geometry.total_size.
  static Result<ContentLayout, std::string> SingleFile(const Geometry& geometry, std::string path);

  const Geometry& geometry() const { return geometry_; }
  const std::vector<LayoutFile>& files() const { return files_; }
  std::uint64_t file_start(std::uint32_t file) const { return starts_[file]; }

  // Piece `piece` (< piece_count) as chunks of at most `max_chunk` bytes,
  // in order; empty when the piece is all pad bytes.
  std::vector<Chunk> ChunksOf(std::uint32_t piece, std::uint32_t max_chunk = kMaxChunkLength) const;
  // The bytes of `piece` that lie in real files: what a receiver must get
  // before the piece is whole.
  std::uint32_t DataBytes(std::uint32_t piece) const;
  // {} when bytes [offset, offset + length) of `piece` lie inside the
  // piece and inside one file that is not a pad file; else the ChunkErrc.
  std::error_code CheckChunk(std::uint32_t piece, std::uint32_t offset, std::uint32_t length) const;
  // The non-pad file ranges that torrent bytes [offset, offset + length)
  // cover, as chunks with piece_offset 0 (for read-ahead).
  std::vector<Chunk> FileRanges(std::uint64_t offset, std::uint64_t length) const;

 private:
  ContentLayout() = default;
  // The file holding torrent byte `offset` (< total size): never an empty
  // file, since one that starts there ends there too.
  std::uint32_t FileAt(std::uint64_t offset) const;

  Geometry geometry_;
  std::vector<LayoutFile> files_;
  std::vector<std::uint64_t> starts_;  // torrent offset of each file
};

}  // namespace swarmcast::proto

template <>
struct std::is_error_code_enum<swarmcast::proto::ChunkErrc> : std::true_type {};
