// Which peers an announcing client gets back: a random subset of the swarm,
// peers in the asker's subnet first (they are the LAN hop), then others.
// Never the asker itself. Pure; the caller supplies the random numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proto/subnet.h"
#include "tracker/peer.h"

namespace swarmcast::tracker {

using proto::SubnetPrefix;

// True when both addresses are of one family and agree in the first
// prefix bits (proto::SameSubnet).
bool SameSubnet(const PeerAddress& a, const PeerAddress& b, const SubnetPrefix& prefix);

// Small, fast generator (splitmix64); not for secrets.
class PeerRng {
 public:
  explicit PeerRng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next();
  std::uint64_t Below(std::uint64_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  std::uint64_t state_;
};

// Returns up to `want` indices into `peers`. Skips index `self` (pass
// peers.size() when the asker is not in the list), stopped peers, and any
// peer at the asker's own address and port. Visits the swarm in a random
// order and looks at no more than max_scan candidates, so a huge swarm
// costs a bounded amount per announce.
std::vector<std::size_t> ChoosePeers(const std::vector<Peer>& peers, std::size_t self,
                                     const PeerAddress& asker, std::size_t want,
                                     const SubnetPrefix& prefix, PeerRng& rng,
                                     std::size_t max_scan = 4096);

}  // namespace swarmcast::tracker
