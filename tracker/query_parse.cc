#include "tracker/query_parse.h"

#include <charconv>
#include <limits>

#include "proto/hex.h"

namespace swarmcast::tracker {
namespace {

bool ParseNonNegative(std::string_view s, std::int64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0;
}

// Percent-decodes one parameter's value into `field`, or sets `error`.
bool DecodeInto(std::string_view raw, std::size_t max_length, const char* what, std::string& field,
                std::string& error) {
  auto decoded = PercentDecode(raw, max_length);
  if (!decoded) {
    error = what;
    return false;
  }
  field = std::move(*decoded);
  return true;
}

bool DecodeHash(std::string_view raw, std::size_t max_len, std::array<std::uint8_t, 20>& out) {
  auto decoded = PercentDecode(raw, max_len);
  if (!decoded) return false;
  const std::string& bytes = *decoded;
  if (bytes.size() == 20) {
    std::copy(bytes.begin(), bytes.end(), out.begin());
    return true;
  }
  return bytes.size() == 40 && FromHex(bytes, out);
}

// The `key` value as a number: hex digits read as such, anything else
// hashed with FNV-1a (fixed, so the value survives a restart in the
// database).
std::uint64_t KeyValue(std::string_view key) {
  std::uint64_t v = 0;
  bool hex = key.size() <= 16;
  for (char c : key) {
    int d = proto::HexDigitValue(c);
    if (d < 0) {
      hex = false;
      break;
    }
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  if (hex) return v;
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : key) h = (h ^ static_cast<std::uint8_t>(c)) * 0x100000001b3ULL;
  return h;
}

}  // namespace

SplitTargetResult SplitTarget(std::string_view target) {
  std::size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

std::optional<std::string> PercentDecode(std::string_view in, std::size_t max_length) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (out.size() >= max_length) return std::nullopt;
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      int hi = proto::HexDigitValue(in[i + 1]), lo = proto::HexDigitValue(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi << 4 | lo));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<AnnounceRequest, std::string> ParseAnnounceQuery(std::string_view query,
                                                        const QueryLimits& limits) {
  AnnounceRequest req;
  std::string error;
  bool have_hash = false, have_peer = false, have_port = false;
  unsigned seen = 0;  // bit per known parameter, to refuse duplicates
  auto once = [&](unsigned bit, std::string_view name) {
    if (seen & bit) {
      error = "duplicate parameter: " + std::string(name);
      return false;
    }
    seen |= bit;
    return true;
  };
  bool ok =
      ForEachParam(query, limits.max_params, [&](std::string_view name, std::string_view raw) {
        if (name == "info_hash") {
          if (!once(1, name)) return false;
          if (!DecodeHash(raw, limits.max_value_length, req.info_hash)) {
            error = "invalid info_hash: must be 20 bytes";
            return false;
          }
          have_hash = true;
          return true;
        }
        if (name == "peer_id") {
          if (!once(2, name)) return false;
          auto id = PercentDecode(raw, limits.max_value_length);
          if (!id || id->size() != 20) {
            error = "invalid peer_id: must be 20 bytes";
            return false;
          }
          std::copy(id->begin(), id->end(), req.peer_id.begin());
          have_peer = true;
          return true;
        }
        if (name == "port") {
          if (!once(4, name)) return false;
          std::int64_t port;
          if (!ParseNonNegative(raw, port) || port < 1 || port > 65535) {
            error = "invalid port";
            return false;
          }
          req.port = static_cast<std::uint16_t>(port);
          have_port = true;
          return true;
        }
        struct Counter {
          const char* name;
          unsigned bit;
          std::int64_t* field;
        };
        for (const Counter& c :
             {Counter{"uploaded", 8, &req.uploaded}, Counter{"downloaded", 16, &req.downloaded},
              Counter{"left", 32, &req.left}}) {
          if (name != c.name) continue;
          if (!once(c.bit, name)) return false;
          if (!ParseNonNegative(raw, *c.field)) {
            error = "invalid " + std::string(name);
            return false;
          }
          return true;
        }
        if (name == "event") {
          if (!once(64, name)) return false;
          if (raw.empty() || raw == "empty" || raw == "paused") {
            req.event = AnnounceEvent::kNone;
          } else if (raw == "started") {
            req.event = AnnounceEvent::kStarted;
          } else if (raw == "completed") {
            req.event = AnnounceEvent::kCompleted;
          } else if (raw == "stopped") {
            req.event = AnnounceEvent::kStopped;
          } else {
            error = "invalid event";
            return false;
          }
          return true;
        }
        if (name == "numwant") {
          if (!once(128, name)) return false;
          std::int64_t n;
          if (raw.size() > 1 && raw[0] == '-') {
            req.numwant = -1;  // some clients send -1 for "default"
            return true;
          }
          if (!ParseNonNegative(raw, n)) {
            error = "invalid numwant";
            return false;
          }
          req.numwant =
              static_cast<int>(std::min<std::int64_t>(n, std::numeric_limits<int>::max()));
          return true;
        }
        if (name == "compact") {
          if (!once(256, name)) return false;
          if (raw != "0" && raw != "1") {
            error = "invalid compact";
            return false;
          }
          req.compact = raw == "1";
          return true;
        }
        if (name == "no_peer_id") {
          req.no_peer_id = raw != "0";
          return true;
        }
        if (name == "ip") {
          return once(512, name) && DecodeInto(raw, 64, "invalid ip", req.ip, error);
        }
        if (name == "token") {
          return once(1024, name) &&
                 DecodeInto(raw, limits.max_value_length, "invalid token", req.token, error);
        }
        if (name == "key") {
          std::string key;
          if (!once(2048, name) ||
              !DecodeInto(raw, limits.max_value_length, "invalid key", key, error)) {
            return false;
          }
          req.has_key = !key.empty();
          req.key = KeyValue(key);
          return true;
        }
        // Other parameters (corrupt, supportcrypto, trackerid, ...) carry
        // nothing this tracker uses; their count is still bounded above.
        if (raw.size() > 3 * limits.max_value_length) {
          error = "parameter too long";
          return false;
        }
        return true;
      });
  if (!ok) {
    if (error.empty()) error = "too many parameters";
    return Unexpected(error);
  }
  if (!have_hash) return Unexpected(std::string("missing info_hash"));
  if (!have_peer) return Unexpected(std::string("missing peer_id"));
  if (!have_port) return Unexpected(std::string("missing port"));
  return req;
}

Result<ScrapeRequest, std::string> ParseScrapeQuery(std::string_view query,
                                                    const QueryLimits& limits) {
  ScrapeRequest req;
  std::string error;
  bool ok = ForEachParam(query, limits.max_scrape_hashes + limits.max_params,
                         [&](std::string_view name, std::string_view raw) {
                           if (name == "info_hash") {
                             if (req.info_hashes.size() >= limits.max_scrape_hashes) {
                               error = "too many info_hash values";
                               return false;
                             }
                             InfoHash h;
                             if (!DecodeHash(raw, limits.max_value_length, h)) {
                               error = "invalid info_hash: must be 20 bytes";
                               return false;
                             }
                             req.info_hashes.push_back(h);
                           } else if (name == "token") {
                             return DecodeInto(raw, limits.max_value_length, "invalid token",
                                               req.token, error);
                           }
                           return true;
                         });
  if (!ok) return Unexpected(error.empty() ? std::string("too many parameters") : error);
  return req;
}

}  // namespace swarmcast::tracker
