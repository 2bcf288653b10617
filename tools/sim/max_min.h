// Max-min fair rates for flows that share links: progressive filling
// (water-filling). Every flow's rate rises at the same pace until some link
// is full; the flows through that link are frozen at its fair share, and
// the rest keep rising. The result is the allocation TCP flows converge to
// when each link is shared fairly among the flows crossing it (the usual
// fluid model of TCP; no RTT bias, no slow start).
//
// Pure function of its input; no state between calls.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace swarmcast::sim {

using LinkId = std::uint32_t;

// One flow: the links it crosses (at most kMaxPathLinks, no repeats).
inline constexpr int kMaxPathLinks = 4;
struct FlowPath {
  LinkId links[kMaxPathLinks] = {};
  std::uint8_t count = 0;

  // A path over these links, in order (at most kMaxPathLinks are kept).
  static FlowPath Of(std::initializer_list<LinkId> links) {
    FlowPath p;
    for (LinkId l : links) {
      if (p.count < kMaxPathLinks) p.links[p.count++] = l;
    }
    return p;
  }
};

// rates[i] = the max-min fair rate of flows[i], in the unit of `capacity`.
// A link with capacity 0 gives its flows rate 0. Runs in
// O((F * path length) * log L).
std::vector<double> SolveMaxMin(std::span<const double> capacity, std::span<const FlowPath> flows);

}  // namespace swarmcast::sim
