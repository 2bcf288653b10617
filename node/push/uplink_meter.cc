#include "node/push/uplink_meter.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "node/push/subscriber_addresses.h"

namespace swarmcast::push {
namespace {

std::string NumericAddress(const sockaddr* a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a->sa_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, text, sizeof text);
  } else if (a->sa_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, text, sizeof text);
  }
  return text;
}

}  // namespace

std::optional<UplinkMeter> UplinkMeter::ForAddress(std::string_view ip) {
  const std::string wanted = SubscriberAddresses::Normalize(ip);
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return std::nullopt;
  std::optional<UplinkMeter> found;
  for (const ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_LOOPBACK)) continue;
    if (NumericAddress(i->ifa_addr) == wanted) found = UplinkMeter(i->ifa_name);
  }
  ::freeifaddrs(list);
  return found;
}

std::optional<std::uint64_t> UplinkMeter::SentBytes() const {
  std::ifstream in("/proc/self/net/dev");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return ParseSentBytes(text.str(), name_);
}

// A line is "  NAME: " then 8 receive counters, then transmit bytes.
std::optional<std::uint64_t> UplinkMeter::ParseSentBytes(std::string_view dev_text,
                                                         std::string_view name) {
  while (!dev_text.empty()) {
    const std::size_t end = dev_text.find('\n');
    std::string_view line = dev_text.substr(0, end);
    dev_text = end == std::string_view::npos ? std::string_view() : dev_text.substr(end + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view label = line.substr(0, colon);
    label.remove_prefix(std::min(label.find_first_not_of(' '), label.size()));
    if (label != name) continue;
    std::string_view rest = line.substr(colon + 1);
    for (int field = 0; field <= 8; ++field) {
      rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
      std::uint64_t value = 0;
      const auto [next, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
      if (ec != std::errc()) return std::nullopt;
      if (field == 8) return value;
      rest.remove_prefix(static_cast<std::size_t>(next - rest.data()));
    }
  }
  return std::nullopt;
}

}  // namespace swarmcast::push
