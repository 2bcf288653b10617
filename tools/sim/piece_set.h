// A set of piece indices as a bitset, read a word (64 pieces) at a time by
// the BitTorrent model's queries.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace swarmcast::sim {

class PieceSet {
 public:
  PieceSet() = default;
  explicit PieceSet(std::uint32_t pieces) : pieces_(pieces), words_((pieces + 63) / 64, 0) {}

  bool test(std::uint32_t p) const { return (words_[p / 64] >> (p % 64)) & 1; }
  void set(std::uint32_t p) { words_[p / 64] |= std::uint64_t{1} << (p % 64); }
  void reset(std::uint32_t p) { words_[p / 64] &= ~(std::uint64_t{1} << (p % 64)); }
  std::size_t words() const { return words_.size(); }
  std::uint64_t word(std::size_t i) const { return words_[i]; }
  // The bits of word i that are pieces (the last word may be partly past
  // the end).
  std::uint64_t valid(std::size_t i) const {
    const std::uint32_t left = pieces_ - static_cast<std::uint32_t>(i * 64);
    return left >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << left) - 1;
  }

 private:
  std::uint32_t pieces_ = 0;
  std::vector<std::uint64_t> words_;
};

}  // namespace swarmcast::sim
