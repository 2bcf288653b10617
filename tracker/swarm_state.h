// The tracker's in-memory state: every swarm (info-hash), its peers, its
// completed count and, for published swarms, its registry entry. Announces
// and registry reads are served from here; SQLite only mirrors it (see
// StateSink).
//
// Threads: any thread may call any method; one mutex (mu_) guards all of
// the state. Each call holds it briefly and does no I/O. Time is passed in
// (`now`, unix seconds), so tests can move the clock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "proto/mutex.h"
#include "proto/result.h"
#include "tracker/peer.h"
#include "tracker/peer_selection.h"
#include "tracker/query_parse.h"

namespace swarmcast::tracker {

// What the registry knows of a published metainfo. The .torrent bytes are
// not here: they live in SQLite and are read from there when asked for
// (SqliteStore::ReadTorrent), so memory does not grow with what is stored.
struct RegistryEntry {
  // Empty once the name moved to another info-hash: the entry is then
  // "retired", still fetchable by info-hash while peers announce it.
  std::string name;
  // The publisher that owns the name (RegistryAccess::Writer); empty for a
  // name published before owners were recorded (schema 2): the first
  // accepted write claims it.
  std::string owner;
  std::int64_t size = 0;
  std::int64_t piece_length = 0;
  std::int64_t pieces = 0;
  std::int64_t files = 0;
  std::string push;  // "IP:PORT" or empty
  // The publisher's whole-file SHA-256 pin (single-file swarms): 64
  // lowercase hex digits, or empty.
  std::string sha256;
  // The seed links its push subscribers into a chain (seed --push-chain):
  // a get then takes a link's role (node/push_wiring.h).
  bool push_chain = false;
  std::int64_t created = 0;
  std::int64_t retired = 0;  // when the name moved away (unix s); 0 while named
};

// Receives every change, under the state mutex, in order. Implementations
// must only queue the change (the SQLite writer does the work later).
class StateSink {
 public:
  virtual ~StateSink() = default;
  virtual void PeerUpdated(const InfoHash& swarm, const Peer& peer) = 0;
  virtual void PeerRemoved(const InfoHash& swarm, const PeerId& peer) = 0;
  virtual void SwarmCounters(const InfoHash& swarm, std::int64_t completed,
                             std::int64_t created) = 0;
  virtual void SwarmRemoved(const InfoHash& swarm) = 0;
};

struct StateOptions {
  std::size_t max_swarms = 100000;
  std::size_t max_peers_per_swarm = 50000;
  std::size_t max_peers = 2000000;
  bool require_registered = false;  // refuse announces for unpublished info-hashes
  int numwant_default = 50;
  int numwant_max = 200;
  SubnetPrefix subnet;
  std::int64_t interval = 120;  // seconds, announced to clients
  // Seconds announced to peers that still have something left (0: they get
  // `interval` too). A short one keeps the fleet view (the completion view
  // and `swarmcast status`) right to within seconds while a distribution
  // runs; finished peers go back to `interval`, so the cost lasts only as
  // long as the downloads.
  std::int64_t progress_interval = 0;
  // A new peer id from the same IP and port as a known entry replaces it:
  // the process that held the port before (killed, restarted) is gone, or
  // the port would still be taken. Off for NATs that map many hosts onto
  // one address and port range.
  bool replace_same_address = true;
  std::int64_t expire_after = 360;  // seconds without an announce
  std::int64_t stale_after = 180;   // seconds: "stale" in the peer views
  // A re-announce that changes only the time and the up/down counters is
  // passed to the StateSink at most this often per peer (0: every time).
  // Joins, leaves, events, progress (`left`) and address changes always are.
  std::int64_t db_refresh = 60;
};

struct AnnouncedPeer {
  PeerId id;
  PeerAddress addr;
};

struct AnnounceOutcome {
  std::int64_t interval = 0;    // seconds until this peer's next announce
  std::int64_t complete = 0;    // seeders
  std::int64_t incomplete = 0;  // leechers
  std::int64_t downloaded = 0;  // completed count
  std::vector<AnnouncedPeer> peers;
};

struct SwarmCounts {
  std::int64_t complete = 0, incomplete = 0, downloaded = 0;
};

struct SwarmSummary {
  InfoHash info_hash{};
  std::optional<RegistryEntry> entry;
  std::int64_t seeders = 0, leechers = 0, completed = 0, created = 0;
};

enum class PeerState { kDone, kRunning, kStale };
std::string_view PeerStateName(PeerState s);

struct PeerView {
  Peer peer;
  PeerState state;
};

struct PublishOutcome {
  enum Kind {
    kCreated,    // a new name
    kUpdated,    // the name's info-hash again: the push endpoint is replaced
    kMoved,      // the name now points at a new info-hash; `previous` is retired
    kNotOwner,   // the name belongs to another publisher
    kHashTaken,  // the info-hash is published under another name (`other`)
    kFull,       // --max-swarms
  } kind;
  std::string other;    // kHashTaken: the other name
  InfoHash previous{};  // kMoved: the info-hash the name pointed at
};

struct UnpublishOutcome {
  enum Kind { kRemoved, kUnknown, kNotOwner } kind;
  InfoHash info_hash{};  // kRemoved: the swarm the name pointed at
};

class SwarmTable {
 public:
  SwarmTable(StateOptions options, StateSink* sink, std::uint64_t seed);

  const StateOptions& options() const { return options_; }

  // Records the announce and returns counts plus chosen peers. `from` is the
  // address the request came from (with the announced port). Errors are
  // failure reasons for the client (caps, unregistered info-hash, a
  // peer_id held by another client).
  //
  // Identity: an entry is bound to its peer_id and the IP it first came
  // from and, once the peer sent a `key`, to that key. An announce for an
  // existing peer_id is the same peer when the entry has a key and the
  // request carries the same one (the address may then move: DHCP, a new
  // NAT mapping), or when the entry has no key and the request comes from
  // the same IP (it may then add its key). Any other announce with that
  // peer_id is refused and changes nothing: it cannot move, stop or
  // complete the entry. A new peer_id from the IP and port of an entry
  // replaces that entry (replace_same_address): a restarted node.
  Result<AnnounceOutcome, std::string> Announce(const AnnounceRequest& req, const PeerAddress& from,
                                                std::int64_t now);

  // Counts per info-hash; nullopt for one this tracker does not know.
  std::vector<std::optional<SwarmCounts>> Scrape(const std::vector<InfoHash>& hashes) const;

  // Drops peers silent for longer than expire_after, unpublished swarms
  // left with no peers, and retired entries with no peers once
  // expire_after has passed since they were retired. Returns the number of
  // peers dropped.
  std::size_t Expire(std::int64_t now);

  // Registry. `entry.owner` is the writer. Only the name's owner (or
  // anyone, for an unowned name, which it then claims) may update it, move
  // it to another info-hash or remove it; the info-hash a name moves away
  // from keeps its entry, nameless ("retired"), until it has no peers and
  // expire_after has passed since the move (Expire).
  PublishOutcome Publish(const InfoHash& ih, RegistryEntry entry, std::int64_t now);
  // Removes the name and its entry (the swarm's peers stay until they
  // expire). `owner` is the writer.
  UnpublishOutcome Unpublish(std::string_view name, std::string_view owner);
  // Whether `owner` may write `name` now (it is free, unowned or owner's);
  // a cheap check before a request body is read. Publish checks again.
  bool MayWrite(std::string_view name, std::string_view owner) const;
  // `key` is a name or a 40-hex info-hash.
  std::optional<InfoHash> Resolve(std::string_view key) const;
  std::optional<SwarmSummary> Summary(const InfoHash& ih) const;
  std::vector<SwarmSummary> List() const;
  std::optional<RegistryEntry> Entry(const InfoHash& ih) const;
  std::optional<std::vector<PeerView>> Peers(const InfoHash& ih, std::int64_t now) const;
  // How long a peer may be silent before the views call it stale: with
  // something left and a progress_interval, three of those; else
  // stale_after.
  std::int64_t StaleAfter(const Peer& p) const;

  // Startup: state read back from the database; not reported to the sink.
  void RestoreSwarm(const InfoHash& ih, std::optional<RegistryEntry> entry, std::int64_t completed,
                    std::int64_t created);
  void RestorePeer(const InfoHash& ih, const Peer& peer);

  struct Totals {
    std::size_t swarms = 0, peers = 0, seeders = 0, leechers = 0, registered = 0;
  };
  Totals GetTotals() const;

 private:
  struct Swarm {
    std::vector<Peer> peers;
    // peer id -> position in `peers`, built once a swarm grows past
    // kIndexFrom (below that a scan of the vector is faster than hashing)
    // and dropped when it shrinks to half that. When present it is complete.
    std::unordered_map<PeerId, std::uint32_t, ByteArrayHash> index;
    std::int64_t seeders = 0, leechers = 0;  // among peers not stopped
    std::int64_t completed = 0;
    std::int64_t created = 0;
    std::unique_ptr<RegistryEntry> entry;
  };
  using SwarmMap = std::unordered_map<InfoHash, Swarm, ByteArrayHash>;

  static constexpr std::size_t kIndexFrom = 64;
  static std::size_t FindPeer(const Swarm& s, const PeerId& id);  // peers.size() if absent
  static void AddPeer(Swarm& s, const Peer& p);
  void RemovePeerAt(const InfoHash& ih, Swarm& s, std::size_t i) REQUIRES(mu_);
  void CountPeer(Swarm& s, const Peer& p, int sign) REQUIRES(mu_);
  SwarmSummary MakeSummary(const InfoHash& ih, const Swarm& s) const REQUIRES(mu_);

  const StateOptions options_;
  StateSink* const sink_;  // may be null

  // Every announce, scrape, registry call and the expiry timer, from any
  // network thread; held briefly, no I/O under it (the sink only queues).
  mutable Mutex mu_;
  SwarmMap swarms_ GUARDED_BY(mu_);
  std::unordered_map<std::string, InfoHash> names_ GUARDED_BY(mu_);
  std::size_t total_peers_ GUARDED_BY(mu_) = 0;
  std::int64_t total_seeders_ GUARDED_BY(mu_) = 0;
  std::int64_t total_leechers_ GUARDED_BY(mu_) = 0;
  std::int64_t registered_ GUARDED_BY(mu_) = 0;
  PeerRng rng_ GUARDED_BY(mu_);
};

}  // namespace swarmcast::tracker
