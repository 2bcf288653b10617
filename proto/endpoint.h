// Host and port, as flags, URLs and the registry's push field spell them:
// "HOST:PORT", or "[IPV6]:PORT" (an IPv6 literal always in brackets, so
// that the last colon is never ambiguous). The one parser and formatter
// for the node and the tracker. Pure: no name resolution.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proto/result.h"

namespace swarmcast::proto {

struct Endpoint {
  // An IPv4 or IPv6 literal (canonical spelling, no brackets), or a DNS
  // name where the rules admit one.
  std::string host;
  std::uint16_t port = 0;

  bool is_v6() const { return host.find(':') != std::string::npos; }
  // "HOST:PORT", "[V6]:PORT".
  std::string ToString() const;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

struct EndpointRules {
  bool allow_port_zero = false;  // a listen address: 0 means any free port
  bool allow_names = false;      // a DNS name as host (tracker URLs); else an IP literal
  // When set, "HOST" alone (no ":PORT") means this port.
  std::optional<std::uint16_t> default_port;
};

// Why the text is refused, without a prefix (the caller names the flag).
Result<Endpoint, std::string> ParseEndpoint(std::string_view text, const EndpointRules& rules = {});

// "HOST:PORT", with brackets when `host` is an IPv6 literal.
std::string FormatEndpoint(std::string_view host, std::uint16_t port);

}  // namespace swarmcast::proto
