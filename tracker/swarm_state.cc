#include "tracker/swarm_state.h"

#include <algorithm>

namespace swarmcast::tracker {

std::string_view PeerStateName(PeerState s) {
  switch (s) {
    case PeerState::kDone:
      return "done";
    case PeerState::kRunning:
      return "running";
    case PeerState::kStale:
      return "stale";
  }
  return "running";
}

SwarmTable::SwarmTable(StateOptions options, StateSink* sink, std::uint64_t seed)
    : options_(options), sink_(sink), rng_(seed) {}

void SwarmTable::CountPeer(Swarm& s, const Peer& p, int sign) {
  if (p.stopped) return;
  if (p.left == 0) {
    s.seeders += sign;
    total_seeders_ += sign;
  } else {
    s.leechers += sign;
    total_leechers_ += sign;
  }
}

std::size_t SwarmTable::FindPeer(const Swarm& s, const PeerId& id) {
  if (!s.index.empty()) {
    auto it = s.index.find(id);
    return it == s.index.end() ? s.peers.size() : it->second;
  }
  for (std::size_t i = 0; i < s.peers.size(); ++i) {
    if (s.peers[i].id == id) return i;
  }
  return s.peers.size();
}

// The index, when present, always covers every peer.
void SwarmTable::AddPeer(Swarm& s, const Peer& p) {
  // Grow by a quarter rather than doubling: with most swarms small and
  // steady, doubling would leave a third of all peer slots empty.
  if (s.peers.size() == s.peers.capacity())
    s.peers.reserve(s.peers.size() + s.peers.size() / 4 + 4);
  s.peers.push_back(p);
  if (!s.index.empty()) {
    s.index.emplace(p.id, static_cast<std::uint32_t>(s.peers.size() - 1));
  } else if (s.peers.size() > kIndexFrom) {
    for (std::size_t i = 0; i < s.peers.size(); ++i) {
      s.index.emplace(s.peers[i].id, static_cast<std::uint32_t>(i));
    }
  }
}

void SwarmTable::RemovePeerAt(const InfoHash& ih, Swarm& s, std::size_t i) {
  CountPeer(s, s.peers[i], -1);
  PeerId id = s.peers[i].id;
  const bool indexed = !s.index.empty();
  if (indexed) s.index.erase(id);
  if (i + 1 != s.peers.size()) {
    s.peers[i] = std::move(s.peers.back());
    if (indexed) s.index[s.peers[i].id] = static_cast<std::uint32_t>(i);
  }
  s.peers.pop_back();
  // Back to scanning: drop the index once the swarm is small again.
  if (indexed && s.peers.size() <= kIndexFrom / 2) {
    s.index.clear();
    s.index.rehash(0);
  }
  --total_peers_;
  if (sink_) sink_->PeerRemoved(ih, id);
}

Result<AnnounceOutcome, std::string> SwarmTable::Announce(const AnnounceRequest& req,
                                                          const PeerAddress& from,
                                                          std::int64_t now) {
  AnnounceOutcome out;
  out.interval = options_.interval;
  MutexLock lock(mu_);
  auto it = swarms_.find(req.info_hash);
  if (it == swarms_.end()) {
    if (req.event == AnnounceEvent::kStopped) return out;  // nothing to forget
    if (options_.require_registered) {
      return Unexpected(std::string("unregistered info_hash: publish the torrent first"));
    }
    if (swarms_.size() >= options_.max_swarms) {
      return Unexpected(std::string("tracker full: swarm limit reached"));
    }
    it = swarms_.try_emplace(req.info_hash).first;
    it->second.created = now;
    if (sink_) sink_->SwarmCounters(req.info_hash, 0, now);
  }
  Swarm& s = it->second;
  std::size_t self = FindPeer(s, req.peer_id);
  const bool fresh = self == s.peers.size();
  if (fresh) {
    if (req.event == AnnounceEvent::kStopped) {
      out.complete = s.seeders;
      out.incomplete = s.leechers;
      out.downloaded = s.completed;
      return out;
    }
    if (options_.replace_same_address) {
      // A scan, on joins only: re-announces find their entry by peer id.
      // Before the caps, so a restarted peer takes its own old place.
      for (std::size_t i = 0; i < s.peers.size(); ++i) {
        if (s.peers[i].addr == from) {
          RemovePeerAt(req.info_hash, s, i);
          break;
        }
      }
    }
    if (s.peers.size() >= options_.max_peers_per_swarm) {
      return Unexpected(std::string("swarm full: peer limit per swarm reached"));
    }
    if (total_peers_ >= options_.max_peers) {
      return Unexpected(std::string("tracker full: peer limit reached"));
    }
    Peer p;
    p.id = req.peer_id;
    p.first_seen = now;
    p.progress_at = now;
    p.rate_at = now;
    p.rate_left = req.left;
    AddPeer(s, p);
    ++total_peers_;
    self = s.peers.size() - 1;
  } else {
    const Peer& known = s.peers[self];
    const bool same_ip = known.addr.v6 == from.v6 && known.addr.ip == from.ip;
    if (known.has_key ? !(req.has_key && req.key == known.key) : !same_ip) {
      return Unexpected(std::string(known.has_key ? "peer_id in use with another key"
                                                  : "peer_id in use from another address"));
    }
    CountPeer(s, s.peers[self], -1);
  }
  Peer& p = s.peers[self];
  const bool key_changed = req.has_key && !p.has_key;
  if (key_changed) {
    p.key = req.key;
    p.has_key = true;
  }
  const std::int64_t old_left = p.left;
  // Whether the database needs this announce: anything but the counters and
  // the time changed, or the stored time is older than db_refresh.
  const bool changed = fresh || key_changed || req.event != AnnounceEvent::kNone ||
                       p.left != req.left || !(p.addr == from) || p.stopped ||
                       now - p.persisted_at >= options_.db_refresh;
  p.addr = from;
  p.uploaded = req.uploaded;
  p.downloaded = req.downloaded;
  if (!fresh && req.left < p.left) p.progress_at = now;
  if (!fresh && now - p.rate_at >= 1) {
    p.rate = std::max<std::int64_t>(0, p.rate_left - req.left) / (now - p.rate_at);
    p.rate_left = req.left;
    p.rate_at = now;
  }
  p.left = req.left;
  if (req.event != AnnounceEvent::kNone) p.last_event = req.event;
  p.last_announce = now;
  p.stopped = false;
  // A completion counts once per peer: on the `completed` event, or when a
  // peer we saw downloading reports nothing left (its event got lost).
  bool finished =
      req.event == AnnounceEvent::kCompleted || (!fresh && old_left > 0 && req.left == 0);
  if (finished && !p.counted_complete) {
    p.counted_complete = true;
    ++s.completed;
    if (sink_) sink_->SwarmCounters(req.info_hash, s.completed, s.created);
  }
  if (req.event == AnnounceEvent::kStopped) {
    if (p.left == 0) {
      p.stopped = true;  // keep it for the completion view until it expires
      if (sink_) sink_->PeerUpdated(req.info_hash, p);
    } else {
      CountPeer(s, p, +1);  // RemovePeerAt takes a counted peer out
      RemovePeerAt(req.info_hash, s, self);
    }
    out.complete = s.seeders;
    out.incomplete = s.leechers;
    out.downloaded = s.completed;
    return out;
  }
  CountPeer(s, p, +1);
  out.interval = p.left > 0 && options_.progress_interval > 0
                     ? std::min(options_.progress_interval, options_.interval)
                     : options_.interval;
  if (sink_ && changed) {
    p.persisted_at = now;
    sink_->PeerUpdated(req.info_hash, p);
  }

  int want = req.numwant < 0 ? options_.numwant_default : req.numwant;
  want = std::min(want, options_.numwant_max);
  auto chosen =
      ChoosePeers(s.peers, self, from, static_cast<std::size_t>(want), options_.subnet, rng_);
  out.peers.reserve(chosen.size());
  for (std::size_t i : chosen) out.peers.push_back({s.peers[i].id, s.peers[i].addr});
  out.complete = s.seeders;
  out.incomplete = s.leechers;
  out.downloaded = s.completed;
  return out;
}

std::vector<std::optional<SwarmCounts>> SwarmTable::Scrape(
    const std::vector<InfoHash>& hashes) const {
  std::vector<std::optional<SwarmCounts>> out;
  out.reserve(hashes.size());
  MutexLock lock(mu_);
  for (const InfoHash& h : hashes) {
    auto it = swarms_.find(h);
    if (it == swarms_.end()) {
      out.emplace_back();
    } else {
      out.push_back(SwarmCounts{it->second.seeders, it->second.leechers, it->second.completed});
    }
  }
  return out;
}

std::size_t SwarmTable::Expire(std::int64_t now) {
  std::size_t dropped = 0;
  MutexLock lock(mu_);
  for (auto it = swarms_.begin(); it != swarms_.end();) {
    Swarm& s = it->second;
    for (std::size_t i = 0; i < s.peers.size();) {
      if (s.peers[i].last_announce + options_.expire_after < now) {
        RemovePeerAt(it->first, s, i);
        ++dropped;
      } else {
        ++i;
      }
    }
    // A retired entry lives while its swarm is seeded: until the last peer
    // expired and expire_after has passed since the name moved away.
    const bool gone = s.entry
                          ? s.entry->name.empty() && s.entry->retired + options_.expire_after < now
                          : s.created + options_.expire_after < now;
    if (s.peers.empty() && gone) {
      if (sink_) sink_->SwarmRemoved(it->first);
      it = swarms_.erase(it);
    } else {
      ++it;
    }
  }
  return dropped;
}

bool SwarmTable::MayWrite(std::string_view name, std::string_view owner) const {
  MutexLock lock(mu_);
  auto n = names_.find(std::string(name));
  if (n == names_.end()) return true;
  const std::string& holder = swarms_.at(n->second).entry->owner;
  return holder.empty() || holder == owner;
}

PublishOutcome SwarmTable::Publish(const InfoHash& ih, RegistryEntry entry, std::int64_t now) {
  MutexLock lock(mu_);
  Swarm* current = nullptr;  // the swarm the name points at now
  InfoHash current_ih{};
  if (auto n = names_.find(entry.name); n != names_.end()) {
    current_ih = n->second;
    current = &swarms_.at(current_ih);
    const std::string& holder = current->entry->owner;
    if (!holder.empty() && holder != entry.owner) return {PublishOutcome::kNotOwner, {}};
    if (current_ih == ih) {
      current->entry->push = entry.push;
      current->entry->sha256 = entry.sha256;
      current->entry->push_chain = entry.push_chain;
      current->entry->owner = entry.owner;  // claims an unowned name
      return {PublishOutcome::kUpdated, {}};
    }
  }
  auto it = swarms_.find(ih);
  if (it != swarms_.end() && it->second.entry && !it->second.entry->name.empty()) {
    return {PublishOutcome::kHashTaken, it->second.entry->name};
  }
  if (it == swarms_.end()) {
    if (swarms_.size() >= options_.max_swarms) return {PublishOutcome::kFull, {}};
    it = swarms_.try_emplace(ih).first;
    it->second.created = now;
  }
  PublishOutcome out{PublishOutcome::kCreated, {}};
  if (current) {
    // The old info-hash keeps its metainfo, nameless, for the peers still
    // on it (an image rebuilt under the same name).
    current->entry->name.clear();
    current->entry->retired = now;
    out = {PublishOutcome::kMoved, {}, current_ih};
  } else {
    ++registered_;
  }
  entry.created = now;
  entry.retired = 0;
  names_[entry.name] = ih;
  it->second.entry = std::make_unique<RegistryEntry>(std::move(entry));
  return out;
}

UnpublishOutcome SwarmTable::Unpublish(std::string_view name, std::string_view owner) {
  MutexLock lock(mu_);
  auto n = names_.find(std::string(name));
  if (n == names_.end()) return {UnpublishOutcome::kUnknown, {}};
  Swarm& s = swarms_.at(n->second);
  if (!s.entry->owner.empty() && s.entry->owner != owner) return {UnpublishOutcome::kNotOwner, {}};
  const InfoHash ih = n->second;
  s.entry.reset();
  names_.erase(n);
  --registered_;
  return {UnpublishOutcome::kRemoved, ih};
}

std::optional<InfoHash> SwarmTable::Resolve(std::string_view key) const {
  InfoHash ih;
  MutexLock lock(mu_);
  if (FromHex(key, ih)) {
    if (swarms_.count(ih)) return ih;
    return std::nullopt;
  }
  auto n = names_.find(std::string(key));
  if (n == names_.end()) return std::nullopt;
  return n->second;
}

SwarmSummary SwarmTable::MakeSummary(const InfoHash& ih, const Swarm& s) const {
  SwarmSummary out;
  out.info_hash = ih;
  if (s.entry) out.entry = *s.entry;
  out.seeders = s.seeders;
  out.leechers = s.leechers;
  out.completed = s.completed;
  out.created = s.created;
  return out;
}

std::optional<SwarmSummary> SwarmTable::Summary(const InfoHash& ih) const {
  MutexLock lock(mu_);
  auto it = swarms_.find(ih);
  if (it == swarms_.end()) return std::nullopt;
  return MakeSummary(ih, it->second);
}

std::vector<SwarmSummary> SwarmTable::List() const {
  std::vector<SwarmSummary> out;
  MutexLock lock(mu_);
  out.reserve(registered_);
  for (const auto& [name, ih] : names_) out.push_back(MakeSummary(ih, swarms_.at(ih)));
  return out;
}

std::optional<RegistryEntry> SwarmTable::Entry(const InfoHash& ih) const {
  MutexLock lock(mu_);
  auto it = swarms_.find(ih);
  if (it == swarms_.end() || !it->second.entry) return std::nullopt;
  return *it->second.entry;
}

std::optional<std::vector<PeerView>> SwarmTable::Peers(const InfoHash& ih, std::int64_t now) const {
  MutexLock lock(mu_);
  auto it = swarms_.find(ih);
  if (it == swarms_.end()) return std::nullopt;
  std::vector<PeerView> out;
  out.reserve(it->second.peers.size());
  for (const Peer& p : it->second.peers) {
    PeerState st = PeerState::kRunning;
    if (p.stopped || p.left == 0) {
      st = PeerState::kDone;
    } else if (p.last_announce + StaleAfter(p) < now) {
      st = PeerState::kStale;
    }
    out.push_back({p, st});
  }
  return out;
}

std::int64_t SwarmTable::StaleAfter(const Peer& p) const {
  if (p.left > 0 && options_.progress_interval > 0) {
    return std::min(options_.stale_after, 3 * options_.progress_interval);
  }
  return options_.stale_after;
}

void SwarmTable::RestoreSwarm(const InfoHash& ih, std::optional<RegistryEntry> entry,
                              std::int64_t completed, std::int64_t created) {
  MutexLock lock(mu_);
  Swarm& s = swarms_[ih];
  s.completed = completed;
  s.created = created;
  if (!entry || s.entry) return;
  if (entry->name.empty()) {
    s.entry = std::make_unique<RegistryEntry>(std::move(*entry));  // retired
  } else if (!names_.count(entry->name)) {
    names_.emplace(entry->name, ih);
    s.entry = std::make_unique<RegistryEntry>(std::move(*entry));
    ++registered_;
  }
}

void SwarmTable::RestorePeer(const InfoHash& ih, const Peer& peer) {
  MutexLock lock(mu_);
  auto it = swarms_.find(ih);
  if (it == swarms_.end()) return;
  Swarm& s = it->second;
  if (FindPeer(s, peer.id) != s.peers.size() || s.peers.size() >= options_.max_peers_per_swarm ||
      total_peers_ >= options_.max_peers) {
    return;
  }
  Peer p = peer;
  p.progress_at = p.rate_at = p.last_announce;
  p.rate_left = p.left;
  p.rate = -1;
  AddPeer(s, p);
  ++total_peers_;
  CountPeer(s, p, +1);
}

SwarmTable::Totals SwarmTable::GetTotals() const {
  MutexLock lock(mu_);
  return {swarms_.size(), total_peers_, static_cast<std::size_t>(total_seeders_),
          static_cast<std::size_t>(total_leechers_), static_cast<std::size_t>(registered_)};
}

}  // namespace swarmcast::tracker
