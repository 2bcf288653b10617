#include "proto/subnet.h"

#include <algorithm>

namespace swarmcast::proto {

bool SameSubnet(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                const SubnetPrefix& prefix) {
  if (a.size() != b.size() || (a.size() != 4 && a.size() != 16)) return false;
  const bool v6 = a.size() == 16;
  const int bits = std::clamp(v6 ? prefix.v6 : prefix.v4, 0, v6 ? 128 : 32);
  const int full = bits / 8;
  if (!std::equal(a.begin(), a.begin() + full, b.begin())) return false;
  const int rest = bits % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (a[full] & mask) == (b[full] & mask);
}

}  // namespace swarmcast::proto
