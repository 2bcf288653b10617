#include "node/push/push_scheduler.h"

#include <algorithm>
#include <limits>

namespace swarmcast::push {

PushScheduler::PushScheduler(std::uint32_t piece_count, PushSchedulerOptions options)
    : piece_count_(piece_count),
      options_(options),
      source_(piece_count, options.source_complete),
      copies_(piece_count, 0),
      assigned_(piece_count, kNobody),
      uncovered_(piece_count) {}

// Another subscriber starts or stops lacking `p`: its forwarder's backlog
// follows.
void PushScheduler::ChangeBacklog(PieceIndex p, bool up) {
  if (assigned_[p] == kNobody) return;
  auto it = subscribers_.find(assigned_[p]);
  if (it == subscribers_.end()) return;
  if (up) {
    ++it->second.backlog;
  } else if (it->second.backlog > 0) {
    --it->second.backlog;
  }
}

std::uint64_t PushScheduler::backlog(SubscriberId id) const {
  auto it = subscribers_.find(id);
  return it == subscribers_.end() ? 0 : it->second.backlog;
}

void PushScheduler::SourceHas(PieceIndex piece) {
  if (piece >= piece_count_ || source_[piece]) return;
  source_[piece] = true;
  for (auto& [id, s] : subscribers_) s.ahead -= s.have[piece] ? 1 : 0;
}

void PushScheduler::Lost(PieceIndex p) {
  ++uncovered_;
  if (options_.cover_first) lost_.insert(p);
}

void PushScheduler::Adjust(Subscriber& s, PieceIndex p, bool held_before) {
  const bool held_after = Holds(s, p);
  if (held_before == held_after) return;
  if (held_after) {
    ++s.held;
    if (copies_[p]++ == 0) --uncovered_;
  } else {
    --s.held;
    if (--copies_[p] == 0) Lost(p);
  }
}

void PushScheduler::SetHave(Subscriber& s, PieceIndex p, bool value) {
  const bool before = Holds(s, p);
  if (!source_[p] && s.have[p] != value) s.ahead += value ? 1 : -1;
  s.have[p] = value;
  Adjust(s, p, before);
}

void PushScheduler::SetInFlight(Subscriber& s, PieceIndex p, bool value) {
  const bool before = Holds(s, p);
  s.in_flight[p] = value;
  Adjust(s, p, before);
}

void PushScheduler::AddSubscriber(SubscriberId id, const std::vector<bool>& have) {
  RemoveSubscriber(id);
  Subscriber& s = subscribers_[id];
  s.have.assign(piece_count_, false);
  s.in_flight.assign(piece_count_, false);
  s.fetching.assign(piece_count_, false);
  const auto n = std::min<std::size_t>(have.size(), piece_count_);
  for (PieceIndex p = 0; p < n; ++p) {
    if (have[p]) SetHave(s, p, true);
  }
  for (PieceIndex p = 0; p < piece_count_; ++p) {
    if (!Holds(s, p)) ChangeBacklog(p, true);
  }
}

void PushScheduler::RemoveSubscriber(SubscriberId id) {
  auto it = subscribers_.find(id);
  if (it == subscribers_.end()) return;
  Subscriber& s = it->second;
  for (PieceIndex p = 0; p < piece_count_; ++p) {
    if (Holds(s, p) && --copies_[p] == 0) Lost(p);
    if (assigned_[p] == id) {
      assigned_[p] = kNobody;
    } else if (!Holds(s, p)) {
      ChangeBacklog(p, false);
    }
  }
  subscribers_.erase(it);
}

void PushScheduler::OnHave(SubscriberId id, PieceIndex piece) {
  auto it = subscribers_.find(id);
  if (it == subscribers_.end() || piece >= piece_count_) return;
  const bool held_before = Holds(it->second, piece);
  SetHave(it->second, piece, true);
  if (!held_before && assigned_[piece] != id) ChangeBacklog(piece, false);
}

void PushScheduler::OnSent(SubscriberId id, PieceIndex piece) {
  auto it = subscribers_.find(id);
  if (it == subscribers_.end() || piece >= piece_count_) return;
  Subscriber& s = it->second;
  const bool before = Holds(s, piece);
  s.in_flight[piece] = false;
  s.have[piece] = true;
  Adjust(s, piece, before);
  if (!before && assigned_[piece] != id) ChangeBacklog(piece, false);
}

bool PushScheduler::OnFetching(SubscriberId id, PieceIndex piece) {
  auto it = subscribers_.find(id);
  if (it == subscribers_.end() || piece >= piece_count_ || it->second.fetching[piece]) return false;
  it->second.fetching[piece] = true;
  return true;
}

void PushScheduler::OnFetchingExpired(SubscriberId id, PieceIndex piece) {
  auto it = subscribers_.find(id);
  if (it == subscribers_.end() || piece >= piece_count_) return;
  it->second.fetching[piece] = false;
}

void PushScheduler::OnSendFailed(SubscriberId id, PieceIndex piece) {
  auto it = subscribers_.find(id);
  if (it == subscribers_.end() || piece >= piece_count_) return;
  SetInFlight(it->second, piece, false);
  if (assigned_[piece] == id) {
    assigned_[piece] = kNobody;  // it never got it: nothing to forward
    it->second.backlog = 0;
    for (PieceIndex p = 0; p < piece_count_; ++p) {
      if (assigned_[p] != id) continue;
      for (const auto& [other, o] : subscribers_) {
        if (other != id && !Holds(o, p)) ++it->second.backlog;
      }
    }
  }
}

bool PushScheduler::IsComplete(SubscriberId id) const {
  auto it = subscribers_.find(id);
  return it != subscribers_.end() && it->second.held == piece_count_;
}

std::optional<PushBatch> PushScheduler::NextBatch(std::span<const SubscriberId> ready) {
  if (piece_count_ == 0) return std::nullopt;
  if (options_.cover_first && uncovered_ > 0) {
    cover_waiting_ = false;
    if (auto batch = CoverNextPiece(ready)) return batch;
    if (cover_waiting_) return std::nullopt;
  }
  if (options_.assign_by_backlog) {
    if (auto batch = AssignNextUnforwarded(ready)) return batch;
  }
  return FanOutNextPiece(ready);
}

// `p` goes as PIECE to `id` alone, which is to forward it: the copies the
// others lack join its backlog.
PushBatch PushScheduler::AssignTo(Subscriber& s, SubscriberId id, PieceIndex p) {
  SetInFlight(s, p, true);
  assigned_[p] = id;
  for (const auto& [other, o] : subscribers_) {
    if (other != id && !Holds(o, p)) ++s.backlog;
  }
  return PushBatch{p, {id}, /*forward=*/true};
}

// With forwarders: a piece that has copies but no forwarder (it reached
// its holders over the BitTorrent wire, or its forwarder left) goes as
// PIECE to one ready subscriber lacking it, the one with the smallest
// backlog, which forwards it to the rest. Otherwise only the seed's
// fan-out batches would bring it, its uplink split among everyone
// (measured: at N = 32 the last 8% of a file trickled in at 40 KB/s).
std::optional<PushBatch> PushScheduler::AssignNextUnforwarded(std::span<const SubscriberId> ready) {
  for (std::uint32_t step = 0; step < piece_count_; ++step) {
    const PieceIndex p = (cursor_ + step) % piece_count_;
    if (assigned_[p] != kNobody || !source_[p] || copies_[p] >= subscribers_.size()) continue;
    Subscriber* best = nullptr;
    SubscriberId best_id = 0;
    for (SubscriberId id : ready) {
      auto it = subscribers_.find(id);
      if (it == subscribers_.end() || !Wants(it->second, p)) continue;
      if (!best || it->second.backlog < best->backlog) {
        best = &it->second;
        best_id = id;
      }
    }
    if (!best) continue;
    cursor_ = (p + 1) % piece_count_;
    return AssignTo(*best, best_id, p);
  }
  return std::nullopt;
}

// First pass: the next uncovered piece that some ready subscriber can
// take goes to one subscriber only. A piece that lost its last copy comes
// first, lowest first (the header says why); then the scan's next one,
// where the scan goes on.
std::optional<PushBatch> PushScheduler::CoverNextPiece(std::span<const SubscriberId> ready) {
  while (!lost_.empty()) {
    const PieceIndex p = *lost_.begin();
    if (copies_[p] != 0 || !source_[p]) {
      lost_.erase(lost_.begin());
      continue;
    }
    auto batch = CoverPiece(p, ready);
    if (batch) lost_.erase(lost_.begin());
    return batch;
  }
  for (std::uint32_t step = 0; step < piece_count_; ++step) {
    const PieceIndex p = (cursor_ + step) % piece_count_;
    if (copies_[p] != 0 || !source_[p]) continue;
    auto batch = CoverPiece(p, ready);
    if (batch) cursor_ = (p + 1) % piece_count_;
    return batch;
  }
  return std::nullopt;
}

// Uncovered `p` goes to one ready subscriber: the one holding the fewest
// pieces, so the swarm's pieces spread evenly (by backlog: the one that
// forwards best). Nothing when none is ready, or when the best one's
// backlog is over the slack (cover_waiting_).
std::optional<PushBatch> PushScheduler::CoverPiece(PieceIndex p,
                                                   std::span<const SubscriberId> ready) {
  Subscriber* best = nullptr;
  SubscriberId best_id = 0;
  for (SubscriberId id : ready) {
    auto it = subscribers_.find(id);
    if (it == subscribers_.end()) continue;
    Subscriber& s = it->second;
    const bool better = !best || (options_.assign_by_backlog && s.backlog != best->backlog
                                      ? s.backlog < best->backlog
                                  : s.held != best->held ? s.held < best->held
                                                         : id < best_id);
    if (better) {
      best = &s;
      best_id = id;
    }
  }
  if (!best) return std::nullopt;
  if (options_.assign_by_backlog && options_.backlog_slack_pieces > 0) {
    std::uint64_t least = best->backlog;
    for (const auto& [id, o] : subscribers_) least = std::min(least, o.backlog);
    const std::uint64_t slack =
        std::uint64_t{options_.backlog_slack_pieces} * (subscribers_.size() - 1);
    if (best->backlog > least + slack) {
      cover_waiting_ = true;
      return std::nullopt;
    }
  }
  return AssignTo(*best, best_id, p);
}

// Every piece has a copy somewhere: the scan goes on in disk order, and the
// next piece that a ready subscriber lacks goes to every ready subscriber
// lacking it, so one read of the piece serves them all. (Lacking here: not
// held and not asked for over the wire, OnFetching.) A subscriber busy
// at that moment gets the piece on a later cycle. (Rarest-first here would
// jump around the file and, once the file outgrows the page cache, read
// each piece from disk once per subscriber.)
std::optional<PushBatch> PushScheduler::FanOutNextPiece(std::span<const SubscriberId> ready) {
  std::optional<PieceIndex> chosen;
  for (std::uint32_t step = 0; step < piece_count_ && !chosen; ++step) {
    const PieceIndex p = (cursor_ + step) % piece_count_;
    if (!source_[p]) continue;
    for (SubscriberId id : ready) {
      auto it = subscribers_.find(id);
      if (it != subscribers_.end() && Wants(it->second, p)) {
        chosen = p;
        break;
      }
    }
  }
  if (!chosen) return std::nullopt;
  PushBatch batch{*chosen, {}};
  for (SubscriberId id : ready) {
    auto it = subscribers_.find(id);
    if (it == subscribers_.end() || !Wants(it->second, *chosen)) continue;
    if (std::find(batch.targets.begin(), batch.targets.end(), id) != batch.targets.end()) continue;
    SetInFlight(it->second, *chosen, true);
    batch.targets.push_back(id);
  }
  // Kept where it lands (DIRECT): a fan-out batch goes to every ready
  // subscriber lacking the piece, and each of them forwarding it too would
  // send it again to the same few that still lack it. (Measured: with
  // batches of one sent as PIECE, 10 to 26% of what a receiver downloaded
  // at N = 16 were duplicates, against 3 to 10% this way.)
  batch.forward = false;
  cursor_ = (*chosen + 1) % piece_count_;
  return batch;
}

bool PushScheduler::Ahead(SubscriberId id) const {
  auto it = subscribers_.find(id);
  return it != subscribers_.end() && it->second.ahead > 0;
}

bool PushScheduler::HasEveryPieceOf(SubscriberId id, SubscriberId other) const {
  auto a = subscribers_.find(id);
  auto b = subscribers_.find(other);
  if (a == subscribers_.end() || b == subscribers_.end()) return false;
  for (PieceIndex p = 0; p < piece_count_; ++p) {
    if (Holds(b->second, p) && !a->second.have[p]) return false;
  }
  return true;
}

bool PushScheduler::Holds(SubscriberId id, PieceIndex piece) const {
  auto it = subscribers_.find(id);
  return it != subscribers_.end() && piece < piece_count_ && Holds(it->second, piece);
}

}  // namespace swarmcast::push
