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

std::string ToHex(const std::uint8_t* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  return out;
}

namespace {
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

template <std::size_t N>
bool FromHex(std::string_view hex, std::array<std::uint8_t, N>& out) {
  if (hex.size() != 2 * N) return false;
  for (std::size_t i = 0; i < N; ++i) {
    int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return true;
}
template bool FromHex<20>(std::string_view, std::array<std::uint8_t, 20>&);
template bool FromHex<32>(std::string_view, std::array<std::uint8_t, 32>&);

std::size_t ByteArrayHash::operator()(const std::array<std::uint8_t, 20>& a) const noexcept {
  static const SipKey key = RandomSipKey();
  return static_cast<std::size_t>(SipHash24(key, a.data(), a.size()));
}

}  // namespace swarmcast::tracker
