#include "tracker/straggler.h"

#include <algorithm>
#include <cstdio>

namespace swarmcast::tracker {
namespace {

std::string Ago(std::int64_t s) {
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  return std::to_string(s / 3600) + "h";
}

std::string Rate(std::int64_t bps) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  double v = static_cast<double>(bps);
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s/s", v, units[u]);
  return buf;
}

}  // namespace

StragglerContext MakeStragglerContext(const std::vector<PeerView>& peers, std::int64_t now,
                                      std::int64_t seed_fresh, std::int64_t idle_after) {
  StragglerContext c;
  c.now = now;
  c.idle_after = idle_after;
  std::vector<std::int64_t> rates;
  for (const PeerView& v : peers) {
    // A done peer has no stale state of its own: judge it by its age.
    if (v.peer.left == 0 && !v.peer.stopped && v.peer.last_announce + seed_fresh >= now) {
      ++c.seeds;
    }
    if (v.state == PeerState::kRunning && v.peer.rate >= 0) rates.push_back(v.peer.rate);
  }
  if (!rates.empty()) {
    std::nth_element(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2),
                     rates.end());
    c.median_rate = rates[rates.size() / 2];
  }
  return c;
}

StragglerReason ExplainStraggler(const PeerView& v, const StragglerContext& c) {
  StragglerReason r;
  r.idle_seconds = std::max<std::int64_t>(0, c.now - v.peer.progress_at);
  if (v.state == PeerState::kStale) {
    r.code = "stale";
    r.message = "silent for " + Ago(c.now - v.peer.last_announce);
    return r;
  }
  if (c.seeds == 0) {
    r.code = "no-seed";
    r.message = "no seed in the swarm";
    return r;
  }
  if (r.idle_seconds >= c.idle_after) {
    r.code = "no-data";
    const bool never = v.peer.downloaded == 0 && v.peer.progress_at <= v.peer.first_seen;
    r.message = never
                    ? "no data since it joined " + Ago(r.idle_seconds) + " ago (no seed reachable?)"
                    : "no data for " + Ago(r.idle_seconds);
    return r;
  }
  if (v.peer.rate >= 0 && c.median_rate > 0 && v.peer.rate * 4 < c.median_rate) {
    r.code = "slow";
    r.message = "slow: " + Rate(v.peer.rate) + " (swarm median " + Rate(c.median_rate) + ")";
    return r;
  }
  r.code = "downloading";
  r.message = v.peer.rate >= 0 ? Rate(v.peer.rate) : "downloading";
  if (v.peer.rate > 0) r.message += ", " + Ago(v.peer.left / v.peer.rate) + " left";
  return r;
}

}  // namespace swarmcast::tracker
