// PieceAssembler: whole pieces from the PIECE chunks of one push sender.
//
// Each chunk is checked against the torrent's layout (proto/content_layout.h:
// inside its piece, inside one file, not in a pad file) and against what
// has arrived of its piece (no byte twice); a piece is whole once every
// byte outside pad files is in, pad bytes being zero. Chunks of several
// pieces may interleave. Each piece being assembled holds one buffer of
// the piece's size, allocated by its first chunk: the caller reserves that
// room in its budget first (Starts() says when a chunk needs it) and gets
// it back with the piece, or from Expire() for a piece that stopped
// arriving.
//
// Pure (the caller passes the time); not thread-safe: the push receive
// thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "proto/content_layout.h"
#include "proto/push_frame.h"
#include "proto/result.h"

namespace swarmcast::push {

class PieceAssembler {
 public:
  using Clock = std::chrono::steady_clock;
  struct WholePiece {
    std::uint32_t piece = 0;
    std::vector<char> data;  // PieceSize bytes
    // Every chunk came as PIECE, none as DIRECT: a forwarder forwards it.
    bool forward = true;
  };
  // A whole piece when this chunk completed one, else nothing; or the
  // ChunkErrc that refuses the chunk (nothing is kept of it).
  using AddResult = Result<std::optional<WholePiece>, std::error_code>;

  explicit PieceAssembler(std::shared_ptr<const proto::ContentLayout> layout);

  // Whether a chunk of `piece` starts a new buffer (the piece is not being
  // assembled yet); it then takes piece_bytes(piece) of room.
  bool Starts(std::uint32_t piece) const { return !partial_.contains(piece); }
  std::uint32_t piece_bytes(std::uint32_t piece) const;
  AddResult Add(const proto::Piece& chunk, Clock::time_point now);

  // Drops every piece that got no chunk since `cutoff`; returns the room
  // their buffers held.
  std::uint64_t Expire(Clock::time_point cutoff);
  // Drops `piece` if it is being assembled (it came by another path);
  // returns the room it held.
  std::uint64_t Drop(std::uint32_t piece);
  // Drops everything; returns the room it held.
  std::uint64_t Clear();
  std::size_t partial_pieces() const { return partial_.size(); }

 private:
  struct Partial {
    std::vector<char> data;
    // Received byte ranges [first, second), sorted, never touching.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
    std::uint32_t received = 0;
    std::uint32_t needed = 0;  // DataBytes of the piece
    Clock::time_point last{};
    bool forward = true;
  };

  std::shared_ptr<const proto::ContentLayout> layout_;
  std::map<std::uint32_t, Partial> partial_;
};

}  // namespace swarmcast::push
