// PushReceiver: a LAN peer's end of the push channel (docs/protocol.md).
//
// Connects to the seed's push endpoint, subscribes with a HELLO carrying
// the pieces this node already has (and the swarm's token in private
// mode), checks the seed's HELLO (same info-hash and geometry, or the
// channel ends), and assembles PIECE chunks into whole pieces
// (node/push/piece_assembler.h) for `on_piece`. The caller passes each
// piece to libtorrent, which hash-checks it; pieces this node gets from
// other peers go back to the seed as HAVE through NotifyHave(), so the seed
// does not push them.
//
// Memory is bounded by design: pieces being assembled and pieces handed to
// `on_piece` but not yet Release()d together stay within `budget` bytes.
// When a chunk would start a piece that does not fit, the receiver stops
// reading its socket until room is released; TCP's window then closes and
// the seed's fan-out skips this subscriber until it drains, so a slow disk
// here slows this node only. `max_rate` caps what it reads from the seed,
// and bytes that came by the BitTorrent wire (ChargeRate) count against
// the same limit.
//
// Any decode error, a chunk that breaks the layout's rules, a wrong
// info-hash, or BYE ends the channel: `on_end` is called once with the
// reason, and the download goes on from peers.
//
// Threading: one receive thread, started by Start(); `on_piece`,
// `on_subscribed` and `on_end` run on it. NotifyHave(), NotifyFetching(), Release(),
// ChargeRate(), stats() and the destructor are safe from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "node/push/piece_assembler.h"
#include "node/push/tcp.h"
#include "node/push/token_bucket.h"
#include "proto/content_layout.h"
#include "proto/mutex.h"
#include "proto/push_frame.h"
#include "proto/result.h"

namespace swarmcast::push {

// The torrent a receiver subscribes to, and how its pieces lie over files.
struct PushIdentity {
  proto::HashKind hash_kind = proto::HashKind::kSha1;
  std::vector<std::uint8_t> info_hash;
  std::array<std::uint8_t, proto::kPeerIdSize> peer_id{};
  std::shared_ptr<const proto::ContentLayout> layout;

  const proto::Geometry& geometry() const { return layout->geometry(); }
};

inline constexpr std::uint64_t kDefaultPushBudget = 32u << 20;

struct PushReceiverOptions {
  std::string endpoint;  // seed's push "ADDR:PORT" or "[ADDR6]:PORT"
  // Numeric local address to connect from (empty: the kernel's choice).
  // The node's --listen address, so that the seed sees the same address
  // on the push channel as on the BitTorrent wire (node/wire_gate.h).
  std::string source_address;
  int connect_timeout_ms = 5000;
  // No byte from the seed for this long ends the channel (time spent
  // waiting for room or for the rate limit does not count). 0: never.
  std::chrono::milliseconds idle_timeout{30000};
  // Private mode: the swarm's token, sent in the HELLO.
  std::string token;
  // Bytes of pushed pieces held at once (being assembled, or handed to
  // on_piece and not yet released); raised to two pieces if smaller.
  std::uint64_t budget = kDefaultPushBudget;
  // Bytes per second read from the seed, wire bytes charged included
  // (0: unlimited).
  std::int64_t max_rate = 0;
  // A piece that got no chunk for this long is dropped, its room freed.
  std::chrono::milliseconds partial_timeout{60000};
  // HAVEs go out once `have_batch` are waiting or the first has waited
  // `have_batch_delay`; any other frame takes them along at once (1: each
  // at once). The seed's kernel answers every segment that carries them
  // with an ACK, 66 bytes on the seed's uplink, for every subscriber: 6%
  // of it with 64 chain links at 10 Mbit/s, one HAVE a segment
  // (node/push_wiring.cc; docs/benchmarks.md, session 23). The first HAVE
  // goes at once all the same: it tells the seed the link receives, and a
  // chain seed probes its first head only once it has (a 10 Mbit/s head
  // filled its first batch of four after 0.25 s, and the probe waited
  // for it: the whole line at the slow head's rate, session 25).
  std::uint32_t have_batch = 1;
  std::chrono::milliseconds have_batch_delay{0};
  // Receive thread, once: the seed answered our HELLO with its own (it has
  // taken the subscription). May be empty.
  std::function<void()> on_subscribed;
  // Receive thread: a chunk the assembler took (its payload valid during
  // the call), before the piece it completes, if any, goes to on_piece: a
  // chain link passes it on at once (PushSender::Relay). May be empty.
  std::function<void(const proto::Piece& chunk)> on_chunk;
  // Receive thread: the seed's current list of the group's forwarders,
  // "ADDR:PORT" each (PEERS). May be empty.
  std::function<void(std::vector<std::string> endpoints)> on_peers;
};

struct PushReceiverStats {
  std::uint64_t pieces = 0;         // whole pieces handed to on_piece
  std::uint64_t payload_bytes = 0;  // chunk payload received, whatever became of it
  std::uint64_t held_bytes = 0;     // budget in use now
  std::uint64_t peak_held_bytes = 0;
  std::uint64_t budget = 0;          // the budget in force
  std::uint64_t expired_pieces = 0;  // partial pieces dropped (partial_timeout)
};

class PushReceiver {
 public:
  // `data` holds PieceSize bytes; its size is what Release() gives back.
  // `forward`: the seed sent the piece as PIECE frames, not DIRECT
  // (proto/push_frame.h), so a forwarding node forwards it.
  using OnPiece = std::function<void(std::uint32_t piece, std::vector<char> data, bool forward)>;
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

  // This node verified `piece` (from anywhere): tell the seed, and drop
  // chunks of it that still arrive.
  void NotifyHave(std::uint32_t piece);
  // This node asked BitTorrent peers for `piece`: the seed is told
  // (FETCHING) so that it does not push it too. Pushed chunks of it that
  // still arrive are kept: whichever copy is whole first is used.
  void NotifyFetching(std::uint32_t piece);
  // Tells the seed this node forwards pushed pieces on `port` (LISTEN).
  void SendListen(std::uint16_t port);
  // A piece handed to on_piece is written, failed or dropped: its `bytes`
  // leave the budget.
  void Release(std::uint64_t bytes);
  // `bytes` arrived by another path and count against max_rate.
  void ChargeRate(std::int64_t bytes);
  PushReceiverStats stats() const;

 private:
  // A chunk that starts a piece there was no room for yet, copied out of
  // the decoder so that reading can stop until room is released.
  struct HeldChunk {
    std::uint32_t piece = 0;
    std::uint32_t offset = 0;
    std::vector<std::uint8_t> payload;
    bool forward = true;
  };
  enum class ChunkOutcome { kTaken, kNoRoom, kRefused };

  PushReceiver() = default;
  void Run();
  // Places a held chunk, then handles buffered frames until NeedMore or
  // no room; false (with *why) to end the channel.
  bool Drain(std::string* why);
  // Handles one decoded message; returns false (with *why) to end.
  bool OnMessage(proto::Message& m, std::string* why);
  ChunkOutcome OnChunk(const proto::Piece& chunk, std::string* why);
  bool Reserve(std::uint64_t bytes);
  bool Flush(std::string* why);
  void QueueFrame(const proto::Message& m);
  // How long the outbox waits for more HAVEs (0: send now).
  std::chrono::milliseconds OutboxHold(std::chrono::steady_clock::time_point now) const
      REQUIRES(mutex_);
  void Wake();

  PushReceiverOptions options_;
  PushIdentity identity_;
  OnPiece on_piece_;
  OnEnd on_end_;
  UniqueFd socket_;
  UniqueFd wake_;  // eventfd: new HAVEs, released room, or stop

  mutable Mutex mutex_;
  std::vector<std::uint8_t> outbox_ GUARDED_BY(mutex_);
  // HAVEs in the outbox held for a batch (PushReceiverOptions::have_batch),
  // and until when; none once another frame joins them.
  std::uint32_t batched_haves_ GUARDED_BY(mutex_) = 0;
  bool have_queued_ GUARDED_BY(mutex_) = false;  // the first went at once
  std::chrono::steady_clock::time_point batch_until_ GUARDED_BY(mutex_);
  bool stop_ GUARDED_BY(mutex_) = false;
  std::vector<bool> have_ GUARDED_BY(mutex_);
  TokenBucket rate_ GUARDED_BY(mutex_){0};

  // Receive-thread state.
  proto::PushFrameDecoder decoder_;
  std::unique_ptr<PieceAssembler> assembler_;
  std::optional<HeldChunk> held_;
  bool hello_ok_ = false;
  std::uint64_t budget_ = 0;
  std::atomic<std::uint64_t> held_bytes_{0};  // Release() may run on any thread
  std::atomic<std::uint64_t> peak_held_bytes_{0};
  std::atomic<std::uint64_t> pieces_{0};
  std::atomic<std::uint64_t> payload_bytes_{0};
  std::atomic<std::uint64_t> expired_pieces_{0};
  std::thread thread_;
};

}  // namespace swarmcast::push
