#include "node/push/push_download.h"

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
  auto alive = d->alive_;
  PushDownload* self = d.get();
  auto post = d->hooks_.post;
  options.on_subscribed = [post, alive, self] {
    post([alive, self] {
      if (*alive) self->Settle();
    });
  };
  auto receiver = PushReceiver::Start(
      std::move(options), std::move(identity), have,
      [post, alive, self](std::uint32_t piece, std::vector<char> data) {
        post([alive, self, piece, data = std::move(data)]() mutable {
          if (*alive) self->OnPiece(piece, std::move(data));
        });
      },
      [post, alive, self](const std::string& why) {
        post([alive, self, why] {
          if (!*alive || !self->receiver_) return;
          self->end_reason_ = why;
          self->hooks_.log.Info("push: channel ended: " + why);
          self->Settle();
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

void PushDownload::OnPiece(std::uint32_t piece, std::vector<char> data) {
  if (!receiver_) return;
  pushed_.insert(piece);
  ++pieces_pushed_;
  hooks_.add_piece(piece, std::move(data));
}

void PushDownload::OnPieceVerified(std::uint32_t piece) {
  pushed_.erase(piece);
  if (receiver_) receiver_->NotifyHave(piece);
}

void PushDownload::OnHashFailed(std::uint32_t piece) {
  if (pushed_.erase(piece) == 0) return;  // came from a peer: not ours to judge
  ++hash_failures_;
  hooks_.log.Warning("push: piece " + std::to_string(piece) +
                     " from the seed failed its hash check");
  if (hash_failures_ >= kMaxPushHashFailures) {
    Stop(std::to_string(hash_failures_) + " pushed pieces failed their hash check");
  }
}

void PushDownload::Stop(const std::string& why) {
  if (!receiver_) return;
  if (end_reason_.empty()) end_reason_ = why;
  hooks_.log.Info("push: unsubscribing: " + why);
  Settle();
  *alive_ = false;  // drop pieces still queued for the control thread
  receiver_.reset();
  alive_ = std::make_shared<bool>(true);
}

}  // namespace swarmcast::push
