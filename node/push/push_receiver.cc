#include "node/push/push_receiver.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace swarmcast::push {
namespace {

constexpr std::size_t kMaxLowWaterBytes = 128 << 10;

}  // namespace

Result<std::unique_ptr<PushReceiver>, std::string> PushReceiver::Start(
    PushReceiverOptions options, PushIdentity identity, const std::vector<bool>& have,
    OnPiece on_piece, OnEnd on_end) {
  if (auto ec = proto::ValidateGeometry(identity.geometry)) {
    return Unexpected("push: bad geometry: " + ec.message());
  }
  auto socket = ConnectTcp(options.endpoint, options.connect_timeout_ms, options.source_address);
  if (!socket) return Unexpected(socket.error());
  std::unique_ptr<PushReceiver> r(new PushReceiver());
  r->socket_ = std::move(*socket);
  r->wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!r->wake_) return Unexpected(std::string("push: eventfd: ") + std::strerror(errno));
  ::fcntl(r->socket_.get(), F_SETFL, ::fcntl(r->socket_.get(), F_GETFL) | O_NONBLOCK);
  r->options_ = std::move(options);
  r->identity_ = std::move(identity);
  r->on_piece_ = std::move(on_piece);
  r->on_end_ = std::move(on_end);
  r->decoder_ = proto::PushFrameDecoder(proto::FrameLimits{}, r->identity_.geometry);

  proto::Hello hello;
  hello.hash_kind = r->identity_.hash_kind;
  hello.info_hash = r->identity_.info_hash;
  hello.peer_id = r->identity_.peer_id;
  hello.geometry = r->identity_.geometry;
  hello.bitfield.assign(proto::BitfieldSize(hello.geometry.piece_count), 0);
  for (std::uint32_t p = 0; p < hello.geometry.piece_count && p < have.size(); ++p) {
    if (have[p]) hello.bitfield[p / 8] |= static_cast<std::uint8_t>(0x80 >> (p % 8));
  }
  r->QueueFrame(hello);
  r->thread_ = std::thread([raw = r.get()] { raw->Run(); });
  return r;
}

PushReceiver::~PushReceiver() {
  QueueFrame(proto::Bye{static_cast<std::uint16_t>(proto::ByeReason::kNormal), "done"});
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

void PushReceiver::QueueFrame(const proto::Message& m) {
  std::vector<std::uint8_t> frame(proto::EncodedSize(m));
  if (!proto::EncodeMessage(m, frame, &identity_.geometry).ok()) return;
  std::lock_guard lock(mutex_);
  outbox_.insert(outbox_.end(), frame.begin(), frame.end());
}

void PushReceiver::NotifyHave(std::uint32_t piece) {
  if (piece >= identity_.geometry.piece_count) return;
  QueueFrame(proto::Have{piece});
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
}

PushReceiverStats PushReceiver::stats() const { return {pieces_.load(), payload_bytes_.load()}; }

// Writes as much of the outbox as the socket takes now.
bool PushReceiver::Flush(std::string* why) {
  std::lock_guard lock(mutex_);
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
      QueueFrame(proto::Bye{static_cast<std::uint16_t>(proto::ByeReason::kInfoHashMismatch),
                            "wrong info-hash"});
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
  auto* piece = std::get_if<proto::Piece>(&m);
  if (!piece) return true;  // HAVE from a seed carries nothing new
  // Ranges of one piece arrive in order, one piece at a time.
  if (piece->offset == 0) {
    assembling_ = piece->piece;
    piece_.clear();
  } else if (piece->piece != assembling_ || piece->offset != piece_.size()) {
    *why = "the seed sent piece " + std::to_string(piece->piece) + " out of order";
    return false;
  }
  piece_.insert(piece_.end(), piece->payload.begin(), piece->payload.end());
  payload_bytes_ += piece->payload.size();
  if (piece_.size() == proto::PieceSize(identity_.geometry, assembling_)) {
    ++pieces_;
    on_piece_(assembling_, std::move(piece_));
    piece_ = {};
  }
  return true;
}

void PushReceiver::Run() {
  std::string why;
  auto last_input = std::chrono::steady_clock::now();
  int low_water = 1;
  while (true) {
    // Wake up only once the frame in progress can be completed, not for
    // every few packets: a 64 KiB piece then costs one or two poll/recv
    // rounds instead of dozens. Bounded, since the kernel holds at most
    // half the receive buffer.
    const int want =
        static_cast<int>(std::clamp<std::size_t>(decoder_.bytes_needed(), 1, kMaxLowWaterBytes));
    if (want != low_water &&
        ::setsockopt(socket_.get(), SOL_SOCKET, SO_RCVLOWAT, &want, sizeof want) == 0) {
      low_water = want;
    }
    {
      std::lock_guard lock(mutex_);
      if (stop_) why = "stopped";
    }
    if (!why.empty()) {
      std::string ignored;
      Flush(&ignored);  // best effort: our BYE
      break;
    }
    if (!Flush(&why)) break;
    bool want_write;
    {
      std::lock_guard lock(mutex_);
      want_write = !outbox_.empty();
    }
    pollfd fds[2] = {{socket_.get(), static_cast<short>(POLLIN | (want_write ? POLLOUT : 0)), 0},
                     {wake_.get(), POLLIN, 0}};
    if (::poll(fds, 2, 1000) < 0 && errno != EINTR) {
      why = std::string("poll: ") + std::strerror(errno);
      break;
    }
    if (fds[1].revents & POLLIN) {
      std::uint64_t drained;
      [[maybe_unused]] auto n = ::read(wake_.get(), &drained, sizeof drained);
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      auto region =
          decoder_.PrepareWrite(std::max<std::size_t>(decoder_.bytes_needed(), 256 << 10));
      const ssize_t n = ::recv(socket_.get(), region.data(), region.size(), 0);
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
      last_input = std::chrono::steady_clock::now();
      bool ok = true;
      while (ok) {
        auto next = decoder_.Next();
        if (std::holds_alternative<proto::NeedMore>(next)) break;
        if (auto* ec = std::get_if<std::error_code>(&next)) {
          why = "bad frame from the seed: " + ec->message();
          QueueFrame(proto::Bye{static_cast<std::uint16_t>(proto::ByeReason::kProtocolError),
                                ec->message()});
          ok = false;
          break;
        }
        ok = OnMessage(std::get<proto::Message>(next), &why);
      }
      if (!ok) {
        std::string ignored;
        Flush(&ignored);  // best effort: our BYE, if any
        break;
      }
    } else if (std::chrono::steady_clock::now() - last_input > options_.idle_timeout) {
      why = "no data from the seed for " + std::to_string(options_.idle_timeout.count()) + " ms";
      break;
    }
  }
  socket_.reset();
  if (on_end_) on_end_(why);
}

}  // namespace swarmcast::push
