// swarmcast get NAME|INFOHASH --tracker URL -o DIR
#include <iostream>
#include <thread>

#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/json_output.h"
#include "node/cli/metrics_endpoint.h"
#include "node/cli/push_wiring.h"
#include "node/file_io.h"
#include "node/hash_cache.h"
#include "node/payload_check.h"
#include "node/units.h"
#include "proto/hex.h"
#include "proto/metainfo.h"

namespace swarmcast::node::cli {
namespace {

// When DIR/NAME exists: the exit code if the get ends here (already
// complete: 0; something else is there: kExitStorage), nullopt to go on
// (nothing there, or --force removed it).
std::optional<int> CheckExistingTarget(const std::filesystem::path& dir, const std::string& torrent,
                                       const proto::MetainfoSummary& summary, bool force,
                                       const CommonFlags& common, StatusFile& status,
                                       const proto::Logger& log) {
  const std::filesystem::path target = dir / summary.name;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(target, ec))) return std::nullopt;
  PayloadCheckOptions c;
  c.dir = dir;
  c.hash_cache_dir = DefaultHashCacheDir();
  c.progress = MakeHashProgress("checking", summary.name, summary.total_size, common, &status);
  auto check = CheckPayload(torrent, c);
  if (check && check->bad_pieces == 0) {
    log.Info(target.string() + " is already complete (every piece matches" +
             (check->from_cache ? ", by the cached hashes of unchanged files)" : ")"));
    TransferReport r;
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
              "); remove it, choose another -o, or pass --force to replace it");
  }
  return kExitStorage;
}

}  // namespace

int RunGet(int argc, char** argv) {
  CommonFlags common;
  NetworkFlags net;
  TrackerFlags trk;
  std::string key, out, linger = "5m", stall = "10m", wait = "0", save_torrent;
  bool no_linger = false, torrent_urls = false, force = false;
  PushGetFlags push_flags;
  MetricsFlags metrics_flags;
  po::options_description d("Options");
  d.add_options()("swarm", po::value(&key)->required(), "registry name or 40-hex info-hash")(
      "output,o", po::value(&out)->required(), "directory to put the download in")(
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
          argc, argv, d, pos, "swarmcast get NAME|INFOHASH --tracker URL -o DIR [OPTIONS]",
          "Fetches the swarm's metainfo from the tracker's registry, checks it\n"
          "(unsafe file names and sizes are refused; an info-hash given on the\n"
          "command line must match), and downloads into DIR. Data is written under\n"
          "DIR/.swarmcast/ and moved to DIR/NAME only when every piece has passed\n"
          "its hash check; run the same command again after a crash or kill and it\n"
          "resumes from the verified pieces. Then it lingers, serving others.\n"
          "Run again once complete, it checks DIR/NAME and exits 0 without\n"
          "downloading (\"end\": \"already-complete\").",
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
  auto client = ToRegistryClient(trk, log);
  auto retry = ToRetryPolicy(trk, log);
  auto netopts = ToNetworkOptions(net, log);
  auto peers = ToPeerEndpoints(net, log);
  if (!client || !retry || !netopts || !peers) return kExitUsage;
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
  std::string registry_push;  // the seed's push endpoint, if it has one
  // Gets started on a whole fleet at one instant spread their first
  // requests over a quarter second instead of arriving in one burst.
  std::this_thread::sleep_for(
      Backoff({.retry_for = std::chrono::hours(1), .first_delay = std::chrono::milliseconds(250)})
          .Next()
          .value_or(std::chrono::milliseconds(0)));
  if (!info_hash.empty() && !push_flags.no_push) {
    auto swarm = WithRetries(*retry, log, "tracker", [&] { return client->GetSwarm(info_hash); });
    if (swarm) registry_push = swarm->push;
  }
  if (info_hash.empty()) {
    RetryPolicy lookup = *retry;
    if (wait_for->count() > 0) {
      lookup.until_found = true;
      lookup.retry_for = std::max(lookup.retry_for, *wait_for);
    }
    auto swarm = WithRetries(lookup, log, "tracker", [&] { return client->GetSwarm(key); });
    if (!swarm) {
      log.Error(ToString(swarm.error()));
      return ExitFor(swarm.error());
    }
    if (!proto::IsInfoHashHex(swarm->info_hash)) {
      log.Error("tracker: the registry record for '" + key + "' has no valid info-hash");
      return kExitTracker;
    }
    info_hash = swarm->info_hash;
    registry_push = swarm->push;
  }
  auto torrent = WithRetries(*retry, log, "tracker", [&] { return client->GetTorrent(info_hash); });
  if (!torrent) {
    log.Error(ToString(torrent.error()));
    return ExitFor(torrent.error());
  }
  auto summary = proto::CheckMetainfo(*torrent);
  if (!summary) {
    log.Error("metainfo refused: " + summary.error());
    return kExitMetainfo;
  }

  if (!save_torrent.empty()) {
    if (auto ec = WriteFileAtomically(save_torrent, *torrent)) {
      log.Error("cannot write " + save_torrent + ": " + ec.message());
      return kExitStorage;
    }
  }
  const std::filesystem::path dir = std::filesystem::absolute(out).lexically_normal();
  if (auto done = CheckExistingTarget(dir, *torrent, *summary, force, common, status, log)) {
    return *done;
  }

  TransferOptions t;
  t.role = TransferOptions::Role::kGet;
  t.torrent_bytes = *torrent;
  t.expected_info_hash = info_hash;
  t.dir = dir;
  t.announce_url = client->url().AnnounceUrl();
  t.announce_token = AnnounceToken(*client, log);
  t.torrent_urls = torrent_urls;
  t.net = *netopts;
  t.peers = std::move(*peers);
  t.linger = linger_for;
  t.stall_timeout = *stall_for;
  // The poll runs on the control thread: keep its timeout short.
  RegistryClient poller = client->WithTimeout(std::chrono::seconds(2));
  t.swarm_complete = [&poller, info_hash] {
    auto view = poller.GetCompletion(info_hash);
    return view && view->AllDone();
  };
  t.log = log;
  t.progress = ChooseProgressMode(common);
  t.progress_interval = ProgressInterval(common);
  t.status = &status;
  GetPush push;
  WireGetPush(push_flags, registry_push, info_hash, client->token(), t, push, log);
  t.status_extra = [&push] { return nlohmann::json{{"push", GetPushJson(push)}}; };
  t.metrics = metrics.metrics();
  t.metrics_extra = [&push](NodeSample& m) {
    m.push = push.download != nullptr;
    if (push.download) m.push_pieces = static_cast<std::int64_t>(push.download->pieces_pushed());
  };
  auto report = RunTransfer(t);
  if (!report) {
    log.Error(report.error().message);
    return ExitFor(report.error());
  }
  if (report->complete) {
    // A second run over the same files then checks nothing (see
    // CheckExistingTarget).
    if (auto why = RememberVerifiedPayload(*torrent, dir, DefaultHashCacheDir())) {
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
              << "/s)\n";
  }
  return report->complete ? kExitOk : kExitInterrupted;
}

}  // namespace swarmcast::node::cli
