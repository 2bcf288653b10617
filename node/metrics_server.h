// A tiny HTTP/1.1 server for Prometheus scrapes: GET /metrics (the text a
// caller-supplied function renders) and GET /healthz ("ok"); anything else
// gets 404 (other path) or 405 (other method), and every reply closes the
// connection. Meant for one scraper and a health check, not for traffic:
//
//   - at most `max_connections` at once; a connection beyond that is
//     closed unanswered;
//   - a request header is at most 8 KiB and has no body; the whole
//     exchange (read, render, write) must end within `request_timeout`,
//     or the connection is closed;
//   - everything is asynchronous on the server's own thread, so a client
//     that sends nothing (or reads nothing) holds only its own slot until
//     its deadline: it cannot stall the transfer, nor the other scrapes.
//
// Threads: Start() binds and starts one thread that runs the server's own
// io_context; `render` is called on that thread and must be safe to call
// from it (read a snapshot under a mutex: node_metrics.h). The destructor
// stops the thread and closes every socket; it must not run on it.
// Reusable by any node service (seed, get, agent): it knows nothing of
// transfers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "proto/endpoint.h"
#include "proto/result.h"

namespace swarmcast::node {

struct MetricsServerOptions {
  std::size_t max_connections = 16;
  std::chrono::milliseconds request_timeout{5000};
};

class MetricsServer {
 public:
  using Render = std::function<std::string()>;

  // `listen` is an IP literal and a port (0: any free port). Errors say
  // what failed (address, bind, listen).
  static Result<std::unique_ptr<MetricsServer>, std::string> Start(
      const proto::Endpoint& listen, Render render, MetricsServerOptions options = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The bound address, "IP:PORT" (the kernel's port when 0 was asked).
  const std::string& address() const { return address_; }
  std::uint16_t port() const { return port_; }

 private:
  class Impl;
  MetricsServer() = default;
  std::unique_ptr<Impl> impl_;
  std::string address_;
  std::uint16_t port_ = 0;
};

}  // namespace swarmcast::node
