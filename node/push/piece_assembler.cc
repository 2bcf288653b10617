#include "node/push/piece_assembler.h"

#include <algorithm>
#include <cstring>

namespace swarmcast::push {

PieceAssembler::PieceAssembler(std::shared_ptr<const proto::ContentLayout> layout)
    : layout_(std::move(layout)) {}

std::uint32_t PieceAssembler::piece_bytes(std::uint32_t piece) const {
  return proto::PieceSize(layout_->geometry(), piece);
}

PieceAssembler::AddResult PieceAssembler::Add(const proto::Piece& chunk, Clock::time_point now) {
  // The decoder bounds a payload by its frame limit, far below 2^32.
  const auto length = static_cast<std::uint32_t>(chunk.payload.size());
  if (std::error_code ec = layout_->CheckChunk(chunk.piece, chunk.offset, length)) {
    return Unexpected(ec);
  }
  const std::uint32_t begin = chunk.offset;
  const std::uint32_t end = begin + length;
  auto [it, fresh] = partial_.try_emplace(chunk.piece);
  Partial& p = it->second;
  if (fresh) {
    // Zeros: the bytes of pad files stay as they are.
    p.data.assign(piece_bytes(chunk.piece), 0);
    p.needed = layout_->DataBytes(chunk.piece);
  }
  // The first range that ends after `begin`; ranges are disjoint, so they
  // are sorted by their ends too.
  auto next = std::partition_point(p.ranges.begin(), p.ranges.end(),
                                   [begin](const auto& r) { return r.second <= begin; });
  if (next != p.ranges.end() && next->first < end) {
    return Unexpected(make_error_code(proto::ChunkErrc::kOverlapsReceived));
  }
  std::memcpy(p.data.data() + begin, chunk.payload.data(), length);
  const bool joins_prev = next != p.ranges.begin() && std::prev(next)->second == begin;
  const bool joins_next = next != p.ranges.end() && next->first == end;
  if (joins_prev && joins_next) {
    std::prev(next)->second = next->second;
    p.ranges.erase(next);
  } else if (joins_prev) {
    std::prev(next)->second = end;
  } else if (joins_next) {
    next->first = begin;
  } else {
    p.ranges.insert(next, {begin, end});
  }
  p.received += length;
  p.last = now;
  p.forward = p.forward && chunk.forward;
  if (p.received < p.needed) return std::optional<WholePiece>();
  WholePiece whole{chunk.piece, std::move(p.data), p.forward};
  partial_.erase(it);
  return std::optional<WholePiece>(std::move(whole));
}

std::uint64_t PieceAssembler::Expire(Clock::time_point cutoff) {
  std::uint64_t freed = 0;
  for (auto it = partial_.begin(); it != partial_.end();) {
    if (it->second.last < cutoff) {
      freed += it->second.data.size();
      it = partial_.erase(it);
    } else {
      ++it;
    }
  }
  return freed;
}

std::uint64_t PieceAssembler::Drop(std::uint32_t piece) {
  auto it = partial_.find(piece);
  if (it == partial_.end()) return 0;
  const std::uint64_t freed = it->second.data.size();
  partial_.erase(it);
  return freed;
}

std::uint64_t PieceAssembler::Clear() {
  std::uint64_t freed = 0;
  for (const auto& [piece, p] : partial_) freed += p.data.size();
  partial_.clear();
  return freed;
}

}  // namespace swarmcast::push
