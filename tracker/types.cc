#include "tracker/types.h"

#include <boost/asio/ip/address.hpp>

#include "tracker/siphash.h"

namespace swarmcast::tracker {

std::string_view EventName(AnnounceEvent e) {
  switch (e) {
    case AnnounceEvent::kNone:
      return "";
    case AnnounceEvent::kCompleted:
      return "completed";
    case AnnounceEvent::kStarted:
      return "started";
    case AnnounceEvent::kStopped:
      return "stopped";
  }
  return "";
}

std::string PeerAddress::IpString() const {
  if (v6) {
    boost::asio::ip::address_v6::bytes_type b;
    std::copy(ip.begin(), ip.end(), b.begin());
    return boost::asio::ip::address_v6(b).to_string();
  }
  boost::asio::ip::address_v4::bytes_type b;
  std::copy(ip.begin(), ip.begin() + 4, b.begin());
  return boost::asio::ip::address_v4(b).to_string();
}

std::size_t ByteArrayHash::operator()(const std::array<std::uint8_t, 20>& a) const noexcept {
  static const SipKey key = RandomSipKey();
  return static_cast<std::size_t>(SipHash24(key, a.data(), a.size()));
}

}  // namespace swarmcast::tracker
