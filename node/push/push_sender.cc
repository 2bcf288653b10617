#include "node/push/push_sender.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <optional>

#include "node/push/admission.h"
#include "node/push/chain_chunk.h"
#include "node/push/content_files.h"
#include "node/push/fanout_common.h"
#include "node/push/piece_frames.h"
#include "node/push/push_scheduler.h"
#include "node/push/subscriber_addresses.h"
#include "node/push/tcp.h"
#include "node/push/tcp_path.h"
#include "node/push/token_bucket.h"
#include "proto/mutex.h"
#include "proto/thread_name.h"

namespace swarmcast::push {

using Clock = std::chrono::steady_clock;

// About 1 MiB of pieces (at least 1) times the other subscribers beyond
// the shortest queue: about 84 ms of a 100 Mbit/s uplink per copy, enough
// to keep it busy, little enough that the seed does not pile pieces onto
// one forwarder while the others keep up (4 MiB left one forwarder of
// eight with 2.6x the upload of another, the transfer waiting on it).
static std::uint32_t BacklogSlack(const proto::Geometry& g) {
  return std::max<std::uint32_t>(1, (1u << 20) / g.piece_length);
}

// All sender state; touched only by the push thread, except `stats_`
// (under stats_mutex_) and `stop_` (an eventfd, written by ~PushSender).
class PushSender::Loop {
 public:
  Loop(PushSource source, PushSenderOptions options, proto::Logger log, UniqueFd listener,
       std::unique_ptr<FanoutBackend> backend, std::unique_ptr<ContentFiles> files,
       ContentFiles::Fd anchor)
      : source_(std::move(source)),
        geometry_(source_.layout->geometry()),
        options_(std::move(options)),
        log_(std::move(log)),
        listener_(std::move(listener)),
        backend_(std::move(backend)),
        files_(std::move(files)),
        anchor_(std::move(anchor)),
        scheduler_(geometry_.piece_count,
                   PushSchedulerOptions{.source_complete = !options_.forwarder,
                                        .cover_first = !options_.forwarder}),
        admission_(AdmissionPolicy{options_.max_subscribers, options_.max_connections_per_address,
                                   options_.hello_timeout, proto::TokenSet(options_.tokens)}),
        chain_(ForPieceLength(options_.chain_review, geometry_.piece_length)),
        bucket_(options_.max_rate) {
    if (options_.chain && options_.head_pacing) pacer_.emplace(*options_.head_pacing);
  }

  bool Init(std::string* error) {
    epoll_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
    stop_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!epoll_ || !stop_) {
      *error = std::string("push: epoll/eventfd: ") + std::strerror(errno);
      return false;
    }
    Watch(listener_.get(), kListenerTag, EPOLLIN);
    Watch(stop_.get(), kStopTag, EPOLLIN);
    wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake_) {
      *error = std::string("push: eventfd: ") + std::strerror(errno);
      return false;
    }
    Watch(wake_.get(), kWakeTag, EPOLLIN);
    return true;
  }

  void SourceHas(std::uint32_t piece) {
    {
      MutexLock lock(pending_mutex_);
      pending_has_.push_back(piece);
    }
    Wake();
  }

  void Relay(const proto::Piece& chunk, std::string from) {
    if (chunk.piece >= geometry_.piece_count) return;
    const auto length = static_cast<std::uint32_t>(chunk.payload.size());
    const bool whole = length == proto::PieceSize(geometry_, chunk.piece);
    // The seed's cut, for what this node sends from its file: the next
    // link then passes those on as it does the seed's chunks, or forwards
    // them whole as it does the seed's whole pieces. (Less than the floor:
    // a file's end cut it, in a multi-file torrent, or the file's end.)
    if (chunk.offset == 0 && length >= kMinChainChunk) {
      relay_cut_.store(length, std::memory_order_relaxed);
    }
    // A whole piece has nothing to cut through: the link forwards it from
    // its file once checked, spliced, rather than copy and send it now.
    if (whole) return;
    RelayedChunk r{chunk.piece, chunk.offset, length, {}, std::move(from)};
    proto::Piece out = chunk;
    out.forward = false;  // as a forwarder's pushes: DIRECT
    r.frame.resize(proto::kPieceHeaderSize + length);
    if (!proto::EncodePiece(out, r.frame, &geometry_).ok()) return;
    bool first;
    {
      MutexLock lock(pending_mutex_);
      first = pending_relays_.empty();
      pending_relays_.push_back(std::move(r));
    }
    // One wake for a run of chunks: the push thread takes them all.
    if (first) Wake();
  }

  void EndChain(std::string why) {
    {
      MutexLock lock(pending_mutex_);
      end_chain_ = std::move(why);
    }
    Wake();
  }
  // Wakes the push thread to take what SourceHas(), Relay() and EndChain()
  // queued.
  void Wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
  }

  void Run();
  void RequestStop() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(stop_.get(), &one, sizeof one);
  }
  std::string_view backend_name() const { return backend_->name(); }
  PushSenderStats stats() const {
    MutexLock lock(stats_mutex_);
    return stats_;
  }

 private:
  static constexpr std::uint64_t kListenerTag = ~0ull;
  static constexpr std::uint64_t kStopTag = ~0ull - 1;
  static constexpr std::uint64_t kWakeTag = ~0ull - 2;
  static constexpr std::uint32_t kReadAheadPieces = 4;
  // A subscriber with this many frames queued gets no new piece by Relay():
  // what waits is memory, and its piece comes from the file once held.
  static constexpr std::size_t kMaxRelayQueue = 64;
  static constexpr auto kAcceptPause = std::chrono::milliseconds(100);
  // How often a paced seed looks whether a socket has drained.
  static constexpr int kDrainPollMs = 5;
  // How long a FETCHING mark keeps a piece from a subscriber. A wire
  // request is answered within libtorrent's request queue time (1 s here,
  // node/session_config.cc) unless the peer choked or refused it; then
  // the push brings the piece after all.
  static constexpr auto kFetchingHold = std::chrono::seconds(3);

  // What one subscriber is sending: the frames of a piece (shared with the
  // others of its batch), at `frame`; or one control frame.
  struct Job {
    std::shared_ptr<const PieceFrames> piece;  // null: a control frame
    std::size_t frame = 0;
    std::vector<std::uint8_t> control;
    FanoutTarget target;

    // A control frame has no payload; it still names a content file, since
    // the kmod backend wants a valid one in every call.
    FanoutJob fanout(int anchor_fd) const {
      if (piece) return piece->job(frame);
      return FanoutJob{anchor_fd, 0, 0, std::as_bytes(std::span(control))};
    }
  };

  struct Subscriber {
    UniqueFd fd;
    proto::PushFrameDecoder decoder;
    bool subscribed = false;
    bool closing = false;  // drop once the queued control frames are out
    bool want_write = false;
    std::string address;             // the peer's numeric IP
    std::uint16_t forward_port = 0;  // from LISTEN: it forwards (seed role)
    // Chain: the forwarders it was last told to take pieces from
    // ("ADDR:PORT", space-separated; empty: none yet).
    std::string chain_source;
    // Chain head: the head before it, while it is the one it takes from
    // (0: none), so each HAVE checks for the end of that without text.
    SubscriberId takes_from_previous_head = 0;
    std::optional<Job> job;
    std::deque<std::vector<std::uint8_t>> control;  // queued control frames
    Clock::time_point connected = Clock::now();
    Clock::time_point last_progress = Clock::now();
    // Paced seed: bytes its socket held unacknowledged at the last
    // look, once its job was written (0 otherwise); a change is progress.
    std::size_t unacked = 0;
    // Forwarder: the byte ranges [from, to) of each piece Relay() queued
    // for it before this node held the piece.
    std::map<PieceIndex, std::vector<std::pair<std::uint32_t, std::uint32_t>>> relayed;
  };

  // A chunk Relay() took, encoded as a DIRECT frame.
  struct RelayedChunk {
    PieceIndex piece = 0;
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    std::vector<std::uint8_t> frame;
    std::string from;  // the node it came from: not sent back there
  };

  void Watch(int fd, std::uint64_t tag, std::uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tag;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev);
  }
  void SetWriteInterest(SubscriberId id, Subscriber& s, bool on) {
    if (s.want_write == on) return;
    s.want_write = on;
    epoll_event ev{};
    ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
    ev.data.u64 = id;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, s.fd.get(), &ev);
  }

  void Accept();
  void ResumeAccepting();
  void Read(SubscriberId id, Subscriber& s);
  void Discard(SubscriberId id, Subscriber& s);
  void OnMessage(SubscriberId id, Subscriber& s, proto::Message& m);
  void OnHello(SubscriberId id, Subscriber& s, const proto::Hello& hello);
  void Drive(SubscriberId id, Subscriber& s);
  std::vector<SubscriberId> Send(std::vector<SubscriberId> ids);
  void ScheduleRound();
  void FinishJob(SubscriberId id, Subscriber& s);
  void CheckDeadlines();
  bool HasCredit();
  void Bye(SubscriberId id, Subscriber& s, proto::ByeReason reason, std::string text);
  void Refuse(SubscriberId id, Subscriber& s, const Refusal& why);
  // Why a subscriber leaves: it left on its own, or the seed dropped it
  // (counted in PushSenderStats::dropped).
  enum class LeaveKind { kLeft, kDropped };
  void Drop(SubscriberId id, LeaveKind kind, const std::string& why);
  // Seed role: sends every subscriber the current forwarders but itself
  // (a chain: the one before it).
  void HandOutPeers();
  void HandOutChain();
  // Chain: makes a link found slow a leaf (node/push/chain_order.h).
  void ReviewChain();
  // Chain: the first subscriber, the only one the seed pushes to.
  std::optional<SubscriberId> ChainHead() const;
  // Chain: sets the pacing ceiling of the head's socket
  // (node/push/head_pacer.h); at once when the head changed.
  void PaceHead();
  void LogCeiling(const HeadPacer::Ceiling& ceiling, bool new_head);
  void TakePendingHas();
  // The most payload a PIECE frame from the file carries: a chain's seed
  // as UpdateChainCut() last chose, a link as the seed cut what it
  // relayed, else options_.max_chunk.
  std::uint32_t FileCut() const;
  // Chain seed: its cut for `links` live subscribers and a head's rate so
  // far (node/push/chain_chunk.h); once a scheduling round.
  void UpdateChainCut(std::size_t links);
  // Queues a relayed chunk for every subscriber lacking its piece.
  void RelayChunk(RelayedChunk& c);
  // This node now holds `piece`: subscribers that got part of it by
  // Relay() get the rest from the file; it counts as sent to them.
  void FinishRelays(PieceIndex piece);
  void UpdateStats(const std::function<void(PushSenderStats&)>& f) {
    MutexLock lock(stats_mutex_);
    f(stats_);
  }

  PushSource source_;
  const proto::Geometry geometry_;
  PushSenderOptions options_;
  proto::Logger log_;
  UniqueFd listener_;
  UniqueFd epoll_;
  UniqueFd stop_;
  UniqueFd wake_;  // eventfd: SourceHas() queued pieces
  std::unique_ptr<FanoutBackend> backend_;
  std::unique_ptr<ContentFiles> files_;
  ContentFiles::Fd anchor_;  // a content file kept open for control frames
  PushScheduler scheduler_;
  Admission admission_;
  std::map<SubscriberId, Subscriber> subscribers_;
  std::vector<SubscriberId> doomed_;  // dropped after the current round
  // Chain: subscribers in the order their HELLO came (ids follow the
  // connection order, which differs), so a newcomer always joins at the
  // tail and never splits a working link; a slow link becomes a leaf.
  ChainOrder chain_;
  std::optional<HeadPacer> pacer_;  // chain seed, unless options say none
  SubscriberId next_id_ = 1;
  bool stopping_ = false;
  bool congestion_refused_ = false;  // said once: the host's default stays
  // Out of descriptors: accepting waits until then (level-triggered epoll
  // would otherwise report the listener again at once, for ever).
  std::optional<Clock::time_point> accept_paused_until_;
  TokenBucket bucket_;             // --max-upload-rate
  int wait_ms_ = 500;              // the next epoll_wait timeout
  bool chain_head_lacks_ = false;  // as last put in stats_
  std::uint32_t chain_cut_ = 0;    // chain seed: UpdateChainCut()'s (0: none yet)
  // FETCHING marks in the order they expire (one per subscriber and piece
  // at a time: PushScheduler::OnFetching refuses a repeat).
  struct FetchingMark {
    Clock::time_point until;
    SubscriberId id;
    PieceIndex piece;
  };
  std::deque<FetchingMark> fetching_marks_;

  mutable Mutex stats_mutex_;
  PushSenderStats stats_ GUARDED_BY(stats_mutex_);
  Mutex pending_mutex_;
  std::vector<std::uint32_t> pending_has_ GUARDED_BY(pending_mutex_);
  std::vector<RelayedChunk> pending_relays_ GUARDED_BY(pending_mutex_);
  std::optional<std::string> end_chain_ GUARDED_BY(pending_mutex_);
  // Forwarder: the length of the last chunk Relay() saw start a piece
  // (0: none yet); written by receive threads.
  std::atomic<std::uint32_t> relay_cut_{0};
  // Chain: why it ended (EndChain); every HELLO is then refused with it.
  std::optional<std::string> chain_ended_;
};

void PushSender::Loop::TakePendingHas() {
  std::uint64_t count;
  [[maybe_unused]] auto n = ::read(wake_.get(), &count, sizeof count);
  std::vector<std::uint32_t> pieces;
  std::vector<RelayedChunk> relays;
  std::optional<std::string> end_chain;
  {
    MutexLock lock(pending_mutex_);
    pieces.swap(pending_has_);
    relays.swap(pending_relays_);
    end_chain.swap(end_chain_);
  }
  // Chunks first: a piece's last chunk and its check can come in one wake.
  for (RelayedChunk& c : relays) RelayChunk(c);
  for (std::uint32_t p : pieces) {
    scheduler_.SourceHas(p);
    FinishRelays(p);
  }
  if (end_chain && options_.chain && !chain_ended_) {
    chain_ended_ = std::move(end_chain);
    log_.Info("push: chain: ended: " + *chain_ended_);
    for (auto& [id, s] : subscribers_) {
      if (s.fd && !s.closing) Bye(id, s, proto::ByeReason::kNormal, *chain_ended_);
    }
  }
}

void PushSender::Loop::RelayChunk(RelayedChunk& c) {
  // Held already: the scheduler sends it whole from the file.
  if (c.piece >= geometry_.piece_count || scheduler_.source_has(c.piece)) return;
  const std::uint32_t end = c.offset + c.length;
  std::vector<Subscriber*> to;
  for (auto& [id, s] : subscribers_) {
    if (!s.subscribed || s.closing || !s.fd || scheduler_.Holds(id, c.piece)) continue;
    if (!c.from.empty() && SubscriberAddresses::Normalize(s.address) == c.from) continue;
    // One ahead of this node takes from it as a second source (the head
    // from the old head): it has most pieces by the time their chunks
    // come here, but its HAVE may not have (7.5 MB relayed to a head it
    // lacked nothing of, the line at 67% of its rate, N = 64).
    if (scheduler_.Ahead(id)) continue;
    auto it = s.relayed.find(c.piece);
    if (it == s.relayed.end()) {
      if (s.control.size() >= kMaxRelayQueue) continue;
      it = s.relayed.emplace(c.piece, std::vector<std::pair<std::uint32_t, std::uint32_t>>{}).first;
    }
    auto& ranges = it->second;
    // Its assembler refuses a byte twice and ends the channel: a chunk
    // that overlaps what it got (a second channel's copy of the piece)
    // is skipped, and FinishRelays() fills the gaps from the file.
    const bool overlaps = std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) {
      return c.offset < r.second && r.first < end;
    });
    if (overlaps) continue;
    ranges.emplace_back(c.offset, end);
    to.push_back(&s);
  }
  if (to.empty()) return;
  // A chain link has one successor: the frame moves there, no copy.
  for (std::size_t i = 0; i + 1 < to.size(); ++i) to[i]->control.push_back(c.frame);
  to.back()->control.push_back(std::move(c.frame));
  bucket_.Take(static_cast<std::int64_t>(c.length * to.size()));
  UpdateStats(
      [n = std::uint64_t{c.length} * to.size()](PushSenderStats& st) { st.relayed_bytes += n; });
}

std::uint32_t PushSender::Loop::FileCut() const {
  if (options_.forwarder) {
    const std::uint32_t cut = relay_cut_.load(std::memory_order_relaxed);
    return cut == 0 ? options_.max_chunk : cut;
  }
  return options_.chain && chain_cut_ != 0 ? chain_cut_ : options_.max_chunk;
}

void PushSender::Loop::UpdateChainCut(std::size_t links) {
  // No link, no piece to cut: choose (and log) once the first subscribed.
  if (links == 0) return;
  const double rate = pacer_ ? pacer_->best_rate() : 0;
  const std::uint32_t cut =
      std::min(options_.max_chunk, ChainChunkLength(geometry_.total_size, links, rate));
  if (cut == chain_cut_) return;
  chain_cut_ = cut;
  char text[128];
  std::snprintf(text, sizeof text,
                "push: chain: cuts pieces into %u KiB chunks (%zu links; a head took %.1f MB/s)",
                cut >> 10, links, rate / 1e6);
  log_.Info(text);
}

// The parts of [from, to) that no range in `got` covers.
static std::vector<std::pair<std::uint32_t, std::uint32_t>> Gaps(
    std::uint32_t from, std::uint32_t to,
    std::vector<std::pair<std::uint32_t, std::uint32_t>> got) {
  std::sort(got.begin(), got.end());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> gaps;
  for (const auto& [a, b] : got) {
    if (b <= from || a >= to) continue;
    if (a > from) gaps.emplace_back(from, a);
    from = std::max(from, b);
  }
  if (from < to) gaps.emplace_back(from, to);
  return gaps;
}

void PushSender::Loop::FinishRelays(PieceIndex piece) {
  if (piece >= geometry_.piece_count) return;
  for (auto& [id, s] : subscribers_) {
    auto it = s.relayed.find(piece);
    if (it == s.relayed.end()) continue;
    const auto got = std::move(it->second);
    s.relayed.erase(it);
    // Gone, or it has the piece by now (from the wire): its receiver drops
    // what came of ours.
    if (!s.fd || s.closing || scheduler_.Holds(id, piece)) continue;
    std::string failed;
    for (const proto::Chunk& c : files_->layout().ChunksOf(piece, FileCut())) {
      for (const auto& [from, to] : Gaps(c.piece_offset, c.piece_offset + c.length, got)) {
        auto fd = files_->Open(c.file);
        if (!fd) {
          failed = fd.error();
          break;
        }
        const std::uint32_t n = to - from;
        std::vector<std::uint8_t> frame(proto::kPieceHeaderSize + n);
        const std::uint64_t at = c.file_offset + (from - c.piece_offset);
        std::uint32_t done = 0;
        while (done < n) {
          const ssize_t r = ::pread((*fd)->get(), frame.data() + proto::kPieceHeaderSize + done,
                                    n - done, static_cast<off_t>(at + done));
          if (r < 0 && errno == EINTR) continue;
          if (r <= 0) break;
          done += static_cast<std::uint32_t>(r);
        }
        if (done < n ||
            !proto::EncodePieceHeader({piece, from, n, false}, frame, &geometry_).ok()) {
          failed = "cannot read piece " + std::to_string(piece);
          break;
        }
        s.control.push_back(std::move(frame));
        bucket_.Take(n);
      }
      if (!failed.empty()) break;
    }
    if (!failed.empty()) {
      Drop(id, LeaveKind::kDropped, "the rest of a relayed piece: " + failed);
      continue;
    }
    scheduler_.OnSent(id, piece);
    UpdateStats([](PushSenderStats& st) { ++st.pieces_sent; });
  }
}

void PushSender::Loop::HandOutPeers() {
  if (options_.forwarder) return;
  if (options_.chain) return HandOutChain();
  std::vector<std::pair<SubscriberId, proto::PeerEndpoint>> all;
  for (auto& [id, s] : subscribers_) {
    if (!s.subscribed || s.closing || !s.fd || s.forward_port == 0) continue;
    auto address = NumericAddressBytes(s.address);
    if (address.empty()) continue;
    all.push_back({id, proto::PeerEndpoint{std::move(address), s.forward_port}});
    if (all.size() > proto::kMaxPushPeers) break;  // the first ones; the rest repair by wire
  }
  for (auto& [id, s] : subscribers_) {
    if (!s.subscribed || s.closing || !s.fd) continue;
    proto::Peers peers;
    for (const auto& [other, e] : all) {
      if (other != id && peers.peers.size() < proto::kMaxPushPeers) peers.peers.push_back(e);
    }
    std::vector<std::uint8_t> frame(proto::EncodedSize(peers));
    if (!proto::EncodePeers(peers, frame).ok()) continue;
    // Queued only: this may run inside Send() (a Drop), which must not
    // see other jobs change under it; Run() drives them after the round.
    s.control.push_back(std::move(frame));
  }
  UpdateStats([n = all.size()](PushSenderStats& st) { st.forwarders = n; });
  // Assign by backlog, and wait for forwarders to drain their queues, only
  // while there are some: without, the seed schedules as it always did.
  scheduler_.SetBacklogPolicy(!all.empty(), all.empty() ? 0 : BacklogSlack(geometry_));
}

std::optional<SubscriberId> PushSender::Loop::ChainHead() const {
  for (SubscriberId id : chain_.order()) {
    const Subscriber& s = subscribers_.at(id);
    if (!s.closing && s.fd) return id;
  }
  return std::nullopt;
}

void PushSender::Loop::PaceHead() {
  const auto now = Clock::now();
  const SubscriberId head = ChainHead().value_or(0);
  const bool new_head = head != pacer_->head();
  if (new_head || (head != 0 && now >= pacer_->next_step())) {
    const int fd = head == 0 ? -1 : subscribers_.at(head).fd.get();
    const auto path = fd < 0 ? std::optional<TcpPathSample>(TcpPathSample{}) : ReadTcpPath(fd);
    const auto ceiling = path ? pacer_->Observe(now, head, *path) : std::nullopt;
    if (ceiling && fd >= 0) {
      if (SetMaxPacingRate(fd, ceiling->bytes_per_second)) {
        LogCeiling(*ceiling, new_head);
      } else {
        log_.Warning(std::string("push: chain: cannot pace the push to the head: ") +
                     std::strerror(errno));
      }
    }
  }
  if (pacer_->head() == 0) return;
  const auto until = std::chrono::ceil<std::chrono::milliseconds>(pacer_->next_step() - now);
  wait_ms_ = std::min<int>(wait_ms_, static_cast<int>(std::max<std::int64_t>(until.count(), 1)));
}

void PushSender::Loop::LogCeiling(const HeadPacer::Ceiling& ceiling, bool new_head) {
  if (ceiling.bytes_per_second == 0) return;
  char text[96];
  std::snprintf(text, sizeof text, "at up to %.1f MB/s",
                static_cast<double>(ceiling.bytes_per_second) / 1e6);
  const std::string what = "push: chain: paces the push to head subscriber " +
                           std::to_string(ceiling.head) + " (" +
                           subscribers_.at(ceiling.head).address + ") " + text;
  if (!new_head) return log_.Debug(what);  // a step's change: several a second at times
  if (pacer_->best_rate() <= 0) {
    return log_.Info(what + " (the first head: it rises while it holds the push back)");
  }
  const double gained = pacer_->best_rate() * options_.head_pacing->gain;
  if (gained < static_cast<double>(ceiling.bytes_per_second)) {
    return log_.Info(what + " (a new head: the least a ceiling starts at)");
  }
  std::snprintf(text, sizeof text, " (a new head: %.2fx the best rate a head took)",
                options_.head_pacing->gain);
  log_.Info(what + text);
}

// Each subscriber is told the one before it (a leaf: the line's last link)
// once that one forwards, and again only when that changes: when one
// leaves, the next is linked to the one before, which pushes it whatever
// it lacks. One that does not forward leaves the rest of the chain to the
// BitTorrent wire.
//
// The head is also told the head before it (ChainOrder::previous_head)
// until it has every piece that one has. After the head probe (the old
// head went to the end of the line) or a slow head made a leaf, the new
// head lacks what the old one had not yet forwarded to it, and a seed that
// died then left it with no one to push those pieces (bench.fault_cells,
// session 15). Taking from the old head, the new one gets them at once.
// It is not told the second: in a line each link holds a subset of what
// the one before it holds, so the second has nothing for the head, yet
// it sent the head pieces the head had received and not yet announced,
// on the head's download link, the one the whole line runs at: 0.2-0.3 MB
// a run at N = 8, 100 Mbit/s, and 2.3 MB (0.19 s) in a run where the
// head fell behind its HAVEs (session 32).
void PushSender::Loop::HandOutChain() {
  struct Live {
    SubscriberId id;
    Subscriber* s;
    bool leaf;
  };
  std::vector<Live> live;
  for (const auto& [id, leaf] : chain_.places()) {
    Subscriber& s = subscribers_.at(id);
    if (!s.closing && s.fd) live.push_back({id, &s, leaf});
  }
  const auto is_live = [&live](SubscriberId id) {
    return std::any_of(live.begin(), live.end(), [id](const Live& l) { return l.id == id; });
  };
  const SubscriberId previous_head = chain_.previous_head();
  const Subscriber* before = nullptr;
  std::size_t linked = 0;
  const auto now = Clock::now();
  for (std::size_t i = 0; i < live.size(); ++i) {
    Subscriber& s = *live[i].s;
    proto::Peers peers;
    std::string source;
    const auto name = [&](const Subscriber& from) {
      auto address = NumericAddressBytes(from.address);
      if (from.forward_port == 0 || address.empty()) return;
      source +=
          (source.empty() ? "" : " ") + from.address + ":" + std::to_string(from.forward_port);
      peers.peers.push_back(proto::PeerEndpoint{std::move(address), from.forward_port});
    };
    if (before) name(*before);
    const bool has_before = !source.empty();
    s.takes_from_previous_head = 0;
    if (!before && !live[i].leaf) {
      // The head before it, until the head has every piece that one has:
      // then it has nothing more to give, and as the line's last link it
      // would pass on to the head, chunk by chunk, pieces the head got from
      // the seed moments before (its HAVE comes later than the chunks).
      if (previous_head != 0 && previous_head != live[i].id && is_live(previous_head) &&
          !scheduler_.HasEveryPieceOf(live[i].id, previous_head)) {
        name(subscribers_.at(previous_head));
        s.takes_from_previous_head = previous_head;
      }
    }
    // A leaf (node/push/chain_order.h) takes from the line's last link
    // and feeds no one; the leaves come after the whole line.
    if (!live[i].leaf) before = &s;
    linked += has_before ? 1 : 0;
    // A move can leave a link's sources as they were while the order
    // unlinked it (ChainOrder::MoveToLineEnd): linked again, it is judged
    // again.
    if (has_before != chain_.Linked(live[i].id) || source != s.chain_source) {
      chain_.SetLinked(live[i].id, has_before, now);
    }
    if (source == s.chain_source) continue;
    s.chain_source = source;
    std::vector<std::uint8_t> frame(proto::EncodedSize(peers));
    if (!proto::EncodePeers(peers, frame).ok()) continue;
    s.control.push_back(std::move(frame));  // queued only, as in HandOutPeers
  }
  UpdateStats([linked](PushSenderStats& st) { st.forwarders = linked; });
}

void PushSender::Loop::ReviewChain() {
  const auto now = Clock::now();
  if (auto move = chain_.Review(now)) {
    const auto name = [this](SubscriberId id) {
      auto it = subscribers_.find(id);
      return std::to_string(id) + " (" + (it == subscribers_.end() ? "" : it->second.address) + ")";
    };
    const std::string share = "1/" + std::to_string(options_.chain_review.slow_share);
    std::string what;
    switch (move->reason) {
      case ChainOrder::Reason::kFellBehind:
        what = "becomes a leaf (takes from the last link, feeds no one): it gains under " + share +
               " of what the one before it gains, subscriber " + name(move->ahead);
        break;
      case ChainOrder::Reason::kSlowHead:
        what = "becomes a leaf (takes from the last link, feeds no one): it gains under " + share +
               " of the best rate of the chain's heads as its head";
        break;
      case ChainOrder::Reason::kHeadProbe:
        what =
            "moves to the end of the line: the first head is probed once, since a head "
            "slow to receive would hold up all";
        break;
      case ChainOrder::Reason::kRejoined:
        what =
            "rejoins the line at its end: as a leaf it kept up with the line's last link, "
            "so it was not slow (a stall)";
        break;
      case ChainOrder::Reason::kSlowUplink:
        what = "moves to the end of the line: subscriber " + name(move->behind) +
               " fell behind it, as did the one before, which then kept up as a leaf: "
               "its uplink is the slow one";
        break;
    }
    log_.Info("push: chain: subscriber " + name(move->moved) + " " + what);
    HandOutChain();
  }
  const auto until = std::chrono::ceil<std::chrono::milliseconds>(chain_.next_review() - now);
  wait_ms_ = std::min<int>(wait_ms_, static_cast<int>(std::max<std::int64_t>(until.count(), 1)));
}

void PushSender::Loop::Run() {
  std::array<epoll_event, 64> events;
  while (!stopping_) {
    const int n = ::epoll_wait(epoll_.get(), events.data(), events.size(), wait_ms_);
    wait_ms_ = 500;
    if (n < 0 && errno != EINTR) {
      log_.Error(std::string("push: epoll_wait: ") + std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      const std::uint64_t tag = events[i].data.u64;
      if (tag == kStopTag) {
        stopping_ = true;
      } else if (tag == kWakeTag) {
        TakePendingHas();
      } else if (tag == kListenerTag) {
        Accept();
      } else if (auto it = subscribers_.find(static_cast<SubscriberId>(tag));
                 it != subscribers_.end()) {
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) Read(it->first, it->second);
        if (events[i].events & EPOLLOUT) Drive(it->first, it->second);
      }
    }
    ResumeAccepting();
    if (options_.chain) ReviewChain();
    if (pacer_) PaceHead();
    // Control frames queued outside Drive() (PEERS) go out first.
    for (auto& [id, s] : subscribers_) {
      if (s.fd && !s.job && !s.control.empty() && !s.want_write) Drive(id, s);
    }
    ScheduleRound();
    CheckDeadlines();
    for (SubscriberId id : doomed_) subscribers_.erase(id);
    doomed_.clear();
  }
}

void PushSender::Loop::Accept() {
  while (true) {
    sockaddr_storage peer;
    socklen_t len = sizeof peer;
    UniqueFd fd(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &len,
                          SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        log_.Warning(std::string("push: cannot accept: ") + std::strerror(errno) +
                     "; pausing new connections");
        ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, listener_.get(), nullptr);
        accept_paused_until_ = Clock::now() + kAcceptPause;
        wait_ms_ = static_cast<int>(kAcceptPause.count());
      }
      return;  // EAGAIN, or an error of one connection: try next round
    }
    if (options_.max_unsent_bytes > 0 && !LimitUnsentBytes(fd.get(), options_.max_unsent_bytes)) {
      log_.Warning(std::string("push: cannot cap a socket's unsent bytes: ") +
                   std::strerror(errno));
    }
    if (!options_.congestion_control.empty() &&
        !SetCongestionControl(fd.get(), options_.congestion_control) && !congestion_refused_) {
      congestion_refused_ = true;
      log_.Warning(
          "push: the push sockets keep this host's TCP congestion control: the kernel "
          "refused " +
          options_.congestion_control + " (" + std::strerror(errno) +
          (errno == EPERM ? "; not in net.ipv4.tcp_allowed_congestion_control" : "") + ")");
    }
    // A chain seed's host sends its other traffic first, in its own queue:
    // its tracker's answers and the SYN-ACKs of new subscribers waited
    // 86-236 ms behind the push in a seed's pfifo_fast (N = 64 at
    // 10 Mbit/s), and a get needs five such round trips to join
    // (docs/benchmarks.md, session 22). Accepted sockets only: the
    // listener's SYN-ACKs keep the default. A chain seed only: strict
    // bands give the push nothing while other traffic fills the uplink,
    // and only a chain seed watches its share and gives way to the wire
    // then (node/push/chain_share.h).
    if (options_.chain) SetBulkPriority(fd.get());
    const SubscriberId id = next_id_++;
    Subscriber& s = subscribers_[id];
    s.fd = std::move(fd);
    s.address = NumericAddress(peer);
    // A subscriber sends only HELLO, HAVE and BYE: no frame needs more room
    // than the longest HELLO, so that is all one connection may buffer.
    s.decoder =
        proto::PushFrameDecoder(proto::FrameLimits{proto::MaxHelloLength(geometry_)}, geometry_);
    Watch(s.fd.get(), id, EPOLLIN);
    if (auto refusal = admission_.OnConnect(s.address)) Refuse(id, s, *refusal);
  }
}

void PushSender::Loop::ResumeAccepting() {
  if (!accept_paused_until_) return;
  if (Clock::now() < *accept_paused_until_) {
    wait_ms_ = std::min(wait_ms_, static_cast<int>(kAcceptPause.count()));
    return;
  }
  accept_paused_until_.reset();
  Watch(listener_.get(), kListenerTag, EPOLLIN);
}

void PushSender::Loop::Read(SubscriberId id, Subscriber& s) {
  while (s.fd) {
    if (s.closing) return Discard(id, s);
    auto region = s.decoder.PrepareWrite(std::max<std::size_t>(s.decoder.bytes_needed(), 4096));
    const ssize_t n = ::recv(s.fd.get(), region.data(), region.size(), 0);
    if (n == 0) return Drop(id, LeaveKind::kLeft, "closed the connection");
    if (n < 0) {
      s.decoder.Commit(0);
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return Drop(id, LeaveKind::kDropped, std::string("read failed: ") + std::strerror(errno));
    }
    s.decoder.Commit(static_cast<std::size_t>(n));
    while (s.fd && !s.closing) {
      auto next = s.decoder.Next();
      if (std::holds_alternative<proto::NeedMore>(next)) break;
      if (auto* ec = std::get_if<std::error_code>(&next)) {
        log_.Info("push: subscriber " + std::to_string(id) + ": bad frame: " + ec->message());
        Bye(id, s, proto::ByeReason::kProtocolError, ec->message());
        return Drive(id, s);
      }
      OnMessage(id, s, std::get<proto::Message>(next));
    }
  }
}

// A closing connection's input is read and dropped: left unread, it
// would wake the level-triggered loop again at once until the BYE is out.
void PushSender::Loop::Discard(SubscriberId id, Subscriber& s) {
  char sink[4096];
  while (s.fd) {
    const ssize_t n = ::recv(s.fd.get(), sink, sizeof sink, 0);
    if (n == 0) return Drop(id, LeaveKind::kLeft, "closed the connection");
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        Drop(id, LeaveKind::kDropped, std::string("read failed: ") + std::strerror(errno));
      }
      return;
    }
  }
}

void PushSender::Loop::OnMessage(SubscriberId id, Subscriber& s, proto::Message& m) {
  if (auto* hello = std::get_if<proto::Hello>(&m)) return OnHello(id, s, *hello);
  if (!s.subscribed) {
    Bye(id, s, proto::ByeReason::kProtocolError, "HELLO must come first");
    return Drive(id, s);
  }
  if (auto* have = std::get_if<proto::Have>(&m)) {
    if (options_.chain) chain_.OnHave(id, have->piece);
    scheduler_.OnHave(id, have->piece);
    // The head caught up with the head before it: it takes from it no more.
    const SubscriberId previous = s.takes_from_previous_head;
    if (previous != 0 && ChainHead() == id && scheduler_.HasEveryPieceOf(id, previous)) {
      HandOutChain();
    }
  } else if (auto* fetching = std::get_if<proto::Fetching>(&m)) {
    if (scheduler_.OnFetching(id, fetching->piece)) {
      fetching_marks_.push_back({Clock::now() + kFetchingHold, id, fetching->piece});
    }
  } else if (std::holds_alternative<proto::Bye>(m)) {
    Drop(id, LeaveKind::kLeft, "said BYE");
  } else if (auto* listen = std::get_if<proto::Listen>(&m); listen && !options_.forwarder) {
    const bool changed = s.forward_port != listen->port;
    s.forward_port = listen->port;
    log_.Info("push: subscriber " + std::to_string(id) + " forwards on " + s.address + " port " +
              std::to_string(listen->port));
    if (changed) HandOutPeers();
  } else {  // PIECE and PEERS travel seed -> peer only; LISTEN goes to a seed
    Bye(id, s, proto::ByeReason::kProtocolError, "unexpected frame from a subscriber");
    Drive(id, s);
  }
}

void PushSender::Loop::OnHello(SubscriberId id, Subscriber& s, const proto::Hello& hello) {
  // The token first: a stranger learns nothing, not even which torrent.
  if (auto refusal = admission_.OnHello(hello.token)) return Refuse(id, s, *refusal);
  if (chain_ended_) return Refuse(id, s, {proto::ByeReason::kNormal, *chain_ended_});
  if (hello.hash_kind != source_.hash_kind || hello.info_hash != source_.info_hash) {
    return Refuse(id, s, {proto::ByeReason::kInfoHashMismatch, "not the torrent this seed pushes"});
  }
  std::vector<bool> have(geometry_.piece_count);
  for (PieceIndex p = 0; p < have.size(); ++p) {
    have[p] = (hello.bitfield[p / 8] >> (7 - p % 8)) & 1;
  }
  scheduler_.AddSubscriber(id, have);
  s.subscribed = true;
  if (options_.addresses) options_.addresses->Add(s.address);
  proto::Hello mine;
  mine.hash_kind = source_.hash_kind;
  mine.info_hash = source_.info_hash;
  mine.peer_id = source_.peer_id;
  mine.geometry = geometry_;
  mine.bitfield.assign(proto::BitfieldSize(geometry_.piece_count), 0);
  for (PieceIndex p = 0; p < geometry_.piece_count; ++p) {
    if (scheduler_.source_has(p))
      mine.bitfield[p / 8] |= static_cast<std::uint8_t>(0x80 >> (p % 8));
  }
  std::vector<std::uint8_t> frame(proto::EncodedSize(mine));
  if (proto::EncodeHello(mine, frame).ok()) s.control.push_back(std::move(frame));
  UpdateStats([](PushSenderStats& st) { ++st.subscribers; });
  log_.Info("push: subscriber " + std::to_string(id) + " (" + s.address + ") joined");
  Drive(id, s);
  // A new subscriber learns the forwarders there are (none: nothing to say).
  if (options_.chain) {
    chain_.Join(id, have);
  }
  if (options_.chain && s.fd) return HandOutChain();
  if (!options_.forwarder && s.fd) {
    for (const auto& [other, o] : subscribers_) {
      if (other != id && o.forward_port != 0 && o.subscribed) return HandOutPeers();
    }
  }
}

// Writes what this subscriber has pending: its current job, then queued
// control frames. Returns with write interest on when the socket is full.
void PushSender::Loop::Drive(SubscriberId id, Subscriber& s) {
  while (s.fd) {
    if (s.job) {
      const auto done = Send({id});
      if (done.empty()) return;  // blocked (write interest is on) or dropped
      continue;
    }
    if (!s.control.empty()) {
      s.job = Job{nullptr, 0, std::move(s.control.front()), FanoutTarget{s.fd.get(), 0, {}}};
      s.control.pop_front();
      continue;
    }
    SetWriteInterest(id, s, false);
    if (s.closing) Drop(id, LeaveKind::kDropped, "closed by the seed");
    return;
  }
}

// Sends for every subscriber in `ids` as much of its job as its socket
// takes. All of them are at the same frame of the same piece (or `ids` is
// one subscriber), so one backend call serves them all, and those that
// take the whole frame go on to the next one together; one that blocks
// stays behind with write interest on and resumes alone in Drive(). Returns
// the subscribers whose job is complete.
std::vector<SubscriberId> PushSender::Loop::Send(std::vector<SubscriberId> ids) {
  std::vector<SubscriberId> done;
  while (!ids.empty()) {
    const Job& first = *subscribers_.at(ids.front()).job;
    const FanoutJob fj = first.fanout(anchor_->get());
    std::vector<FanoutTarget> targets;
    for (SubscriberId id : ids) targets.push_back(subscribers_.at(id).job->target);
    if (first.piece) {
      backend_->Send(fj, targets);
    } else {
      // A control frame is all header, from memory (a relayed chunk: 16 KiB,
      // past the fan-out module's 4 KiB header): a plain send.
      for (FanoutTarget& t : targets) detail::SendHeader(fj, t);
    }
    const auto now = Clock::now();
    std::vector<SubscriberId> together;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const SubscriberId id = ids[i];
      Subscriber& s = subscribers_.at(id);
      Job& job = *s.job;
      if (targets[i].progress != job.target.progress) s.last_progress = now;
      job.target = targets[i];
      if (job.target.error) {
        Drop(id, LeaveKind::kDropped, "send failed: " + job.target.error.message());
        continue;
      }
      if (!job.target.finished(fj)) {
        SetWriteInterest(id, s, true);
        continue;
      }
      if (job.piece) {
        UpdateStats([n = fj.length](PushSenderStats& st) { st.payload_bytes += n; });
        if (job.frame + 1 < job.piece->frames.size()) {
          ++job.frame;
          job.target.progress = 0;
          together.push_back(id);
          continue;
        }
      }
      FinishJob(id, s);
      done.push_back(id);
    }
    ids = std::move(together);
  }
  return done;
}

void PushSender::Loop::FinishJob(SubscriberId id, Subscriber& s) {
  if (s.job->piece) {
    scheduler_.OnSent(id, s.job->piece->piece);
    UpdateStats([](PushSenderStats& st) { ++st.pieces_sent; });
  }
  s.job.reset();
}

// Hands the scheduler every subscriber with nothing pending and sends the
// batches it returns, one fan-out call per chunk for all of a batch.
void PushSender::Loop::ScheduleRound() {
  // A seed with more subscribers than max_in_flight: only that many at a
  // time with bytes in flight (PushSenderOptions::max_in_flight).
  std::size_t subscribed = 0;
  for (const auto& [id, s] : subscribers_) subscribed += s.subscribed && !s.closing && s.fd;
  if (options_.chain && !options_.forwarder) UpdateChainCut(subscribed);
  // (A chain seed pushes to one subscriber: nothing to pace.)
  const bool paced = !options_.forwarder && !options_.chain && options_.max_in_flight > 0 &&
                     subscribed > options_.max_in_flight;
  std::size_t in_flight = 0;
  std::vector<SubscriberId> ready;
  const auto now = Clock::now();
  const std::optional<SubscriberId> head = options_.chain ? ChainHead() : std::nullopt;
  const bool head_lacks = head && !scheduler_.IsComplete(*head);
  if (head_lacks != chain_head_lacks_) {  // the stats lock only on a change
    chain_head_lacks_ = head_lacks;
    UpdateStats([head_lacks](PushSenderStats& st) { st.chain_head_lacks = head_lacks; });
  }
  for (auto& [id, s] : subscribers_) {
    if (!s.subscribed || s.closing || !s.fd) continue;
    if (head && id != *head) continue;  // the chain brings them every piece
    const bool idle = !s.job && s.control.empty();
    const std::size_t unacked = paced && idle ? UnackedBytes(s.fd.get()) : 0;
    if (unacked != s.unacked) {
      s.unacked = unacked;
      s.last_progress = now;
    }
    if (paced && (!idle || unacked > 0)) {
      ++in_flight;
    } else if (idle) {
      ready.push_back(id);
    }
  }
  // Nothing wakes the loop when a socket's last bytes are acknowledged.
  if (paced && in_flight > 0) wait_ms_ = std::min(wait_ms_, kDrainPollMs);
  // Bounded, so that a fast loopback cannot starve reads and accepts.
  for (int budget = 256; budget > 0 && !ready.empty() && HasCredit(); --budget) {
    if (paced && in_flight >= options_.max_in_flight) return;
    auto batch = scheduler_.NextBatch(ready);
    if (!batch) return;
    for (SubscriberId id : batch->targets) std::erase(ready, id);
    if (paced) {
      in_flight += batch->targets.size();
      wait_ms_ = std::min(wait_ms_, kDrainPollMs);
    }
    auto frames = PieceFrames::Make(*files_, batch->piece, batch->forward, FileCut());
    if (!frames) {
      log_.Error("push: cannot read piece " + std::to_string(batch->piece) + ": " + frames.error());
      for (SubscriberId id : batch->targets) {
        Drop(id, LeaveKind::kDropped, "the seed cannot read piece " + std::to_string(batch->piece));
      }
      continue;
    }
    // Start reading the pieces the scan reaches next while this one goes
    // out, so the disk works in parallel with the sockets.
    const std::uint64_t next = std::uint64_t{batch->piece + 1} * geometry_.piece_length;
    files_->ReadAhead(next, std::uint64_t{kReadAheadPieces} * geometry_.piece_length);
    bucket_.Take(static_cast<std::int64_t>((*frames)->payload_bytes * batch->targets.size()));
    UpdateStats([n = batch->targets.size()](PushSenderStats& st) {
      ++st.fanout_calls;
      st.fanout_targets += n;
    });
    for (SubscriberId id : batch->targets) {
      Subscriber& s = subscribers_.at(id);
      s.job = Job{*frames, 0, {}, FanoutTarget{s.fd.get(), 0, {}}};
    }
    if ((*frames)->frames.empty()) {  // all pad bytes: nothing to send
      for (SubscriberId id : batch->targets) {
        FinishJob(id, subscribers_.at(id));
        ready.push_back(id);
      }
      if (paced) in_flight -= batch->targets.size();
      continue;
    }
    // Those that took the whole piece have room for another this round
    // (paced: once their peer acknowledged it).
    for (SubscriberId id : Send(batch->targets)) {
      if (!paced) ready.push_back(id);
    }
  }
}

// Whether the rate limit lets a new batch start now. If not, the loop
// wakes up when it will.
bool PushSender::Loop::HasCredit() {
  if (bucket_.Available(Clock::now()) > 0) return true;
  wait_ms_ = std::min(wait_ms_, std::clamp(static_cast<int>(bucket_.Wait().count()), 1, 500));
  return false;
}

void PushSender::Loop::CheckDeadlines() {
  const auto now = Clock::now();
  // (The loop wakes at least every 500 ms: close enough for a 3 s hold.)
  while (!fetching_marks_.empty() && fetching_marks_.front().until <= now) {
    scheduler_.OnFetchingExpired(fetching_marks_.front().id, fetching_marks_.front().piece);
    fetching_marks_.pop_front();
  }
  for (auto& [id, s] : subscribers_) {
    if (!s.fd) continue;
    // (A paced subscriber whose peer acknowledges nothing holds one of the
    // max_in_flight slots: it is dropped like one whose socket stays full.)
    if ((s.job || s.unacked > 0) && now - s.last_progress > options_.stall_timeout) {
      // Its socket is full, so a BYE could not get through: just close.
      log_.Info("push: subscriber " + std::to_string(id) + " made no progress for " +
                std::to_string(options_.stall_timeout.count()) + " ms, dropped");
      Drop(id, LeaveKind::kDropped, "too slow");
    } else if (!s.subscribed && !s.closing) {
      if (auto refusal = admission_.CheckHelloDeadline(s.connected, now)) Refuse(id, s, *refusal);
    }
  }
}

// Queues a BYE and closes once it is out. A BYE cannot cut into a frame
// already partly sent; then the connection just closes.
void PushSender::Loop::Bye(SubscriberId id, Subscriber& s, proto::ByeReason reason,
                           std::string text) {
  s.closing = true;
  if (s.job && s.job->target.progress > 0) return;
  if (s.job && s.job->piece) {
    scheduler_.OnSendFailed(id, s.job->piece->piece);
  } else if (s.job) {  // a control frame not yet started: keep it first
    s.control.push_front(std::move(s.job->control));
  }
  s.job.reset();
  proto::Bye bye{static_cast<std::uint16_t>(reason), std::move(text)};
  std::vector<std::uint8_t> frame(proto::EncodedSize(bye));
  if (proto::EncodeBye(bye, frame).ok()) s.control.push_back(std::move(frame));
}

// Turns a connection away with a BYE that says why.
void PushSender::Loop::Refuse(SubscriberId id, Subscriber& s, const Refusal& why) {
  log_.Info("push: connection " + std::to_string(id) + " from " + s.address +
            " refused: " + why.text);
  UpdateStats([](PushSenderStats& st) { ++st.refused; });
  Bye(id, s, why.reason, why.text);
  Drive(id, s);
}

void PushSender::Loop::Drop(SubscriberId id, LeaveKind kind, const std::string& why) {
  auto it = subscribers_.find(id);
  if (it == subscribers_.end() || !it->second.fd) return;
  Subscriber& s = it->second;
  if (s.job && s.job->piece) scheduler_.OnSendFailed(id, s.job->piece->piece);
  if (s.subscribed) {
    if (options_.addresses) options_.addresses->Remove(s.address);
    UpdateStats([kind](PushSenderStats& st) {
      --st.subscribers;
      if (kind == LeaveKind::kDropped) ++st.dropped;
    });
    log_.Info("push: subscriber " + std::to_string(id) + " left: " + why);
  } else {
    log_.Debug("push: connection " + std::to_string(id) + " closed: " + why);
  }
  admission_.OnClose(s.address);
  scheduler_.RemoveSubscriber(id);
  const bool was_forwarder = s.subscribed && s.forward_port != 0;
  const bool was_subscribed = s.subscribed;
  chain_.Leave(id);
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, s.fd.get(), nullptr);
  s.fd.reset();
  s.job.reset();
  s.subscribed = false;
  s.forward_port = 0;
  doomed_.push_back(id);
  // Its pieces count as uncovered again (RemoveSubscriber), so the seed
  // assigns them anew; the others stop expecting it. In a chain the one
  // after it is linked to the one before.
  if (was_forwarder || (options_.chain && was_subscribed)) HandOutPeers();
}

Result<std::unique_ptr<PushSender>, std::string> PushSender::Start(PushSource source,
                                                                   PushSenderOptions options,
                                                                   proto::Logger log) {
  if (!source.layout) return Unexpected(std::string("push: no content layout"));
  if (source.info_hash.size() != proto::InfoHashSize(source.hash_kind)) {
    return Unexpected(std::string("push: info-hash size does not match its kind"));
  }
  for (const std::string& t : options.tokens) {
    if (t.size() > proto::kMaxHelloTokenLength) {
      return Unexpected("push: a token must be at most " +
                        std::to_string(proto::kMaxHelloTokenLength) + " bytes");
    }
  }
  auto files = std::make_unique<ContentFiles>(source.root, source.layout);
  // Some file holds data (the last piece has at least one byte); opening
  // it now shows at once whether the content is there.
  const auto& layout_files = source.layout->files();
  std::uint32_t first = 0;
  while (layout_files[first].pad || layout_files[first].size == 0) ++first;
  if (options.anchor_file) {
    if (*options.anchor_file >= layout_files.size()) {
      return Unexpected(std::string("push: anchor file out of range"));
    }
    first = *options.anchor_file;
  }
  auto anchor = files->Open(first);
  if (!anchor) return Unexpected("push: " + anchor.error());
  auto backend = MakeFanoutBackend(options.fanout);
  if (!backend) {
    std::string why = backend.error().message();
    if (options.fanout == FanoutKind::kKmod && backend.error() == std::errc::permission_denied) {
      why += " (the node's user needs the swarmcast group: kmod/README.md)";
    }
    return Unexpected("push: fan-out backend '" + std::string(FanoutKindName(options.fanout)) +
                      "' unavailable: " + why);
  }
  auto listener = ListenTcp(options.bind_address, options.port);
  if (!listener) return Unexpected(listener.error());

  std::unique_ptr<PushSender> sender(new PushSender());
  sender->port_ = listener->port;
  sender->loop_ = std::make_unique<Loop>(std::move(source), std::move(options), std::move(log),
                                         std::move(listener->fd), std::move(*backend),
                                         std::move(files), std::move(*anchor));
  std::string error;
  if (!sender->loop_->Init(&error)) return Unexpected(error);
  sender->thread_ = std::thread([loop = sender->loop_.get()] {
    proto::NameThisThread("push-send");
    loop->Run();
  });
  return sender;
}

PushSender::~PushSender() {
  if (loop_) loop_->RequestStop();
  if (thread_.joinable()) thread_.join();
}

std::string_view PushSender::backend_name() const { return loop_->backend_name(); }
void PushSender::SourceHas(std::uint32_t piece) { loop_->SourceHas(piece); }
void PushSender::Relay(const proto::Piece& chunk, std::string from) {
  loop_->Relay(chunk, std::move(from));
}
void PushSender::EndChain(std::string why) { loop_->EndChain(std::move(why)); }
PushSenderStats PushSender::stats() const { return loop_->stats(); }

}  // namespace swarmcast::push
