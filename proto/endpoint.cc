#include "proto/endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>

namespace swarmcast::proto {
namespace {

constexpr std::size_t kMaxName = 253;  // DNS limit

// The canonical spelling of an IP literal (inet_ntop's), or nullopt.
std::optional<std::string> CanonicalIp(const std::string& host) {
  char buf[INET6_ADDRSTRLEN];
  in6_addr v6;
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return std::string(::inet_ntop(AF_INET6, &v6, buf, sizeof buf));
  }
  in_addr v4;
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return std::string(::inet_ntop(AF_INET, &v4, buf, sizeof buf));
  }
  return std::nullopt;
}

bool IsDnsName(std::string_view name) {
  if (name.empty() || name.size() > kMaxName || name.front() == '-' || name.front() == '.') {
    return false;
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string Endpoint::ToString() const { return FormatEndpoint(host, port); }

std::string FormatEndpoint(std::string_view host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string_view::npos;
  std::string out;
  out.reserve(host.size() + 8);
  if (v6) out += '[';
  out += host;
  if (v6) out += ']';
  out += ':';
  out += std::to_string(port);
  return out;
}

Result<Endpoint, std::string> ParseEndpoint(std::string_view text, const EndpointRules& rules) {
  const std::string want =
      rules.allow_names ? "HOST:PORT or [IPV6]:PORT" : "IP:PORT or [IPV6]:PORT";
  if (text.empty()) return Unexpected("empty address; want " + want);
  if (text.size() > kMaxName + 8) return Unexpected(std::string("address too long"));
  std::string_view host, port;
  bool bracketed = false;
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return Unexpected("'[' without ']'; want " + want);
    host = text.substr(1, close - 1);
    bracketed = true;
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      return Unexpected("unexpected text after ']'; want " + want);
    }
    port = rest.empty() ? std::string_view() : rest.substr(1);
    if (rest.empty() && !rules.default_port) return Unexpected("no port; want " + want);
    if (!rest.empty() && port.empty()) return Unexpected("empty port; want " + want);
  } else {
    const auto colon = text.rfind(':');
    if (colon != std::string_view::npos && text.find(':') != colon) {
      return Unexpected("an IPv6 address needs brackets: [" + std::string(text.substr(0, colon)) +
                        "]:PORT");
    }
    if (colon == std::string_view::npos) {
      if (!rules.default_port) return Unexpected("no port; want " + want);
      host = text;
    } else {
      host = text.substr(0, colon);
      port = text.substr(colon + 1);
      if (port.empty()) return Unexpected("empty port; want " + want);
    }
  }
  if (host.empty()) return Unexpected("no host; want " + want);

  Endpoint out;
  if (port.empty()) {
    out.port = *rules.default_port;
  } else {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value > 65535) {
      return Unexpected("bad port '" + std::string(port) + "' (want 1-65535)");
    }
    if (value == 0 && !rules.allow_port_zero)
      return Unexpected(std::string("port 0 is not allowed here"));
    out.port = static_cast<std::uint16_t>(value);
  }

  const std::string h(host);
  if (auto ip = CanonicalIp(h)) {
    const bool v6 = ip->find(':') != std::string::npos;
    if (v6 != bracketed) {
      return Unexpected(
          std::string(v6 ? "an IPv6 address needs brackets" : "only IPv6 goes in brackets"));
    }
    out.host = std::move(*ip);
    return out;
  }
  if (bracketed) return Unexpected("'" + h + "' is not an IPv6 address");
  if (!rules.allow_names) return Unexpected("'" + h + "' is not an IP address");
  if (!IsDnsName(h)) return Unexpected("'" + h + "' is not a valid host name");
  out.host = h;
  return out;
}

}  // namespace swarmcast::proto
