// Parsing of announce and scrape requests from the HTTP request target
// (BEP 3, BEP 23, BEP 48). Pure and bounded: every input is checked against
// QueryLimits, and every failure is a short reason fit for a bencoded
// `failure reason`. Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/result.h"
#include "tracker/types.h"

namespace swarmcast::tracker {

struct QueryLimits {
  std::size_t max_params = 32;         // name=value pairs in one announce
  std::size_t max_value_length = 256;  // after percent-decoding
  std::size_t max_scrape_hashes = 64;  // info_hash values in one scrape
};

struct AnnounceRequest {
  InfoHash info_hash{};
  PeerId peer_id{};
  std::uint16_t port = 0;
  std::int64_t uploaded = 0;
  std::int64_t downloaded = 0;
  std::int64_t left = 0;
  AnnounceEvent event = AnnounceEvent::kNone;
  int numwant = -1;  // -1: not given, use the server default
  bool compact = true;
  bool no_peer_id = false;
  // BEP 7 `key` (BEP 15: the key field): binds the peer entry to this
  // client across address changes. Up to 16 hex digits are read as a
  // number (so `key=0000ABCD` over HTTP equals key 0xABCD over UDP, as
  // libtorrent sends them); any other value is hashed (FNV-1a 64).
  bool has_key = false;
  std::uint64_t key = 0;
  std::string ip;     // the `ip` parameter as sent; used only when trusted
  std::string token;  // the `token` parameter (private mode)
};

// Calls fn(name, raw_value) for each '&'-separated pair of a query, raw
// meaning still percent-encoded; stops and returns false when fn does, or
// when there are more than max_params pairs. Empty pairs are skipped.
template <class Fn>
bool ForEachParam(std::string_view query, std::size_t max_params, Fn&& fn) {
  std::size_t count = 0;
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    if (++count > max_params) return false;
    std::size_t eq = pair.find('=');
    std::string_view name = pair.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    if (!fn(name, value)) return false;
  }
  return true;
}

// "/announce?x=y" -> path "/announce", query "x=y".
struct SplitTargetResult {
  std::string_view path;
  std::string_view query;
};
SplitTargetResult SplitTarget(std::string_view target);

// %XX decoding; '+' stays literal (clients escape binary bytes, and a
// literal '+' is a byte value, not a space). Nothing on a bad escape or
// when the output would exceed max_length.
std::optional<std::string> PercentDecode(std::string_view in, std::size_t max_length);

// Parses an announce query. The info_hash and peer_id must decode to
// exactly 20 bytes (info_hash may also be 40 hex digits).
Result<AnnounceRequest, std::string> ParseAnnounceQuery(std::string_view query,
                                                        const QueryLimits& limits);

struct ScrapeRequest {
  std::vector<InfoHash> info_hashes;  // empty: the client asked for everything
  std::string token;
};
Result<ScrapeRequest, std::string> ParseScrapeQuery(std::string_view query,
                                                    const QueryLimits& limits);

}  // namespace swarmcast::tracker
