#include "node/push/piece_frames.h"

namespace swarmcast::push {

FanoutJob PieceFrames::job(std::size_t i) const {
  const Frame& f = frames[i];
  return FanoutJob{f.file->get(), f.file_offset, f.length, std::as_bytes(std::span(f.header))};
}

Result<std::shared_ptr<const PieceFrames>, std::string> PieceFrames::Make(ContentFiles& files,
                                                                          std::uint32_t piece,
                                                                          bool forward,
                                                                          std::uint32_t max_chunk) {
  auto out = std::make_shared<PieceFrames>();
  out->piece = piece;
  const proto::Geometry& g = files.layout().geometry();
  for (const proto::Chunk& c : files.layout().ChunksOf(piece, max_chunk)) {
    auto fd = files.Open(c.file);
    if (!fd) return Unexpected(fd.error());
    Frame f;
    f.file = std::move(*fd);
    f.file_offset = c.file_offset;
    f.length = c.length;
    if (auto ec =
            proto::EncodePieceHeader({piece, c.piece_offset, c.length, forward}, f.header, &g);
        !ec.ok()) {
      return Unexpected("piece " + std::to_string(piece) + ": " + ec.error().message());
    }
    out->payload_bytes += c.length;
    out->frames.push_back(std::move(f));
  }
  return std::shared_ptr<const PieceFrames>(std::move(out));
}

}  // namespace swarmcast::push
