// How a seed and a get use the push channel: the policy that starts a
// PushSender beside a seed, or subscribes a download to one and, with
// forwarding, joins its group (node/push/ has the channel itself; the
// CLI's flags fill the settings, node/cli/push_options.h). Any layout pushes: pieces reach the
// files through the torrent's file layout (node/torrent_layout.h).
//
// Private mode: a get sends its token (--token, --token-file or
// $SWARMCAST_TOKEN) in its HELLO, and a seed given --push-token pushes only
// to subscribers that send one of those tokens. (The seed's own --token is
// the registry's admin token, which gets do not hold.)
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "node/push/chain_share.h"
#include "node/push/forward_group.h"
#include "node/push/push_download.h"
#include "node/push/push_sender.h"
#include "node/push/uplink_meter.h"
#include "node/registry_client.h"
#include "node/transfer.h"

namespace swarmcast::node {

struct SeedPushSettings {
  bool no_push = false;
  std::string listen = "0.0.0.0:0";
  std::string advertise;  // default: the address that faces the tracker
  std::string fanout = "auto";
  // Tokens a subscriber's HELLO must carry (a private swarm's announce
  // tokens); none: any subscriber on the network.
  std::vector<std::string> tokens;
  // push::PushSenderOptions::max_in_flight (--push-in-flight).
  std::size_t in_flight = push::PushSenderOptions{}.max_in_flight;
  // How subscribers get the pieces (--push-topology): "chain", each takes
  // every piece from the one before it (push::PushSenderOptions::chain),
  // or "fan-out", the seed pushes to each (re-served by the wire, or by
  // forwarders with get --forward). The chain is the default: it beat
  // fan-out in 10 of the bench's 12 cells, most at 16-64 receivers
  // (docs/benchmarks.md, session 17), and since it ends itself where other
  // traffic takes the seed's uplink (node/push/chain_share.h) it no longer
  // stalls there (session 18).
  std::string topology = "chain";
  bool chain_switch = false;  // --push-chain: the CLI sets topology from it
};

struct SeedPush {
  std::unique_ptr<push::PushSender> sender;  // null when push is off
  std::string endpoint;                      // what the registry publishes
  // Who is subscribed (for the seed's wire gate); null when push is off
  // or a chain (its links keep off the wire themselves).
  std::shared_ptr<push::SubscriberAddresses> addresses;
  bool private_mode = false;  // subscribers need the swarm's token
  bool chain = false;         // the subscribers are linked into a chain
  // Chain: the seed's uplink, watched for the chain's share of it
  // (node/push/chain_share.h); unset without counters (a loopback).
  std::optional<push::UplinkMeter> uplink;
  push::ChainShare chain_share;
  std::string chain_ended;  // why the seed ended its chain; empty: it did not
};
// What the seed's push sender is given beside its flags.
struct SeedPushContext {
  std::filesystem::path content;  // the seeded file or folder
  std::string torrent_bytes;      // checked metainfo
  std::string info_hash_hex;
  TrackerUrl tracker;
  std::int64_t max_rate = 0;  // --max-upload-rate
};
// Starts the push sender (push off: a SeedPush without sender, and why in
// the log). Errors are bad flags or a sender that cannot start.
Result<SeedPush, std::string> StartSeedPush(const SeedPushSettings& f, const SeedPushContext& c,
                                            const proto::Logger& log);
// A chain seed's transfer tick: ends the chain once other traffic has
// taken its share of the seed's uplink (node/push/chain_share.h), given
// the seed's BitTorrent payload uploads so far.
void SeedPushTick(SeedPush& p, std::uint64_t wire_sent_bytes);
nlohmann::json SeedPushJson(const SeedPush& p);

struct GetPushSettings {
  bool no_push = false;
  // Forward pushed pieces to the group and take the group's forwards
  // (node/push/forward_group.h). Off by default: it beats the seed-only
  // channel up to 8 receivers and loses from 16 (docs/benchmarks.md,
  // "Forwarding").
  bool forward = false;
  // A link of the seed's chain (`seed --push-chain`): forwards every
  // piece it verifies, and keeps off the BitTorrent wire while the chain
  // brings pieces: from the first pushed byte until none came for 3 s
  // (kChainStall), or the download is complete. Implies forward.
  bool chain = false;
  std::string from;  // ADDR:PORT, overrides the registry and the LAN check
};

// What a download did with the push channel, for the report.
struct GetPush {
  std::string endpoint;       // empty: not subscribed
  std::string endpoint_host;  // its address, normalized (SubscriberAddresses)
  std::string why_not;        // when not subscribed
  bool chain = false;         // a link of the seed's chain
  std::unique_ptr<push::PushDownload> download;
  // Forwarding (node/push/forward_group.h); null without --forward.
  std::unique_ptr<push::ForwardGroup> group;
  std::string start_error;
  // --chain: ends the wire hold, or keeps it past its deadline
  // (PieceFeed); pushed bytes at the last tick that saw them grow, and when.
  std::function<void()> release_wire;
  std::function<void()> keep_wire_held;
  std::uint64_t chain_bytes = 0;
  std::chrono::steady_clock::time_point chain_progress;
};
// What the registry records of the seed's push channel.
struct SeedPushRecord {
  std::string endpoint;  // IP:PORT; empty: the seed publishes none
  bool chain = false;    // the seed links its subscribers into a chain
};
// Chooses the endpoint (--push-from, else the registry's when it is on
// this host's subnet) and sets t.hooks to subscribe once the initial check
// is done, with `token` in the HELLO and t.net.max_download_rate as the
// receiver's limit. With --forward, it also forwards what the seed pushes
// it to the group and subscribes to the group's forwarders
// (node/push/forward_group.h). Reads t.torrent_bytes. `state` must outlive
// RunTransfer.
// Chain role: with --chain, or when the endpoint is the record's and the
// record says chain (a --push-from endpoint is not the record's seed).
void WireGetPush(const GetPushSettings& f, const SeedPushRecord& record,
                 const std::string& info_hash_hex, const std::string& token, TransferOptions& t,
                 GetPush& state, const proto::Logger& log);
nlohmann::json GetPushJson(const GetPush& p);

}  // namespace swarmcast::node
