// A set of node ids with O(1) insert, erase and uniform random pick: the
// pools the BitTorrent model samples peers from.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace swarmcast::sim {

class IndexedSet {
 public:
  explicit IndexedSet(std::uint32_t universe) : pos_(universe, kAbsent) {}

  bool contains(std::uint32_t id) const { return pos_[id] != kAbsent; }
  void insert(std::uint32_t id) {
    if (contains(id)) return;
    pos_[id] = static_cast<std::uint32_t>(items_.size());
    items_.push_back(id);
  }
  void erase(std::uint32_t id) {
    if (!contains(id)) return;
    const std::uint32_t at = pos_[id];
    items_[at] = items_.back();
    pos_[items_[at]] = at;
    items_.pop_back();
    pos_[id] = kAbsent;
  }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::uint32_t operator[](std::size_t i) const { return items_[i]; }
  const std::vector<std::uint32_t>& items() const { return items_; }
  template <class Rng>
  std::uint32_t pick(Rng& rng) const {
    return items_[std::uniform_int_distribution<std::size_t>(0, items_.size() - 1)(rng)];
  }

 private:
  static constexpr std::uint32_t kAbsent = ~0u;
  std::vector<std::uint32_t> items_;
  std::vector<std::uint32_t> pos_;
};

// An IndexedSet over all nodes, and optionally one per rack beside it, so
// that a rack-aware choice can sample its own rack first.
class RackedSet {
 public:
  // `rack_of[id]` for every id; `racks` 0 keeps no per-rack sets.
  RackedSet(std::uint32_t universe, std::uint32_t racks, std::vector<std::uint32_t> rack_of)
      : all_(universe), rack_of_(std::move(rack_of)) {
    by_rack_.reserve(racks);
    for (std::uint32_t r = 0; r < racks; ++r) by_rack_.emplace_back(universe);
  }
  bool contains(std::uint32_t id) const { return all_.contains(id); }
  void insert(std::uint32_t id) {
    all_.insert(id);
    if (racked()) by_rack_[rack_of_[id]].insert(id);
  }
  void erase(std::uint32_t id) {
    all_.erase(id);
    if (racked()) by_rack_[rack_of_[id]].erase(id);
  }
  bool racked() const { return !by_rack_.empty(); }
  const IndexedSet& all() const { return all_; }
  const IndexedSet& rack(std::uint32_t r) const { return by_rack_[r]; }

 private:
  IndexedSet all_;
  std::vector<IndexedSet> by_rack_;
  std::vector<std::uint32_t> rack_of_;
};

}  // namespace swarmcast::sim
