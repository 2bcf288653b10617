// PushDownload: the glue between a PushReceiver and the node's control
// thread, for `swarmcast get`.
//
// Pieces arrive on the receiver's thread and are posted to the control
// thread, which hands them to libtorrent (torrent_handle::add_piece) to be
// hash-checked like any other piece. The control thread reports back every
// verified piece (it goes to the seed as HAVE, so the seed does not push
// it) and every hash failure; a failure of a piece that came by push counts
// against the channel, and after kMaxPushHashFailures of them the
// subscription ends — the download goes on from peers.
//
// A piece's bytes stay in the receiver's budget from its first chunk until
// libtorrent has judged it (verified or failed: it has written the piece by
// then), or until it turns out not to be needed (verified meanwhile by
// another path); so the pieces queued for libtorrent are bounded too, and
// a disk that writes slowly makes the receiver stop reading. A piece
// libtorrent never reports on within kHandOverTimeout (a lost alert) is
// released all the same, so that the channel cannot wedge.
//
// Threading: Start() and every method run on the control thread; `post`
// must run its function there. No libtorrent types here, so the push code
// builds without libtorrent's headers.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "node/push/push_receiver.h"
#include "proto/log.h"

namespace swarmcast::push {

inline constexpr int kMaxPushHashFailures = 3;
inline constexpr auto kHandOverTimeout = std::chrono::seconds(120);

class PushDownload {
 public:
  using Clock = std::chrono::steady_clock;
  struct Hooks {
    // Runs a function on the control thread (e.g. asio::post).
    std::function<void(std::function<void()>)> post;
    // Control thread: give a pushed piece to libtorrent.
    std::function<void(std::uint32_t piece, std::vector<char> data)> add_piece;
    proto::Logger log;
    // Control thread, once: the subscription is in place (the seed
    // answered), or the channel ended before it was. May be empty.
    std::function<void()> on_settled;
    // Control thread: whether this copy of a whole piece goes to
    // libtorrent; false drops it (another channel's copy of it is with
    // libtorrent already: the first copy wins). Empty: always.
    std::function<bool(std::uint32_t piece)> claim;
    // Control thread: the seed's list of forwarders (PEERS). May be empty.
    std::function<void(std::vector<std::string> endpoints)> on_peers;
    // Control thread, once: the channel ended on its own (the other side
    // left, refused or failed), not by Stop(). May be empty.
    std::function<void()> on_ended;
  };

  static Result<std::unique_ptr<PushDownload>, std::string> Start(PushReceiverOptions options,
                                                                  PushIdentity identity,
                                                                  const std::vector<bool>& have,
                                                                  Hooks hooks);
  ~PushDownload();

  struct VerifiedCopy {
    bool ours = false;     // this channel's copy was the one handed to libtorrent
    bool forward = false;  // ours, and it came as PIECE frames (not DIRECT)
  };
  VerifiedCopy OnPieceVerified(std::uint32_t piece);
  void OnHashFailed(std::uint32_t piece);
  // libtorrent requested a block of `piece` over the wire: the sender is
  // told once, so that it does not push that piece here too.
  void OnPieceRequested(std::uint32_t piece);
  // Every progress tick: the payload bytes that came over the BitTorrent
  // wire so far (they count against the receiver's rate limit), and the
  // time (for kHandOverTimeout).
  void OnTick(std::int64_t wire_payload_bytes, Clock::time_point now = Clock::now());
  // Ends the subscription (e.g. the download is complete).
  void Stop(const std::string& why);
  // Tells the seed this node forwards on `port` (push_receiver.h).
  void SendListen(std::uint16_t port);

  bool active() const { return receiver_ != nullptr; }
  std::uint64_t pieces_pushed() const { return pieces_pushed_; }
  // Chunk payload received on the channel, over its whole life.
  std::uint64_t payload_bytes() const;
  // The receiver's figures (zero once the channel has ended).
  PushReceiverStats receiver_stats() const;
  std::uint64_t peak_held_bytes() const;
  int hash_failures() const { return hash_failures_; }
  // Whole pieces dropped because another channel's copy won.
  std::uint64_t duplicate_pieces() const { return duplicates_; }
  const std::string& end_reason() const { return end_reason_; }

 private:
  struct HandedOver {
    std::uint64_t bytes = 0;
    Clock::time_point at;
    bool forward = false;
  };

  explicit PushDownload(Hooks hooks);
  void OnPiece(std::uint32_t piece, std::vector<char> data, bool forward);
  void Release(std::uint32_t piece);
  void Settle();
  // " from ENDPOINT (what this channel brought)": for the line that says
  // why it ends, so that a log tells which channel carried bytes no piece
  // used (another channel's copy won, or this node already had it).
  std::string Tally(const PushReceiverStats& last) const;

  Hooks hooks_;
  std::unique_ptr<PushReceiver> receiver_;
  // Shared with the receiver's callbacks: they may run after this object
  // is gone, so they check `alive` on the control thread first.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::vector<bool> verified_;                  // by any path
  std::map<std::uint32_t, HandedOver> pushed_;  // handed to libtorrent, not yet judged
  std::uint64_t pieces_pushed_ = 0;
  std::uint64_t payload_before_ = 0;  // of a receiver that has ended
  std::uint64_t peak_before_ = 0;
  std::int64_t wire_seen_ = 0;
  int hash_failures_ = 0;
  std::uint64_t duplicates_ = 0;
  std::vector<bool> fetching_;  // told the sender libtorrent fetches it
  std::string end_reason_;
  std::string endpoint_;
};

}  // namespace swarmcast::push
