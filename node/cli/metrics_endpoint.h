// --metrics-listen ADDR:PORT of `seed` and `get`: a NodeMetrics snapshot
// (node/node_metrics.h) served by a MetricsServer (node/metrics_server.h)
// from the command's start to its end. Without the flag nothing listens
// and metrics() is null, so the transfer publishes nothing.
#pragma once

#include <memory>
#include <string>

#include "node/cli/common.h"
#include "node/metrics_server.h"
#include "node/node_metrics.h"

namespace swarmcast::node::cli {

struct MetricsFlags {
  std::string listen;  // empty: no metrics server
};
void AddMetricsOptions(po::options_description& d, MetricsFlags& f);

class MetricsEndpoint {
 public:
  // Binds and starts serving when the flag is given, with a first snapshot
  // of `role` in `state`; logs where ("metrics on http://IP:PORT/metrics").
  // False (logged) when the address is bad or cannot be bound.
  bool Start(const MetricsFlags& f, const std::string& role, const std::string& state,
             const proto::Logger& log);
  // Null unless serving.
  NodeMetrics* metrics() { return server_ ? &metrics_ : nullptr; }
  // A new state before the transfer runs (e.g. "publishing"); no-op unless
  // serving.
  void SetState(const std::string& state);

 private:
  NodeMetrics metrics_;  // outlives server_, whose thread reads it
  std::unique_ptr<MetricsServer> server_;
};

}  // namespace swarmcast::node::cli
