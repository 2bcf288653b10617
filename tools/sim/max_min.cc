#include "tools/sim/max_min.h"

#include <algorithm>
#include <queue>
#include <utility>

namespace swarmcast::sim {

std::vector<double> SolveMaxMin(std::span<const double> capacity, std::span<const FlowPath> flows) {
  const std::size_t links = capacity.size();
  std::vector<double> rates(flows.size(), 0.0);
  if (flows.empty()) return rates;

  // Flows by link (CSR), so that freezing a link visits only its flows.
  std::vector<std::uint32_t> start(links + 1, 0);
  for (const FlowPath& f : flows) {
    for (int k = 0; k < f.count; ++k) ++start[f.links[k] + 1];
  }
  for (std::size_t l = 0; l < links; ++l) start[l + 1] += start[l];
  std::vector<std::uint32_t> by_link(start[links]);
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
  for (std::uint32_t i = 0; i < flows.size(); ++i) {
    for (int k = 0; k < flows[i].count; ++k) by_link[fill[flows[i].links[k]]++] = i;
  }

  std::vector<double> remaining(capacity.begin(), capacity.end());
  std::vector<std::uint32_t> unfrozen(links, 0);
  for (std::size_t l = 0; l < links; ++l) unfrozen[l] = start[l + 1] - start[l];
  std::vector<bool> frozen(flows.size(), false);

  // Min-heap of (fair share, link). A link's share only grows as flows
  // elsewhere freeze (each gives up at most the current minimum), so an
  // entry is at most its link's share: a popped entry whose share has grown
  // goes back in with the new value, and one that still matches is the
  // tightest link. (Pushing on every change instead cost most of a run.)
  using Entry = std::pair<double, LinkId>;
  auto share = [&](LinkId l) { return std::max(0.0, remaining[l]) / unfrozen[l]; };
  std::vector<Entry> entries;
  entries.reserve(links);
  for (LinkId l = 0; l < links; ++l) {
    if (unfrozen[l] > 0) entries.emplace_back(share(l), l);
  }
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap(std::greater<>{},
                                                                      std::move(entries));
  while (!heap.empty()) {
    const auto [key, l] = heap.top();
    heap.pop();
    if (unfrozen[l] == 0) continue;
    const double s = share(l);
    if (s > key) {
      heap.emplace(s, l);
      continue;
    }
    // Every unfrozen flow on the tightest link gets its share; the other
    // links those flows cross keep at least their share, so none is ever
    // overfilled.
    for (std::uint32_t j = start[l]; j < start[l + 1]; ++j) {
      const std::uint32_t i = by_link[j];
      if (frozen[i]) continue;
      frozen[i] = true;
      rates[i] = s;
      for (int k = 0; k < flows[i].count; ++k) {
        const LinkId m = flows[i].links[k];
        remaining[m] -= s;
        --unfrozen[m];
      }
    }
  }
  return rates;
}

}  // namespace swarmcast::sim
