#include "node/push/push_download.h"

#include <algorithm>
#include <utility>

namespace swarmcast::push {

PushDownload::PushDownload(Hooks hooks) : hooks_(std::move(hooks)) {}

PushDownload::~PushDownload() {
  *alive_ = false;
  receiver_.reset();  // joins the receive thread
}

Result<std::unique_ptr<PushDownload>, std::string> PushDownload::Start(
    PushReceiverOptions options, PushIdentity identity, const std::vector<bool>& have,
    Hooks hooks) {
  std::unique_ptr<PushDownload> d(new PushDownload(std::move(hooks)));
  d->verified_ = have;
  d->endpoint_ = options.endpoint;
  d->verified_.resize(identity.layout ? identity.geometry().piece_count : 0, false);
  auto alive = d->alive_;
  PushDownload* self = d.get();
  auto post = d->hooks_.post;
  if (d->hooks_.on_peers) {
    options.on_peers = [post, alive, self](std::vector<std::string> endpoints) {
      post([alive, self, endpoints = std::move(endpoints)]() mutable {
        if (*alive && self->hooks_.on_peers) self->hooks_.on_peers(std::move(endpoints));
      });
    };
  }
  options.on_subscribed = [post, alive, self] {
    post([alive, self] {
      if (*alive) self->Settle();
    });
  };
  auto receiver = PushReceiver::Start(
      std::move(options), std::move(identity), have,
      [post, alive, self](std::uint32_t piece, std::vector<char> data, bool forward) {
        post([alive, self, piece, forward, data = std::move(data)]() mutable {
          if (*alive) self->OnPiece(piece, std::move(data), forward);
        });
      },
      [post, alive, self](const std::string& why) {
        post([alive, self, why] {
          if (!*alive || !self->receiver_) return;
          self->end_reason_ = why;
          self->hooks_.log.Info("push: channel" + self->Tally(self->receiver_->stats()) +
                                " ended: " + why);
          self->Settle();
          if (self->hooks_.on_ended) std::exchange(self->hooks_.on_ended, nullptr)();
        });
      });
  if (!receiver) return Unexpected(receiver.error());
  d->receiver_ = std::move(*receiver);
  return d;
}

void PushDownload::Settle() {
  if (!hooks_.on_settled) return;
  auto settled = std::move(hooks_.on_settled);
  hooks_.on_settled = nullptr;
  settled();
}

void PushDownload::OnPiece(std::uint32_t piece, std::vector<char> data, bool forward) {
  if (!receiver_) return;
  if (verified_[piece] || pushed_.contains(piece)) {
    // Verified meanwhile by another path, or a copy is with libtorrent
    // already: libtorrent would drop this one without a word.
    receiver_->Release(data.size());
    return;
  }
  if (hooks_.claim && !hooks_.claim(piece)) {
    ++duplicates_;
    receiver_->Release(data.size());
    return;
  }
  pushed_[piece] = HandedOver{data.size(), Clock::now(), forward};
  ++pieces_pushed_;
  hooks_.add_piece(piece, std::move(data));
}

void PushDownload::Release(std::uint32_t piece) {
  auto it = pushed_.find(piece);
  if (it == pushed_.end()) return;
  if (receiver_) receiver_->Release(it->second.bytes);
  pushed_.erase(it);
}

PushDownload::VerifiedCopy PushDownload::OnPieceVerified(std::uint32_t piece) {
  if (piece >= verified_.size()) return {};
  verified_[piece] = true;
  VerifiedCopy copy;
  if (auto it = pushed_.find(piece); it != pushed_.end()) copy = {true, it->second.forward};
  Release(piece);
  if (receiver_) receiver_->NotifyHave(piece);
  return copy;
}

void PushDownload::SendListen(std::uint16_t port) {
  if (receiver_) receiver_->SendListen(port);
}

void PushDownload::OnPieceRequested(std::uint32_t piece) {
  if (!receiver_ || piece >= verified_.size() || verified_[piece] || pushed_.contains(piece))
    return;
  if (fetching_.empty()) fetching_.assign(verified_.size(), false);
  if (fetching_[piece]) return;
  fetching_[piece] = true;
  receiver_->NotifyFetching(piece);
}

void PushDownload::OnHashFailed(std::uint32_t piece) {
  if (!pushed_.contains(piece)) return;  // came from a peer: not ours to judge
  Release(piece);
  ++hash_failures_;
  hooks_.log.Warning("push: piece " + std::to_string(piece) +
                     " from the seed failed its hash check");
  if (hash_failures_ >= kMaxPushHashFailures) {
    Stop(std::to_string(hash_failures_) + " pushed pieces failed their hash check");
  }
}

void PushDownload::OnTick(std::int64_t wire_payload_bytes, Clock::time_point now) {
  if (!receiver_) return;
  if (wire_payload_bytes > wire_seen_) {
    receiver_->ChargeRate(wire_payload_bytes - wire_seen_);
    wire_seen_ = wire_payload_bytes;
  }
  std::vector<std::uint32_t> stale;
  for (const auto& [piece, h] : pushed_) {
    if (now - h.at >= kHandOverTimeout) stale.push_back(piece);
  }
  for (std::uint32_t piece : stale) {
    hooks_.log.Debug("push: no verdict on piece " + std::to_string(piece) +
                     " from libtorrent; releasing its room");
    Release(piece);
  }
}

std::string PushDownload::Tally(const PushReceiverStats& last) const {
  return " from " + endpoint_ + " (" + std::to_string(last.payload_bytes) +
         " bytes of pieces came on it; " + std::to_string(last.pieces) + " pieces whole, " +
         std::to_string(pieces_pushed_) + " of them used)";
}

std::uint64_t PushDownload::payload_bytes() const {
  return payload_before_ + (receiver_ ? receiver_->stats().payload_bytes : 0);
}

PushReceiverStats PushDownload::receiver_stats() const {
  return receiver_ ? receiver_->stats() : PushReceiverStats{};
}

std::uint64_t PushDownload::peak_held_bytes() const {
  return std::max(peak_before_, receiver_ ? receiver_->stats().peak_held_bytes : 0);
}

void PushDownload::Stop(const std::string& why) {
  if (!receiver_) return;
  if (end_reason_.empty()) end_reason_ = why;
  const PushReceiverStats last = receiver_->stats();
  hooks_.log.Info("push: unsubscribing" + Tally(last) + ": " + why);
  Settle();
  *alive_ = false;  // drop pieces still queued for the control thread
  receiver_.reset();
  payload_before_ += last.payload_bytes;
  peak_before_ = std::max(peak_before_, last.peak_held_bytes);
  pushed_.clear();
  alive_ = std::make_shared<bool>(true);
}

}  // namespace swarmcast::push
