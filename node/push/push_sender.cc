#include "node/push/push_sender.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "node/push/push_scheduler.h"
#include "node/push/tcp.h"

namespace swarmcast::push {

using Clock = std::chrono::steady_clock;

// All sender state; touched only by the push thread, except `stats_`
// (under stats_mutex_) and `stop_fd_` (an eventfd, written by ~PushSender).
class PushSender::Loop {
 public:
  Loop(PushSource source, PushSenderOptions options, proto::Logger log, UniqueFd file,
       UniqueFd listener, std::unique_ptr<FanoutBackend> backend)
      : source_(std::move(source)),
        options_(std::move(options)),
        log_(std::move(log)),
        file_(std::move(file)),
        listener_(std::move(listener)),
        backend_(std::move(backend)),
        scheduler_(source_.geometry.piece_count) {}

  bool Init(std::string* error) {
    epoll_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
    stop_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!epoll_ || !stop_) {
      *error = std::string("push: epoll/eventfd: ") + std::strerror(errno);
      return false;
    }
    Watch(listener_.get(), kListenerTag, EPOLLIN);
    Watch(stop_.get(), kStopTag, EPOLLIN);
    // The scan reads the file front to back; tell the kernel to read ahead.
    ::posix_fadvise(file_.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    return true;
  }

  void Run();
  void RequestStop() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(stop_.get(), &one, sizeof one);
  }
  std::string_view backend_name() const { return backend_->name(); }
  PushSenderStats stats() const {
    std::lock_guard lock(stats_mutex_);
    return stats_;
  }

 private:
  static constexpr std::uint64_t kListenerTag = ~0ull;
  static constexpr std::uint64_t kStopTag = ~0ull - 1;
  static constexpr std::uint32_t kReadAheadPieces = 4;

  // One frame on its way to one subscriber: a PIECE (header + file range)
  // or a control frame (header only, no payload).
  struct Job {
    bool is_piece = false;
    PieceIndex piece = 0;
    std::vector<std::uint8_t> header;
    std::uint64_t file_offset = 0;
    std::uint32_t length = 0;
    FanoutTarget target;

    FanoutJob fanout(int file_fd) const {
      return FanoutJob{file_fd, file_offset, length,
                       std::as_bytes(std::span(header.data(), header.size()))};
    }
  };

  struct Subscriber {
    UniqueFd fd;
    proto::PushFrameDecoder decoder;
    bool subscribed = false;
    bool closing = false;  // drop once the queued control frames are out
    bool want_write = false;
    std::string address;  // the peer's numeric IP
    std::optional<Job> job;
    std::vector<std::vector<std::uint8_t>> control;  // queued control frames
    Clock::time_point last_progress = Clock::now();
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
  void Read(SubscriberId id, Subscriber& s);
  void OnMessage(SubscriberId id, Subscriber& s, proto::Message& m);
  void Drive(SubscriberId id, Subscriber& s);
  void ScheduleRound();
  void FinishJob(SubscriberId id, Subscriber& s);
  void CheckStalls();
  bool HasCredit();
  void Bye(SubscriberId id, Subscriber& s, proto::ByeReason reason, std::string text);
  // Why a subscriber leaves: it left on its own, or the seed dropped it
  // (counted in PushSenderStats::dropped).
  enum class LeaveKind { kLeft, kDropped };
  void Drop(SubscriberId id, LeaveKind kind, const std::string& why);
  void UpdateStats(const std::function<void(PushSenderStats&)>& f) {
    std::lock_guard lock(stats_mutex_);
    f(stats_);
  }

  PushSource source_;
  PushSenderOptions options_;
  proto::Logger log_;
  UniqueFd file_;
  UniqueFd listener_;
  UniqueFd epoll_;
  UniqueFd stop_;
  std::unique_ptr<FanoutBackend> backend_;
  PushScheduler scheduler_;
  std::map<SubscriberId, Subscriber> subscribers_;
  std::vector<SubscriberId> doomed_;  // dropped after the current round
  SubscriberId next_id_ = 1;
  bool stopping_ = false;
  // --max-upload-rate pacing: bytes we may still send (negative: in debt,
  // because a whole batch is charged when it starts).
  double credit_ = 0;
  Clock::time_point credit_at_ = Clock::now();
  int wait_ms_ = 500;  // the next epoll_wait timeout

  mutable std::mutex stats_mutex_;
  PushSenderStats stats_;
};

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
      } else if (tag == kListenerTag) {
        Accept();
      } else if (auto it = subscribers_.find(static_cast<SubscriberId>(tag));
                 it != subscribers_.end()) {
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) Read(it->first, it->second);
        if (events[i].events & EPOLLOUT) Drive(it->first, it->second);
      }
    }
    ScheduleRound();
    CheckStalls();
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
    if (!fd) return;  // EAGAIN, or a transient accept error: try next round
    const SubscriberId id = next_id_++;
    Subscriber& s = subscribers_[id];
    s.fd = std::move(fd);
    s.address = NumericAddress(peer);
    s.decoder = proto::PushFrameDecoder(proto::FrameLimits{}, source_.geometry);
    Watch(s.fd.get(), id, EPOLLIN);
    if (subscribers_.size() > options_.max_subscribers) {
      Bye(id, s, proto::ByeReason::kNormal, "subscriber limit reached");
      Drive(id, s);
    }
  }
}

void PushSender::Loop::Read(SubscriberId id, Subscriber& s) {
  while (true) {
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
    while (true) {
      auto next = s.decoder.Next();
      if (std::holds_alternative<proto::NeedMore>(next)) break;
      if (auto* ec = std::get_if<std::error_code>(&next)) {
        Bye(id, s, proto::ByeReason::kProtocolError, ec->message());
        log_.Info("push: subscriber " + std::to_string(id) + ": bad frame: " + ec->message());
        Drive(id, s);
        return;
      }
      OnMessage(id, s, std::get<proto::Message>(next));
      if (s.closing) return;
    }
  }
}

void PushSender::Loop::OnMessage(SubscriberId id, Subscriber& s, proto::Message& m) {
  if (auto* hello = std::get_if<proto::Hello>(&m)) {
    if (hello->hash_kind != source_.hash_kind || hello->info_hash != source_.info_hash) {
      Bye(id, s, proto::ByeReason::kInfoHashMismatch, "not the torrent this seed pushes");
      log_.Info("push: subscriber " + std::to_string(id) + " asked for another torrent");
      return Drive(id, s);
    }
    std::vector<bool> have(source_.geometry.piece_count);
    for (PieceIndex p = 0; p < have.size(); ++p) {
      have[p] = (hello->bitfield[p / 8] >> (7 - p % 8)) & 1;
    }
    scheduler_.AddSubscriber(id, have);
    s.subscribed = true;
    if (options_.addresses) options_.addresses->Add(s.address);
    proto::Hello mine;
    mine.hash_kind = source_.hash_kind;
    mine.info_hash = source_.info_hash;
    mine.peer_id = source_.peer_id;
    mine.geometry = source_.geometry;
    mine.bitfield.assign(proto::BitfieldSize(source_.geometry.piece_count), 0xff);
    if (const auto spare = source_.geometry.piece_count % 8; spare != 0) {
      mine.bitfield.back() = static_cast<std::uint8_t>(0xff << (8 - spare));
    }
    std::vector<std::uint8_t> frame(proto::EncodedSize(mine));
    if (proto::EncodeHello(mine, frame).ok()) s.control.push_back(std::move(frame));
    UpdateStats([](PushSenderStats& st) { ++st.subscribers; });
    log_.Info("push: subscriber " + std::to_string(id) + " joined");
    return Drive(id, s);
  }
  if (!s.subscribed) {
    Bye(id, s, proto::ByeReason::kProtocolError, "HELLO must come first");
    return Drive(id, s);
  }
  if (auto* have = std::get_if<proto::Have>(&m)) {
    scheduler_.OnHave(id, have->piece);
  } else if (std::holds_alternative<proto::Bye>(m)) {
    Drop(id, LeaveKind::kLeft, "said BYE");
  } else {  // a PIECE travels seed -> peer only
    Bye(id, s, proto::ByeReason::kProtocolError, "unexpected PIECE from a subscriber");
    Drive(id, s);
  }
}

// Writes what this subscriber has pending: its current job, then queued
// control frames. Returns with write interest on when the socket is full.
void PushSender::Loop::Drive(SubscriberId id, Subscriber& s) {
  if (!s.fd) return;
  while (true) {
    if (s.job) {
      const FanoutJob fj = s.job->fanout(file_.get());
      const std::uint64_t before = s.job->target.progress;
      backend_->Send(fj, std::span(&s.job->target, 1));
      if (s.job->target.progress != before) s.last_progress = Clock::now();
      if (s.job->target.error) {
        return Drop(id, LeaveKind::kDropped, "send failed: " + s.job->target.error.message());
      }
      if (!s.job->target.finished(fj)) return SetWriteInterest(id, s, true);
      FinishJob(id, s);
      continue;
    }
    if (!s.control.empty()) {
      Job job;
      job.header = std::move(s.control.front());
      job.target.socket_fd = s.fd.get();
      s.control.erase(s.control.begin());
      s.job = std::move(job);
      continue;
    }
    SetWriteInterest(id, s, false);
    if (s.closing) Drop(id, LeaveKind::kDropped, "closed by the seed");
    return;
  }
}

void PushSender::Loop::FinishJob(SubscriberId id, Subscriber& s) {
  if (s.job->is_piece) {
    scheduler_.OnSent(id, s.job->piece);
    const std::uint32_t length = s.job->length;
    UpdateStats([length](PushSenderStats& st) {
      ++st.pieces_sent;
      st.payload_bytes += length;
    });
  }
  s.job.reset();
}

// Hands the scheduler every subscriber with nothing pending and sends the
// batches it returns, one fan-out call per batch.
void PushSender::Loop::ScheduleRound() {
  std::vector<SubscriberId> ready;
  for (auto& [id, s] : subscribers_) {
    if (s.subscribed && !s.closing && !s.job && s.control.empty() && s.fd) ready.push_back(id);
  }
  // Bounded, so that a fast loopback cannot starve reads and accepts.
  for (int budget = 256; budget > 0 && !ready.empty() && HasCredit(); --budget) {
    auto batch = scheduler_.NextBatch(ready);
    if (!batch) return;
    const proto::PieceHeader ph{batch->piece, 0, proto::PieceSize(source_.geometry, batch->piece)};
    std::vector<std::uint8_t> header(proto::kPieceHeaderSize);
    if (!proto::EncodePieceHeader(ph, header, &source_.geometry).ok()) return;
    const FanoutJob fj{file_.get(),
                       static_cast<std::uint64_t>(batch->piece) * source_.geometry.piece_length,
                       ph.length, std::as_bytes(std::span(header.data(), header.size()))};
    // Start reading the pieces the scan reaches next while this one goes
    // out, so the disk works in parallel with the sockets.
    ::posix_fadvise(file_.get(), static_cast<off_t>(fj.file_offset + source_.geometry.piece_length),
                    static_cast<off_t>(kReadAheadPieces) * source_.geometry.piece_length,
                    POSIX_FADV_WILLNEED);
    std::vector<FanoutTarget> targets;
    for (SubscriberId id : batch->targets) targets.push_back({subscribers_[id].fd.get(), 0, {}});
    backend_->Send(fj, targets);
    credit_ -= static_cast<double>(ph.length) * static_cast<double>(targets.size());
    UpdateStats([n = targets.size()](PushSenderStats& st) {
      ++st.fanout_calls;
      st.fanout_targets += n;
    });
    for (std::size_t i = 0; i < targets.size(); ++i) {
      const SubscriberId id = batch->targets[i];
      Subscriber& s = subscribers_[id];
      std::erase(ready, id);
      s.job = Job{true, batch->piece, header, fj.file_offset, ph.length, targets[i]};
      if (targets[i].progress > 0) s.last_progress = Clock::now();
      if (targets[i].error) {
        Drop(id, LeaveKind::kDropped, "send failed: " + targets[i].error.message());
      } else if (targets[i].finished(fj)) {
        FinishJob(id, s);
        ready.push_back(id);  // room for another piece this round
      } else {
        SetWriteInterest(id, s, true);
      }
    }
  }
}

// Whether the rate limit lets a new batch start now. If not, the loop
// wakes up when it will.
bool PushSender::Loop::HasCredit() {
  if (options_.max_rate <= 0) return true;
  const auto now = Clock::now();
  const double rate = static_cast<double>(options_.max_rate);
  credit_ = std::min(credit_ + rate * std::chrono::duration<double>(now - credit_at_).count(),
                     rate / 10);  // at most 100 ms of burst
  credit_at_ = now;
  if (credit_ > 0) return true;
  wait_ms_ = std::clamp(static_cast<int>(-credit_ * 1000 / rate) + 1, 1, 500);
  return false;
}

void PushSender::Loop::CheckStalls() {
  const auto now = Clock::now();
  for (auto& [id, s] : subscribers_) {
    if (s.fd && s.job && now - s.last_progress > options_.stall_timeout) {
      // Its socket is full, so a BYE could not get through: just close.
      log_.Info("push: subscriber " + std::to_string(id) + " made no progress for " +
                std::to_string(options_.stall_timeout.count()) + " ms, dropped");
      Drop(id, LeaveKind::kDropped, "too slow");
    }
  }
}

// Queues a BYE and closes once it is out. A BYE cannot cut into a frame
// already partly sent; then the connection just closes.
void PushSender::Loop::Bye(SubscriberId id, Subscriber& s, proto::ByeReason reason,
                           std::string text) {
  s.closing = true;
  if (s.job && s.job->target.progress > 0) return;
  if (s.job && s.job->is_piece) {
    scheduler_.OnSendFailed(id, s.job->piece);
  } else if (s.job) {  // a control frame not yet started: keep it first
    s.control.insert(s.control.begin(), std::move(s.job->header));
  }
  s.job.reset();
  proto::Bye bye{static_cast<std::uint16_t>(reason), std::move(text)};
  std::vector<std::uint8_t> frame(proto::EncodedSize(bye));
  if (proto::EncodeBye(bye, frame).ok()) s.control.push_back(std::move(frame));
}

void PushSender::Loop::Drop(SubscriberId id, LeaveKind kind, const std::string& why) {
  auto it = subscribers_.find(id);
  if (it == subscribers_.end() || !it->second.fd) return;
  Subscriber& s = it->second;
  if (s.job && s.job->is_piece) scheduler_.OnSendFailed(id, s.job->piece);
  if (s.subscribed) {
    if (options_.addresses) options_.addresses->Remove(s.address);
    UpdateStats([kind](PushSenderStats& st) {
      --st.subscribers;
      if (kind == LeaveKind::kDropped) ++st.dropped;
    });
  }
  scheduler_.RemoveSubscriber(id);
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, s.fd.get(), nullptr);
  s.fd.reset();
  s.job.reset();
  s.subscribed = false;
  doomed_.push_back(id);
  log_.Info("push: subscriber " + std::to_string(id) + " left: " + why);
}

Result<std::unique_ptr<PushSender>, std::string> PushSender::Start(PushSource source,
                                                                   PushSenderOptions options,
                                                                   proto::Logger log) {
  if (auto ec = proto::ValidateGeometry(source.geometry)) {
    return Unexpected("push: bad geometry: " + ec.message());
  }
  if (source.info_hash.size() != proto::InfoHashSize(source.hash_kind)) {
    return Unexpected(std::string("push: info-hash size does not match its kind"));
  }
  UniqueFd file(::open(source.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return Unexpected("push: open " + source.path + ": " + std::strerror(errno));
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
  sender->loop_ =
      std::make_unique<Loop>(std::move(source), std::move(options), std::move(log), std::move(file),
                             std::move(listener->fd), std::move(*backend));
  std::string error;
  if (!sender->loop_->Init(&error)) return Unexpected(error);
  sender->thread_ = std::thread([loop = sender->loop_.get()] { loop->Run(); });
  return sender;
}

PushSender::~PushSender() {
  if (loop_) loop_->RequestStop();
  if (thread_.joinable()) thread_.join();
}

std::string_view PushSender::backend_name() const { return loop_->backend_name(); }
PushSenderStats PushSender::stats() const { return loop_->stats(); }

}  // namespace swarmcast::push
