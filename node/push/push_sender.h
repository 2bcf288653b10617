// PushSender: the seed's end of the push channel (docs/protocol.md).
//
// Listens on a TCP port; LAN peers connect and subscribe with a HELLO that
// carries their bitfield (and, in private mode, the swarm's token), then
// keep it current with HAVE. The sender answers with its own HELLO and
// pushes each piece the PushScheduler picks as PIECE frames of at most one
// chunk each (proto/content_layout.h), read from the content's files
// through a FanoutBackend: one call for every subscriber ready for the same
// chunk. Sockets are non-blocking under one epoll loop, and each subscriber
// keeps its own place in its frames: one whose socket is full is skipped
// until it drains, so a slow receiver never holds up the others, and one
// that makes no progress for `stall_timeout` is dropped.
//
// Admission (node/push/admission.h): a HELLO within `hello_timeout`, at
// most `max_per_address` connections from one address, and the token check
// of private mode; a refused connection gets a BYE that says why.
//
// The same sender runs in two roles. A seed's holds every piece, hands its
// subscribers the group's forwarders (a subscriber that sends LISTEN is
// one; every change of that set goes out as PEERS to all), and covers
// every piece once before it fans pieces out. A forwarder's (in a get,
// PushSenderOptions::forwarder) starts with no piece, pushes only what
// SourceHas() gave it, fans each piece out at once to all of its
// subscribers lacking it, and sends no PEERS.
//
// A seed with PushSenderOptions::chain links its subscribers into a chain
// instead (docs/architecture.md, "Chain"): it pushes to the first one
// alone, and sends each later one PEERS naming only the one before it. A
// link found slow becomes a leaf: it takes from the chain's last link and
// feeds no one (node/push/chain_order.h).
//
// Threading: Start() spawns one push thread that owns all sender state; the
// public methods below are safe from any thread. Log lines go to the `log`
// callback from the push thread. The process must ignore SIGPIPE.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "node/push/chain_order.h"
#include "node/push/fanout_backend.h"
#include "node/push/head_pacer.h"
#include "node/push/subscriber_addresses.h"
#include "proto/content_layout.h"
#include "proto/log.h"
#include "proto/push_frame.h"
#include "proto/result.h"

namespace swarmcast::push {

// What is being pushed: the torrent's files and its identity.
struct PushSource {
  std::filesystem::path root;  // the directory the layout's paths are relative to
  std::shared_ptr<const proto::ContentLayout> layout;
  proto::HashKind hash_kind = proto::HashKind::kSha1;
  std::vector<std::uint8_t> info_hash;
  std::array<std::uint8_t, proto::kPeerIdSize> peer_id{};
};

struct PushSenderOptions {
  std::string bind_address = "0.0.0.0";  // numeric IPv4 or IPv6
  std::uint16_t port = 0;                // 0: any free port
  FanoutKind fanout = FanoutKind::kAuto;
  std::chrono::milliseconds stall_timeout{15000};
  // Connections in all and from one address (subscribed or not), and how
  // long a connection may take to send its HELLO.
  std::size_t max_subscribers = 512;
  std::size_t max_connections_per_address = 4;
  std::chrono::milliseconds hello_timeout{10000};
  // Private mode when not empty: a HELLO must carry one of these.
  std::vector<std::string> tokens;
  // Payload bytes per second over all subscribers (0: unlimited), paced
  // one piece batch at a time with at most ~100 ms of burst.
  std::int64_t max_rate = 0;
  // When set, holds the address of every subscriber while it is
  // subscribed (the seed's BitTorrent session reads it).
  std::shared_ptr<SubscriberAddresses> addresses;
  // A get's forwarder (see above) rather than a seed.
  bool forwarder = false;
  // Seed: a chain rather than a group (see above). Each subscriber (in
  // the order they subscribed) takes every piece from the one before it,
  // which must forward all it verifies (`get --chain`); the seed pushes to
  // the first alone. One TCP flow per link at that link's full rate: the
  // relay reference reached 1.06-1.09x of size / link rate at N = 2-64
  // this way, where N - 1 flows per link took 1.25-3x (docs/benchmarks.md,
  // session 14).
  bool chain = false;
  // Chain: when a link counts as slow and becomes a leaf.
  ChainOrderOptions chain_review;
  // Chain: a pacing ceiling on the push to a new head, so that its cold
  // connection's slow start does not overflow the head's switch port
  // (node/push/head_pacer.h); nullopt: none.
  std::optional<HeadPacerOptions> head_pacing = HeadPacerOptions{};
  // Seed with more subscribers than this: at most this many at once hold
  // pushed bytes they have not acknowledged (0: no limit). A piece can be
  // re-served over the wire only once it is whole, so a seed that starts
  // one piece for each of N subscribers at once has none whole before N
  // pieces' time, and then N at the same moment; with a few at a time
  // they are whole one after another from the first piece's time on
  // (docs/benchmarks.md, session 10: 10% faster at N = 32 and 64). Enough
  // of them to keep the uplink full while each is held back by its
  // receiver's busy downlink: 8 measured the same as 16 at N = 32 and 64,
  // 4 about 20% slower (session 11). `seed --push-in-flight`.
  std::size_t max_in_flight = 16;
  // Bytes a subscriber's socket may hold that it has not sent yet (0: the
  // kernel's buffer, up to tcp_wmem's 4 MiB). A piece is committed to a
  // subscriber when it is written, so what waits in that buffer was chosen
  // for the swarm as it was seconds earlier: at N = 16 on 100 Mbit/s links
  // a seed had written 154 MB to its sockets when the gets finished, and
  // the 15 gets that reported had read 119 MB of it. A few pieces' worth
  // keeps the pipe full and each choice fresh: N = 64 at 10 Mbit/s median
  // 1.59x -> 1.49x of the limit over 5 pairs, N = 2-32 unchanged
  // (docs/benchmarks.md, session 12).
  int max_unsent_bytes = 256 << 10;
  // TCP congestion control of the sockets pieces are pushed on (empty: the
  // host's default). A chain link's ACKs for what it forwards come back
  // down its own download link, behind the pieces it receives at line
  // rate, so that hop's RTT is the queue at the link's switch port (about
  // 10 ms at 100 Mbit/s) while its minimum RTT is the LAN's (tens of us).
  // BBR (v1, Linux's) sizes its window from bandwidth x minimum RTT plus
  // what it saw ACKs bunch up, and at times settles on a window a quarter
  // of what that RTT needs: every link behind the hop then runs at that
  // rate until the hop's own download ends (docs/benchmarks.md, session
  // 20: with BBR 3 of 20 runs at N = 4 and 8 took 1.44-1.88x the limit,
  // with Cubic none of 20; side by side, no collapse in 32 runs with
  // Cubic push sockets, 3 in 32 without). Cubic grows its window until a
  // loss, whatever the RTT. If the kernel refuses it, the host's default
  // stays and the sender says so once.
  std::string congestion_control = "cubic";
  // Forwarder: the content file to keep open for control frames (one that
  // exists: the file of a piece already written). Seed: the first file
  // that holds data.
  std::optional<std::uint32_t> anchor_file;
  // The most payload one PIECE frame carries. A chain's seed cuts finer
  // (node/push/chain_chunk.h), and a forwarder that relays (Relay()) cuts
  // what it sends from its files as the seed cut what it relayed, so that
  // the next link can pass each chunk on as it lands: `max_chunk` only
  // until it saw the first.
  std::uint32_t max_chunk = proto::kMaxChunkLength;
};

struct PushSenderStats {
  std::uint64_t payload_bytes = 0;   // piece bytes that reached sockets
  std::uint64_t relayed_bytes = 0;   // chunk bytes queued by Relay() (a forwarder)
  std::uint64_t pieces_sent = 0;     // whole PIECE frames delivered
  std::uint64_t fanout_calls = 0;    // backend calls that started a piece
  std::uint64_t fanout_targets = 0;  // sockets in those calls
  std::uint64_t subscribers = 0;     // subscribed right now
  std::uint64_t dropped = 0;         // subscribers dropped (slow or bad)
  std::uint64_t refused = 0;         // connections turned away before subscribing
  std::uint64_t forwarders = 0;      // subscribers that sent LISTEN, right now
  // Chain seed: it has a head, and pieces it has not yet written to it
  // (the chain wants the uplink; node/push/chain_share.h), right now.
  bool chain_head_lacks = false;
};

class PushSender {
 public:
  // Opens the first file, binds, and starts the push thread. Errors say
  // what failed (file, backend, bind).
  static Result<std::unique_ptr<PushSender>, std::string> Start(PushSource source,
                                                                PushSenderOptions options,
                                                                proto::Logger log);
  ~PushSender();  // stops the thread and closes every socket
  PushSender(const PushSender&) = delete;
  PushSender& operator=(const PushSender&) = delete;

  std::uint16_t port() const { return port_; }
  // Forwarder: the sender now holds `piece` (verified, on disk) and may
  // push it. Any thread.
  void SourceHas(std::uint32_t piece);
  // Forwarder: a chunk of a piece this node is still receiving, not yet
  // whole or checked; a whole piece in one chunk is left to SourceHas(). Every subscriber lacking
  // the piece gets it at once, so that a chain's hop costs a chunk's time (cut-through); once
  // SourceHas(piece), one that got part of the piece gets the rest from the
  // file, and one that got all of it is not sent it again. Every receiver
  // checks every piece itself: a bad chunk here fails there too, as a bad
  // push does. Not to subscribers at `from` (numeric, as SubscriberAddresses
  // normalizes it), the node the chunk came from: after the probe of a
  // two-link chain the new head takes from the old head, which takes from
  // it, and would echo every piece back to it before its HAVE came. Any
  // thread; the payload is copied.
  void Relay(const proto::Piece& chunk, std::string from = {});
  // Chain seed: ends the chain (node/push/chain_share.h) with a BYE that
  // says `why` to every subscriber, and refuses later ones with it, so
  // that the gets fetch over the BitTorrent wire. Any thread.
  void EndChain(std::string why);
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
