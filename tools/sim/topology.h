// The network a distribution runs on: every node's access link (up and
// down, each a link of its own: full duplex), and optionally racks, each
// behind one uplink and one downlink to a non-blocking spine.
//
// Node 0 is the seed. Without racks the fabric is non-blocking: a flow
// crosses its sender's uplink and its receiver's downlink only. With racks
// of `rack_size` nodes (node i is in rack i / rack_size, the seed in rack 0),
// a flow between two racks also crosses the sender's rack uplink and the
// receiver's rack downlink.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/sim/max_min.h"

namespace swarmcast::sim {

struct TopologySpec {
  std::vector<double> up;       // bytes/s per node, index 0 the seed
  std::vector<double> down;     // bytes/s per node
  std::uint32_t rack_size = 0;  // 0: no racks
  double rack_uplink = 0;       // bytes/s each way per rack (with racks)
};

class Topology {
 public:
  explicit Topology(const TopologySpec& spec);

  std::uint32_t nodes() const { return nodes_; }
  std::uint32_t racks() const { return racks_; }
  std::uint32_t rack(std::uint32_t node) const { return rack_size_ ? node / rack_size_ : 0; }
  FlowPath Path(std::uint32_t src, std::uint32_t dst) const;
  // Capacity of every link, indexed by LinkId.
  const std::vector<double>& capacity() const { return capacity_; }

 private:
  LinkId Up(std::uint32_t n) const { return 2 * n; }
  LinkId Down(std::uint32_t n) const { return 2 * n + 1; }
  LinkId RackUp(std::uint32_t r) const { return 2 * nodes_ + 2 * r; }
  LinkId RackDown(std::uint32_t r) const { return 2 * nodes_ + 2 * r + 1; }

  std::uint32_t nodes_;
  std::uint32_t rack_size_;
  std::uint32_t racks_;
  std::vector<double> capacity_;
};

}  // namespace swarmcast::sim
