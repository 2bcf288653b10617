// ChainOrder: the order of a chain seed's links (PushSenderOptions::chain,
// docs/architecture.md "Chain"), and the rules that take a slow link out
// of the line.
//
// A chain runs at its slowest link's rate from that link on: one receiver
// on a 10 Mbit/s link, third of eight on 100 Mbit/s links, held the five
// behind it to its rate (10.8x of size / link rate, session 14). So a
// link found slow becomes a *leaf*: it takes its pieces from the last
// link of the line (whose uplink is otherwise idle) at its own rate, and
// feeds no one. Newcomers join the line, not the leaves, so a slow link
// cannot end up in front of others, and a link wrongly found slow (a CPU
// stall on a busy machine) loses nothing: the line's last link feeds it
// at its full rate. Once such a leaf keeps up with that link for a whole
// window (it is under `min_lag` pieces behind it and gains at least a
// `slow_share`th of what it gains) while that link runs at the line's
// rate (it gains at least a `slow_share`th of what the head gains), it
// rejoins the line at its end: it takes from the same link as before, so
// no data path changes, but the leaf's place is free again for a slow
// link that comes later; a slow leaf, left further behind every window,
// never rejoins. A last link held back by a slow link still in the line
// proves nothing: a slow leaf keeps up with it as well, and rejoining
// would put it in front of every newcomer (session 36). The seed learns from
// HAVE frames how many pieces each link has verified, and counts them in
// windows; it looks at the evidence on every review:
//
// - A link falls behind when the one before it gains more than it does,
//   window after window (a streak; a window in which it keeps up ends
//   it). Once the streak has lasted `windows_to_move` windows, the one
//   before gained `min_sample` pieces in it, the link under a
//   `slow_share`th of that, and it is `min_lag` pieces behind, it becomes
//   a leaf. The window under way counts as soon as the one before has
//   gained more in it, and the evidence is looked at on every review, so
//   a link becomes a leaf the moment it is in, not at a window's end: each
//   link behind a slow one runs at its rate until then (session 25). The
//   sample keeps a few pieces a window (10 Mbit/s links: about 2 of 64 KiB
//   a 100 ms window) from reading as a rate, and a link catching up on a
//   predecessor far ahead is not falling behind: it gains as much.
// - A head slow to receive holds every link behind it to exactly its
//   rate, so none falls behind, and the seed cannot tell it from its own
//   slow uplink. So the first head is probed: once it has been the head
//   for `probe_windows` windows with a successor linked, it moves to the
//   end of the line, and the second (a few pieces behind it) becomes the
//   head. At the end it holds no one up: a slow first head stops costing
//   the others their rate at the probe, not a few windows later when it
//   falls behind (as second, it held everyone behind it to its rate until
//   then: 1.05 s of a 5.4 s transfer, session 18). A healthy chain loses
//   nothing: the old head, ahead of the line, waits for the line's last
//   link to catch up with it and is then as deep as that one was. It
//   stays the line's last link: links that join later go in front of it,
//   for it would hold them up while it waits for its new source (its PEERS
//   queued behind the pieces the seed wrote to it as head) and feeds the
//   new head what that one lacks (session 29).
//   A head's rate is its pieces over its windows as head; the
//   best rate of a head that gained at least `min_sample` pieces over
//   `head_windows` windows, or of the first head until the probe, is the
//   reference, and a later head that gains under a `slow_share`th of the
//   reference's worth over its windows as head (at least `head_windows`,
//   and enough that the worth is `min_sample`) becomes a leaf: a slow
//   second subscriber, head after the probe, becomes a leaf that way. Rates
//   over whole tenures, not single windows, so that one burst of HAVEs (a
//   disk stall, then its backlog) does not make every head slow.
// - The leaves share the line's last link's uplink. Another link may
//   become a leaf unless a leaf there has shown it is not slow: fed for
//   whole windows with at least `min_lag` pieces to take from that link,
//   it gained at least half of what the head gained (at least
//   `min_sample` pieces). At most `max_leaves`. Three slow receivers of
//   eight with room for one leaf left every link behind the second at
//   its rate (10.5x of the limit, session 36). On a machine short of CPU
//   every get stalls now and then and looks slow for a moment: a wrongly
//   made leaf alone on the last link's uplink loses nothing, but several
//   share it (with room for 3 whatever they took, 16 gets on 2 cores made
//   3 leaves and took 2.46x of the limit where the chain without leaves
//   took 1.62-2.09x, session 15); one that shows it is fast leaves no
//   room for another. Nor does a second link falling behind the one a
//   leaf fell behind, for `2 * windows_to_move` windows from that leaf's
//   move while the leaf could show it keeps up: that may be a slow uplink
//   (below), which a second leaf there would hide.
//
// - A slow uplink shows as the link after it falling behind: that link
//   becomes a leaf and keeps up with the line's last link (which the same
//   uplink holds back); then the next link behind the same one falls
//   behind it too. Or the leaf rejoined (a stall), and the next falls
//   behind the same one within `windows_to_move` windows. Two links in a
//   row that fell behind one link, the first of them found not slow: the
//   link they fell behind is the slow one. It moves to the end of the
//   line (it feeds no one there but the leaves), the leaf rejoins the
//   line in front of it, and the link behind it takes from the one before
//   it, or from the seed. A seed on a link 4x faster than its receivers
//   keeps the head's download queue full (Cubic fills any buffer), and
//   the ACKs of what the head forwards wait in it: the head forwarded at
//   a fraction of the line for its first 0.5-1 s, and every link that
//   came behind it became a leaf in turn, 0.2 s each, until the probe
//   (session 26).
//
// Two slow links in a row: the second falls behind the link the first
// fell behind. It becomes a leaf once the wait for the first's verdict is
// over; or the first, fed by a last link the second holds back, keeps up
// with it, the link they fell behind reads as a slow uplink and goes to
// the end of the line (a fast link loses nothing there), and the second
// falls behind its new predecessor and becomes a leaf then.
//
// Not covered: more slow links than `max_leaves`, or than the line's
// last link's uplink can feed; they stay in the line, and every link
// behind one runs at its rate.
//
// Pure bookkeeping: no I/O; the caller passes the time. Not thread-safe;
// owned by the push sender's thread. A link that does not take pieces from
// the one before it (not linked: it is the head, or the one before does not
// forward) is never judged. A link's judgment starts when it is linked:
// what the one before gained until then does not count against it.
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
  // Every moment a slow link stays in the line, the links behind it run
  // at its rate: 3 whole windows (until session 24) left them 0.4 s at a
  // tenth of theirs, 0.07x of a 64 MiB copy at 100 Mbit/s. The window
  // under way counts (see above), so 2 is a streak that crossed one
  // window's end: a stall must last that long, and hold the sample below,
  // to read as a slow link.
  int windows_to_move = 2;
  // Pieces the one before must gain in a streak before its link is
  // judged, and a head's worth of the reference before it is. 16 of
  // 64 KiB at 100 Mbit/s is 84 ms; 32 (until session 25) kept the links
  // behind a slow one at its rate 80 ms longer. A link wrongly made a leaf
  // loses nothing and rejoins the line (see above). Counted in 64 KiB
  // pieces; larger ones: ForPieceLength.
  std::uint32_t min_sample = 16;
  // Pieces a link must be behind the one before it: a hop normally lags
  // by a few pieces (one in assembly, one being checked, the socket's).
  // Counted in 64 KiB pieces; larger ones: ForPieceLength.
  std::uint32_t min_lag = 16;
  // Windows as head before a head is judged.
  int head_windows = 4;
  // Windows as head before the first head's probe: the probe judges
  // nothing, and every window before it runs at a slow head's rate.
  int probe_windows = 2;
  // Slow: gaining under 1 / slow_share of the one before (the reference).
  std::uint32_t slow_share = 4;
  // At most this many leaves (see above): a leaf is slow under a
  // `slow_share`th of the line's rate, so as many fill the last link's
  // uplink.
  std::size_t max_leaves = 4;
  // Move the first head to the end of the line once the chain runs (see
  // above). The new head lacks what the old one had not yet forwarded to
  // it; the seed names the head before it (`previous_head`) to the head
  // as a second source (PushSender::Loop::HandOutChain), so it takes
  // those pieces from the old head at once. Without that, a seed killed
  // after the probe (bench.fault_cells) left them with no one (session 15).
  bool probe_head = true;
};

// `o` for a file in pieces of `piece_length` bytes. `min_sample` and
// `min_lag` are counted in pieces, and were chosen with 64 KiB ones: with
// larger pieces they stand for as many bytes, at least 4 pieces (a piece
// in assembly, one being checked, the socket's: a hop's normal lag). Kept
// as pieces, 16 of 256 KiB (a 64 MiB file's, proto/piece_size.h) judged a
// 10 Mbit/s link among 100 Mbit/s ones 0.3 s later, the seven others at
// its rate meanwhile: 1.15x of the limit against 1.08x (session 34).
// Smaller pieces keep the counts.
ChainOrderOptions ForPieceLength(ChainOrderOptions o, std::int64_t piece_length);

class ChainOrder {
 public:
  using Clock = std::chrono::steady_clock;
  using Options = ChainOrderOptions;

  enum class Reason {
    kFellBehind,  // `moved` fell behind `ahead`
    kSlowHead,    // the head, `moved`, gained under a share of the reference
    kHeadProbe,   // the first head, `moved`, went to the end of the line, once
    kRejoined,    // the leaf `moved` keeps up with the line: its last link now
    kSlowUplink,  // `behind` fell behind `moved`, which goes to the end of the line
  };
  // What a review decided: `moved` became a leaf (kHeadProbe, kRejoined,
  // kSlowUplink: the line's last link).
  struct Move {
    SubscriberId moved;
    Reason reason;
    SubscriberId ahead = 0;   // kFellBehind
    SubscriberId behind = 0;  // kSlowUplink
  };

  explicit ChainOrder(Options options = {}) : options_(options) {}

  // A new link at the end of the line (before the leaves), holding the
  // pieces its HELLO named; in front of the probed first head while that
  // one is the line's last link (see ReviewHead's probe).
  void Join(SubscriberId id, std::vector<bool> have);
  // A link gone (left, dropped, done). When the line is left empty, the
  // leaf with the most pieces becomes it.
  void Leave(SubscriberId id);
  bool Contains(SubscriberId id) const;
  // It verified `piece` (a HAVE; a repeat, or an index out of range, is
  // not progress).
  void OnHave(SubscriberId id, PieceIndex piece);
  // It now takes pieces from the link before it (linked), or from none.
  void SetLinked(SubscriberId id, bool linked, Clock::time_point now);
  // What SetLinked last said, or false since a move (the probe, a leaf)
  // unlinked it; false for an unknown id.
  bool Linked(SubscriberId id) const;

  // Every link: the line, head first, then the leaves; and whether it is
  // a leaf (it takes from the line's last link).
  struct Place {
    SubscriberId id;
    bool leaf;
    bool operator==(const Place&) const = default;
  };
  std::vector<Place> places() const;
  // The line's links, head first, then the leaves.
  std::vector<SubscriberId> order() const;
  // Call often (the push sender calls it after every batch of frames):
  // a link falling behind becomes a leaf as soon as the evidence is in,
  // not at the end of the window. Closes the window that ended, if one
  // did, and makes at most one link a leaf.
  std::optional<Move> Review(Clock::time_point now);
  // When the current window ends.
  Clock::time_point next_review() const { return window_start_ + options_.window; }
  // The head before the current one, while it is still a link (a leaf
  // included), else 0. It holds what it had not yet forwarded to its
  // successor, the new head (the probe, a slow head made a leaf).
  SubscriberId previous_head() const;

 private:
  // Pieces a link and the one before it gained.
  struct Gains {
    std::uint32_t ahead = 0;
    std::uint32_t own = 0;
  };
  // Windows in a row in which the one before gained more than the link,
  // and what the two gained in them.
  struct Streak {
    int windows = 0;
    Gains gained;
    void Add(const Gains& g) {
      ++windows;
      gained.ahead += g.ahead;
      gained.own += g.own;
    }
  };
  struct Link {
    SubscriberId id;
    std::vector<bool> have;
    std::uint32_t held = 0;           // pieces verified
    std::uint32_t held_at_start = 0;  // at the current window's start
    bool linked = false;
    bool leaf = false;
    Clock::time_point leaf_since;
    Clock::time_point linked_since;
    // Where the current window's judgment of this link starts: the
    // window's start, or when the link was linked, if later (what the one
    // before gained before then, the link could not have had). The one
    // before is `ahead_id`, holding `ahead_from` pieces then; this link
    // held `own_from`.
    SubscriberId ahead_id = 0;
    std::uint32_t ahead_from = 0;
    std::uint32_t own_from = 0;
    Streak streak;  // the current one
    // A leaf's: the link it fell behind (kFellBehind), else 0.
    SubscriberId fell_behind = 0;
    // A leaf's sample (SampleLeaves): what it gained in the windows that
    // count, and what the head gained in them.
    std::uint32_t gained_as_leaf = 0;
    std::uint32_t head_gained_as_leaf = 0;
    // A leaf's: it kept up with the line's last link in the last window
    // (SampleLeaves).
    bool kept_up = false;
    // A link behind this one fell behind it and, a leaf, proved not slow
    // (it rejoined): the next to fall behind it until then moves it
    // (kSlowUplink). `windows_to_move` windows: a slow uplink leaves the
    // next link behind at once; a stall long past is no evidence.
    Clock::time_point suspect_until{};
  };
  Link* Find(SubscriberId id);
  // Links in the line: links_[0, line_size()); the leaves follow.
  std::size_t line_size() const;
  void MakeLeaf(std::size_t index, Clock::time_point now);
  // Link `index` of the line goes to the line's end, unlinked until the
  // sender links it to the last link; the head's successor then takes
  // from the seed.
  void MoveToLineEnd(std::size_t index);
  // The first head's tenure ends (the probe, or its slow uplink): its rate
  // is a reference all the same (see ReviewHead).
  void EndFirstHeadTenure();
  // Notes when links_[0] became the head.
  void NoteHead(Clock::time_point now);
  // What link i (not the head) and the one before it gained in the
  // current window, so far, since its judgment there started; nullopt:
  // it is not judged in this window (not linked, or the one before is no
  // longer the one it was linked behind).
  std::optional<Gains> WindowGains(std::size_t i) const;
  // Starts link i's judgment of the current window now.
  void StartJudging(std::size_t i);
  // Link i's streak, at the end of a window.
  void JudgeLink(std::size_t i);
  // Link i fell behind: its streak, and the current window so far when
  // `window_open` (the window has not ended), hold the evidence.
  bool FellBehind(std::size_t i, bool window_open) const;
  // At a window's end: the first leaf that kept up with the line's last
  // link in it rejoins the line, at its end.
  std::optional<Move> Rejoin(Clock::time_point now);
  // The head's review, after the others'.
  // `room`: another leaf is allowed.
  std::optional<Move> ReviewHead(std::uint32_t gain, bool room, Clock::time_point now);
  // Another link may become a leaf (see the header on the leaves).
  bool LeafRoom() const;
  // The leaf has shown it is not slow (see the header on the leaves).
  bool FastLeaf(const Link& l) const;
  // Leaf `index` rejoins the line at `at`.
  void Unleaf(std::size_t index, std::size_t at);
  // The leaf is under `min_lag` pieces behind the line's last link: the
  // lag at which it can keep up with it (SampleLeaves).
  bool CloseBehind(const Link& leaf, const Link& last) const;
  // A leaf that fell behind `id` and kept up with the line's last link in
  // the last window, if any: its index.
  std::optional<std::size_t> LeafThatKeptUpBehind(SubscriberId id) const;
  // A leaf fell behind `id` under 2 * `windows_to_move` windows ago, and
  // is close enough to the line's last link to keep up with it: the next
  // link to fall behind `id` waits for that leaf's verdict (kSlowUplink if
  // it keeps up) rather than become a leaf as well. A slow leaf gives none
  // (two slow links in a row), and one far behind the last link (a probed
  // head) none soon: 0.4 s of the links behind the second at its rate.
  bool AwaitingVerdictOn(SubscriberId id, Clock::time_point now) const;
  // At a window's end: whether each leaf kept up with the line's last
  // link in it (Rejoin), and, for each that could take pieces, what it
  // gained in it and what the head gained meanwhile (FastLeaf).
  void SampleLeaves();

  Options options_;
  std::vector<Link> links_;
  Clock::time_point window_start_{};
  // The current head, since when, and what it gained in its whole windows
  // as head (those in which it lacked pieces).
  SubscriberId head_ = 0;
  SubscriberId previous_head_ = 0;
  Clock::time_point head_since_{};
  int head_windows_ = 0;
  std::uint32_t head_gain_ = 0;
  // A HAVE counted, or a link gone, since the last review: in a window
  // under way, the links are judged again only then.
  bool news_ = false;
  // The best rate (pieces a window) of a head with a sample; 0: none yet.
  double reference_rate_ = 0;
  bool probed_ = false;
  // The first head the probe moved to the end of the line (0: none yet).
  SubscriberId probed_head_ = 0;
};

}  // namespace swarmcast::push
