// UplinkMeter: the bytes this host has sent through the interface that
// holds an address (ChainShare's `sent_bytes`, node/push/chain_share.h).
//
// Read from /proc/self/net/dev, which shows the calling process's network
// namespace (a container's, a bench host's), with 64-bit counters. The
// interface is found with getifaddrs(3), also per namespace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace swarmcast::push {

class UplinkMeter {
 public:
  // The interface holding numeric address `ip`; nullopt when none does or
  // it is a loopback (no uplink that other hosts' traffic shares).
  static std::optional<UplinkMeter> ForAddress(std::string_view ip);

  // Bytes sent through it so far; nullopt when it is gone or unreadable.
  std::optional<std::uint64_t> SentBytes() const;
  const std::string& interface_name() const { return name_; }

  // The tx_bytes of `name` in /proc/net/dev's text (for the tests).
  static std::optional<std::uint64_t> ParseSentBytes(std::string_view dev_text,
                                                     std::string_view name);

 private:
  explicit UplinkMeter(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

}  // namespace swarmcast::push
