#include "tracker/announce_handler.h"

#include <algorithm>
#include <cassert>
#include <chrono>

#include "proto/bencode_writer.h"

namespace swarmcast::tracker {

std::string BencodeFailure(std::string_view reason) {
  std::string out;
  proto::BencodeWriter w(out);
  w.BeginDict().Key("failure reason").String(reason).End();
  assert(w.ok());
  return out;
}

PeerAddress ToPeerAddress(const boost::asio::ip::address& ip, std::uint16_t port) {
  PeerAddress a;
  a.port = port;
  if (ip.is_v6() && ip.to_v6().is_v4_mapped()) {
    auto b = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, ip.to_v6()).to_bytes();
    std::copy(b.begin(), b.end(), a.ip.begin());
  } else if (ip.is_v6()) {
    auto b = ip.to_v6().to_bytes();
    std::copy(b.begin(), b.end(), a.ip.begin());
    a.v6 = true;
  } else {
    auto b = ip.to_v4().to_bytes();
    std::copy(b.begin(), b.end(), a.ip.begin());
  }
  return a;
}

AnnounceHandler::AnnounceHandler(SwarmTable& table, Metrics& metrics, const Clock& clock,
                                 AnnounceConfig config)
    : table_(table), metrics_(metrics), clock_(clock), config_(std::move(config)) {}

bool AnnounceHandler::TokenOk(std::string_view path_token, std::string_view query_token) const {
  if (config_.tokens.empty()) return true;
  return config_.tokens.Matches(path_token.empty() ? query_token : path_token);
}

std::string AnnounceHandler::Announce(std::string_view query, std::string_view path_token,
                                      const boost::asio::ip::address& remote) {
  auto start = std::chrono::steady_clock::now();
  auto fail = [&](std::string_view reason) {
    metrics_.Count(RequestKind::kHttpAnnounce, false);
    if (config_.log.Enabled(proto::LogLevel::kDebug)) {
      config_.log.Debug("refused announce from " + remote.to_string() + ": " + std::string(reason));
    }
    return BencodeFailure(reason);
  };
  auto req = ParseAnnounceQuery(query, config_.limits);
  if (!req) return fail(req.error());
  if (!TokenOk(path_token, req->token)) return fail("private tracker: missing or wrong token");
  boost::asio::ip::address ip = remote;
  if (config_.trust_ip_param && !req->ip.empty()) {
    boost::system::error_code ec;
    ip = boost::asio::ip::make_address(req->ip, ec);
    if (ec) return fail("invalid ip");
  }
  PeerAddress from = ToPeerAddress(ip, req->port);
  auto outcome = table_.Announce(*req, from, clock_.Now());
  if (!outcome) return fail(outcome.error());

  // Written straight into the reply (no BencodeValue tree: that costs
  // an allocation per key on the busiest path); keys in byte order.
  std::string out;
  out.reserve(160 + outcome->peers.size() * (req->compact ? 6 : 64));
  proto::BencodeWriter w(out);
  w.BeginDict();
  w.Key("complete").Int(outcome->complete);
  w.Key("downloaded").Int(outcome->downloaded);
  w.Key("incomplete").Int(outcome->incomplete);
  // A downloading peer may get a shorter interval (progress_interval); its
  // min interval is never longer than that.
  w.Key("interval").Int(outcome->interval);
  w.Key("min interval").Int(std::min(config_.min_interval, outcome->interval));
  if (req->compact) {
    std::string v4, v6;
    for (const AnnouncedPeer& p : outcome->peers) {
      std::string& dst = p.addr.v6 ? v6 : v4;
      dst.append(reinterpret_cast<const char*>(p.addr.ip.data()), p.addr.v6 ? 16 : 4);
      dst += static_cast<char>(p.addr.port >> 8);
      dst += static_cast<char>(p.addr.port & 0xff);
    }
    w.Key("peers").String(v4);
    if (!v6.empty()) w.Key("peers6").String(v6);
  } else {
    w.Key("peers").BeginList();
    for (const AnnouncedPeer& p : outcome->peers) {
      w.BeginDict().Key("ip").String(p.addr.IpString());
      if (!req->no_peer_id) {
        w.Key("peer id").String(
            std::string_view(reinterpret_cast<const char*>(p.id.data()), p.id.size()));
      }
      w.Key("port").Int(p.addr.port).End();
    }
    w.End();
  }
  w.End();
  assert(w.ok());
  metrics_.Count(RequestKind::kHttpAnnounce, true);
  metrics_.announce_latency().Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return out;
}

std::string AnnounceHandler::Scrape(std::string_view query, std::string_view path_token) {
  auto fail = [&](std::string_view reason) {
    metrics_.Count(RequestKind::kHttpScrape, false);
    return BencodeFailure(reason);
  };
  auto req = ParseScrapeQuery(query, config_.limits);
  if (!req) return fail(req.error());
  if (!TokenOk(path_token, req->token)) return fail("private tracker: missing or wrong token");
  if (req->info_hashes.empty()) return fail("scrape needs at least one info_hash");
  // Dictionary keys must be sorted and unique.
  std::sort(req->info_hashes.begin(), req->info_hashes.end());
  req->info_hashes.erase(std::unique(req->info_hashes.begin(), req->info_hashes.end()),
                         req->info_hashes.end());
  auto counts = table_.Scrape(req->info_hashes);
  std::string out;
  proto::BencodeWriter w(out);
  w.BeginDict().Key("files").BeginDict();
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (!counts[i]) continue;  // BEP 48: unknown info-hashes are left out
    w.Key(std::string_view(reinterpret_cast<const char*>(req->info_hashes[i].data()), 20));
    w.BeginDict();
    w.Key("complete").Int(counts[i]->complete);
    w.Key("downloaded").Int(counts[i]->downloaded);
    w.Key("incomplete").Int(counts[i]->incomplete);
    w.End();
  }
  w.End().End();
  assert(w.ok());
  metrics_.Count(RequestKind::kHttpScrape, true);
  return out;
}

}  // namespace swarmcast::tracker
