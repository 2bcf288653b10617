#include "node/push/chain_order.h"

#include <algorithm>

namespace swarmcast::push {

ChainOrder::Link* ChainOrder::Find(SubscriberId id) {
  auto it = std::find_if(links_.begin(), links_.end(), [id](const Link& l) { return l.id == id; });
  return it == links_.end() ? nullptr : &*it;
}

void ChainOrder::Join(SubscriberId id, std::vector<bool> have) {
  if (Find(id)) return;
  const auto held = static_cast<std::uint32_t>(std::count(have.begin(), have.end(), true));
  links_.push_back(Link{.id = id, .have = std::move(have), .held = held, .held_at_start = held});
}

void ChainOrder::Leave(SubscriberId id) {
  std::erase_if(links_, [id](const Link& l) { return l.id == id; });
}

bool ChainOrder::Contains(SubscriberId id) const {
  return std::any_of(links_.begin(), links_.end(), [id](const Link& l) { return l.id == id; });
}

void ChainOrder::OnHave(SubscriberId id, PieceIndex piece) {
  Link* l = Find(id);
  if (!l || piece >= l->have.size() || l->have[piece]) return;
  l->have[piece] = true;
  ++l->held;
}

void ChainOrder::SetLinked(SubscriberId id, bool linked, Clock::time_point now) {
  Link* l = Find(id);
  if (!l) return;
  l->linked = linked;
  l->linked_since = now;
  l->falling_windows = 0;
}

std::vector<SubscriberId> ChainOrder::order() const {
  std::vector<SubscriberId> ids;
  ids.reserve(links_.size());
  for (const Link& l : links_) ids.push_back(l.id);
  return ids;
}

void ChainOrder::MoveToTail(std::size_t index) {
  Link moved = links_[index];
  moved.linked = false;  // until the sender links it to the old tail
  moved.falling_windows = 0;
  links_.erase(links_.begin() + static_cast<std::ptrdiff_t>(index));
  links_.push_back(moved);
}

void ChainOrder::NoteHead(Clock::time_point now) {
  if (links_.empty() || links_[0].id == head_) return;
  head_ = links_[0].id;
  head_since_ = now;
  head_falling_windows_ = 0;
}

std::optional<ChainOrder::Move> ChainOrder::Review(Clock::time_point now) {
  if (window_start_ == Clock::time_point{}) window_start_ = now;
  NoteHead(now);  // a head that came since the last review is not judged yet
  if (now < next_review()) return std::nullopt;
  // Judge each link against the one before it over the window that ended.
  std::vector<std::uint32_t> gains(links_.size());
  for (std::size_t i = 0; i < links_.size(); ++i) {
    gains[i] = links_[i].held - links_[i].held_at_start;
  }
  for (std::size_t i = 1; i < links_.size(); ++i) {
    const Link& ahead = links_[i - 1];
    Link& l = links_[i];
    const bool judged = l.linked && l.linked_since <= window_start_;
    const bool falling = judged && gains[i - 1] >= options_.min_predecessor_gain &&
                         2 * gains[i] < gains[i - 1] && ahead.held >= l.held + options_.min_lag;
    l.falling_windows = falling ? l.falling_windows + 1 : 0;
  }
  best_gain_ -= best_gain_ / 8;
  for (std::uint32_t g : gains) best_gain_ = std::max(best_gain_, g);
  std::optional<Move> move;
  for (std::size_t i = 1; i < links_.size() && !move; ++i) {
    if (links_[i].falling_windows < options_.windows_to_move) continue;
    Link& ahead = links_[i - 1];
    // A second successor falling behind the same link: blame its uplink.
    const std::size_t culprit = ahead.fell_behind_it > 0 ? i - 1 : i;
    if (culprit == links_.size() - 1) {
      links_[i].falling_windows = 0;  // the tail holds up no one
      continue;
    }
    move = Move{links_[culprit].id, culprit == i ? Reason::kFellBehind : Reason::kSlowUplink,
                ahead.id, links_[i].id};
    if (culprit == i) ++ahead.fell_behind_it;
    MoveToTail(culprit);
  }
  if (!move && !gains.empty()) move = ReviewHead(gains[0]);
  for (Link& l : links_) l.held_at_start = l.held;
  window_start_ = now;
  NoteHead(now);
  return move;
}

std::optional<ChainOrder::Move> ChainOrder::ReviewHead(std::uint32_t gain) {
  const Link& head = links_[0];
  // Judged only as head for the whole window, with pieces left to get,
  // and with a successor to hold up.
  if (links_.size() < 2 || head_since_ > window_start_ || head.held >= head.have.size()) {
    head_falling_windows_ = 0;
    return std::nullopt;
  }
  const bool running = links_[1].linked && links_[1].linked_since <= window_start_ &&
                       gain >= options_.min_predecessor_gain;
  if (options_.probe_head && !probed_ && running) {
    probed_ = true;
    const Move move{head.id, Reason::kHeadProbe};
    MoveToTail(0);
    return move;
  }
  const bool slow = best_gain_ >= options_.min_predecessor_gain && 2 * gain < best_gain_;
  head_falling_windows_ = slow ? head_falling_windows_ + 1 : 0;
  if (head_falling_windows_ < options_.windows_to_move) return std::nullopt;
  const Move move{head.id, Reason::kSlowHead};
  MoveToTail(0);
  return move;
}

}  // namespace swarmcast::push
