// PushSender: the seed's end of the push channel (docs/protocol.md).
//
// Listens on a TCP port; LAN peers connect and subscribe with a HELLO that
// carries their bitfield, then keep it current with HAVE. The sender answers
// with its own HELLO and pushes PIECE frames in the order PushScheduler
// picks, writing each through a FanoutBackend: one call for every subscriber
// ready for the same piece. Sockets are non-blocking under one epoll loop; a
// subscriber that makes no progress for `stall_timeout` gets BYE (too slow)
// and is dropped, and never holds up the others.
//
// Threading: Start() spawns one push thread that owns all sender state; the
// public methods below are safe from any thread. Log lines go to the `log`
// callback from the push thread. The process must ignore SIGPIPE.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "node/push/fanout_backend.h"
#include "node/push/subscriber_addresses.h"
#include "proto/log.h"
#include "proto/push_frame.h"
#include "proto/result.h"

namespace swarmcast::push {

// What is being pushed: one regular file and its torrent's identity.
struct PushSource {
  std::string path;
  proto::Geometry geometry;
  proto::HashKind hash_kind = proto::HashKind::kSha1;
  std::vector<std::uint8_t> info_hash;
  std::array<std::uint8_t, proto::kPeerIdSize> peer_id{};
};

struct PushSenderOptions {
  std::string bind_address = "0.0.0.0";  // numeric IPv4 or IPv6
  std::uint16_t port = 0;                // 0: any free port
  FanoutKind fanout = FanoutKind::kAuto;
  std::chrono::milliseconds stall_timeout{15000};
  std::size_t max_subscribers = 512;
  // Payload bytes per second over all subscribers (0: unlimited), paced
  // one piece batch at a time with at most ~100 ms of burst.
  std::int64_t max_rate = 0;
  // When set, holds the address of every subscriber while it is
  // subscribed (the seed's BitTorrent session reads it).
  std::shared_ptr<SubscriberAddresses> addresses;
};

struct PushSenderStats {
  std::uint64_t payload_bytes = 0;   // piece bytes that reached sockets
  std::uint64_t pieces_sent = 0;     // whole PIECE frames delivered
  std::uint64_t fanout_calls = 0;    // backend calls that started a piece
  std::uint64_t fanout_targets = 0;  // sockets in those calls
  std::uint64_t subscribers = 0;     // subscribed right now
  std::uint64_t dropped = 0;         // subscribers dropped (slow or bad)
};

class PushSender {
 public:
  // Opens the file, binds, and starts the push thread. Errors say what
  // failed (file, backend, bind).
  static Result<std::unique_ptr<PushSender>, std::string> Start(PushSource source,
                                                                PushSenderOptions options,
                                                                proto::Logger log);
  ~PushSender();  // stops the thread and closes every socket
  PushSender(const PushSender&) = delete;
  PushSender& operator=(const PushSender&) = delete;

  std::uint16_t port() const { return port_; }
  std::string_view backend_name() const;
  PushSenderStats stats() const;

 private:
  class Loop;
  PushSender() = default;

  std::uint16_t port_ = 0;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace swarmcast::push
