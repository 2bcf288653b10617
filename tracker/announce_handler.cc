#include "tracker/announce_handler.h"

#include <algorithm>
#include <chrono>

namespace swarmcast::tracker {
namespace {

void AppendInt(std::string& out, std::string_view key, std::int64_t v) {
  out += std::to_string(key.size());
  out += ':';
  out += key;
  out += 'i';
  out += std::to_string(v);
  out += 'e';
}

void AppendString(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

}  // namespace

std::string BencodeFailure(std::string_view reason) {
  std::string out = "d14:failure reason";
  AppendString(out, reason);
  out += 'e';
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

  std::string out;
  out.reserve(160 + outcome->peers.size() * (req->compact ? 6 : 64));
  out += 'd';
  AppendInt(out, "complete", outcome->complete);
  AppendInt(out, "downloaded", outcome->downloaded);
  AppendInt(out, "incomplete", outcome->incomplete);
  AppendInt(out, "interval", table_.options().interval);
  AppendInt(out, "min interval", config_.min_interval);
  if (req->compact) {
    std::string v4, v6;
    for (const AnnouncedPeer& p : outcome->peers) {
      std::string& dst = p.addr.v6 ? v6 : v4;
      dst.append(reinterpret_cast<const char*>(p.addr.ip.data()), p.addr.v6 ? 16 : 4);
      dst += static_cast<char>(p.addr.port >> 8);
      dst += static_cast<char>(p.addr.port & 0xff);
    }
    out += "5:peers";
    AppendString(out, v4);
    if (!v6.empty()) {
      out += "6:peers6";
      AppendString(out, v6);
    }
  } else {
    out += "5:peersl";
    for (const AnnouncedPeer& p : outcome->peers) {
      out += "d2:ip";
      AppendString(out, p.addr.IpString());
      if (!req->no_peer_id) {
        out += "7:peer id20:";
        out.append(reinterpret_cast<const char*>(p.id.data()), p.id.size());
      }
      AppendInt(out, "port", p.addr.port);
      out += 'e';
    }
    out += 'e';
  }
  out += 'e';
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
  std::string out = "d5:filesd";
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (!counts[i]) continue;  // BEP 48: unknown info-hashes are left out
    out += "20:";
    out.append(reinterpret_cast<const char*>(req->info_hashes[i].data()), 20);
    out += 'd';
    AppendInt(out, "complete", counts[i]->complete);
    AppendInt(out, "downloaded", counts[i]->downloaded);
    AppendInt(out, "incomplete", counts[i]->incomplete);
    out += 'e';
  }
  out += "ee";
  metrics_.Count(RequestKind::kHttpScrape, true);
  return out;
}

}  // namespace swarmcast::tracker
