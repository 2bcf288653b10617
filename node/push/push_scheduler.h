// PushScheduler decides which piece the seed pushes next and to whom.
//
// The seed walks the pieces in one cyclic scan in disk order. While some
// piece has no copy in the swarm, each piece goes to exactly one subscriber,
// so the seed's uplink puts every piece into the swarm once before it sends
// any piece twice (peers then trade pieces among themselves): uncovered
// pieces, those with the fewest copies, always come first. Once every piece
// has a copy, the scan goes on in disk order and the next piece that a
// ready subscriber lacks goes to every ready subscriber lacking it, in one
// fan-out batch, so one read serves them all. The scan resumes after the
// last piece chosen, so a late subscriber starts wherever the scan is and
// wraps around, and disk reads stay sequential. A piece a subscriber has
// asked BitTorrent peers for (FETCHING) is not fanned out to it: libtorrent
// does not cancel its request when the push brings the piece first, so
// both copies would use its downlink (measured: 13-17% of the file
// arrived twice with the seed on a 4x faster link, session 13).
//
// A piece that lost its last copy (its holder left, or the send to it
// failed) is covered again before the scan's next piece, lowest first,
// and the scan then goes on where it was. Left to the scan, it would come
// round again only at the file's end, and every receiver's whole-file
// SHA-256, which hashes in file order, would wait at it until then (a
// chain link killed half-way left every get behind it 0.26-0.38 s of
// hashing after a 256 MiB copy at 100 Mbit/s, session 35).
//
// A forwarder (a subscriber that re-serves what the seed assigned it to the
// rest of its group, docs/architecture.md "Forwarding") runs the same
// scheduler over the pieces it holds itself: its source starts empty, gains
// pieces through SourceHas(), and it skips the cover pass, since its
// subscribers' copies are what it exists to make.
//
// Pure bookkeeping: no I/O, no clock. Not thread-safe; owned by the push
// sender's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

namespace swarmcast::push {

using PieceIndex = std::uint32_t;
using SubscriberId = std::uint32_t;

struct PushBatch {
  PieceIndex piece = 0;
  std::vector<SubscriberId> targets;  // never empty
  // Sent as PIECE (a forwarding target forwards it to its group): the
  // cover pass's one copy of the piece. Otherwise DIRECT (kept): a fan-out
  // batch, which goes to every ready subscriber lacking the piece, and a
  // forwarder's pushes.
  bool forward = false;
};

struct PushSchedulerOptions {
  // The sender holds every piece (a seed). When false it holds only those
  // given to SourceHas() (a forwarder).
  bool source_complete = true;
  // Put every piece into the swarm once (one subscriber each) before
  // fanning any out; off for a forwarder.
  bool cover_first = true;
  // Cover pass: give the next piece to the ready subscriber with the
  // smallest forwarding backlog (copies its group still lacks of the
  // pieces it was given), so a subscriber gets pieces in proportion to
  // what it forwards (Mutualcast's redistribution queues). Off: the one
  // holding the fewest pieces.
  bool assign_by_backlog = false;
  // With assign_by_backlog: the cover pass waits (gives no batch at all)
  // rather than feed a ready subscriber whose backlog exceeds the
  // smallest backlog of all subscribers by more than this many pieces
  // times the other subscribers (0: never waits). So a subscriber that is
  // ready only because its downlink is idle does not pile up pieces its
  // uplink cannot forward while better forwarders are busy receiving.
  std::uint32_t backlog_slack_pieces = 0;
};

class PushScheduler {
 public:
  explicit PushScheduler(std::uint32_t piece_count, PushSchedulerOptions options = {});

  std::uint32_t piece_count() const { return piece_count_; }

  // A subscriber joins with the pieces it already has (its HELLO
  // bitfield, one bool per piece). Re-adding an id replaces it.
  void AddSubscriber(SubscriberId id, const std::vector<bool>& have);
  // Forgets a subscriber and releases the pieces in flight to it.
  void RemoveSubscriber(SubscriberId id);
  bool HasSubscriber(SubscriberId id) const { return subscribers_.contains(id); }

  // The subscriber verified `piece`, from the push channel or from other
  // peers (a HAVE frame). Out-of-range indices are ignored: the frame
  // decoder rejects them before they get here.
  void OnHave(SubscriberId id, PieceIndex piece);
  // The whole frame for `piece` reached the subscriber's socket: it now
  // counts as a copy held by that subscriber.
  void OnSent(SubscriberId id, PieceIndex piece);
  // Sending `piece` failed (dropped, disconnected): release it.
  void OnSendFailed(SubscriberId id, PieceIndex piece);
  // The subscriber asked BitTorrent peers for `piece` (a FETCHING frame):
  // no batch brings it to that subscriber from now on, since the wire's
  // copy would arrive as well. Not a copy, so the cover pass still counts
  // it as lacking there; its HAVE comes once the wire delivered it.
  // Returns whether the mark is new (false: unknown id, out of range, or
  // marked already).
  bool OnFetching(SubscriberId id, PieceIndex piece);
  // The mark has been held long enough: a wire request that was refused
  // (a choke) must not keep the piece from the push for ever.
  void OnFetchingExpired(SubscriberId id, PieceIndex piece);

  // The next batch for the subscribers in `ready` (those with room for a
  // new frame), or nothing when none of them lacks a piece that is not
  // already on its way to it. Marks the chosen pieces in flight.
  std::optional<PushBatch> NextBatch(std::span<const SubscriberId> ready);

  // The sender now holds `piece` and may push it (out of range: ignored).
  void SourceHas(PieceIndex piece);
  bool source_has(PieceIndex piece) const { return source_[piece]; }

  // Copies of `piece` held by or in flight to subscribers.
  std::uint32_t copies(PieceIndex piece) const { return copies_[piece]; }
  // Pieces without any copy in the swarm (as far as the seed knows).
  std::uint32_t uncovered_pieces() const { return uncovered_; }
  // Changes assign_by_backlog and backlog_slack_pieces (a seed uses them
  // only while it has forwarders).
  void SetBacklogPolicy(bool assign_by_backlog, std::uint32_t slack_pieces) {
    options_.assign_by_backlog = assign_by_backlog;
    options_.backlog_slack_pieces = slack_pieces;
  }

  // Copies of the pieces the cover pass gave `id` that other subscribers
  // still lack (0 for an unknown id).
  std::uint64_t backlog(SubscriberId id) const;

  // Where the next scan starts.
  PieceIndex cursor() const { return cursor_; }
  // Whether this subscriber has (or is being sent) every piece.
  bool IsComplete(SubscriberId id) const;
  // Whether it has `piece` or is being sent it (false: unknown id, or out
  // of range).
  bool Holds(SubscriberId id, PieceIndex piece) const;
  // Whether it has a piece the sender lacks (false: unknown id): it is
  // ahead of this sender, so it takes from it as a second source (a
  // chain's head from the link behind it, or from the head before it),
  // not as the next link.
  bool Ahead(SubscriberId id) const;
  // Whether `id` has (HAVE or sent, not in flight) every piece `other`
  // has or is being sent (false when either is unknown). A piece on its
  // way to `other` counts: a chain's first head, probed while the seed
  // was sending it a piece, holds that piece moments later, and the new
  // head, which had only the chunks relayed until the probe, got the
  // rest only when the seed's scan came round again, at the file's end;
  // every link's SHA-256 waited for it (0.6 s of a 256 MiB copy at
  // 100 Mbit/s, session 34).
  bool HasEveryPieceOf(SubscriberId id, SubscriberId other) const;

 private:
  struct Subscriber {
    std::vector<bool> have;
    std::vector<bool> in_flight;
    std::vector<bool> fetching;  // asked for over the wire (OnFetching)
    std::uint32_t held = 0;      // pieces in have or in_flight
    std::uint32_t ahead = 0;     // pieces in have that the source lacks
    std::uint64_t backlog = 0;   // see backlog()
  };
  static constexpr SubscriberId kNobody = ~SubscriberId{0};

  // Holds = has the piece or it is in flight to it; copies_ counts holders.
  bool Holds(const Subscriber& s, PieceIndex p) const { return s.have[p] || s.in_flight[p]; }
  // Whether a push of `p` to it would be of use: it neither holds the
  // piece nor fetches it over the wire.
  bool Wants(const Subscriber& s, PieceIndex p) const { return !Holds(s, p) && !s.fetching[p]; }
  void SetHave(Subscriber& s, PieceIndex p, bool value);
  void SetInFlight(Subscriber& s, PieceIndex p, bool value);
  void Adjust(Subscriber& s, PieceIndex p, bool held_before);
  // `p`'s last copy went (a holder left, a send failed): uncovered again.
  void Lost(PieceIndex p);

  std::optional<PushBatch> CoverNextPiece(std::span<const SubscriberId> ready);
  std::optional<PushBatch> CoverPiece(PieceIndex p, std::span<const SubscriberId> ready);
  std::optional<PushBatch> FanOutNextPiece(std::span<const SubscriberId> ready);
  std::optional<PushBatch> AssignNextUnforwarded(std::span<const SubscriberId> ready);
  PushBatch AssignTo(Subscriber& s, SubscriberId id, PieceIndex p);

  std::uint32_t piece_count_;
  PushSchedulerOptions options_;
  std::vector<bool> source_;  // pieces the sender holds
  std::vector<std::uint32_t> copies_;
  // Cover pass: who was given each piece (kNobody: no one, or it left).
  std::vector<SubscriberId> assigned_;
  void ChangeBacklog(PieceIndex p, bool up);
  std::uint32_t uncovered_;
  // Pieces that had a copy and lost it (cover_first only); CoverNextPiece
  // drops those covered again.
  std::set<PieceIndex> lost_;
  PieceIndex cursor_ = 0;
  bool cover_waiting_ = false;  // the last cover pass held back (backlog_slack_pieces)
  std::unordered_map<SubscriberId, Subscriber> subscribers_;
};

}  // namespace swarmcast::push
