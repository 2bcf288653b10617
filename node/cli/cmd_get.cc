// swarmcast get NAME|INFOHASH --tracker URL -o DIR
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
#include "node/peer_metadata.h"
#include "node/tls_client.h"
#include "node/units.h"
#include "proto/hex.h"
#include "proto/metainfo.h"
#include "proto/sha256_text.h"

namespace swarmcast::node::cli {
namespace {

// A get's BitTorrent peers (--max-peers). Measured on the bench's LAN at
// 64 nodes (docs/benchmarks.md, session 10): 12, 20 and 32 peers took the
// same time and a full mesh 20% more; fewer peers cost less CPU, more keep
// the mesh connected when nodes leave. 20 is the middle.
constexpr int kDefaultMaxPeers = 20;
constexpr int kMaxMaxPeers = 1000;

// When DIR/NAME exists: the exit code if the get ends here (already
// complete: 0; something else is there: kExitStorage), nullopt to go on
// (nothing there, or --force removed it).
std::optional<int> CheckExistingTarget(const std::filesystem::path& dir, const std::string& torrent,
                                       const proto::MetainfoSummary& summary,
                                       const std::string& output_name, const std::string& pin,
                                       bool compute_sha256, bool force, const CommonFlags& common,
                                       StatusFile& status, const proto::Logger& log) {
  const std::filesystem::path target = dir / (output_name.empty() ? summary.name : output_name);
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(target, ec))) return std::nullopt;
  PayloadCheckOptions c;
  c.dir = dir;
  c.single_file_name = output_name;
  c.hash_cache_dir = DefaultHashCacheDir();
  c.progress = MakeHashProgress("checking", summary.name, summary.total_size, common, &status);
  auto check = CheckPayload(torrent, c);
  if (check && check->bad_pieces == 0) {
    log.Info(target.string() + " is already complete (every piece matches" +
             (check->from_cache ? ", by the cached hashes of unchanged files)" : ")"));
    // The digest the get that wrote it kept, else one read of the file.
    std::string sha256;
    std::int64_t read_bytes = 0;
    if (summary.file_count == 1 && (compute_sha256 || !pin.empty())) {
      if (auto cached =
              WholeFileSha256FromCache(torrent, dir, DefaultHashCacheDir(), output_name)) {
        sha256 = *cached;
      } else if (auto read = Sha256OfFile(target)) {
        sha256 = *read;
        read_bytes = summary.total_size;
        RememberVerifiedPayload(torrent, dir, DefaultHashCacheDir(), output_name, sha256);
      } else {
        log.Warning("whole-file SHA-256 not computed: " + read.error());
      }
    }
    if (!pin.empty() && sha256 != pin) {
      log.Error("whole-file SHA-256 mismatch: " + target.string() + " hashes to " + sha256 +
                ", the publisher pinned " + pin +
                " (every piece matches the metainfo); left "
                "as it is");
      return kExitVerification;
    }
    TransferReport r;
    r.sha256 = sha256;
    r.sha256_read_bytes = read_bytes;
    r.end = TransferEnd::kAlreadyComplete;
    r.name = summary.name;
    r.info_hash = proto::ToHex(summary.info_hash);
    r.path = target;
    r.total_bytes = summary.total_size;
    r.piece_length = summary.piece_length;
    r.pieces_total = r.pieces_at_start = r.pieces_done = summary.num_pieces;
    r.complete = true;
    r.download_seconds = 0;
    Output().SetResult(ReportJson(r));
    if (!common.json) {
      std::cout << target.string() << ": already complete"
                << (sha256.empty() ? std::string() : ", sha256 " + sha256) << "\n";
    }
    return kExitOk;
  }
  const std::string why = !check ? check.error()
                                 : std::to_string(check->bad_pieces) + " of " +
                                       std::to_string(check->pieces) + " pieces differ";
  if (force) {
    log.Warning("replacing " + target.string() + " (--force): " + why);
    std::filesystem::remove_all(target, ec);
    if (!ec) return std::nullopt;
    log.Error("cannot remove " + target.string() + ": " + ec.message());
  } else {
    log.Error(target.string() + " exists and is not this swarm's content (" + why +
              "); remove it, choose another -o or --as, or pass --force to replace it");
  }
  return kExitStorage;
}

// --as: one path element a file may be named in DIR. Why not, if not.
std::optional<std::string> CheckOutputName(const std::string& name) {
  constexpr std::size_t kMaxName = 255;  // NAME_MAX
  if (name.empty()) return "--as: the name is empty";
  if (name.size() > kMaxName) {
    return "--as: the name is " + std::to_string(name.size()) + " bytes; at most " +
           std::to_string(kMaxName);
  }
  if (name == "." || name == "..") return "--as: '" + name + "' is not a file name";
  if (name.find('/') != std::string::npos) {
    return "--as names the file in -o DIR, without '/' (put the folder in -o)";
  }
  if (name.find('\0') != std::string::npos) return "--as: the name holds a NUL byte";
  if (proto::IsReservedName(name)) return "--as: '" + name + "' is reserved for the staging area";
  return std::nullopt;
}

// Whether the metainfo could not be had from the tracker for a reason the
// --connect peers may not share (down, busy, unknown there).
bool PeersMayHaveIt(const RegistryError& e) {
  return e.kind != RegistryError::Kind::kDenied && e.kind != RegistryError::Kind::kTlsRefused;
}

}  // namespace

int RunGet(int argc, char** argv) {
  CommonFlags common;
  NetworkFlags net;
  TrackerFlags trk;
  std::string key, out, output_name, linger = "5m", stall = "10m", wait = "0",
                                     metadata_timeout = "60s", save_torrent;
  bool no_linger = false, torrent_urls = false, force = false, no_sha256 = false;
  int max_peers = kDefaultMaxPeers;
  std::string sha256_flag;
  PushGetFlags push_flags;
  MetricsFlags metrics_flags;
  po::options_description d("Options");
  d.add_options()("swarm", po::value(&key)->required(), "registry name or 40-hex info-hash")(
      "output,o", po::value(&out)->required(), "directory to put the download in")(
      "as,O", po::value(&output_name),
      "name the file NAME in DIR instead of the metainfo's name (single-file swarms only; "
      "one file name: no '/', not '.' or '..', at most 255 bytes)")(
      "sha256", po::value(&sha256_flag),
      "the whole-file SHA-256 the download must have (64 hex digits; default: the pin the "
      "publisher put in the registry, if any); a mismatch is exit 9 and nothing is moved "
      "into place")(
      "no-sha256", po::bool_switch(&no_sha256),
      "do not compute the whole-file SHA-256 (it is computed by default for a single file, "
      "reading each verified piece back from the page cache)")(
      "metadata-timeout", po::value(&metadata_timeout)->default_value(metadata_timeout),
      "INFOHASH with --connect and no tracker (or one that does not answer): how long to wait "
      "for the peers to send the metadata (exit 7 after it)")(
      "linger", po::value(&linger)->default_value(linger),
      "after completing, keep serving others for at most this long (e.g. 90s, 5m); "
      "stops earlier once the tracker reports every peer done")(
      "no-linger", po::bool_switch(&no_linger), "exit as soon as the download is complete")(
      "force", po::bool_switch(&force),
      "replace DIR/NAME when it exists and is not the swarm's content (default: refuse; "
      "when it is the content, the get ends at once either way)")(
      "allow-torrent-urls", po::bool_switch(&torrent_urls),
      "also use the trackers and web seeds the metainfo lists (default: only --tracker)")(
      "stall-timeout", po::value(&stall)->default_value(stall),
      "give up (exit 8) when no data arrived for this long; 0: wait forever")(
      "wait", po::value(&wait)->default_value(wait)->implicit_value("24h"),
      "wait up to this long for the name to be published (--wait alone: 24h; default: "
      "a name not in the registry is an error at once)")(
      "max-peers", po::value(&max_peers)->default_value(max_peers),
      "BitTorrent peers to connect to at most, and to ask the tracker for (1-1000). Every "
      "verified piece is announced to each of them: at 64 nodes a full mesh cost 20% more time and "
      "CPU than 20 peers")(
      "save-torrent", po::value(&save_torrent),
      "also write the checked metainfo to this file (swarmcast agent seeds from it)");
  AddPushGetOptions(d, push_flags);
  AddMetricsOptions(d, metrics_flags);
  AddTrackerOptions(d, trk);
  AddNetworkOptions(d, net);
  AddCommonOptions(d, common);
  po::positional_options_description pos;
  pos.add("swarm", 1);
  po::variables_map vm;
  if (auto code = ParseArgs(
          argc, argv, d, pos,
          "swarmcast get NAME|INFOHASH --tracker URL -o DIR [OPTIONS]\n"
          "       swarmcast get INFOHASH --connect ADDR:PORT [--connect ...] -o DIR [OPTIONS]",
          "Fetches the swarm's metainfo from the tracker's registry, checks it\n"
          "(unsafe file names and sizes are refused; an info-hash given on the\n"
          "command line must match), and downloads into DIR. Data is written under\n"
          "DIR/.swarmcast/ and moved to DIR/NAME only when every piece has passed\n"
          "its hash check; run the same command again after a crash or kill and it\n"
          "resumes from the verified pieces. Then it lingers, serving others.\n"
          "Run again once complete, it checks DIR/NAME and exits 0 without\n"
          "downloading (\"end\": \"already-complete\").\n"
          "With an INFOHASH and --connect, no tracker is needed: the metadata comes\n"
          "from those peers (BEP 9), and with a tracker that does not answer the\n"
          "get asks them instead of waiting.",
          vm)) {
    return *code;
  }
  const proto::Logger log = MakeLogger(common);
  if (no_linger && !vm["linger"].defaulted()) {
    log.Error("--linger and --no-linger exclude each other");
    return kExitUsage;
  }
  std::optional<std::chrono::milliseconds> linger_for;
  if (!no_linger) {
    auto l = ParseDuration(linger);
    if (!l) {
      log.Error(l.error());
      return kExitUsage;
    }
    linger_for = *l;
  }
  auto stall_for = ParseDuration(stall);
  if (!stall_for) {
    log.Error(stall_for.error());
    return kExitUsage;
  }
  if (!proto::IsValidSwarmName(key) && !proto::IsInfoHashHex(key)) {
    log.Error("'" + key + "' is neither a swarm name nor a 40-hex info-hash");
    return kExitUsage;
  }
  auto wait_for = ParseDuration(wait);
  if (!wait_for) {
    log.Error("--wait: " + wait_for.error());
    return kExitUsage;
  }
  auto meta_wait = ParseDuration(metadata_timeout);
  if (!meta_wait || meta_wait->count() == 0) {
    log.Error("--metadata-timeout: " +
              (meta_wait ? std::string("must be above 0") : meta_wait.error()));
    return kExitUsage;
  }
  if (vm.count("as") > 0) {  // --as "" too
    if (auto why = CheckOutputName(output_name)) {
      log.Error(*why);
      return kExitUsage;
    }
  }
  std::string pin;  // the SHA-256 the file must have: --sha256, else the registry's
  if (!sha256_flag.empty()) {
    auto p = proto::NormaliseSha256Hex(sha256_flag);
    if (!p) {
      log.Error("--sha256: want 64 hex digits, got '" + sha256_flag + "'");
      return kExitUsage;
    }
    if (no_sha256) {
      log.Error("--sha256 and --no-sha256 exclude each other");
      return kExitUsage;
    }
    pin = *p;
  }
  if (max_peers < 1 || max_peers > kMaxMaxPeers) {
    log.Error("--max-peers must be 1-" + std::to_string(kMaxMaxPeers));
    return kExitUsage;
  }
  auto netopts = ToNetworkOptions(net, log);
  auto peers = ToPeerEndpoints(net, log);
  if (!netopts || !peers) return kExitUsage;
  netopts->max_peers = max_peers;
  // An info-hash and peers are enough: the peers have the metadata.
  const bool peers_have_metadata = proto::IsInfoHashHex(key) && !peers->empty();
  if (trk.tracker.empty() && !peers_have_metadata) {
    log.Error(
        "--tracker URL is required (or an INFOHASH with --connect ADDR:PORT: the metadata then "
        "comes from the peers)");
    return kExitUsage;
  }
  std::optional<RegistryClient> client;
  if (!trk.tracker.empty()) {
    client = ToRegistryClient(trk, log);
    if (!client) return kExitUsage;
  }
  // Only our tracker can be https (the metainfo's URLs are dropped unless
  // allowed): without it, this process needs no CA (node/tls_client.h).
  if (!(client && client->url().https) && !torrent_urls) TrustNoCaForDefaultVerifyPaths();
  auto retry = ToRetryPolicy(trk, log);
  if (!retry) return kExitUsage;
  MetricsEndpoint metrics;
  if (!metrics.Start(metrics_flags, "get", "fetching metainfo", log)) return kExitUsage;

  // Listed by `swarmcast status` from here until this command exits.
  StatusFile status(StateDir(),
                    {{"role", "get"},
                     {"name", key},
                     {"state", "fetching metainfo"},
                     {"path", std::filesystem::absolute(out).lexically_normal().string()}});
  // The info-hash comes from the command line, or from the registry's
  // record for the name; the metainfo is then fetched by that hash and
  // must hash to it.
  std::string info_hash = proto::IsInfoHashHex(key) ? key : std::string();
  for (char& c : info_hash) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  SeedPushRecord registry_push;  // the seed's push endpoint and pattern, if any
  std::string registry_sha256;   // the publisher's pin, if any
  std::string torrent;
  bool tracker_answered = false;
  // With peers to ask, the tracker gets one attempt per call: waiting out
  // --tracker-retry for a busy tracker would hold up a get that can go on.
  RetryPolicy policy = *retry;
  if (peers_have_metadata) policy.retry_for = std::chrono::milliseconds(0);
  if (client) {
    // The first request goes out at once, even when a whole fleet starts
    // at one instant: a random pause before it (there was one, up to a
    // quarter second) delayed every get by it on average and the slowest
    // of a fleet by all of it, 4% of a 64 MiB copy at 100 Mbit/s. The
    // tracker takes the burst; if it is busy, the retries are jittered.
    std::optional<RegistryError> failed;
    if (!info_hash.empty()) {  // the record holds the push endpoint and the pin
      auto swarm = WithGrowingTimeouts(policy, log, "tracker", *client,
                                       [&](RegistryClient c) { return c.GetSwarm(info_hash); });
      if (swarm) registry_push = {swarm->push, swarm->push_chain};
      if (swarm) registry_sha256 = swarm->sha256;
      if (!swarm && peers_have_metadata && swarm.error().kind != RegistryError::Kind::kNotFound) {
        failed = swarm.error();  // down: do not wait for it a second time
      }
    }
    if (info_hash.empty()) {
      RetryPolicy lookup = *retry;
      if (wait_for->count() > 0) {
        lookup.until_found = true;
        lookup.retry_for = std::max(lookup.retry_for, *wait_for);
      }
      auto swarm = WithGrowingTimeouts(lookup, log, "tracker", *client,
                                       [&](RegistryClient c) { return c.GetSwarm(key); });
      if (!swarm) {
        log.Error(ToString(swarm.error()));
        return ExitFor(swarm.error());
      }
      if (!proto::IsInfoHashHex(swarm->info_hash)) {
        log.Error("tracker: the registry record for '" + key + "' has no valid info-hash");
        return kExitTracker;
      }
      info_hash = swarm->info_hash;
      registry_push = {swarm->push, swarm->push_chain};
      registry_sha256 = swarm->sha256;
    }
    if (!failed) {
      auto got = WithGrowingTimeouts(policy, log, "tracker", *client,
                                     [&](RegistryClient c) { return c.GetTorrent(info_hash); });
      if (got) {
        torrent = std::move(*got);
        tracker_answered = true;
      } else {
        failed = got.error();
      }
    }
    if (failed) {
      if (!peers_have_metadata || !PeersMayHaveIt(*failed)) {
        log.Error(ToString(*failed));
        return ExitFor(*failed);
      }
      log.Warning(ToString(*failed) + "; asking the --connect peers for the metadata");
    }
  }
  if (torrent.empty()) {
    auto got = FetchMetainfoFromPeers({.info_hash_hex = info_hash,
                                       .peers = *peers,
                                       .net = *netopts,
                                       .deadline = *meta_wait,
                                       .log = log});
    if (!got) {
      log.Error("metadata: " + got.error());
      return kExitNetwork;
    }
    torrent = std::move(*got);
  }
  auto summary = proto::CheckMetainfo(torrent);
  if (!summary) {
    log.Error("metainfo refused: " + summary.error());
    return kExitMetainfo;
  }
  if (proto::ToHex(summary->info_hash) != info_hash) {
    log.Error("metainfo refused: it hashes to " + proto::ToHex(summary->info_hash) + ", not " +
              info_hash);
    return kExitMetainfo;
  }
  if (!registry_sha256.empty()) {
    if (summary->file_count != 1) {
      registry_sha256.clear();  // the tracker refuses such a pin; never trust one
    } else if (pin.empty()) {
      if (no_sha256) {
        log.Warning("--no-sha256: the publisher's SHA-256 pin is not checked");
      } else {
        pin = registry_sha256;
        log.Debug("the publisher pinned SHA-256 " + pin);
      }
    } else if (pin != registry_sha256) {
      log.Warning("--sha256 " + pin + " differs from the publisher's pin " + registry_sha256 +
                  "; checking --sha256");
    }
  }
  if (!pin.empty() && summary->file_count != 1) {
    log.Error("--sha256 pins one file; '" + summary->name + "' is a folder");
    return kExitUsage;
  }
  if (!output_name.empty() && summary->file_count != 1) {
    log.Error("--as names a single file; '" + summary->name + "' is a folder of " +
              std::to_string(summary->paths.size()) + " files (choose the folder with -o)");
    return kExitUsage;
  }

  if (!save_torrent.empty()) {
    if (auto ec = WriteFileAtomically(save_torrent, torrent)) {
      log.Error("cannot write " + save_torrent + ": " + ec.message());
      return kExitStorage;
    }
  }
  const std::filesystem::path dir = std::filesystem::absolute(out).lexically_normal();
  if (auto done = CheckExistingTarget(dir, torrent, *summary, output_name, pin, !no_sha256, force,
                                      common, status, log)) {
    return *done;
  }

  TransferOptions t;
  t.role = TransferOptions::Role::kGet;
  t.torrent_bytes = torrent;
  t.expected_info_hash = info_hash;
  t.dir = dir;
  t.output_name = output_name;
  t.whole_file_sha256 = !no_sha256;
  t.expected_sha256 = pin;
  if (client) {
    t.announce_url = client->url().AnnounceUrl();
    // A tracker that did not answer cannot say whether it is private: a
    // token given is then taken to be for the announces.
    t.announce_token = tracker_answered ? AnnounceToken(*client, log) : client->token();
  }
  t.torrent_urls = torrent_urls;
  t.net = *netopts;
  t.peers = std::move(*peers);
  t.linger = linger_for;
  t.stall_timeout = *stall_for;
  // The poll runs on the control thread: keep its timeout short.
  std::optional<RegistryClient> poller;
  if (client) {
    poller = client->WithTimeout(std::chrono::seconds(2));
    t.swarm_complete = [&poller, info_hash] {
      auto view = poller->GetCompletion(info_hash);
      return view && view->AllDone();
    };
  }
  t.log = log;
  t.progress = ChooseProgressMode(common);
  t.progress_interval = ProgressInterval(common);
  t.status = &status;
  GetPush push;
  WireGetPush(push_flags, registry_push, info_hash, client ? client->token() : trk.token, t, push,
              log);
  t.status_extra = [&push] { return nlohmann::json{{"push", GetPushJson(push)}}; };
  t.metrics = metrics.metrics();
  t.metrics_extra = [&push](NodeSample& m) {
    m.push = push.download != nullptr;
    if (push.download) m.push_pieces = static_cast<std::int64_t>(push.download->pieces_pushed());
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
  if (report->complete) {
    // A second run over the same files then checks nothing (see
    // CheckExistingTarget).
    if (auto why = RememberVerifiedPayload(torrent, dir, DefaultHashCacheDir(), output_name,
                                           report->sha256)) {
      log.Debug("piece hashes not cached: " + *why);
    }
  }
  nlohmann::json j = ReportJson(*report);
  j["push"] = GetPushJson(push);
  Output().SetResult(std::move(j));
  if (!common.json && report->complete) {
    std::cout << report->path.string() << ": complete ("
              << FormatBytes(static_cast<double>(report->total_bytes)) << " in "
              << FormatSeconds(report->download_seconds) << ", "
              << FormatBytes(report->download_seconds > 0
                                 ? static_cast<double>(report->total_bytes) /
                                       report->download_seconds
                                 : 0)
              << "/s)" << (report->sha256.empty() ? std::string() : ", sha256 " + report->sha256)
              << "\n";
  }
  return report->complete ? kExitOk : kExitInterrupted;
}

}  // namespace swarmcast::node::cli
