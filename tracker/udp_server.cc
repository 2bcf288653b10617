#include "tracker/udp_server.h"

#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/endian/conversion.hpp>
#include <cstring>

#include "tracker/announce_handler.h"

namespace swarmcast::tracker {
namespace net = boost::asio;
using udp = net::ip::udp;

namespace {

constexpr std::uint64_t kProtocolId = 0x41727101980ULL;
constexpr std::uint32_t kConnect = 0, kAnnounce = 1, kScrape = 2, kError = 3;
constexpr std::int64_t kWindowSeconds = 120;

std::uint64_t Get64(const std::uint8_t* p) { return boost::endian::load_big_u64(p); }
std::uint32_t Get32(const std::uint8_t* p) { return boost::endian::load_big_u32(p); }
void Put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  out.resize(out.size() + 4);
  boost::endian::store_big_u32(out.data() + out.size() - 4, v);
}
void Put64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  out.resize(out.size() + 8);
  boost::endian::store_big_u64(out.data() + out.size() - 8, v);
}
std::uint32_t Clamp32(std::int64_t v) {
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(v, 0, 0xffffffffLL));
}

void Error(std::vector<std::uint8_t>& reply, std::uint32_t txid, std::string_view msg) {
  reply.clear();
  Put32(reply, kError);
  Put32(reply, txid);
  reply.insert(reply.end(), msg.begin(), msg.end());
}

}  // namespace

UdpProtocol::UdpProtocol(SwarmTable& table, Metrics& metrics, const Clock& clock, UdpConfig config,
                         SipKey key)
    : table_(table), metrics_(metrics), clock_(clock), config_(config), key_(key) {}

std::uint64_t UdpProtocol::ConnectionId(const udp::endpoint& from, std::int64_t window) const {
  // Bound to the address only, not the port: a client may answer from
  // another socket (or a NAT may move its port); spoofing needs the address.
  std::uint8_t buf[16 + 1 + 8] = {};
  PeerAddress a = ToPeerAddress(from.address(), 0);
  std::memcpy(buf, a.ip.data(), 16);
  buf[16] = a.v6;
  std::memcpy(buf + 17, &window, 8);
  return SipHash24(key_, buf, sizeof buf);
}

bool UdpProtocol::ValidConnection(std::uint64_t id, const udp::endpoint& from) const {
  std::int64_t w = clock_.Now() / kWindowSeconds;
  return id == ConnectionId(from, w) || id == ConnectionId(from, w - 1);
}

bool UdpProtocol::Handle(const std::uint8_t* data, std::size_t n, const udp::endpoint& from,
                         std::vector<std::uint8_t>& reply) {
  reply.clear();
  if (n < 16) {
    metrics_.Count(RequestKind::kOther, false);
    return false;  // no transaction id to answer to
  }
  std::uint64_t conn = Get64(data);
  std::uint32_t action = Get32(data + 8);
  std::uint32_t txid = Get32(data + 12);
  if (action == kConnect) {
    if (conn != kProtocolId) {
      metrics_.Count(RequestKind::kUdpConnect, false);
      return false;
    }
    Put32(reply, kConnect);
    Put32(reply, txid);
    Put64(reply, ConnectionId(from, clock_.Now() / kWindowSeconds));
    metrics_.Count(RequestKind::kUdpConnect, true);
    return true;
  }
  RequestKind kind = action == kAnnounce ? RequestKind::kUdpAnnounce
                     : action == kScrape ? RequestKind::kUdpScrape
                                         : RequestKind::kOther;
  // Nothing is sent to a source that has not proven it receives at its
  // address (a valid connection id): a reply to a forged source would make
  // this tracker a reflector (BEP 15). A client with an expired id hears
  // nothing and, as BEP 15 clients do on a timeout, connects again.
  if (kind == RequestKind::kOther || !ValidConnection(conn, from)) {
    metrics_.Count(kind, false);
    return false;
  }
  if (config_.private_mode) {
    metrics_.Count(kind, false);
    Error(reply, txid, "private tracker: announce over HTTP with a token");
    return true;
  }
  bool ok = action == kAnnounce ? Announce(data, n, from, reply) : Scrape(data, n, reply);
  metrics_.Count(kind, ok);
  return true;
}

bool UdpProtocol::Announce(const std::uint8_t* d, std::size_t n, const udp::endpoint& from,
                           std::vector<std::uint8_t>& reply) {
  auto start = std::chrono::steady_clock::now();
  std::uint32_t txid = Get32(d + 12);
  if (n < 98) {
    Error(reply, txid, "announce too short");
    return false;
  }
  AnnounceRequest req;
  std::memcpy(req.info_hash.data(), d + 16, 20);
  std::memcpy(req.peer_id.data(), d + 36, 20);
  std::uint64_t downloaded = Get64(d + 56), left = Get64(d + 64), uploaded = Get64(d + 72);
  std::uint32_t event = Get32(d + 80);
  std::uint32_t ip = Get32(d + 84);
  // BEP 15 always carries a key; it binds the peer entry like HTTP's key=.
  req.has_key = true;
  req.key = Get32(d + 88);
  std::int32_t numwant = static_cast<std::int32_t>(Get32(d + 92));
  req.port = boost::endian::load_big_u16(d + 96);
  constexpr std::uint64_t kMax = 0x7fffffffffffffffULL;
  if (downloaded > kMax || left > kMax || uploaded > kMax) {
    Error(reply, txid, "invalid counters");
    return false;
  }
  if (event > 3) {
    Error(reply, txid, "invalid event");
    return false;
  }
  if (req.port == 0) {
    Error(reply, txid, "invalid port");
    return false;
  }
  req.downloaded = static_cast<std::int64_t>(downloaded);
  req.left = static_cast<std::int64_t>(left);
  req.uploaded = static_cast<std::int64_t>(uploaded);
  req.event = static_cast<AnnounceEvent>(event);
  // Answers must fit in one unfragmented datagram: 6 bytes per IPv4 peer,
  // 18 per IPv6 peer.
  const bool v6 = from.address().is_v6() && !from.address().to_v6().is_v4_mapped();
  const int cap = v6 ? 74 : 200;
  req.numwant = numwant < 0 ? -1 : std::min(numwant, cap);
  net::ip::address addr = from.address();
  if (config_.trust_ip_param && ip != 0 && !v6) addr = net::ip::address_v4(ip);
  PeerAddress peer = ToPeerAddress(addr, req.port);
  auto outcome = table_.Announce(req, peer, clock_.Now());
  if (!outcome) {
    Error(reply, txid, outcome.error());
    return false;
  }
  Put32(reply, kAnnounce);
  Put32(reply, txid);
  Put32(reply, Clamp32(table_.options().interval));
  Put32(reply, Clamp32(outcome->incomplete));
  Put32(reply, Clamp32(outcome->complete));
  int sent = 0;
  for (const AnnouncedPeer& p : outcome->peers) {
    if (p.addr.v6 != v6 || sent >= cap) continue;
    reply.insert(reply.end(), p.addr.ip.begin(), p.addr.ip.begin() + (v6 ? 16 : 4));
    reply.push_back(static_cast<std::uint8_t>(p.addr.port >> 8));
    reply.push_back(static_cast<std::uint8_t>(p.addr.port));
    ++sent;
  }
  metrics_.announce_latency().Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return true;
}

bool UdpProtocol::Scrape(const std::uint8_t* d, std::size_t n, std::vector<std::uint8_t>& reply) {
  std::uint32_t txid = Get32(d + 12);
  std::size_t count = (n - 16) / 20;
  if (count == 0 || (n - 16) % 20 != 0) {
    Error(reply, txid, "scrape needs whole 20-byte info-hashes");
    return false;
  }
  if (count > config_.max_scrape_hashes) {
    Error(reply, txid, "too many info-hashes");
    return false;
  }
  std::vector<InfoHash> hashes(count);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(hashes[i].data(), d + 16 + 20 * i, 20);
  auto counts = table_.Scrape(hashes);
  Put32(reply, kScrape);
  Put32(reply, txid);
  for (const auto& c : counts) {
    Put32(reply, c ? Clamp32(c->complete) : 0);
    Put32(reply, c ? Clamp32(c->downloaded) : 0);
    Put32(reply, c ? Clamp32(c->incomplete) : 0);
  }
  return true;
}

class UdpServer::Loop : public std::enable_shared_from_this<UdpServer::Loop> {
 public:
  Loop(net::io_context& io, UdpProtocol& protocol) : socket_(io), protocol_(protocol) {}

  boost::system::error_code Listen(const udp::endpoint& at) {
    boost::system::error_code ec;
    socket_.open(at.protocol(), ec);
    if (ec) return ec;
    if (at.address().is_v6()) socket_.set_option(net::ip::v6_only(true), ec);
    socket_.bind(at, ec);
    if (ec) return ec;
    socket_.non_blocking(true, ec);
    return ec;
  }
  void Wait() {
    socket_.async_wait(udp::socket::wait_read,
                       [self = shared_from_this()](boost::system::error_code ec) {
                         if (ec) return;  // closed
                         self->Drain();
                         self->Wait();
                       });
  }
  void Stop() {
    net::post(socket_.get_executor(), [self = shared_from_this()] {
      boost::system::error_code ec;
      self->socket_.close(ec);
    });
  }

 private:
  // Reads every queued datagram (up to a bound, to stay fair to TCP work on
  // the same thread) before waiting again.
  void Drain() {
    for (int i = 0; i < 256; ++i) {
      boost::system::error_code ec;
      udp::endpoint from;
      std::size_t n = socket_.receive_from(net::buffer(buf_), from, 0, ec);
      if (ec == net::error::would_block || ec == net::error::try_again) return;
      if (ec) continue;  // e.g. ICMP-reported errors from an earlier send
      if (protocol_.Handle(buf_.data(), n, from, reply_)) {
        socket_.send_to(net::buffer(reply_), from, 0, ec);
      }
    }
  }

  udp::socket socket_;
  UdpProtocol& protocol_;
  std::array<std::uint8_t, 2048> buf_;
  std::vector<std::uint8_t> reply_;
};

UdpServer::UdpServer(net::io_context& io, UdpProtocol& protocol)
    : loop_(std::make_shared<Loop>(io, protocol)) {}
UdpServer::~UdpServer() = default;
boost::system::error_code UdpServer::Listen(const udp::endpoint& at) { return loop_->Listen(at); }
void UdpServer::Start() { loop_->Wait(); }
void UdpServer::Stop() { loop_->Stop(); }

}  // namespace swarmcast::tracker
