// Value types shared by the tracker's parts: info-hashes, peer ids, peer
// addresses and the announce event. Plain data, no behaviour beyond
// comparison and hashing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/hex.h"

namespace swarmcast::tracker {

using InfoHash = std::array<std::uint8_t, 20>;
using PeerId = std::array<std::uint8_t, 20>;

// BEP 15 numbering, so UDP values map directly.
enum class AnnounceEvent : std::uint8_t { kNone = 0, kCompleted = 1, kStarted = 2, kStopped = 3 };

std::string_view EventName(AnnounceEvent e);

// An IPv4 or IPv6 address and port. IPv4 is kept in the first 4 bytes;
// IPv4-mapped IPv6 addresses are folded to IPv4 by whoever builds one.
struct PeerAddress {
  std::array<std::uint8_t, 16> ip{};
  bool v6 = false;
  std::uint16_t port = 0;

  friend bool operator==(const PeerAddress&, const PeerAddress&) = default;
  std::string IpString() const;
};

using proto::FromHex;
using proto::ToHex;

// Keyed hash for the tracker's hash tables: the key is random per process,
// so a client cannot choose info-hashes that all land in one bucket.
struct ByteArrayHash {
  std::size_t operator()(const std::array<std::uint8_t, 20>& a) const noexcept;
};

}  // namespace swarmcast::tracker
