// Counters and histograms for GET /metrics (Prometheus text format 0.0.4).
// Every method is lock-free (relaxed atomics) and callable from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace swarmcast::tracker {

enum class RequestKind {
  kHttpAnnounce,
  kHttpScrape,
  kUdpConnect,
  kUdpAnnounce,
  kUdpScrape,
  kRegistry,
  kMetrics,
  kOther,
  kCount
};

class Histogram {
 public:
  // Upper bounds in seconds, ascending; the +Inf bucket is implicit.
  static constexpr std::array<double, 12> kBounds = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5};
  void Observe(double seconds);
  void Render(std::string& out, const char* name, const char* help) const;

 private:
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> counts_{};
  std::atomic<std::uint64_t> sum_ns_{0};
};

struct GaugeValues {
  std::size_t swarms = 0, registered = 0, peers = 0, seeders = 0, leechers = 0;
  std::size_t pending_writes = 0;
  std::int64_t connections = 0;
};

class Metrics {
 public:
  void Count(RequestKind kind, bool ok) {
    requests_[static_cast<int>(kind)][ok ? 0 : 1].fetch_add(1, std::memory_order_relaxed);
  }
  void CountDbRows(std::uint64_t rows) { db_rows_.fetch_add(rows, std::memory_order_relaxed); }
  void CountDbError() { db_errors_.fetch_add(1, std::memory_order_relaxed); }
  // A TLS handshake that failed or ran out of time (HTTPS listeners).
  void CountTlsHandshakeFailure() {
    tls_handshake_failures_.fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t db_errors() const { return db_errors_.load(std::memory_order_relaxed); }
  Histogram& announce_latency() { return announce_latency_; }
  Histogram& db_write_latency() { return db_write_latency_; }
  std::atomic<std::int64_t>& connections() { return connections_; }
  // Request body bytes reserved by HTTP sessions now (HttpLimits::
  // max_body_bytes_in_flight caps the sum over every listener).
  std::atomic<std::size_t>& body_bytes_in_flight() { return body_bytes_in_flight_; }

  std::string Render(const GaugeValues& gauges) const;

 private:
  std::array<std::array<std::atomic<std::uint64_t>, 2>, static_cast<int>(RequestKind::kCount)>
      requests_{};
  std::atomic<std::uint64_t> db_rows_{0}, db_errors_{0}, tls_handshake_failures_{0};
  std::atomic<std::int64_t> connections_{0};
  std::atomic<std::size_t> body_bytes_in_flight_{0};
  Histogram announce_latency_;
  Histogram db_write_latency_;
};

}  // namespace swarmcast::tracker
