// PieceFrames: the PIECE frames that carry one piece over the push channel,
// one per chunk (proto/content_layout.h): each an 18-byte header and a
// range of one content file, which a fan-out backend sends straight from
// the file. Built once per batch and shared, immutable, by every subscriber
// the batch goes to, each at its own frame and progress.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "node/push/content_files.h"
#include "node/push/fanout_backend.h"
#include "proto/push_frame.h"
#include "proto/result.h"

namespace swarmcast::push {

struct PieceFrames {
  struct Frame {
    std::array<std::uint8_t, proto::kPieceHeaderSize> header{};
    ContentFiles::Fd file;
    std::uint64_t file_offset = 0;
    std::uint32_t length = 0;
  };

  std::uint32_t piece = 0;
  std::vector<Frame> frames;        // empty for a piece of pad bytes only
  std::uint64_t payload_bytes = 0;  // what the frames carry

  FanoutJob job(std::size_t frame) const;

  // The frames of `piece`, with its files open; or why a file cannot be.
  // `forward`: PIECE frames, else DIRECT (proto/push_frame.h); each
  // carries at most `max_chunk` bytes.
  static Result<std::shared_ptr<const PieceFrames>, std::string> Make(
      ContentFiles& files, std::uint32_t piece, bool forward,
      std::uint32_t max_chunk = proto::kMaxChunkLength);
};

}  // namespace swarmcast::push
