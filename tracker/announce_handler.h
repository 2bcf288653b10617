// HTTP announce and scrape (BEP 3, 7, 23, 48): from a request target and the
// client's address to a bencoded body. Errors become a bencoded
// `failure reason`, as clients expect; the HTTP status stays 200.
// Thread-safe (state lives in SwarmTable).
#pragma once

#include <boost/asio/ip/address.hpp>
#include <string>
#include <string_view>

#include "proto/log.h"
#include "tracker/clock.h"
#include "tracker/metrics.h"
#include "tracker/query_parse.h"
#include "tracker/swarm_state.h"
#include "tracker/token_check.h"

namespace swarmcast::tracker {

struct AnnounceConfig {
  QueryLimits limits;
  bool trust_ip_param = false;  // honour `ip=`; only behind a trusted proxy or on a closed LAN
  TokenSet tokens;              // non-empty: private mode
  std::int64_t min_interval = 30;
  proto::Logger log;  // refused HTTP announces, at debug only
};

// The address a request came from, as a PeerAddress (IPv4-mapped IPv6 is
// folded to IPv4).
PeerAddress ToPeerAddress(const boost::asio::ip::address& ip, std::uint16_t port);

class AnnounceHandler {
 public:
  AnnounceHandler(SwarmTable& table, Metrics& metrics, const Clock& clock, AnnounceConfig config);

  // `path_token` is the <token> of /announce/<token> (empty if none).
  std::string Announce(std::string_view query, std::string_view path_token,
                       const boost::asio::ip::address& remote);
  std::string Scrape(std::string_view query, std::string_view path_token);

  bool TokenOk(std::string_view path_token, std::string_view query_token) const;
  bool private_mode() const { return !config_.tokens.empty(); }

 private:
  SwarmTable& table_;
  Metrics& metrics_;
  const Clock& clock_;
  const AnnounceConfig config_;
};

std::string BencodeFailure(std::string_view reason);

}  // namespace swarmcast::tracker
