// What counts as one LAN, for the two places that ask: the tracker lists
// a peer's subnet neighbours first (they are the LAN hop), and a get
// subscribes to a seed's push channel only when the seed is on its subnet.
// Pure.
#pragma once

#include <cstdint>
#include <span>

namespace swarmcast::proto {

struct SubnetPrefix {
  int v4 = 24;  // bits
  int v6 = 64;
};

// True when a and b are addresses of one family (4 bytes: IPv4, 16: IPv6,
// network byte order) that agree in their first prefix bits. Addresses of
// other lengths, or of two families, are never on one subnet.
bool SameSubnet(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                const SubnetPrefix& prefix = {});

}  // namespace swarmcast::proto
