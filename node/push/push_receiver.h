// PushReceiver: a LAN peer's end of the push channel (docs/protocol.md).
//
// Connects to the seed's push endpoint, subscribes with a HELLO carrying
// the pieces this node already has, checks the seed's HELLO (same info-hash
// and geometry, or the channel ends), and reassembles PIECE frames into
// whole pieces for `on_piece`. The caller passes each piece to libtorrent,
// which hash-checks it; pieces this node gets from other peers go back to
// the seed as HAVE through NotifyHave(), so the seed does not push them.
//
// Any decode error, a wrong info-hash, or BYE ends the channel: `on_end`
// is called once with the reason, and the download goes on from peers.
//
// Threading: one receive thread, started by Start(); `on_piece` and
// `on_end` run on it. NotifyHave() and the destructor are safe from any
// thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "node/push/tcp.h"
#include "proto/push_frame.h"
#include "proto/result.h"

namespace swarmcast::push {

struct PushIdentity {
  proto::HashKind hash_kind = proto::HashKind::kSha1;
  std::vector<std::uint8_t> info_hash;
  std::array<std::uint8_t, proto::kPeerIdSize> peer_id{};
  proto::Geometry geometry;
};

struct PushReceiverOptions {
  std::string endpoint;  // seed's push "ADDR:PORT" or "[ADDR6]:PORT"
  // Numeric local address to connect from (empty: the kernel's choice).
  // The node's --listen address, so that the seed sees the same address
  // on the push channel as on the BitTorrent wire (node/wire_gate.h).
  std::string source_address;
  int connect_timeout_ms = 5000;
  // No byte from the seed for this long ends the channel.
  std::chrono::milliseconds idle_timeout{30000};
  // Receive thread, once: the seed answered our HELLO with its own (it has
  // taken the subscription). May be empty.
  std::function<void()> on_subscribed;
};

struct PushReceiverStats {
  std::uint64_t pieces = 0;
  std::uint64_t payload_bytes = 0;
};

class PushReceiver {
 public:
  using OnPiece = std::function<void(std::uint32_t piece, std::vector<char> data)>;
  using OnEnd = std::function<void(const std::string& reason)>;

  // Connects and starts the receive thread; fails if the connection
  // cannot be made. `have` holds one entry per piece.
  static Result<std::unique_ptr<PushReceiver>, std::string> Start(PushReceiverOptions options,
                                                                  PushIdentity identity,
                                                                  const std::vector<bool>& have,
                                                                  OnPiece on_piece, OnEnd on_end);
  ~PushReceiver();  // says BYE if the channel is still up, joins the thread
  PushReceiver(const PushReceiver&) = delete;
  PushReceiver& operator=(const PushReceiver&) = delete;

  // This node verified `piece` (from anywhere): tell the seed.
  void NotifyHave(std::uint32_t piece);
  PushReceiverStats stats() const;

 private:
  PushReceiver() = default;
  void Run();
  // Handles one decoded message; returns false (with *why) to end.
  bool OnMessage(proto::Message& m, std::string* why);
  bool Flush(std::string* why);
  void QueueFrame(const proto::Message& m);

  PushReceiverOptions options_;
  PushIdentity identity_;
  OnPiece on_piece_;
  OnEnd on_end_;
  UniqueFd socket_;
  UniqueFd wake_;  // eventfd: new HAVEs or stop

  std::mutex mutex_;  // guards outbox_ and stop_
  std::vector<std::uint8_t> outbox_;
  bool stop_ = false;

  // Receive-thread state.
  proto::PushFrameDecoder decoder_;
  bool hello_ok_ = false;
  std::uint32_t assembling_ = 0;  // piece being reassembled
  std::vector<char> piece_;       // its bytes so far
  std::atomic<std::uint64_t> pieces_{0};
  std::atomic<std::uint64_t> payload_bytes_{0};
  std::thread thread_;
};

}  // namespace swarmcast::push
