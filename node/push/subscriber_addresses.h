// SubscriberAddresses: the IP addresses the push sender is pushing to right
// now, shared with the seed's BitTorrent session, which does not serve
// those peers over the wire (node/wire_gate.h): every byte the seed sends
// to them goes through the push scheduler, so none is sent twice.
//
// Counted per address, since several subscribers may share one (NAT,
// loopback tests); an address stays in the set until its last subscriber
// leaves. Addresses are numeric strings; an IPv4-mapped IPv6 address is
// stored as plain IPv4, so both sides agree however the socket was bound.
// Thread-safe: the push thread writes, libtorrent's network thread reads.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "proto/mutex.h"

namespace swarmcast::push {

class SubscriberAddresses {
 public:
  void Add(std::string_view ip) EXCLUDES(mutex_);
  void Remove(std::string_view ip) EXCLUDES(mutex_);
  bool Contains(std::string_view ip) const EXCLUDES(mutex_);

  // "::ffff:10.0.0.2" -> "10.0.0.2"; other addresses unchanged.
  static std::string Normalize(std::string_view ip);

 private:
  mutable Mutex mutex_;
  std::unordered_map<std::string, int> count_ GUARDED_BY(mutex_);
};

}  // namespace swarmcast::push
