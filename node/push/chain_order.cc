#include "node/push/chain_order.h"

#include <algorithm>

namespace swarmcast::push {

namespace {
constexpr std::int64_t kTunedPieceLength = 64 << 10;  // what the counts were chosen with
constexpr std::int64_t kFewestPieces = 4;
}  // namespace

ChainOrderOptions ForPieceLength(ChainOrderOptions o, std::int64_t piece_length) {
  if (piece_length <= kTunedPieceLength) return o;
  // The same bytes, rounded up; at least kFewestPieces, never more than given.
  const auto scale = [piece_length](std::uint32_t n) {
    const std::int64_t same_bytes =
        (std::int64_t{n} * kTunedPieceLength + piece_length - 1) / piece_length;
    return static_cast<std::uint32_t>(
        std::min<std::int64_t>(n, std::max(kFewestPieces, same_bytes)));
  };
  o.min_sample = scale(o.min_sample);
  o.min_lag = scale(o.min_lag);
  return o;
}

ChainOrder::Link* ChainOrder::Find(SubscriberId id) {
  auto it = std::find_if(links_.begin(), links_.end(), [id](const Link& l) { return l.id == id; });
  return it == links_.end() ? nullptr : &*it;
}

std::size_t ChainOrder::line_size() const {
  return static_cast<std::size_t>(
      std::find_if(links_.begin(), links_.end(), [](const Link& l) { return l.leaf; }) -
      links_.begin());
}

void ChainOrder::Join(SubscriberId id, std::vector<bool> have) {
  if (Find(id)) return;
  const auto held = static_cast<std::uint32_t>(std::count(have.begin(), have.end(), true));
  // Not behind the probed first head while it is the line's last link (and
  // not its head): it waits for the seed to name its new source, a PEERS
  // frame queued behind the pieces the seed wrote to it as head (0.1-0.5 s
  // at 10 Mbit/s), and forwards the new head what that one lacks; every
  // link behind it waited as long. N = 64 took 14.61-14.93 s (median 14.72)
  // with links behind it, 14.59-14.69 s (median 14.61) with none (session 29).
  std::size_t at = line_size();
  if (at >= 2 && links_[at - 1].id == probed_head_) --at;
  links_.insert(links_.begin() + static_cast<std::ptrdiff_t>(at),
                Link{.id = id, .have = std::move(have), .held = held, .held_at_start = held});
}

void ChainOrder::Leave(SubscriberId id) {
  std::erase_if(links_, [id](const Link& l) { return l.id == id; });
  news_ = true;  // a leaf gone leaves room
  // Leaves need a line to hang off: the one furthest along becomes it (a
  // slow one would hold up the others; the seed pushes to the head).
  if (links_.empty() || !links_[0].leaf) return;
  auto best = std::max_element(links_.begin(), links_.end(),
                               [](const Link& a, const Link& b) { return a.held < b.held; });
  std::rotate(links_.begin(), best, best + 1);
  links_[0].leaf = false;
}

bool ChainOrder::Contains(SubscriberId id) const {
  return std::any_of(links_.begin(), links_.end(), [id](const Link& l) { return l.id == id; });
}

void ChainOrder::OnHave(SubscriberId id, PieceIndex piece) {
  Link* l = Find(id);
  if (!l || piece >= l->have.size() || l->have[piece]) return;
  l->have[piece] = true;
  ++l->held;
  news_ = true;
}

void ChainOrder::SetLinked(SubscriberId id, bool linked, Clock::time_point now) {
  Link* l = Find(id);
  if (!l) return;
  l->linked = linked;
  l->linked_since = now;
  l->streak = {};
  StartJudging(static_cast<std::size_t>(l - links_.data()));
}

SubscriberId ChainOrder::previous_head() const {
  // Contains() implies a line, so links_[0] exists.
  const bool live =
      previous_head_ != 0 && Contains(previous_head_) && links_[0].id != previous_head_;
  return live ? previous_head_ : 0;
}

bool ChainOrder::Linked(SubscriberId id) const {
  auto it = std::find_if(links_.begin(), links_.end(), [id](const Link& l) { return l.id == id; });
  return it != links_.end() && it->linked;
}

std::vector<ChainOrder::Place> ChainOrder::places() const {
  std::vector<Place> out;
  out.reserve(links_.size());
  for (const Link& l : links_) out.push_back({l.id, l.leaf});
  return out;
}

std::vector<SubscriberId> ChainOrder::order() const {
  std::vector<SubscriberId> ids;
  ids.reserve(links_.size());
  for (const Link& l : links_) ids.push_back(l.id);
  return ids;
}

void ChainOrder::MakeLeaf(std::size_t index, Clock::time_point now) {
  Link moved = links_[index];
  moved.fell_behind = index > 0 ? links_[index - 1].id : 0;
  moved.leaf = true;
  moved.linked = false;  // until the sender links it to the line's last link
  moved.leaf_since = now;
  moved.streak = {};
  moved.gained_as_leaf = moved.head_gained_as_leaf = 0;
  links_.erase(links_.begin() + static_cast<std::ptrdiff_t>(index));
  links_.push_back(moved);
}

bool ChainOrder::FastLeaf(const Link& l) const {
  return l.head_gained_as_leaf >= options_.min_sample &&
         2 * l.gained_as_leaf >= l.head_gained_as_leaf;
}

bool ChainOrder::LeafRoom() const {
  const std::size_t line = line_size();
  if (links_.size() - line >= options_.max_leaves) return false;
  return std::none_of(links_.begin() + static_cast<std::ptrdiff_t>(line), links_.end(),
                      [this](const Link& l) { return FastLeaf(l); });
}

void ChainOrder::Unleaf(std::size_t index, std::size_t at) {
  Link& l = links_[index];
  l.fell_behind = 0;
  l.leaf = false;
  l.kept_up = false;
  l.streak = {};
  std::rotate(links_.begin() + static_cast<std::ptrdiff_t>(at),
              links_.begin() + static_cast<std::ptrdiff_t>(index),
              links_.begin() + static_cast<std::ptrdiff_t>(index) + 1);
}

std::optional<std::size_t> ChainOrder::LeafThatKeptUpBehind(SubscriberId id) const {
  for (std::size_t i = line_size(); i < links_.size(); ++i) {
    if (links_[i].fell_behind == id && links_[i].kept_up) return i;
  }
  return std::nullopt;
}

bool ChainOrder::CloseBehind(const Link& leaf, const Link& last) const {
  return leaf.held + options_.min_lag > last.held;
}

bool ChainOrder::AwaitingVerdictOn(SubscriberId id, Clock::time_point now) const {
  const std::size_t line = line_size();
  if (line == 0) return false;
  const Link& last = links_[line - 1];
  const auto wait = 2 * options_.windows_to_move * options_.window;
  return std::any_of(
      links_.begin() + static_cast<std::ptrdiff_t>(line), links_.end(), [&](const Link& l) {
        // One far behind the last link gives no verdict soon.
        return l.fell_behind == id && now < l.leaf_since + wait && CloseBehind(l, last);
      });
}

void ChainOrder::SampleLeaves() {
  const std::size_t line = line_size();
  if (line == 0) return;
  const Link& last = links_[line - 1];
  const std::uint32_t last_gain = last.held - last.held_at_start;
  const std::uint32_t head_gain = links_[0].held - links_[0].held_at_start;
  for (std::size_t i = line; i < links_.size(); ++i) {
    Link& l = links_[i];
    // Only a whole window as a leaf: the one it became a leaf in began
    // with it still in the line. The line not moving is no evidence.
    l.kept_up = last_gain > 0 && l.leaf_since <= window_start_ && CloseBehind(l, last) &&
                options_.slow_share * (l.held - l.held_at_start) >= last_gain;
    // A leaf not fed for the whole window, or with little to take (a
    // stalled link made a leaf waits for the line's last link to pass
    // it), gains little whatever its rate: the window tells nothing.
    if (l.leaf_since > window_start_ || !l.linked ||
        last.held_at_start < l.held_at_start + options_.min_lag) {
      continue;
    }
    l.gained_as_leaf += l.held - l.held_at_start;
    l.head_gained_as_leaf += head_gain;
  }
}

void ChainOrder::MoveToLineEnd(std::size_t index) {
  const std::size_t line = line_size();
  std::rotate(links_.begin() + static_cast<std::ptrdiff_t>(index),
              links_.begin() + static_cast<std::ptrdiff_t>(index) + 1,
              links_.begin() + static_cast<std::ptrdiff_t>(line));
  if (index == 0) links_[0].linked = false;  // the new head takes from the seed
  Link& moved = links_[line - 1];
  moved.linked = false;  // until the sender links it to the line's last link
  moved.streak = {};
}

void ChainOrder::EndFirstHeadTenure() {
  probed_ = true;
  if (head_windows_ > 0) {
    reference_rate_ = std::max(reference_rate_, static_cast<double>(head_gain_) / head_windows_);
  }
}

void ChainOrder::NoteHead(Clock::time_point now) {
  if (links_.empty() || links_[0].id == head_) return;
  previous_head_ = head_;
  head_ = links_[0].id;
  head_since_ = now;
  head_windows_ = 0;
  head_gain_ = 0;
}

void ChainOrder::StartJudging(std::size_t i) {
  Link& l = links_[i];
  l.ahead_id = i > 0 ? links_[i - 1].id : 0;
  l.ahead_from = i > 0 ? links_[i - 1].held : 0;
  l.own_from = l.held;
}

std::optional<ChainOrder::Gains> ChainOrder::WindowGains(std::size_t i) const {
  const Link& l = links_[i];
  const Link& ahead = links_[i - 1];
  // Same one before: its count only grew since `ahead_from`.
  if (!l.linked || ahead.id != l.ahead_id) return std::nullopt;
  return Gains{ahead.held - l.ahead_from, l.held - l.own_from};
}

void ChainOrder::JudgeLink(std::size_t i) {
  Link& l = links_[i];
  const auto gains = WindowGains(i);
  if (gains && gains->ahead == 0 && gains->own == 0) return;  // nothing moved: no evidence
  if (gains && gains->ahead > gains->own) {
    l.streak.Add(*gains);
  } else {
    l.streak = {};
  }
}

bool ChainOrder::FellBehind(std::size_t i, bool window_open) const {
  const Link& l = links_[i];
  Streak streak = l.streak;
  if (window_open) {
    if (const auto so_far = WindowGains(i); so_far && so_far->ahead > so_far->own) {
      streak.Add(*so_far);
    }
  }
  const Gains& g = streak.gained;
  return streak.windows >= options_.windows_to_move && g.ahead >= options_.min_sample &&
         options_.slow_share * g.own < g.ahead && links_[i - 1].held >= l.held + options_.min_lag;
}

std::optional<ChainOrder::Move> ChainOrder::Review(Clock::time_point now) {
  if (window_start_ == Clock::time_point{}) window_start_ = now;
  NoteHead(now);  // a head that came since the last review is not judged yet
  const bool window_open = now < next_review();
  // Nothing counted since the last review: no link's evidence changed.
  if (window_open && !news_) return std::nullopt;
  news_ = false;
  const std::size_t line = line_size();  // leaves are not judged
  if (!window_open) {
    for (std::size_t i = 1; i < line; ++i) JudgeLink(i);
  }
  std::optional<Move> move;
  if (!window_open) SampleLeaves();
  const bool room = LeafRoom();
  for (std::size_t i = 1; i < line && !move; ++i) {
    if (!FellBehind(i, window_open)) continue;
    // The second to fall behind it, the first not slow (it rejoined, or
    // as a leaf it keeps up with the line's last link, held back by the
    // same uplink): its uplink is the slow one.
    const auto proven = LeafThatKeptUpBehind(links_[i - 1].id);
    if (now < links_[i - 1].suspect_until || proven) {
      move = Move{.moved = links_[i - 1].id, .reason = Reason::kSlowUplink, .behind = links_[i].id};
      if (i == 1 && !probed_) EndFirstHeadTenure();
      MoveToLineEnd(i - 1);
      // The leaf rejoins the line, in front of the slow uplink.
      if (proven) Unleaf(*proven, line - 1);
    } else if (room && !AwaitingVerdictOn(links_[i - 1].id, now)) {
      move = Move{.moved = links_[i].id, .reason = Reason::kFellBehind, .ahead = links_[i - 1].id};
      MakeLeaf(i, now);
    }
  }
  // A head moved: the sender names the old one to the new as a source now.
  NoteHead(now);
  if (window_open) return move;
  const std::uint32_t head_gain = line > 0 ? links_[0].held - links_[0].held_at_start : 0;
  if (!move) move = Rejoin(now);
  if (!move && line > 0 && links_[0].id == head_) move = ReviewHead(head_gain, room, now);
  for (Link& l : links_) l.held_at_start = l.held;
  for (std::size_t i = 0; i < links_.size(); ++i) StartJudging(i);
  window_start_ = now;
  NoteHead(now);
  return move;
}

std::optional<ChainOrder::Move> ChainOrder::Rejoin(Clock::time_point now) {
  const std::size_t line = line_size();
  if (line == 0) return std::nullopt;
  const std::uint32_t last_gain = links_[line - 1].held - links_[line - 1].held_at_start;
  // Keeping up proves a leaf fast only while the line's last link runs at
  // the line's rate (the head's): one held back by a slow link still in
  // the line made a slow leaf keep up with it, rejoin, and hold up every
  // newcomer behind it (session 36). Held back by the uplink of the link
  // the leaf fell behind, it is evidence all the same: see Review.
  const std::uint32_t head_gain = links_[0].held - links_[0].held_at_start;
  if (head_gain == 0 || options_.slow_share * last_gain < head_gain) return std::nullopt;
  for (std::size_t i = line; i < links_.size(); ++i) {
    Link& l = links_[i];
    if (!l.kept_up) continue;
    // Not slow: what it fell behind was the link before it.
    if (Link* ahead = Find(l.fell_behind); ahead && !ahead->leaf) {
      ahead->suspect_until = now + options_.windows_to_move * options_.window;
    }
    Unleaf(i, line);
    return Move{links_[line].id, Reason::kRejoined};
  }
  return std::nullopt;
}

std::optional<ChainOrder::Move> ChainOrder::ReviewHead(std::uint32_t gain, bool room,
                                                       Clock::time_point now) {
  const Link& head = links_[0];
  // Only whole windows as head, with pieces left to get.
  if (head_since_ > window_start_ || head.held >= head.have.size()) return std::nullopt;
  ++head_windows_;
  head_gain_ += gain;
  const double rate = static_cast<double>(head_gain_) / head_windows_;
  if (head_gain_ >= options_.min_sample && head_windows_ >= options_.head_windows) {
    reference_rate_ = std::max(reference_rate_, rate);
  }
  const std::size_t line = line_size();
  if (line < 2) return std::nullopt;
  const bool running = links_[1].linked && links_[1].linked_since <= window_start_;
  if (options_.probe_head && !probed_ && running && head_gain_ > 0 &&
      head_windows_ >= options_.probe_windows) {
    // The probe ends the first head's tenure before `head_windows`: its
    // rate is a reference all the same. Without one, a slow second
    // subscriber, head after the probe, was never judged, and held the
    // whole line to its rate to the end (13x of the limit, session 20).
    // Whatever it gained: with pieces of 256 KiB (a 256 MiB file) a head
    // gains about 10 in 2 windows, never `min_sample`. A small sample
    // does not judge alone: a later head is judged only once the
    // reference's worth over its windows reaches `min_sample`.
    EndFirstHeadTenure();
    probed_head_ = head.id;
    const Move move{head.id, Reason::kHeadProbe};
    // To the end of the line, not a leaf: a leaf ahead of the whole line
    // would get nothing for seconds and go to the BitTorrent wire, whose
    // requests then take the line's uplinks (0.5 s on N = 8, session 15).
    // Not second either: a slow head there holds everyone behind it to
    // its rate until it falls behind (see the header).
    MoveToLineEnd(0);
    return move;
  }
  if (head_windows_ < options_.head_windows) return std::nullopt;
  const double expected = reference_rate_ * head_windows_;
  if (!room || reference_rate_ == 0 || expected < options_.min_sample ||
      options_.slow_share * head_gain_ >= expected) {
    return std::nullopt;
  }
  const Move move{head.id, Reason::kSlowHead};
  MakeLeaf(0, now);
  return move;
}

}  // namespace swarmcast::push
