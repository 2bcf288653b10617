#include "node/cli/metrics_endpoint.h"

namespace swarmcast::node::cli {

void AddMetricsOptions(po::options_description& d, MetricsFlags& f) {
  d.add_options()("metrics-listen", po::value(&f.listen),
                  "serve Prometheus metrics at http://ADDR:PORT/metrics (and /healthz); "
                  "PORT 0 picks a free port (logged). Default: off");
}

bool MetricsEndpoint::Start(const MetricsFlags& f, const std::string& role,
                            const std::string& state, const proto::Logger& log) {
  if (f.listen.empty()) return true;
  auto ep = proto::ParseEndpoint(f.listen, {.allow_port_zero = true});
  if (!ep) {
    log.Error("--metrics-listen '" + f.listen + "': " + ep.error());
    return false;
  }
  NodeSample first;
  first.role = role;
  first.state = state;
  metrics_.Publish(first);
  auto server = MetricsServer::Start(*ep, [this] { return metrics_.Render(); });
  if (!server) {
    log.Error("--metrics-listen: " + server.error());
    return false;
  }
  server_ = std::move(*server);
  log.Info("metrics on http://" + server_->address() + "/metrics");
  return true;
}

void MetricsEndpoint::SetState(const std::string& state) {
  if (!server_) return;
  NodeSample s = metrics_.Snapshot();
  s.state = state;
  metrics_.Publish(s);
}

}  // namespace swarmcast::node::cli
