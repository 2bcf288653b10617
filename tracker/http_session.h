// One HTTP/1.1 connection of the tracker's front end (http_server.h):
// reads one request at a time with bounded sizes and timeouts, hands it to
// the HttpDispatcher, writes the reply, keeps the connection alive when the
// client asks for it.
//
// A template over the stream, so that plain TCP (tcp::socket) and TLS
// (TlsStream) run the same request logic, each compiled for its own type:
// the plain path pays nothing for TLS. A TLS session first completes its
// handshake within HttpLimits::tls_handshake_timeout, and after its last
// reply sends close_notify (bounded by the request timeout). Internal to
// http_server.cc.
//
// Threads: the session runs on its socket's executor (a strand per
// connection when several threads run the io_context); the dispatcher may
// answer from another thread, and the reply is moved back onto it.
#pragma once

#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>

#include "tracker/http_server.h"

namespace swarmcast::tracker::detail {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

inline std::string_view Sv(beast::string_view s) { return {s.data(), s.size()}; }

using TlsStream = beast::ssl_stream<tcp::socket>;

template <class Stream>
class HttpSession : public std::enable_shared_from_this<HttpSession<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  struct NoContext {};

 public:
  // What a session holds of the TLS context: the context itself, so that
  // it outlives the session's SSL object even when sessions are freed
  // after the listener at shutdown. Nothing for plain TCP.
  using TlsContextRef = std::conditional_t<kTls, std::shared_ptr<net::ssl::context>, NoContext>;

  HttpSession(tcp::socket&& socket, TlsContextRef tls, const net::ip::address& remote,
              const HttpLimits& limits, HttpDispatcher& dispatcher, Metrics& metrics)
      : tls_(std::move(tls)),
        stream_(MakeStream(std::move(socket), tls_)),
        timer_(stream_.get_executor()),
        limits_(limits),
        dispatcher_(dispatcher),
        metrics_(metrics),
        remote_(remote) {
    metrics_.connections().fetch_add(1, std::memory_order_relaxed);
  }
  ~HttpSession() {
    ReleaseBody();
    metrics_.connections().fetch_sub(1, std::memory_order_relaxed);
  }

  void Start() {
    // No TCP_NODELAY: every response leaves in one write, so Nagle never
    // holds it back, and the setsockopt would cost a syscall per connection.
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      if constexpr (kTls) {
        self->Handshake();
      } else {
        self->ReadHeader(true);
      }
    });
  }

 private:
  using SteadyClock = std::chrono::steady_clock;

  static Stream MakeStream(tcp::socket&& socket, const TlsContextRef& tls) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls);
    } else {
      return std::move(socket);
    }
  }

  // A client that connects and sends nothing (or dribbles) holds a
  // connection slot only until the handshake deadline; one that fails
  // (plain HTTP, a wrong version, a certificate it refuses) is counted and
  // closed without a word: there is no channel to answer on.
  void Handshake() {
    SetDeadline(limits_.tls_handshake_timeout);
    stream_.async_handshake(net::ssl::stream_base::server,
                            [self = this->shared_from_this()](beast::error_code ec) {
                              if (ec) {
                                self->metrics_.CountTlsHandshakeFailure();
                                return self->Close();
                              }
                              self->ReadHeader(true);
                            });
  }

  // The TCP socket under the stream: timeouts and closing act on it.
  tcp::socket& Socket() { return beast::get_lowest_layer(stream_); }

  // Timeouts: one deadline per phase (read a request, idle between
  // requests, write a reply) checked by one timer per connection that is
  // re-armed only when a deadline comes earlier than its expiry, so a
  // request costs no timer operations at all in the common case. The wait
  // holds only a weak reference: a finished session is freed at once, and
  // freeing it cancels the wait.
  void SetDeadline(SteadyClock::duration d) {
    deadline_ = SteadyClock::now() + d;
    if (timer_armed_ && deadline_ >= armed_at_) return;
    ArmTimer();
  }
  void ArmTimer() {
    armed_at_ = deadline_;
    timer_armed_ = true;
    timer_.expires_at(deadline_);
    timer_.async_wait([weak = this->weak_from_this()](boost::system::error_code ec) {
      auto self = weak.lock();
      if (ec == net::error::operation_aborted || !self) return;
      self->timer_armed_ = false;
      if (!self->Socket().is_open()) return;
      if (SteadyClock::now() >= self->deadline_) {
        boost::system::error_code ignored;
        self->Socket().close(ignored);  // pending reads/writes end with operation_aborted
        return;
      }
      self->ArmTimer();
    });
  }

  void ReadHeader(bool first) {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(limits_.max_header_bytes));
    // Beast checks Content-Length against this while parsing the header;
    // the per-route limit is applied once the target is known.
    parser_->body_limit(dispatcher_.MaxBodyLimit());
    SetDeadline(first || buffer_.size() > 0 ? limits_.request_timeout : limits_.idle_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              self->OnHeader(ec);
                            });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return ReadFailed(ec);
    const auto& req = parser_->get();
    head_ = false;  // a reply before Handle() has a body, whatever came before
    if (req.target().size() > limits_.max_target_bytes) {
      return SendError(414, "request target too long");
    }
    std::size_t limit = dispatcher_.BodyLimit(Sv(req.method_string()), Sv(req.target()));
    if (parser_->is_done()) return Handle();
    // From here on a refusal leaves the body unread; the connection closes
    // after the reply (LingerClose).
    if (auto refused = dispatcher_.RefuseBeforeBody(Sv(req.method_string()), Sv(req.target()),
                                                    Sv(req[http::field::authorization]), remote_)) {
      body_unread_ = true;
      keep_alive_ = false;
      return Send(std::move(*refused));
    }
    if (auto len = parser_->content_length(); len && *len > limit) {
      body_unread_ = true;
      return SendError(413, "body too large");
    }
    if (parser_->chunked() && limit == 0) {
      body_unread_ = true;
      return SendError(413, "body not allowed here");
    }
    // A chunked body may grow to the route's limit: reserve all of it.
    if (!ReserveBody(parser_->content_length().value_or(limit))) {
      body_unread_ = true;
      return SendError(503, "server busy: too many request bodies in flight, retry later");
    }
    parser_->body_limit(limit);
    SetDeadline(limits_.request_timeout);
    auto read_body = [self = this->shared_from_this()] {
      http::async_read(self->stream_, self->buffer_, *self->parser_,
                       [self](beast::error_code ec, std::size_t) {
                         if (ec) return self->ReadFailed(ec);
                         self->Handle();
                       });
    };
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      net::async_write(
          stream_, net::buffer(kContinue, sizeof kContinue - 1),
          [self = this->shared_from_this(), read_body](beast::error_code ec, std::size_t) {
            if (ec) return self->Close();
            read_body();
          });
      return;
    }
    read_body();
  }

  void ReadFailed(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == net::error::eof ||
        ec == net::error::connection_reset || ec == net::error::operation_aborted) {
      return Close();
    }
    if constexpr (kTls) {
      // The client closed without close_notify, or TLS itself failed:
      // there is no session left to send an HTTP error on.
      if (ec == net::ssl::error::stream_truncated ||
          ec.category() == net::error::get_ssl_category()) {
        return Close();
      }
    }
    if (ec == http::error::header_limit) return SendError(431, "request header too large");
    if (ec == http::error::body_limit) return SendError(413, "body too large");
    SendError(400, "malformed HTTP request: " + ec.message());
  }

  // Takes `n` bytes of the shared in-flight body budget; false when that
  // would exceed it. Released when the reply goes out or the session ends.
  bool ReserveBody(std::size_t n) {
    auto& inflight = metrics_.body_bytes_in_flight();
    std::size_t cur = inflight.load(std::memory_order_relaxed);
    do {
      if (n > limits_.max_body_bytes_in_flight || cur > limits_.max_body_bytes_in_flight - n) {
        return false;
      }
    } while (!inflight.compare_exchange_weak(cur, cur + n, std::memory_order_relaxed));
    reserved_ = n;
    return true;
  }
  void ReleaseBody() {
    if (reserved_ == 0) return;
    metrics_.body_bytes_in_flight().fetch_sub(reserved_, std::memory_order_relaxed);
    reserved_ = 0;
  }

  void SendError(unsigned status, std::string_view reason) {
    metrics_.Count(RequestKind::kOther, false);
    keep_alive_ = false;
    Send(JsonError(status, reason));
  }

  void Handle() {
    auto& req = parser_->get();
    keep_alive_ = req.keep_alive();
    head_ = req.method() == http::verb::head;
    HttpRequest r;
    r.method = Sv(req.method_string());
    r.target = Sv(req.target());
    r.authorization = Sv(req[http::field::authorization]);
    r.body = std::move(req.body());
    r.remote = remote_;
    // The read deadline also covers an immediate reply.
    dispatching_ = true;
    replied_ = false;
    dispatcher_.Dispatch(std::move(r), [self = this->shared_from_this()](HttpReply reply) {
      net::dispatch(self->stream_.get_executor(),
                    [self, reply = std::move(reply)]() mutable { self->Send(std::move(reply)); });
    });
    dispatching_ = false;
    // A deferred reply (a publish waits for the database) has no deadline
    // while it waits; Send gives the write a fresh one.
    if (!replied_) deadline_ = SteadyClock::time_point::max();
  }

  void Send(HttpReply reply) {
    replied_ = true;
    ReleaseBody();
    response_.emplace();
    response_->version(11);
    response_->result(reply.status);
    response_->set(http::field::server, "swarmcast-tracker");
    response_->set(http::field::content_type, reply.content_type);
    response_->keep_alive(keep_alive_);
    response_->body() = std::move(reply.body);
    response_->prepare_payload();
    if (head_) response_->body().clear();  // Content-Length stays that of the full body
    if (!dispatching_) SetDeadline(limits_.request_timeout);
    http::async_write(stream_, *response_,
                      [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                        if (!ec && self->body_unread_) return self->LingerClose();
                        if (ec) return self->Close();
                        if (!self->keep_alive_) return self->Finish();
                        self->ReadHeader(false);
                      });
  }

  // The last reply went out. TLS: close_notify first, so the client can
  // tell the end from a truncation; its answer (or its FIN) is awaited at
  // most one request timeout.
  void Finish() {
    if constexpr (kTls) {
      SetDeadline(limits_.request_timeout);
      stream_.async_shutdown(
          [self = this->shared_from_this()](beast::error_code) { self->Close(); });
    } else {
      Close();
    }
  }

  // close() alone sends FIN after the queued response bytes; no separate
  // shutdown() call is needed on this path (one syscall per request less).
  void Close() {
    boost::system::error_code ec;
    Socket().close(ec);
  }

  // After a reply sent without reading the request body: closing at once
  // with unread bytes would make the kernel send RST, which can destroy the
  // reply before the client reads it. So stop sending, then read and drop
  // (into a small scratch buffer: the body is never stored) until the
  // client closes, at most kLingerBytes or one request timeout. The bytes
  // are dropped unread, so they are taken from the socket itself, under
  // any wrapping stream.
  void LingerClose() {
    boost::system::error_code ec;
    Socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return Close();
    SetDeadline(limits_.request_timeout);
    Drain(0);
  }
  void Drain(std::size_t drained) {
    static constexpr std::size_t kLingerBytes = 1 << 20;
    if (drained >= kLingerBytes) return Close();
    Socket().async_read_some(net::buffer(scratch_), [self = this->shared_from_this(), drained](
                                                        beast::error_code ec, std::size_t n) {
      if (ec) return self->Close();
      self->Drain(drained + n);
    });
  }

  [[no_unique_address]] TlsContextRef tls_;  // before stream_: destroyed after it
  Stream stream_;
  net::steady_timer timer_;
  SteadyClock::time_point deadline_{}, armed_at_{};
  bool timer_armed_ = false;
  const HttpLimits limits_;
  HttpDispatcher& dispatcher_;
  Metrics& metrics_;
  beast::flat_buffer buffer_{8192};
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  net::ip::address remote_;
  bool keep_alive_ = false;
  bool head_ = false;
  bool dispatching_ = false;  // inside Dispatch: a reply now is synchronous
  bool replied_ = false;
  bool body_unread_ = false;  // replied before reading the body: LingerClose
  std::size_t reserved_ = 0;  // of Metrics::body_bytes_in_flight
  std::array<char, 4096> scratch_;
};

}  // namespace swarmcast::tracker::detail
