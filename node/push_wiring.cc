#include "node/push_wiring.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <utility>

#include "node/push/tcp.h"
#include "node/torrent_layout.h"
#include "proto/endpoint.h"
#include "proto/hex.h"

namespace swarmcast::node {
namespace {

// The bytes of an info-hash the caller already checked as 40 hex digits
// (empty otherwise: the HELLO then fails, it never carries a wrong hash).
std::vector<std::uint8_t> InfoHashBytes(const std::string& hex) {
  std::vector<std::uint8_t> out(hex.size() / 2);
  if (!proto::FromHex(hex, out)) out.clear();
  return out;
}

std::array<std::uint8_t, proto::kPeerIdSize> RandomPeerId() {
  std::array<std::uint8_t, proto::kPeerIdSize> id{'-', 'S', 'C', '0', '1', '0', '0', '-'};
  std::random_device rd;
  for (std::size_t i = 8; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(rd());
  return id;
}

// How long a chain link waits for pushed bytes before it joins the
// BitTorrent wire: a link whose predecessor stalls or left unlinked (a
// node that does not forward) gets the rest from the swarm. Longer than
// relinking takes (a PEERS frame, a connect), short next to a transfer.
constexpr auto kChainStall = std::chrono::seconds(3);

// The torrent's layout, shared by the push threads.
Result<std::shared_ptr<const proto::ContentLayout>, std::string> LayoutOf(
    const std::string& torrent_bytes) {
  auto layout = TorrentLayout(torrent_bytes);
  if (!layout) return Unexpected("push: " + layout.error());
  return std::make_shared<const proto::ContentLayout>(std::move(*layout));
}

}  // namespace

Result<SeedPush, std::string> StartSeedPush(const SeedPushSettings& f, const SeedPushContext& c,
                                            const proto::Logger& log) {
  const auto kind = push::ParseFanoutKind(f.fanout);
  if (!kind) {
    return Unexpected("--fanout: '" + f.fanout + "' is not auto, kmod, splice, sendfile or copy");
  }
  if (f.topology != "chain" && f.topology != "fan-out") {
    return Unexpected("--push-topology: '" + f.topology + "' is not chain or fan-out");
  }
  const bool chain = f.topology == "chain";
  auto bind = proto::ParseEndpoint(f.listen, {.allow_port_zero = true});
  if (!bind) return Unexpected("--push-listen '" + f.listen + "': " + bind.error());
  const std::string& bind_ip = bind->host;
  if (f.no_push) return SeedPush{};
  std::string advertise = f.advertise;
  if (advertise.empty()) {
    if (bind_ip != "0.0.0.0" && bind_ip != "::") {
      advertise = bind_ip;
    } else {
      auto facing = push::LocalAddressFacing(c.tracker.host);
      if (!facing) return Unexpected("push: " + facing.error() + "; pass --push-advertise");
      advertise = *facing;
    }
  }
  auto layout = LayoutOf(c.torrent_bytes);
  if (!layout) return Unexpected(layout.error());
  push::PushSource source;
  source.root = c.content.parent_path();
  source.layout = std::move(*layout);
  source.info_hash = InfoHashBytes(c.info_hash_hex);
  source.peer_id = RandomPeerId();
  push::PushSenderOptions options;
  options.bind_address = bind_ip;
  options.port = bind->port;
  options.fanout = *kind;
  options.max_rate = c.max_rate;
  options.tokens = f.tokens;
  options.max_in_flight = f.in_flight;
  options.chain = chain;
  // Fan-out: the seed's wire gate keeps its subscribers off its wire while
  // it pushes to them. A chain's links keep off the wire themselves while
  // the chain brings pieces (GetPushSettings::chain), and the seed pushes
  // to the head alone: a gate would refuse the wire to the very links
  // the chain starved (netns.fleet_get_saturated_tracker, session 17).
  if (!chain) options.addresses = std::make_shared<push::SubscriberAddresses>();
  auto addresses = options.addresses;
  auto sender = push::PushSender::Start(std::move(source), std::move(options), log);
  if (!sender) return Unexpected(sender.error());
  SeedPush out;
  out.endpoint = proto::FormatEndpoint(advertise, (*sender)->port());
  out.sender = std::move(*sender);
  out.addresses = std::move(addresses);
  out.private_mode = !f.tokens.empty();
  out.chain = chain;
  if (chain) {
    out.uplink = push::UplinkMeter::ForAddress(advertise);
    if (!out.uplink) {
      log.Info("push: chain: no counters for " + advertise +
               "'s interface (a loopback, or not this host's); the chain's share of the "
               "uplink is not watched");
    }
  }
  log.Info("push: serving on " + out.endpoint + " with the " +
           std::string(out.sender->backend_name()) + " fan-out, " +
           (out.chain ? "as a chain, " : "") +
           (out.private_mode ? "to subscribers with the swarm's token"
                             : "to any subscriber on the network (no --push-token)"));
  return out;
}

void SeedPushTick(SeedPush& p, std::uint64_t wire_sent_bytes) {
  const auto now = push::ChainShare::Clock::now();
  if (!p.sender || !p.uplink || !p.chain_ended.empty() || !p.chain_share.Due(now)) return;
  const auto sent = p.uplink->SentBytes();  // reads /proc: once a window, not every tick
  if (!sent) return;
  const auto stats = p.sender->stats();
  const push::UplinkSample sample{.chain_bytes = stats.payload_bytes,
                                  .sent_bytes = *sent,
                                  .wire_bytes = wire_sent_bytes,
                                  .head_lacks = stats.chain_head_lacks};
  const auto share = p.chain_share.Observe(now, sample);
  if (!share) return;
  char percent[16];
  std::snprintf(percent, sizeof percent, "%.0f%%", *share * 100);
  p.chain_ended = "the chain had " + std::string(percent) + " of the uplink of " +
                  p.uplink->interface_name() +
                  " (other traffic took the rest); fetch over the BitTorrent wire";
  p.sender->EndChain(p.chain_ended);  // which logs it
}

nlohmann::json SeedPushJson(const SeedPush& p) {
  if (!p.sender) return nullptr;
  const auto st = p.sender->stats();
  return {{"endpoint", p.endpoint},
          {"topology", p.chain ? "chain" : "fan-out"},
          {"chain_ended", p.chain_ended.empty() ? nlohmann::json() : nlohmann::json(p.chain_ended)},
          {"fanout", std::string(p.sender->backend_name())},
          {"private", p.private_mode},
          {"pieces_sent", st.pieces_sent},
          {"payload_bytes", st.payload_bytes},
          {"fanout_calls", st.fanout_calls},
          {"fanout_targets", st.fanout_targets},
          {"subscribers", st.subscribers},
          {"forwarders", st.forwarders},
          {"subscribers_dropped", st.dropped},
          {"connections_refused", st.refused}};
}

void WireGetPush(const GetPushSettings& f, const SeedPushRecord& record,
                 const std::string& info_hash_hex, const std::string& token, TransferOptions& t,
                 GetPush& state, const proto::Logger& log) {
  if (f.no_push) {
    state.why_not = "--no-push";
  } else if (!f.from.empty()) {
    state.endpoint = f.from;
  } else if (record.endpoint.empty()) {
    state.why_not = "the seed publishes no push endpoint";
  } else {
    const std::string& registry_push = record.endpoint;
    auto seed = proto::ParseEndpoint(registry_push);
    auto facing = seed ? push::LocalAddressFacing(seed->host)
                       : Result<std::string, std::string>(Unexpected(seed.error()));
    if (facing && push::SameSubnet(*facing, seed->host)) {
      state.endpoint = registry_push;
    } else {
      state.why_not = "the seed's push endpoint " + registry_push + " is not on this subnet";
    }
  }
  std::shared_ptr<const proto::ContentLayout> layout;
  if (!state.endpoint.empty()) {
    auto l = LayoutOf(t.torrent_bytes);
    if (l) {
      layout = std::move(*l);
    } else {
      state.why_not = l.error();
      state.endpoint.clear();
    }
  }
  if (state.endpoint.empty()) {
    log.Info("push: not subscribing (" + state.why_not + ")");
    return;
  }
  if (auto parsed = proto::ParseEndpoint(state.endpoint)) {
    state.endpoint_host = push::SubscriberAddresses::Normalize(parsed->host);
  }
  push::PushIdentity identity;
  identity.info_hash = InfoHashBytes(info_hash_hex);
  identity.layout = std::move(layout);
  identity.peer_id = RandomPeerId();
  // Subscribe first, meet the seed on the wire once it has answered: the
  // connect timeout, then a little for the seed's HELLO.
  t.wire_hold = std::chrono::seconds(8);
  std::string source;  // connect from the address the wire uses too
  if (t.net.listen_ip != "0.0.0.0" && t.net.listen_ip != "::") source = t.net.listen_ip;
  const std::int64_t max_rate = t.net.max_download_rate;
  // The seed's record makes this get a link of its chain without a flag:
  // a get that is not one forwards nothing to the links after it, which
  // then wait kChainStall and fetch over the wire.
  const bool chain = f.chain || (f.from.empty() && record.chain);
  if (chain && !f.chain) log.Info("push: the seed links its subscribers into a chain; joining it");
  state.chain = chain;
  const bool forward = f.forward || chain;
  const std::string bind = t.net.listen_ip;
  // A get does not serve its forwarder's subscribers over the wire while
  // it pushes to them (node/wire_gate.h), or the wire would pull the same
  // pieces a second time (measured: 40 MiB over the wire beside 53 MiB
  // pushed for a 64 MiB file at N = 2). What no forwarder sends them the
  // seed still pushes, and the wire serves them once they unsubscribe.
  // (A chain link does not: the links hold themselves off the wire, see
  // StartSeedPush.)
  auto forward_addresses =
      forward && !chain ? std::make_shared<push::SubscriberAddresses>() : nullptr;
  if (forward_addresses) {
    t.served_by_push = [forward_addresses](std::string_view ip) {
      return forward_addresses->Contains(ip);
    };
  }
  if (forward && t.swarm_complete) {
    // A get lingering after its download leaves early once the tracker
    // says every peer is done, but a chain link holds its announces back
    // while the chain brings pieces, so the tracker does not know it: a
    // node that still takes pieces from this one's forwarder keeps it.
    t.swarm_complete = [&state, tracker_says = std::move(t.swarm_complete)] {
      if (state.group && state.group->stats().forward_subscribers > 0) return false;
      return tracker_says();
    };
  }
  t.hooks.on_ready = [&state, identity, source, token, max_rate, log, forward, chain, bind,
                      forward_addresses](const PieceFeed& feed) {
    push::PushReceiverOptions options;
    options.endpoint = state.endpoint;
    options.source_address = source;
    options.token = token;
    options.max_rate = max_rate;
    // A chain's seed pushes to its first link alone: the others hear from
    // it only when the chain changes, and a seed that dies closes the
    // connection.
    if (chain) options.idle_timeout = std::chrono::milliseconds(0);
    // Every link tells the seed each piece it verified (ChainOrder counts
    // them), and at 10 Mbit/s, a 64 KiB piece every 52 ms, the seed's
    // kernel answered each HAVE with an ACK of its own: 16,002 ACKs, 6% of
    // its uplink, with 64 links. Four to a segment: 4,148, and N = 32 and
    // 64 a little faster. At 100 Mbit/s four take 20 ms, well inside
    // ChainOrder's 100 ms windows; held by time alone (250 ms) the
    // slow-link cells lost up to 0.1x, as the seed judged slow links
    // later (docs/benchmarks.md, session 23). Four of 64 KiB: 256 KiB, or
    // one piece where pieces are larger (a 64 MiB file's are 256 KiB).
    if (chain) {
      options.have_batch = static_cast<std::uint32_t>(std::clamp<std::int64_t>(
          (256 << 10) / std::max<std::int64_t>(feed.piece_length, 1), 1, 4));
      options.have_batch_delay = std::chrono::milliseconds(250);
    }
    push::PushDownload::Hooks hooks;
    hooks.post = feed.post;
    hooks.add_piece = feed.add_piece;
    hooks.log = log;
    // A chain link stays off the wire while the chain brings pieces: the
    // wire would pull them from every peer at once, N - 1 flows a link.
    // The hold's deadline stands until the first pushed byte (a link deep
    // in a long chain waits a few pieces' time per hop before that).
    hooks.on_settled = feed.release_wire;
    if (chain) {
      hooks.on_settled = nullptr;
      state.release_wire = feed.release_wire;
      state.keep_wire_held = feed.keep_wire_held;
    }
    bool complete = true;
    for (bool h : feed.have) complete = complete && h;
    if (complete) return feed.release_wire();  // nothing to subscribe for
    if (forward) {
      push::ForwardGroupOptions fo;
      fo.content_root = feed.save_path;
      fo.bind_address = bind;
      fo.source_address = source;
      fo.token = token;
      fo.max_rate = max_rate;
      fo.addresses = forward_addresses;
      fo.chain = chain;
      push::ForwardGroup::Hooks gh;
      gh.post = feed.post;
      gh.add_piece = feed.add_piece;
      gh.log = log;
      gh.on_listening = [&state](std::uint16_t port) {
        if (state.download) state.download->SendListen(port);
      };
      state.group = std::make_unique<push::ForwardGroup>(fo, identity, feed.have, std::move(gh));
      hooks.claim = [&state](std::uint32_t piece) { return state.group->Claim(piece); };
      hooks.on_peers = [&state](std::vector<std::string> endpoints) {
        if (state.group) state.group->OnPeers(endpoints);
      };
      // The seed never subscribes to a link: nothing to keep from it.
      options.on_chunk = state.group->chunk_relay("");
      hooks.on_ended = [&state, log] {
        if (state.group) state.group->OnSeedChannelEnded();
        // A chain link without its seed joins the swarm at once rather
        // than after 3 s of nothing: the head, or a link the seed had
        // just relinked to itself, has no other source, and its announces
        // tell the tracker it is not done. That alone does not keep the
        // links that are done (they poll the tracker every 2 s, and one
        // polled first in PushChainTest); their forwarder's subscribers
        // do (swarm_complete above).
        if (state.release_wire) {
          log.Info("push: the seed's channel ended; joining the swarm");
          std::exchange(state.release_wire, nullptr)();
        }
      };
    }
    auto d = push::PushDownload::Start(options, identity, feed.have, hooks);
    if (!d) {
      state.start_error = d.error();
      log.Info("push: cannot subscribe: " + d.error() + "; fetching from peers");
      return feed.release_wire();
    }
    log.Info("push: subscribed to " + state.endpoint);
    state.download = std::move(*d);
    if (state.group) state.group->StartChainLink();  // LISTEN goes out on this channel
  };
  t.hooks.on_piece_verified = [&state](std::uint32_t piece) {
    const push::PushDownload::VerifiedCopy copy = state.download
                                                      ? state.download->OnPieceVerified(piece)
                                                      : push::PushDownload::VerifiedCopy{};
    if (state.group) state.group->OnPieceVerified(piece, copy.forward);
  };
  t.hooks.on_piece_requested = [&state](std::uint32_t piece, const std::string& peer_ip) {
    // A push sender this get subscribes to keeps it off its own wire
    // (node/wire_gate.h): such a request is refused, and the piece is to
    // come by push. With --forward every peer may be one.
    const std::string ip = push::SubscriberAddresses::Normalize(peer_ip);
    if (state.download && state.download->active() && ip == state.endpoint_host) return;
    if (state.group && state.group->SubscribedTo(ip)) return;
    if (state.download) state.download->OnPieceRequested(piece);
    if (state.group) state.group->OnPieceRequested(piece);
  };
  t.hooks.on_hash_failed = [&state](std::uint32_t piece) {
    if (state.download) state.download->OnHashFailed(piece);
    if (state.group) state.group->OnHashFailed(piece);
  };
  t.hooks.on_tick = [&state, log](std::int64_t wire_payload_bytes, std::int64_t) {
    // Every channel is charged what came by every other path, so that
    // --max-download-rate caps them all together.
    const std::uint64_t peers = state.group ? state.group->peer_payload_bytes() : 0;
    const std::uint64_t seed = state.download ? state.download->payload_bytes() : 0;
    if (state.download) {
      state.download->OnTick(wire_payload_bytes + static_cast<std::int64_t>(peers));
    }
    if (state.group) state.group->OnTick(wire_payload_bytes, seed);
    if (state.release_wire) {
      const std::uint64_t pushed = seed + peers;
      const auto now = std::chrono::steady_clock::now();
      if (pushed > state.chain_bytes) {
        if (state.chain_bytes == 0) state.keep_wire_held();
        state.chain_bytes = pushed;
        state.chain_progress = now;
      }
      const bool complete = state.group && state.group->complete();
      const bool stalled = state.chain_bytes > 0 && now - state.chain_progress >= kChainStall;
      if (complete || stalled) {
        // Complete: the wire is how the tracker and other peers find it.
        if (!complete) log.Info("push: the chain brought nothing for 3 s; joining the swarm");
        std::exchange(state.release_wire, nullptr)();
      }
    }
  };
  t.hooks.on_stop = [&state] {
    if (state.download) state.download->Stop("transfer ending");
    if (state.group) state.group->Stop();
  };
  t.pushed_bytes = [&state]() -> std::int64_t {
    std::uint64_t n = state.download ? state.download->payload_bytes() : 0;
    if (state.group) n += state.group->peer_payload_bytes();
    return static_cast<std::int64_t>(n);
  };
}

nlohmann::json GetPushJson(const GetPush& p) {
  nlohmann::json j = {{"endpoint", nullptr}};
  if (!p.endpoint.empty()) j["endpoint"] = p.endpoint;
  if (!p.why_not.empty()) j["not_subscribed"] = p.why_not;
  if (!p.start_error.empty()) j["error"] = p.start_error;
  j["chain"] = p.chain;
  if (p.download) {
    j["pieces_pushed"] = p.download->pieces_pushed();
    j["payload_bytes"] = p.download->payload_bytes();
    j["peak_buffered_bytes"] = p.download->peak_held_bytes();
    j["hash_failures"] = p.download->hash_failures();
    j["ended"] = p.download->end_reason();
    j["duplicate_pieces"] = p.download->duplicate_pieces();
  }
  if (p.group) {
    const auto st = p.group->stats();
    j["forwarding"] = {
        {"port", st.forward_port == 0 ? nlohmann::json(nullptr) : nlohmann::json(st.forward_port)},
        {"peer_channels", st.peer_channels},
        {"peer_payload_bytes", st.peer_payload_bytes},
        {"peer_pieces", st.peer_pieces},
        {"duplicate_pieces", st.duplicate_pieces},
        {"forwarded_bytes", st.forwarded_bytes},
        {"relayed_bytes", st.relayed_bytes},
        {"forwarded_pieces", st.forwarded_pieces},
        {"subscribers", st.forward_subscribers},
        {"fanout_calls", st.fanout_calls},
        {"fanout_targets", st.fanout_targets}};
  } else {
    j["forwarding"] = nullptr;
  }
  return j;
}

}  // namespace swarmcast::node
