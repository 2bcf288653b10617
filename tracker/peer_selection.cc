#include "tracker/peer_selection.h"

#include <algorithm>
#include <numeric>

namespace swarmcast::tracker {

bool SameSubnet(const PeerAddress& a, const PeerAddress& b, const SubnetPrefix& prefix) {
  const std::size_t length = a.v6 ? 16 : 4;
  return a.v6 == b.v6 &&
         proto::SameSubnet(std::span(a.ip).first(length), std::span(b.ip).first(length), prefix);
}

std::uint64_t PeerRng::Next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<std::size_t> ChoosePeers(const std::vector<Peer>& peers, std::size_t self,
                                     const PeerAddress& asker, std::size_t want,
                                     const SubnetPrefix& prefix, PeerRng& rng,
                                     std::size_t max_scan) {
  std::vector<std::size_t> local, remote;
  const std::size_t n = peers.size();
  if (n == 0 || want == 0) return local;
  // A random start and a random step coprime with n walk every index once
  // in a shuffled-looking order without allocating a permutation.
  std::size_t start = rng.Below(n);
  std::size_t step = 1;
  if (n > 2) {
    do {
      step = 1 + rng.Below(n - 1);
    } while (std::gcd(step, n) != 1);
  }
  local.reserve(std::min(want, n));
  for (std::size_t i = 0, j = start; i < n && local.size() < want; ++i, j = (j + step) % n) {
    if (i >= max_scan && local.size() + remote.size() >= want) break;
    const Peer& p = peers[j];
    if (j == self || p.stopped || p.addr == asker) continue;
    if (SameSubnet(p.addr, asker, prefix)) {
      local.push_back(j);
    } else if (remote.size() < want) {
      remote.push_back(j);
    }
  }
  for (std::size_t r : remote) {
    if (local.size() >= want) break;
    local.push_back(r);
  }
  return local;
}

}  // namespace swarmcast::tracker
