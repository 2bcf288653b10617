#include "node/metrics_server.h"

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>

#include "proto/thread_name.h"

namespace swarmcast::node {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr std::uint32_t kHeaderLimit = 8 * 1024;

// One connection: one request, one reply, closed. Kept alive by
// shared_from_this while an operation is pending.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, const MetricsServer::Render& render,
             std::chrono::milliseconds timeout, std::atomic<std::size_t>& open)
      : stream_(std::move(socket)), render_(render), timeout_(timeout), open_(open) {
    parser_.header_limit(kHeaderLimit);
    parser_.body_limit(0);
  }
  ~Connection() { open_.fetch_sub(1, std::memory_order_relaxed); }

  void Start() {
    // One deadline for the whole exchange: a slow sender and a slow reader
    // are cut off alike.
    stream_.expires_after(timeout_);
    http::async_read(
        stream_, buffer_, parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec) {
      // A malformed or oversized request gets a 400; a timeout or a
      // closed socket gets nothing.
      if (ec == beast::error::timeout || ec == http::error::end_of_stream ||
          ec == asio::error::operation_aborted) {
        return Close();
      }
      return Reply(http::status::bad_request, "bad request\n", "text/plain");
    }
    const auto& req = parser_.get();
    const beast::string_view target = req.target();
    const bool metrics = target == "/metrics" || target.starts_with("/metrics?");
    const bool health = target == "/healthz";
    if (!metrics && !health) return Reply(http::status::not_found, "not found\n", "text/plain");
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      return Reply(http::status::method_not_allowed, "only GET\n", "text/plain");
    }
    if (health) return Reply(http::status::ok, "ok\n", "text/plain");
    Reply(http::status::ok, render_(), "text/plain; version=0.0.4; charset=utf-8",
          req.method() == http::verb::head);
  }

  void Reply(http::status status, std::string body, const char* type, bool head = false) {
    res_.result(status);
    res_.version(11);
    res_.set(http::field::content_type, type);
    res_.set(http::field::cache_control, "no-store");
    res_.keep_alive(false);
    if (status == http::status::method_not_allowed) res_.set(http::field::allow, "GET, HEAD");
    res_.body() = std::move(body);
    res_.prepare_payload();
    if (head) res_.body().clear();
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code, std::size_t) {
      self->Close();
    });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{kHeaderLimit};
  http::request_parser<http::empty_body> parser_;
  http::response<http::string_body> res_;
  const MetricsServer::Render& render_;
  const std::chrono::milliseconds timeout_;
  std::atomic<std::size_t>& open_;
};

}  // namespace

class MetricsServer::Impl {
 public:
  Impl(Render render, MetricsServerOptions options)
      : render_(std::move(render)), options_(options), acceptor_(ioc_) {}

  Result<tcp::endpoint, std::string> Bind(const proto::Endpoint& listen) {
    beast::error_code ec;
    const auto addr = asio::ip::make_address(listen.host, ec);
    if (ec) return Unexpected("'" + listen.host + "' is not an IP address");
    const tcp::endpoint ep(addr, listen.port);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Unexpected("cannot listen on " + listen.ToString() + ": " + ec.message());
    return acceptor_.local_endpoint();
  }

  void Run() {
    Accept();
    thread_ = std::thread([this] {
      proto::NameThisThread("metrics-http");
      ioc_.run();
    });
  }

  ~Impl() {
    // Closing on the server's thread: the acceptor and the sockets belong
    // to it. stop() then ends run() with whatever is still pending, and
    // the io_context's destructor frees those connections.
    asio::post(ioc_, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      ioc_.stop();
    });
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) {
        if (open_.load(std::memory_order_relaxed) >= options_.max_connections) {
          beast::error_code ignored;
          socket.close(ignored);  // full: the scraper retries at its next interval
        } else {
          open_.fetch_add(1, std::memory_order_relaxed);
          std::make_shared<Connection>(std::move(socket), render_, options_.request_timeout, open_)
              ->Start();
        }
      }
      // On other errors (EMFILE, a reset in the queue) keep accepting.
      Accept();
    });
  }

  // Declared before ioc_: connections freed by its destructor still use
  // them.
  const Render render_;
  const MetricsServerOptions options_;
  std::atomic<std::size_t> open_{0};
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

Result<std::unique_ptr<MetricsServer>, std::string> MetricsServer::Start(
    const proto::Endpoint& listen, Render render, MetricsServerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(render), options);
  auto bound = impl->Bind(listen);
  if (!bound) return Unexpected(bound.error());
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->port_ = bound->port();
  server->address_ = proto::FormatEndpoint(bound->address().to_string(), server->port_);
  impl->Run();
  server->impl_ = std::move(impl);
  return server;
}

MetricsServer::~MetricsServer() = default;

}  // namespace swarmcast::node
