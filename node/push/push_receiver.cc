#include "node/push/push_receiver.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "proto/thread_name.h"

namespace swarmcast::push {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxLowWaterBytes = 128 << 10;
constexpr auto kExpireEvery = std::chrono::seconds(1);

proto::Bye ByeFor(proto::ByeReason reason, std::string text) {
  return proto::Bye{static_cast<std::uint16_t>(reason), std::move(text)};
}

}  // namespace

Result<std::unique_ptr<PushReceiver>, std::string> PushReceiver::Start(
    PushReceiverOptions options, PushIdentity identity, const std::vector<bool>& have,
    OnPiece on_piece, OnEnd on_end) {
  if (!identity.layout) return Unexpected(std::string("push: no content layout"));
  if (options.token.size() > proto::kMaxHelloTokenLength) {
    return Unexpected("push: the token must be at most " +
                      std::to_string(proto::kMaxHelloTokenLength) + " bytes");
  }
  auto socket = ConnectTcp(options.endpoint, options.connect_timeout_ms, options.source_address);
  if (!socket) return Unexpected(socket.error());
  std::unique_ptr<PushReceiver> r(new PushReceiver());
  r->socket_ = std::move(*socket);
  r->wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!r->wake_) return Unexpected(std::string("push: eventfd: ") + std::strerror(errno));
  ::fcntl(r->socket_.get(), F_SETFL, ::fcntl(r->socket_.get(), F_GETFL) | O_NONBLOCK);
  // What a subscriber sends are small frames its sender acts on (HAVE
  // above all: a forwarder that has not heard it pushes the piece anyway).
  // Nagle would hold each one until the last is acknowledged, and that
  // ACK queues behind whatever the sender pushes on the same link: in a
  // chain of two, the old head's stale pushes then filled the new head's
  // downlink (30 MiB of a 64 MiB file, measured, 1.5x the limit).
  const int one = 1;
  ::setsockopt(r->socket_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const proto::Geometry g = identity.geometry();
  r->options_ = std::move(options);
  r->identity_ = std::move(identity);
  r->on_piece_ = std::move(on_piece);
  r->on_end_ = std::move(on_end);
  r->decoder_ = proto::PushFrameDecoder(proto::FrameLimits{}, g);
  r->assembler_ = std::make_unique<PieceAssembler>(r->identity_.layout);
  // Two pieces at least, so that one can be assembled while the last is
  // being written.
  r->budget_ = std::max<std::uint64_t>(r->options_.budget, 2 * std::uint64_t{g.piece_length});

  proto::Hello hello;
  hello.hash_kind = r->identity_.hash_kind;
  hello.info_hash = r->identity_.info_hash;
  hello.peer_id = r->identity_.peer_id;
  hello.geometry = g;
  hello.token = r->options_.token;
  hello.bitfield.assign(proto::BitfieldSize(g.piece_count), 0);
  {
    MutexLock lock(r->mutex_);
    r->rate_ = TokenBucket(r->options_.max_rate);
    r->have_.assign(g.piece_count, false);
    for (std::uint32_t p = 0; p < g.piece_count && p < have.size(); ++p) {
      if (!have[p]) continue;
      hello.bitfield[p / 8] |= static_cast<std::uint8_t>(0x80 >> (p % 8));
      r->have_[p] = true;
    }
  }
  r->QueueFrame(hello);
  r->thread_ = std::thread([raw = r.get()] {
    proto::NameThisThread("push-recv");
    raw->Run();
  });
  return r;
}

PushReceiver::~PushReceiver() {
  QueueFrame(ByeFor(proto::ByeReason::kNormal, "done"));
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
}

void PushReceiver::Wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
}

void PushReceiver::QueueFrame(const proto::Message& m) {
  std::vector<std::uint8_t> frame(proto::EncodedSize(m));
  if (!proto::EncodeMessage(m, frame, &identity_.geometry()).ok()) return;
  MutexLock lock(mutex_);
  outbox_.insert(outbox_.end(), frame.begin(), frame.end());
  const bool have = std::holds_alternative<proto::Have>(m);
  const bool batchable = have && options_.have_batch > 1 && have_queued_;
  have_queued_ = have_queued_ || have;
  if (!batchable) {
    batched_haves_ = 0;  // goes out now, and what waited with it
  } else if (batched_haves_++ == 0) {
    batch_until_ = Clock::now() + options_.have_batch_delay;
  }
}

std::chrono::milliseconds PushReceiver::OutboxHold(Clock::time_point now) const {
  static const std::size_t kHaveBytes = proto::EncodedSize(proto::Message(proto::Have{}));
  if (batched_haves_ == 0 || batched_haves_ >= options_.have_batch || now >= batch_until_) {
    return std::chrono::milliseconds(0);
  }
  // The rest of a frame the socket took only in part goes on at once.
  if (outbox_.size() > batched_haves_ * kHaveBytes) return std::chrono::milliseconds(0);
  // Rounded up: a poll that wakes a little early would find it still held.
  return std::chrono::ceil<std::chrono::milliseconds>(batch_until_ - now);
}

void PushReceiver::NotifyHave(std::uint32_t piece) {
  if (piece >= identity_.geometry().piece_count) return;
  QueueFrame(proto::Have{piece});
  {
    MutexLock lock(mutex_);
    have_[piece] = true;
  }
  Wake();
}

void PushReceiver::NotifyFetching(std::uint32_t piece) {
  if (piece >= identity_.geometry().piece_count) return;
  {
    MutexLock lock(mutex_);
    if (have_[piece]) return;
  }
  QueueFrame(proto::Fetching{piece});
  Wake();
}

void PushReceiver::SendListen(std::uint16_t port) {
  if (port == 0) return;
  QueueFrame(proto::Listen{port});
  Wake();
}

void PushReceiver::Release(std::uint64_t bytes) {
  std::uint64_t held = held_bytes_.load();
  // Never below zero, whatever a caller gives back.
  while (!held_bytes_.compare_exchange_weak(held, held - std::min(held, bytes))) {
  }
  Wake();
}

void PushReceiver::ChargeRate(std::int64_t bytes) {
  MutexLock lock(mutex_);
  rate_.Take(bytes);
}

PushReceiverStats PushReceiver::stats() const {
  return {pieces_.load(), payload_bytes_.load(), held_bytes_.load(), peak_held_bytes_.load(),
          budget_,        expired_pieces_.load()};
}

// Only the receive thread adds, so checking and then adding cannot race
// with another reservation; a Release() in between only makes more room.
bool PushReceiver::Reserve(std::uint64_t bytes) {
  const std::uint64_t held = held_bytes_.load();
  if (held > 0 && held + bytes > budget_) return false;
  const std::uint64_t now = held_bytes_.fetch_add(bytes) + bytes;
  if (now > peak_held_bytes_.load()) peak_held_bytes_.store(now);
  return true;
}

// Writes as much of the outbox as the socket takes now.
bool PushReceiver::Flush(std::string* why) {
  MutexLock lock(mutex_);
  if (OutboxHold(Clock::now()).count() > 0) return true;
  batched_haves_ = 0;
  std::size_t sent = 0;
  while (sent < outbox_.size()) {
    const ssize_t n = ::send(socket_.get(), outbox_.data() + sent, outbox_.size() - sent,
                             MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      *why = std::string("send to seed failed: ") + std::strerror(errno);
      return false;
    }
    sent += static_cast<std::size_t>(n);
  }
  outbox_.erase(outbox_.begin(), outbox_.begin() + static_cast<std::ptrdiff_t>(sent));
  return true;
}

bool PushReceiver::OnMessage(proto::Message& m, std::string* why) {
  if (auto* hello = std::get_if<proto::Hello>(&m)) {
    if (hello->hash_kind != identity_.hash_kind || hello->info_hash != identity_.info_hash) {
      *why = "the seed's HELLO names another info-hash";
      QueueFrame(ByeFor(proto::ByeReason::kInfoHashMismatch, "wrong info-hash"));
      return false;
    }
    hello_ok_ = true;
    if (options_.on_subscribed) options_.on_subscribed();
    return true;
  }
  if (auto* bye = std::get_if<proto::Bye>(&m)) {
    *why = "the seed said BYE (" + std::to_string(bye->reason) + "): " + bye->text;
    return false;
  }
  if (!hello_ok_) {
    *why = "the seed sent data before its HELLO";
    return false;
  }
  if (auto* peers = std::get_if<proto::Peers>(&m)) {
    std::vector<std::string> endpoints;
    for (const proto::PeerEndpoint& e : peers->peers) {
      const std::string ip = AddressText(e.address);
      endpoints.push_back(e.address.size() == 16 ? "[" + ip + "]:" + std::to_string(e.port)
                                                 : ip + ":" + std::to_string(e.port));
    }
    if (options_.on_peers) options_.on_peers(std::move(endpoints));
    return true;
  }
  if (std::holds_alternative<proto::Listen>(m) || std::holds_alternative<proto::Fetching>(m)) {
    const char* name = std::holds_alternative<proto::Listen>(m) ? "LISTEN" : "FETCHING";
    *why = std::string("the seed sent ") + name + ", which only a subscriber sends";
    QueueFrame(ByeFor(proto::ByeReason::kProtocolError, std::string("unexpected ") + name));
    return false;
  }
  auto* chunk = std::get_if<proto::Piece>(&m);
  if (!chunk) return true;  // HAVE from a seed carries nothing new
  payload_bytes_ += chunk->payload.size();
  switch (OnChunk(*chunk, why)) {
    case ChunkOutcome::kTaken:
      return true;
    case ChunkOutcome::kNoRoom:
      held_ = HeldChunk{chunk->piece,
                        chunk->offset,
                        {chunk->payload.begin(), chunk->payload.end()},
                        chunk->forward};
      return true;
    case ChunkOutcome::kRefused:
      break;
  }
  return false;
}

PushReceiver::ChunkOutcome PushReceiver::OnChunk(const proto::Piece& chunk, std::string* why) {
  bool had;
  {
    MutexLock lock(mutex_);
    had = have_[chunk.piece];
  }
  if (had) {  // verified meanwhile by another path: drop it, and what came of it
    Release(assembler_->Drop(chunk.piece));
    return ChunkOutcome::kTaken;
  }
  const bool starts = assembler_->Starts(chunk.piece);
  const std::uint32_t room = assembler_->piece_bytes(chunk.piece);
  if (starts && !Reserve(room)) return ChunkOutcome::kNoRoom;
  auto added = assembler_->Add(chunk, Clock::now());
  if (!added) {
    if (starts) Release(room);
    *why = "the seed sent a bad chunk of piece " + std::to_string(chunk.piece) + ": " +
           added.error().message();
    QueueFrame(ByeFor(proto::ByeReason::kProtocolError, added.error().message()));
    return ChunkOutcome::kRefused;
  }
  if (options_.on_chunk) options_.on_chunk(chunk);
  if (*added) {
    ++pieces_;
    on_piece_((*added)->piece, std::move((*added)->data), (*added)->forward);
  }
  return ChunkOutcome::kTaken;
}

bool PushReceiver::Drain(std::string* why) {
  if (held_) {
    const proto::Piece chunk{held_->piece, held_->offset, held_->payload, held_->forward};
    const ChunkOutcome outcome = OnChunk(chunk, why);
    if (outcome == ChunkOutcome::kNoRoom) return true;
    held_.reset();
    if (outcome == ChunkOutcome::kRefused) return false;
  }
  while (!held_) {
    auto next = decoder_.Next();
    if (std::holds_alternative<proto::NeedMore>(next)) return true;
    if (auto* ec = std::get_if<std::error_code>(&next)) {
      *why = "bad frame from the seed: " + ec->message();
      QueueFrame(ByeFor(proto::ByeReason::kProtocolError, ec->message()));
      return false;
    }
    if (!OnMessage(std::get<proto::Message>(next), why)) return false;
  }
  return true;
}

void PushReceiver::Run() {
  std::string why;
  auto last_input = Clock::now();
  auto next_expiry = last_input + kExpireEvery;
  int low_water = 1;
  while (true) {
    {
      MutexLock lock(mutex_);
      if (stop_) why = "stopped";
    }
    if (!why.empty()) break;
    if (!Flush(&why)) break;
    if (!Drain(&why)) break;
    auto now = Clock::now();
    if (now >= next_expiry) {
      next_expiry = now + kExpireEvery;
      if (const std::uint64_t freed = assembler_->Expire(now - options_.partial_timeout)) {
        ++expired_pieces_;
        Release(freed);
      }
    }
    std::int64_t allowance;
    std::chrono::milliseconds rate_wait;
    bool want_write;
    std::chrono::milliseconds hold{0};
    {
      MutexLock lock(mutex_);
      allowance = rate_.Available(now);
      rate_wait = rate_.Wait();
      hold = OutboxHold(now);
      want_write = !outbox_.empty() && hold.count() == 0;
    }
    const bool can_read = !held_ && allowance > 0;
    // Time spent waiting for room or for the rate limit is not the seed's
    // silence.
    if (!can_read) last_input = now;
    int timeout_ms = 1000;
    if (hold.count() > 0) {
      timeout_ms = static_cast<int>(std::min<std::int64_t>(timeout_ms, hold.count()));
    }
    if (!held_ && allowance <= 0) {
      timeout_ms = static_cast<int>(std::min<std::int64_t>(timeout_ms, rate_wait.count()));
    }
    if (can_read) {
      // Wake up only once the frame in progress can be completed, not for
      // every few packets: a 64 KiB chunk then costs one or two poll/recv
      // rounds instead of dozens. Bounded, since the kernel holds at most
      // half the receive buffer, and by what the rate limit allows.
      const auto cap = static_cast<std::size_t>(
          std::min<std::int64_t>(allowance, static_cast<std::int64_t>(kMaxLowWaterBytes)));
      const int want = static_cast<int>(std::clamp<std::size_t>(decoder_.bytes_needed(), 1, cap));
      if (want != low_water &&
          ::setsockopt(socket_.get(), SOL_SOCKET, SO_RCVLOWAT, &want, sizeof want) == 0) {
        low_water = want;
      }
    }
    // While it may not read, the socket is left out of the poll unless
    // there is something to send: a reset connection would otherwise
    // report POLLHUP at once, again and again.
    pollfd fds[2] = {{can_read || want_write ? socket_.get() : -1,
                      static_cast<short>((can_read ? POLLIN : 0) | (want_write ? POLLOUT : 0)), 0},
                     {wake_.get(), POLLIN, 0}};
    if (::poll(fds, 2, timeout_ms) < 0 && errno != EINTR) {
      why = std::string("poll: ") + std::strerror(errno);
      break;
    }
    if (fds[1].revents & POLLIN) {
      std::uint64_t drained;
      [[maybe_unused]] auto n = ::read(wake_.get(), &drained, sizeof drained);
    }
    now = Clock::now();
    if (can_read && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      auto region =
          decoder_.PrepareWrite(std::max<std::size_t>(decoder_.bytes_needed(), 256 << 10));
      const auto n =
          ::recv(socket_.get(), region.data(),
                 std::min<std::size_t>(region.size(), static_cast<std::size_t>(allowance)), 0);
      if (n == 0) {
        decoder_.Commit(0);
        why = "the seed closed the connection";
        break;
      }
      if (n < 0) {
        decoder_.Commit(0);
        if (errno != EAGAIN && errno != EINTR) {
          why = std::string("read from seed failed: ") + std::strerror(errno);
          break;
        }
        continue;
      }
      decoder_.Commit(static_cast<std::size_t>(n));
      {
        MutexLock lock(mutex_);
        rate_.Take(n);
      }
      last_input = now;
    } else if (can_read && options_.idle_timeout.count() > 0 &&
               now - last_input > options_.idle_timeout) {
      why = "no data from the seed for " + std::to_string(options_.idle_timeout.count()) + " ms";
      break;
    }
  }
  std::string ignored;
  Flush(&ignored);  // best effort: our BYE, if any
  socket_.reset();
  held_.reset();
  Release(assembler_->Clear());
  if (on_end_) on_end_(why);
}

}  // namespace swarmcast::push
