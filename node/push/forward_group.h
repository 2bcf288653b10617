// ForwardGroup: a get's part in forwarding (Mutualcast): pieces the seed
// pushed to this node are pushed on by it to the rest of its group, and
// this node takes the pieces the others forward to it.
//
// - Forwarding out: once the first piece that came from the seed's channel
//   is verified, a PushSender in forwarder mode starts on the download's
//   own files (bound to `bind_address`, any port), `on_listening` tells the
//   seed its port (LISTEN), and every further piece that came from the
//   seed's channel as PIECE frames and verified becomes available to it
//   (SourceHas); pieces the seed sent as DIRECT (to every subscriber
//   lacking them, at once) are kept, not forwarded. It
//   sends from the file's page cache through the fan-out backend, after
//   libtorrent wrote and verified the piece: the bytes it forwards are ones
//   that passed the hash check, and the receive buffer is long gone by
//   then. Subscribers must present `token` when it is set (the same token
//   the seed gates on). It keeps serving until Stop().
// - In a chain (ForwardGroupOptions::chain, the seed's `--push-chain`),
//   every verified piece is forwarded, whichever channel or peer brought
//   it, and the seed's PEERS names only the node before this one.
// - Forwarding in: for each endpoint of the seed's PEERS list this node
//   is not yet subscribed to, a PushDownload (a receiver) subscribes to
//   that forwarder. Every channel, the seed's included, hands whole pieces
//   through Claim(): the first copy of a piece goes to libtorrent, later
//   ones are dropped (counted as duplicates); a copy that fails its hash
//   check frees the piece for the next one. A forwarder that leaves ends
//   its channel only; the seed reassigns its pieces and the BitTorrent
//   wire repairs the rest.
//
// Threading: every method runs on the node's control thread; `post` must
// run its function there. No libtorrent types.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "node/push/fanout_backend.h"
#include "node/push/push_download.h"
#include "node/push/push_sender.h"
#include "proto/log.h"
#include "proto/mutex.h"

namespace swarmcast::push {

struct ForwardGroupOptions {
  std::filesystem::path content_root;  // where the download's files are (staging)
  std::string bind_address = "0.0.0.0";
  std::string source_address;  // connect from here (the wire's address)
  std::string token;
  FanoutKind fanout = FanoutKind::kAuto;
  // Each forwarder channel's receive budget (bytes held at once).
  std::uint64_t peer_budget = 8u << 20;
  std::int64_t max_rate = 0;  // per forwarder channel
  // Holds the address of every subscriber of this node's forwarder (for
  // the get's wire gate). May be null.
  std::shared_ptr<SubscriberAddresses> addresses;
  // A link of the seed's chain (`get --chain`, PushSenderOptions::chain):
  // forward every piece verified, whichever channel or peer brought it.
  bool chain = false;
};

struct ForwardGroupStats {
  std::uint64_t peer_channels = 0;       // forwarders subscribed to, over the whole life
  std::uint64_t peer_payload_bytes = 0;  // chunk payload that came from forwarders
  std::uint64_t peer_pieces = 0;         // whole pieces from forwarders given to libtorrent
  std::uint64_t duplicate_pieces = 0;    // whole pieces dropped: another copy won
  std::uint64_t forwarded_bytes = 0;     // payload this node forwarded
  std::uint64_t relayed_bytes = 0;       // of which passed on as it landed (a chain)
  std::uint64_t forwarded_pieces = 0;
  std::uint64_t forward_subscribers = 0;  // subscribed to this node now
  std::uint64_t fanout_calls = 0;
  std::uint64_t fanout_targets = 0;
  std::uint16_t forward_port = 0;  // 0: not forwarding
};

class ForwardGroup {
 public:
  struct Hooks {
    std::function<void(std::function<void()>)> post;
    std::function<void(std::uint32_t piece, std::vector<char> data)> add_piece;
    proto::Logger log;
    // The forwarder is listening on `port`: tell the seed.
    std::function<void(std::uint16_t port)> on_listening;
  };

  ForwardGroup(ForwardGroupOptions options, PushIdentity identity, std::vector<bool> have,
               Hooks hooks);
  ~ForwardGroup();

  // A chain link forwards from the start: its forwarder listens (and the
  // seed hears LISTEN) before any piece came, so the seed links the next
  // node to it at once. No-op unless ForwardGroupOptions::chain.
  void StartChainLink();
  // First copy wins: true hands this copy of `piece` to libtorrent.
  bool Claim(std::uint32_t piece);
  // The seed's current PEERS list.
  void OnPeers(const std::vector<std::string>& endpoints);
  // `piece` verified; `to_forward`: the seed channel's copy was the one,
  // and it came as PIECE frames, which ask for it to be forwarded (a
  // DIRECT copy reached the rest of the group from the seed already).
  void OnPieceVerified(std::uint32_t piece, bool to_forward);
  // libtorrent asked a peer for `piece`: every forwarder channel is told
  // (PushDownload::OnPieceRequested).
  void OnPieceRequested(std::uint32_t piece);
  // Whether this node subscribes to a forwarder at `ip` (numeric,
  // normalized as SubscriberAddresses does).
  bool SubscribedTo(std::string_view ip) const;
  void OnHashFailed(std::uint32_t piece);
  // The seed's channel ended on the seed's side (it left, or cut us off):
  // from now on every verified piece is forwarded, DIRECT ones and those
  // from other forwarders included. No one resends what the seed sent as
  // DIRECT, and this node's wire gate keeps its subscribers off the wire,
  // so without this a subscriber lacking such a piece would wait forever.
  void OnSeedChannelEnded();
  // Every progress tick. Each forwarder channel is charged, against its
  // rate limit, what came by every other path (the wire, the seed's
  // channel: `seed_payload_bytes`, the other forwarders), so that
  // --max-download-rate caps all of them together, a tick late at most.
  void OnTick(std::int64_t wire_payload_bytes, std::uint64_t seed_payload_bytes);
  // Chunk payload from all forwarders so far.
  std::uint64_t peer_payload_bytes() const;
  // Every piece verified.
  bool complete() const { return missing_ == 0; }
  // Ends every channel and the forwarder (the transfer is ending).
  void Stop();

  ForwardGroupStats stats() const;

  // A chain link's receivers (the seed's channel too) hand this each
  // chunk as it lands, and this node's forwarder passes it on at once
  // (PushSender::Relay), not back to `from` (the channel's host). Safe
  // from any thread, and after Stop(); empty unless
  // ForwardGroupOptions::chain.
  std::function<void(const proto::Piece& chunk)> chunk_relay(std::string from) const;

 private:
  // The forwarder as the receive threads see it: set once it runs,
  // cleared before it stops.
  struct RelayTarget {
    Mutex mutex;
    PushSender* sender GUARDED_BY(mutex) = nullptr;
  };
  // Starts this node's forwarder, keeping content file `anchor_file` open.
  void StartForwarder(std::uint32_t anchor_file);
  // Offers a verified piece to this node's forwarder, starting it first.
  void Forward(std::uint32_t piece);
  void StopPeerChannels(const std::string& why);

  ForwardGroupOptions options_;
  PushIdentity identity_;
  Hooks hooks_;
  std::vector<bool> verified_;
  std::uint32_t missing_ = 0;
  std::vector<bool> claimed_;  // a copy is with libtorrent or verified
  // Channels to forwarders, with their endpoints, in the order they
  // started. A chain link may be relinked to a forwarder it left before
  // (the seed moved a link out of the line between them): then a second
  // channel to the same endpoint follows the first, stopped, one.
  std::vector<std::pair<std::string, std::unique_ptr<PushDownload>>> peers_;
  std::unique_ptr<PushSender> forwarder_;
  std::shared_ptr<RelayTarget> relay_ = std::make_shared<RelayTarget>();
  PushSenderStats forwarder_last_;  // its figures when it stopped
  std::uint16_t forward_port_ = 0;
  bool forwarder_failed_ = false;
  bool stopped_ = false;
  bool seed_gone_ = false;
  std::uint64_t peer_channels_ = 0;
};

}  // namespace swarmcast::push
