#include "tracker/http_server.h"

#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "tracker/http_session.h"

namespace swarmcast::tracker {
namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

class HttpServer::Acceptor : public std::enable_shared_from_this<HttpServer::Acceptor> {
 public:
  Acceptor(net::io_context& io, HttpLimits limits, HttpDispatcher& dispatcher, Metrics& metrics,
           proto::Logger log, std::shared_ptr<net::ssl::context> tls)
      : io_(io),
        tls_(std::move(tls)),
        acceptor_(net::make_strand(io)),
        backoff_timer_(acceptor_.get_executor()),
        limits_(limits),
        dispatcher_(dispatcher),
        metrics_(metrics),
        log_(std::move(log)) {}

  boost::system::error_code Listen(const tcp::endpoint& at) {
    boost::system::error_code ec;
    acceptor_.open(at.protocol(), ec);
    if (ec) return ec;
    acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (at.address().is_v6()) acceptor_.set_option(net::ip::v6_only(true), ec);
    acceptor_.bind(at, ec);
    if (ec) return ec;
    acceptor_.listen(net::socket_base::max_listen_connections, ec);
    return ec;
  }
  tcp::endpoint local_endpoint() const {
    boost::system::error_code ec;
    return acceptor_.local_endpoint(ec);
  }
  void Accept() {
    // One network thread needs no strands: everything already runs in
    // order on it, and a strand per connection costs an allocation and
    // executor copies per operation.
    auto executor = limits_.threads > 1 ? net::any_io_executor(net::make_strand(io_))
                                        : net::any_io_executor(io_.get_executor());
    // accept4() reports the peer address; no getpeername() needed.
    acceptor_.async_accept(
        executor, peer_, [self = shared_from_this()](beast::error_code ec, tcp::socket s) {
          if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) {
            return;
          }
          if (ec == net::error::no_descriptors ||
              ec == boost::system::errc::too_many_files_open_in_system) {
            return self->BackOff(ec);
          }
          if (!ec) self->OnAccept(std::move(s));
          if (!ec && self->backoff_.count() > 0) {
            self->log_.Info("accepting connections again");
            self->backoff_ = {};
          }
          self->Accept();
        });
  }
  // Out of descriptors: the pending connection stays in the backlog and
  // accept() would fail again at once, so retrying now spins a core. Wait,
  // longer each time in a row, until sessions have closed.
  void BackOff(const boost::system::error_code& ec) {
    if (backoff_.count() == 0) {
      log_.Warning("accept failed: " + ec.message() +
                   "; pausing accepts (raise the descriptor limit, ulimit -n, or lower "
                   "--max-connections)");
    }
    backoff_ = backoff_.count() == 0 ? limits_.accept_backoff_min
                                     : std::min(backoff_ * 2, limits_.accept_backoff_max);
    metrics_.Count(RequestKind::kOther, false);
    backoff_timer_.expires_after(backoff_);
    backoff_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || !self->acceptor_.is_open()) return;
      self->Accept();
    });
  }
  void Stop() {
    net::post(acceptor_.get_executor(), [self = shared_from_this()] {
      boost::system::error_code ec;
      self->acceptor_.close(ec);
      self->backoff_timer_.cancel();
    });
  }

 private:
  void OnAccept(tcp::socket s) {
    if (static_cast<std::size_t>(metrics_.connections().load(std::memory_order_relaxed)) >=
        limits_.max_connections) {
      metrics_.Count(RequestKind::kOther, false);
      boost::system::error_code ec;
      s.close(ec);  // over the connection cap: refuse cheaply
      return;
    }
    using TlsSession = detail::HttpSession<detail::TlsStream>;
    using PlainSession = detail::HttpSession<tcp::socket>;
    if (tls_) {
      std::make_shared<TlsSession>(std::move(s), tls_, peer_.address(), limits_, dispatcher_,
                                   metrics_)
          ->Start();
      return;
    }
    std::make_shared<PlainSession>(std::move(s), PlainSession::TlsContextRef{}, peer_.address(),
                                   limits_, dispatcher_, metrics_)
        ->Start();
  }

  net::io_context& io_;
  const std::shared_ptr<net::ssl::context> tls_;  // null: plain HTTP
  tcp::acceptor acceptor_;
  net::steady_timer backoff_timer_;
  std::chrono::milliseconds backoff_{0};  // current pause; 0 when accepting normally
  tcp::endpoint peer_;                    // filled by each accept
  const HttpLimits limits_;
  HttpDispatcher& dispatcher_;
  Metrics& metrics_;
  const proto::Logger log_;
};

HttpServer::HttpServer(net::io_context& io, HttpLimits limits, HttpDispatcher& dispatcher,
                       Metrics& metrics, proto::Logger log, std::shared_ptr<net::ssl::context> tls)
    : acceptor_(std::make_shared<Acceptor>(io, limits, dispatcher, metrics, std::move(log),
                                           std::move(tls))) {}
HttpServer::~HttpServer() = default;
boost::system::error_code HttpServer::Listen(const tcp::endpoint& at) {
  return acceptor_->Listen(at);
}
tcp::endpoint HttpServer::local_endpoint() const { return acceptor_->local_endpoint(); }
void HttpServer::Start() { acceptor_->Accept(); }
void HttpServer::Stop() { acceptor_->Stop(); }

}  // namespace swarmcast::tracker
