#include "tools/sim/topology.h"

namespace swarmcast::sim {

Topology::Topology(const TopologySpec& spec)
    : nodes_(static_cast<std::uint32_t>(spec.up.size())),
      rack_size_(spec.rack_size),
      racks_(spec.rack_size ? (nodes_ + spec.rack_size - 1) / spec.rack_size : 0) {
  capacity_.resize(2 * nodes_ + 2 * racks_);
  for (std::uint32_t n = 0; n < nodes_; ++n) {
    capacity_[Up(n)] = spec.up[n];
    capacity_[Down(n)] = spec.down[n];
  }
  for (std::uint32_t r = 0; r < racks_; ++r) {
    capacity_[RackUp(r)] = spec.rack_uplink;
    capacity_[RackDown(r)] = spec.rack_uplink;
  }
}

FlowPath Topology::Path(std::uint32_t src, std::uint32_t dst) const {
  FlowPath p;
  p.links[p.count++] = Up(src);
  if (racks_ && rack(src) != rack(dst)) {
    p.links[p.count++] = RackUp(rack(src));
    p.links[p.count++] = RackDown(rack(dst));
  }
  p.links[p.count++] = Down(dst);
  return p;
}

}  // namespace swarmcast::sim
