// ChainOrder: the order of a chain seed's links (PushSenderOptions::chain,
// docs/architecture.md "Chain"), and the rule that moves a slow link to
// the tail.
//
// A chain runs at its slowest link's rate from that link on: one receiver
// on a 10 Mbit/s link, third of eight on 100 Mbit/s links, held the five
// behind it to its rate (10.8x of size / link rate, session 14). The seed
// learns from HAVE frames how many pieces each link has verified. A link
// that, for `windows_to_move` windows in a row, gains under half as many
// pieces as the one before it while already `min_lag` pieces behind it is
// moved to the tail: the one after it is linked to the one before it, and
// the slow one takes its pieces from the old tail at its own rate, holding
// up no one.
//
// A slow uplink shows as the link *after* it falling behind. So when a
// second link falls behind the same predecessor, the predecessor is moved
// instead (its uplink is the slow part); that covers the head's uplink too.
//
// A head slow to receive holds every link behind it to exactly its rate,
// so none falls behind, and the seed cannot tell it from its own slow
// uplink. So the first head is probed: once the chain has run for a whole
// window, it moves to the tail (where it holds up no one, and, being ahead
// of everyone, loses nothing), and a head is slow when it gains under half
// of the best any link gained in a recent window (`best_gain_`, which
// decays, so one fast link's burst does not make every head slow).
// A head found slow moves to the tail in turn.
//
// Pure bookkeeping: no I/O; the caller passes the time. Not thread-safe;
// owned by the push sender's thread. A link that does not take pieces from
// the one before it (not linked: it is the head, or the one before does not
// forward) is never judged, nor is one linked to its current predecessor
// for less than a whole window (it is still connecting).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "node/push/push_scheduler.h"

namespace swarmcast::push {

// When a link counts as slow (see above).
struct ChainOrderOptions {
  std::chrono::milliseconds window{100};
  int windows_to_move = 2;
  // The predecessor gained at least this many pieces in the window: a
  // link idle because the one before it has nothing new is not slow.
  std::uint32_t min_predecessor_gain = 1;
  // Pieces a link must be behind the one before it: a hop normally lags
  // by a few pieces (one in assembly, one being checked, the socket's).
  std::uint32_t min_lag = 16;
  // Move the first head to the tail once the chain runs (see above).
  bool probe_head = true;
};

class ChainOrder {
 public:
  using Clock = std::chrono::steady_clock;
  using Options = ChainOrderOptions;

  enum class Reason {
    kFellBehind,  // `moved` (== behind) fell behind `ahead`
    kSlowUplink,  // a second link (`behind`) fell behind `moved` (== ahead)
    kSlowHead,    // the head, `moved`, gained under half the best gain
    kHeadProbe,   // the first head, `moved`, makes way once (see above)
  };
  // What a review decided: `moved` went to the tail.
  struct Move {
    SubscriberId moved;
    Reason reason;
    SubscriberId ahead = 0;   // kFellBehind, kSlowUplink
    SubscriberId behind = 0;  // kFellBehind, kSlowUplink
  };

  explicit ChainOrder(Options options = {}) : options_(options) {}

  // A new link at the tail, holding the pieces its HELLO named.
  void Join(SubscriberId id, std::vector<bool> have);
  void Leave(SubscriberId id);
  bool Contains(SubscriberId id) const;
  // It verified `piece` (a HAVE; a repeat, or an index out of range, is
  // not progress).
  void OnHave(SubscriberId id, PieceIndex piece);
  // It now takes pieces from the link before it (linked), or from none.
  void SetLinked(SubscriberId id, bool linked, Clock::time_point now);

  // Links, head first.
  std::vector<SubscriberId> order() const;
  // Call at least once a window: closes the window that ended, if one did,
  // and moves at most one link to the tail.
  std::optional<Move> Review(Clock::time_point now);
  // When the current window ends.
  Clock::time_point next_review() const { return window_start_ + options_.window; }

 private:
  struct Link {
    SubscriberId id;
    std::vector<bool> have;
    std::uint32_t held = 0;           // pieces verified
    std::uint32_t held_at_start = 0;  // at the current window's start
    bool linked = false;
    Clock::time_point linked_since;
    int falling_windows = 0;  // in a row
    int fell_behind_it = 0;   // successors moved for falling behind it
  };
  Link* Find(SubscriberId id);
  void MoveToTail(std::size_t index);
  // Notes when links_[0] became the head.
  void NoteHead(Clock::time_point now);
  // The head's review, after the others'; gains[0] is its gain.
  std::optional<Move> ReviewHead(std::uint32_t gain);

  Options options_;
  std::vector<Link> links_;
  Clock::time_point window_start_{};
  // The most pieces any link gained in one window, decaying by 1/8 a
  // window (see above).
  std::uint32_t best_gain_ = 0;
  SubscriberId head_ = 0;
  Clock::time_point head_since_{};
  int head_falling_windows_ = 0;
  bool probed_ = false;
};

}  // namespace swarmcast::push
