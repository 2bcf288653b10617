// A set of piece indices as a bitset, with the one combined query the
// BitTorrent model asks all the time: which pieces one node has that
// another lacks and is not already getting.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace swarmcast::sim {

class PieceSet {
 public:
  PieceSet() = default;
  explicit PieceSet(std::uint32_t pieces) : words_((pieces + 63) / 64, 0) {}

  bool test(std::uint32_t p) const { return (words_[p / 64] >> (p % 64)) & 1; }
  void set(std::uint32_t p) { words_[p / 64] |= std::uint64_t{1} << (p % 64); }
  void reset(std::uint32_t p) { words_[p / 64] &= ~(std::uint64_t{1} << (p % 64)); }
  std::size_t words() const { return words_.size(); }
  std::uint64_t word(std::size_t i) const { return words_[i]; }

 private:
  std::vector<std::uint64_t> words_;
};

// Word i of `have & ~(lacks_a | lacks_b | lacks_c)`: pieces in `have` that
// are in none of the other three.
inline std::uint64_t Wanted(const PieceSet& have, const PieceSet& a, const PieceSet& b,
                            const PieceSet& c, std::size_t i) {
  return have.word(i) & ~(a.word(i) | b.word(i) | c.word(i));
}

}  // namespace swarmcast::sim
