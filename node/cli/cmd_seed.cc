// swarmcast seed PATH --tracker URL [--name NAME]
#include <iostream>

#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/early_signals.h"
#include "node/cli/json_output.h"
#include "node/cli/metrics_endpoint.h"
#include "node/cli/push_options.h"
#include "node/file_digest.h"
#include "node/file_io.h"
#include "node/hash_cache.h"
#include "node/payload_check.h"
#include "node/tls_client.h"
#include "node/units.h"
#include "proto/endpoint.h"
#include "proto/hex.h"
#include "proto/metainfo.h"
#include "proto/sha256_text.h"

namespace swarmcast::node::cli {

int RunSeed(int argc, char** argv) {
  CommonFlags common;
  NetworkFlags net;
  TrackerFlags trk;
  std::string path, name, piece_size = "auto", torrent_file, save_torrent, sha256_flag;
  PushSeedFlags push_flags;
  MetricsFlags metrics_flags;
  bool hybrid = false, rehash = false, no_publish = false;
  int stop_after_copies = 0;
  po::options_description d("Options");
  d.add_options()("path", po::value(&path)->required(), "file or directory to seed")(
      "name", po::value(&name), "registry name (default: the file name, if it is a valid name)")(
      "piece-size", po::value(&piece_size)->default_value(piece_size),
      "piece size, power of two in [16KiB, 64MiB] (auto: 256-1024 pieces of 64KiB-16MiB)")(
      "hybrid", po::bool_switch(&hybrid), "publish a v1+v2 hybrid (default: v1 only)")(
      "torrent", po::value(&torrent_file),
      "seed this existing .torrent instead of hashing PATH; every piece of PATH is checked "
      "against it before anything is served or pushed")(
      "rehash", po::bool_switch(&rehash), kRehashHelp)("save-torrent", po::value(&save_torrent),
                                                       "also write the metainfo to this file")(
      "sha256", po::value(&sha256_flag),
      "pin the file's whole-file SHA-256 in the registry (64 hex digits, or 'auto': read the "
      "file once more to compute it); every get checks its download against it (single "
      "files only)")(
      "stop-after-copies", po::value(&stop_after_copies)->default_value(0),
      "exit once N full copies were made: downloads the tracker saw complete since this seed "
      "started, or copies among the connected peers (0: seed until interrupted)")(
      "no-publish", po::bool_switch(&no_publish),
      "serve an already published swarm (needs --torrent): announce and serve over the "
      "BitTorrent wire, without publishing or a push port (what swarmcast agent runs to keep "
      "what it fetched seeded)");
  AddPushSeedOptions(d, push_flags);
  AddMetricsOptions(d, metrics_flags);
  AddTrackerOptions(d, trk);
  AddNetworkOptions(d, net);
  AddCommonOptions(d, common);
  po::positional_options_description pos;
  pos.add("path", 1);
  po::variables_map vm;
  if (auto code =
          ParseArgs(argc, argv, d, pos, "swarmcast seed PATH --tracker URL [--name NAME] [OPTIONS]",
                    "Hashes PATH into a metainfo (v1, or hybrid with --hybrid), publishes it to\n"
                    "the tracker's registry under NAME, and seeds it until interrupted (or\n"
                    "until --stop-after-copies is met). Publishing needs the tracker's admin\n"
                    "token (--token-file, --token or $SWARMCAST_TOKEN). Publishing the same\n"
                    "content under the same name again is fine; new content under a name\n"
                    "you published moves the name to it (the old swarm stays fetchable by\n"
                    "info-hash while seeded); another publisher's name is refused.",
                    vm)) {
    return *code;
  }
  const proto::Logger log = MakeLogger(common);
  auto client = ToRegistryClient(trk, log);
  auto retry = ToRetryPolicy(trk, log);
  auto netopts = ToNetworkOptions(net, log);
  auto peers = ToPeerEndpoints(net, log);
  if (!client || !retry || !netopts || !peers) return kExitUsage;
  // A seed announces to our tracker alone: over http, this process needs
  // no CA (node/tls_client.h).
  if (!client->url().https) TrustNoCaForDefaultVerifyPaths();
  MetricsEndpoint metrics;
  if (!metrics.Start(metrics_flags, "seed", "starting", log)) return kExitUsage;
  std::filesystem::path content = std::filesystem::absolute(path).lexically_normal();
  // "dir/" names the directory itself.
  if (!content.has_filename() && content.has_parent_path()) content = content.parent_path();
  if (name.empty()) name = content.filename().string();
  if (!CheckSwarmName(name, log, "; pass --name")) return kExitUsage;
  if (no_publish) {
    if (torrent_file.empty()) {
      log.Error("--no-publish needs --torrent FILE (the published metainfo)");
      return kExitUsage;
    }
    // The registry record names one push endpoint, the publisher's.
    push_flags.no_push = true;
  }
  if (stop_after_copies < 0) {
    log.Error("--stop-after-copies must be 0 or more");
    return kExitUsage;
  }
  if (const std::size_t most = push::PushSenderOptions{}.max_subscribers;
      push_flags.in_flight > most) {
    log.Error("--push-in-flight must be 0-" + std::to_string(most));
    return kExitUsage;
  }
  if (push_flags.topology != "chain" && push_flags.topology != "fan-out") {
    log.Error("--push-topology must be chain or fan-out");
    return kExitUsage;
  }
  if (push_flags.chain_switch) push_flags.topology = "chain";

  // Listed by `swarmcast status` from here until this command exits.
  StatusFile status(StateDir(), {{"role", "seed"},
                                 {"name", content.filename().string()},
                                 {"registry_name", name},
                                 {"state", "starting"},
                                 {"path", content.string()}});
  std::string torrent_bytes;
  bool verified = false;
  if (!torrent_file.empty()) {
    auto bytes = ReadFileBounded(torrent_file, proto::MetainfoLimits{}.max_bytes);
    if (!bytes) {
      log.Error(bytes.error());
      return kExitStorage;
    }
    torrent_bytes = std::move(*bytes);
  } else {
    BuildOptions b;
    b.path = content;
    b.hybrid = hybrid;
    b.hash_cache_dir = DefaultHashCacheDir();
    b.rehash = rehash;
    b.announce_url = client->url().AnnounceUrl();
    if (!ApplyPieceSizeFlag(piece_size, b, log)) return kExitUsage;
    auto built = HashWithProgress(b, common, &status);
    if (!built) {
      log.Error(built.error());
      return kExitStorage;
    }
    torrent_bytes = std::move(built->bytes);
    verified = true;
  }
  auto summary = proto::CheckMetainfo(torrent_bytes);
  if (!summary) {
    log.Error("metainfo refused: " + summary.error());
    return kExitMetainfo;
  }
  if (summary->name != content.filename().string()) {
    log.Error("the metainfo names '" + summary->name + "' but PATH is '" +
              content.filename().string() + "'");
    return kExitUsage;
  }
  if (!verified) {
    // Before the push sender starts: a seed must never push a piece that
    // does not match the hashes it publishes.
    PayloadCheckOptions c;
    c.dir = content.parent_path();
    c.hash_cache_dir = DefaultHashCacheDir();
    c.rehash = rehash;
    c.progress = MakeHashProgress("checking", content.filename().string(), summary->total_size,
                                  common, &status);
    auto check = CheckPayload(torrent_bytes, c);
    if (!check) {
      log.Error("cannot check " + content.string() + " against " + torrent_file + ": " +
                check.error());
      return kExitStorage;
    }
    if (!check->cache_warning.empty()) log.Warning(check->cache_warning);
    if (check->bad_pieces > 0) {
      log.Error(content.string() + " does not match " + torrent_file + ": " +
                std::to_string(check->bad_pieces) + " of " + std::to_string(check->pieces) +
                " pieces differ (the first is piece " + std::to_string(check->first_bad) + ")");
      return kExitStorage;
    }
    log.Info(std::string("checked ") + content.filename().string() + " against " + torrent_file +
             (check->from_cache ? " (hashes reused from the cache: no file changed)" : ""));
    verified = true;
  }
  if (!save_torrent.empty()) {
    if (auto ec = WriteFileAtomically(save_torrent, torrent_bytes)) {
      log.Error("cannot write " + save_torrent + ": " + ec.message());
      return kExitStorage;
    }
  }
  // The check computed the info-hash the registry will key the swarm by:
  // the push sender starts first, so one publish carries its endpoint.
  const std::string info_hash = proto::ToHex(summary->info_hash);
  std::string sha256;  // the pin the registry gets, if any
  if (!sha256_flag.empty()) {
    if (summary->file_count != 1) {
      log.Error("--sha256 pins one file; " + content.string() + " is a folder");
      return kExitUsage;
    }
    if (sha256_flag == "auto") {
      auto digest = Sha256OfFile(content);
      if (!digest) {
        log.Error("--sha256 auto: " + digest.error());
        return kExitStorage;
      }
      sha256 = *digest;
      log.Info("SHA-256 of " + content.filename().string() + ": " + sha256);
    } else if (auto pin = proto::NormaliseSha256Hex(sha256_flag)) {
      sha256 = *pin;
    } else {
      log.Error("--sha256: want 64 hex digits or 'auto', got '" + sha256_flag + "'");
      return kExitUsage;
    }
  }
  auto push = StartSeedPush(
      push_flags, {content, torrent_bytes, info_hash, client->url(), netopts->max_upload_rate},
      log);
  if (!push) {
    log.Error(push.error());
    return kExitNetwork;
  }
  metrics.SetState("publishing");
  status.Update([&] {
    nlohmann::json j = status.last();
    j["state"] = "publishing";
    j["info_hash"] = info_hash;
    j["push"] = SeedPushJson(*push);
    return j;
  }());
  // Downloads completed before this seed published (a swarm seeded again)
  // are not copies this run made.
  std::int64_t completed_before = 0;
  if (stop_after_copies > 0) {
    auto known = WithRetries(*retry, log, "tracker", [&] { return client->GetSwarm(info_hash); });
    if (known) completed_before = known->completed;
  }
  // Asked before publishing: once the "published" line is out, a caller
  // may stop the seed at once, and nothing should stand between that line
  // and the transfer's signal handling.
  const std::string announce_token = AnnounceToken(*client, log);
  // A PUT of the same content under the same name is idempotent: safe to
  // repeat after a reply that was lost.
  // From the publish on the swarm is joinable: a SIGTERM must end the seed
  // cleanly, not kill it (RunTransfer handles signals from its start).
  CatchStopSignals();
  auto published =
      no_publish ? Result<PublishResult, RegistryError>(PublishResult{false, name, info_hash, {}})
                 : WithRetries(*retry, log, "tracker", [&] {
                     return client->Publish(
                         name, torrent_bytes,
                         {.push = push->endpoint, .push_chain = push->chain, .sha256 = sha256});
                   });
  if (!published) {
    log.Error(ToString(published.error()));
    return ExitFor(published.error());
  }
  if (published->info_hash != info_hash) {
    log.Error("tracker: the registry keyed the swarm as " + published->info_hash +
              ", not its info-hash " + info_hash);
    return kExitTracker;
  }
  if (no_publish) {
    log.Info("seeding " + summary->name + " (" + info_hash + ", not published by this seed) on " +
             net.listen);
  } else {
    log.Info(std::string(published->created ? "published " : "re-published ") + summary->name +
             " as '" + name + "' (" + published->info_hash + ") at " + client->url().ToString() +
             (published->previous.empty() ? "" : "; the name moved from " + published->previous) +
             "; seeding on " + net.listen +
             (push->endpoint.empty() ? std::string() : "; push on " + push->endpoint));
  }

  TransferOptions t;
  t.role = TransferOptions::Role::kSeed;
  t.torrent_bytes = std::move(torrent_bytes);
  t.expected_info_hash = published->info_hash;
  t.dir = content.parent_path();
  t.data_verified = verified;
  t.announce_url = client->url().AnnounceUrl();
  t.announce_token = announce_token;
  t.net = *netopts;
  t.peers = std::move(*peers);
  t.stop_after_copies = stop_after_copies;
  // Polled on the control thread: a short timeout.
  RegistryClient poller = client->WithTimeout(std::chrono::seconds(2));
  t.signalled_before_start = StopSignalled;
  t.copies_made = [&poller, completed_before, info_hash]() -> std::int64_t {
    auto swarm = poller.GetSwarm(info_hash);
    return swarm ? swarm->completed - completed_before : 0;
  };
  t.log = log;
  t.progress = ChooseProgressMode(common);
  t.progress_interval = ProgressInterval(common);
  t.status = &status;
  t.status_extra = [&push] { return nlohmann::json{{"push", SeedPushJson(*push)}}; };
  t.metrics = metrics.metrics();
  t.metrics_extra = [&push](NodeSample& m) {
    if (!push->sender) return;
    const auto st = push->sender->stats();
    m.push = true;
    m.fanout_backend = std::string(push->sender->backend_name());
    m.push_subscribers = static_cast<std::int64_t>(st.subscribers);
    m.push_subscribers_dropped = static_cast<std::int64_t>(st.dropped);
    m.push_pieces = static_cast<std::int64_t>(st.pieces_sent);
    m.fanout_calls = static_cast<std::int64_t>(st.fanout_calls);
    m.fanout_sockets = static_cast<std::int64_t>(st.fanout_targets);
  };
  if (push->sender) {
    t.pushed_bytes = [sender = push->sender.get()] {
      return static_cast<std::int64_t>(sender->stats().payload_bytes);
    };
  }
  if (push->uplink) {
    t.hooks.on_tick = [&push](std::int64_t, std::int64_t wire_sent) {
      SeedPushTick(*push, static_cast<std::uint64_t>(wire_sent));
    };
  }
  if (push->addresses) {
    t.served_by_push = [addresses = push->addresses](std::string_view ip) {
      return addresses->Contains(ip);
    };
  }
  // The port the kernel chose for --listen IP:0: what a `get INFOHASH
  // --connect` needs to reach this seed without a tracker.
  t.hooks.on_listening = [&log, ip = netopts->listen_ip](std::uint16_t port) {
    log.Info("BitTorrent listening on " + proto::FormatEndpoint(ip, port));
  };
  auto report = RunTransfer(t);
  // RunTransfer's signal handling ends with it (asio puts back the default
  // action, which kills): a stop signal from here on is recorded instead,
  // so that the report still gets out (the bench lost a get's --json to
  // one); a second exits at once.
  CatchStopSignals();
  if (!report) {
    log.Error(report.error().message);
    return ExitFor(report.error());
  }
  nlohmann::json j = ReportJson(*report);
  j["registry_name"] = name;
  j["published"] = no_publish ? "no" : published->created ? "created" : "republished";
  j["previous"] =
      published->previous.empty() ? nlohmann::json() : nlohmann::json(published->previous);
  j["push"] = SeedPushJson(*push);
  if (!sha256.empty()) j["sha256"] = sha256;  // the pin published
  Output().SetResult(std::move(j));
  return kExitOk;
}

}  // namespace swarmcast::node::cli
