// Prometheus text exposition format (version 0.0.4), written one family at
// a time: a "# HELP" and "# TYPE" line, then its samples. Label values are
// escaped (backslash, double quote, newline), so any string is safe to pass;
// metric and label names are the caller's constants. Pure: no I/O, no
// threads. Used by the node's /metrics (node_metrics.h) and reusable by
// any other node service that serves metrics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace swarmcast::node {

using MetricLabels = std::vector<std::pair<std::string_view, std::string_view>>;

class MetricsText {
 public:
  enum class Type { kCounter, kGauge };

  // Starts a family. Counters are named ..._total by the caller.
  void Family(std::string_view name, Type type, std::string_view help);
  // One sample of the current family.
  void Sample(const MetricLabels& labels, double value);
  void Sample(double value) { Sample({}, value); }

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
  std::string family_;
};

}  // namespace swarmcast::node
