// The HTTP/1.1 front end (Boost.Beast): accepts connections, reads one
// request at a time with bounded sizes and timeouts, hands it to an
// HttpDispatcher, writes the reply, keeps the connection alive when the
// client asks for it. Given a TLS context (tracker/tls_context.h) a
// listener speaks HTTPS only; the request handling, limits and timeouts
// are the same code for both (tracker/http_session.h).
//
// Threads: with several threads running the io_context (HttpLimits::threads)
// each connection runs on its own strand; with one thread, directly on it. The dispatcher may
// answer from another thread; the session moves the reply back onto its strand.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "proto/log.h"
#include "tracker/http_reply.h"
#include "tracker/metrics.h"

namespace boost::asio::ssl {
class context;
}

namespace swarmcast::tracker {

struct HttpLimits {
  std::size_t max_header_bytes = 8192;               // request line + headers
  std::size_t max_target_bytes = 4096;               // the request line's target
  std::chrono::milliseconds request_timeout{10000};  // to read one request
  std::chrono::milliseconds idle_timeout{30000};     // keep-alive wait between requests
  // HTTPS: from accept to a completed handshake; a client that sends
  // nothing is dropped then.
  std::chrono::milliseconds tls_handshake_timeout{5000};
  std::size_t max_connections = 10000;
  // Request body bytes being read or handled at once, over all
  // connections and listeners; a request that would go over gets 503.
  std::size_t max_body_bytes_in_flight = std::size_t{64} << 20;
  // After accept() fails for want of descriptors (EMFILE, ENFILE), accepting
  // pauses this long, doubling per failure in a row up to the max.
  std::chrono::milliseconds accept_backoff_min{100}, accept_backoff_max{1000};
  int threads = 1;  // threads running the io_context: above 1, a strand per connection
};

struct HttpRequest {
  std::string_view method;
  std::string_view target;
  std::string_view authorization;
  std::string body;
  boost::asio::ip::address remote;
};

class HttpDispatcher {
 public:
  virtual ~HttpDispatcher() = default;
  // Largest body accepted for this request (0: none).
  virtual std::size_t BodyLimit(std::string_view method, std::string_view target) const = 0;
  // The largest BodyLimit over all routes.
  virtual std::size_t MaxBodyLimit() const = 0;
  // Called once the header is read, before any of the body is: a reply
  // here (401 for a registry write without the admin token) is sent
  // without reading the body. nullopt: go on.
  virtual std::optional<HttpReply> RefuseBeforeBody(std::string_view method,
                                                    std::string_view target,
                                                    std::string_view authorization,
                                                    const boost::asio::ip::address& remote) = 0;
  // Must call `respond` exactly once, from any thread.
  virtual void Dispatch(HttpRequest request, std::function<void(HttpReply)> respond) = 0;
};

class HttpServer {
 public:
  // `log` gets refused request bodies (info) and accept failures (warning).
  // With `tls` every connection must complete a TLS handshake first.
  HttpServer(boost::asio::io_context& io, HttpLimits limits, HttpDispatcher& dispatcher,
             Metrics& metrics, proto::Logger log = {},
             std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
  ~HttpServer();

  // Binds and listens; returns the bound endpoint (port 0 picks one).
  boost::system::error_code Listen(const boost::asio::ip::tcp::endpoint& at);
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  void Start();
  void Stop();

 private:
  class Acceptor;
  std::shared_ptr<Acceptor> acceptor_;
};

}  // namespace swarmcast::tracker
