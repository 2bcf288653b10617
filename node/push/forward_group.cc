#include "node/push/forward_group.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>

#include "node/push/chain_chunk.h"
#include "node/push/subscriber_addresses.h"
#include "proto/endpoint.h"

namespace swarmcast::push {
namespace {

// A forwarder may have nothing to send for a long time (this node holds
// all it has); its death shows as a closed connection, and a forwarder
// that hangs is dropped by the seed, which then reassigns its pieces.
constexpr auto kPeerIdleTimeout = std::chrono::seconds(120);
constexpr int kPeerConnectTimeoutMs = 2000;

}  // namespace

ForwardGroup::ForwardGroup(ForwardGroupOptions options, PushIdentity identity,
                           std::vector<bool> have, Hooks hooks)
    : options_(std::move(options)),
      identity_(std::move(identity)),
      hooks_(std::move(hooks)),
      verified_(std::move(have)) {
  verified_.resize(identity_.geometry().piece_count, false);
  claimed_ = verified_;
  missing_ = static_cast<std::uint32_t>(std::count(verified_.begin(), verified_.end(), false));
}

ForwardGroup::~ForwardGroup() { Stop(); }

bool ForwardGroup::Claim(std::uint32_t piece) {
  if (piece >= claimed_.size() || claimed_[piece]) return false;
  claimed_[piece] = true;
  return true;
}

void ForwardGroup::OnPeers(const std::vector<std::string>& endpoints) {
  if (stopped_ || missing_ == 0) return;
  // A chain link takes from the one node the seed names: a channel to a
  // link no longer before it would split that link's uplink in two.
  if (options_.chain) {
    for (auto& [endpoint, d] : peers_) {
      if (d && d->active() &&
          std::find(endpoints.begin(), endpoints.end(), endpoint) == endpoints.end()) {
        d->Stop("no longer the link before this node");
      }
    }
  }
  for (const std::string& endpoint : endpoints) {
    // Once per endpoint; a chain link again once the old channel stopped,
    // since the seed names it only when this node is to take from it.
    const bool known = std::any_of(peers_.begin(), peers_.end(), [&](const auto& p) {
      return p.first == endpoint && (!options_.chain || (p.second && p.second->active()));
    });
    if (known) continue;
    PushReceiverOptions o;
    o.endpoint = endpoint;
    o.source_address = options_.source_address;
    o.token = options_.token;
    o.budget = options_.peer_budget;
    o.max_rate = options_.max_rate;
    o.connect_timeout_ms = kPeerConnectTimeoutMs;
    o.idle_timeout = kPeerIdleTimeout;
    PushDownload::Hooks h;
    h.post = hooks_.post;
    h.add_piece = hooks_.add_piece;
    h.log = hooks_.log;
    auto parsed = proto::ParseEndpoint(endpoint);
    o.on_chunk = chunk_relay(parsed ? SubscriberAddresses::Normalize(parsed->host) : "");
    h.claim = [this](std::uint32_t piece) { return Claim(piece); };
    auto d = PushDownload::Start(o, identity_, verified_, std::move(h));
    if (!d) {
      hooks_.log.Info("push: cannot subscribe to forwarder " + endpoint + ": " + d.error());
      peers_.emplace_back(endpoint, nullptr);  // not again: the wire covers what it would have sent
      continue;
    }
    hooks_.log.Info("push: subscribed to forwarder " + endpoint);
    ++peer_channels_;
    peers_.emplace_back(endpoint, std::move(*d));
  }
}

void ForwardGroup::OnPieceVerified(std::uint32_t piece, bool to_forward) {
  if (piece >= verified_.size()) return;
  if (!verified_[piece]) {
    verified_[piece] = true;
    claimed_[piece] = true;
    --missing_;
  }
  for (auto& [endpoint, d] : peers_) {
    if (d) d->OnPieceVerified(piece);
  }
  if (to_forward || seed_gone_ || options_.chain) Forward(piece);
  if (missing_ == 0) StopPeerChannels("download complete");
}

void ForwardGroup::OnPieceRequested(std::uint32_t piece) {
  for (auto& [endpoint, d] : peers_) {
    if (d) d->OnPieceRequested(piece);
  }
}

bool ForwardGroup::SubscribedTo(std::string_view ip) const {
  for (const auto& [endpoint, d] : peers_) {
    auto parsed = proto::ParseEndpoint(endpoint);
    if (d && d->active() && parsed && SubscriberAddresses::Normalize(parsed->host) == ip) {
      return true;
    }
  }
  return false;
}

void ForwardGroup::OnSeedChannelEnded() {
  if (seed_gone_ || stopped_) return;
  seed_gone_ = true;
  for (std::uint32_t p = 0; p < verified_.size(); ++p) {
    if (verified_[p]) Forward(p);
  }
}

void ForwardGroup::Forward(std::uint32_t piece) {
  if (stopped_) return;
  if (!forwarder_ && !forwarder_failed_) {
    const auto chunks = identity_.layout->ChunksOf(piece);
    if (chunks.empty()) return;  // a piece of pad bytes only: wait for another
    StartForwarder(chunks.front().file);
  }
  if (forwarder_) forwarder_->SourceHas(piece);
}

void ForwardGroup::StartChainLink() {
  if (!options_.chain || forwarder_ || forwarder_failed_ || stopped_) return;
  // The forwarder keeps one content file open from the start; libtorrent
  // creates a file with its first write, so an empty one is made here
  // (libtorrent opens it without truncating). Without, the forwarder
  // starts with the first verified piece, and the chain's start waits
  // for one more round trip through the seed at every hop.
  const auto& files = identity_.layout->files();
  std::uint32_t first = 0;
  while (first < files.size() && (files[first].pad || files[first].size == 0)) ++first;
  if (first == files.size()) return;
  const std::filesystem::path path = options_.content_root / files[first].path;
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;  // it starts with the first piece, as without --chain
  ::close(fd);
  StartForwarder(first);
}

void ForwardGroup::OnHashFailed(std::uint32_t piece) {
  if (piece >= claimed_.size() || verified_[piece]) return;
  claimed_[piece] = false;  // the next copy, from any channel, may try
  for (auto& [endpoint, d] : peers_) {
    if (d) d->OnHashFailed(piece);
  }
}

void ForwardGroup::OnTick(std::int64_t wire_payload_bytes, std::uint64_t seed_payload_bytes) {
  const std::uint64_t peers = peer_payload_bytes();
  for (auto& [endpoint, d] : peers_) {
    if (!d) continue;
    const std::uint64_t others = seed_payload_bytes + peers - d->payload_bytes();
    d->OnTick(wire_payload_bytes + static_cast<std::int64_t>(others));
  }
}

std::uint64_t ForwardGroup::peer_payload_bytes() const {
  std::uint64_t n = 0;
  for (const auto& [endpoint, d] : peers_) {
    if (d) n += d->payload_bytes();
  }
  return n;
}

void ForwardGroup::StartForwarder(std::uint32_t anchor_file) {
  PushSource source;
  source.root = options_.content_root;
  source.layout = identity_.layout;
  source.hash_kind = identity_.hash_kind;
  source.info_hash = identity_.info_hash;
  source.peer_id = identity_.peer_id;
  PushSenderOptions o;
  o.bind_address = options_.bind_address;
  o.fanout = options_.fanout;
  o.forwarder = true;
  o.addresses = options_.addresses;
  o.anchor_file = anchor_file;
  // Until it relays its first chunk: a whole piece could cost every link
  // after it a piece's time to the end (node/push/chain_chunk.h).
  if (options_.chain) o.max_chunk = kMinChainChunk;
  if (!options_.token.empty()) o.tokens = {options_.token};
  auto sender = PushSender::Start(std::move(source), std::move(o), hooks_.log);
  if (!sender) {
    forwarder_failed_ = true;
    hooks_.log.Warning("push: not forwarding: " + sender.error());
    return;
  }
  forwarder_ = std::move(*sender);
  if (options_.chain) {
    MutexLock lock(relay_->mutex);
    relay_->sender = forwarder_.get();
  }
  forward_port_ = forwarder_->port();
  hooks_.log.Info("push: forwarding on port " + std::to_string(forwarder_->port()) + " with the " +
                  std::string(forwarder_->backend_name()) + " fan-out");
  if (hooks_.on_listening) hooks_.on_listening(forwarder_->port());
}

void ForwardGroup::StopPeerChannels(const std::string& why) {
  for (auto& [endpoint, d] : peers_) {
    if (d && d->active()) d->Stop(why);
  }
}

void ForwardGroup::Stop() {
  if (stopped_) return;
  stopped_ = true;
  StopPeerChannels("transfer ending");
  if (forwarder_) forwarder_last_ = forwarder_->stats();
  {
    MutexLock lock(relay_->mutex);
    relay_->sender = nullptr;
  }
  forwarder_.reset();
}

std::function<void(const proto::Piece& chunk)> ForwardGroup::chunk_relay(std::string from) const {
  if (!options_.chain) return nullptr;
  return [relay = relay_, from = std::move(from)](const proto::Piece& chunk) {
    MutexLock lock(relay->mutex);
    if (relay->sender) relay->sender->Relay(chunk, from);
  };
}

ForwardGroupStats ForwardGroup::stats() const {
  ForwardGroupStats st;
  st.peer_channels = peer_channels_;
  for (const auto& [endpoint, d] : peers_) {
    if (!d) continue;
    st.peer_payload_bytes += d->payload_bytes();
    st.peer_pieces += d->pieces_pushed();
    st.duplicate_pieces += d->duplicate_pieces();
  }
  const PushSenderStats s = forwarder_ ? forwarder_->stats() : forwarder_last_;
  st.forwarded_bytes = s.payload_bytes + s.relayed_bytes;
  st.relayed_bytes = s.relayed_bytes;
  st.forwarded_pieces = s.pieces_sent;
  st.forward_subscribers = s.subscribers;
  st.fanout_calls = s.fanout_calls;
  st.fanout_targets = s.fanout_targets;
  st.forward_port = forward_port_;
  return st;
}

}  // namespace swarmcast::push
