// BEP 15 UDP tracker: connect, announce and scrape on one datagram socket.
//
// Connection ids are SipHash-2-4 of (client address, two-minute time
// window) under a key drawn at start-up, so an off-path sender cannot guess
// one for an address it does not receive packets at; an id is accepted in
// its window and the next (BEP 15 asks for at least one minute).
//
// Threads: one receive loop per socket; a datagram is handled inline and
// answered with a non-blocking send (dropped if the socket buffer is full,
// which UDP clients retry).
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <memory>
#include <vector>

#include "tracker/clock.h"
#include "tracker/metrics.h"
#include "tracker/siphash.h"
#include "tracker/swarm_state.h"

namespace swarmcast::tracker {

struct UdpConfig {
  bool private_mode = false;  // BEP 15 has no token: announces are refused
  bool trust_ip_param = false;
  std::size_t max_scrape_hashes = 74;  // fits one 1500-byte datagram
};

// The pure part, testable without sockets: one datagram in, the reply (if
// any) out. Malformed input without a usable transaction id, an unknown
// action and a wrong or expired connection id get no reply: only a
// verified source hears errors.
class UdpProtocol {
 public:
  UdpProtocol(SwarmTable& table, Metrics& metrics, const Clock& clock, UdpConfig config,
              SipKey key);
  // Returns false when nothing should be sent back.
  bool Handle(const std::uint8_t* data, std::size_t n, const boost::asio::ip::udp::endpoint& from,
              std::vector<std::uint8_t>& reply);
  std::uint64_t ConnectionId(const boost::asio::ip::udp::endpoint& from, std::int64_t window) const;

 private:
  bool Announce(const std::uint8_t* data, std::size_t n, const boost::asio::ip::udp::endpoint& from,
                std::vector<std::uint8_t>& reply);
  bool Scrape(const std::uint8_t* data, std::size_t n, std::vector<std::uint8_t>& reply);
  bool ValidConnection(std::uint64_t id, const boost::asio::ip::udp::endpoint& from) const;

  SwarmTable& table_;
  Metrics& metrics_;
  const Clock& clock_;
  const UdpConfig config_;
  const SipKey key_;
};

class UdpServer {
 public:
  UdpServer(boost::asio::io_context& io, UdpProtocol& protocol);
  ~UdpServer();
  boost::system::error_code Listen(const boost::asio::ip::udp::endpoint& at);
  void Start();
  void Stop();

 private:
  class Loop;
  std::shared_ptr<Loop> loop_;
};

}  // namespace swarmcast::tracker
