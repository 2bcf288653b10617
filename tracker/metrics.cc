#include "tracker/metrics.h"

#include <cstdio>

namespace swarmcast::tracker {
namespace {

const char* KindName(int k) {
  static const char* kNames[] = {"http_announce", "http_scrape", "udp_connect", "udp_announce",
                                 "udp_scrape",    "registry",    "metrics",     "other"};
  return kNames[k];
}

void Append(std::string& out, const char* fmt, auto... args) {
  char buf[256];
  int n = std::snprintf(buf, sizeof buf, fmt, args...);
  if (n > 0) out.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

}  // namespace

void Histogram::Observe(double seconds) {
  std::size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<std::uint64_t>(seconds * 1e9), std::memory_order_relaxed);
}

void Histogram::Render(std::string& out, const char* name, const char* help) const {
  Append(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    Append(out, "%s_bucket{le=\"%g\"} %llu\n", name, kBounds[i],
           static_cast<unsigned long long>(cumulative));
  }
  cumulative += counts_[kBounds.size()].load(std::memory_order_relaxed);
  Append(out, "%s_bucket{le=\"+Inf\"} %llu\n", name, static_cast<unsigned long long>(cumulative));
  Append(out, "%s_sum %.9f\n", name, sum_ns_.load(std::memory_order_relaxed) / 1e9);
  Append(out, "%s_count %llu\n", name, static_cast<unsigned long long>(cumulative));
}

std::string Metrics::Render(const GaugeValues& g) const {
  std::string out;
  out.reserve(4096);
  out +=
      "# HELP swarmcast_tracker_requests_total Requests handled, by kind and result.\n"
      "# TYPE swarmcast_tracker_requests_total counter\n";
  for (int k = 0; k < static_cast<int>(RequestKind::kCount); ++k) {
    for (int r = 0; r < 2; ++r) {
      Append(out, "swarmcast_tracker_requests_total{kind=\"%s\",result=\"%s\"} %llu\n", KindName(k),
             r == 0 ? "ok" : "error",
             static_cast<unsigned long long>(requests_[k][r].load(std::memory_order_relaxed)));
    }
  }
  struct Gauge {
    const char* name;
    const char* help;
    long long value;
  };
  const Gauge gauges[] = {
      {"swarmcast_tracker_swarms", "Swarms in memory.", static_cast<long long>(g.swarms)},
      {"swarmcast_tracker_registered_swarms", "Swarms published in the registry.",
       static_cast<long long>(g.registered)},
      {"swarmcast_tracker_peers", "Peers in memory.", static_cast<long long>(g.peers)},
      {"swarmcast_tracker_seeders", "Peers with nothing left.", static_cast<long long>(g.seeders)},
      {"swarmcast_tracker_leechers", "Peers still downloading.",
       static_cast<long long>(g.leechers)},
      {"swarmcast_tracker_db_pending_writes", "Changes waiting for the next database batch.",
       static_cast<long long>(g.pending_writes)},
      {"swarmcast_tracker_http_connections", "Open HTTP connections.",
       static_cast<long long>(g.connections)},
      {"swarmcast_tracker_http_body_bytes_in_flight",
       "Request body bytes being received or handled now.",
       static_cast<long long>(body_bytes_in_flight_.load(std::memory_order_relaxed))},
  };
  for (const Gauge& x : gauges) {
    Append(out, "# HELP %s %s\n# TYPE %s gauge\n%s %lld\n", x.name, x.help, x.name, x.name,
           x.value);
  }
  Append(out,
         "# HELP swarmcast_tracker_db_rows_written_total Rows written to SQLite.\n"
         "# TYPE swarmcast_tracker_db_rows_written_total counter\n"
         "swarmcast_tracker_db_rows_written_total %llu\n",
         static_cast<unsigned long long>(db_rows_.load(std::memory_order_relaxed)));
  Append(out,
         "# HELP swarmcast_tracker_db_errors_total Failed database batches.\n"
         "# TYPE swarmcast_tracker_db_errors_total counter\n"
         "swarmcast_tracker_db_errors_total %llu\n",
         static_cast<unsigned long long>(db_errors_.load(std::memory_order_relaxed)));
  Append(out,
         "# HELP swarmcast_tracker_tls_handshake_failures_total TLS handshakes that failed or "
         "timed out.\n"
         "# TYPE swarmcast_tracker_tls_handshake_failures_total counter\n"
         "swarmcast_tracker_tls_handshake_failures_total %llu\n",
         static_cast<unsigned long long>(tls_handshake_failures_.load(std::memory_order_relaxed)));
  announce_latency_.Render(out, "swarmcast_tracker_announce_seconds",
                           "Time to handle one announce, parse to response bytes.");
  db_write_latency_.Render(out, "swarmcast_tracker_db_batch_seconds",
                           "Time to write one batch to SQLite, commit included.");
  return out;
}

}  // namespace swarmcast::tracker
